package mailparse

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// oracleWords builds the tree with golang.org/x/net/html's Parse, which runs the whole HTML
// parsing algorithm, walks it with the same looks as htmlToText and returns the words shown.
// ok is false when Parse refuses the document (nested deeper than 512), when its tree lost a word,
// or when it holds an SVG or MathML element named like a table part or template: x/net/html v0.62
// takes those for the HTML ones when it clears the stack back to a table context, where the
// standard does not.
func oracleWords(src string) (words []string, ok bool) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return nil, false
	}
	held := map[string]bool{}
	for n := range doc.Descendants() {
		switch {
		case n.Type == html.TextNode:
			for _, w := range soupWord.FindAllString(n.Data, -1) {
				held[w] = true
			}
		case n.Type == html.ElementNode && n.Namespace != "":
			switch n.DataAtom {
			case atom.Html, atom.Table, atom.Template, atom.Tr, atom.Tbody, atom.Tfoot, atom.Thead:
				return nil, false
			}
		}
		for _, a := range n.Attr {
			for _, w := range soupWord.FindAllString(a.Val, -1) {
				held[w] = true
			}
		}
	}
	for _, w := range soupWord.FindAllString(src, -1) {
		if !held[w] {
			return nil, false // x/net/html v0.62 lost it (text after a <template> in SVG, say)
		}
	}
	var walk func(n *html.Node, l *look)
	walk = func(n *html.Node, l *look) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				if !l.silent && !l.unseen() {
					words = append(words, soupWord.FindAllString(c.Data, -1)...)
				}
			case html.ElementNode:
				name := strings.ToLower(c.Data)
				e := elem{name: name, a: c.DataAtom, f: tagTable[c.DataAtom], foreign: c.Namespace != ""}
				if e.foreign {
					e.f &= fSilent
				}
				var at attrs
				seen := map[string]bool{}
				for _, a := range c.Attr {
					if seen[a.Key] || a.Namespace != "" {
						continue
					}
					seen[a.Key] = true
					switch a.Key {
					case "style":
						at.style = a.Val
					case "bgcolor":
						at.bgcolor = a.Val
					case "color":
						at.color = a.Val
					case "text":
						at.text = a.Val
					case "background":
						at.background = a.Val
					case "href":
						at.href = a.Val
					case "alt":
						at.alt = a.Val
					case "hidden":
						at.hidden = true
					case "open":
						at.open = true
					}
				}
				e.own = readLooks(&e, &at)
				cl := compose(l, &e)
				if (c.DataAtom == atom.Img || c.DataAtom == atom.Image) && !e.foreign && !cl.silent && !cl.unseen() {
					words = append(words, soupWord.FindAllString(at.alt, -1)...)
				}
				walk(c, &cl)
			}
		}
	}
	walk(doc, &rootLook)
	return words, true
}

var soupWord = regexp.MustCompile(`(?:w|alt)[0-9]+`)

// streamWords are the words of soup that htmlToText shows; ok is false when an adoption agency
// went past three elements below a block, where x/net/html v0.62 still follows the standard's
// older steps (it stops there, leaving the others in place).
func streamWords(src string) (words []string, ok bool) {
	t := newTree(nil)
	t.run(src)
	if t.pastThree {
		return nil, false
	}
	text, _, _ := htmlToText(src)
	return soupWord.FindAllString(text, -1), true
}

// soupTags leave out th: x/net/html v0.62 lets a <th> inside a <caption> be ignored, where the
// standard (and htmlToText) closes the caption.
var soupTags = []string{
	"div", "span", "p", "b", "i", "font", "a", "table", "tbody", "tr", "td", "caption", "ul", "ol",
	"li", "dl", "dd", "dt", "select", "option", "optgroup", "svg", "g", "text", "foreignObject", "math",
	"mi", "template", "h1", "h2", "pre", "button", "form", "nobr", "em", "strong", "u", "s", "small",
	"center", "blockquote", "section", "body", "html", "head", "object", "marquee", "label", "sup",
	"textarea", "title", "noscript", "iframe", "dialog", "details", "summary", "ruby", "rp", "rt",
	"colgroup", "thead", "tfoot", "address", "main", "header", "hr", "br", "img", "input", "wbr",
	"o:p", "x-custom",
}

var soupStyles = []string{
	"", "", "", "", "display:none", "display:block", "visibility:hidden", "visibility:visible",
	"font-size:0", "font-size:14px", "font-size:2em", "opacity:0", "opacity:0.5", "color:#fff",
	"color:#000", "background:#fff", "background-color:#000", "color:white;background:white",
	"max-height:0;overflow:hidden", "display:none!important;display:block", "-webkit-text-fill-color:transparent",
	"color:transparent", "background:url(x.png)", "font:0/0 a",
}

// soup writes random, often misnested HTML whose every text and alt is a unique word.
func soup(r *rand.Rand, n int) string {
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteString("<!DOCTYPE html>")
	}
	word := 0
	for range n {
		switch k := r.IntN(10); {
		case k < 4:
			tag := soupTags[r.IntN(len(soupTags))]
			fmt.Fprintf(&b, "<%s", tag)
			if st := soupStyles[r.IntN(len(soupStyles))]; st != "" {
				fmt.Fprintf(&b, ` style="%s"`, st)
			}
			switch r.IntN(8) {
			case 0:
				b.WriteString(" hidden")
			case 1:
				fmt.Fprintf(&b, ` bgcolor="%s"`, []string{"#fff", "white", "#000"}[r.IntN(3)])
			case 2:
				fmt.Fprintf(&b, ` color="%s"`, []string{"#fff", "white", "#000"}[r.IntN(3)])
			case 3:
				word++
				fmt.Fprintf(&b, ` alt="alt%d"`, word)
			case 4:
				b.WriteString(" open")
			}
			if r.IntN(12) == 0 {
				b.WriteString("/")
			}
			b.WriteString(">")
		case k < 7:
			fmt.Fprintf(&b, "</%s>", soupTags[r.IntN(len(soupTags))])
		default:
			word++
			fmt.Fprintf(&b, "w%d ", word)
		}
	}
	return b.String()
}

// TestHTMLAgainstParser: on random misnested HTML, htmlToText never shows a word that the full
// HTML tree builder puts where it cannot be seen; and it rarely drops one that can.
func TestHTMLAgainstParser(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	runs, shown, dropped := 0, 0, 0
	for i := range 20000 {
		src := soup(r, 5+r.IntN(60))
		want, ok := oracleWords(src)
		got, ok2 := streamWords(src)
		if !ok || !ok2 {
			continue
		}
		runs++
		for _, w := range got {
			if !slices.Contains(want, w) {
				t.Errorf("run %d: %q shows %q, which the tree builder hides (or has not)\nshown: %q\ntree: %q", i, src, w, got, want)
				return
			}
		}
		shown += len(want)
		for _, w := range want {
			if !slices.Contains(got, w) {
				dropped++
			}
		}
	}
	t.Logf("%d documents: %d of %d visible words dropped (%.2f%%)", runs, dropped, shown, 100*float64(dropped)/float64(max(shown, 1)))
	if dropped*100 > shown {
		t.Errorf("%d of %d visible words dropped", dropped, shown)
	}
}

// FuzzHTMLAgainstParser is TestHTMLAgainstParser with seeds the fuzzer picks.
func FuzzHTMLAgainstParser(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(60))
	f.Add(uint64(16), uint64(7), uint8(150))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, n uint8) {
		src := soup(rand.New(rand.NewPCG(s1, s2)), int(n))
		want, ok := oracleWords(src)
		got, ok2 := streamWords(src)
		if !ok || !ok2 {
			return
		}
		for _, w := range got {
			if !slices.Contains(want, w) {
				t.Fatalf("%q shows %q, which the tree builder hides (or has not)", src, w)
			}
		}
	})
}

package mailparse

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText converts HTML to plain text: no tags, entities decoded, block elements as line
// breaks, list items as "- ", links as "text (url)". Script, style and head content is dropped.
// cut reports that the text reached MaxText.
func htmlToText(src string) (text string, cut bool) {
	z := html.NewTokenizer(strings.NewReader(src))
	z.SetMaxBuf(maxHTMLInput)
	w := &textWriter{}
	skip := 0 // depth inside script/style/head/title/template
	pre := 0
	type link struct {
		href  string
		start int
	}
	var links []link
	for !w.full {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		switch tt {
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if pre > 0 {
				w.raw(tok.Data)
			} else {
				w.words(tok.Data)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			a := tok.DataAtom
			switch a {
			case atom.Script, atom.Style, atom.Head, atom.Title, atom.Template, atom.Noscript:
				if tt == html.StartTagToken {
					skip++
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.Br:
				w.newline(1)
			case atom.Hr:
				w.newline(1)
				w.raw("---")
				w.newline(1)
			case atom.Pre:
				w.newline(2)
				pre++
			case atom.Li:
				w.newline(1)
				w.raw("- ")
			case atom.Td, atom.Th:
				w.gap()
			case atom.A:
				if tt == html.StartTagToken && len(links) < 64 {
					links = append(links, link{href: attr(tok, "href"), start: w.b.Len()})
				}
			case atom.Img:
				if alt := strings.TrimSpace(attr(tok, "alt")); alt != "" {
					w.words(alt)
				}
			default:
				if blocks[a] > 0 {
					w.newline(blocks[a])
				}
			}
		case html.EndTagToken:
			a := tok.DataAtom
			switch a {
			case atom.Script, atom.Style, atom.Head, atom.Title, atom.Template, atom.Noscript:
				if skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch a {
			case atom.Pre:
				if pre > 0 {
					pre--
				}
				w.newline(2)
			case atom.A:
				if len(links) == 0 {
					continue
				}
				l := links[len(links)-1]
				links = links[:len(links)-1]
				if u := linkTarget(l.href); u != "" {
					shown := w.b.String()[min(l.start, w.b.Len()):]
					if len(shown) > 2*len(u)+64 {
						shown = shown[:2*len(u)+64] // long enough to differ from u; keeps this linear
					}
					shown = strings.TrimSpace(shown)
					if shown == "" {
						w.words(u)
					} else if shown != u && "mailto:"+shown != u {
						w.gap()
						w.words("(" + u + ")")
					}
				}
			default:
				if blocks[a] > 0 {
					w.newline(blocks[a])
				}
			}
		}
	}
	return w.result(), w.full
}

// blocks lists block elements and the line breaks around them.
var blocks = map[atom.Atom]int{
	atom.P: 2, atom.Div: 1, atom.H1: 2, atom.H2: 2, atom.H3: 2, atom.H4: 2, atom.H5: 2, atom.H6: 2,
	atom.Ul: 1, atom.Ol: 1, atom.Dl: 1, atom.Dt: 1, atom.Dd: 1, atom.Table: 1, atom.Tr: 1,
	atom.Blockquote: 2, atom.Section: 1, atom.Article: 1, atom.Header: 1, atom.Footer: 1,
	atom.Address: 1, atom.Center: 1, atom.Form: 1, atom.Fieldset: 1, atom.Nav: 1, atom.Aside: 1,
	atom.Main: 1, atom.Figure: 1, atom.Figcaption: 1, atom.Caption: 1, atom.Body: 1, atom.Html: 1,
	atom.Tbody: 1, atom.Thead: 1, atom.Tfoot: 1,
}

func attr(t html.Token, key string) string {
	for _, a := range t.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// linkTarget returns the URL worth keeping in text, "" for anchors and scripts.
func linkTarget(href string) string {
	u := strings.TrimSpace(href)
	l := strings.ToLower(u)
	if u == "" || strings.HasPrefix(u, "#") || strings.HasPrefix(l, "javascript:") || strings.HasPrefix(l, "data:") {
		return ""
	}
	return u
}

// textWriter builds text with collapsed whitespace and bounded size.
type textWriter struct {
	b       strings.Builder
	pending int  // newlines owed before the next text
	space   bool // a space is owed before the next word
	full    bool
}

func (w *textWriter) emit(s string) {
	if w.full {
		return
	}
	if w.b.Len()+len(s) > MaxText {
		w.b.WriteString(truncateUTF8(s, MaxText-w.b.Len()))
		w.full = true
		return
	}
	w.b.WriteString(s)
}

func (w *textWriter) flush() {
	if w.b.Len() > 0 && w.pending > 0 {
		w.emit(strings.Repeat("\n", w.pending))
	} else if w.b.Len() > 0 && w.space {
		w.emit(" ")
	}
	w.pending, w.space = 0, false
}

func (w *textWriter) newline(n int) {
	if n > w.pending {
		w.pending = n
	}
	w.space = false
}

func (w *textWriter) gap() { w.space = true }

func (w *textWriter) words(s string) {
	if s == "" {
		return
	}
	s = strings.ReplaceAll(s, "\u00a0", " ")
	if strings.IndexAny(s[:1], " \t\r\n\f") == 0 {
		w.space = true
	}
	f := strings.Fields(s)
	for i, word := range f {
		if i > 0 {
			w.space = true
		}
		w.flush()
		w.emit(word)
	}
	if len(f) > 0 {
		last := s[len(s)-1]
		if last == ' ' || last == '\t' || last == '\n' || last == '\r' || last == '\f' {
			w.space = true
		}
	} else {
		w.space = true
	}
}

func (w *textWriter) raw(s string) {
	w.flush()
	w.emit(normalizeNewlines(s))
}

func (w *textWriter) result() string {
	lines := strings.Split(w.b.String(), "\n")
	out := lines[:0]
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

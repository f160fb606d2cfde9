package mask

import (
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/postern-mcp/postern/internal/clean"
)

// The masks read a folded view of the text, in which what a reader sees as the same character is
// the same byte: compatibility forms (NFKC: fullwidth "４８２９", mathematical "𝐜𝐨𝐝𝐞", ligatures,
// superscripts) as their plain letters and digits, every Unicode decimal digit (Arabic-Indic,
// Devanagari, Thai, …) as its ASCII digit, and Cyrillic and Greek letters that look like Latin
// ones ("раssword" with Cyrillic р and а) as those Latin letters. What a reader does not see, or
// sees without it changing the character it stands on, is not in the view at all: invisible and
// format characters (those the cleaner removes, Cf), private-use characters (Co), combining and
// enclosing marks (Mn, Me: an underline U+0332, the keycap U+20E3 of "7️⃣", variation
// selectors), and a spacing mark (Mc) after a digit. So "4̲8̲2̲9̲1̲3̲", "7️⃣8️⃣2️⃣…" and
// "48\uE00029" read 482913 to the masks as they do to a reader. The Braille blank U+2800, which
// draws nothing, is a space, or nothing between two digits. Digits drawn in a circle that NFKC
// leaves alone ("❹", "➍") are their digit. Phrases and labels are folded the same way when the
// tables are built, so a Russian phrase still matches Russian text.
//
// What is hidden is found in the view and replaced in the original: a view keeps, for every
// rune it changed, where that rune was, so a span of the view maps back to whole runes of the
// text. The agent receives its own text, cleaned, with markers where secrets were.

// view is the folded text of s and the way back to s.
type view struct {
	s, f string
	// segs lists, in order, the runes of s whose folded form differs from them: s[sa:sb] became
	// f[fa:fb]. Between two of them, s and f are byte for byte the same.
	segs []seg
}

type seg struct{ fa, fb, sa, sb int }

// newView folds s. A string of ASCII only is its own view, with nothing to map.
func newView(s string) view {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return view{s: s, f: s}
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	b.WriteString(s[:i])
	var segs []seg
	digit := i > 0 && isDigit(s[i-1]) // the view's last character is a digit
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			digit = isDigit(c)
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		f, ok := foldRune(r)
		switch {
		case r == brailleBlank:
			f, ok = " ", true
			if digit && digitNext(s[i+w:]) {
				f = ""
			}
		case !ok && digit && unicode.Is(unicode.Mc, r):
			f, ok = "", true
		}
		if ok {
			fa := b.Len()
			b.WriteString(f)
			segs = append(segs, seg{fa: fa, fb: b.Len(), sa: i, sb: i + w})
			if f != "" {
				digit = isDigit(f[len(f)-1])
			}
		} else {
			b.WriteString(s[i : i+w])
			digit = false
		}
		i += w
	}
	if segs == nil {
		return view{s: s, f: s}
	}
	return view{s: s, f: b.String(), segs: segs}
}

// start maps a rune boundary of the view to the start of the rune of s it falls in.
func (v *view) start(x int) int { return v.orig(x, false) }

// end maps a rune boundary of the view to the end of the rune of s it falls in (a span that
// ends inside a rune's folded form takes the whole rune).
func (v *view) end(x int) int { return v.orig(x, true) }

func (v *view) orig(x int, up bool) int {
	if len(v.segs) == 0 {
		return x
	}
	// The last segment starting at or before x.
	k := sort.Search(len(v.segs), func(k int) bool { return v.segs[k].fa > x }) - 1
	if k < 0 {
		return x
	}
	g := v.segs[k]
	switch {
	case x == g.fa && up && g.fb == g.fa:
		return g.sb // what the view left out right after a span goes with it: the keycap of 3️⃣
	case x == g.fa:
		return g.sa
	case x < g.fb:
		if up {
			return g.sb
		}
		return g.sa
	}
	return g.sb + (x - g.fb)
}

// foldString is the view of s, for the tables of phrases and labels.
func foldString(s string) string { return newView(s).f }

// foldRune returns what r reads as in the view, and whether that differs from r.
func foldRune(r rune) (string, bool) {
	if r < utf8.RuneSelf {
		return "", false
	}
	if r < 0x10000 {
		b := &kept[r>>8]
		b.once.Do(func() { b.fill(r &^ 0xFF) })
		if b.bits[r>>6&3]&(1<<(r&63)) != 0 {
			return "", false
		}
	}
	return foldRuneSlow(r)
}

// kept says, per block of 256 runes of the BMP, which runes the view keeps as they are, so
// that most letters of a text (é, я, 字) cost a bit test. A block is filled the first time a
// rune of it is folded.
var kept [256]keptBlock

type keptBlock struct {
	once sync.Once
	bits [4]uint64
}

func (b *keptBlock) fill(lo rune) {
	for r := max(lo, utf8.RuneSelf); r < lo+256; r++ {
		if _, changed := foldRuneSlow(r); !changed && utf8.ValidRune(r) {
			b.bits[r>>6&3] |= 1 << (r & 63)
		}
	}
}

// foldRuneSlow is foldRune without the table of kept runes.
func foldRuneSlow(r rune) (string, bool) {
	if l, ok := lookAlike[r]; ok {
		return string(l), true
	}
	if unseen(r) {
		return "", true // "48\u200b29" reads as 4829 whether or not it was cleaned
	}
	if d, ok := circledDigit(r); ok {
		return string(rune('0' + d)), true
	}
	if unicode.Is(unicode.Nd, r) {
		if d, ok := digitValue(r); ok {
			return string(rune('0' + d)), true
		}
	}
	return foldNFKC(r)
}

// brailleBlank is the Braille pattern without dots: a blank that is no space.
const brailleBlank = '\u2800'

// unseen reports whether r is left out of the view: what the cleaner removes (invisible and
// format characters, variation selectors, tags), private use, and the marks that draw on the
// character before them (combining and enclosing: an underline, a keycap, a circle).
func unseen(r rune) bool {
	if r < 0x300 {
		// Below the combining marks, only C1 controls (but NEL, a line break) and the soft
		// hyphen: the Latin letters skip the table look-ups.
		return r <= 0x9F && r != 0x85 || r == 0xAD
	}
	return clean.Forbidden(r) || unicode.In(r, unicode.Mn, unicode.Me, unicode.Co)
}

// digitNext reports whether s starts with a digit of any script.
func digitNext(s string) bool {
	if s == "" {
		return false
	}
	if s[0] < utf8.RuneSelf {
		return isDigit(s[0])
	}
	r, _ := utf8.DecodeRuneInString(s)
	if unicode.Is(unicode.Nd, r) {
		return true
	}
	_, ok := circledDigit(r)
	return ok
}

// circledDigit is the value of a digit drawn in a circle that has no compatibility form: the
// dingbat digits ❶–❾ and ➀–➒ in their three styles, ⓵–⓽ and ⓿ (the tens of those runs are
// not a digit). NFKC folds the others (①, ⑴, ⒈, 𝟙).
func circledDigit(r rune) (int, bool) {
	switch {
	case r >= 0x2776 && r <= 0x2793:
		if d := int(r-0x2776)%10 + 1; d < 10 {
			return d, true
		}
	case r >= 0x24F5 && r <= 0x24FD:
		return int(r-0x24F5) + 1, true
	case r == 0x24FF || r == 0x1F10B || r == 0x1F10C:
		return 0, true
	}
	return 0, false
}

// foldNFKC is r's compatibility form, folded again (a fullwidth Cyrillic letter, say), when it
// differs from r.
func foldNFKC(r rune) (string, bool) {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	if len(norm.NFKC.Properties(buf[:n]).Decomposition()) == 0 {
		return "", false // a rune without a decomposition is its own NFKC form
	}
	if f, ok := nfkcCache.Load(r); ok {
		c := f.(cached)
		return c.s, c.changed
	}
	f, ok := foldNFKCSlow(buf[:n])
	nfkcCache.Store(r, cached{f, ok})
	return f, ok
}

type cached struct {
	s       string
	changed bool
}

// nfkcCache holds the runes foldNFKC has folded, so that a megabyte of no-break spaces costs
// one normalisation, not a million.
var nfkcCache sync.Map // rune → cached

// foldNFKCSlow is the NFKC form of the rune encoded in enc, its digits and look-alikes folded
// too, and whether it differs from the rune.
func foldNFKCSlow(enc []byte) (string, bool) {
	k := norm.NFKC.String(string(enc))
	if k == string(enc) {
		return "", false
	}
	var b strings.Builder
	for _, x := range k {
		d, digit := 0, false
		if x >= utf8.RuneSelf && unicode.Is(unicode.Nd, x) {
			d, digit = digitValue(x)
		}
		switch l, look := lookAlike[x]; {
		case look:
			b.WriteRune(l)
		case digit:
			b.WriteByte(byte('0' + d))
		default:
			b.WriteRune(x)
		}
	}
	return b.String(), true
}

// digitValue is the value of a decimal digit (Unicode Nd): Unicode lays every decimal digit out
// in runs of ten from zero to nine (TestDigitRuns checks that the tables still do).
func digitValue(r rune) (int, bool) {
	for _, rg := range unicode.Nd.R16 {
		if r < rune(rg.Lo) {
			return 0, false
		}
		if r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r < rune(rg.Lo) {
			return 0, false
		}
		if r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}

// lookAlike maps Cyrillic, Greek and a few other letters to the Latin letter they are drawn
// like, in both cases. Only letters a reader cannot tell apart from the Latin one in common
// fonts: not ж, и, л, п, …
var lookAlike = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p',
	'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd',
	'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'ү': 'y', 'ɡ': 'g',
	'А': 'A', 'В': 'B', 'Е': 'E', 'Ё': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P',
	'С': 'C', 'Т': 'T', 'У': 'Y', 'Х': 'X', 'І': 'I', 'Ї': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D',
	'Ԛ': 'Q', 'Ԝ': 'W', 'Һ': 'H', 'Ӏ': 'I', 'Ү': 'Y',
	// Greek
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'υ': 'u', 'χ': 'x', 'τ': 't',
	'ϲ': 'c', 'ϳ': 'j', 'ε': 'e',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N',
	'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ϲ': 'C',
	// Armenian and others drawn as Latin letters
	'օ': 'o', 'ս': 'u', 'ց': 'g', 'ı': 'i',
}

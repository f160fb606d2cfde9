package mask

import (
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What a message's own words say: whether it carries a code (codeContext), whether it gives a
// password (givesSecret, passwordAt, withheldPhrase), and whether a link is a sign-in link. The
// rules read the folded view of the text (see fold.go); the phrase rules read it normalized as
// well. The words themselves are the table of phrases.go.

// normalize lowercases s, strips the accents of Latin letters, turns every run of white space
// into one space (or one line break, when the run holds one), typographic apostrophes into '
// and dashes into -, and drops invisible format characters.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	ws := byte(0) // the white space owed before the next character: 0, ' ' or '\n'
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch c {
			case ' ', '\t':
				if ws == 0 {
					ws = ' '
				}
				continue
			case '\n', '\r', '\v', '\f':
				ws = '\n'
				continue
			case '`':
				c = '\''
			}
			if ws != 0 {
				b.WriteByte(ws)
				ws = 0
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if unicode.IsSpace(r) {
			if r == '\u0085' || r == '\u2028' || r == '\u2029' {
				ws = '\n'
			} else if ws == 0 {
				ws = ' '
			}
			continue
		}
		a, z := baseOf(r)
		if a < 0 {
			continue
		}
		if ws != 0 {
			b.WriteByte(ws)
			ws = 0
		}
		b.WriteRune(a)
		if z != 0 {
			b.WriteRune(z)
		}
	}
	if ws != 0 {
		b.WriteByte(ws)
	}
	return b.String()
}

// baseOf is what normalize makes of the rune r (not ASCII): its lower case without accents
// (æ, œ and ß as two letters, then z is the second), ' for typographic apostrophes, - for
// dashes, and a < 0 for an invisible character that is dropped.
func baseOf(r rune) (a, z rune) {
	switch {
	case r == '\u2019' || r == '\u2018' || r == '\u02BC':
		return '\'', 0
	case r >= '\u2010' && r <= '\u2015' || r == '\u2212':
		return '-', 0
	case r == '\u00AD' || r >= '\u200B' && r <= '\u200D' || r == '\u2060' || r == '\uFEFF':
		return -1, 0
	}
	r = unicode.ToLower(r)
	switch {
	case r >= 0xC0 && r < 0x250:
		b := latinBase()[r-0xC0]
		if b[0] != 0 {
			return b[0], b[1]
		}
	case r >= 0x1E00 && r < 0x1F00:
		b := latinBase()[0x250-0xC0+r-0x1E00]
		if b[0] != 0 {
			return b[0], b[1]
		}
	}
	return r, 0
}

// latinBase holds the base letters of the Latin letters with diacritics (U+00C0–U+024F and
// U+1E00–U+1EFF): the letters of their canonical decomposition without the marks, when those
// are ASCII, and a few letters without a decomposition (æ ø ł đ ħ ı ß œ).
var latinBase = sync.OnceValue(func() *[0x250 - 0xC0 + 0x100][2]rune {
	var t [0x250 - 0xC0 + 0x100][2]rune
	special := map[rune][2]rune{
		'æ': {'a', 'e'}, 'œ': {'o', 'e'}, 'ß': {'s', 's'}, 'ø': {'o', 0}, 'ł': {'l', 0},
		'đ': {'d', 0}, 'ħ': {'h', 0}, 'ı': {'i', 0}, 'ŀ': {'l', 0}, 'ŧ': {'t', 0}, 'ð': {'d', 0},
	}
	set := func(k int, r rune) {
		if s, ok := special[r]; ok {
			t[k] = s
			return
		}
		var base []rune
		for _, d := range norm.NFD.String(string(r)) {
			if !unicode.Is(unicode.Mn, d) {
				base = append(base, d)
			}
		}
		if len(base) == 1 && base[0] < utf8.RuneSelf && base[0] != r {
			t[k] = [2]rune{base[0], 0}
		}
	}
	for r := rune(0xC0); r < 0x250; r++ {
		if lr := unicode.ToLower(r); lr == r {
			set(int(r-0xC0), r)
		}
	}
	for r := rune(0x1E00); r < 0x1F00; r++ {
		if lr := unicode.ToLower(r); lr == r {
			set(0x250-0xC0+int(r-0x1E00), r)
		}
	}
	return &t
})

// Scripts and word boundaries. Chinese, Japanese, Korean, Thai and the scripts like them are
// written without spaces between words (Korean with particles attached to its nouns): their
// phrases match anywhere, and a change between such a script and another is a word boundary
// ("验证码482913"). Arabic and Hebrew attach short prefixes (و, ال, ب…; ה, ב, ל…) to the word
// that follows: their phrases may follow one; Arabic attaches pronoun suffixes as well.

func isSpaceless(r rune) bool {
	switch {
	case r < 0x0E00:
		return false
	case r <= 0x0EFF, // Thai, Lao
		r >= 0x1000 && r <= 0x109F,                             // Myanmar
		r >= 0x1100 && r <= 0x11FF,                             // Hangul Jamo
		r >= 0x1780 && r <= 0x17FF,                             // Khmer
		r >= 0x2E80 && r <= 0x9FFF,                             // CJK radicals, kana, ideographs
		r >= 0xA960 && r <= 0xA97F, r >= 0xAC00 && r <= 0xD7FF, // Hangul
		r >= 0xF900 && r <= 0xFAFF, // CJK compatibility ideographs
		r >= 0xFF66 && r <= 0xFFDC, // halfwidth kana and Hangul
		r >= 0x20000 && r <= 0x3FFFF:
		return true
	}
	return false
}

func isArabic(r rune) bool {
	return r >= 0x0600 && r <= 0x06FF || r >= 0x0750 && r <= 0x077F || r >= 0x08A0 && r <= 0x08FF ||
		r >= 0xFB50 && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFF
}

func isHebrew(r rune) bool { return r >= 0x0590 && r <= 0x05FF || r >= 0xFB1D && r <= 0xFB4F }

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isAlnum(byte(r))
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// joins reports whether a and b, side by side, belong to one word.
func joins(a, b rune) bool {
	return isWordRune(a) && isWordRune(b) && isSpaceless(a) == isSpaceless(b)
}

// startsWordAt reports whether a word starts at s[i:].
func startsWordAt(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	if p, c := s[i-1], s[i]; p < utf8.RuneSelf && c < utf8.RuneSelf {
		return !(isAlnum(p) && isAlnum(c))
	}
	p, _ := utf8.DecodeLastRuneInString(s[:i])
	c, _ := utf8.DecodeRuneInString(s[i:])
	return !joins(p, c)
}

// endsWordAt reports whether a word ends at s[:e].
func endsWordAt(s string, e int) bool { return startsWordAt(s, e) }

// wordEnd returns the end of the word that starts at i (a change of script ends it).
func wordEnd(s string, i int) int {
	if i >= len(s) {
		return i
	}
	if c := s[i]; c < utf8.RuneSelf {
		if !isAlnum(c) {
			return i
		}
		for i < len(s) && isAlnum(s[i]) {
			i++
		}
		if i == len(s) || s[i] < utf8.RuneSelf {
			return i
		}
	}
	first, w := utf8.DecodeRuneInString(s[i:])
	if !isWordRune(first) {
		return i
	}
	i += w
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !joins(first, r) {
			break
		}
		i += w
	}
	return i
}

var arabicPrefixes = map[string]bool{
	"و": true, "ف": true, "ب": true, "ل": true, "ك": true, "ال": true, "وال": true, "فال": true,
	"بال": true, "كال": true, "لل": true, "ولل": true, "فلل": true, "وب": true, "فب": true,
	"ول": true, "فل": true, "وك": true,
}

var arabicSuffixes = []string{"كما", "كم", "كن", "ك", "ها", "هم", "ه", "ي", "نا"}

// attachedPrefix reports whether the letters of the word before s[i:] (one to three, the
// word starting at a boundary) are an Arabic or Hebrew prefix that a word starting at i may
// carry.
func attachedPrefix(s string, i int) bool {
	k, runes := i, 0
	for k > 0 && runes <= 3 {
		r, w := utf8.DecodeLastRuneInString(s[:k])
		if !isWordRune(r) {
			break
		}
		if !isArabic(r) && !isHebrew(r) {
			return false
		}
		k -= w
		runes++
	}
	if runes == 0 || runes > 3 {
		return false
	}
	return validPrefix(s[k:i])
}

func validPrefix(p string) bool {
	if arabicPrefixes[p] {
		return true
	}
	for _, r := range p {
		if !strings.ContainsRune("הבלומשכ", r) {
			return false
		}
	}
	return p != ""
}

// phraseItem is a row of the table made ready to match: its normalized text, and the
// boundaries it needs.
type phraseItem struct {
	text   string
	kind   kind
	row    int    // index in phrases()
	prefix bool   // matches as a word prefix (the text ended in '*')
	free   bool   // starts anywhere: its first letter is of a script written without spaces
	attach bool   // may follow an attached Arabic or Hebrew prefix
	end    uint8  // endWord, endFree or endSuffix
	exact  string // "PIN": the text must appear as written
}

const (
	endWord   = iota // a word boundary must follow
	endFree          // anything may follow (a script written without spaces)
	endSuffix        // a word boundary or an Arabic pronoun suffix may follow
)

func newItem(row int, p phrase) phraseItem {
	text := p.text
	it := phraseItem{kind: p.kind, row: row}
	if strings.HasSuffix(text, "*") {
		text, it.prefix = text[:len(text)-1], true
	}
	if p.kind == pinLabel && text == "PIN" {
		it.exact = "PIN"
	}
	it.text = normalize(foldString(text))
	first, _ := utf8.DecodeRuneInString(it.text)
	last, _ := utf8.DecodeLastRuneInString(it.text)
	it.free = isSpaceless(first)
	it.attach = isArabic(first) || isHebrew(first)
	switch {
	case isSpaceless(last):
		it.end = endFree
	case isArabic(last):
		it.end = endSuffix
	}
	return it
}

// startOK reports whether the item may start at n[i:] (atWord: a word starts there).
func (it *phraseItem) startOK(n string, i int, atWord bool) bool {
	return atWord || it.free || it.attach && attachedPrefix(n, i)
}

// endOK reports whether the item may end at n[:e].
func (it *phraseItem) endOK(n string, e int) bool {
	if it.prefix || it.end == endFree || endsWordAt(n, e) {
		return true
	}
	if it.end == endSuffix {
		for _, suf := range arabicSuffixes {
			if strings.HasPrefix(n[e:], suf) && endsWordAt(n, e+len(suf)) {
				return true
			}
		}
	}
	return false
}

// matchAt reports whether n holds the phrase p at i; a space of p matches a space or a line
// break of n (both normalized).
func matchAt(n string, i int, p string) bool {
	if len(n)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if c := n[i+k]; c != p[k] && !(p[k] == ' ' && c == '\n') {
			return false
		}
	}
	return true
}

// phraseSet finds the phrases of a list in a normalized text in one pass: at each byte that
// may start a phrase, it looks up the phrases that begin with that byte and the next. Every
// phrase holds at least two bytes (TestPhrases).
type phraseSet struct {
	starts [256]uint8 // 1: a phrase that needs a word start begins with this byte; 2: one that needs none
	pairs  [1 << 10]uint64
	byPair map[uint16][]phraseItem
}

func newPhraseSet(items []phraseItem) *phraseSet {
	s := &phraseSet{byPair: map[uint16][]phraseItem{}}
	seen := map[string]bool{}
	for _, it := range items {
		key := string(rune(it.kind)) + it.text
		if len(it.text) < 2 || seen[key] {
			continue
		}
		seen[key] = true
		c := it.text[0]
		if it.free || it.attach {
			s.starts[c] |= 2
		} else {
			s.starts[c] |= 1
		}
		k := uint16(c)<<8 | uint16(it.text[1])
		s.pairs[k>>6] |= 1 << (k & 63)
		s.byPair[k] = append(s.byPair[k], it)
	}
	return s
}

// each calls yield with every phrase n holds, in order of their starts, until it returns false.
func (s *phraseSet) each(n string, yield func(start, end int, it *phraseItem) bool) {
	for i := 0; i+1 < len(n); i++ {
		c := n[i]
		st := s.starts[c]
		if st == 0 {
			continue
		}
		k := uint16(c)<<8 | uint16(n[i+1])
		if s.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		atWord := startsWordAt(n, i)
		if st == 1 && !atWord {
			continue
		}
		items := s.byPair[k]
		for x := range items {
			it := &items[x]
			if !it.startOK(n, i, atWord) || !matchAt(n, i, it.text) {
				continue
			}
			if e := i + len(it.text); it.endOK(n, e) && !yield(i, e, it) {
				return
			}
		}
	}
}

// in reports whether n holds one of the phrases.
func (s *phraseSet) in(n string) bool {
	found := false
	s.each(n, func(int, int, *phraseItem) bool { found = true; return false })
	return found
}

// wordTable finds phrases at a word start of the folded text (not normalized: case, accents
// and spacing are compared as normalize would make them), for the labels of passwords and the
// words around them.
type wordTable struct {
	byPair map[uint64][]phraseItem // by the first two runes of the normalized text (the second 0 for a one-rune text)
	ascii  [128 * 128 / 64]uint64  // the pairs of ASCII bytes that begin a text, to skip most words without a lookup
	one    [128]bool               // the ASCII texts of one letter
}

func pairKey(a, b rune) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func newWordTable(items []phraseItem) *wordTable {
	t := &wordTable{byPair: map[uint64][]phraseItem{}}
	for _, it := range items {
		a, w := utf8.DecodeRuneInString(it.text)
		b, _ := utf8.DecodeRuneInString(it.text[w:])
		if w == len(it.text) {
			b = 0
		}
		t.byPair[pairKey(a, b)] = append(t.byPair[pairKey(a, b)], it)
		switch {
		case a < utf8.RuneSelf && b == 0:
			t.one[a] = true
		case a < utf8.RuneSelf && b < utf8.RuneSelf:
			k := a<<7 | b
			t.ascii[k>>6] |= 1 << (k & 63)
		}
	}
	return t
}

// maybe reports whether a text of t may start at s[i:], by its first two bytes: a text that
// begins with a letter that is not ASCII (its normalized form) never matches an ASCII one.
func (t *wordTable) maybe(s string, i int) bool {
	if s[i] >= utf8.RuneSelf {
		return true
	}
	a := s[i]
	if 'A' <= a && a <= 'Z' {
		a += 'a' - 'A'
	}
	if t.one[a] || i+1 >= len(s) || s[i+1] >= utf8.RuneSelf {
		return true
	}
	b := s[i+1]
	switch {
	case 'A' <= b && b <= 'Z':
		b += 'a' - 'A'
	case b == '\t':
		b = ' '
	case b == '`':
		b = '\''
	}
	k := int(a)<<7 | int(b)
	return t.ascii[k>>6]&(1<<(k&63)) != 0
}

// firstTwo returns the first two runes of s[i:] as normalize would make them.
func firstTwo(s string, i int) (a, b rune, ok bool) {
	var got [2]rune
	n := 0
	for i < len(s) && n < 2 {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		switch {
		case r < utf8.RuneSelf:
			if r == ' ' || r == '\t' {
				got[n] = ' '
				n++
				for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
					i++
				}
				continue
			}
			if r == '`' {
				r = '\''
			}
			got[n] = unicode.ToLower(r)
			n++
		default:
			x, z := baseOf(r)
			if x < 0 {
				continue
			}
			if unicode.IsSpace(x) {
				x = ' '
			}
			got[n] = x
			n++
			if z != 0 && n < 2 {
				got[n] = z
				n++
			}
		}
	}
	return got[0], got[1], n > 0
}

// each calls yield with the end of every phrase of t that starts at s[i:] (or after an
// attached Arabic or Hebrew prefix there), until it returns false. i must be a word start or
// a letter of a script written without spaces.
func (t *wordTable) each(s string, i int, yield func(end int, it *phraseItem) bool) {
	if !t.maybe(s, i) {
		return
	}
	if !t.eachAt(s, i, false, yield) {
		return
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if !isArabic(r) && !isHebrew(r) {
		return
	}
	q := i + w
	for k := 1; k <= 3 && q < len(s); k++ {
		if validPrefix(s[i:q]) && !t.eachAt(s, q, true, yield) {
			return
		}
		r, w := utf8.DecodeRuneInString(s[q:])
		if !isArabic(r) && !isHebrew(r) {
			return
		}
		q += w
	}
}

func (t *wordTable) eachAt(s string, i int, attached bool, yield func(end int, it *phraseItem) bool) bool {
	a, b, ok := firstTwo(s, i)
	if !ok {
		return true
	}
	for _, key := range [2]uint64{pairKey(a, b), pairKey(a, 0)} {
		items := t.byPair[key]
		for x := range items {
			it := &items[x]
			if attached && !it.attach || it.exact != "" && !strings.HasPrefix(s[i:], it.exact) {
				continue
			}
			e := matchFold(s, i, it.text)
			if e >= 0 && it.endOK(s, e) && !yield(e, it) {
				return false
			}
		}
		if b == 0 {
			break
		}
	}
	return true
}

// longest returns the end of the longest phrase of t at s[i:], or -1.
func (t *wordTable) longest(s string, i int) (int, *phraseItem) {
	best, bit := -1, (*phraseItem)(nil)
	if i >= len(s) {
		return best, bit
	}
	t.each(s, i, func(e int, it *phraseItem) bool {
		if e > best {
			best, bit = e, it
		}
		return true
	})
	return best, bit
}

// matchFold returns the end in s of the normalized phrase p read from s[i:] as normalize
// would read it (a space of p matching a run of spaces and tabs), or -1.
func matchFold(s string, i int, p string) int {
	j, k := i, 0
	for k < len(p) {
		if j >= len(s) {
			return -1
		}
		if p[k] == ' ' {
			e := skipBlanks(s, j)
			if e == j {
				return -1
			}
			j, k = e, k+1
			continue
		}
		c := s[j]
		if c < utf8.RuneSelf {
			if c == '`' {
				c = '\''
			} else if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != p[k] {
				return -1
			}
			j++
			k++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[j:])
		j += w
		a, z := baseOf(r)
		if a < 0 {
			continue
		}
		if k = consume(p, k, a); k < 0 {
			return -1
		}
		if z != 0 {
			if k = consume(p, k, z); k < 0 {
				return -1
			}
		}
	}
	return j
}

// consume returns where p goes on after the rune r at k, or -1 if r is not there.
func consume(p string, k int, r rune) int {
	if k >= len(p) {
		return -1
	}
	if r < utf8.RuneSelf {
		if p[k] == byte(r) {
			return k + 1
		}
		return -1
	}
	q, w := utf8.DecodeRuneInString(p[k:])
	if q != r {
		return -1
	}
	return k + w
}

// The tables, built from phrases() the first time they are needed.
type tables struct {
	codes    *phraseSet // code phrases, code words and sign-in verbs, in normalized text
	withheld *phraseSet // withheld phrases, in normalized text

	labels       *wordTable // password, key and PIN labels, in folded text
	connectors   *wordTable
	fillers      *wordTable
	oneTimeAfter *wordTable
	linkWords    *wordTable // sign-in verbs, code phrases and password labels: a link near one is a sign-in link
	recovery     *wordTable // recovery-code labels, for the person's own texts

	notBefore     map[string]bool // one word
	notBeforeMany []phraseItem    // several words, or of a script without spaces: as a suffix
	notAfter      map[rune][]string
	presenters    map[string]bool
	connectWords  map[string]bool // the one-word connectors ("is", "est", "ist")
	presentFree   []string        // presenters of scripts without spaces: as a suffix
	oneTimeBefore []string
	stopValues    map[string]bool
	linkKeys      map[string]bool
	labelStems    []string // the ASCII beginnings of the labels, for the fast path of Text
}

var tbl = sync.OnceValue(buildTables)

func buildTables() *tables {
	t := &tables{
		notBefore: map[string]bool{}, notAfter: map[rune][]string{}, presenters: map[string]bool{}, connectWords: map[string]bool{},
		stopValues: map[string]bool{}, linkKeys: map[string]bool{},
	}
	var codes, withheld, labels, conns, fillers, once, links, recovery []phraseItem
	stems := map[string]bool{}
	for row, p := range phrases() {
		it := newItem(row, p)
		n := it.text
		spaced := !it.free && !it.attach && !strings.Contains(n, " ")
		switch p.kind {
		case codePhrase, codeRemark, codeWord, signInVerb, codePointer:
			codes = append(codes, it)
			if p.kind == signInVerb {
				links = append(links, it)
			}
		case withheldWords:
			withheld = append(withheld, it)
		case passwordLabel, keyLabel, pinLabel:
			labels = append(labels, it)
			if p.kind == passwordLabel {
				links = append(links, it)
			}
			stem := n[:min(len(n), 4)]
			if isASCII(stem) {
				stems[stem] = true
			}
		case connector:
			conns = append(conns, it)
		case labelFiller:
			fillers = append(fillers, it)
		case oneTimeAfter:
			once = append(once, it)
		case oneTimeBefore:
			t.oneTimeBefore = append(t.oneTimeBefore, strings.TrimRight(n, " -"))
		case notCode:
			if spaced {
				t.notBefore[n] = true
			} else {
				t.notBeforeMany = append(t.notBeforeMany, it)
			}
		case notCodeAfter:
			r, _ := utf8.DecodeRuneInString(n)
			t.notAfter[r] = append(t.notAfter[r], n)
		case presenter:
			if it.free {
				t.presentFree = append(t.presentFree, n)
			} else {
				t.presenters[n] = true
			}
		case stopValue:
			t.stopValues[n] = true
		case linkKey:
			t.linkKeys[n] = true
		case recoveryLabel:
			recovery = append(recovery, it)
		}
	}
	// Connectors are presenters too: "your code is 482913".
	for _, c := range conns {
		if c.free {
			t.presentFree = append(t.presentFree, c.text)
		} else if !strings.Contains(c.text, " ") {
			t.presenters[c.text], t.connectWords[c.text] = true, true
		}
	}
	t.codes, t.withheld = newPhraseSet(codes), newPhraseSet(withheld)
	t.labels, t.connectors, t.fillers = newWordTable(labels), newWordTable(conns), newWordTable(fillers)
	t.oneTimeAfter, t.linkWords = newWordTable(once), newWordTable(shortest(links))
	t.recovery = newWordTable(recovery)
	for s := range stems {
		t.labelStems = append(t.labelStems, s)
	}
	sort.Strings(t.labelStems)
	return t
}

// shortest keeps of items those that no other begins (at a word boundary): for a table that is
// only asked whether something matches, "confirm" makes "confirm your email" useless.
func shortest(items []phraseItem) []phraseItem {
	sort.Slice(items, func(a, b int) bool { return items[a].text < items[b].text })
	var out []phraseItem
	for _, it := range items {
		if k := len(out) - 1; k >= 0 {
			p := out[k].text
			if strings.HasPrefix(it.text, p) {
				r, _ := utf8.DecodeRuneInString(it.text[len(p):])
				if out[k].prefix || len(it.text) == len(p) || out[k].end == endFree || !isWordRune(r) {
					continue
				}
			}
		}
		out = append(out, it)
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// labelStems returns the lower-case ASCII beginnings (at most four letters) of every password
// label whose normalized form starts in ASCII: a string of ASCII only that holds none of them,
// no digit, no ':', '=' or '/', holds no password Text would find.
func labelStems() []string { return tbl().labelStems }

// A code message. It says it carries a code when one of these holds, in its normalized subject
// or text (or across the two, see messageCode):
//   - a code phrase ("verification code", "验证码", "код подтверждения") stands there, and the
//     word before it is no not-a-code word ("booking confirmation code") nor the words after
//     it a not-a-code-after phrase;
//   - a bare code word ("code", "PIN", "kod", "コード") that is no such thing ("promo code",
//     "code postal") has a code-shaped token, not itself negated, within 64 bytes before or
//     after it, or a presented one within 200 bytes after it;
//   - a sign-in verb ("verify", "sign in", "войти") has a presented code-shaped token, not
//     negated, within 64 bytes before it or 120 bytes after it, or right before it ("Use
//     482913 to sign in").
//
// A code-shaped token is 4 to 10 digits (not a year) in one group, or in groups of equal size
// (at most 8 digits in all, "48 29 13", "4 8 2 9 1 3", "| 4 | 8 |"), or in two groups the
// first one or two longer ("4829 13"), joined by spaces, line breaks (between groups of one
// or two digits), '-', '_', '|', '>', '[', ']', '*', '·' or '•'; or 4 to 10 letters and digits
// with a digit, joined by '-' or '_' ("X7K-9QP", "G-482913", "a1b2c3", "K7Q2"), but no word of
// four letters or more ("covid-19", "summer25"), no number with a unit ("100mg", "21st"). It is
// not one when it is part of a decimal, a time or a date ("12.4829", "10:30", "14/06/2025"),
// or follows '+', '#', a currency sign, '№' or '°'. It is negated when the word before it (or
// before the "is" before it) is a not-a-code word ("order 48291376", "order number is …"),
// when a not-a-code-after word follows it ("4829 points", "20 %"), or when a '%' follows
// within 40 bytes (a discount). It is presented when it stands alone on its line (quote marks
// and table rules aside), after ':' or '=', after a presenter ("enter", "use", "is", "是"),
// or at the start of the text.
func codeContext(n string) bool {
	t := tbl()
	var toks *tokenList
	found, negatedUntil := false, 0
	t.codes.each(n, func(start, end int, it *phraseItem) bool {
		if inMarker(n, start) {
			return true
		}
		switch it.kind {
		case codePhrase:
			found = true
		case codeRemark:
			found = !negatedBefore(n, start, false) && !negatedAfter(n, end)
			if !found {
				negatedUntil = max(negatedUntil, end) // "booking confirmation code": its "code" too
			}
		case codeWord:
			if start < negatedUntil || it.text == "pin" && !pinWord(n, start) ||
				negatedBefore(n, start, false) || negatedAfter(n, end) {
				return true
			}
			if toks == nil {
				toks = newTokens(n)
			}
			found = toks.near(start, end, 64, 64, false) || toks.near(start, end, 0, 200, true)
		case signInVerb:
			if toks == nil {
				toks = newTokens(n)
			}
			found = toks.near(start, end, 64, 120, true) || toks.rightBefore(n, start)
		case codePointer:
			if negatedBefore(n, start, false) {
				return true
			}
			if toks == nil {
				toks = newTokens(n)
			}
			found = toks.near(start, end, pointerReach, 0, false)
		}
		return !found
	})
	return found
}

// pointerReach is how far before "the number above" its number may stand.
const pointerReach = 400

// pointsToCode reports whether n holds a code pointer ("the code in the subject") that is not
// negated ("the order number above").
func pointsToCode(n string) bool {
	found := false
	tbl().codes.each(n, func(start, end int, it *phraseItem) bool {
		found = it.kind == codePointer && !inMarker(n, start) && !negatedBefore(n, start, false)
		return !found
	})
	return found
}

// messageCode is codeContext for a whole message, from its normalized subject and text: either
// says it alone, or the subject has a code word or sign-in verb and the text's first 400 bytes
// a presented token, or the other way round ("Sign in to Example" / "482913"), or the text
// points to a code ("the number above", "the code in the subject") and the subject holds a
// token that is not negated ("[Example] 707117").
func messageCode(ns, nt string) bool {
	if codeContext(ns) || codeContext(nt) {
		return true
	}
	head := nt[:min(len(nt), 400)]
	if m := strings.IndexByte(head, '['); m >= 0 && inMarker(head, m+1) {
		head = head[:m] // what a mask shortened must not bring a token nearer
	}
	return hasCue(ns) && newTokens(head).anyPresented() || hasCue(nt) && newTokens(ns).anyPresented() ||
		pointsToCode(nt) && newTokens(ns).any()
}

// hasCue reports whether n holds a code word or a sign-in verb that is not negated.
func hasCue(n string) bool {
	found := false
	tbl().codes.each(n, func(start, end int, it *phraseItem) bool {
		if inMarker(n, start) || it.kind == codeWord && (it.text == "pin" && !pinWord(n, start) ||
			negatedBefore(n, start, false) || negatedAfter(n, end)) {
			return true
		}
		found = true
		return false
	})
	return found
}

// pinWord: "pin" only as "pin code", "code pin", "your pin", "pin:"; never "pin this".
func pinWord(n string, k int) bool {
	rest := n[k+3:]
	return strings.HasPrefix(rest, " code") || strings.HasPrefix(rest, ":") ||
		strings.HasPrefix(rest, " :") || strings.HasPrefix(rest, " is ") ||
		strings.HasSuffix(n[:k], "code ") || strings.HasSuffix(n[:k], "your ") ||
		strings.HasSuffix(n[:k], "votre ")
}

func withheldPhrase(n string) bool { return tbl().withheld.in(n) }

// normMarkers are the markers as normalize writes them.
var normMarkers = []string{
	"[code hidden]", "[link hidden]", "[password hidden]", "[key hidden]", "[card ending ", "[iban ending ",
	"[social security number ending ", "[message withheld: ",
}

// normMarkerLen returns the length of the normalized marker n starts with, 0 if none.
func normMarkerLen(n string) int {
	for _, m := range normMarkers {
		if strings.HasPrefix(n, m) {
			if m[len(m)-1] == ']' {
				return len(m)
			}
			if e := strings.IndexByte(n[len(m):min(len(n), len(m)+48)], ']'); e >= 0 {
				return len(m) + e + 1
			}
		}
	}
	return 0
}

// inMarker reports whether n[k] is inside a marker (a phrase there is the marker's, not the
// message's).
func inMarker(n string, k int) bool {
	from := max(0, k-48)
	p := strings.LastIndexByte(n[from:k], '[')
	if p < 0 {
		return false
	}
	p += from
	return p+normMarkerLen(n[p:]) > k
}

// prevWord returns the word before n[:k] (over at most four bytes of spaces and punctuation,
// line breaks too if lines) and the end of the text before it after that punctuation: "order"
// in "order: 4829".
func prevWord(n string, k int, lines bool) (w string, at int) {
	j := k
	for j > 0 && k-j < 4 {
		c := n[j-1]
		if c >= utf8.RuneSelf || isAlnum(c) || c == '\n' && !lines {
			break
		}
		j--
	}
	at = j
	if j > 0 {
		if r, _ := utf8.DecodeLastRuneInString(n[:j]); !isWordRune(r) {
			return "", at
		}
	}
	s := j
	var last rune = -1
	for s > 0 && j-s < 48 {
		r, w := utf8.DecodeLastRuneInString(n[:s])
		if !isWordRune(r) || last >= 0 && !joins(r, last) {
			break
		}
		last = r
		s -= w
	}
	return n[s:j], at
}

// negatedBefore reports whether a not-a-code word stands right before n[k:] (on the line
// before too, if lines).
func negatedBefore(n string, k int, lines bool) bool {
	t := tbl()
	w, at := prevWord(n, k, lines)
	if w != "" && t.notBefore[w] {
		return true
	}
	if w == "" && at > 0 && n[at-1] == ']' && inMarker(n, at-1) {
		return true // what stood there was masked: it may have been "promo"
	}
	if w != "" && w[len(w)-1] < utf8.RuneSelf {
		return false // the words of several words end in a letter that is not ASCII
	}
	for x := range t.notBeforeMany {
		it := &t.notBeforeMany[x]
		if m := it.text; strings.HasSuffix(n[:at], m) && it.startOK(n, at-len(m), startsWordAt(n, at-len(m))) {
			return true
		}
	}
	return false
}

// newItemText is the boundary rules of a normalized text (for the lists kept as strings).
func newItemText(n string) phraseItem {
	first, _ := utf8.DecodeRuneInString(n)
	return phraseItem{text: n, free: isSpaceless(first), attach: isArabic(first) || isHebrew(first)}
}

// negatedAfter reports whether a not-a-code-after phrase follows n[:e].
func negatedAfter(n string, e int) bool {
	p := e
	for p < len(n) && p-e < 2 && n[p] == ' ' {
		p++
	}
	if p >= len(n) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(n[p:])
	for _, a := range tbl().notAfter[r] {
		if strings.HasPrefix(n[p:], a) && endsWordAt(n, p+len(a)) {
			return true
		}
	}
	return false
}

// Code-shaped tokens of a normalized text.
type ctoken struct {
	start, end         int
	negated, presented bool
}

// tokenList holds the tokens of a text and the places of its markers. A marker stands where a
// first pass masked something, which a second pass must not read as nearer or shorter than
// the first did: a token next to a marker is none (it was part of a longer number), and no
// marker may stand between a code word and its token.
type tokenList struct {
	toks  []ctoken
	marks []int // the starts of the markers
}

func newTokens(n string) *tokenList {
	out := &tokenList{}
	lastMark := -1 // the end of the last marker
	for i := 0; i < len(n); {
		c := n[i]
		if c == '[' {
			if m := normMarkerLen(n[i:]); m > 0 {
				out.marks = append(out.marks, i)
				i += m
				lastMark = i
				continue
			}
		}
		if c >= utf8.RuneSelf || !isAlnum(c) {
			i++
			continue
		}
		if !startsWordAt(n, i) {
			i++
			continue
		}
		end, ok := tokenAt(n, i)
		if ok && (lastMark >= 0 && onlySeps(n[lastMark:i]) || nextToMarker(n, end)) {
			ok = false
		}
		if ok {
			out.toks = append(out.toks, ctoken{start: i, end: end, negated: tokenNegated(n, i, end), presented: tokenPresented(n, i, end)})
		}
		i = max(end, i+1)
	}
	return out
}

// onlySeps reports whether g is at most four bytes of ASCII spaces and punctuation (what may
// join or part a token and what stood next to it: "0000,4111 …").
func onlySeps(g string) bool {
	if len(g) > 4 {
		return false
	}
	for k := 0; k < len(g); k++ {
		if g[k] >= utf8.RuneSelf || isAlnum(g[k]) {
			return false
		}
	}
	return true
}

// nextToMarker reports whether a marker follows n[:e] after at most four bytes of ASCII spaces
// and punctuation.
func nextToMarker(n string, e int) bool {
	for k := e; k < len(n) && k-e <= 4; k++ {
		if n[k] == '[' && normMarkerLen(n[k:]) > 0 {
			return true
		}
		if n[k] >= utf8.RuneSelf || isAlnum(n[k]) {
			return false
		}
	}
	return false
}

// near reports whether a token that is not negated (and is presented, if asked) overlaps
// n[start-before:end+after], with no marker between it and n[start:end].
func (tl *tokenList) near(start, end, before, after int, presented bool) bool {
	toks := tl.toks
	lo, hi := start-before, end+after
	k := sort.Search(len(toks), func(k int) bool { return toks[k].end > lo })
	for ; k < len(toks) && toks[k].start < hi; k++ {
		t := toks[k]
		if t.negated || presented && !t.presented {
			continue
		}
		a, b := t.end, start // the gap between the token and the phrase
		if t.start >= end {
			a, b = end, t.start
		}
		if !tl.markBetween(a, b) {
			return true
		}
	}
	return false
}

// markBetween reports whether a marker starts in [a, b).
func (tl *tokenList) markBetween(a, b int) bool {
	if a >= b {
		return false
	}
	k := sort.SearchInts(tl.marks, a)
	return k < len(tl.marks) && tl.marks[k] < b
}

// any reports whether the text holds a token that is not negated.
func (tl *tokenList) any() bool {
	for _, t := range tl.toks {
		if !t.negated {
			return true
		}
	}
	return false
}

// anyPresented reports whether the text holds a presented token that is not negated.
func (tl *tokenList) anyPresented() bool {
	for _, t := range tl.toks {
		if !t.negated && t.presented {
			return true
		}
	}
	return false
}

// rightBefore reports whether a token that is not negated ends at most 12 bytes before n[k:],
// on the same line, with no digit between: "482913 to sign in".
func (tl *tokenList) rightBefore(n string, k int) bool {
	toks := tl.toks
	x := sort.Search(len(toks), func(x int) bool { return toks[x].end > k }) - 1
	if x < 0 {
		return false
	}
	t := toks[x]
	if t.negated || k-t.end > 12 {
		return false
	}
	gap := n[t.end:k]
	return !strings.ContainsAny(gap, "\n[0123456789")
}

// tokenAt reads what starts at the word start n[i:] (an ASCII letter or digit) and returns its
// end and whether it is a code-shaped token.
func tokenAt(n string, i int) (int, bool) {
	j := i
	letters, digits, parts, trans := 0, 0, 0, 0
	longWord := false
	letterFirst := isLetter(n[i])
	for {
		pl, pd, prev := 0, 0, byte(0)
		for j < len(n) && isAlnum(n[j]) {
			k := byte(1)
			if isDigit(n[j]) {
				k = 2
				pd++
			} else {
				pl++
			}
			if prev != 0 && k != prev {
				trans++
			}
			prev = k
			j++
		}
		if pd == 0 && pl >= 4 {
			longWord = true
		}
		parts++
		letters += pl
		digits += pd
		if j+1 < len(n) && (n[j] == '-' || n[j] == '_') && isAlnum(n[j+1]) {
			j++
			continue
		}
		break
	}
	if !endsWordAt(n, j) {
		return wordEnd(n, j), false // goes on in another letter: no token
	}
	if letters == 0 {
		return digitCluster(n, i)
	}
	total := letters + digits
	if digits == 0 || total < 4 || total > 10 || longWord {
		return j, false
	}
	if parts == 1 {
		switch {
		case digits == 1 && (trans < 2 || total < 5):
			return j, false
		case letterFirst && trans == 1 && letters >= 4 && digits <= 3: // summer25, iphone15
			return j, false
		case !letterFirst && trans < 2: // 100mg, 21st, 4gb
			return j, false
		}
	}
	return j, !shapeRefused(n, i, j)
}

// digitCluster reads groups of digits joined by token separators from n[i:].
func digitCluster(n string, i int) (int, bool) {
	var sizes [12]int
	groups, total, end := 0, 0, i
	slash := false
	for j := i; ; {
		e := j
		for e < len(n) && isDigit(n[e]) {
			e++
		}
		if e == j {
			break
		}
		if !endsWordAt(n, e) {
			return wordEnd(n, e), false // digits going on in letters
		}
		if groups < len(sizes) {
			sizes[groups] = e - j
		}
		groups++
		total += e - j
		end = e
		k, brk := e, false
		for k < len(n) && k-e < 4 {
			r, w := utf8.DecodeRuneInString(n[k:])
			if r == '/' && k == e {
				slash = true // "482/913"; a date's groups are too short to be a code's (below)
			} else if !isTokenSep(r) {
				break
			}
			brk = brk || r == '\n'
			k += w
		}
		if k == e || k >= len(n) || !isDigit(n[k]) || brk && e-j > 2 {
			break
		}
		j = k
	}
	ok := total >= 4 && total <= 10
	switch {
	case !ok:
	case groups == 1:
		ok = !(total == 4 && isYear(n[i:end]))
	case total > 8 || groups > len(sizes):
		ok = false
	case groups == 2:
		a, b := sizes[0], sizes[1]
		ok = a == b || a > b && a-b <= 2
	default:
		for _, s := range sizes[1:groups] {
			ok = ok && s == sizes[0]
		}
	}
	if slash {
		for _, s := range sizes[:min(groups, len(sizes))] {
			ok = ok && s >= 3 // 14/06/2025, 06/14 are dates
		}
	}
	return end, ok && !shapeRefused(n, i, end)
}

func isTokenSep(r rune) bool {
	switch r {
	case ' ', '\n', '-', '_', '|', '>', '[', ']', '*', '\u00B7', '\u2022':
		return true
	}
	return false
}

func isYear(s string) bool {
	return len(s) == 4 && (s[:2] == "19" || s[:2] == "20")
}

// shapeRefused reports whether n[i:e] is part of a decimal, a time, a date, an amount or a
// phone number rather than a token of its own.
func shapeRefused(n string, i, e int) bool {
	if i >= 2 && strings.IndexByte(".,:/", n[i-1]) >= 0 && isDigit(n[i-2]) {
		return true
	}
	if e+1 < len(n) && strings.IndexByte(".,:/", n[e]) >= 0 && isDigit(n[e+1]) {
		return true
	}
	k := i
	if k > 0 && n[k-1] == ' ' {
		k--
	}
	if k > 0 {
		r, _ := utf8.DecodeLastRuneInString(n[:k])
		switch r {
		case '+', '#', '$', '€', '£', '¥', '₹', '№', '°', '₽', '₪', '₩':
			return true
		}
	}
	return false
}

// tokenNegated: see codeContext.
func tokenNegated(n string, i, e int) bool {
	t := tbl()
	if negatedBefore(n, i, true) || negatedAfter(n, e) {
		return true
	}
	w, at := prevWord(n, i, true)
	if w != "" && t.connectWords[w] && negatedBefore(n, at-len(w), true) {
		return true // "order number is 48291376"
	}
	for _, p := range t.presentFree {
		if strings.HasSuffix(n[:at], p) && negatedBefore(n, at-len(p), true) {
			return true // "订单号是48291376"
		}
	}
	return strings.IndexByte(n[e:min(len(n), e+40)], '%') >= 0
}

// tokenPresented: see codeContext.
func tokenPresented(n string, i, e int) bool {
	t := tbl()
	if lineAlone(n, i, e) {
		return true
	}
	k := i
	for k > 0 && i-k < 3 && n[k-1] == ' ' {
		k--
	}
	if k == 0 {
		return true
	}
	if c := n[k-1]; c == ':' || c == '=' {
		return true
	}
	w, at := prevWord(n, i, true)
	if w != "" && t.presenters[w] {
		return true
	}
	for _, p := range t.presentFree {
		if strings.HasSuffix(n[:at], p) {
			return true
		}
	}
	return false
}

// lineAlone reports whether n[i:e] is alone on its line but for quote marks, table rules and
// punctuation.
func lineAlone(n string, i, e int) bool {
	for k := i; ; {
		if k == 0 || n[k-1] == '\n' {
			break
		}
		r, w := utf8.DecodeLastRuneInString(n[:k])
		if isWordRune(r) || i-k > 16 {
			return false
		}
		k -= w
	}
	for k := e; k < len(n) && n[k] != '\n'; {
		r, w := utf8.DecodeRuneInString(n[k:])
		if isWordRune(r) || k-e > 16 {
			return false
		}
		k += w
	}
	return true
}

// Passwords.

// givesSecret returns the reason when s (folded) gives a password, key or PIN as a value, ""
// if not.
func givesSecret(s string) string {
	reason := ""
	eachWordStart(s, func(i int) bool {
		if _, _, r := passwordAt(s, i); r != "" {
			reason = r
			return false
		}
		return true
	})
	return reason
}

// eachWordStart calls f at every word start of s and at every letter of a script written
// without spaces, markers left out, until f returns false.
func eachWordStart(s string, f func(i int) bool) {
	for i := 0; i < len(s); {
		if s[i] == '[' {
			if m := markerLen(s[i:]); m > 0 {
				i += m
				continue
			}
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += w
			continue
		}
		if !f(i) {
			return
		}
		if isSpaceless(r) {
			i += w
		} else {
			i = wordEnd(s, i)
		}
	}
}

// passwordAt looks for a password label at the word start i of the folded text s, followed by a
// value that looks like a secret, in one of these forms:
//   - label, then ':' or '=' (any width), then the value, on the same line or the next
//     (lenient: any value that is not a placeholder, a link or a stop word; a value of letters
//     only must end its line);
//   - label, then a connector ("is", "has been set to", "est", "lautet", "是", "は"…) or a
//     dash between blanks ("Password - Xk82!pq9"), then a value with a digit, a symbol or a
//     capital after a small letter (strict);
//   - label alone at the start of a line or table cell, then, after blanks, a tab, '|' or one
//     line break, a strict value of six characters or more that ends its line or cell (as a
//     two-column table becomes text: "Password\tXk82!pq9", "Password\nXk82!pq9").
//
// Between label and connector may stand a filler ("provisoire", "for your account",
// "الخاصة بك"). A label after a one-time word ("one-time", "ワンタイム") or before one ("à
// usage unique") is a code's, not a password's. It returns the value's span (its run of
// non-space characters, cut where a script without spaces starts: "Xk82!pq9입니다") and the
// reason, or reason "" when there is none; it reads at most a few hundred bytes ahead, except
// to find the end of the value.
func passwordAt(s string, i int) (vs, ve int, reason string) {
	t := tbl()
	j, lb := t.labels.longest(s, i)
	if lb == nil {
		return 0, 0, ""
	}
	labelEnd := j
	j = skipBlanks(s, j)
	for range 2 {
		e, _ := t.fillers.longest(s, j)
		if e < 0 {
			break
		}
		j = skipBlanks(s, e)
	}
	const (
		strict = iota
		lenient
		cell
	)
	mode := strict
	switch {
	case j < len(s) && (s[j] == ':' || s[j] == '='):
		mode = lenient
		j++
	case strings.HasPrefix(s[j:], "："):
		mode = lenient
		j += len("：")
	case dashAt(s, j) > 0:
		j += dashAt(s, j)
	default:
		if e, _ := t.connectors.longest(s, j); e >= 0 {
			j = skipBlanks(s, e)
			if j < len(s) && s[j] == ':' {
				mode = lenient
				j++
			}
		} else if cellStart(s, i) {
			mode, j = cell, labelEnd
		} else {
			return 0, 0, ""
		}
	}
	j = skipBlanks(s, j)
	if mode == cell {
		j = skipRules(s, j)
	}
	if mode != strict && j < len(s) && (s[j] == '\n' || s[j] == '\r') {
		// A value on the next line, as a two-column table turns into text.
		if s[j] == '\r' {
			j++
		}
		if j < len(s) && s[j] == '\n' {
			j++
		}
		j = skipBlanks(s, j)
		if mode == cell {
			j = skipRules(s, j)
		}
	}
	if j >= len(s) {
		return 0, 0, ""
	}
	if r, _ := utf8.DecodeRuneInString(s[j:]); isSpaceless(r) || unicode.IsSpace(r) {
		return 0, 0, ""
	}
	// A value holding what a mask put there gives nothing away; taking it for a
	// password would make a second pass withhold what the first one kept.
	for k := j; k < len(s) && k-j < 256; k++ {
		if s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r' {
			break
		}
		if s[k] == '[' && markerLen(s[k:]) > 0 {
			return 0, 0, ""
		}
	}
	end, cut := j, false
	for end < len(s) && end-j < 256 {
		r, w := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r) {
			break
		}
		if isSpaceless(r) || r >= 0x3000 && r <= 0x303F {
			cut = true
			break
		}
		end += w
	}
	val := strings.TrimRight(s[j:end], ".,;!?)\"'»")
	if !looksSecret(val, mode != strict, lb.kind == pinLabel, mode == cell) {
		return 0, 0, ""
	}
	switch {
	case mode == cell && !endsCell(s, end):
		return 0, 0, ""
	case mode == lenient && lettersOnly(val) && !endsCell(s, end):
		return 0, 0, ""
	}
	if afterOneTime(s, i) || beforeOneTime(s, labelEnd) {
		return 0, 0, ""
	}
	for !cut && end < len(s) {
		r, w := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r) {
			break
		}
		end += w
	}
	switch lb.kind {
	case keyLabel:
		return j, end, ReasonKey
	case pinLabel:
		return j, end, ReasonPIN
	}
	return j, end, ReasonPassword
}

// dashAt returns the width of a dash and the blank after it at s[j:] ("Password - …"), 0 if none.
func dashAt(s string, j int) int {
	if j >= len(s) {
		return 0
	}
	r, w := utf8.DecodeRuneInString(s[j:])
	switch r {
	case '-', '\u2013', '\u2014', '\u2212', '\u2012', '\u2015':
	default:
		return 0
	}
	if j+w < len(s) && (s[j+w] == ' ' || s[j+w] == '\t') {
		return w + 1
	}
	return 0
}

// cellStart reports whether the word at i starts a line or a table cell: only blanks, '|', '>',
// '*' or '-' stand between it and a line break, a tab or the start of s.
func cellStart(s string, i int) bool {
	k := i
	for k > 0 && i-k < 16 {
		c := s[k-1]
		if c != ' ' && c != '|' && c != '>' && c != '*' && c != '-' {
			break
		}
		k--
	}
	return k == 0 || s[k-1] == '\n' || s[k-1] == '\r' || s[k-1] == '\t'
}

// skipRules skips the '|' of a table and the blanks around it.
func skipRules(s string, j int) int {
	for j < len(s) && (s[j] == '|' || s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j
}

// endsCell reports whether only blanks stand between s[:e] and the end of its line or table
// cell.
func endsCell(s string, e int) bool {
	for e < len(s) && s[e] == ' ' {
		e++
	}
	return e == len(s) || s[e] == '\n' || s[e] == '\r' || s[e] == '\t' || s[e] == '|'
}

func lettersOnly(v string) bool {
	for _, r := range v {
		if !unicode.IsLetter(r) && r != '-' && r != '\'' {
			return false
		}
	}
	return true
}

// looksSecret tells a given password from the word after a label in a sentence.
func looksSecret(v string, lenient, pin, cell bool) bool {
	n := utf8.RuneCountInString(v)
	if n < 4 || cell && n < 6 {
		return false
	}
	if pin {
		return strings.IndexFunc(v, unicode.IsDigit) >= 0
	}
	lower := strings.ToLower(v)
	if strings.HasPrefix(lower, "http") || strings.HasPrefix(lower, "www.") ||
		strings.ContainsAny(v[:1], "([<{") || strings.HasSuffix(v, ":") {
		return false
	}
	if strings.Trim(v, "*•●·xX._-") == "" {
		return false
	}
	return (lenient || strictShape(v)) && !tbl().stopValues[normalize(v)]
}

// strictShape: a digit, a symbol, or a capital after a small letter.
func strictShape(v string) bool {
	small := false
	for _, r := range v {
		switch {
		case unicode.IsDigit(r):
			return true
		case unicode.IsUpper(r) && small:
			return true
		case unicode.IsLower(r):
			small = true
		case !unicode.IsLetter(r) && r != '-' && r != '\'' && r != '’':
			return true
		}
	}
	return false
}

// afterOneTime reports whether the text before a label at s[i:] makes it a one-time password.
func afterOneTime(s string, i int) bool {
	// "00onetime password": the first pass hid "00onetime" as a code; a second
	// pass must still read the label as a one-time password's.
	if strings.HasSuffix(s[:i], HiddenCode+" ") {
		return true
	}
	from := max(0, i-40)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from++
	}
	b := strings.TrimRight(normalize(s[from:i]), " -")
	for _, p := range tbl().oneTimeBefore {
		if strings.HasSuffix(b, p) {
			if it := newItemText(p); it.free || startsWordAt(b, len(b)-len(p)) {
				return true
			}
		}
	}
	return false
}

// beforeOneTime reports whether a one-time word follows a label at s[j:].
func beforeOneTime(s string, j int) bool {
	j = skipBlanks(s, j)
	if j >= len(s) {
		return false
	}
	e, _ := tbl().oneTimeAfter.longest(s, j)
	return e >= 0
}

// skipBlanks skips spaces and tabs (not line breaks).
func skipBlanks(s string, j int) int {
	for j < len(s) {
		if c := s[j]; c == ' ' || c == '\t' {
			j++
			continue
		} else if c < utf8.RuneSelf {
			break
		}
		r, w := utf8.DecodeRuneInString(s[j:])
		if r == '\u0085' || r == '\u2028' || r == '\u2029' || !unicode.IsSpace(r) {
			break
		}
		j += w
	}
	return j
}

// secretSet holds the passwords a withheld message gives, as fingerprints (keyed with the
// process's seed, so they say nothing outside it), with their lengths and first bytes, so that
// Apply can mask the same value in the message's other fields: an attachment named after it,
// a subject that repeats it. At most four.
type secretSet struct {
	n    uint8
	h    [4]uint64
	size [4]uint16
	head [4][2]byte
}

// secretValues returns the passwords the folded texts give.
func secretValues(texts ...string) secretSet {
	var ss secretSet
	for _, s := range texts {
		// A value runs to the next space however long it is: reading on from its end, not
		// from the next word inside it, keeps this linear ("password:password:…").
		next := 0
		eachWordStart(s, func(i int) bool {
			if i < next {
				return true
			}
			vs, ve, reason := passwordAt(s, i)
			if reason != "" {
				ss.add(secretCore(s[vs:ve]))
				next = ve
			}
			return ss.n < uint8(len(ss.h))
		})
	}
	return ss
}

// secretCore is the part of a value that is matched elsewhere: from its first letter or digit,
// without the punctuation that ends a sentence.
func secretCore(v string) string {
	v = strings.TrimRight(v, ".,;!?)\"'»")
	for v != "" {
		r, w := utf8.DecodeRuneInString(v)
		if isWordRune(r) {
			break
		}
		v = v[w:]
	}
	return v
}

func (ss *secretSet) add(v string) {
	if len(v) < 4 || len(v) > 0xFFFF || ss.n >= uint8(len(ss.h)) {
		return
	}
	h := fingerprint(v)
	for k := range int(ss.n) {
		if ss.h[k] == h && int(ss.size[k]) == len(v) {
			return
		}
	}
	k := ss.n
	ss.h[k], ss.size[k], ss.head[k] = h, uint16(len(v)), [2]byte{v[0], v[1]}
	ss.n++
}

// at returns the end of a secret of the set that starts at s[i:], or -1.
func (ss *secretSet) at(s string, i int) int {
	for k := range int(ss.n) {
		e := i + int(ss.size[k])
		if e > len(s) || s[i] != ss.head[k][0] || s[i+1] != ss.head[k][1] {
			continue
		}
		if fingerprint(s[i:e]) != ss.h[k] {
			continue
		}
		if last, _ := utf8.DecodeLastRuneInString(s[i:e]); isWordRune(last) && !endsWordAt(s, e) {
			continue
		}
		return e
	}
	return -1
}

// Links.

// ruleState is what the scanner's rules remember from word to word.
type ruleState struct {
	secrets secretSet // a withheld message's passwords, masked wherever they appear

	// For sign-in links in a message without a code (see signInLink): s[:seen] has been
	// looked at for line breaks; lineFull says the current line holds something; a sign-in
	// word was seen (signIn) that many non-blank lines ago (lines).
	seen     int
	lineFull bool
	signIn   bool
	lines    int
}

// trackTo counts the line breaks of s[seen:i].
func (sc *scanner) trackTo(i int) {
	r := &sc.rules
	for k := r.seen; k < i; k++ {
		switch sc.s[k] {
		case '\n':
			if r.lineFull {
				r.lines++
			}
			r.lineFull = false
		case ' ', '\t', '\r':
		default:
			r.lineFull = true
		}
	}
	r.seen = max(r.seen, i)
}

// mask hides s[from:to] behind marker. What follows is read afresh, as a second pass will read
// it after the marker: a host name that began in what is hidden is no reason to look for no
// link after it. Without a code, what it hides counts as one word on one line, as its marker
// will in a second pass (a card may span lines).
func (sc *scanner) mask(from, to int, marker string) int {
	sc.noLinkUntil = min(sc.noLinkUntil, to)
	if !sc.code {
		sc.trackTo(from)
		sc.rules.seen = max(sc.rules.seen, to)
		sc.rules.lineFull = true
	}
	return sc.hide(from, to, marker)
}

// signInWordAt notes a sign-in word (a sign-in verb, a code phrase, a password label) at the
// word start i.
func (sc *scanner) signInWordAt(i int) {
	found := false
	tbl().linkWords.each(sc.s, i, func(int, *phraseItem) bool { found = true; return false })
	if found {
		sc.rules.signIn, sc.rules.lines = true, 0
	}
}

// signInLink reports whether the link s[i:end], in a message without a code, is a sign-in,
// magic, reset or confirm link: a sign-in word stands before it on its line or on the line
// before (blank lines aside), or the link says so itself (signInURL).
func (sc *scanner) signInLink(i, end int) bool {
	return sc.rules.signIn && sc.rules.lines <= 1 || signInURL(sc.s[i:end])
}

// signInURL reports whether a link is a sign-in link by its own text: a path segment, query key
// or value that is a link key (lower case, '-', '_', '.' and '+' left out: "login", "sign-in",
// "reset-password", "token", "verify"), or carries a long token: a run of 20 letters and
// digits or more with both, or of 24 or more letters, digits, '-' and '_' with a capital, a
// small letter and a digit, or 32 hex digits and more with dashes (a UUID). A file name's
// stem (".png", ".pdf") is never a token. Newsletters ("?id=482913"), tracking parameters
// ("?utm_source=newsletter") and slugs stay links.
func signInURL(u string) bool {
	if k := strings.Index(u, "://"); k >= 0 && k <= 12 {
		u = u[k+3:]
	}
	p := strings.IndexAny(u, "/?#")
	if p < 0 {
		return false
	}
	rest := u[p:]
	for rest != "" {
		q := strings.IndexAny(rest, "/?&;#=")
		if q == 0 {
			rest = rest[1:]
			continue
		}
		piece := rest
		if q > 0 {
			piece, rest = rest[:q], rest[q:]
		} else {
			rest = ""
		}
		if linkPiece(piece) {
			return true
		}
	}
	return false
}

func linkPiece(p string) bool {
	base, file := p, false
	if d := strings.LastIndexByte(p, '.'); d > 0 && len(p)-d <= 5 && len(p)-d >= 2 && allLetters(p[d+1:]) {
		base, file = p[:d], true
	}
	if len(base) <= 40 {
		var buf [40]byte
		n := 0
		for k := 0; k < len(base); k++ {
			c := base[k]
			switch {
			case c == '-' || c == '_' || c == '.' || c == '+':
				continue
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			buf[n] = c
			n++
		}
		if tbl().linkKeys[string(buf[:n])] {
			return true
		}
	}
	return !file && longToken(base)
}

func allLetters(s string) bool {
	for k := 0; k < len(s); k++ {
		if !isLetter(s[k]) {
			return false
		}
	}
	return s != ""
}

// longToken: see signInURL.
func longToken(p string) bool {
	run, letter, digit := 0, false, false // a run of letters and digits
	wide, up, low, dig := 0, false, false, false
	hexes, hexOnly := 0, true
	for k := 0; k <= len(p); k++ {
		c := byte(0)
		if k < len(p) {
			c = p[k]
		}
		if isAlnum(c) {
			run++
			letter = letter || isLetter(c)
			digit = digit || isDigit(c)
		} else {
			if run >= 20 && letter && digit {
				return true
			}
			run, letter, digit = 0, false, false
		}
		if isAlnum(c) || c == '-' || c == '_' {
			wide++
			up = up || 'A' <= c && c <= 'Z'
			low = low || 'a' <= c && c <= 'z'
			dig = dig || isDigit(c)
			if isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' {
				hexes++
			} else if c != '-' {
				hexOnly = false
			}
		} else {
			if wide >= 24 && up && low && dig || hexOnly && hexes >= 32 && dig {
				return true
			}
			wide, up, low, dig, hexes, hexOnly = 0, false, false, false, 0, true
		}
	}
	return false
}

// charsetName reports whether w is the name of a character set ("iso-8859-15", "windows-1252",
// "utf-16le", "iso-2022-jp"), which a parse problem echoes and which is no code.
func charsetName(w string) bool {
	if len(w) > 24 {
		return false
	}
	var buf [24]byte
	for k := 0; k < len(w); k++ {
		c := w[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[k] = c
	}
	return charsets()[string(buf[:len(w)])]
}

var charsets = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, c := range charsetNames {
		m[c] = true
	}
	for k := 1; k <= 16; k++ {
		d := itoa(k)
		m["iso-8859-"+d], m["iso8859-"+d], m["iso_8859-"+d], m["latin"+d] = true, true, true, true
	}
	for k := 1250; k <= 1258; k++ {
		m["windows-"+itoa(k)], m["cp"+itoa(k)] = true, true
	}
	for _, u := range []string{"utf-7", "utf-8", "utf-16", "utf-32", "utf7", "utf8", "utf16", "utf32"} {
		m[u], m[u+"le"], m[u+"be"] = true, true, true
	}
	return m
})

func itoa(k int) string {
	if k < 10 {
		return string(rune('0' + k))
	}
	return itoa(k/10) + string(rune('0'+k%10))
}

// numberEnd returns the end of the number at s[j:] when it is digits up to a word boundary,
// else -1.
func numberEnd(s string, j int) int {
	k := j
	for k < len(s) {
		r, w := utf8.DecodeRuneInString(s[k:])
		if !unicode.IsDigit(r) {
			break
		}
		k += w
	}
	if k == j || !endsWordAt(s, k) {
		return -1
	}
	return k
}

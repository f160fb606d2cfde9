package caldav

// The characters XML 1.0 cannot carry (section 2.2: the C0 controls but TAB, LF and CR,
// U+FFFE, U+FFFF, the surrogates) are what a stranger's invitation can put in a SUMMARY to
// make a server's multistatus answer unreadable: the server writes them as they are, or as
// references such as &#7;, and an XML parser (Go's, like every conforming one) refuses the
// whole answer, so one event would stop the sync of the calendar and of everything after it.
// charFilter leaves them out as the answer is read, one byte at a time, so nothing is held
// but the parser's own state; it replaces a byte that is not UTF-8 with U+FFFD (one for each
// run of such bytes), which the parser would refuse too. What it removed is counted, so that
// the sync can name the object that held it.

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// xmlChar says whether XML 1.0 allows r in a document (production Char).
func xmlChar(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= utf8.MaxRune
}

// notUTF8 stands, in what a filter removed, for bytes that were not UTF-8.
const notUTF8 rune = -1

// maxRefLen is the longest numeric character reference looked at (&#x + digits + ;): enough
// for any code point with a few leading zeros.
const maxRefLen = 32

const (
	inText = iota
	inCDATA
	inComment
)

// charFilter reads r leaving out the characters XML 1.0 does not allow. With xml set, r is
// an XML document and references to such characters (&#7;, &#x1B;) go too, except in CDATA
// sections and comments, where & is no reference; without, r is plain text (an object's
// iCalendar or vCard text) and only the characters themselves go.
type charFilter struct {
	r     *bufio.Reader
	xml   bool
	state int
	out   []byte // bytes ready to be read, from pos
	pos   int
	err   error
	bad   bool // the last thing seen was a byte that is not UTF-8
	seen  removed
}

// removed is what a filter left out since it was last asked.
type removed struct {
	n     int
	runes []rune // the distinct characters, at most maxNamed (notUTF8 for bytes not UTF-8)
}

const maxNamed = 6

func newCharFilter(r io.Reader, xml bool) *charFilter {
	return &charFilter{r: bufio.NewReaderSize(r, 16<<10), xml: xml}
}

// take returns what was removed since the last take, and forgets it.
func (f *charFilter) take() removed {
	r := f.seen
	f.seen = removed{}
	return r
}

func (f *charFilter) drop(r rune) {
	f.seen.n++
	for _, x := range f.seen.runes {
		if x == r {
			return
		}
	}
	if len(f.seen.runes) < maxNamed {
		f.seen.runes = append(f.seen.runes, r)
	}
}

// ReadByte makes the filter an io.ByteReader, which encoding/xml then reads without a buffer
// of its own: what the filter removed up to now is exactly what the parser has read.
func (f *charFilter) ReadByte() (byte, error) {
	for f.pos >= len(f.out) {
		if f.err != nil {
			return 0, f.err
		}
		f.out, f.pos = f.out[:0], 0
		f.step()
	}
	b := f.out[f.pos]
	f.pos++
	return b, nil
}

func (f *charFilter) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if f.pos >= len(f.out) {
			if f.err != nil || n > 0 && f.r.Buffered() == 0 {
				break
			}
			f.out, f.pos = f.out[:0], 0
			f.step()
			continue
		}
		c := copy(p[n:], f.out[f.pos:])
		n += c
		f.pos += c
	}
	if n == 0 && f.err != nil {
		return 0, f.err
	}
	return n, nil
}

// step reads one character (or one reference, or one markup opening) and puts what is kept in out.
func (f *charFilter) step() {
	b, err := f.r.ReadByte()
	if err != nil {
		f.err = err
		return
	}
	if b >= utf8.RuneSelf {
		f.r.UnreadByte()
		f.multiByte()
		return
	}
	f.bad = false
	if !xmlChar(rune(b)) {
		f.drop(rune(b))
		return
	}
	f.out = append(f.out, b)
	if !f.xml {
		return
	}
	switch f.state {
	case inText:
		switch b {
		case '&':
			f.reference()
		case '<':
			if f.follows("![CDATA[") {
				f.state = inCDATA
			} else if f.follows("!--") {
				f.state = inComment
			}
		}
	case inCDATA:
		if b == ']' && f.follows("]>") {
			f.state = inText
		}
	case inComment:
		if b == '-' && f.follows("->") {
			f.state = inText
		}
	}
}

// follows passes s on when the input goes on with it.
func (f *charFilter) follows(s string) bool {
	p, _ := f.r.Peek(len(s))
	if string(p) != s {
		return false
	}
	f.out = append(f.out, s...)
	f.r.Discard(len(s))
	return true
}

// multiByte reads one character of two or more bytes, or one byte that is not UTF-8.
func (f *charFilter) multiByte() {
	p, _ := f.r.Peek(utf8.UTFMax)
	r, n := utf8.DecodeRune(p)
	if r == utf8.RuneError && n <= 1 {
		f.r.Discard(1)
		f.drop(notUTF8)
		if !f.bad {
			f.out = append(f.out, "\uFFFD"...)
		}
		f.bad = true
		return
	}
	f.bad = false
	if !xmlChar(r) {
		f.r.Discard(n)
		f.drop(r)
		return
	}
	f.out = append(f.out, p[:n]...)
	f.r.Discard(n)
}

// reference looks, after an &, for a numeric character reference to a character XML does
// not allow, and leaves it out (with the & already put in out).
func (f *charFilter) reference() {
	p, _ := f.r.Peek(maxRefLen)
	if len(p) < 3 || p[0] != '#' {
		return
	}
	i, base := 1, 10
	if p[1] == 'x' {
		i, base = 2, 16
	}
	start := i
	v := 0
	for ; i < len(p); i++ {
		d := digit(p[i], base)
		if d < 0 {
			break
		}
		if v <= utf8.MaxRune {
			v = v*base + d
		}
	}
	if i == start || i >= len(p) || p[i] != ';' {
		return // not a whole reference: the parser says what it makes of it
	}
	r := rune(v)
	if v > utf8.MaxRune {
		r = utf8.RuneError
	}
	if v <= utf8.MaxRune && xmlChar(r) {
		return
	}
	f.out = f.out[:len(f.out)-1] // the &
	f.r.Discard(i + 1)
	f.drop(r)
}

func digit(c byte, base int) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case base == 16 && c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case base == 16 && c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// describe names what was removed, for a warning: "U+0007, U+000B and U+001B".
func (r removed) describe() string {
	var names []string
	for _, x := range r.runes {
		if x == notUTF8 {
			names = append(names, "bytes that are not UTF-8")
		} else {
			names = append(names, fmt.Sprintf("%U", x))
		}
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	if len(names) == 1 {
		return names[0]
	}
	return "nothing"
}

// cleanText is data without the characters XML does not allow (an object read with GET is
// stored as one read in a multistatus would be), and what was removed.
func cleanText(data []byte) ([]byte, removed) {
	clean := true
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 || !xmlChar(r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return data, removed{}
	}
	f := newCharFilter(strings.NewReader(string(data)), false)
	out, _ := io.ReadAll(f)
	return out, f.take()
}

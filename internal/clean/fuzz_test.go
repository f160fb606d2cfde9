package clean

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"", "plain", "a\r\nb", "\u202Eexe.pdf", "x\u200By", "👨\u200D👩\u200D👧", "❤\uFE0F",
	"\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F",
	"ok\U000E0049\U000E0067", "می\u200Cخواهم", "क्\u200Dष", "ᠠ\u180Bᠡ", "a\xffb",
	"  a  b  ", "\n\n x \n", "1\uFE0F\u20E3", "<<<mail-text 00 ends>>>",
}

// checkOut fails t if out holds a character that should not survive.
func checkOut(t *testing.T, fn, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%+q) = %+q: invalid UTF-8", fn, in, out)
	}
	rs := []rune(out)
	for i, r := range rs {
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = rs[i-1]
		}
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		ok := true
		switch {
		case r == '\n' || r == '\t':
			ok = fn == "Text"
		case classify(r) == brk || classify(r) == drop:
			ok = false
		case r == zwj:
			ok = (emojiEnd(prev) && isExtPict(next)) || isLetterOrMark(prev)
		case r == zwnj || isMongolianFVS(r):
			ok = isLetterOrMark(prev)
		case r == vs15 || r == vs16:
			ok = isExtPict(prev) || isKeycapBase(prev)
		case isTag(r):
			ok = inTagFlag(rs, i)
		}
		if !ok {
			t.Fatalf("%s(%+q) = %+q keeps U+%04X at rune %d", fn, in, out, r, i)
		}
	}
}

// inTagFlag reports whether rs[i] belongs to one of the three tag flags.
func inTagFlag(rs []rune, i int) bool {
	for start := i - 6; start < i; start++ {
		if start >= 0 && rs[start] == blackFlag {
			if n := subdivisionFlag(rs[start+1:]); n > 0 && i <= start+n {
				return true
			}
		}
	}
	return false
}

func FuzzLine(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Line(in)
		checkOut(t, "Line", in, out)
		if strings.ContainsAny(out, "\r\n") {
			t.Fatalf("Line(%+q) = %+q has a line break", in, out)
		}
		if out != strings.TrimSpace(out) || strings.Contains(out, "  ") {
			t.Fatalf("Line(%+q) = %+q is not trimmed and collapsed", in, out)
		}
		if utf8.RuneCountInString(out) > MaxLine {
			t.Fatalf("Line(%+q) has %d runes", in, utf8.RuneCountInString(out))
		}
		if again := Line(out); again != out {
			t.Fatalf("Line not idempotent: %+q -> %+q -> %+q", in, out, again)
		}
	})
}

func FuzzText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Text(in)
		checkOut(t, "Text", in, out)
		for _, l := range strings.Split(out, "\n") {
			if l != strings.TrimRightFunc(l, unicode.IsSpace) {
				t.Fatalf("Text(%+q) = %+q keeps trailing spaces", in, out)
			}
		}
		if again := Text(out); again != out {
			t.Fatalf("Text not idempotent: %+q -> %+q -> %+q", in, out, again)
		}
		mark := NewMark()
		fr := strings.Split(Frame("mail-text", out, mark), "\n")
		for i, l := range fr[1 : len(fr)-1] {
			if strings.Contains(l, mark) {
				t.Fatalf("body line %d carries the mark", i)
			}
		}
	})
}

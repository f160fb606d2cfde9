// Package clean makes strangers' strings safe to show an agent: invisible and
// control characters out, one line per field, bodies between marker lines no
// message can forge. It never changes visible text, and it never logs what it cleans.
// What happens to each character, and the frame format: docs/packages.md, "internal/clean".
package clean

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLine is the most runes Line returns; a longer value is cut and ends with "…".
const MaxLine = 2000

// Line returns s as a field value on one line: line breaks and tabs become a
// space, invisible and control characters go, runs of spaces collapse, both
// ends are trimmed and the value is cut to MaxLine runes.
func Line(s string) string {
	if plainLine(s) {
		return s
	}
	out := line(s)
	if utf8.RuneCountInString(out) <= MaxLine {
		return out
	}
	rs := []rune(out)[:MaxLine-1]
	// Clean the prefix again: the cut may leave a joiner or a space at its end.
	return line(string(rs)) + "…"
}

// stable applies context until nothing more is removed: dropping one character
// (a selector after a joiner) can leave another (the joiner) without its context.
// Without a character decided by context there is nothing to do.
func stable(rs []rune) []rune {
	if !slices.ContainsFunc(rs, decidedByContext) {
		return rs
	}
	for i := 0; i < 8; i++ {
		next := context(rs)
		if len(next) == len(rs) {
			return next
		}
		rs = next
	}
	return rs
}

// decidedByContext: the characters classify leaves to context.
func decidedByContext(r rune) bool {
	return r >= 0x180B && (r == zwnj || r == zwj || r == vs15 || r == vs16 || isMongolianFVS(r) || isTag(r))
}

func line(s string) string {
	rs := stable(filter(s, false))
	var b strings.Builder
	b.Grow(len(rs))
	space := false
	for _, r := range rs {
		if r == ' ' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// Text returns s as a body: the same characters go as in Line, but line feeds
// and tabs stay (CRLF, CR, VT, FF, NEL, LS and PS become LF), spaces inside a
// line are left alone, spaces at the end of each line and blank lines at the
// start and the end are removed.
func Text(s string) string {
	if plainText(s) {
		return s
	}
	return text(s)
}

func text(s string) string {
	rs := stable(filter(s, true))
	lines := strings.Split(string(rs), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	out := strings.Join(lines, "\n")
	return strings.TrimRight(strings.TrimLeft(out, "\n"), "\n")
}

// filter maps breaks and drops every character whose fate does not depend on
// its neighbours. In text mode breaks become LF and tabs stay; else a space.
func filter(s string, text bool) []rune {
	out := make([]rune, 0, len(s))
	for i, r := range s {
		// Ranging over a string yields U+FFFD for each invalid byte.
		switch classify(r) {
		case keep, decide:
			out = append(out, r)
		case brk:
			switch {
			case !text:
				out = append(out, ' ')
			case r == '\t':
				out = append(out, '\t')
			case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
				// CRLF: the LF that follows makes the line break.
			default:
				out = append(out, '\n')
			}
		}
	}
	return out
}

// context decides the characters that are kept or removed depending on their
// neighbours: joiners, variation selectors and tag characters. It reads the
// previous kept rune and the next candidate, so a second pass decides alike.
func context(rs []rune) []rune {
	out := make([]rune, 0, len(rs))
	script := -1 // joining script of the last letter kept, if only marks followed it
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		prev, next := rune(-1), rune(-1)
		if len(out) > 0 {
			prev = out[len(out)-1]
		}
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == blackFlag:
			if n := subdivisionFlag(rs[i+1:]); n > 0 {
				out = append(out, rs[i:i+1+n]...)
				i += n
			} else {
				out = append(out, r)
			}
			script = -1
			continue
		case isTag(r):
			continue
		case r == zwj || r == zwnj:
			emoji := r == zwj && emojiEnd(prev) && isExtPict(next)
			// In a joining script a joiner sits between two letters, or after a
			// virama at the end of a word (Malayalam chillu, U+0D28 U+0D4D U+200D).
			joining := script >= 0 && isLetterOrMark(prev) &&
				(joiningNext(next) || unicode.Is(unicode.Mn, prev))
			if emoji || joining {
				out = append(out, r)
			}
			continue // script stays: the letter after the joiner sets it anew
		case r == vs15 || r == vs16:
			if isExtPict(prev) || isKeycapBase(prev) {
				out = append(out, r)
			}
			continue
		case isMongolianFVS(r):
			if script == mongolian && unicode.IsLetter(prev) {
				out = append(out, r)
			}
			continue
		}
		out = append(out, r)
		switch {
		case unicode.IsLetter(r):
			script = joiningScript(r)
		case unicode.Is(unicode.M, r):
			// a mark keeps its letter's script
		default:
			script = -1
		}
	}
	return out
}

// emojiEnd reports whether r may end an emoji that a ZWJ continues: a
// pictograph, a skin tone, VS16 or the end of a tag flag.
func emojiEnd(r rune) bool {
	return isExtPict(r) || (r >= 0x1F3FB && r <= 0x1F3FF) || r == vs16 || r == tagEnd
}

func isKeycapBase(r rune) bool {
	return (r >= '0' && r <= '9') || r == '#' || r == '*'
}

func isLetterOrMark(r rune) bool {
	return r >= 0 && (unicode.IsLetter(r) || unicode.Is(unicode.M, r))
}

func joiningNext(r rune) bool {
	if r < 0 {
		return false
	}
	if unicode.Is(unicode.M, r) {
		return true
	}
	return unicode.IsLetter(r) && joiningScript(r) >= 0
}

// subdivisionFlag returns how many tag characters after U+1F3F4 spell one of
// the three flags Unicode recommends (England, Scotland, Wales), or 0.
func subdivisionFlag(rs []rune) int {
	for _, code := range []string{"gbeng", "gbsct", "gbwls"} {
		n := len(code) + 1
		if len(rs) < n || rs[n-1] != tagEnd {
			continue
		}
		ok := true
		for j := 0; j < len(code); j++ {
			if rs[j] != tagBase+rune(code[j]) {
				ok = false
				break
			}
		}
		if ok {
			return n
		}
	}
	return 0
}

// plainLine reports whether Line would return s unchanged because it is short,
// printable ASCII with single spaces inside and none at either end: most fields.
func plainLine(s string) bool {
	if len(s) > MaxLine || s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || (c == ' ' && s[i+1] == ' ') {
			return false
		}
	}
	return true
}

// plainText reports whether Text would return s unchanged: printable ASCII,
// line feeds and tabs, no space or tab before a line feed or at the end, and
// no line feed at either end.
func plainText(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == '\n' || s[len(s)-1] == '\n' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			if s[i-1] == ' ' || s[i-1] == '\t' {
				return false
			}
		case c == '\t':
		case c < 0x20 || c > 0x7e:
			return false
		}
	}
	return true
}

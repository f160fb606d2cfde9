package clean

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// markBytes is the size of a mark in random bytes: 128 bits.
const markBytes = 16

// NewMark returns a fresh mark for one answer: 32 lowercase hex digits drawn
// from crypto/rand, which no message can predict.
func NewMark() string {
	b := make([]byte, markBytes)
	rand.Read(b) // never fails: crypto/rand crashes the program rather than return weak bytes
	return hex.EncodeToString(b)
}

// ValidMark reports whether mark has the form NewMark gives.
func ValidMark(mark string) bool {
	if len(mark) != 2*markBytes {
		return false
	}
	for i := 0; i < len(mark); i++ {
		c := mark[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Frame returns body between two marker lines that carry kind and mark:
//
//	<<<KIND MARK begins>>>
//	body
//	<<<KIND MARK ends>>>
//
// The body goes through Text again (cheap, and Text is idempotent), so every
// body line is cleaned; should the body hold the mark itself (a caller framing
// framed text with the same mark), each copy becomes "[mark]", so the end
// marker appears once, as the last line. Kind keeps ASCII letters, digits and
// "-" (others become "-"; an empty kind becomes "data"). A mark that is not
// NewMark's form is replaced by a fresh one, so a frame is never forgeable.
func Frame(kind, body, mark string) string {
	if !ValidMark(mark) {
		mark = NewMark()
	}
	kind = frameKind(kind)
	body = Text(body)
	body = replaceFold(body, mark, "[mark]")
	var b strings.Builder
	b.Grow(len(body) + 2*(len(kind)+len(mark)+16))
	b.WriteString("<<<" + kind + " " + mark + " begins>>>\n")
	if body != "" {
		b.WriteString(body)
		b.WriteByte('\n')
	}
	b.WriteString("<<<" + kind + " " + mark + " ends>>>")
	return b.String()
}

func frameKind(kind string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(kind) {
		if b.Len() >= 32 {
			break
		}
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "data"
	}
	return b.String()
}

// replaceFold replaces every copy of old in s, in any ASCII case, by repl.
// old is lowercase hex; repl holds no run of hex digits, so no new copy can
// form across a replacement.
func replaceFold(s, old, repl string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+len(old) <= len(s); {
		if asciiFoldEqual(s[i:i+len(old)], old) {
			b.WriteString(s[last:i])
			b.WriteString(repl)
			i += len(old)
			last = i
			continue
		}
		i++
	}
	b.WriteString(s[last:])
	return b.String()
}

func asciiFoldEqual(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

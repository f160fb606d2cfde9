package compose

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on what an agent may send.
const (
	maxAddress = 320     // bytes of one address as given, or of a name or an addr-spec
	maxLocal   = 64      // bytes of a local part (RFC 5321 §4.5.3.1.1)
	maxDomain  = 253     // bytes of a host name
	maxSubject = 998     // bytes of a subject: one header line
	maxBody    = 5 << 20 // bytes of a body
	maxID      = 250     // bytes of a message-id, without brackets
	maxRefs    = 20      // message-ids kept in References
	maxQuoted  = 200     // lines of the original quoted in a reply
)

// FieldError is a refused part of a message. Field names it as the caller knows it ("to[2]",
// "subject", "original.from[0]"); Reason says what is wrong and what to do, in one sentence.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

func refuse(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// badRune reports whether r may not appear in a one-line field (a name, an address, a subject):
// C0 and C1 controls (tab, CR, LF, NUL and U+0085 included), the Unicode line and paragraph
// separators, and the bidirectional embeddings, overrides and isolates.
func badRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == '\u2028', r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// looksEncoded reports whether s holds something a lenient RFC 2047 decoder could take for an
// encoded word: "=?" followed, later, by "?=" with at least two '?' in between. Every real
// encoded word matches, and so does a little more.
func looksEncoded(s string) bool {
	i := strings.Index(s, "=?")
	j := strings.LastIndex(s, "?=")
	return i >= 0 && j >= i+2 && strings.Count(s[i+2:j], "?") >= 2
}

// checkLine refuses what may not stand in a one-line field: invalid UTF-8, a control or line
// break (see badRune), an encoded word.
func checkLine(field, s string) error {
	if !utf8.ValidString(s) {
		return refuse(field, "is not valid UTF-8; send it as UTF-8 text")
	}
	for _, r := range s {
		if badRune(r) {
			return refuse(field, "holds a line break or another control character (%U); send it on one line without control characters", r)
		}
	}
	if looksEncoded(s) {
		return refuse(field, "holds an RFC 2047 encoded word (=?…?=); send the plain text, it is encoded when the message is built")
	}
	return nil
}

// CheckSubject refuses a subject that could not be written as one header safely: control
// characters (tab included) and line breaks of any kind, encoded words, invalid UTF-8, more than
// 998 bytes.
func CheckSubject(s string) error {
	if len(s) > maxSubject {
		return refuse("subject", "is %d bytes long, more than the 998 a header line may hold; shorten it", len(s))
	}
	return checkLine("subject", s)
}

// CheckBody refuses a body with invalid UTF-8, a control character other than tab, LF and CR
// before LF (NUL, a lone CR, form feed, U+0085 …), or more than 5 MB.
func CheckBody(s string) error {
	if len(s) > maxBody {
		return refuse("body", "is %d bytes long, more than the 5 MB a message body may hold; shorten it", len(s))
	}
	if !utf8.ValidString(s) {
		return refuse("body", "is not valid UTF-8; send it as UTF-8 text")
	}
	line := 1
	for i, r := range s {
		switch {
		case r == '\n':
			line++
		case r == '\t':
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
		case r < 0x20, r >= 0x7f && r <= 0x9f:
			return refuse("body", "holds a control character (%U) on line %d; remove it (only tab and line breaks are allowed)", r, line)
		}
	}
	return nil
}

// cleanLine makes a one-line string out of s, taken from a message we did not write: invalid
// bytes become U+FFFD, controls and line breaks become spaces, runs of spaces become one, and
// anything that looks like an encoded word is broken ("=?" becomes "= ?").
func cleanLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if badRune(r) || r == ' ' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	out := b.String()
	if looksEncoded(out) {
		out = strings.ReplaceAll(out, "=?", "= ?")
	}
	return out
}

// cleanText makes a body text out of s, taken from a message we did not write: invalid bytes
// become U+FFFD, line breaks become LF, other controls than tab go.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return -1
		}
		return r
	}, s)
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

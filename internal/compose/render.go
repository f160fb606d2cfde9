package compose

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime/quotedprintable"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	foldAt  = 78  // columns a header line should keep under
	maxLine = 998 // bytes a line may hold, CRLF excluded
	maxWord = 66  // bytes of one encoded word, so "Subject: " and one fits in foldAt
)

// Bytes renders m as an RFC 5322 + MIME message, CRLF line ends: Date, From, To, Cc, Bcc (only
// with withBcc: a draft keeps it, what goes on the wire to be sent does not), Subject,
// Message-ID, In-Reply-To, References, then a text/plain UTF-8 body, 7bit or quoted-printable.
// It checks every field first and returns a [*FieldError] rather than write anything unsafe;
// Date and MessageID must be set.
func (m Message) Bytes(withBcc bool) ([]byte, error) {
	if err := m.check(true); err != nil {
		return nil, err
	}
	var h header
	h.field("Date", m.Date.Format(time.RFC1123Z))
	h.field("From", m.From.tokens()...)
	h.list("To", m.To)
	h.list("Cc", m.Cc)
	if withBcc {
		h.list("Bcc", m.Bcc)
	}
	if m.Subject != "" {
		h.field("Subject", subjectTokens(m.Subject)...)
	}
	h.field("Message-ID", "<"+m.MessageID+">")
	if m.InReplyTo != "" {
		h.field("In-Reply-To", "<"+m.InReplyTo+">")
	}
	if len(m.References) > 0 {
		refs := make([]string, len(m.References))
		for i, id := range m.References {
			refs[i] = "<" + id + ">"
		}
		h.field("References", refs...)
	}
	body, cte := encodeBody(m.Body)
	h.field("MIME-Version", "1.0")
	h.field("Content-Type", "text/plain;", "charset=utf-8")
	h.field("Content-Transfer-Encoding", cte)
	if h.err != nil {
		return nil, h.err
	}
	h.b.WriteString("\r\n")
	h.b.Write(body)
	return h.b.Bytes(), nil
}

// header writes header fields, folding between the tokens it is given (never inside one).
type header struct {
	b   bytes.Buffer
	err error
}

func (h *header) field(name string, tokens ...string) {
	h.b.WriteString(name + ":")
	col := len(name) + 1
	for i, t := range tokens {
		if i > 0 && col+1+len(t) > foldAt {
			h.b.WriteString("\r\n")
			col = 0
		}
		h.b.WriteString(" " + t)
		col += 1 + len(t)
		if col > maxLine && h.err == nil {
			h.err = refuse(strings.ToLower(name), "would need a header line longer than 998 bytes; shorten it")
		}
	}
	h.b.WriteString("\r\n")
}

// list writes an address list header, folding between addresses and inside encoded names.
func (h *header) list(name string, list []Address) {
	if len(list) == 0 {
		return
	}
	var tokens []string
	for i, a := range list {
		t := a.tokens()
		if i < len(list)-1 {
			t[len(t)-1] += ","
		}
		tokens = append(tokens, t...)
	}
	h.field(name, tokens...)
}

// subjectTokens returns the header form of a checked subject: its words when it is printable
// ASCII that survives folding and unfolding unchanged (single spaces, none at either end, no
// "=?", no word too long to fold), encoded words otherwise.
func subjectTokens(s string) []string {
	plain := !strings.HasPrefix(s, " ") && !strings.HasSuffix(s, " ") &&
		!strings.Contains(s, "  ") && !strings.Contains(s, "=?")
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if !plain {
		return encodeWords(s)
	}
	words := strings.Split(s, " ")
	for _, w := range words {
		if len(w) > maxWord {
			return encodeWords(s)
		}
	}
	return words
}

// qSafe reports whether c may stand as itself in a Q-encoded word anywhere, a phrase included
// (RFC 2047 §5 (3)).
func qSafe(c byte) bool {
	return isAlnum(c) || c == '!' || c == '*' || c == '+' || c == '-' || c == '/'
}

// encodeWords returns s as RFC 2047 encoded words of at most maxWord bytes each, never splitting
// a character; Q encoding when it is shorter than B, B otherwise.
func encodeWords(s string) []string {
	q := 0
	for i := 0; i < len(s); i++ {
		if qSafe(s[i]) || s[i] == ' ' {
			q++
		} else {
			q += 3
		}
	}
	b := q > (len(s)+2)/3*4
	prefix := "=?utf-8?q?"
	if b {
		prefix = "=?utf-8?b?"
	}
	room := maxWord - len(prefix) - len("?=")
	size := func(chunk string) int {
		if b {
			return base64.StdEncoding.EncodedLen(len(chunk))
		}
		n := 0
		for i := 0; i < len(chunk); i++ {
			if qSafe(chunk[i]) || chunk[i] == ' ' {
				n++
			} else {
				n += 3
			}
		}
		return n
	}
	encode := func(chunk string) string {
		if b {
			return prefix + base64.StdEncoding.EncodeToString([]byte(chunk)) + "?="
		}
		var w strings.Builder
		w.WriteString(prefix)
		for i := 0; i < len(chunk); i++ {
			switch c := chunk[i]; {
			case c == ' ':
				w.WriteByte('_')
			case qSafe(c):
				w.WriteByte(c)
			default:
				fmt.Fprintf(&w, "=%02X", c)
			}
		}
		w.WriteString("?=")
		return w.String()
	}
	var words []string
	start := 0
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		if i > start && size(s[start:i+n]) > room {
			words = append(words, encode(s[start:i]))
			start = i
		}
		i += n
	}
	if start < len(s) {
		words = append(words, encode(s[start:]))
	}
	return words
}

// canonicalBody returns body as it goes on the wire, before transfer encoding: every line
// break CRLF, and a final one when the body is not empty.
func canonicalBody(body string) string {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return strings.ReplaceAll(body, "\n", "\r\n")
}

// encodeBody returns the transfer-encoded body of a checked text and its encoding: 7bit when
// every line is printable ASCII (tab allowed) of at most 78 bytes without trailing blanks,
// quoted-printable otherwise.
func encodeBody(body string) ([]byte, string) {
	body = canonicalBody(body)
	seven := true
	for _, l := range strings.Split(strings.TrimSuffix(body, "\r\n"), "\r\n") {
		if len(l) > foldAt || strings.HasSuffix(l, " ") || strings.HasSuffix(l, "\t") {
			seven = false
			break
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
				seven = false
				break
			}
		}
	}
	if seven {
		return []byte(body), "7bit"
	}
	var out bytes.Buffer
	w := quotedprintable.NewWriter(&out)
	w.Write([]byte(body)) // writes to a bytes.Buffer do not fail
	w.Close()
	return out.Bytes(), "quoted-printable"
}

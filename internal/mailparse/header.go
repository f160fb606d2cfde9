package mailparse

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// field is one raw header field: the value unfolded but not decoded.
type field struct {
	name  string
	value []byte
}

type fields []field

// get returns the raw value of the first field called name.
func (fs fields) get(name string) ([]byte, bool) {
	for _, f := range fs {
		if strings.EqualFold(f.name, name) {
			return f.value, true
		}
	}
	return nil, false
}

// readLine reads one line including its ending, keeping at most max bytes of it and discarding the
// rest. It returns nil at end of input.
func readLine(br *bufio.Reader, max int) (line []byte, cut bool) {
	for {
		chunk, err := br.ReadSlice('\n')
		if room := max - len(line); room > 0 {
			if len(chunk) > room {
				line = append(line, chunk[:room]...)
				cut = true
			} else {
				line = append(line, chunk...)
			}
		} else if len(chunk) > 0 {
			cut = true
		}
		if err != bufio.ErrBufferFull {
			return line, cut
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

func isWSP(c byte) bool { return c == ' ' || c == '\t' }

func validKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if c < 33 || c > 126 || c == ':' {
			return false
		}
	}
	return true
}

// readHeader reads a header block up to its blank line. A line that is neither a field nor a
// continuation ends the block and is returned in rest, to be read as the start of the body. When
// stop is set (a multipart's "--boundary"), a line starting with it ends the block unread.
func (p *parser) readHeader(br *bufio.Reader, stop []byte) (fs fields, rest []byte) {
	total := 0
	over := false
	first := true
	for {
		if stop != nil {
			if pk, _ := br.Peek(len(stop)); bytes.Equal(pk, stop) {
				if !first {
					p.problem("A part's header runs into the next MIME boundary.")
				}
				return fs, nil
			}
		}
		raw, cut := readLine(br, maxFieldValue)
		if len(raw) == 0 {
			return fs, nil // end of input
		}
		if cut {
			p.problem("A header line is longer than 256 KiB; it was cut.")
		}
		line := trimEOL(raw)
		if len(line) == 0 {
			return fs, nil
		}
		wasFirst := first
		first = false
		total += len(raw)
		if total > maxHeaderBlock {
			if !over {
				p.problem("The header block is larger than 1 MiB; the rest of it was skipped.")
				over = true
			}
			continue
		}
		if isWSP(line[0]) {
			if len(fs) == 0 {
				p.problem("The header block starts with a continuation line; it was skipped.")
				continue
			}
			last := &fs[len(fs)-1]
			v := bytes.TrimRight(bytes.TrimLeft(line, " \t"), " \t")
			if len(v) > 0 && len(last.value)+len(v) < maxFieldValue {
				if len(last.value) > 0 {
					last.value = append(last.value, ' ')
				}
				last.value = append(last.value, v...)
			}
			continue
		}
		i := bytes.IndexByte(line, ':')
		var key []byte
		if i > 0 {
			key = bytes.TrimRight(line[:i], " \t")
		}
		if !validKey(key) {
			if wasFirst && bytes.HasPrefix(line, []byte("From ")) {
				continue // mbox separator line
			}
			p.problem("The header block has no blank line before the body.")
			return fs, append([]byte(nil), raw...)
		}
		v := bytes.TrimSpace(line[i+1:])
		fs = append(fs, field{name: string(key), value: append([]byte(nil), v...)})
	}
}

// bodyReader puts back a line that readHeader took for the start of the body.
func bodyReader(br *bufio.Reader, rest []byte) io.Reader {
	if len(rest) == 0 {
		return br
	}
	return io.MultiReader(bytes.NewReader(rest), br)
}

// text turns a raw header value into UTF-8 without decoding encoded words. Raw 8-bit bytes are read
// as UTF-8 when valid, else in the charset of the entity (or Windows-1252).
func (p *parser) text(name string, raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	cs := p.hdrSet
	if cs == "" {
		cs = "windows-1252"
	}
	s, ok := decodeCharset(cs, raw)
	if !ok {
		s, _ = decodeCharset("windows-1252", raw)
		cs = "windows-1252"
	}
	p.problem("Header %s has raw 8-bit bytes; they were read as %s.", name, cs)
	return s
}

// decodeField returns a header value unfolded and with encoded words decoded.
func (p *parser) decodeField(name string, raw []byte) string {
	return p.decodeWords(name, p.text(name, raw))
}

var encodedWord = regexp.MustCompile(`=\?([^?\s]{1,75})\?([bBqQ])\?([^?\s]*)\?=`)

// decodeWords decodes RFC 2047 encoded words in s. Adjacent encoded words are joined without the
// whitespace between them (and their bytes joined before charset decoding, so a character split
// across two words survives); malformed ones are left as text.
func (p *parser) decodeWords(name, s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	idx := encodedWord.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var out strings.Builder
	var pend []byte
	pendSet := ""
	flush := func() {
		if pendSet == "" {
			return
		}
		t, ok := decodeCharset(pendSet, pend)
		if !ok && p != nil {
			p.problem("Header %s uses unknown charset %q; its bytes were kept as they are.", name, pendSet)
		}
		out.WriteString(t)
		pend, pendSet = pend[:0], ""
	}
	prevEnd, prevWord := 0, false
	for _, m := range idx {
		gap := s[prevEnd:m[0]]
		if !(prevWord && strings.TrimLeft(gap, " \t\r\n") == "") {
			flush()
			out.WriteString(gap)
		}
		cs := strings.ToLower(s[m[2]:m[3]])
		if i := strings.IndexByte(cs, '*'); i >= 0 {
			cs = cs[:i] // RFC 2231 language suffix
		}
		b, ok := decodeWordPayload(s[m[4]:m[5]], s[m[6]:m[7]])
		if !ok || cs == "" {
			flush()
			out.WriteString(s[m[0]:m[1]])
			prevEnd, prevWord = m[1], false
			continue
		}
		if cs != pendSet {
			flush()
			pendSet = cs
		}
		pend = append(pend, b...)
		prevEnd, prevWord = m[1], true
	}
	flush()
	out.WriteString(s[prevEnd:])
	return out.String()
}

func decodeWordPayload(enc, text string) ([]byte, bool) {
	if enc == "b" || enc == "B" {
		if b, err := base64.StdEncoding.DecodeString(text); err == nil {
			return b, true
		}
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(text, "="))
		return b, err == nil
	}
	b := make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '_':
			b = append(b, ' ')
		case c == '=' && i+2 < len(text) && isHex(text[i+1]) && isHex(text[i+2]):
			b = append(b, unhex(text[i+1])<<4|unhex(text[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return b, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// setTopHeaders fills the Message fields that come from the top-level header block.
func (p *parser) setTopHeaders(fs fields) {
	m := p.msg
	p.hdrSet = headerCharset(fs)
	for _, f := range fs {
		m.Headers = append(m.Headers, Header{Name: f.name, Value: p.decodeField(f.name, f.value)})
	}
	seen := map[string]bool{}
	for _, f := range fs {
		key := strings.ToLower(f.name)
		first := !seen[key]
		seen[key] = true
		switch key {
		case "message-id":
			if first {
				if ids := msgIDs(p.text(f.name, f.value)); len(ids) > 0 {
					m.MessageID = ids[0]
				}
			}
		case "in-reply-to":
			if first {
				if ids := msgIDs(p.text(f.name, f.value)); len(ids) > 0 {
					m.InReplyTo = ids[0]
				}
			}
		case "references":
			if first {
				m.References = msgIDs(p.text(f.name, f.value))
			}
		case "subject":
			if first {
				m.Subject = p.decodeField(f.name, f.value)
			}
		case "date":
			if first {
				m.Date = parseDate(p.text(f.name, f.value))
				if m.Date.IsZero() {
					p.problem("The Date header could not be read.")
				}
			}
		case "from":
			m.From = append(m.From, p.addresses(f)...)
		case "sender":
			m.Sender = append(m.Sender, p.addresses(f)...)
		case "reply-to":
			m.ReplyTo = append(m.ReplyTo, p.addresses(f)...)
		case "to":
			m.To = append(m.To, p.addresses(f)...)
		case "cc":
			m.Cc = append(m.Cc, p.addresses(f)...)
		case "bcc":
			m.Bcc = append(m.Bcc, p.addresses(f)...)
		}
	}
}

func (p *parser) addresses(f field) []Address {
	return parseAddressList(p.text(f.name, f.value), func(s string) string { return p.decodeWords(f.name, s) })
}

// headerCharset is the charset parameter of the block's Content-Type, used to read raw 8-bit
// header bytes.
func headerCharset(fs fields) string {
	ct, ok := fs.get("Content-Type")
	if !ok {
		return ""
	}
	_, params := parseParams(string(ct))
	return params["charset"]
}

// msgIDs returns the msg-ids in s without angle brackets. Without any bracket it falls back to
// whitespace-separated tokens that look like ids.
func msgIDs(s string) []string {
	var ids []string
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		if id := strings.TrimSpace(s[i+1 : i+j]); id != "" {
			ids = append(ids, strings.Join(strings.Fields(id), ""))
		}
		s = s[i+j+1:]
	}
	if ids != nil {
		return ids
	}
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '<' || r == '>' }) {
		if strings.Contains(t, "@") {
			ids = append(ids, t)
		}
	}
	return ids
}

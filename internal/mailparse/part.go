package mailparse

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// Part is the content of one attachment, as ReadAttachment found it.
type Part struct {
	Attachment        // its name, type and decoded size, exactly as Parse lists it
	Charset    string // the charset parameter of its Content-Type, "" when none
	Data       []byte // its content, transfer-decoded, at most the limit given
	Truncated  bool   // Data stopped at the limit; Size is the whole size
}

// wanted is the attachment a parse keeps the content of, and where it keeps it.
type wanted struct {
	index int
	limit int64
	part  *Part
}

// ReadAttachment reads a message as Parse does and keeps the content of its attachment n
// (0-based, in the order of Message.Attachments: the attachment the store lists n-th), at most
// limit bytes of it. part is nil when the message has no attachment n. Errors are Parse's.
func ReadAttachment(r io.Reader, n int, limit int64) (m *Message, part *Part, err error) {
	w := &wanted{index: n, limit: max(limit, 0)}
	m, err = parse(r, w)
	if w.part != nil && n < len(m.Attachments) {
		w.part.Attachment = m.Attachments[n] // as sanitize left it
		part = w.part
	}
	return m, part, err
}

// keep reads the content of the wanted attachment and lists it as walk lists every other.
func (p *parser) keep(e entity, dec io.Reader, name string, isMessage bool) {
	w := p.want
	data, _ := io.ReadAll(io.LimitReader(dec, w.limit))
	var rest counter
	_, _ = io.Copy(&rest, dec)
	if isMessage && name == "" {
		// As walk names an attached message: by its subject.
		sub := &parser{msg: &Message{}}
		subFields, _ := sub.readHeader(bufio.NewReader(bytes.NewReader(data)), nil)
		if raw, ok := subFields.get("Subject"); ok {
			sub.hdrSet = headerCharset(subFields)
			name = sub.decodeField("Subject", raw)
		}
	}
	size := int64(len(data)) + int64(rest)
	p.msg.Attachments = append(p.msg.Attachments, Attachment{Name: name, ContentType: e.ctype, Size: size})
	w.part = &Part{Charset: e.params["charset"], Data: data, Truncated: rest > 0}
	p.checkDecoder(dec, name, e.ctype)
}

// TextLike reports whether Part.Text reads an attachment of content type ctype (lower case,
// without parameters, as Attachment.ContentType holds it): text/* (text/html as text,
// text/calendar as written) and attached messages.
func TextLike(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || isMessageType(ctype)
}

func isMessageType(ctype string) bool { return ctype == "message/rfc822" || ctype == "message/global" }

// Text is the attachment's content as text, for a TextLike type: charset-decoded to valid
// UTF-8 with "\n" line ends; HTML converted as a message's HTML body is (hidden text dropped);
// an attached message as its From, To, Cc, Date and Subject lines, a blank line and its body
// text. At most MaxText bytes; truncated says when there was more (or Data was cut).
func (pt *Part) Text() (text string, truncated bool) {
	truncated = pt.Truncated
	switch ct := pt.ContentType; {
	case isMessageType(ct):
		m, _ := Parse(bytes.NewReader(pt.Data))
		text = messageText(m)
		truncated = truncated || m.TextTruncated
	case ct == "text/html":
		cs := pt.Charset
		if vagueCharsets[normCharset(cs)] && !utf8.Valid(pt.Data) {
			if mc := metaCharset(pt.Data); mc != "" {
				cs = mc
			}
		}
		s, _ := decodeCharset(cs, pt.Data)
		var cut bool
		text, cut, _ = htmlToText(s)
		truncated = truncated || cut
	default:
		s, _ := decodeCharset(pt.Charset, pt.Data)
		text = normalizeNewlines(s)
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) > MaxText {
		text = truncateUTF8(text, MaxText)
		truncated = true
	}
	return strings.TrimRight(text, " \t\n"), truncated
}

// messageText writes an attached message as a reader sees it: a few header lines, then its text.
func messageText(m *Message) string {
	var b strings.Builder
	line := func(name, value string) {
		if value != "" {
			b.WriteString(name + ": " + value + "\n")
		}
	}
	line("From", addressLine(m.From))
	line("To", addressLine(m.To))
	line("Cc", addressLine(m.Cc))
	if !m.Date.IsZero() {
		line("Date", m.Date.UTC().Format("2006-01-02 15:04 UTC"))
	}
	line("Subject", m.Subject)
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(m.Text)
	return b.String()
}

func addressLine(as []Address) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		switch {
		case a.Name != "" && a.Email != "":
			parts = append(parts, a.Name+" <"+a.Email+">")
		case a.Email != "":
			parts = append(parts, a.Email)
		default:
			parts = append(parts, a.Name)
		}
	}
	return strings.Join(parts, ", ")
}

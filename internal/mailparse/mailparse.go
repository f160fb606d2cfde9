// Package mailparse reads RFC 5322/MIME messages into what postern stores: decoded headers, body
// text, attachment names/types/sizes. It never fails on malformed input and never holds a whole
// large message in memory.
// Hand-written, not github.com/emersion/go-message (used for charsets only): of 19 malformed
// messages go-message refuses 3 outright and gets the text wrong in 6 more, it refuses any header
// over 1 MiB, and takes 3.1 s on a 250 KiB message nested 4,000 deep. The measurement:
// docs/packages.md, "internal/mailparse".
package mailparse

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Address is one mailbox from an address header.
type Address struct {
	Name  string // display name, decoded
	Email string // local part as written, domain lower-cased
}

// Attachment describes one attached part without its content.
type Attachment struct {
	Name        string
	ContentType string
	Size        int64 // decoded bytes
}

// Header is one header field of the top-level message.
type Header struct {
	Name  string // as written
	Value string // unfolded, RFC 2047 decoded
}

// Message is what Parse could read from one message.
type Message struct {
	MessageID  string   // without angle brackets; "" if absent
	InReplyTo  string   // first msg-id, without brackets
	References []string // msg-ids without brackets, in order
	Subject    string   // decoded, unfolded

	From, Sender, ReplyTo, To, Cc, Bcc []Address

	Date time.Time // zero when absent or unparseable

	Text          string // the body as text (see Parse)
	TextTruncated bool   // Text hit MaxText

	Attachments []Attachment
	Headers     []Header
	Size        int64    // raw bytes read
	Problems    []string // what could not be read; never fatal

	// Invitation is the iTIP request or cancellation the message carries (calendar.go), if any.
	Invitation *Invitation
}

// MaxText is the most body text a Message keeps, in bytes.
const MaxText = 1 << 20

const (
	maxHeaderBlock = 1 << 20   // bytes of one header block that are kept
	maxHTMLInput   = 4 << 20   // bytes of one HTML part that are converted to text
	maxDepth       = 32        // nesting of multiparts
	maxParts       = 10000     // parts in one message
	maxProblems    = 50        // problems kept
	readBufSize    = 32 << 10  // buffer over the caller's reader
	partBufSize    = 8 << 10   // buffer of each multipart level
	maxBoundaryLen = 200       // longer boundaries are not trusted
	maxPreamble    = MaxText   // preamble kept in case the boundary never shows up
	maxAttachments = maxParts  // attachments listed
	maxFieldValue  = 256 << 10 // bytes of one header field value that are kept
)

// Parse reads one message from r. It returns an error only when r itself fails; the Message then
// holds what was read before the failure. Malformed MIME yields a Message with what could be read
// and a sentence per problem in Problems.
//
// Text is the body as text: in multipart/alternative the text/plain part is preferred, else HTML
// converted to text, else the first other text/* part; inline text parts of a multipart/mixed are
// joined. Text is charset-decoded to UTF-8 and transfer-decoded, and keeps at most MaxText bytes.
//
// Attachments are parts with Content-Disposition attachment, non-text parts with a file name,
// non-text parts that are neither inline nor referenced by Content-ID, and attached messages
// (message/rfc822). Their sizes are counted by streaming, never by holding the content.
func Parse(r io.Reader) (*Message, error) { return parse(r, nil) }

// parse is Parse, keeping the content of the attachment want names when want is not nil.
func parse(r io.Reader, want *wanted) (*Message, error) {
	src := &source{r: r}
	br := bufio.NewReaderSize(src, readBufSize)
	p := &parser{msg: &Message{}, want: want}

	fields, rest := p.readHeader(br, nil)
	p.setTopHeaders(fields)
	body := bodyReader(br, rest)
	bt := p.walk(fields, body, 0, "text/plain")
	_, _ = io.Copy(io.Discard, br)

	m := p.msg
	m.Text = strings.TrimRight(bt.text, " \t\r\n")
	m.TextTruncated = bt.truncated
	m.Size = src.n
	sanitize(m)
	if src.err != nil {
		return m, fmt.Errorf("mailparse: reading the message failed after %d bytes; retry or fetch it again: %w", src.n, src.err)
	}
	return m, nil
}

// source counts the bytes read from the caller's reader and remembers its first failure.
type source struct {
	r   io.Reader
	n   int64
	err error
}

func (s *source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, io.EOF
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err != nil && err != io.EOF {
		s.err = err
		err = io.EOF
	}
	return n, err
}

type parser struct {
	msg    *Message
	parts  int
	probs  map[string]bool
	hdrSet string  // charset guessed for raw 8-bit bytes in the current header block
	want   *wanted // the attachment whose content ReadAttachment keeps (part.go); nil for Parse
}

func (p *parser) problem(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if p.probs == nil {
		p.probs = map[string]bool{}
	}
	if p.probs[s] || len(p.msg.Problems) >= maxProblems {
		return
	}
	p.probs[s] = true
	p.msg.Problems = append(p.msg.Problems, s)
}

// sanitize guarantees valid UTF-8 in every string and the MaxText bound.
func sanitize(m *Message) {
	v := func(s string) string {
		if utf8.ValidString(s) {
			return s
		}
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	m.MessageID, m.InReplyTo, m.Subject = v(m.MessageID), v(m.InReplyTo), v(m.Subject)
	for i := range m.References {
		m.References[i] = v(m.References[i])
	}
	for _, l := range [][]Address{m.From, m.Sender, m.ReplyTo, m.To, m.Cc, m.Bcc} {
		for i := range l {
			l[i].Name, l[i].Email = v(l[i].Name), v(l[i].Email)
		}
	}
	m.Text = v(m.Text)
	if len(m.Text) > MaxText {
		m.Text = truncateUTF8(m.Text, MaxText)
		m.TextTruncated = true
	}
	for i := range m.Attachments {
		a := &m.Attachments[i]
		a.Name, a.ContentType = v(a.Name), v(a.ContentType)
	}
	for i := range m.Headers {
		h := &m.Headers[i]
		h.Name, h.Value = v(h.Name), v(h.Value)
	}
	for i := range m.Problems {
		m.Problems[i] = v(m.Problems[i])
	}
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

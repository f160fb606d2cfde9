package compose

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"unicode/utf8"
)

// An iMIP message (RFC 6047) carries an iCalendar object beside its text: this file writes
// it as a multipart/alternative of the text (text/plain) and the object
// (text/calendar; method=…), the header fields as [Message.Bytes] writes them.

// CalendarMessage is a Message whose text goes with an iCalendar part.
type CalendarMessage struct {
	Message
	Method   string // the iTIP method: REPLY, REQUEST, CANCEL… (upper-case letters)
	Calendar string // the iCalendar object, CRLF line ends, its lines folded
}

// Normalized is Message.Normalized with the method and the iCalendar object, for hashing.
func (c CalendarMessage) Normalized() any {
	return struct {
		Message  any    `json:"message"`
		Method   string `json:"method"`
		Calendar string `json:"calendar"`
	}{c.Message.Normalized(), c.Method, c.Calendar}
}

// Bytes renders c as [Message.Bytes] renders its Message, the body being a
// multipart/alternative of the text and the iCalendar part.
func (c CalendarMessage) Bytes(withBcc bool) ([]byte, error) {
	if c.Method == "" || strings.TrimLeft(c.Method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
		return nil, refuse("method", "is not an iTIP method such as REPLY; give one in upper case")
	}
	if err := checkCalendar(c.Calendar); err != nil {
		return nil, err
	}
	head, err := c.Message.Bytes(withBcc)
	if err != nil {
		return nil, err
	}
	// Bytes ends its header with the MIME fields of a text/plain body: the fields before
	// them are kept, and the body's are written anew.
	i := bytes.Index(head, []byte("\r\nMIME-Version: 1.0\r\n"))
	if i < 0 {
		return nil, errors.New("compose: the header has no MIME-Version field")
	}
	text, textCTE := encodeBody(c.Body)
	cal, calCTE := encodeBody(c.Calendar)
	boundary := ""
	for boundary == "" || bytes.Contains(text, []byte(boundary)) || bytes.Contains(cal, []byte(boundary)) {
		boundary = "=_" + rand.Text()
	}
	var b bytes.Buffer
	b.Write(head[:i+2])
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/alternative;\r\n boundary=\"" + boundary + "\"\r\n\r\n")
	b.WriteString("--" + boundary + "\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: " + textCTE + "\r\n\r\n")
	b.Write(text)
	b.WriteString("--" + boundary + "\r\n")
	b.WriteString("Content-Type: text/calendar; charset=utf-8; method=" + c.Method + "\r\nContent-Transfer-Encoding: " + calCTE + "\r\n\r\n")
	b.Write(cal)
	b.WriteString("--" + boundary + "--\r\n")
	return b.Bytes(), nil
}

// checkCalendar refuses an iCalendar object that could not be carried as it is: not UTF-8,
// or holding a control character other than tab and CR LF.
func checkCalendar(s string) error {
	if !utf8.ValidString(s) {
		return refuse("calendar", "is not valid UTF-8")
	}
	if !strings.HasPrefix(s, "BEGIN:VCALENDAR\r\n") {
		return refuse("calendar", "does not begin with BEGIN:VCALENDAR and CR LF")
	}
	for i, r := range s {
		switch {
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n', r == '\n' && i > 0 && s[i-1] == '\r', r == '\t':
		case r < 0x20, r >= 0x7f && r <= 0x9f:
			return refuse("calendar", "holds a control character (%U)", r)
		}
	}
	return nil
}

// CleanLine makes a one-line string that a message may carry (in a subject or a line of
// text) out of s, taken from a message or an event we did not write: controls and line
// breaks become spaces, runs of spaces one, encoded words are broken, at most n bytes.
func CleanLine(s string, n int) string {
	return strings.TrimSpace(truncate(cleanLine(s), n))
}

package mailparse

import (
	"io"
	"strings"
)

// An iTIP message (RFC 6047) carries its invitation in a text/calendar part: inline (often
// the last alternative, after the text and the HTML) or attached (invite.ics, sometimes as
// application/ics). Parse keeps the first such part whose METHOD is REQUEST or CANCEL, so
// that the store can mark the message and show the event; the iCalendar text is read by
// internal/calendar, never here. An attached message's parts are not looked at: a forwarded
// invitation is not the person's.

// MaxCalendar is the most bytes of an invitation's iCalendar text a Message keeps.
const MaxCalendar = 1 << 20

// Invitation is the iTIP request or cancellation a message carries.
type Invitation struct {
	Method    string // "REQUEST" or "CANCEL"
	UID       string // the UID of its first VEVENT ("" when it has none)
	Calendar  string // the iCalendar text, charset-decoded, valid UTF-8, at most MaxCalendar bytes
	Truncated bool   // the part was longer than MaxCalendar
}

// isCalendarPart: a part that holds iCalendar text.
func isCalendarPart(ctype, name string) bool {
	switch ctype {
	case "text/calendar", "application/ics":
		return true
	case "application/octet-stream":
		return strings.HasSuffix(strings.ToLower(name), ".ics")
	}
	return false
}

// keepCalendar reads an attached calendar part whole (its first MaxCalendar bytes kept),
// notes it as an invitation when it is one, and returns its decoded size.
func (p *parser) keepCalendar(e entity, dec io.Reader) int64 {
	raw, _ := io.ReadAll(io.LimitReader(dec, MaxCalendar))
	var rest counter
	_, _ = io.Copy(&rest, dec)
	p.noteCalendar(e, raw, rest > 0)
	return int64(len(raw)) + int64(rest)
}

// noteCalendar keeps raw, the content of a calendar part, as the message's invitation when
// it is the first with METHOD REQUEST or CANCEL (the METHOD property, else the Content-Type's
// method parameter).
func (p *parser) noteCalendar(e entity, raw []byte, cut bool) {
	if p.msg.Invitation != nil || len(raw) == 0 {
		return
	}
	text, _ := decodeCharset(e.params["charset"], raw)
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) > MaxCalendar {
		text, cut = truncateUTF8(text, MaxCalendar), true
	}
	method, uid := calendarMethod(text)
	if method == "" {
		method = strings.ToUpper(strings.TrimSpace(e.params["method"]))
	}
	if method != "REQUEST" && method != "CANCEL" {
		return
	}
	p.msg.Invitation = &Invitation{Method: method, UID: uid, Calendar: text, Truncated: cut}
}

// calendarMethod reads the METHOD of an iCalendar text (upper case) and the UID of its first
// VEVENT, from its unfolded content lines.
func calendarMethod(text string) (method, uid string) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	inEvent := false
	value := func(i int) string {
		v := lines[i]
		for j := i + 1; j < len(lines) && len(lines[j]) > 0 && (lines[j][0] == ' ' || lines[j][0] == '\t'); j++ {
			v += lines[j][1:]
		}
		if k := strings.IndexByte(v, ':'); k >= 0 {
			return strings.TrimSpace(v[k+1:])
		}
		return ""
	}
	for i, l := range lines {
		if l == "" || l[0] == ' ' || l[0] == '\t' {
			continue
		}
		name := l
		if k := strings.IndexAny(name, ";:"); k >= 0 {
			name = name[:k]
		}
		switch n := strings.ToUpper(strings.TrimSpace(name)); {
		case n == "METHOD" && method == "" && !inEvent:
			method = strings.ToUpper(value(i))
		case n == "BEGIN" && strings.EqualFold(value(i), "VEVENT"):
			inEvent = true
		case n == "END" && strings.EqualFold(value(i), "VEVENT"):
			inEvent = false
		case n == "UID" && inEvent && uid == "":
			uid = value(i)
		}
	}
	return method, uid
}

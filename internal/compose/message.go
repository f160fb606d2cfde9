package compose

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is an outgoing message. Build it with [Reply], [Forward] or by hand from parts that
// went through [ParseAddress], [CheckSubject] and [CheckBody]; [Message.Bytes] checks it again.
type Message struct {
	From        Address
	To, Cc, Bcc []Address
	Subject     string
	InReplyTo   string   // message-id without brackets
	References  []string // without brackets, oldest first
	Body        string   // plain text, UTF-8
	Date        time.Time
	MessageID   string // without brackets; set by the caller with NewMessageID

	// ownEnd is where the agent's own text ends in Body, when Reply or Forward appended a quote
	// or a forwarded message after it; quoted tells ownEnd is set.
	ownEnd int
	quoted bool
}

// Recipients returns every envelope recipient (To, Cc, then Bcc) as bare addresses, each once
// (case ignored), in that order.
func (m Message) Recipients() []string {
	out := []string{}
	seen := map[string]bool{}
	for _, list := range [][]Address{m.To, m.Cc, m.Bcc} {
		for _, a := range list {
			if k := key(a.Addr); !seen[k] {
				seen[k] = true
				out = append(out, a.Addr)
			}
		}
	}
	return out
}

// NewMessageID returns a fresh message-id without brackets: 130 random bits from crypto/rand in
// base32, "@", and the domain of from (or "postern.invalid" when that domain cannot stand in a
// message-id, as a UTF-8 one cannot).
func NewMessageID(from Address) string {
	domain := from.Addr[strings.LastIndexByte(from.Addr, '@')+1:]
	id := rand.Text() + "@" + domain
	if domain == "" || !validID(id) {
		id = rand.Text() + "@postern.invalid"
	}
	return id
}

// validID reports whether id (without brackets) is a plain msg-id: left@right, the left of
// atext and dots, the right of atext and dots or a [literal], printable ASCII, at most 250 bytes.
func validID(id string) bool {
	at := strings.LastIndexByte(id, '@')
	if at <= 0 || at == len(id)-1 || len(id) > maxID {
		return false
	}
	left, right := id[:at], id[at+1:]
	for i := 0; i < len(left); i++ {
		if !isAtext(left[i]) && left[i] != '.' {
			return false
		}
	}
	if right[0] == '[' {
		if len(right) < 3 || right[len(right)-1] != ']' {
			return false
		}
		for i := 1; i < len(right)-1; i++ {
			if c := right[i]; c < 0x21 || c > 0x7e || c == '[' || c == ']' || c == '\\' {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(right); i++ {
		if !isAtext(right[i]) && right[i] != '.' {
			return false
		}
	}
	return true
}

// cleanID returns id without surrounding space and brackets if it is a plain msg-id, "" if not.
func cleanID(id string) string {
	id = strings.TrimSpace(id)
	id = strings.TrimPrefix(id, "<")
	id = strings.TrimSuffix(id, ">")
	if !validID(id) {
		return ""
	}
	return id
}

// check refuses a Message that could not be written safely. With full set, Date and MessageID
// must be set too (Bytes); Reply and Forward leave them to the caller.
func (m Message) check(full bool) error {
	if err := m.From.check("from"); err != nil {
		return err
	}
	for _, l := range []struct {
		field string
		list  []Address
	}{{"to", m.To}, {"cc", m.Cc}, {"bcc", m.Bcc}} {
		for i, a := range l.list {
			if err := a.check(fmt.Sprintf("%s[%d]", l.field, i)); err != nil {
				return err
			}
		}
	}
	if len(m.To)+len(m.Cc)+len(m.Bcc) == 0 {
		return refuse("to", "is empty, and so are cc and bcc; give at least one recipient")
	}
	if err := CheckSubject(m.Subject); err != nil {
		return err
	}
	if err := CheckBody(m.Body); err != nil {
		return err
	}
	if m.InReplyTo != "" && !validID(m.InReplyTo) {
		return refuse("in_reply_to", "is not a plain message-id (left@right, without brackets or spaces); leave it empty or give the original's id")
	}
	for i, id := range m.References {
		if !validID(id) {
			return refuse(fmt.Sprintf("references[%d]", i), "is not a plain message-id (left@right, without brackets or spaces); leave it out")
		}
	}
	if !full {
		return nil
	}
	if y := m.Date.Year(); m.Date.IsZero() || y < 1900 || y > 9999 {
		return refuse("date", "is not set or not between the years 1900 and 9999; set it to the time of writing")
	}
	if !validID(m.MessageID) {
		return refuse("message_id", "is not set or not a plain message-id; set it with NewMessageID")
	}
	return nil
}

// Preview is what a person is shown before a message is saved or sent.
type Preview struct {
	From       []string `json:"from"`
	To         []string `json:"to"`
	Cc         []string `json:"cc"`
	Bcc        []string `json:"bcc"`
	Subject    string   `json:"subject"`
	InReplyTo  string   `json:"in_reply_to,omitempty"`
	BodyLength int      `json:"body_length"` // bytes of Body
	BodyLines  []string `json:"body_lines"`  // the first 8 lines of the agent's own text, each cut at 200 characters
	Digest     string   `json:"digest"`      // "sha256:" and the hex SHA-256 of Body exactly as it is
}

// Preview returns what a person should see of m before it is saved or sent. Addresses are shown
// as a person reads them (UTF-8 names, quoted when they hold specials); the body lines are
// those of the agent's own text, without the quote or forwarded message Reply or Forward added.
func (m Message) Preview() Preview {
	p := Preview{
		From:       []string{m.From.display()},
		To:         displayAll(m.To),
		Cc:         displayAll(m.Cc),
		Bcc:        displayAll(m.Bcc),
		Subject:    m.Subject,
		InReplyTo:  m.InReplyTo,
		BodyLength: len(m.Body),
		BodyLines:  []string{},
	}
	sum := sha256.Sum256([]byte(m.Body))
	p.Digest = "sha256:" + hex.EncodeToString(sum[:])
	own := m.Body
	if m.quoted && m.ownEnd <= len(m.Body) {
		own = m.Body[:m.ownEnd]
	}
	p.BodyLines = FirstLines(own)
	return p
}

// FirstLines is what a preview shows of a text: its first 8 lines, each cut at
// 200 characters, without the line ends; none for an empty text.
func FirstLines(text string) []string {
	out := []string{}
	text = strings.TrimRight(text, "\r\n")
	if text == "" {
		return out
	}
	lines := strings.SplitN(text, "\n", 9)
	for _, l := range lines[:min(8, len(lines))] {
		l = strings.TrimSuffix(l, "\r")
		if utf8.RuneCountInString(l) > 200 {
			l = string([]rune(l)[:200])
		}
		out = append(out, l)
	}
	return out
}

func displayAll(list []Address) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.display())
	}
	return out
}

// action is every field of a Message that defines what it does, for hashing.
type action struct {
	From       Address   `json:"from"`
	To         []Address `json:"to"`
	Cc         []Address `json:"cc"`
	Bcc        []Address `json:"bcc"`
	Subject    string    `json:"subject"`
	InReplyTo  string    `json:"in_reply_to"`
	References []string  `json:"references"`
	Body       string    `json:"body"`
}

// Normalized returns every field of m that defines the action (all but Date and MessageID) as a
// value whose JSON encoding is deterministic: empty lists are [] whether nil or not.
func (m Message) Normalized() any {
	orEmpty := func(l []Address) []Address {
		if l == nil {
			return []Address{}
		}
		return l
	}
	refs := m.References
	if refs == nil {
		refs = []string{}
	}
	return action{
		From: m.From, To: orEmpty(m.To), Cc: orEmpty(m.Cc), Bcc: orEmpty(m.Bcc),
		Subject: m.Subject, InReplyTo: m.InReplyTo, References: refs, Body: m.Body,
	}
}

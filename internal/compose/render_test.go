package compose

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-message/textproto"
)

// readWire reads raw as a mail reader would, after checking it has CRLF line ends only and no
// line over 998 bytes. It returns the message, the header field names in order (as go-message
// reads them) and the body decoded from its transfer encoding.
func readWire(t testing.TB, raw []byte) (*mail.Message, []string, string) {
	t.Helper()
	if bare := bytes.ReplaceAll(raw, []byte("\r\n"), nil); bytes.ContainsAny(bare, "\r\n") {
		t.Fatalf("bare CR or LF in\n%q", raw)
	}
	for _, l := range bytes.Split(raw, []byte("\r\n")) {
		if len(l) > 998 {
			t.Fatalf("line of %d bytes: %.80q…", len(l), l)
		}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("net/mail cannot read the message: %v\n%q", err, raw)
	}
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("go-message cannot read the header: %v", err)
	}
	var names []string
	for f := h.Fields(); f.Next(); {
		names = append(names, f.Key())
	}
	var body []byte
	switch cte := msg.Header.Get("Content-Transfer-Encoding"); cte {
	case "7bit":
		body, err = io.ReadAll(msg.Body)
	case "quoted-printable":
		body, err = io.ReadAll(quotedprintable.NewReader(msg.Body))
	default:
		t.Fatalf("Content-Transfer-Encoding %q", cte)
	}
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return msg, names, string(body)
}

// headerLines returns the lines of raw's header, folded ones separate.
func headerLines(raw []byte) []string {
	head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
	return strings.Split(head, "\r\n")
}

func decodeHeader(t testing.TB, v string) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		t.Fatalf("decoding %q: %v", v, err)
	}
	return s
}

func sampleMessage() Message {
	return Message{
		From:       Address{"Zoë Durand", "zoe@example.fr"},
		To:         []Address{{"Smith, Bob", "bob@example.com"}, {"", "carol@example.org"}},
		Cc:         []Address{{"山田太郎", "taro@example.jp"}},
		Bcc:        []Address{{"", "secret@example.net"}},
		Subject:    "Réunion de jeudi : ordre du jour, salle, horaires et tout ce qu'il faut savoir avant d'y aller",
		InReplyTo:  "m3@a.example",
		References: []string{"m1@a.example", "m2@b.example", "m3@a.example"},
		Body:       "Bonjour,\n\nune ligne avec un espace final \nune très longue ligne " + strings.Repeat("abcdéfghij ", 120) + "\r\n= égal\n",
		Date:       when,
		MessageID:  "ABC123@example.fr",
	}
}

func TestBytes(t *testing.T) {
	m := sampleMessage()
	for _, withBcc := range []bool{false, true} {
		raw, err := m.Bytes(withBcc)
		if err != nil {
			t.Fatal(err)
		}
		msg, names, body := readWire(t, raw)
		want := []string{"Date", "From", "To", "Cc", "Subject", "Message-Id", "In-Reply-To", "References", "Mime-Version", "Content-Type", "Content-Transfer-Encoding"}
		if withBcc {
			want = slices.Insert(want, 4, "Bcc")
		}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("withBcc=%v: header fields %v, want %v", withBcc, names, want)
		}
		if !withBcc && bytes.Contains(raw, []byte("secret")) {
			t.Errorf("the Bcc address is in the message sent")
		}
		check := func(field string, want []Address) {
			got, err := msg.Header.AddressList(field)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %v, want %v", field, got, want)
			}
			for i := range got {
				if got[i].Name != want[i].Name || got[i].Address != want[i].Addr {
					t.Errorf("%s[%d] = %q <%s>, want %q <%s>", field, i, got[i].Name, got[i].Address, want[i].Name, want[i].Addr)
				}
			}
		}
		check("From", []Address{m.From})
		check("To", m.To)
		check("Cc", m.Cc)
		if withBcc {
			check("Bcc", m.Bcc)
		}
		if s := decodeHeader(t, msg.Header.Get("Subject")); s != m.Subject {
			t.Errorf("Subject reads %q, want %q", s, m.Subject)
		}
		if d, err := msg.Header.Date(); err != nil || !d.Equal(m.Date) {
			t.Errorf("Date reads %v, %v; want %v", d, err, m.Date)
		}
		for h, want := range map[string]string{
			"Message-Id":   "<ABC123@example.fr>",
			"In-Reply-To":  "<m3@a.example>",
			"References":   "<m1@a.example> <m2@b.example> <m3@a.example>",
			"Mime-Version": "1.0",
			"Content-Type": "text/plain; charset=utf-8",
		} {
			if got := msg.Header.Get(h); got != want {
				t.Errorf("%s = %q, want %q", h, got, want)
			}
		}
		if msg.Header.Get("Content-Transfer-Encoding") != "quoted-printable" {
			t.Errorf("a body with non-ASCII and long lines should be quoted-printable")
		}
		if body != canonicalBody(m.Body) {
			t.Errorf("body decodes to\n%q\nwant\n%q", body, canonicalBody(m.Body))
		}
		for _, l := range headerLines(raw) {
			if len(l) > 78 {
				t.Errorf("header line of %d bytes, want folding under 78: %q", len(l), l)
			}
		}
	}
}

func TestBytesPlain(t *testing.T) {
	m := Message{
		From:      Address{"Bob", "bob@example.com"},
		To:        []Address{{"", "alice@example.com"}},
		Subject:   "A plain subject that goes on long enough that it has to be folded over two lines at least",
		Body:      "Hi Alice,\n\nsee you at noon.\n\n-- \nBob",
		Date:      when,
		MessageID: "x1@example.com",
	}
	raw, err := m.Bytes(false)
	if err != nil {
		t.Fatal(err)
	}
	msg, _, body := readWire(t, raw)
	if cte := msg.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
		// "-- " has a trailing space, which 7bit transports may strip.
		t.Errorf("Content-Transfer-Encoding %q, want quoted-printable for a trailing space", cte)
	}
	if body != canonicalBody(m.Body) {
		t.Errorf("body %q", body)
	}
	m.Body = "Hi Alice,\r\n\r\nsee you at noon.\n"
	raw, _ = m.Bytes(false)
	msg, _, body = readWire(t, raw)
	if msg.Header.Get("Content-Transfer-Encoding") != "7bit" || body != "Hi Alice,\r\n\r\nsee you at noon.\r\n" {
		t.Errorf("short ASCII body: %s, %q", msg.Header.Get("Content-Transfer-Encoding"), body)
	}
	if got := msg.Header.Get("Subject"); got != m.Subject || strings.Contains(string(raw), "=?") {
		t.Errorf("plain ASCII subject should stay plain: %q", got)
	}
	lines := headerLines(raw)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, " ") }) {
		t.Errorf("the long subject was not folded:\n%s", strings.Join(lines, "\n"))
	}

	// Subjects that would not survive folding as they are go as encoded words.
	for _, s := range []string{" leading space", "trailing space ", "two  spaces", strings.Repeat("x", 200), "2+2=? yes", "café"} {
		m.Subject = s
		raw, err := m.Bytes(false)
		if err != nil {
			t.Fatal(err)
		}
		msg, _, _ := readWire(t, raw)
		if got := decodeHeader(t, msg.Header.Get("Subject")); got != s {
			t.Errorf("Subject %q reads back %q", s, got)
		}
		for _, l := range headerLines(raw) {
			if len(l) > 78 {
				t.Errorf("Subject %q: header line of %d bytes", s, len(l))
			}
		}
	}
}

func TestBytesRefuses(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*Message)
	}{
		{"subject", func(m *Message) { m.Subject = "Hi\r\nBcc: eve@evil.example" }},
		{"subject", func(m *Message) { m.Subject = "Hi\nBcc: eve@evil.example" }},
		{"subject", func(m *Message) { m.Subject = "=?utf-8?q?a=0D=0ABcc:_x@evil?=" }},
		{"from", func(m *Message) { m.From.Name = "Zoë\r\nBcc: eve@evil.example" }},
		{"from", func(m *Message) { m.From.Addr = "" }},
		{"to[1]", func(m *Message) { m.To[1].Addr = "carol@example.org>\r\nBcc: <eve@evil.example" }},
		{"to[1]", func(m *Message) { m.To[1].Addr = "carol@example.org, eve@evil.example" }},
		{"to[0]", func(m *Message) { m.To[0].Name = "eve@evil.example" }},
		{"cc[0]", func(m *Message) { m.Cc[0].Name = "=?utf-8?b?ZXZlQGV2aWw=?=" }},
		{"bcc[0]", func(m *Message) { m.Bcc[0].Addr = "secret@example.net\u2028" }},
		{"to", func(m *Message) { m.To, m.Cc, m.Bcc = nil, nil, nil }},
		{"in_reply_to", func(m *Message) { m.InReplyTo = "m3@a.example>\r\nBcc: <eve@evil.example" }},
		{"references[1]", func(m *Message) { m.References[1] = "m2@b.example> <eve@evil" }},
		{"message_id", func(m *Message) { m.MessageID = "" }},
		{"message_id", func(m *Message) { m.MessageID = "<x@y>" }},
		{"date", func(m *Message) { m.Date = m.Date.AddDate(-2000, 0, 0) }},
		{"body", func(m *Message) { m.Body = "a\x00b" }},
	} {
		m := sampleMessage()
		m.To = slices.Clone(m.To)
		m.References = slices.Clone(m.References)
		tc.edit(&m)
		for _, withBcc := range []bool{false, true} {
			raw, err := m.Bytes(withBcc)
			if err == nil || raw != nil || !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Errorf("%s: Bytes = %d bytes, %v; want an error naming %s", tc.field, len(raw), err, tc.field)
			}
		}
	}
}

func TestRecipients(t *testing.T) {
	m := sampleMessage()
	m.Cc = append(m.Cc, Address{"", "BOB@example.com"})
	m.Bcc = append(m.Bcc, Address{"", "Carol@Example.org"})
	want := []string{"bob@example.com", "carol@example.org", "taro@example.jp", "secret@example.net"}
	if got := m.Recipients(); !reflect.DeepEqual(got, want) {
		t.Errorf("Recipients = %v, want %v", got, want)
	}
}

func TestNewMessageID(t *testing.T) {
	a := NewMessageID(Address{"Bob", "bob@example.com"})
	b := NewMessageID(Address{"Bob", "bob@example.com"})
	if a == b || !strings.HasSuffix(a, "@example.com") || len(a) < 26+len("@example.com") || !validID(a) {
		t.Errorf("NewMessageID = %q, %q; want two different valid ids at example.com", a, b)
	}
	if id := NewMessageID(Address{"", "taro@例え.jp"}); !strings.HasSuffix(id, "@postern.invalid") || !validID(id) {
		t.Errorf("NewMessageID for a UTF-8 domain = %q", id)
	}
	if id := NewMessageID(Address{}); !validID(id) {
		t.Errorf("NewMessageID for no address = %q", id)
	}
}

func TestPreview(t *testing.T) {
	m := sampleMessage()
	m.Body = strings.Repeat("é", 250) + "\r\n" + strings.Repeat("line\n", 20)
	p := m.Preview()
	if !reflect.DeepEqual(p.From, []string{"Zoë Durand <zoe@example.fr>"}) ||
		!reflect.DeepEqual(p.To, []string{`"Smith, Bob" <bob@example.com>`, "carol@example.org"}) ||
		!reflect.DeepEqual(p.Cc, []string{"山田太郎 <taro@example.jp>"}) ||
		!reflect.DeepEqual(p.Bcc, []string{"secret@example.net"}) {
		t.Errorf("Preview addresses %q %q %q %q", p.From, p.To, p.Cc, p.Bcc)
	}
	if len(p.BodyLines) != 8 || p.BodyLines[0] != strings.Repeat("é", 200) || p.BodyLines[7] != "line" {
		t.Errorf("Preview lines %q", p.BodyLines)
	}
	if p.BodyLength != len(m.Body) || p.Digest != "sha256:"+sha256hex(m.Body) {
		t.Errorf("Preview length %d, digest %s", p.BodyLength, p.Digest)
	}
	m.Body = "x"
	if p2 := m.Preview(); p2.Digest == p.Digest {
		t.Errorf("digest does not change with the body")
	}
}

func TestNormalized(t *testing.T) {
	m := Message{From: Address{"", "a@example.com"}, To: []Address{{"", "b@example.com"}}, Body: "x"}
	j := func(m Message) string {
		b, err := json.Marshal(m.Normalized())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	base := j(m)
	same := m
	same.Cc, same.References = []Address{}, []string{}
	same.Date, same.MessageID = when, "x@example.com"
	if j(same) != base {
		t.Errorf("Normalized changes with empty lists, Date or MessageID:\n%s\n%s", base, j(same))
	}
	for _, edit := range []func(*Message){
		func(m *Message) { m.Bcc = []Address{{"", "c@example.com"}} },
		func(m *Message) { m.To[0].Name = "B" },
		func(m *Message) { m.Subject = "s" },
		func(m *Message) { m.InReplyTo = "i@example.com" },
		func(m *Message) { m.References = []string{"i@example.com"} },
		func(m *Message) { m.Body = "y" },
		func(m *Message) { m.From.Addr = "z@example.com" },
	} {
		other := m
		other.To = slices.Clone(m.To)
		edit(&other)
		if j(other) == base {
			t.Errorf("Normalized does not change with %s", j(other))
		}
	}
}

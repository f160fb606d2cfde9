package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"net/mail"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// nasty are strings that have been used, or could be, to smuggle a header or a recipient.
var nasty = []string{
	"",
	" ",
	"Bob",
	"Zoë Durand",
	"Smith, Bob",
	"Bob\r\nBcc: eve@evil.example",
	"Bob\nBcc: eve@evil.example",
	"Bob\rBcc: eve@evil.example",
	"Bob\x00",
	"Bob\u0085Bcc: eve@evil.example",
	"Bob\u2028Bcc: eve@evil.example",
	"Bob\u2029",
	"=?utf-8?q?a=0D=0ABcc:_x@evil?=",
	"=?utf-8?b?DQpCY2M6IGV2ZUBldmlsLmV4YW1wbGU=?=",
	"Bob <bob@x.com>, eve@evil.com",
	"eve@evil.com <bob@x.com>",
	`"bob@x.com" <eve@evil.com>`,
	"friends: a@b.example, c@d.example;",
	"a;b",
	`a"b\c`,
	"\u202eevil",
	strings.Repeat("é", 400),
	strings.Repeat("word ", 250),
	"\xff\xfe",
	"line\n\n\tindented\r\nCRLF\n.\nFrom here\n-- \n",
}

// FuzzBytes builds a message with random name, subject and body: Bytes either refuses it, when
// and only when one of the checks would, or writes a message whose header holds exactly the
// expected fields and recipients, and whose every part reads back to what was given.
func FuzzBytes(f *testing.F) {
	for _, s := range nasty {
		f.Add(s, s, s, false)
		f.Add("Bob", s, "body", true)
		f.Add(s, "subject", "body", false)
	}
	f.Fuzz(func(t *testing.T, name, subject, body string, withBcc bool) {
		m := Message{
			From:       Address{name, "me@example.com"},
			To:         []Address{{name, "bob@example.org"}, {"", "carol@example.net"}},
			Cc:         []Address{{name, "dave@example.com"}},
			Bcc:        []Address{{"Hidden", "hidden@example.com"}},
			Subject:    subject,
			InReplyTo:  "parent@example.org",
			References: []string{"root@example.org", "parent@example.org"},
			Body:       body,
			Date:       when,
			MessageID:  "id1@example.com",
		}
		raw, err := m.Bytes(withBcc)
		refused := checkName("from", name) != nil || CheckSubject(subject) != nil || CheckBody(body) != nil
		if err != nil {
			if !refused {
				t.Fatalf("Bytes refused a message every check accepts: %v", err)
			}
			if raw != nil {
				t.Fatalf("Bytes returned bytes with an error")
			}
			return
		}
		if refused {
			t.Fatalf("Bytes accepted what a check refuses: name %q, subject %q", name, subject)
		}
		msg, names, gotBody := readWire(t, raw)
		want := []string{"Date", "From", "To", "Cc", "Subject", "Message-Id", "In-Reply-To", "References", "Mime-Version", "Content-Type", "Content-Transfer-Encoding"}
		if withBcc {
			want = slices.Insert(want, 4, "Bcc")
		}
		if subject == "" {
			want = slices.DeleteFunc(want, func(s string) bool { return s == "Subject" })
		}
		if !reflect.DeepEqual(names, want) {
			t.Fatalf("header fields %v, want %v\n%q", names, want, raw)
		}
		for field, wantList := range map[string][]Address{"From": {m.From}, "To": m.To, "Cc": m.Cc, "Bcc": m.Bcc} {
			if field == "Bcc" && !withBcc {
				continue
			}
			got, err := msg.Header.AddressList(field)
			if err != nil {
				t.Fatalf("%s %q: %v", field, msg.Header.Get(field), err)
			}
			if len(got) != len(wantList) {
				t.Fatalf("%s holds %d addresses, want %d: %q", field, len(got), len(wantList), msg.Header.Get(field))
			}
			for i := range got {
				if got[i].Name != wantList[i].Name || got[i].Address != wantList[i].Addr {
					t.Fatalf("%s[%d] reads %q <%s>, want %q <%s>", field, i, got[i].Name, got[i].Address, wantList[i].Name, wantList[i].Addr)
				}
			}
		}
		if got := decodeHeader(t, msg.Header.Get("Subject")); got != subject {
			t.Fatalf("Subject reads %q, want %q", got, subject)
		}
		if gotBody != canonicalBody(body) {
			t.Fatalf("body reads %q, want %q", gotBody, canonicalBody(body))
		}
	})
}

// FuzzParseAddress: ParseAddress never panics, and what it accepts holds no line break, passes
// the check Bytes makes, reads back the same through net/mail from its header form and through
// ParseAddress from its display form.
func FuzzParseAddress(f *testing.F) {
	for _, s := range nasty {
		f.Add(s)
		f.Add(s + " <bob@example.com>")
		f.Add(`"` + s + `" <bob@example.com>`)
	}
	for _, s := range []string{
		"bob@example.com", "Bob Smith <bob@example.com>", `"Smith, Bob" <bob@example.com>`,
		`"john doe"@example.com`, "postmaster@[IPv6:2001:db8::1]", "taro@例え.jp", "<@route:bob@x.com>",
		"bob@x.com (comment)", "John Q. Public <jqp@example.com>", `Bob "Q." Smith<b@x.example>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress("to[0]", s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "to[0]: ") {
				t.Fatalf("error %q does not name the field", err)
			}
			return
		}
		if strings.ContainsAny(a.Name+a.Addr+a.String()+a.display(), "\r\n\x00") {
			t.Fatalf("accepted %q as %+v, which holds a line break", s, a)
		}
		if err := a.check("to[0]"); err != nil {
			t.Fatalf("accepted %q as %+v, which Bytes would refuse: %v", s, a, err)
		}
		if back, err := ParseAddress("to[0]", a.display()); err != nil || back != a {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, a, a.display(), back, err)
		}
		if back, err := ParseAddress("to[0]", a.Addr); err != nil || back != (Address{Addr: a.Addr}) {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, a, a.Addr, back, err)
		}
		got, err := mail.ParseAddress(a.String())
		if err != nil {
			t.Fatalf("%q -> %+v -> %q, which net/mail cannot read: %v", s, a, a.String(), err)
		}
		if got.Name != a.Name || got.Address != unquoteLocal(a.Addr) {
			t.Fatalf("%q -> %+v -> %q, which net/mail reads as %q <%s>", s, a, a.String(), got.Name, got.Address)
		}
	})
}

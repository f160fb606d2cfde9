package compose

import (
	"errors"
	"net/mail"
	"strings"
	"testing"
)

func TestParseAddressAccepts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Address
	}{
		{"bob@example.com", Address{Addr: "bob@example.com"}},
		{"  bob@example.com  ", Address{Addr: "bob@example.com"}},
		{"<bob@example.com>", Address{Addr: "bob@example.com"}},
		{"Bob Smith <bob@example.com>", Address{"Bob Smith", "bob@example.com"}},
		{"Bob   Smith<bob@example.com>", Address{"Bob Smith", "bob@example.com"}},
		{`"Smith, Bob" <bob@example.com>`, Address{"Smith, Bob", "bob@example.com"}},
		{`"Bob \"the builder\"" <bob@example.com>`, Address{`Bob "the builder"`, "bob@example.com"}},
		{`Bob "Q." Smith <bob@example.com>`, Address{"Bob Q. Smith", "bob@example.com"}},
		{"John Q. Public <jqp@example.com>", Address{"John Q. Public", "jqp@example.com"}},
		{"Zoë Durand <zoe@exämple.fr>", Address{"Zoë Durand", "zoe@exämple.fr"}},
		{"山田太郎 <taro@例え.jp>", Address{"山田太郎", "taro@例え.jp"}},
		{"josé@example.com", Address{Addr: "josé@example.com"}},
		{"first.last+tag@sub.example.co.uk", Address{Addr: "first.last+tag@sub.example.co.uk"}},
		{`"john doe"@example.com`, Address{Addr: `"john doe"@example.com`}},
		{`"john.doe"@example.com`, Address{Addr: "john.doe@example.com"}},
		{"postmaster@[192.0.2.1]", Address{Addr: "postmaster@[192.0.2.1]"}},
		{"root@localhost", Address{Addr: "root@localhost"}},
	} {
		got, err := ParseAddress("to[0]", tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseAddress(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseAddressRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, why string
	}{
		{"CR LF in name", "Bob\r\nBcc: eve@evil.com <bob@x.com>", "control character"},
		{"LF in address", "bob@x.com\nBcc: eve@evil.com", "control character"},
		{"CR alone", "bob@x.com\r", "control character"},
		{"NUL", "bob@x.com\x00", "control character"},
		{"tab", "Bob\tSmith <bob@x.com>", "control character"},
		{"U+0085", "Bob\u0085Bcc: eve@evil.com <bob@x.com>", "control character"},
		{"U+2028", "Bob\u2028Bcc: eve@evil.com <bob@x.com>", "control character"},
		{"U+2029", "bob@x.com\u2029", "control character"},
		{"bidi override", "Bob \u202emoc.live <bob@x.com>", "control character"},
		{"encoded word in name", "=?utf-8?q?a=0D=0ABcc:_x@evil?= <bob@x.com>", "encoded word"},
		{"encoded word quoted", `"=?utf-8?b?Qm9i?=" <bob@x.com>`, "encoded word"},
		{"encoded word in address", "=?utf-8?q?x?=@x.com", "encoded word"},
		{"list after address", "Bob <bob@x.com>, eve@evil.com", "more than one address"},
		{"bare list", "bob@x.com, eve@evil.com", "more than one address"},
		{"semicolon", "bob@x.com; eve@evil.com", "more than one address"},
		{"group", "friends: bob@x.com, eve@evil.com;", "group syntax"},
		{"empty group", "undisclosed-recipients:;", "group syntax"},
		{"address as name", "eve@evil.com <bob@x.com>", "second address hidden in a name"},
		{"quoted address as name", `"bob@x.com" <eve@evil.com>`, "second address hidden in a name"},
		{"at sign in name", "Support @ Acme <s@example.com>", "second address hidden in a name"},
		{"full-width at in name", "bob＠x.com <eve@evil.com>", "second address hidden in a name"},
		{"brackets in quoted name", `"Bob <bob@x.com>" <eve@evil.com>`, "second address hidden in a name"},
		{"two angle addresses", "<bob@x.com> <eve@evil.com>", "more than one address"},
		{"text after >", "<bob@x.com> eve@evil.com", "after the closing '>'"},
		{"unmatched <", "Bob <bob@x.com", "unmatched"},
		{"unclosed quote", `"Bob <bob@x.com>`, "never closes"},
		{"comment", "bob@x.com (Bob)", "comment"},
		{"source route", "<@relay.example:bob@x.com>", "group syntax"},
		{"two at", "bob@eve@x.com", "more than one '@'"},
		{"no at", "bob", "no '@'"},
		{"no domain", "bob@", "nothing after '@'"},
		{"no local", "@x.com", "nothing before '@'"},
		{"space in local", "bob smith@x.com", "local part"},
		{"double dot", "bob..smith@x.com", "local part"},
		{"bad domain char", "bob@x_y.com", "domain"},
		{"numeric tld", "bob@1.2.3.4", "last label is a number"},
		{"hyphen label", "bob@-x.com", "host name"},
		{"bad literal", "bob@[300.1.1.1]", "address literal"},
		{"IPv6 literal", "bob@[IPv6:2001:db8::1]", "IPv6 literals are not accepted"},
		{"ideographic full stop", "bob@evil。com", "domain"},
		{"quoted local with at", `"eve@evil.com"@x.com`, "quoted local part"},
		{"quoted local with backslash", `"a\"b"@x.com`, "quoted local part"},
		{"empty", "   ", "empty"},
		{"too long", strings.Repeat("a", 310) + "@example.com", "more than the 320"},
		{"invalid utf-8", "bob\xff@x.com", "UTF-8"},
		{"backslash in name", `Bob\ Smith <bob@x.com>`, "outside double quotes"},
	} {
		_, err := ParseAddress("to[2]", tc.in)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: ParseAddress(%q) error = %v, want a *FieldError", tc.name, tc.in, err)
			continue
		}
		if fe.Field != "to[2]" || !strings.HasPrefix(err.Error(), "to[2]: ") || !strings.Contains(fe.Reason, tc.why) {
			t.Errorf("%s: ParseAddress(%q) error = %q, want field to[2] and %q", tc.name, tc.in, err, tc.why)
		}
		if strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%s: error %q holds a line break", tc.name, err)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList("cc", []string{"Bob <bob@x.com>", "carol@y.org", "BOB@X.COM", "Other Bob <Bob@x.com>"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Address{{"Bob", "bob@x.com"}, {"", "carol@y.org"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ParseList = %+v, want %+v", got, want)
	}
	_, err = ParseList("cc", []string{"bob@x.com", "carol@y.org", "eve@evil.com, mallory@evil.com"})
	if err == nil || !strings.HasPrefix(err.Error(), "cc[2]: ") {
		t.Errorf("ParseList with a list in the third entry: error = %v, want one naming cc[2]", err)
	}
}

func TestAddressString(t *testing.T) {
	for _, a := range []Address{
		{"", "bob@example.com"},
		{"Bob", "bob@example.com"},
		{"Bob Smith", "bob@example.com"},
		{"Smith, Bob", "bob@example.com"},
		{`Bob "the builder" O'Neil`, "bob@example.com"},
		{"John Q. Public", "jqp@example.com"},
		{"Zoë Durand", "zoe@example.fr"},
		{"  spaced  out  ", "s@example.com"},
		{"山田太郎", "taro@example.jp"},
		{strings.Repeat("Élodie ", 30), "e@example.fr"},
		{strings.Repeat("x", 100), "x@example.com"},
		{"a=?b", "ab@example.com"},
		{"", `"john doe"@example.com`},
	} {
		s := a.String()
		if strings.ContainsAny(s, "\r\n") {
			t.Errorf("%+v.String() = %q holds a line break", a, s)
		}
		if a.Name != "" && !isASCII(a.Name) && !strings.Contains(s, "=?utf-8?") {
			t.Errorf("%+v.String() = %q, want the non-ASCII name encoded", a, s)
		}
		got, err := mail.ParseAddress(s)
		if err != nil {
			t.Errorf("net/mail cannot read %+v.String() = %q: %v", a, s, err)
			continue
		}
		if got.Name != a.Name || got.Address != unquoteLocal(a.Addr) {
			t.Errorf("net/mail reads %q as %q <%s>, want %q <%s>", s, got.Name, got.Address, a.Name, unquoteLocal(a.Addr))
		}
		if back, err := ParseAddress("to", a.display()); err != nil || back != a {
			t.Errorf("ParseAddress(%q) = %+v, %v; want %+v", a.display(), back, err, a)
		}
	}
	// String never writes a line break, even for a name that would be refused.
	if s := (Address{"Bob\r\nBcc: eve@evil.com", "bob@x.com"}).String(); strings.ContainsAny(s, "\r\n") {
		t.Errorf("String of a name with CRLF = %q", s)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// unquoteLocal returns addr as net/mail gives it: the local part without its quotes.
func unquoteLocal(addr string) string {
	if strings.HasPrefix(addr, `"`) {
		end := strings.LastIndexByte(addr, '"')
		return addr[1:end] + addr[end+1:]
	}
	return addr
}

func TestCheckSubject(t *testing.T) {
	for _, ok := range []string{"", "Hello", "Réunion à 10h : ordre du jour", "2+2=? asked Bob", strings.Repeat("x", 998)} {
		if err := CheckSubject(ok); err != nil {
			t.Errorf("CheckSubject(%q) = %v, want nil", ok, err)
		}
	}
	for _, tc := range []struct{ in, why string }{
		{"Hi\r\nBcc: eve@evil.com", "control character"},
		{"Hi\nthere", "control character"},
		{"Hi\tthere", "control character"},
		{"Hi\x00", "control character"},
		{"Hi\u2028Bcc: eve@evil.com", "control character"},
		{"Hi\u0085there", "control character"},
		{"=?utf-8?q?a=0D=0ABcc:_x@evil?=", "encoded word"},
		{"Re: =?UTF-8?B?SGk=?=", "encoded word"},
		{strings.Repeat("x", 999), "998"},
		{"\xff", "UTF-8"},
	} {
		err := CheckSubject(tc.in)
		if err == nil || !strings.HasPrefix(err.Error(), "subject: ") || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("CheckSubject(%q) = %v, want a subject error about %q", tc.in, err, tc.why)
		}
	}
}

func TestCheckBody(t *testing.T) {
	for _, ok := range []string{"", "Hi,\n\n\tindented\r\nCRLF too\n", "U+2028 is text\u2028here"} {
		if err := CheckBody(ok); err != nil {
			t.Errorf("CheckBody(%q) = %v, want nil", ok, err)
		}
	}
	for _, tc := range []struct{ in, why string }{
		{"a\x00b", "(U+0000) on line 1"},
		{"a\nb\rc", "(U+000D) on line 2"},
		{"a\n\n\x0c", "(U+000C) on line 3"},
		{"a\u0085", "U+0085"},
		{"\xff", "UTF-8"},
		{strings.Repeat("x", 5<<20+1), "5 MB"},
	} {
		err := CheckBody(tc.in)
		if err == nil || !strings.HasPrefix(err.Error(), "body: ") || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("CheckBody(%.20q) = %v, want a body error about %q", tc.in, err, tc.why)
		}
	}
}

package mailparse

import (
	"encoding/base64"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
)

var charsetCases = []struct {
	label string
	enc   encoding.Encoding
	text  string
}{
	{"UTF-8", unicode.UTF8, "Grüße ✓ 日本"},
	{"ISO-8859-1", charmap.ISO8859_1, "Déjà vu, señor"},
	{"ISO-8859-15", charmap.ISO8859_15, "Prix: 5 €, œuvre"},
	{"Windows-1252", charmap.Windows1252, "“Smart” quotes – €"},
	{"KOI8-R", charmap.KOI8R, "Съешь же ещё этих булок"},
	{"ISO-2022-JP", japanese.ISO2022JP, "こんにちは世界"},
	{"Shift_JIS", japanese.ShiftJIS, "日本語のメール"},
	{"GB2312", simplifiedchinese.GBK, "你好，世界"},
	{"GBK", simplifiedchinese.GBK, "中文邮件"},
	{"Big5", traditionalchinese.Big5, "繁體中文"},
}

func TestCharsets(t *testing.T) {
	for _, c := range charsetCases {
		t.Run(c.label, func(t *testing.T) {
			raw, err := c.enc.NewEncoder().String(c.text)
			if err != nil {
				t.Fatal(err)
			}
			b64 := base64.StdEncoding.EncodeToString([]byte(raw))
			msg := "Subject: =?" + c.label + "?B?" + b64 + "?=\r\n" +
				"Content-Type: text/plain; charset=\"" + c.label + "\"\r\n" +
				"Content-Transfer-Encoding: base64\r\n\r\n" + b64 + "\r\n"
			m, err := Parse(strings.NewReader(msg))
			if err != nil {
				t.Fatal(err)
			}
			checkValid(t, m)
			if m.Subject != c.text {
				t.Errorf("Subject = %q, want %q", m.Subject, c.text)
			}
			if m.Text != c.text {
				t.Errorf("Text = %q, want %q", m.Text, c.text)
			}
			if len(m.Problems) > 0 {
				t.Errorf("Problems = %q", m.Problems)
			}
		})
	}
}

func TestEncodedWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"=?utf-8?q?caf=C3=A9?=", "café"},
		{"=?UTF-8?Q?a_b?= =?UTF-8?Q?_c?=", "a b c"},         // whitespace between words dropped
		{"=?utf-8?q?x?=\r\n\t=?utf-8?q?y?=", "xy"},          // also across folding
		{"=?utf-8?b?4pw=?= =?utf-8?b?lA==?=", "✔"},          // a character split across two words
		{"Hello =?utf-8?q?w=C3=B6rld?= !", "Hello wörld !"}, // text around is kept
		{"=?utf-8?x?abc?=", "=?utf-8?x?abc?="},              // unknown encoding: left as text
		{"=?utf-8?b?!!!?=", "=?utf-8?b?!!!?="},              // bad base64: left as text
		{"=?utf-8?q?unterminated", "=?utf-8?q?unterminated"},
		{"=?iso-8859-1*fr?q?d=E9j=E0?=", "déjà"}, // RFC 2231 language
		{"=?utf-8?q?a?= b =?utf-8?q?c?=", "a b c"},
		{"=?x-unknown-cs?q?ok=FF?=", "ok\uFFFD"}, // unknown charset: bytes kept, invalid replaced
		{"=?utf-8?B?w6k?=", "é"},                 // missing padding
	}
	for _, tt := range tests {
		p := &parser{msg: &Message{}}
		if got := p.decodeWords("Subject", tt.in); got != tt.want {
			t.Errorf("decodeWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDates(t *testing.T) {
	want := time.Date(2006, 1, 2, 22, 4, 5, 0, time.UTC)
	noSec := time.Date(2006, 1, 2, 22, 4, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"Mon, 2 Jan 2006 15:04:05 -0700", want},
		{"Mon, 2 Jan 2006 15:04:05 -0700 (MST)", want},
		{"Mon, 02 Jan 2006 15:04:05 MST", want},
		{"2 Jan 2006 15:04:05 -0700", want},
		{"Mon, 2 Jan 2006 15:04 -0700", noSec},
		{"Mon, 2 Jan 06 15:04:05 -0700", want},
		{"Mon,  2 Jan 2006 15:04:05 GMT-0700", want},
		{"Monday, January 2, 2006 15:04:05 -0700", want},
		{"Mon Jan 2 15:04:05 2006 -0700", want},
		{"2006-01-02T15:04:05-07:00", want},
		{"2006-01-02 22:04:05", want},
		{"Mon, 2 Jan 2006 22:04:05", want}, // no zone: UTC
		{"Sun, 2 Jan 99 00:00:00 +0000", time.Date(1999, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"2 Jan 49 00:00 +0000", time.Date(2049, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"Tue, 31 Feb 2006 10:00:00 +0000", time.Time{}},
		{"yesterday", time.Time{}},
		{"", time.Time{}},
		{"Mon, 2 Jan 2006 25:04:05 +0000", time.Time{}},
	}
	for _, tt := range tests {
		got := parseDate(tt.in)
		if !got.Equal(tt.want) || got.IsZero() != tt.want.IsZero() {
			t.Errorf("parseDate(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseAddressList(t *testing.T) {
	tests := []struct {
		in   string
		want []Address
	}{
		{`Alice <alice@EXAMPLE.com>`, []Address{{"Alice", "alice@example.com"}}},
		{`"Doe, John" <John.Doe@Example.ORG>, bob@example.net`, []Address{{"Doe, John", "John.Doe@example.org"}, {"", "bob@example.net"}}},
		{`=?utf-8?q?Doe=2C_J=C3=B6rg?= <jorg@example.com>`, []Address{{"Doe, Jörg", "jorg@example.com"}}},
		{`"=?utf-8?q?J=C3=B6rg?=" <jorg@example.com>`, []Address{{"Jörg", "jorg@example.com"}}},
		{`undisclosed-recipients:;`, nil},
		{`Team: a@example.com, b@example.com;, c@example.org`, []Address{{"", "a@example.com"}, {"", "b@example.com"}, {"", "c@example.org"}}},
		{`carol@example.com (Carol Smith)`, []Address{{"Carol Smith", "carol@example.com"}}},
		{`Broken Name <broken@example.com`, []Address{{"Broken Name", "broken@example.com"}}},
		{`john..doe@example.com, <x@example.com>`, []Address{{"", "john..doe@example.com"}, {"", "x@example.com"}}},
		{`Jörg Müller <jorg@example.com>`, []Address{{"Jörg Müller", "jorg@example.com"}}},
		{`MAILER-DAEMON`, []Address{{"", "MAILER-DAEMON"}}},
		{``, nil},
	}
	for _, tt := range tests {
		got := ParseAddressList(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("ParseAddressList(%q) = %q, want %q", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("ParseAddressList(%q) = %q, want %q", tt.in, got, tt.want)
				break
			}
		}
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		in, value, key, want string
	}{
		{`attachment; filename="a b.pdf"`, "attachment", "filename", "a b.pdf"},
		{`attachment; filename*=UTF-8''%C3%A9t%C3%A9.pdf; filename="ete.pdf"`, "attachment", "filename", "été.pdf"},
		{`attachment; filename*0*=UTF-8''%C3%A9; filename*1="t.txt"`, "attachment", "filename", "ét.txt"},
		{`attachment; filename*=iso-8859-1'fr'%E9t%E9.txt`, "attachment", "filename", "été.txt"},
		{`Text/HTML; Charset=UTF-8;`, "text/html", "charset", "UTF-8"},
		{`multipart/mixed; boundary="a;b"; x=1`, "multipart/mixed", "boundary", "a;b"},
		{`attachment; filename=report final.pdf`, "attachment", "filename", "report final.pdf"},
	}
	for _, tt := range tests {
		v, ps := parseParams(tt.in)
		if v != tt.value || ps[tt.key] != tt.want {
			t.Errorf("parseParams(%q) = %q %q, want %q %s=%q", tt.in, v, ps, tt.value, tt.key, tt.want)
		}
	}
}

// FuzzB64Size: counting an attachment's decoded size without decoding gives
// what decoding gives, and the same count of invalid characters.
func FuzzB64Size(f *testing.F) {
	for _, s := range []string{"", "QUJD", "QUJDRA==", "QUJDRA=", "QU JD\r\nRA", "Q", "QQ", "QUI", "QU=JD", "!!QUJD##", "QUJD\n=\nQUJD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d1 := newB64Reader(strings.NewReader(s))
		out, _ := io.ReadAll(d1)
		d2 := newB64Reader(iotest.OneByteReader(strings.NewReader(s)))
		if n := d2.size(); n != int64(len(out)) || d2.bad != d1.bad {
			t.Fatalf("%q: size %d (bad %d), decoding gives %d bytes (bad %d)", s, n, d2.bad, len(out), d1.bad)
		}
	})
}

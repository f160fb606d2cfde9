package mailparse

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func parseFile(t *testing.T, name string) *Message {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	if m.Size != int64(len(b)) {
		t.Errorf("Size = %d, want %d", m.Size, len(b))
	}
	checkValid(t, m)
	return m
}

// checkValid asserts the invariants every Message keeps.
func checkValid(t testing.TB, m *Message) {
	t.Helper()
	var bad []string
	check := func(what, s string) {
		if !utf8.ValidString(s) {
			bad = append(bad, what)
		}
	}
	check("MessageID", m.MessageID)
	check("InReplyTo", m.InReplyTo)
	check("Subject", m.Subject)
	check("Text", m.Text)
	for _, r := range m.References {
		check("References", r)
	}
	for _, l := range [][]Address{m.From, m.Sender, m.ReplyTo, m.To, m.Cc, m.Bcc} {
		for _, a := range l {
			check("Address.Name", a.Name)
			check("Address.Email", a.Email)
		}
	}
	for _, a := range m.Attachments {
		check("Attachment.Name", a.Name)
		check("Attachment.ContentType", a.ContentType)
	}
	for _, h := range m.Headers {
		check("Header.Name", h.Name)
		check("Header.Value", h.Value)
	}
	for _, p := range m.Problems {
		check("Problem", p)
	}
	if len(bad) > 0 {
		t.Errorf("invalid UTF-8 in %v", bad)
	}
	if len(m.Text) > MaxText {
		t.Errorf("len(Text) = %d > MaxText", len(m.Text))
	}
}

func hasProblem(m *Message, sub string) bool {
	for _, p := range m.Problems {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

func TestMessages(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, m *Message)
	}{
		{"alternative.eml", func(t *testing.T, m *Message) {
			eq(t, "Subject", m.Subject, "Re: Réunion de la semaine ✔")
			eq(t, "MessageID", m.MessageID, "CAFx1=abc@mail.example.com")
			eq(t, "InReplyTo", m.InReplyTo, "orig-1@example.org")
			eq(t, "References", m.References, []string{"root-0@example.org", "orig-1@example.org"})
			eq(t, "From", m.From, []Address{{"Alice Müller", "Alice@example.com"}})
			eq(t, "To", m.To, []Address{{"Bob, the Builder", "bob@example.org"}, {"", "carol@example.net"}})
			eq(t, "Cc", m.Cc, []Address{{"André", "andre@example.net"}})
			eq(t, "Date", m.Date.UTC(), time.Date(2024, 5, 14, 7, 12, 40, 0, time.UTC))
			eq(t, "Text", m.Text, "Bonjour Bob,\n\nLa réunion est déplacée à jeudi. Voici un très longue ligne coupée.\n\nAlice")
			eq(t, "Attachments", len(m.Attachments), 0)
			eq(t, "Problems", len(m.Problems), 0)
			if len(m.Headers) != 12 || m.Headers[1].Name != "Received" ||
				m.Headers[1].Value != "from mx.example.net (mx.example.net [192.0.2.1]) by mail.example.org with ESMTPS id abc123 for <bob@example.org>; Tue, 14 May 2024 09:12:44 +0200" {
				t.Errorf("Headers = %q", m.Headers[:2])
			}
		}},
		{"html_only.eml", func(t *testing.T, m *Message) {
			want := "Spring news\n\nCafé & more “quoted” €5 <tag>\n\n- First item\n- Second item\n\n" +
				"Read the full story (https://www.example.com/spring?a=1&b=2) or news@example.com.\n\nCell A Cell B"
			eq(t, "Text", m.Text, want)
			eq(t, "Date", m.Date.UTC(), time.Date(2023, 4, 3, 8, 0, 0, 0, time.UTC))
		}},
		{"mixed_attachments.eml", func(t *testing.T, m *Message) {
			eq(t, "From", m.From, []Address{{"Dupont, Jean", "jean.dupont@example.net"}})
			eq(t, "Text", m.Text, "Bonjour à tous,\nci-joint le rapport.")
			eq(t, "Attachments", m.Attachments, []Attachment{
				{"été report.pdf", "application/pdf", 9 + 2560 + 6},
				{"équipe.png", "image/png", 1008},
				{"données 2023.csv", "text/csv", 23},
			})
			eq(t, "Problems", m.Problems, []string(nil))
		}},
		{"related.eml", func(t *testing.T, m *Message) {
			eq(t, "Text", m.Text, "See the photo below.")
			eq(t, "Attachments", m.Attachments, []Attachment{
				{"budget.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", 14},
			})
			eq(t, "Problems", m.Problems, []string(nil))
		}},
		{"forwarded.eml", func(t *testing.T, m *Message) {
			eq(t, "Text", m.Text, "See the forwarded message.")
			eq(t, "Attachments", m.Attachments, []Attachment{{"Original ✈ trip", "message/rfc822", 194}})
		}},
		{"no_end_boundary.eml", func(t *testing.T, m *Message) {
			eq(t, "Text", m.Text, "The attachment is cut off.")
			eq(t, "Attachments", m.Attachments, []Attachment{{"data.bin", "application/octet-stream", 16}})
			if !hasProblem(m, "closing MIME boundary") {
				t.Errorf("Problems = %q, want one about the closing boundary", m.Problems)
			}
		}},
		{"no_content_type.eml", func(t *testing.T, m *Message) {
			eq(t, "Text", m.Text, "Just text, no MIME headers at all.\nSecond line.")
			eq(t, "Date", m.Date.UTC(), time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC))
			eq(t, "Subject", m.Subject, "plain old mail")
		}},
		{"latin1_subject.eml", func(t *testing.T, m *Message) {
			eq(t, "Subject", m.Subject, "Résumé für dich")
			eq(t, "From", m.From, []Address{{"Maïa", "maia@example.com"}})
			eq(t, "Date", m.Date.UTC(), time.Date(2006, 1, 2, 22, 4, 5, 0, time.UTC))
			if !hasProblem(m, "raw 8-bit") {
				t.Errorf("Problems = %q, want one about raw 8-bit bytes", m.Problems)
			}
		}},
		{"koi8r.eml", func(t *testing.T, m *Message) {
			eq(t, "Subject", m.Subject, "Привет")
			eq(t, "From", m.From, []Address{{"Иван", "ivan@example.com"}})
			eq(t, "Text", m.Text, "Привет, мир!")
			eq(t, "Date", m.Date.UTC(), time.Date(2006, 1, 2, 22, 4, 0, 0, time.UTC))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) { tt.check(t, parseFile(t, tt.file)) })
	}
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, ok := got.(time.Time); ok {
		if !g.Equal(want.(time.Time)) {
			t.Errorf("%s = %v, want %v", what, g, want)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// Line endings must not change what is read.
func TestLineEndings(t *testing.T) {
	for _, f := range []string{"alternative.eml", "mixed_attachments.eml", "related.eml", "no_end_boundary.eml", "forwarded.eml"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		lf := bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
		a, _ := Parse(bytes.NewReader(lf))
		c, _ := Parse(bytes.NewReader(crlf))
		if a.Text != c.Text || a.Subject != c.Subject || len(a.Attachments) != len(c.Attachments) {
			t.Errorf("%s: LF and CRLF differ:\n%q %v\n%q %v", f, a.Text, a.Attachments, c.Text, c.Attachments)
		}
		for i := range a.Attachments {
			// message/rfc822 sizes count the line endings; decoded sizes must match.
			if a.Attachments[i].ContentType != "message/rfc822" && a.Attachments[i] != c.Attachments[i] {
				t.Errorf("%s: attachment %d: LF %v, CRLF %v", f, i, a.Attachments[i], c.Attachments[i])
			}
		}
	}
}

type failingReader struct{ r *bytes.Reader }

var errDisk = errors.New("disk on fire")

func (f failingReader) Read(p []byte) (int, error) {
	if f.r.Len() == 0 {
		return 0, errDisk
	}
	return f.r.Read(p[:min(len(p), 100)])
}

func TestReaderError(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("testdata", "alternative.eml"))
	m, err := Parse(failingReader{bytes.NewReader(b[:600])})
	if !errors.Is(err, errDisk) {
		t.Fatalf("err = %v, want %v", err, errDisk)
	}
	if m == nil || m.Subject != "Re: Réunion de la semaine ✔" {
		t.Errorf("partial message not kept: %+v", m)
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name, in string
		text     string
		problem  string
	}{
		{"no blank line after header", "Subject: x\nthis is body\nmore\n", "this is body\nmore", "no blank line"},
		{"boundary never appears", "Content-Type: multipart/mixed; boundary=zzz\n\nhello there\n", "hello there", "never appears"},
		{"multipart without boundary", "Content-Type: multipart/mixed\n\nbody\n", "body", "no boundary"},
		{"bad base64", "Content-Type: text/plain\nContent-Transfer-Encoding: base64\n\naGVs*bG8g!d29y\nbGQ=\n", "hello world", "invalid characters"},
		{"unknown charset", "Content-Type: text/plain; charset=x-martian\n\nhi \xff\n", "hi \uFFFD", "unknown charset"},
		{"unknown transfer encoding", "Content-Transfer-Encoding: x-foo\n\nraw\n", "raw", "unknown"},
		{"mbox From line", "From alice@example.com Mon Jan  2 15:04:05 2006\nSubject: s\n\nbody\n", "body", ""},
		{"qp broken escapes", "Content-Transfer-Encoding: quoted-printable\n\na=3Db =ZZ c=\nd=\r\n=e9\n", "a=b =ZZ cdé", ""},
		{"empty input", "", "", ""},
		{"concatenated base64", "Content-Transfer-Encoding: base64\n\naGk=IHRoZXJl\n", "hi there", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			checkValid(t, m)
			if m.Text != tt.text {
				t.Errorf("Text = %q, want %q", m.Text, tt.text)
			}
			if tt.problem != "" && !hasProblem(m, tt.problem) {
				t.Errorf("Problems = %q, want one containing %q", m.Problems, tt.problem)
			}
			if tt.problem == "" && len(m.Problems) > 0 {
				t.Errorf("Problems = %q, want none", m.Problems)
			}
		})
	}
}

func TestTextTruncated(t *testing.T) {
	body := strings.Repeat("é", MaxText) // 2 MiB of UTF-8
	m, err := Parse(strings.NewReader("Content-Type: text/plain; charset=utf-8\n\n" + body))
	if err != nil {
		t.Fatal(err)
	}
	checkValid(t, m)
	if !m.TextTruncated || len(m.Text) != MaxText {
		t.Errorf("TextTruncated = %v, len(Text) = %d", m.TextTruncated, len(m.Text))
	}
	html := "<p>" + strings.Repeat("word ", MaxText/2) + "</p>"
	m, _ = Parse(strings.NewReader("Content-Type: text/html\n\n" + html))
	checkValid(t, m)
	if !m.TextTruncated || len(m.Text) < MaxText-10 {
		t.Errorf("html: TextTruncated = %v, len(Text) = %d", m.TextTruncated, len(m.Text))
	}
}

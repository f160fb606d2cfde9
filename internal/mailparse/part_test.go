package mailparse

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/corpus"
)

// TestReadAttachmentMatchesParse: for every attachment of a generated corpus, ReadAttachment
// lists the message's attachments exactly as Parse does, and keeps the content of the one asked
// for, whole and of the size listed.
func TestReadAttachmentMatchesParse(t *testing.T) {
	checked := 0
	for _, cm := range corpus.Generate(corpus.Options{Seed: 14, Messages: 300}) {
		want, err := Parse(bytes.NewReader(cm.Raw))
		if err != nil {
			t.Fatal(err)
		}
		for n := range len(want.Attachments) + 1 {
			m, part, err := ReadAttachment(bytes.NewReader(cm.Raw), n, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Attachments, want.Attachments) || m.Text != want.Text {
				t.Fatalf("%s: ReadAttachment lists %+v, Parse %+v", cm.MessageID, m.Attachments, want.Attachments)
			}
			if n == len(want.Attachments) {
				if part != nil {
					t.Fatalf("%s: attachment %d of %d found", cm.MessageID, n, len(want.Attachments))
				}
				continue
			}
			if part == nil || part.Attachment != want.Attachments[n] || int64(len(part.Data)) != part.Size || part.Truncated {
				t.Fatalf("%s: attachment %d: %+v", cm.MessageID, n, part)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d attachments checked", checked)
	}
}

func TestPartText(t *testing.T) {
	raw := "From: a@example.org\r\nSubject: s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: text/plain\r\n\r\nbody\r\n" +
		"--B\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Disposition: attachment; filename=p.html\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>caf=E9</p><div style=3D\"display:none\">hidden</div>\r\n" +
		"--B\r\nContent-Type: message/rfc822\r\n\r\nFrom: Bob <bob@example.org>\r\nSubject: =?utf-8?q?Inner_=C3=A9?=\r\n\r\ninner text\r\n" +
		"--B\r\nContent-Type: text/calendar; charset=utf-8\r\nContent-Disposition: attachment; filename=invite.ics\r\n\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n" +
		"--B\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=big.txt\r\n\r\n" + strings.Repeat("x", 100) + "\r\n--B--\r\n"
	cases := []struct {
		n      int
		name   string
		text   string
		cut    bool
		limit  int64
		absent string
	}{
		{0, "p.html", "café", false, 1 << 20, "hidden"},
		{1, "Inner é", "From: Bob <bob@example.org>\nSubject: Inner é\n\ninner text", false, 1 << 20, ""},
		{2, "invite.ics", "BEGIN:VCALENDAR\nEND:VCALENDAR", false, 1 << 20, ""},
		{3, "big.txt", strings.Repeat("x", 10), true, 10, ""},
	}
	for _, c := range cases {
		_, part, err := ReadAttachment(strings.NewReader(raw), c.n, c.limit)
		if err != nil || part == nil {
			t.Fatalf("%d: %v %v", c.n, part, err)
		}
		if part.Name != c.name || !TextLike(part.ContentType) {
			t.Errorf("%d: name %q type %q", c.n, part.Name, part.ContentType)
		}
		text, cut := part.Text()
		if !strings.Contains(text, c.text) || cut != c.cut || (c.absent != "" && strings.Contains(text, c.absent)) {
			t.Errorf("%d: text %q cut %v", c.n, text, cut)
		}
	}
	if TextLike("application/pdf") || TextLike("image/png") {
		t.Error("binary types read as text")
	}
}

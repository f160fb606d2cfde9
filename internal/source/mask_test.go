package source

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/store"
)

// TestMaskMessageFields: every field is stored as the boundary will show it; a code message
// keeps its Date and Message-ID; a withheld message's password goes from every field.
func TestMaskMessageFields(t *testing.T) {
	nm := &store.NewMessage{
		Subject: "Your sign-in code",
		From:    store.Address{Name: "Example\u200b Security", Email: "no-reply@example.com"},
		Text:    "Use 48\u200b29\u200b13 to sign in.\nSent 2025-06-14 10:22 from +33 6 12 34 56 78",
		Headers: []store.Header{
			{Name: "Date", Value: "Sat, 14 Jun 2025 10:22:01 +0200"},
			{Name: "Message-ID", Value: "<20250614102201.48291@mail.example.com>"},
			{Name: "Subject", Value: "Your sign-in code 482913"},
			{Name: "X-Mailer", Value: "Mailer 4.2.1 build 20250614"},
		},
		Attachments: []store.Attachment{{Name: "code\u200b-482913.txt", ContentType: "text/plain"}},
	}
	store.MaskMessage(nm)
	if strings.Contains(nm.Text, "482913") || strings.Contains(strings.ReplaceAll(nm.Text, "\u200b", ""), "482913") || !strings.Contains(nm.Text, mask.HiddenCode) {
		t.Errorf("text = %q", nm.Text)
	}
	if strings.ContainsRune(nm.Text, '\u200b') || strings.ContainsRune(nm.From.Name, '\u200b') {
		t.Errorf("invisible characters stored: %q %q", nm.Text, nm.From.Name)
	}
	want := map[string]string{
		"Date":       "Sat, 14 Jun 2025 10:22:01 +0200",
		"Message-ID": "<20250614102201.48291@mail.example.com>",
		"X-Mailer":   "Mailer 4.2.1 build 20250614",
	}
	kept := 0
	for _, h := range nm.Headers {
		if w, ok := want[h.Name]; ok {
			kept++
			if h.Value != w {
				t.Errorf("%s: %q, want it kept as %q", h.Name, h.Value, w)
			}
		}
		if h.Name == "Subject" && strings.Contains(h.Value, "482913") {
			t.Errorf("Subject header keeps the code: %q", h.Value)
		}
	}
	if kept != len(want) {
		t.Errorf("%d of the %d headers to keep are stored: %v", kept, len(want), nm.Headers)
	}
	// A MIME parameter is a stranger's value: a code there goes. An identifier is not read
	// for code shapes, but the message's own code goes from it wherever it stands.
	p := &store.NewMessage{
		Subject: "[Example] 707117",
		Text:    "Enter the number above to finish signing in.",
		Headers: []store.Header{
			{Name: "Content-Type", Value: "text/plain; charset=x-517327"},
			{Name: "Content-Disposition", Value: `attachment; filename="k-517327.txt"`},
			{Name: "Message-ID", Value: "<20250614.707117.x@mail.example.com>"},
			{Name: "References", Value: "<CAF7071-17@example.com> <a1b2c3d4e5@example.com>"},
			{Name: "In-Reply-To", Value: "<4829137650@example.com>"},
			{Name: "Date", Value: "Sat, 14 Jun 2025 10:22:01 +0200"},
		},
	}
	store.MaskMessage(p)
	if strings.Contains(p.Subject, "707117") {
		t.Errorf("subject keeps the code the text points to: %q", p.Subject)
	}
	for _, h := range p.Headers {
		switch {
		case strings.Contains(h.Value, "517327") || strings.Contains(strings.ReplaceAll(h.Value, "-", ""), "707117"):
			t.Errorf("%s keeps a code: %q", h.Name, h.Value)
		case h.Name == "Message-ID" && h.Value != "<20250614."+mask.HiddenCode+".x@mail.example.com>",
			h.Name == "References" && h.Value != "<CAF"+mask.HiddenCode+"@example.com> <a1b2c3d4e5@example.com>",
			h.Name == "In-Reply-To" && h.Value != "<4829137650@example.com>",
			h.Name == "Date" && h.Value != "Sat, 14 Jun 2025 10:22:01 +0200":
			t.Errorf("%s = %q: an identifier is masked only where the message's code stands", h.Name, h.Value)
		}
	}
	if strings.Contains(nm.Attachments[0].Name, "482913") {
		t.Errorf("attachment name keeps the code: %q", nm.Attachments[0].Name)
	}
	// Stored as shown: the boundary finds nothing more to do.
	for _, s := range []string{nm.Subject, nm.From.Name, nm.Attachments[0].Name} {
		if mask.Line(s) != s {
			t.Errorf("%q is not stored as the boundary shows it: %q", s, mask.Line(s))
		}
	}
	if mask.Body(nm.Text) != nm.Text {
		t.Errorf("text not stored as shown: %q", nm.Text)
	}

	w := &store.NewMessage{
		Subject:     "Your password: Pw7-Qx92zz",
		Text:        "Hello,\nYour password: Pw7-Qx92zz\nKeep it safe.",
		Attachments: []store.Attachment{{Name: "Pw7-Qx92zz.txt"}},
		Headers:     []store.Header{{Name: "Subject", Value: "Your password: Pw7-Qx92zz"}, {Name: "X-Note", Value: "Pw7-Qx92zz"}},
	}
	store.MaskMessage(w)
	if w.Withheld == "" || w.Text != "" {
		t.Fatalf("not withheld: %q %q", w.Withheld, w.Text)
	}
	for _, s := range []string{w.Subject, w.Attachments[0].Name, w.Headers[0].Value, w.Headers[1].Value} {
		if strings.Contains(s, "Qx92zz") {
			t.Errorf("the withheld password shows in %q", s)
		}
	}
}

package store

import (
	"strings"

	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/mask"
)

// MaskMessage makes every field a stranger wrote what an agent will be shown of it, before
// it is stored or indexed: cleaned, then masked on its folded view with one verdict for the
// whole message (a code in the body hides the links too) and, for the indexed fields, then
// with its own, exactly as the answer boundary does (mask.Line, mask.Body). So the store and
// its indexes hold what the answers show, no more: searching for a masked code's digits finds
// nothing.
//
// Header values other than the Subject, the address fields and the MIME parameters are masked
// without reading them for code shapes: a Date or a Message-ID is never a code, and a code
// message must not lose them. What the message masks goes from them all the same: a code its
// subject or text gives, wherever it appears (even inside a Message-ID), passwords, IBANs,
// cards and social security numbers. The parameters of Content-Type and Content-Disposition
// (charset, name, filename, boundary) are values a stranger wrote, read like the subject.
func MaskMessage(nm *NewMessage) {
	nm.Subject = clean.Line(nm.Subject)
	nm.Text = clean.Text(nm.Text)
	v := mask.Inspect(nm.Subject, nm.Text)
	m := func(s string) string { return mask.LineOf(s, v) }
	nm.Subject = m(nm.Subject)
	nm.From.Name = m(nm.From.Name)
	nm.From.Email = mask.Line(nm.From.Email)
	for i := range nm.To {
		nm.To[i].Name = m(nm.To[i].Name)
		nm.To[i].Email = mask.Line(nm.To[i].Email)
	}
	for i := range nm.Cc {
		nm.Cc[i].Name = m(nm.Cc[i].Name)
		nm.Cc[i].Email = mask.Line(nm.Cc[i].Email)
	}
	for i := range nm.Attachments {
		nm.Attachments[i].Name = m(nm.Attachments[i].Name)
		nm.Attachments[i].ContentType = mask.Line(nm.Attachments[i].ContentType)
	}
	// Header fields and parse problems are not indexed, and the boundary masks them again with
	// their own verdicts when they are shown: the message's verdict is all they need here.
	once := func(s string, v mask.Verdict) string {
		out, _ := mask.Apply(clean.Line(s), v)
		return out
	}
	plain := v.WithoutCode()
	for i := range nm.Headers {
		h := &nm.Headers[i]
		h.Name = clean.Line(h.Name)
		if codeHeader(h.Name) {
			h.Value = once(h.Value, v)
		} else {
			h.Value = once(h.Value, plain)
		}
	}
	for i := range nm.Problems {
		nm.Problems[i] = once(nm.Problems[i], v) // they may quote the message: a charset, a file name
	}
	if v.Withheld {
		nm.Withheld = v.Reason
		nm.Text = ""
		return
	}
	nm.Text = mask.BodyOf(nm.Text, v)
}

// codeHeader: the header fields whose values the message's code verdict masks, as it masks
// the subject and the display names they hold, and the fields of MIME parameters.
func codeHeader(name string) bool {
	switch strings.ToLower(name) {
	case "subject", "from", "to", "cc", "bcc", "reply-to", "sender", "content-type", "content-disposition":
		return true
	}
	return false
}

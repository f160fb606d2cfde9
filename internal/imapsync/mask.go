package imapsync

import (
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/store"
)

// maskMessage hides a message's secrets in every field a stranger wrote, with
// one verdict for the whole message (a code in the body hides the links too),
// so that neither the store nor its indexes ever hold them.
func maskMessage(nm *store.NewMessage) {
	v := mask.Inspect(nm.Subject, nm.Text)
	m := func(s string) string {
		out, _ := mask.Apply(s, v)
		return out
	}
	nm.Subject = m(nm.Subject)
	nm.From.Name = m(nm.From.Name)
	for i := range nm.To {
		nm.To[i].Name = m(nm.To[i].Name)
	}
	for i := range nm.Cc {
		nm.Cc[i].Name = m(nm.Cc[i].Name)
	}
	for i := range nm.Attachments {
		nm.Attachments[i].Name = m(nm.Attachments[i].Name)
	}
	for i := range nm.Headers {
		nm.Headers[i].Value = m(nm.Headers[i].Value)
	}
	if v.Withheld {
		nm.Withheld = v.Reason
		nm.Text = ""
		return
	}
	nm.Text = m(nm.Text)
}

package source

import (
	"strings"

	"github.com/postern-mcp/postern/internal/authres"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/store"
)

// Fill copies what the parser read into a message to store.
func Fill(nm *store.NewMessage, p *mailparse.Message) {
	nm.MessageID = p.MessageID
	nm.InReplyTo = p.InReplyTo
	nm.References = p.References
	nm.Date = p.Date
	nm.Subject = p.Subject
	if len(p.From) > 0 {
		nm.From = store.Address{Name: p.From[0].Name, Email: p.From[0].Email}
	}
	nm.To = addrs(p.To)
	nm.Cc = addrs(p.Cc)
	for _, a := range p.Attachments {
		nm.Attachments = append(nm.Attachments, store.Attachment{Name: a.Name, ContentType: a.ContentType, Size: a.Size})
	}
	nm.Text = p.Text
	nm.TextTruncated = p.TextTruncated
	for _, h := range p.Headers {
		nm.Headers = append(nm.Headers, store.Header{Name: h.Name, Value: h.Value})
	}
	// A mailing list's unsubscribe URIs are kept apart for mail_unsubscribe, and the header
	// keeps only what may be shown of them: they often carry a token that proves the
	// address is read.
	l := mailparse.ListOf(p.Headers)
	nm.List, nm.OneClick, nm.Unsubscribe = l.IsList, l.OneClick, l.Unsubscribe
	store.ShowListHeaders(nm.Headers)
	nm.Problems = p.Problems
	// An iTIP invitation (RFC 6047) is marked and its iCalendar text kept for mail_show and
	// calendar_respond (store/invite.go).
	if inv := p.Invitation; inv != nil {
		nm.Invitation, nm.InvitationUID, nm.Calendar = strings.ToLower(inv.Method), inv.UID, inv.Calendar
	}
	if nm.Size == 0 {
		nm.Size = p.Size
	}
}

// Judge marks a message forged when a trusted receiving server says so, and
// masks its secrets before anything is stored or indexed.
func Judge(nm *store.NewMessage, trusted []string) {
	var ar []string
	for _, h := range nm.Headers {
		if strings.EqualFold(h.Name, "Authentication-Results") {
			ar = append(ar, h.Value)
		}
	}
	nm.Forged = authres.Forged(ar, trusted)
	if _, domain, ok := strings.Cut(nm.From.Email, "@"); ok {
		nm.Authentic = authres.Authenticated(ar, trusted, domain)
	}
	store.MaskMessage(nm)
}

func addrs(as []mailparse.Address) []store.Address {
	out := make([]store.Address, 0, len(as))
	for _, a := range as {
		out = append(out, store.Address{Name: a.Name, Email: a.Email})
	}
	return out
}

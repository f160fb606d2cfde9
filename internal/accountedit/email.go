package accountedit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/discover"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/source/imap"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// Usage is a mistake of the command line found while reading what the flags mean (a flag that
// does not go with another, a name that is in no table).
type Usage struct{ msg string }

func (e *Usage) Error() string { return e.msg }

// ImapFlag is the flag that names an IMAP account (--imap), which --email fills.
var ImapFlag = imap.Kind.Flags.Names()[0].Name

// FromEmail fills a, an IMAP account, from what is found for the address email (account add
// --email): the providers table row named provider when one is, else a lookup (providers
// table, autoconfig, SRV records), none when the flags given name both servers. Every field
// whose flag was given is left (the flags are applied afterwards and win). It returns what was
// found, nil when nothing was looked up.
func FromEmail(ctx context.Context, email, provider string, given func(string) bool, a *config.Account) (*discover.Found, error) {
	if chosen := KindFlags(given); len(chosen) > 0 && chosen[0] != "--"+ImapFlag {
		return nil, &Usage{fmt.Sprintf("--email finds IMAP and SMTP servers; it does not go with %s", chosen[0])}
	}
	if _, _, err := discover.Split(email); err != nil {
		return nil, &Usage{err.Error()}
	}
	var found *discover.Found
	switch {
	case given("provider"):
		p := discover.Provider(provider)
		if p == nil {
			ids := make([]string, len(generated.Providers))
			for i, p := range generated.Providers {
				ids[i] = p.ID
			}
			msg := fmt.Sprintf("no provider %q in the providers table", provider)
			if near := search.Nearest(provider, ids); len(near) > 0 {
				return nil, &Usage{msg + "; did you mean " + strings.Join(near, " or ") + "? The ids are " + strings.Join(ids, ", ")}
			}
			return nil, &Usage{msg + "; the ids are " + strings.Join(ids, ", ")}
		}
		found = discover.FromProvider(p, email)
	case given(ImapFlag) && given("smtp"):
	default:
		opt, err := discover.EnvOptions()
		if err != nil {
			return nil, err
		}
		f, _, err := discover.Lookup(ctx, email, opt)
		var nf *discover.NotFoundError
		switch {
		case errors.As(err, &nf) && given(ImapFlag):
		case errors.As(err, &nf):
			return nil, fmt.Errorf("%s; pass the servers from your provider's help pages: --imap HOST:PORT --tls implicit|starttls and, to send, --smtp HOST:PORT --smtp-tls implicit|starttls", termsafe.Line(nf.Error()))
		case err != nil:
			return nil, err
		}
		found = f
	}
	a.Kind = imap.KindName
	a.User = email
	if found != nil {
		if !given(ImapFlag) {
			a.Server, a.TLS, a.User = found.IMAP.Addr(), found.IMAP.TLS, found.IMAP.User
		}
		if found.SMTP != nil && !given("smtp") {
			a.SMTP, a.SMTPTLS = found.SMTP.Addr(), found.SMTP.TLS
			if found.SMTP.User != a.User {
				a.SMTPUser = found.SMTP.User
			}
		}
	}
	if !given("address") {
		a.Address = email
	}
	return found, nil
}

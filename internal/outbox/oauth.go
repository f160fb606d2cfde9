package outbox

import (
	"context"
	"errors"

	"github.com/emersion/go-smtp"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/oauth"
)

// WithAuth makes sa log in the way acct says: with OAuth2, or with the password kept in the
// OS keyring (unless smtp_password_cmd gives the SMTP one).
func WithAuth(acct config.Account, sa SMTPAccount) SMTPAccount {
	switch {
	case acct.OAuth2():
		sa.Token, sa.Mechanism, sa.Fix = oauth.NewTokens(acct).Token, acct.OAuth2Mechanism, oauth.Fix(acct)
	case acct.KeyringPassword() && acct.SMTPPasswordCmd == "":
		sa.Password = func(context.Context) (string, error) { return oauth.Password(acct.Name) }
	}
	return sa
}

// oauthAuth logs in with OAuth2: once with the token the account has, and, when the server
// refuses it (535), once more with a new one.
func (s *submission) oauthAuth() error {
	mech, err := oauth.Mechanism(s.a.Mechanism, s.c.SupportsAuth)
	if err != nil {
		return notSent(err, "account %s: the SMTP server %s: %v", s.a.Name, s.a.Server, err)
	}
	var se *smtp.SMTPError
	for attempt := range 2 {
		tok, err := s.a.Token(s.ctx, attempt > 0)
		if err != nil {
			return notSent(err, "%v", err)
		}
		err = s.c.Auth(oauth.Client(mech, s.a.User, tok))
		if err == nil {
			return nil
		}
		if !errors.As(err, &se) || (se.Code != 535 && se.Code != 534) {
			return s.refused(err, "the SMTP server %s refused the OAuth2 login (%s) of %s for account %s", s.a.Server, mech, s.a.User, s.a.Name)
		}
	}
	return notSent(se, "the SMTP server %s refused the OAuth2 login (%s) of %s for account %s even with a new access token (%d %s); check --smtp-user, or %s", s.a.Server, mech, s.a.User, s.a.Name, se.Code, oneLine(se.Message), s.a.Fix)
}

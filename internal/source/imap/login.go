package imap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/oauth"
)

// withAuth makes a log in the way s says: with OAuth2 (an access token from the token command
// or renewed from the saved refresh token), or with the password kept in the OS keyring.
func (a Account) withAuth(s Settings) Account {
	switch c := s.oauthAccount(); {
	case s.OAuth2():
		a.Token, a.Mechanism, a.Fix = oauth.NewTokens(c).Token, s.OAuth2Mechanism, oauth.Fix(c)
		a.Password = func(context.Context) (string, error) { // only ManageSieve still asks
			return "", fmt.Errorf("account %s logs in with OAuth2, which postern does not yet use for ManageSieve (server-side rules); manage those rules in your provider's settings", c.Name)
		}
	case s.KeyringPassword():
		a.Password = func(context.Context) (string, error) { return oauth.Password(c.Name) }
	}
	return a
}

// login logs in with the password, or with OAuth2 when a has a Token: once with the token it
// has, and, when the server refuses that, once more with a new one (an access token may be
// revoked or expire before the time it was given for).
func login(ctx context.Context, c *imapclient.Client, a Account) error {
	if a.Token != nil {
		return oauthLogin(ctx, c, a)
	}
	pw, err := a.Password(ctx)
	if err != nil {
		return err
	}
	if err := c.Login(a.User, pw).Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ie *imap.Error
		if errors.As(err, &ie) {
			return fmt.Errorf("the server %s refused the login of %s for account %s (%s); check --user and what --password-cmd prints", a.Server, a.User, a.Name, strings.TrimSpace(ie.Text))
		}
		return dialError(a, err)
	}
	return nil
}

func oauthLogin(ctx context.Context, c *imapclient.Client, a Account) error {
	caps := c.Caps()
	mech, err := oauth.Mechanism(a.Mechanism, func(m string) bool { return caps.Has(imap.Cap("AUTH=" + m)) })
	if err != nil {
		return fmt.Errorf("account %s: %s: %w", a.Name, a.Server, err)
	}
	var last *imap.Error
	for attempt := range 2 {
		tok, err := a.Token(ctx, attempt > 0)
		if err != nil {
			return err
		}
		err = c.Authenticate(oauth.Client(mech, a.User, tok))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.As(err, &last) {
			return dialError(a, err)
		}
	}
	return fmt.Errorf("the server %s refused the OAuth2 login (%s) of %s for account %s even with a new access token (%s); check --user, or %s", a.Server, mech, a.User, a.Name, strings.TrimSpace(last.Text), a.Fix)
}

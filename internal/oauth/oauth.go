// Package oauth is how postern logs in to IMAP and SMTP servers with OAuth2 (SASL XOAUTH2 and
// OAUTHBEARER), and where it keeps the secrets such logins need: an account's OAuth2 tokens
// and a password the person chose to keep in the OS keyring. The authorization code flow
// (PKCE, a loopback redirect) and the token renewals are golang.org/x/oauth2's; the keyring is
// github.com/zalando/go-keyring's (Secret Service, Keychain, Credential Manager), with a 0600
// file only where no keyring can be used.
//
// It never prints, logs or puts in an error a token, a client secret or a password, and no
// tool reaches it: only the person's own commands (postern account …, postern sync, a send
// they approved) do.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/secret"
)

// early is how long before its expiry an access token is renewed.
const early = 2 * time.Minute

// Reauthorize is the command that authorises account again.
func Reauthorize(account string) string { return "postern account oauth " + account }

// Fix is what to do when a server refuses even a new access token of a.
func Fix(a config.Account) string {
	if strings.TrimSpace(a.OAuth2TokenCmd) != "" {
		return "check what its --oauth2-token-cmd prints"
	}
	return "authorise it again with " + Reauthorize(a.Name)
}

// Config is the OAuth2 client of a, with the client secret saved with its tokens.
func Config(a config.Account, clientSecret string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     a.OAuth2ClientID,
		ClientSecret: clientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: a.OAuth2AuthURL, TokenURL: a.OAuth2TokenURL},
		Scopes:       a.OAuth2Scopes,
	}
}

// Tokens gives the access tokens of one account for one process: from its oauth2_token_cmd,
// or renewed from its saved refresh token before they expire. It is safe for concurrent use.
type Tokens struct {
	a  config.Account
	mu sync.Mutex
}

// NewTokens gives the access tokens of a, which logs in with OAuth2.
func NewTokens(a config.Account) *Tokens { return &Tokens{a: a} }

// Token is an access token for a login. fresh asks for a new one, after the server refused
// the last: the token command is run again, or the refresh token used even though the saved
// access token has not expired.
func (t *Tokens) Token(ctx context.Context, fresh bool) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.a
	if strings.TrimSpace(a.OAuth2TokenCmd) != "" {
		return secret.Command(ctx, a.Name, "OAuth2 token command", "access token", a.OAuth2TokenCmd)
	}
	// One renewal at a time across processes (a server and postern sync, say): a server that
	// rotates refresh tokens would otherwise see the loser's old one as revoked. The tokens are
	// read under the lock, so the one that waited takes what the other saved.
	unlock, err := lockTokens(a.Name)
	if err != nil {
		return "", err
	}
	defer unlock()
	saved, err := LoadToken(a.Name)
	if err != nil {
		return "", err
	}
	if !fresh && saved.AccessToken != "" && (saved.Expiry.IsZero() || time.Until(saved.Expiry) > early) {
		return saved.AccessToken, nil
	}
	if saved.RefreshToken == "" {
		return "", fmt.Errorf("account %s has no refresh token to renew its expired OAuth2 access token; authorise it again with %s", a.Name, Reauthorize(a.Name))
	}
	if a.OAuth2TokenURL == "" || a.OAuth2ClientID == "" {
		return "", fmt.Errorf("account %s has no oauth2_token_url or oauth2_client_id to renew its OAuth2 token with; set them with %s --oauth2-token-url URL --oauth2-client-id ID", a.Name, Reauthorize(a.Name))
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tok, err := Config(a, saved.ClientSecret).TokenSource(ctx, &oauth2.Token{RefreshToken: saved.RefreshToken}).Token()
	if err != nil {
		return "", refreshError(a, err)
	}
	saved.AccessToken, saved.Expiry = tok.AccessToken, tok.Expiry
	if tok.RefreshToken != "" {
		saved.RefreshToken = tok.RefreshToken // the server rotates them
	}
	if _, err := SaveToken(a.Name, saved); err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// refreshError says in one sentence why a renewal failed and what to do, never repeating the
// server's answer whole (it is not ours to show), only its error code.
func refreshError(a config.Account, err error) error {
	host := a.OAuth2TokenURL
	if u, perr := url.Parse(a.OAuth2TokenURL); perr == nil && u.Host != "" {
		host = u.Host
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" && re.Response != nil {
			code = re.Response.Status
		}
		return fmt.Errorf("%s refused to renew the OAuth2 token of account %s (%s: the authorisation was revoked or has expired); authorise it again with %s", host, a.Name, code, Reauthorize(a.Name))
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("renewing the OAuth2 token of account %s at %s was stopped (%v); try again", a.Name, host, err)
	}
	return fmt.Errorf("cannot reach %s to renew the OAuth2 token of account %s; check the network and try again, or authorise it again with %s", host, a.Name, Reauthorize(a.Name))
}

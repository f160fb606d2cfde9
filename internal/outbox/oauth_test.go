package outbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/postern-mcp/postern/internal/oauth"
)

// Mailpit takes no OAuth2 logins (AUTH PLAIN, LOGIN and CRAM-MD5 only), so these tests run a
// real SMTP server from go-smtp (the library postern's client is from) on 127.0.0.1 that takes
// XOAUTH2 and OAUTHBEARER and accepts one token.

type oauthBackend struct {
	mu       sync.Mutex
	good     string // the token it accepts
	mechs    []string
	logins   []string // mechanism:user of each accepted login
	messages [][]byte
}

func (b *oauthBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return &oauthSession{b: b}, nil }

type oauthSession struct {
	b    *oauthBackend
	user string
}

func (s *oauthSession) AuthMechanisms() []string { return s.b.mechs }

func (s *oauthSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, token string) error {
		s.b.mu.Lock()
		defer s.b.mu.Unlock()
		if token != s.b.good {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "token refused"}
		}
		s.user = user
		s.b.logins = append(s.b.logins, mech+":"+user)
		return nil
	}
	switch mech {
	case oauth.OAuthBearer:
		return bearer535{sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			if check(o.Username, o.Token) != nil {
				return &sasl.OAuthBearerError{Status: "invalid_token"}
			}
			return nil
		})}, nil
	case oauth.XOAuth2:
		return xoauth2Server(check), nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

// bearer535 ends a refused OAUTHBEARER login with 535, as Gmail and Dovecot do (go-smtp's
// server would say 454 for go-sasl's error).
type bearer535 struct{ sasl.Server }

func (b bearer535) Next(resp []byte) ([]byte, bool, error) {
	ch, done, err := b.Server.Next(resp)
	var be *sasl.OAuthBearerError
	if errors.As(err, &be) {
		err = &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "token refused"}
	}
	return ch, done, err
}

// xoauth2Server reads "user=U^Aauth=Bearer T^A^A".
type xoauth2Server func(user, token string) error

func (f xoauth2Server) Next(resp []byte) ([]byte, bool, error) {
	var user, token string
	for _, kv := range strings.Split(string(resp), "\x01") {
		if v, ok := strings.CutPrefix(kv, "user="); ok {
			user = v
		}
		if v, ok := strings.CutPrefix(kv, "auth=Bearer "); ok {
			token = v
		}
	}
	return nil, true, f(user, token)
}

func (s *oauthSession) Mail(string, *smtp.MailOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	return nil
}
func (s *oauthSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *oauthSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	s.b.mu.Lock()
	s.b.messages = append(s.b.messages, b)
	s.b.mu.Unlock()
	return err
}
func (s *oauthSession) Reset()        {}
func (s *oauthSession) Logout() error { return nil }

func startOAuthSMTP(t *testing.T, b *oauthBackend) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := smtp.NewServer(b)
	srv.AllowInsecureAuth = true // loopback, as postern allows
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// An SMTP login with OAuth2, by each mechanism: a token the server refuses is renewed once
// and the message goes; a renewal that fails sends nothing and says why.
func TestSendOAuth2(t *testing.T) {
	raw := []byte("From: sam@example.com\r\nTo: bob@example.org\r\nSubject: hi\r\n\r\nHello.\r\n")
	for _, mech := range []string{oauth.XOAuth2, oauth.OAuthBearer} {
		t.Run(mech, func(t *testing.T) {
			b := &oauthBackend{good: "at-good", mechs: []string{mech}}
			addr := startOAuthSMTP(t, b)
			var asked []bool
			a := SMTPAccount{Name: "work", Server: addr, TLS: "none", User: "sam@example.com", Fix: "authorise it again with postern account oauth work",
				Token: func(_ context.Context, fresh bool) (string, error) {
					asked = append(asked, fresh)
					if fresh {
						return "at-good", nil
					}
					return "at-stale", nil
				}}
			if err := Send(context.Background(), a, "sam@example.com", []string{"bob@example.org"}, raw); err != nil {
				t.Fatal(err)
			}
			if len(asked) != 2 || asked[0] || !asked[1] || len(b.logins) != 1 || b.logins[0] != mech+":sam@example.com" || len(b.messages) != 1 || !bytes.Contains(b.messages[0], []byte("Hello.")) {
				t.Fatalf("tokens asked %v, logins %v, %d messages", asked, b.logins, len(b.messages))
			}

			revoked := errors.New("example.com refused to renew the OAuth2 token of account work (invalid_grant: the authorisation was revoked or has expired); authorise it again with postern account oauth work")
			a.Token = func(_ context.Context, fresh bool) (string, error) {
				if fresh {
					return "", revoked
				}
				return "at-stale", nil
			}
			err := Send(context.Background(), a, "sam@example.com", []string{"bob@example.org"}, raw)
			if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "postern account oauth work") || len(b.messages) != 1 {
				t.Fatalf("a revoked renewal: %v (%d messages)", err, len(b.messages))
			}
			a.Token = func(context.Context, bool) (string, error) { return "at-stale", nil }
			err = Send(context.Background(), a, "sam@example.com", []string{"bob@example.org"}, raw)
			if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "even with a new access token") {
				t.Fatalf("a token refused twice: %v", err)
			}
		})
	}
}

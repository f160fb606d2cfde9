package imaptest

import (
	"testing"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/oauth"
	"github.com/postern-mcp/postern/internal/testing/oauthtest"
)

// The oauth2 passdb takes a token the authorization server says is active, by either
// mechanism, and refuses one it says is not, or another user's.
func TestOAuth2Passdb(t *testing.T) {
	as := oauthtest.Start(t)
	s := NewServerWith(t, Options{OAuth2IntrospectionURL: as.IntrospectURL()})
	u := s.NewUser(t)
	other := s.NewUser(t)
	for _, mech := range []string{oauth.XOAuth2, oauth.OAuthBearer} {
		try := func(user, tok string) error {
			c, err := imapclient.DialInsecure(s.Addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			return c.Authenticate(oauth.Client(mech, user, tok))
		}
		if err := try(u.Name, as.Issue(u.Name)); err != nil {
			t.Fatalf("%s with an active token: %v", mech, err)
		}
		if err := try(u.Name, as.Issue(other.Name)); err == nil {
			t.Fatalf("%s with another user's token logged in", mech)
		}
		tok := as.Issue(u.Name)
		as.ExpireAccess()
		if err := try(u.Name, tok); err == nil {
			t.Fatalf("%s with an expired token logged in", mech)
		}
	}
}

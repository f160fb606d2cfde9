package oauth

import (
	"fmt"
	"strings"

	"github.com/emersion/go-sasl"
)

// SASL mechanism names as servers announce them.
const (
	XOAuth2     = "XOAUTH2"
	OAuthBearer = "OAUTHBEARER"
)

// Mechanism is the SASL mechanism a login uses: want (oauth2_mechanism) when set and offered,
// else OAUTHBEARER (RFC 7628) when offered, else XOAUTH2. offers says whether the server
// announces a mechanism.
func Mechanism(want string, offers func(mech string) bool) (string, error) {
	if want != "" {
		m := strings.ToUpper(want)
		if !offers(m) {
			return "", fmt.Errorf("the server does not offer %s (oauth2_mechanism); remove oauth2_mechanism to use what it offers", m)
		}
		return m, nil
	}
	for _, m := range []string{OAuthBearer, XOAuth2} {
		if offers(m) {
			return m, nil
		}
	}
	return "", fmt.Errorf("the server offers no OAuth2 login (SASL %s or %s); check the server's address, or log in with a password", OAuthBearer, XOAuth2)
}

// Client is the SASL client of mech for user with an access token.
func Client(mech, user, token string) sasl.Client {
	if mech == OAuthBearer {
		return oauthBearer{sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: user, Token: token})}
	}
	return &xoauth2{user: user, token: token}
}

// xoauth2 is Google's and Microsoft's XOAUTH2 SASL mechanism, written here because go-sasl
// has OAUTHBEARER only (XOAUTH2 is Google's, in no RFC), and Microsoft 365 accepts XOAUTH2
// alone. The initial response is "user=U^Aauth=Bearer T^A^A"; a failure comes
// as a challenge (a JSON status), answered with an empty response so that the server ends the
// exchange with its error.
type xoauth2 struct{ user, token string }

func (c *xoauth2) Start() (string, []byte, error) {
	return XOAuth2, []byte("user=" + c.user + "\x01auth=Bearer " + c.token + "\x01\x01"), nil
}

func (c *xoauth2) Next([]byte) ([]byte, error) { return []byte{}, nil }

// oauthBearer is go-sasl's OAUTHBEARER client answering a server's error challenge as RFC 7628
// (3.2.3) says, with a single ^A, so that the server ends the exchange with its own refusal
// (IMAP NO, SMTP 535), which a login renews the token after; go-sasl's client instead returns
// the challenge as an error, which aborts the exchange ("*") and looks like a broken
// connection.
type oauthBearer struct{ sasl.Client }

func (c oauthBearer) Next([]byte) ([]byte, error) { return []byte{0x01}, nil }

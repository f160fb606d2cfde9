package discover

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
)

// Test hooks: they point discovery at servers on this computer, for the tests of account add
// --email. Nothing else sets them, and each is refused unless it names 127.0.0.1, ::1 or
// localhost, so that they cannot send a lookup elsewhere in clear.
const (
	// AutoconfigURLEnv replaces the autoconfig documents looked at: URLs separated by spaces,
	// with {domain} and {email} filled in; plain http is allowed.
	AutoconfigURLEnv = "POSTERN_AUTOCONFIG_URL"
	// DNSServerEnv is HOST:PORT of the DNS server SRV records are asked of.
	DNSServerEnv = "POSTERN_DNS_SERVER"
)

// EnvOptions are the lookups' options: the real places, unless a test hook is set.
func EnvOptions() (Options, error) {
	var o Options
	if v := os.Getenv(AutoconfigURLEnv); v != "" {
		for _, u := range strings.Fields(v) {
			pu, err := url.Parse(strings.NewReplacer("{domain}", "x", "{email}", "x").Replace(u))
			if err != nil || !config.Loopback(pu.Hostname()) {
				return o, fmt.Errorf("%s is for tests and must name this computer (http://127.0.0.1:PORT/…), not %q; unset it", AutoconfigURLEnv, u)
			}
		}
		o.AutoconfigURLs, o.AllowHTTP = strings.Fields(v), true
	}
	if v := os.Getenv(DNSServerEnv); v != "" {
		host, _, err := net.SplitHostPort(v)
		if err != nil || !config.Loopback(host) {
			return o, fmt.Errorf("%s is for tests and must be 127.0.0.1:PORT, not %q; unset it", DNSServerEnv, v)
		}
		o.Resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, v)
		}}
	}
	return o, nil
}

// SignIn says how the servers take a login, from the table's row or the document's
// authentication elements; empty when the source does not say.
func (f *Found) SignIn() string {
	words := map[string]string{generated.AuthPassword: "your password", generated.AuthAppPassword: "an app password", generated.AuthOAuth2: "OAuth2"}
	var ways []string
	for _, m := range f.Auth {
		ways = append(ways, words[m])
	}
	if len(ways) == 0 {
		return ""
	}
	s := "Sign-in: " + strings.Join(ways, " or ")
	if len(ways) == 1 && f.Auth[0] == generated.AuthOAuth2 {
		s += " only (a password is refused)"
	}
	s += "."
	if p := f.Provider; p != nil {
		if p.OAuth2 != nil && p.OAuth2.BringClientID {
			s += " For OAuth2 the client id is yours to register with " + p.Name + "."
		}
		if p.AppPassword != "" {
			s += " App password: " + p.AppPassword
		}
	}
	return s
}

// FillOAuth2 gives an OAuth2 account the endpoints and scopes of the provider found (f may be
// nil), where the person's flags left them out (the client id is the person's to bring, or
// the flag's).
func (f *Found) FillOAuth2(a *config.Account) {
	if f == nil || f.Provider == nil || f.Provider.OAuth2 == nil || a.Auth != config.AuthOAuth2 {
		return
	}
	p := f.Provider.OAuth2
	if a.OAuth2AuthURL == "" {
		a.OAuth2AuthURL = p.AuthURL
	}
	if a.OAuth2TokenURL == "" {
		a.OAuth2TokenURL = p.TokenURL
	}
	if len(a.OAuth2Scopes) == 0 {
		a.OAuth2Scopes = append([]string(nil), p.Scopes...)
	}
}

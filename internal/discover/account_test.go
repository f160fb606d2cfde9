package discover

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
)

// TestFillOAuth2: an OAuth2 account found in the providers table gets the provider's endpoints
// and scopes, unless the person's flags gave them; a password account gets none.
func TestFillOAuth2(t *testing.T) {
	var gmail *generated.ProviderSpec
	for i := range generated.Providers {
		if generated.Providers[i].OAuth2 != nil && len(generated.Providers[i].OAuth2.Scopes) > 0 {
			gmail = &generated.Providers[i]
			break
		}
	}
	if gmail == nil {
		t.Fatal("no provider with OAuth2 in the table")
	}
	found := &Found{Provider: gmail}
	a := config.Account{Auth: config.AuthOAuth2}
	found.FillOAuth2(&a)
	if a.OAuth2AuthURL != gmail.OAuth2.AuthURL || a.OAuth2TokenURL != gmail.OAuth2.TokenURL || len(a.OAuth2Scopes) != len(gmail.OAuth2.Scopes) {
		t.Fatalf("filled %+v from %+v", a, gmail.OAuth2)
	}
	own := config.Account{Auth: config.AuthOAuth2, OAuth2TokenURL: "https://mine.example/token"}
	found.FillOAuth2(&own)
	if own.OAuth2TokenURL != "https://mine.example/token" {
		t.Fatalf("the person's token URL was replaced: %s", own.OAuth2TokenURL)
	}
	pw := config.Account{PasswordCmd: "cat pw"}
	found.FillOAuth2(&pw)
	if pw.OAuth2AuthURL != "" {
		t.Fatal("a password account got OAuth2 endpoints")
	}
}

func TestSignIn(t *testing.T) {
	if s := (&Found{}).SignIn(); s != "" {
		t.Fatalf("nothing known: %q", s)
	}
	s := (&Found{Auth: []string{generated.AuthOAuth2}}).SignIn()
	if s != "Sign-in: OAuth2 only (a password is refused)." {
		t.Fatalf("OAuth2 only: %q", s)
	}
	s = (&Found{Auth: []string{generated.AuthPassword, generated.AuthAppPassword}}).SignIn()
	if s != "Sign-in: your password or an app password." {
		t.Fatalf("passwords: %q", s)
	}
}

// The test hooks only ever point at this computer.
func TestEnvOptionsRefuseElsewhere(t *testing.T) {
	t.Setenv(AutoconfigURLEnv, "http://autoconfig.example.org/x")
	if _, err := EnvOptions(); err == nil || !strings.Contains(err.Error(), "must name this computer") {
		t.Fatalf("autoconfig elsewhere: %v", err)
	}
	t.Setenv(AutoconfigURLEnv, "http://127.0.0.1:8080/{domain}")
	t.Setenv(DNSServerEnv, "8.8.8.8:53")
	if _, err := EnvOptions(); err == nil || !strings.Contains(err.Error(), "must be 127.0.0.1:PORT") {
		t.Fatalf("DNS elsewhere: %v", err)
	}
	t.Setenv(DNSServerEnv, "127.0.0.1:5353")
	o, err := EnvOptions()
	if err != nil || !o.AllowHTTP || len(o.AutoconfigURLs) != 1 || o.Resolver == nil {
		t.Fatalf("loopback hooks: %+v, %v", o, err)
	}
}

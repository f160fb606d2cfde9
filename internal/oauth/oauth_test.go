package oauth

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/testing/oauthtest"
)

func account(as *oauthtest.Server) config.Account {
	return config.Account{Name: "work", Kind: "imap", User: "sam", Auth: config.AuthOAuth2,
		OAuth2ClientID: as.ClientID, OAuth2AuthURL: as.AuthURL(), OAuth2TokenURL: as.TokenURL()}
}

func isolate(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
}

// A token is kept in the keyring when there is one, and in a 0600 file, said so, when not.
func TestSaveTokenWhere(t *testing.T) {
	isolate(t)
	keyring.MockInit()
	w, err := SaveToken("work", Saved{RefreshToken: "rt-1"})
	if err != nil || w.File != "" || !strings.Contains(w.Sentence(), "OS keyring") {
		t.Fatalf("with a keyring: %+v %v", w, err)
	}
	if s, err := LoadToken("work"); err != nil || s.RefreshToken != "rt-1" {
		t.Fatalf("LoadToken: %+v %v", s, err)
	}
	keyring.MockInitWithError(errors.New("no secret service"))
	w, err = SaveToken("work", Saved{RefreshToken: "rt-2"})
	if err != nil || w.File != TokenFile("work") || !strings.Contains(w.Sentence(), "no secret service") || !strings.Contains(w.Sentence(), "0600") {
		t.Fatalf("without a keyring: %+v %v", w, err)
	}
	if fi, err := os.Stat(w.File); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v %v", fi, err)
	}
	if s, err := LoadToken("work"); err != nil || s.RefreshToken != "rt-2" {
		t.Fatalf("LoadToken from the file: %+v %v", s, err)
	}
	if err := DeleteToken("work"); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadToken("work"); err == nil || !strings.Contains(err.Error(), "postern account oauth work") {
		t.Fatalf("after DeleteToken: %v", err)
	}
}

// An access token is used until shortly before it expires, then renewed; fresh renews it at
// once; a revoked refresh token says which command authorises again.
func TestTokenRenewal(t *testing.T) {
	isolate(t)
	keyring.MockInit()
	as := oauthtest.Start(t)
	a := account(as)
	ctx := context.Background()
	if _, err := SaveToken("work", Saved{AccessToken: "at-old", RefreshToken: mustRefresh(t, as), Expiry: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	tk := NewTokens(a)
	if got, err := tk.Token(ctx, false); err != nil || got != "at-old" {
		t.Fatalf("a valid token: %q %v", got, err)
	}
	before := as.Refreshes()
	got, err := tk.Token(ctx, true)
	if err != nil || got == "at-old" || as.Refreshes() != before+1 {
		t.Fatalf("fresh: %q %v, %d renewals", got, err, as.Refreshes()-before)
	}
	s, _ := LoadToken("work")
	s.Expiry = time.Now().Add(time.Minute) // within early
	SaveToken("work", s)
	if got2, err := tk.Token(ctx, false); err != nil || got2 == got {
		t.Fatalf("a token about to expire was not renewed: %v", err)
	}
	as.RevokeRefresh()
	_, err = tk.Token(ctx, true)
	if err == nil || !strings.Contains(err.Error(), "postern account oauth work") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("revoked: %v", err)
	}
	for _, secret := range as.Secrets() {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the error shows a token")
		}
	}
}

// TestConcurrentRenewals: two processes' worth of Tokens renewing an expired token at once,
// against a server that rotates refresh tokens (the old one dies at each renewal), both get a
// token: the lock makes the second take what the first saved instead of spending a dead one.
func TestConcurrentRenewals(t *testing.T) {
	isolate(t)
	keyring.MockInit()
	as := oauthtest.Start(t)
	a := account(as)
	if _, err := SaveToken("work", Saved{AccessToken: "at-old", RefreshToken: mustRefresh(t, as), Expiry: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			_, err := NewTokens(a).Token(context.Background(), false)
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("a concurrent renewal failed: %v", err)
		}
	}
	if n := as.Refreshes(); n != 1 {
		t.Fatalf("%d renewals for one expired token", n)
	}
}

// mustRefresh is a refresh token from as, got through the flow.
func mustRefresh(t *testing.T, as *oauthtest.Server) string {
	t.Helper()
	saved, err := authorizeHeadless(t, as)
	if err != nil {
		t.Fatal(err)
	}
	return saved.RefreshToken
}

// A token command is run for each token, again when fresh; its failure says so.
func TestTokenCommand(t *testing.T) {
	a := config.Account{Name: "work", Auth: config.AuthOAuth2, OAuth2TokenCmd: "echo at-from-helper"}
	if got, err := NewTokens(a).Token(context.Background(), true); err != nil || got != "at-from-helper" {
		t.Fatalf("%q %v", got, err)
	}
	a.OAuth2TokenCmd = "exit 3"
	if _, err := NewTokens(a).Token(context.Background(), false); err == nil || !strings.Contains(err.Error(), "OAuth2 token command of account work failed") {
		t.Fatalf("%v", err)
	}
}

// The password kept in the keyring is read back; without a keyring there is no file fallback.
func TestKeyringPassword(t *testing.T) {
	keyring.MockInit()
	if err := SavePassword("work", "hunter2"); err != nil {
		t.Fatal(err)
	}
	if pw, err := Password("work"); err != nil || pw != "hunter2" {
		t.Fatalf("%q %v", pw, err)
	}
	DeletePassword("work")
	if _, err := Password("work"); err == nil || !strings.Contains(err.Error(), "--keyring") {
		t.Fatalf("%v", err)
	}
	keyring.MockInitWithError(errors.New("no secret service"))
	if err := SavePassword("work", "hunter2"); err == nil || !strings.Contains(err.Error(), "--password-cmd") {
		t.Fatalf("%v", err)
	}
}

func TestMechanism(t *testing.T) {
	both := func(string) bool { return true }
	only := func(m string) bool { return m == XOAuth2 }
	none := func(string) bool { return false }
	for _, c := range []struct {
		want   string
		offers func(string) bool
		got    string
	}{{"", both, OAuthBearer}, {"", only, XOAuth2}, {config.MechXOAuth2, both, XOAuth2}, {config.MechOAuthBearer, only, ""}, {"", none, ""}} {
		got, err := Mechanism(c.want, c.offers)
		if got != c.got || (c.got == "") != (err != nil) {
			t.Errorf("Mechanism(%q): %q %v; want %q", c.want, got, err, c.got)
		}
	}
	mech, ir, _ := Client(XOAuth2, "sam@example.com", "tok").Start()
	if mech != XOAuth2 || string(ir) != "user=sam@example.com\x01auth=Bearer tok\x01\x01" {
		t.Errorf("XOAUTH2 initial response %q", ir)
	}
}

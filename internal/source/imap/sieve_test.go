package imap

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

func sieveAccount(t *testing.T, u *imaptest.User, tlsMode, password string) Account {
	return Account{
		Name: "test", Server: u.Server.Addr, User: u.Name, TLS: tlsMode,
		Password:  func(context.Context) (string, error) { return password, nil },
		TLSConfig: &tls.Config{RootCAs: u.Server.CertPool(t)},
	}
}

// Against Pigeonhole's ManageSieve, over STARTTLS with the certificate checked: store,
// list, read back byte for byte, activate; a script with errors is refused with the
// server's reason and nothing is stored.
func TestScriptsAgainstPigeonhole(t *testing.T) {
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	u := srv.NewUser(t)
	ctx := context.Background()
	st, err := DialScripts(ctx, sieveAccount(t, u, "starttls", u.Password), srv.ManageSieveAddr)
	if err != nil {
		t.Fatalf("DialScripts: %v", err)
	}
	defer st.Close()
	if !st.Capabilities().Has("fileinto") || !st.Capabilities().Has("imap4flags") {
		t.Errorf("extensions %v lack fileinto or imap4flags", st.Extensions())
	}
	list, active, err := st.Scripts(ctx)
	if err != nil || len(list) != 0 || active != "" {
		t.Fatalf("a new user's scripts: %v, %q, %v", list, active, err)
	}
	text := "# a \"quoted\" comment \\ with a backslash\r\nrequire \"fileinto\";\r\nif header :contains \"subject\" \"x\" { fileinto \"X\"; }\r\n"
	if err := st.Put(ctx, "mine", text); err != nil {
		t.Fatalf("Put: %v", err)
	}
	bad := "require \"fileinto\";\nfileintoo \"x\";\n"
	if err := st.Check(ctx, bad); err == nil || !strings.Contains(err.Error(), "fileintoo") {
		t.Errorf("Check of a bad script: %v, want the server's reason naming fileintoo", err)
	}
	if err := st.Put(ctx, "bad", bad); err == nil || !strings.Contains(err.Error(), "fileintoo") {
		t.Errorf("Put of a bad script: %v, want the server's reason naming fileintoo", err)
	}
	if err := st.Activate(ctx, "mine"); err != nil {
		t.Fatalf("Activate: %v", err)
	}
	list, active, err = st.Scripts(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "mine" || !list[0].Active || active != "mine" {
		t.Fatalf("scripts after put and activate: %+v, %q, %v (the bad one must not be stored)", list, active, err)
	}
	got, err := st.Get(ctx, "mine")
	if err != nil || got != text {
		t.Fatalf("Get = %q, %v; want %q", got, err, text)
	}
	if _, err := st.Get(ctx, "missing"); err == nil {
		t.Error("Get of a missing script: no error")
	}
}

// tls none is allowed to loopback only; a wrong password is a sentence naming the account.
func TestDialScriptsRefusals(t *testing.T) {
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	u := srv.NewUser(t)
	ctx := context.Background()
	st, err := DialScripts(ctx, sieveAccount(t, u, "none", u.Password), srv.ManageSieveAddr)
	if err != nil {
		t.Fatalf("plain ManageSieve to loopback: %v", err)
	}
	st.Close()
	if _, err := DialScripts(ctx, sieveAccount(t, u, "none", u.Password), "192.0.2.1:4190"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("plain to a remote host: %v", err)
	}
	_, err = DialScripts(ctx, sieveAccount(t, u, "starttls", "wrong"), srv.ManageSieveAddr)
	if err == nil || !strings.Contains(err.Error(), "refused the login of "+u.Name) {
		t.Errorf("wrong password: %v", err)
	}
	// The IMAP port is not ManageSieve.
	if _, err := DialScripts(ctx, sieveAccount(t, u, "none", u.Password), srv.Addr); err == nil {
		t.Error("DialScripts to the IMAP port: no error")
	}
}

func TestSieveAddr(t *testing.T) {
	for _, tc := range []struct {
		a    config.Account
		want string
	}{
		{config.Account{Server: "imap.example.com:993"}, "imap.example.com:4190"},
		{config.Account{Server: "[::1]:143"}, "[::1]:4190"},
		{config.Account{Server: "imap.example.com:993", Sieve: "sieve.example.com:2000"}, "sieve.example.com:2000"},
	} {
		if got := SieveAddr(tc.a); got != tc.want {
			t.Errorf("SieveAddr(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}

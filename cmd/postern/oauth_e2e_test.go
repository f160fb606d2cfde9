package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/oauthtest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

// TestOAuth2Login: against a Dovecot whose oauth2 passdb asks a token server on 127.0.0.1,
// postern's own authorisation (PKCE, a loopback redirect whose state is checked) gives an
// account that syncs over XOAUTH2, and a token command one that syncs over OAUTHBEARER; an
// access token the server ended early is renewed once and the sync goes on; a revoked refresh
// token fails with the command that authorises again. With no OS keyring, the tokens are in a
// 0600 file, and postern says so. No token appears in any output, log, the store or the audit
// log.
func TestOAuth2Login(t *testing.T) {
	as := oauthtest.Start(t)
	srv := imaptest.NewServerWith(t, imaptest.Options{OAuth2IntrospectionURL: as.IntrospectURL()})
	u := srv.NewUser(t)
	u.AddMessage(t, "INBOX", testmsg.Plain("a@example.org", "sam@example.com", "", "first", "first@example.org"), "")
	env := append(home(t), "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent") // no keyring
	cfg := filepath.Join(t.TempDir(), "config.toml")
	var all bytes.Buffer // everything postern wrote, scanned for tokens at the end
	run := func(args ...string) (string, int) {
		t.Helper()
		out, errOut, code := runCLI(t, env, append(args, "--config", cfg)...)
		all.WriteString(out + errOut)
		return out + errOut, code
	}

	// postern account add --oauth2: the person opens the printed address; the provider sends
	// the browser back to postern's loopback address.
	as.ApproveAs(u.Name)
	out := authorizeCLI(t, env, as, &all, "account", "add", "work", "--imap", srv.Addr, "--tls", "none", "--user", u.Name,
		"--oauth2", "--oauth2-client-id", as.ClientID, "--oauth2-auth-url", as.AuthURL(), "--oauth2-token-url", as.TokenURL(),
		"--oauth2-scopes", "mail offline_access", "--oauth2-mechanism", "xoauth2", "--config", cfg)
	tokenFile := filepath.Join(envValue(env, "XDG_DATA_HOME"), "postern", "tokens", "work.json")
	if !strings.Contains(out, "No OS keyring could be used") || !strings.Contains(out, tokenFile) || !strings.Contains(out, "Added account work") {
		t.Fatalf("account add --oauth2 did not say where the tokens are, or did not add the account:\n%q", out)
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	conf, _ := os.ReadFile(cfg)
	if !strings.Contains(string(conf), `auth = "oauth2"`) || strings.Contains(string(conf), "at-") || strings.Contains(string(conf), "rt-") {
		t.Fatalf("the configuration does not say oauth2, or holds a token:\n%s", conf)
	}

	out, code := run("sync")
	if code != 0 || !strings.Contains(out, "1 new") {
		t.Fatalf("sync over XOAUTH2: exit %d\n%s", code, out)
	}

	// The server ends the access token early: the login is refused once, the token renewed
	// once, and the sync goes on.
	u.AddMessage(t, "INBOX", testmsg.Plain("a@example.org", "sam@example.com", "", "second", "second@example.org"), "")
	as.ExpireAccess()
	refreshes, refused := as.Refreshes(), as.Refused()
	out, code = run("sync")
	if code != 0 || !strings.Contains(out, "1 new") {
		t.Fatalf("sync after the access token expired: exit %d\n%s", code, out)
	}
	if as.Refreshes() != refreshes+1 || as.Refused() != refused+1 {
		t.Fatalf("renewals %d, refused logins %d; want one of each", as.Refreshes()-refreshes, as.Refused()-refused)
	}
	// A token about to expire is renewed before it is used: no login is refused.
	as.SetExpiresIn(30 * time.Second)
	as.ExpireAccess()
	run("sync") // renews, and gets a token that expires in 30 s
	refreshes, refused = as.Refreshes(), as.Refused()
	if out, code = run("sync"); code != 0 {
		t.Fatalf("sync with a token about to expire: exit %d\n%s", code, out)
	}
	if as.Refreshes() != refreshes+1 || as.Refused() != refused {
		t.Fatalf("renewals %d, refused logins %d; want one renewal before the login and no refusal", as.Refreshes()-refreshes, as.Refused()-refused)
	}
	as.SetExpiresIn(time.Hour)

	// An account whose token helper prints the token, over OAUTHBEARER.
	u2 := srv.NewUser(t)
	u2.AddMessage(t, "INBOX", testmsg.Plain("a@example.org", "sam@example.com", "", "helper", "helper@example.org"), "")
	tokFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokFile, []byte(as.Issue(u2.Name)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = run("account", "add", "helper", "--imap", srv.Addr, "--tls", "none", "--user", u2.Name,
		"--oauth2-token-cmd", "cat "+tokFile, "--oauth2-mechanism", "oauthbearer")
	if code != 0 {
		t.Fatalf("account add --oauth2-token-cmd: exit %d\n%s", code, out)
	}
	out, code = run("sync", "--account", "helper")
	if code != 0 || !strings.Contains(out, "1 new") {
		t.Fatalf("sync over OAUTHBEARER: exit %d\n%s", code, out)
	}
	// The helper's token ends: refused twice over OAUTHBEARER (the command run again gives the
	// same), which says to look at the helper; a new token from it works.
	as.ExpireAccess()
	out, code = run("sync", "--account", "helper")
	if code == 0 || !strings.Contains(out, "even with a new access token") || !strings.Contains(out, "--oauth2-token-cmd") {
		t.Fatalf("sync with an ended helper token: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(tokFile, []byte(as.Issue(u2.Name)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code = run("sync", "--account", "helper"); code != 0 {
		t.Fatalf("sync with the helper's new token: exit %d\n%s", code, out)
	}

	// account list and status never show a token command; config check finds no problem.
	for _, args := range [][]string{{"account", "list"}, {"account", "list", "--json"}, {"status"}, {"config", "check"}} {
		out, _ := run(args...)
		if strings.Contains(out, tokFile) || strings.Contains(out, "cat ") {
			t.Errorf("postern %s shows the token command:\n%s", strings.Join(args, " "), out)
		}
		if args[0] == "config" && !strings.Contains(out, "no problems") {
			t.Errorf("config check: %s", out)
		}
	}

	// Revoked: the renewal is refused, and the sentence says which command authorises again.
	as.RevokeRefresh()
	as.ExpireAccess()
	out, code = run("sync", "--account", "work")
	if code == 0 || !strings.Contains(out, "postern account oauth work") || !strings.Contains(out, "revoked") {
		t.Fatalf("sync with a revoked refresh token: exit %d, want a failure naming postern account oauth work:\n%s", code, out)
	}
	t.Logf("revoked: %s", out)
	// postern account oauth authorises it again.
	out = authorizeCLI(t, env, as, &all, "account", "oauth", "work", "--config", cfg)
	if !strings.Contains(out, "Authorised account work") {
		t.Fatalf("account oauth:\n%s", out)
	}
	u.AddMessage(t, "INBOX", testmsg.Plain("a@example.org", "sam@example.com", "", "third", "third@example.org"), "")
	if out, code = run("sync", "--account", "work"); code != 0 || !strings.Contains(out, "1 new") {
		t.Fatalf("sync after authorising again: exit %d\n%s", code, out)
	}

	// Every tool once, the log, the audit log and the store: no token, code or token command.
	scanTools(t, env, cfg, &all)
	logOut, _ := run("log", "--json")
	all.WriteString(logOut)
	tokensDir := filepath.Dir(tokenFile)
	for _, dir := range []string{filepath.Join(envValue(env, "XDG_STATE_HOME"), "postern"), filepath.Join(envValue(env, "XDG_DATA_HOME"), "postern")} {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() && p == tokensDir {
				return filepath.SkipDir // where the tokens belong
			}
			if err == nil && !info.IsDir() {
				b, _ := os.ReadFile(p)
				all.Write(b)
			}
			return nil
		})
	}
	secrets := as.Secrets()
	if len(secrets) < 8 {
		t.Fatalf("only %d tokens were issued", len(secrets))
	}
	for _, s := range secrets {
		if strings.Contains(all.String(), s) {
			t.Errorf("the token or code %s… appears in what postern wrote", s[:6])
		}
	}
	t.Logf("scanned %d bytes for %d tokens", all.Len(), len(secrets))
}

var authURLRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)

// authorizeCLI runs a postern command that authorises in the browser: it reads the address
// postern prints, shows that an answer with another state is refused, then opens the address
// as a browser would (the provider approves at once and redirects to postern's callback), and
// returns what postern wrote once it exits 0.
func authorizeCLI(t *testing.T, env []string, as *oauthtest.Server, all *bytes.Buffer, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	out := &watchedBuffer{re: authURLRE, found: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	found := out.found
	var authURL string
	select {
	case authURL = <-found:
	case err := <-done:
		t.Fatalf("postern %s exited (%v) before printing the address:\n%s", args[0], err, out.String())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("postern printed no authorisation address:\n%s", out.String())
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("state") == "" || !strings.HasPrefix(authURL, as.AuthURL()) {
		t.Fatalf("the authorisation address has no PKCE challenge or state: %s", authURL)
	}
	forged, _ := url.Parse(q.Get("redirect_uri"))
	forged.RawQuery = url.Values{"code": {"forged"}, "state": {"not-the-state"}}.Encode()
	if resp, err := http.Get(forged.String()); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an answer with another state: %v %v; want 400", err, resp)
	} else {
		resp.Body.Close()
	}
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatalf("the browser's visit: %v", err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "You can close this page") {
		t.Fatalf("the page after approving: %s", page)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("postern %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("postern did not finish after the approval:\n%s", out.String())
	}
	all.WriteString(out.String())
	return out.String()
}

// watchedBuffer keeps what a process writes and sends the first match of re on found.
type watchedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	re    *regexp.Regexp
	found chan string
	sent  bool
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if m := w.re.FindString(w.b.String()); m != "" && !w.sent {
		w.sent = true
		w.found <- m
	}
	return len(p), nil
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// scanTools calls every tool once with no arguments and adds what the server wrote to all.
func scanTools(t *testing.T, env []string, cfg string, all *bytes.Buffer) {
	t.Helper()
	var stdin bytes.Buffer
	stdin.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scan","version":"1"}}}` + "\n")
	for i, spec := range generated.Tools {
		fmt.Fprintf(&stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", i+1, spec.Name)
	}
	cmd := exec.Command(binary, "mcp", "--scopes", allScopes(), "--config", cfg)
	cmd.Env = env
	cmd.Stdin = &stdin
	cmd.Stdout, cmd.Stderr = all, all
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
}

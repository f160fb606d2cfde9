package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

func TestAccountCommands(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("# my settings\n[mcp]\nscopes = [\"read\"]\n"), 0o600)
	maildir := filepath.Join(dir, "Maildir")
	if _, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: 1, Messages: 30}); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		return runCLI(t, env, append(args, "--config", cfg)...)
	}
	if out, errOut, code := run("account", "add", "work", "--imap", "imap.example.com:993", "--user", "me@example.com", "--password-cmd", "pass show mail/work", "--smtp", "smtp.example.com:465", "--alias", "me@old.example.com", "--no-check"); code != 0 || !strings.Contains(out, "Added account work") {
		t.Fatalf("add imap: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := run("account", "add", "local", "--maildir", maildir); code != 0 {
		t.Fatalf("add maildir: %s", errOut)
	}
	for _, bad := range [][]string{
		{"account", "add", "work", "--maildir", maildir},                                                                 // duplicate
		{"account", "add", "x", "--imap", "imap.example.com:143", "--user", "u", "--password-cmd", "c", "--tls", "none"}, // plain to a remote host
		{"account", "add", "y", "--imap", "imap.example.com", "--user", "u", "--password-cmd", "c"},                      // no port
		{"account", "add", "z", "--maildir", dir},                                                                        // not a Maildir
		{"account", "add", "bad name!", "--maildir", maildir},
		{"account", "add", "s1", "--imap", "imap.example.com:993", "--user", "u", "--password-cmd", "c", "--smtp", "smtp.example.com:25", "--smtp-tls", "none"}, // plain SMTP to a remote host
		{"account", "add", "s2", "--imap", "imap.example.com:993", "--user", "u", "--password-cmd", "c", "--smtp", "smtp.example.com"},                          // no port
		{"account", "add", "s3", "--maildir", maildir, "--smtp", "smtp.example.com:465"},                                                                        // sending needs IMAP
		{"account", "add", "s4", "--imap", "imap.example.com:993", "--user", "u", "--password-cmd", "c", "--smtp-tls", "starttls"},                              // no --smtp
		{"account", "add", "s5", "--imap", "imap.example.com:993", "--user", "u", "--password-cmd", "c", "--address", "Me <me@example.com>"},                    // not a bare address
	} {
		if _, errOut, code := run(bad...); code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errOut)
		}
	}
	b, _ := os.ReadFile(cfg)
	if !strings.Contains(string(b), "# my settings") || !strings.Contains(string(b), `scopes = ["read"]`) {
		t.Fatalf("adding accounts lost the rest of the file:\n%s", b)
	}
	if st, _ := os.Stat(cfg); st.Mode().Perm() != 0o600 {
		t.Fatalf("config mode %v", st.Mode().Perm())
	}
	if _, errOut, code := run("sync", "--account", "local"); code != 0 {
		t.Fatalf("sync local: %s", errOut)
	}
	out, _, code := run("account", "list", "--json")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 {
		t.Fatalf("list: %d %q", code, out)
	}
	if strings.Contains(out, "pass show") {
		t.Fatalf("account list shows the password command: %s", out)
	}
	if rows[0]["smtp"] != "smtp.example.com:465" || rows[0]["smtp_tls"] != "implicit" || rows[0]["address"] != "me@example.com" {
		t.Fatalf("account list does not show how work sends: %v", rows[0])
	}
	if rows[1]["name"] != "local" || rows[1]["messages"] != float64(30) || rows[1]["last_sync"] == nil {
		t.Fatalf("local row: %v", rows[1])
	}
	if out, errOut, code := run("account", "remove", "local"); code != 0 || !strings.Contains(out, "30 messages") {
		t.Fatalf("remove: %d %q %q", code, out, errOut)
	}
	out, _, _ = run("account", "list", "--json")
	if strings.Contains(out, `"local"`) {
		t.Fatalf("removed account still listed: %s", out)
	}
	b, _ = os.ReadFile(cfg)
	if !strings.Contains(string(b), "# my settings") || !strings.Contains(string(b), `name = "work"`) || strings.Contains(string(b), "local") {
		t.Fatalf("remove changed the wrong parts of the file:\n%s", b)
	}
	if _, errOut, code := run("account", "remove", "local"); code == 0 || !strings.Contains(errOut, "The accounts are: work") {
		t.Fatalf("removing an unknown account: %d %q", code, errOut)
	}
	// Without --tls, port 143 is STARTTLS, and the output says the choice.
	if out, errOut, code := run("account", "add", "plain", "--imap", "imap.example.com:143", "--user", "u", "--password-cmd", "c", "--no-check"); code != 0 || !strings.Contains(out, "tls starttls (the default for port 143") {
		t.Fatalf("add on port 143: %d %q %q", code, out, errOut)
	}
}

// TestAccountAddChecksServer: account add logs in and lists the folders on the
// real Dovecot before it writes anything; a TLS failure says which --tls or
// --ca-file to try, and with --ca-file the account is added and syncs over
// verified TLS.
func TestAccountAddChecksServer(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	if _, err := corpus.WriteMaildir(u.Maildir, corpus.Options{Seed: 4, Messages: 12}); err != nil {
		t.Fatal(err)
	}
	u.FixOwnership(t)
	env := home(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(u.Password+"\n"), 0o600)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("wrong\n"), 0o600)
	ca := filepath.Join(srv.Dir, "tls", "cert.pem")
	add := func(name, server string, extra ...string) (string, string, int) {
		args := append([]string{"account", "add", name, "--imap", server, "--user", u.Name, "--password-cmd", "cat " + pw, "--config", cfg}, extra...)
		return runCLI(t, env, args...)
	}
	for _, c := range []struct {
		name, server string
		extra        []string
		want         string
	}{
		{"a", srv.Addr, []string{"--tls", "implicit"}, "try --tls starttls"},
		{"b", srv.TLSAddr, []string{"--tls", "implicit"}, "--ca-file PATH"},
		{"c", srv.TLSAddr, []string{"--tls", "implicit", "--ca-file", pw}, "no PEM certificate"},
		{"d", srv.Addr, []string{"--tls", "starttls"}, "--ca-file PATH"},
		{"e", srv.Addr, []string{"--tls", "none", "--password-cmd", "cat " + bad}, "refused the login"},
	} {
		out, errOut, code := add(c.name, c.server, c.extra...)
		if code != 1 || lines(errOut) != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s (%v): exit %d, stdout %q, stderr %q; want %q", c.name, c.extra, code, out, errOut, c.want)
		}
		if c.want != "no PEM certificate" && !strings.Contains(errOut, "Nothing was added") {
			t.Errorf("%s: the error does not say that nothing was added: %q", c.name, errOut)
		}
	}
	if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "[[accounts]]") {
		t.Fatalf("a failed check wrote the account:\n%s", b)
	}
	out, errOut, code := add("work", srv.TLSAddr, "--tls", "implicit", "--ca-file", ca, "--name", "Sam Rivera")
	if code != 0 || !strings.Contains(out, "Checked "+srv.TLSAddr+": logged in as "+u.Name) || !strings.Contains(out, "Added account work") {
		t.Fatalf("add with --ca-file: %d %q %q", code, out, errOut)
	}
	b, _ := os.ReadFile(cfg)
	if !strings.Contains(string(b), "tls_ca = \""+ca+"\"") || !strings.Contains(string(b), `display_name = "Sam Rivera"`) {
		t.Fatalf("the file lacks tls_ca or display_name:\n%s", b)
	}
	// sync honours tls_ca: the implicit TLS port is verified against it.
	if out, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 || !strings.Contains(out, "work: 12 new") {
		t.Fatalf("sync with tls_ca: %d %q %q", code, out, errOut)
	}
	// STARTTLS on the plain port with the CA: checked and added.
	if out, errOut, code := add("work2", srv.Addr, "--tls", "starttls", "--ca-file", ca); code != 0 || !strings.Contains(out, "Checked") {
		t.Fatalf("add starttls with --ca-file: %d %q %q", code, out, errOut)
	}
	// account set checks the server when the connection changes.
	if _, errOut, code := runCLI(t, env, "account", "set", "work2", "--ca-file", "", "--config", cfg); code != 1 || !strings.Contains(errOut, "--ca-file PATH") || !strings.Contains(errOut, "Nothing was changed") {
		t.Fatalf("set without the CA: %d %q", code, errOut)
	}
}

// TestMailSyncTool: the mail_sync tool syncs through the stdio server, and
// status and accounts then show the sync state.
func TestMailSyncTool(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	n, err := corpus.WriteMaildir(u.Maildir, corpus.Options{Seed: 13, Messages: 120})
	if err != nil {
		t.Fatal(err)
	}
	u.FixOwnership(t)
	env, cfg, _ := imapHome(t, u, srv.Addr, "none")
	s := startEnv(t, env, "--config", cfg)
	s.initialize("2025-11-25")
	r := result(t, s.rpc(1, "tools/call", map[string]any{"name": "mail_sync"}))
	sc := r["structuredContent"].(map[string]any)
	acct := sc["accounts"].([]any)[0].(map[string]any)
	if r["isError"] != false || acct["new"] != float64(n) || acct["error"] != nil {
		t.Fatalf("mail_sync: %v", r)
	}
	st := result(t, s.rpc(2, "tools/call", map[string]any{"name": "status"}))["structuredContent"].(map[string]any)
	row := st["accounts"].([]any)[0].(map[string]any)
	if row["messages"] != float64(n) || row["last_sync"] == nil {
		t.Fatalf("status after sync: %v", row)
	}
	text := callText(result(t, s.rpc(3, "tools/call", map[string]any{"name": "status"})))
	if strings.Contains(text, u.Password) || !strings.Contains(text, "messages: 120") || !strings.Contains(text, u.Name) {
		t.Fatalf("status: %q", text)
	}
	// A second mail_sync finds nothing new.
	r = result(t, s.rpc(4, "tools/call", map[string]any{"name": "mail_sync", "arguments": map[string]any{"account": "work"}}))
	if r["structuredContent"].(map[string]any)["accounts"].([]any)[0].(map[string]any)["new"] != float64(0) {
		t.Fatalf("second mail_sync: %v", r)
	}
	r = result(t, s.rpc(5, "tools/call", map[string]any{"name": "mail_sync", "arguments": map[string]any{"account": "nope"}}))
	if r["isError"] != true {
		t.Fatalf("mail_sync of an unknown account: %v", r)
	}
}

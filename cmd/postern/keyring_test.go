package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/postern-mcp/postern/internal/oauth"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

// In-process commands never reach the person's real keyring: tests that want one use the mock.
func init() { keyring.MockInitWithError(errors.New("no keyring in tests")) }

// account add --keyring keeps the password typed in the OS keyring (go-keyring's mock here:
// a unit test) and writes password = "keyring", never the password; sync logs in with it;
// account remove forgets it.
func TestAccountAddKeyring(t *testing.T) {
	inHome(t)
	keyring.MockInit()
	t.Cleanup(func() { keyring.MockInitWithError(errors.New("no keyring in tests")) })
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	u.AddMessage(t, "INBOX", testmsg.Plain("a@example.org", "sam@example.com", "", "hello", "k1@example.org"), "")
	cfg := filepath.Join(t.TempDir(), "config.toml")
	var out, errb bytes.Buffer
	code := run([]string{"account", "add", "work", "--imap", srv.Addr, "--tls", "none", "--user", u.Name, "--keyring", "--config", cfg},
		strings.NewReader(u.Password+"\n"), &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "is in the OS keyring") {
		t.Fatalf("account add --keyring: %d\n%s%s", code, out.String(), errb.String())
	}
	conf, _ := os.ReadFile(cfg)
	if !strings.Contains(string(conf), `password = "keyring"`) || strings.Contains(string(conf), u.Password) || strings.Contains(string(conf), "password_cmd") {
		t.Fatalf("the configuration:\n%s", conf)
	}
	if o, e, code := runHere("sync", "--config", cfg); code != 0 || !strings.Contains(o, "1 new") {
		t.Fatalf("sync with the keyring's password: %d\n%s%s", code, o, e)
	}
	if o, e, code := runHere("account", "remove", "work", "--config", cfg); code != 0 {
		t.Fatalf("account remove: %s%s", o, e)
	}
	if _, err := oauth.Password("work"); err == nil {
		t.Fatalf("account remove left the password in the keyring")
	}
}

// A wrong password typed with --keyring adds nothing and leaves nothing in the keyring.
func TestAccountAddKeyringWrongPassword(t *testing.T) {
	inHome(t)
	keyring.MockInit()
	t.Cleanup(func() { keyring.MockInitWithError(errors.New("no keyring in tests")) })
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	var out, errb bytes.Buffer
	code := run([]string{"account", "add", "work", "--imap", srv.Addr, "--tls", "none", "--user", u.Name, "--keyring", "--config", cfg},
		strings.NewReader("wrong\n"), &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "Nothing was added") {
		t.Fatalf("account add with a wrong password: %d\n%s%s", code, out.String(), errb.String())
	}
	if _, err := oauth.Password("work"); err == nil {
		t.Fatalf("the wrong password stayed in the keyring")
	}
}

// The real binary finds no keyring here (no Secret Service): --keyring refuses, names
// --password-cmd, and adds nothing.
func TestAccountAddKeyringWithoutKeyring(t *testing.T) {
	env := append(home(t), "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent")
	cfg := filepath.Join(t.TempDir(), "config.toml")
	cmd := exec.Command(binary, "account", "add", "work", "--imap", "127.0.0.1:1", "--tls", "none", "--user", "sam", "--keyring", "--no-check", "--config", cfg)
	cmd.Env = env
	cmd.Stdin = strings.NewReader("secret-typed\n")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "no OS keyring could be used") || !strings.Contains(string(b), "--password-cmd") {
		t.Fatalf("%v\n%s", err, b)
	}
	if _, err := os.Stat(cfg); err == nil {
		conf, _ := os.ReadFile(cfg)
		if strings.Contains(string(conf), "work") {
			t.Fatalf("the account was added:\n%s", conf)
		}
	}
}

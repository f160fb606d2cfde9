package oauth

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zalando/go-keyring"
)

// A password kept for an account that is then not saved is put back as it was: the old one
// again, or none.
func TestKeepPasswordUndo(t *testing.T) {
	isolate(t)
	keyring.MockInit()
	undo, err := KeepPassword("work", "first")
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := Password("work"); pw != "first" {
		t.Fatalf("kept %q", pw)
	}
	undo()
	if _, err := Password("work"); err == nil {
		t.Fatal("undo left a password where there was none")
	}
	SavePassword("work", "old")
	undo, _ = KeepPassword("work", "new")
	undo()
	if pw, _ := Password("work"); pw != "old" {
		t.Fatalf("undo gave %q, want the old password", pw)
	}
	keyring.MockInitWithError(errors.New("no secret service"))
	if _, err := KeepPassword("work", "x"); err == nil {
		t.Fatal("no keyring, yet the password was said kept")
	}
}

// Removing an account forgets its OAuth2 tokens or keyring password, and touches nothing for
// an account that kept nothing there.
func TestForget(t *testing.T) {
	isolate(t)
	keyring.MockInit()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte(`
[[accounts]]
name = "o"
kind = "imap"
server = "imap.example.com:993"
user = "u"
auth = "oauth2"
oauth2_client_id = "id"
oauth2_auth_url = "https://login.example.com/a"
oauth2_token_url = "https://login.example.com/t"

[[accounts]]
name = "k"
kind = "imap"
server = "imap.example.com:993"
user = "u"
password = "keyring"

[[accounts]]
name = "p"
kind = "imap"
server = "imap.example.com:993"
user = "u"
password_cmd = "echo x"
`), 0o600)
	SaveToken("o", Saved{RefreshToken: "rt"})
	SavePassword("k", "pw")
	SavePassword("p", "stray")
	Forget(cfg, "o")()
	if _, err := LoadToken("o"); err == nil {
		t.Error("the OAuth2 tokens were not forgotten")
	}
	Forget(cfg, "k")()
	if _, err := Password("k"); err == nil {
		t.Error("the keyring password was not forgotten")
	}
	Forget(cfg, "p")()
	if pw, _ := Password("p"); pw != "stray" {
		t.Error("an account that kept nothing in the keyring had the keyring touched")
	}
	Forget(filepath.Join(t.TempDir(), "none.toml"), "o")() // no configuration: nothing to do
}

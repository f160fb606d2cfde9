package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A password written in the file is refused without being repeated; the auth keys' values
// are checked.
func TestAuthKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[[accounts]]\nname = \"work\"\nkind = \"imap\"\npassword = \"Hunter2-Sekret\"\n")
	_, err := Load(path)
	if err == nil || strings.Contains(err.Error(), "Hunter2") || !strings.Contains(err.Error(), "never written in the file") {
		t.Fatalf("a password in the file: %v", err)
	}
	write("[[accounts]]\nname = \"work\"\nkind = \"imap\"\nauth = \"kerberos\"\n")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "use password or oauth2") {
		t.Fatalf("auth kerberos: %v", err)
	}
	write("[[accounts]]\nname = \"work\"\nkind = \"imap\"\nauth = \"oauth2\"\noauth2_mechanism = \"cram\"\n")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "xoauth2 or oauthbearer") {
		t.Fatalf("a mechanism: %v", err)
	}
	write("[[accounts]]\nname = \"work\"\nkind = \"imap\"\nauth = \"oauth2\"\noauth2_token_cmd = \"get-token\"\noauth2_scopes = [\"a\", \"b\"]\n[[accounts]]\nname = \"home\"\nkind = \"imap\"\npassword = \"keyring\"\n")
	c, err := Load(path)
	if err != nil || !c.Accounts[0].OAuth2() || !c.Accounts[1].KeyringPassword() || !c.Accounts[1].HasSecret() {
		t.Fatalf("%+v %v", c, err)
	}
}

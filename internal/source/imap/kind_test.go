package imap

import (
	"testing"

	"github.com/postern-mcp/postern/internal/config"
)

// given is a command line: the flags given, with their values.
type given map[string]string

func (g given) Changed(name string) bool { _, ok := g[name]; return ok }

func (g given) GetString(name string) (string, error) { return g[name], nil }

// TestApplyChoosesTLSByPort: --imap without --tls picks STARTTLS on 143 and 587 and implicit TLS
// elsewhere, follows a later port change while the TLS is still the default, and never
// overrides a --tls given or chosen by hand.
func TestApplyChoosesTLSByPort(t *testing.T) {
	for _, c := range []struct {
		before config.Account
		flags  given
		tls    string
	}{
		{config.Account{}, given{"imap": "h:993"}, "implicit"},
		{config.Account{}, given{"imap": "h:143"}, "starttls"},
		{config.Account{}, given{"imap": "h:587"}, "starttls"},
		{config.Account{}, given{"imap": "h:143", "tls": "implicit"}, "implicit"},
		{config.Account{Server: "h:993", TLS: "implicit"}, given{"imap": "h:143"}, "starttls"},
		{config.Account{Server: "h:993", TLS: "starttls"}, given{"imap": "h:1993"}, "starttls"},
	} {
		a := c.before
		if err := apply(c.flags, &a); err != nil {
			t.Fatal(err)
		}
		if a.TLS != c.tls || a.Server != c.flags["imap"] {
			t.Errorf("%+v then %v: server %q tls %q; want tls %q", c.before, c.flags, a.Server, a.TLS, c.tls)
		}
	}
}

// TestAddedAndChangedSayTheDefault: account add says which TLS the port chose and how to
// change it; account set says so only when a new port changed it.
func TestAddedAndChangedSayTheDefault(t *testing.T) {
	a := config.Account{Server: "h:143", TLS: "starttls"}
	if got, want := added(a, given{"imap": "h:143"}), ", tls starttls (the default for port 143; change it with --tls)"; got != want {
		t.Errorf("added: %q; want %q", got, want)
	}
	if got := added(a, given{"imap": "h:143", "tls": "starttls"}); got != ", tls starttls" {
		t.Errorf("added with --tls: %q", got)
	}
	old := config.Account{Server: "h:993", TLS: "implicit"}
	if got := changed(old, a, given{"imap": "h:143"}); got != " tls is now starttls, the default for the new port." {
		t.Errorf("changed: %q", got)
	}
	if got := changed(old, a, given{"imap": "h:143", "tls": "starttls"}); got != "" {
		t.Errorf("changed with --tls: %q", got)
	}
}

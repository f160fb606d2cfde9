package accountedit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
)

func givenOf(flags ...string) func(string) bool {
	return func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
}

// --provider fills the servers from the table row, keeps what the flags gave, and the address.
func TestFromEmailProvider(t *testing.T) {
	p := generated.Providers[0]
	var a config.Account
	found, err := FromEmail(context.Background(), "me@example.org", p.ID, givenOf("provider"), &a)
	if err != nil || found == nil {
		t.Fatalf("FromEmail: %v", err)
	}
	if a.Kind == "" || a.Server != found.IMAP.Addr() || a.Address != "me@example.org" {
		t.Fatalf("account: %+v", a)
	}
	a = config.Account{Server: "mine:993", Address: "other@example.org"}
	if _, err := FromEmail(context.Background(), "me@example.org", p.ID, givenOf("provider", ImapFlag, "address"), &a); err != nil {
		t.Fatal(err)
	}
	if a.Server != "mine:993" || a.Address != "other@example.org" {
		t.Fatalf("a given flag lost: %+v", a)
	}
}

// Both servers given: nothing is looked up, the address fills the user.
func TestFromEmailBothGiven(t *testing.T) {
	a := config.Account{Server: "imap.example.org:993", SMTP: "smtp.example.org:465"}
	found, err := FromEmail(context.Background(), "me@example.org", "", givenOf(ImapFlag, "smtp"), &a)
	if err != nil || found != nil || a.User != "me@example.org" || a.Server != "imap.example.org:993" {
		t.Fatalf("found %v, %v, %+v", found, err, a)
	}
}

// Mistakes of the command line are usage errors, said with what to do.
func TestFromEmailUsage(t *testing.T) {
	p := generated.Providers[0]
	for name, c := range map[string]struct {
		email, provider string
		given           []string
		want            string
	}{
		"bad address":    {"not-an-address", "", []string{ImapFlag, "smtp"}, ""},
		"unknown id":     {"me@example.org", p.ID + "x", []string{"provider"}, "did you mean " + p.ID},
		"far unknown id": {"me@example.org", "zzzzzzzzzzzz", []string{"provider"}, "; the ids are "},
		"other kind":     {"me@example.org", "", []string{"maildir"}, "does not go with --maildir"},
	} {
		var a config.Account
		_, err := FromEmail(context.Background(), c.email, c.provider, givenOf(c.given...), &a)
		var u *Usage
		if !errors.As(err, &u) || !strings.Contains(u.Error(), c.want) {
			t.Errorf("%s: %v, want a usage error with %q", name, err, c.want)
		}
	}
}

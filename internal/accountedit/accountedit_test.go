package accountedit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/spf13/pflag"
)

// maildir is a new empty Maildir.
func maildir(t *testing.T) string {
	d := t.TempDir()
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.Mkdir(filepath.Join(d, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// flags is the flag set of account add and set as far as the kinds go, parsed from args.
func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fl := pflag.NewFlagSet("account", pflag.ContinueOnError)
	for _, k := range kinds.All() {
		for _, kf := range k.Flags.List {
			if fl.Lookup(kf.Name) == nil {
				fl.String(kf.Name, "", kf.Usage)
			}
		}
	}
	if err := fl.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fl
}

func TestApplyKindChoosesAndRefusesForeignFlags(t *testing.T) {
	dir := t.TempDir()
	a := config.Account{Name: "archive"}
	if err := ApplyKind(flags(t, "--maildir", dir), &a); err != nil {
		t.Fatal(err)
	}
	if a.Kind != "maildir" || a.Path == "" {
		t.Fatalf("--maildir gave kind %q path %q", a.Kind, a.Path)
	}
	if got := KindFlags(flags(t, "--maildir", dir, "--imap", "h:993").Changed); len(got) != 2 {
		t.Fatalf("KindFlags = %v, want both kinds' flags", got)
	}
	err := ApplyKind(flags(t, "--user", "sam"), &a)
	if err == nil || !strings.Contains(err.Error(), "--user") {
		t.Fatalf("--user on a Maildir account: %v, want a refusal naming --user", err)
	}
}

func TestCommonApplyClearsAndReplaces(t *testing.T) {
	a := config.Account{Address: "old@example.com", Aliases: []string{"a@example.com"}, TLSCA: "/ca.pem", DisplayName: "Old"}
	given := func(names ...string) func(string) bool {
		return func(f string) bool {
			for _, n := range names {
				if n == f {
					return true
				}
			}
			return false
		}
	}
	c := Common{Display: "  Sam Rivera ", Aliases: []string{""}, CAFile: "ca.pem"}
	if err := c.Apply(given("name", "alias", "ca-file"), &a); err != nil {
		t.Fatal(err)
	}
	if a.DisplayName != "Sam Rivera" || a.Aliases != nil || !filepath.IsAbs(a.TLSCA) || a.Address != "old@example.com" {
		t.Fatalf("after apply: %+v", a)
	}
	if err := (Common{}).Apply(given("ca-file"), &a); err != nil || a.TLSCA != "" {
		t.Fatalf("empty --ca-file left %q (%v)", a.TLSCA, err)
	}
}

func TestValidate(t *testing.T) {
	var nk *NoKind
	if err := Validate(config.Account{Name: "x"}); !errors.As(err, &nk) || !strings.Contains(err.Error(), "--maildir") {
		t.Fatalf("no kind: %v", err)
	}
	good := config.Account{Name: "archive", Kind: "maildir", Path: maildir(t)}
	if err := Validate(good); err != nil {
		t.Fatalf("a good account: %v", err)
	}
	for _, bad := range []struct {
		edit func(*config.Account)
		flag string
	}{
		{func(a *config.Account) { a.Address = "Sam <sam@example.com>" }, "--address"},
		{func(a *config.Account) { a.Aliases = []string{"not an address"} }, "--alias"},
		{func(a *config.Account) { a.DisplayName = "Sam\nBcc: x@example.com" }, "--name"},
		{func(a *config.Account) { a.TLSCA = filepath.Join(t.TempDir(), "none.pem") }, "--ca-file"},
		{func(a *config.Account) { a.Name = "../x" }, "account name"},
	} {
		a := good
		bad.edit(&a)
		if err := Validate(a); err == nil || !strings.Contains(err.Error(), bad.flag) {
			t.Errorf("%+v: %v, want an error naming %s", a, err, bad.flag)
		}
	}
}

func TestSaveAndRemove(t *testing.T) {
	ctx := context.Background()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	a := config.Account{Name: "archive", Kind: "maildir", Path: maildir(t)}
	undone := 0
	undo := func() { undone++ }
	if err := Save(ctx, cfg, nil, a, false, os.Stderr, undo); err != nil {
		t.Fatal(err)
	}
	if err := Save(ctx, cfg, nil, a, false, os.Stderr, undo); err == nil || undone != 1 {
		t.Fatalf("adding it twice: %v, undo called %d times", err, undone)
	}
	old := a
	a.DisplayName = "Archive"
	if err := Save(ctx, cfg, &old, a, false, os.Stderr, undo); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(cfg)
	if err != nil || len(c.Accounts) != 1 || c.Accounts[0].DisplayName != "Archive" {
		t.Fatalf("after set: %+v, %v", c, err)
	}
	found, n, err := Remove(ctx, cfg, filepath.Join(t.TempDir(), "store.db"), "archive")
	if err != nil || !found || n != 0 {
		t.Fatalf("remove: found %v, %d messages, %v", found, n, err)
	}
	if found, _, err := Remove(ctx, cfg, filepath.Join(t.TempDir(), "store.db"), "archive"); err != nil || found {
		t.Fatalf("remove again: found %v, %v", found, err)
	}
}

package view

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
)

func opener(t *testing.T, only ...string) (*Opener, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	toml := ""
	for _, n := range []string{"work", "home"} {
		toml += "[[accounts]]\nname = \"" + n + "\"\nkind = \"maildir\"\npath = \"" + filepath.Join(dir, n) + "\"\n"
	}
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &Opener{Config: config.NewWatcher(cfg), Only: only, StorePath: filepath.Join(dir, "store.db")}
	t.Cleanup(func() { o.Close() })
	return o, dir
}

// A call's view shows the accounts of --account only; the store opens at first use, once.
func TestViewAccountsAndStore(t *testing.T) {
	o, dir := opener(t, "home")
	v, err := From(o.Open(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	accts, err := v.Accounts()
	if err != nil || len(accts) != 1 || accts[0].Name != "home" {
		t.Fatalf("accounts = %v, %v; want home only", accts, err)
	}
	if v.Allowed("work") || !v.Allowed("home") {
		t.Error("work is visible to a connection limited to home")
	}
	if v.StoreExists() {
		t.Fatal("the store exists before any call read it")
	}
	st, err := v.Store()
	if err != nil {
		t.Fatal(err)
	}
	w, _ := From(o.Open(context.Background()))
	if st2, _ := w.Store(); st2 != st {
		t.Error("a second call opened the store again")
	}
	if _, err := os.Stat(filepath.Join(dir, "store.db")); err != nil || !w.StoreExists() {
		t.Errorf("the store was not made: %v", err)
	}
}

// The person at the terminal sees past the projects; an agent's call is refused while the
// projects file cannot be read.
func TestViewProjectsByEra(t *testing.T) {
	o, dir := opener(t)
	if err := os.WriteFile(filepath.Join(dir, "projects.toml"), []byte("not [ toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	agent, _ := From(o.Open(dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: "modern"})))
	if _, err := agent.Projects(); err == nil {
		t.Error("an agent's view read an unreadable projects file without an error")
	}
	person, _ := From(o.Open(dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: dispatch.EraCLI})))
	set, err := person.Projects()
	if err != nil || set.Active() {
		t.Errorf("the person's view: %v, active %v; want everything shown", err, set != nil && set.Active())
	}
	if _, err := From(context.Background()); !errors.Is(err, ErrNoView) {
		t.Errorf("From without a view: %v", err)
	}
}

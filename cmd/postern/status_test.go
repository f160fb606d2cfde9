package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/store"
)

// updating says whether -update was given: the flag is declared once for the
// package's golden files (demo_test.go declares it).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./cmd/postern -run %s -update to write it", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", t.Name(), path, t.Name(), got, want)
	}
}

var (
	rfc3339RE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	sizeRE    = regexp.MustCompile(`\(\d+(\.\d)? (bytes|KiB|MiB|GiB)\)`)
	bytesRE   = regexp.MustCompile(`"bytes": \d+`)
)

// stable replaces what changes from run to run (the temporary home, times,
// sizes, the version) with fixed words.
func stable(s, homeDir string) string {
	s = strings.ReplaceAll(s, homeDir, "$HOME")
	s = strings.ReplaceAll(s, postVersion(), "VERSION")
	s = rfc3339RE.ReplaceAllString(s, "TIME")
	s = sizeRE.ReplaceAllString(s, "(SIZE)")
	return bytesRE.ReplaceAllString(s, `"bytes": SIZE`)
}

// TestStatusFresh: status on a HOME where nothing was set up yet says where
// everything will be and what to run first.
func TestStatusFresh(t *testing.T) {
	env := home(t)
	h := envValue(env, "HOME")
	out, errOut, code := runCLI(t, env, "status")
	if code != 0 || errOut != "" {
		t.Fatalf("status: %d %q", code, errOut)
	}
	golden(t, "status_fresh.golden", stable(out, h))
	out, _, code = runCLI(t, env, "status", "--json")
	if code != 0 || !json.Valid([]byte(out)) {
		t.Fatalf("status --json: %d %q", code, out)
	}
	golden(t, "status_fresh_json.golden", stable(out, h))
}

// TestStatusSynced: status on a HOME with one account synced, one whose first
// sync was interrupted, one never synced, a registered host and a problem in
// the configuration.
func TestStatusSynced(t *testing.T) {
	env := home(t)
	h := envValue(env, "HOME")
	dir := filepath.Join(h, "mail")
	for name, n := range map[string]int{"done": 40, "half": 120, "later": 5} {
		if _, err := corpus.WriteMaildir(filepath.Join(dir, name), corpus.Options{Seed: 3, Messages: n}); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "postern", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	os.WriteFile(cfgPath, []byte("# mine\n[mcp]\nscopes = [\"read\", \"read:bodys\"]\n"), 0o600)
	for _, name := range []string{"done", "half", "later"} {
		if _, errOut, code := runCLI(t, env, "account", "add", name, "--maildir", filepath.Join(dir, name)); code != 0 {
			t.Fatalf("account add %s: %s", name, errOut)
		}
	}
	if _, errOut, code := runCLI(t, env, "sync", "--account", "done"); code != 0 {
		t.Fatalf("sync done: %s", errOut)
	}
	// The first sync of "half" stops after its first batch, as Ctrl-C would.
	st, err := store.Open(store.DefaultPath(filepath.Join(envValue(env, "XDG_DATA_HOME"), "postern")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = mailsync.SyncOne(ctx, st, config.Account{Name: "half", Kind: "maildir", Path: filepath.Join(dir, "half")}, mailsync.Options{BatchSize: 25, AfterBatch: func(string, int) { cancel() }})
	st.Close()
	if err == nil {
		t.Fatal("the interrupted sync finished")
	}
	recs := []integrations.Record{{Host: "claude-desktop", Scope: "user", Name: "postern", Scopes: []string{"read", "read:bodies"}, Accounts: []string{"done"}, Config: cfgPath, At: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}}
	b, _ := json.Marshal(recs)
	os.WriteFile(integrations.RecordPath(cfgPath), b, 0o600)

	out, errOut, code := runCLI(t, env, "status")
	if code != 0 || errOut != "" {
		t.Fatalf("status: %d %q", code, errOut)
	}
	for _, want := range []string{"done (maildir, ", "40 messages, synced", "partly synced: ", "run postern sync to finish", "later (maildir", "never synced", "claude-desktop", "read, read:bodies", `"read:bodys"`} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	golden(t, "status_synced.golden", stable(out, h))
	out, _, _ = runCLI(t, env, "status", "--json")
	golden(t, "status_synced_json.golden", stable(out, h))
	out, _, _ = runCLI(t, env, "account", "list")
	if !regexp.MustCompile(`half\tmaildir\t.*\tpartly synced: [1-9]\d* messages, run postern sync to finish`).MatchString(out) {
		t.Errorf("account list does not say the sync is partial:\n%s", out)
	}
	// Finishing the sync ends the partial state.
	if _, errOut, code := runCLI(t, env, "sync", "--account", "half"); code != 0 {
		t.Fatalf("sync half: %s", errOut)
	}
	out, _, _ = runCLI(t, env, "status")
	if strings.Contains(out, "partly") || !strings.Contains(out, "120 messages, synced") {
		t.Errorf("after the sync finished:\n%s", out)
	}
}

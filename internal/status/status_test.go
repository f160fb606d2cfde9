package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source/maildir"
	"github.com/postern-mcp/postern/internal/store"
)

func TestSyncState(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		x        store.AccountStat
		in       bool
		state    string
		contains string
	}{
		{store.AccountStat{}, false, StateNever, StateNever},
		{store.AccountStat{Messages: 12}, true, StatePartly, "partly synced: 12 messages, run postern sync to finish"},
		{store.AccountStat{Messages: 3, LastSync: at, LastError: "login refused"}, true, StateFailing, "failed: login refused"},
		{store.AccountStat{Messages: 3, LastSync: at}, true, StateSynced, "3 messages, synced 2026-12-01T09:00:00Z"},
	} {
		state, words := SyncState(c.x, c.in)
		if state != c.state || !strings.Contains(words, c.contains) {
			t.Errorf("SyncState(%+v) = %q, %q; want %q with %q", c.x, state, words, c.state, c.contains)
		}
	}
}

// The report names what is missing without failing, and every problem of the records of
// setup: a scope that is not one, an account that is not configured.
func TestBuildAndProblems(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.toml")
	storePath := filepath.Join(dir, "store.db")
	r := Build("v1", cfgPath, storePath)
	if r.Version != "v1" || r.Config.Exists || r.Store.Exists || len(r.Accounts) != 0 {
		t.Fatalf("empty home: %+v", r)
	}
	if err := config.AddAccount(cfgPath, config.Account{Name: "archive", Kind: maildir.KindName, Path: dir}); err != nil {
		t.Fatal(err)
	}
	err := integrations.PutRecord(integrations.RecordPath(cfgPath), integrations.Record{Host: "codex", Scope: "user", Name: "postern", Scopes: []string{"nosuchscope"}, Accounts: []string{"work"}, At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	r = Build("v1", cfgPath, storePath)
	if !r.Config.Exists || !r.Store.Exists || r.Store.Bytes == 0 {
		t.Fatalf("files: %+v %+v", r.Config, r.Store)
	}
	if len(r.Accounts) != 1 || r.Accounts[0].Name != "archive" || r.Accounts[0].State != StateNever {
		t.Fatalf("accounts: %+v", r.Accounts)
	}
	if len(r.Hosts) != 1 || r.Hosts[0].Host != "codex" {
		t.Fatalf("hosts: %+v", r.Hosts)
	}
	all := strings.Join(r.Problems, "\n")
	for _, want := range []string{`host codex was given scope "nosuchscope", which is not a scope`, `host codex was given account "work", which is not configured`} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	os.WriteFile(cfgPath, []byte("this is not toml ["), 0o600)
	if cfg, ps := Problems(cfgPath); cfg != nil || len(ps) != 1 {
		t.Fatalf("an unreadable configuration: %v, %q", cfg, ps)
	}
}

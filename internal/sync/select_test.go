package sync_test

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/source/maildir"
	syncrun "github.com/postern-mcp/postern/internal/sync"
)

// postern sync takes every account, or only the one named; a name of none is said.
func TestAccounts(t *testing.T) {
	cfg := &config.Config{Accounts: []config.Account{{Name: "a"}, {Name: "b"}}}
	if got, ok := syncrun.Accounts(cfg, ""); !ok || len(got) != 2 {
		t.Fatalf("every account: %v %v", got, ok)
	}
	if got, ok := syncrun.Accounts(cfg, "b"); !ok || len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("only b: %v %v", got, ok)
	}
	if got, ok := syncrun.Accounts(cfg, "c"); ok || len(got) != 0 {
		t.Fatalf("no such account: %v %v", got, ok)
	}
}

// POSTERN_SYNC_BATCH sets the batch size only when it is a positive number.
func TestBatchFromEnv(t *testing.T) {
	for v, want := range map[string]int{"25": 25, "0": 0, "-3": 0, "many": 0, "": 0} {
		t.Setenv("POSTERN_SYNC_BATCH", v)
		r := &syncrun.Runner{}
		r.BatchFromEnv()
		if r.Mail.BatchSize != want {
			t.Errorf("POSTERN_SYNC_BATCH=%q: batch %d, want %d", v, r.Mail.BatchSize, want)
		}
	}
}

// An account's line says what its sync brought, in its kind's words.
func TestSyncedLine(t *testing.T) {
	accts := []config.Account{{Name: "archive", Kind: maildir.KindName}}
	line := syncrun.SyncedLine(accts, mailsync.Outcome{Account: "archive", New: 7, Folders: 2})
	if !strings.Contains(line, "7") {
		t.Fatalf("the line does not say the 7 new messages: %q", line)
	}
}

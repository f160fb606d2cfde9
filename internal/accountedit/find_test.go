package accountedit

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
)

// A name the configuration lacks names the nearest and every account; with none configured,
// it says how to add one.
func TestFindAndNoSuchAccount(t *testing.T) {
	cfg := &config.Config{Accounts: []config.Account{{Name: "work", Kind: "maildir"}, {Name: "home"}}}
	if a, err := Find(cfg, "work"); err != nil || a.Kind != "maildir" {
		t.Fatalf("Find(work) = %+v, %v", a, err)
	}
	_, err := Find(cfg, "wrok")
	if err == nil || !strings.Contains(err.Error(), `did you mean work?`) || !strings.Contains(err.Error(), "The accounts are: work, home") {
		t.Fatalf("a typo: %v", err)
	}
	if err := NoSuchAccount("zzzzzzzz", cfg); !strings.Contains(err.Error(), `"zzzzzzzz".`) || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("a name near none: %v", err)
	}
	for _, c := range []*config.Config{nil, {}} {
		if err := NoSuchAccount("x", c); !strings.Contains(err.Error(), "no account is configured; add one with postern account add") {
			t.Fatalf("no account: %v", err)
		}
	}
}

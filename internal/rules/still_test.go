package rules

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/store"
)

// A rule pushed to one account's server is said to run there still, for that account only;
// without a store nothing is made and nothing is said.
func TestStillOnServer(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(`
[[accounts]]
name = "work"
kind = "maildir"
path = "`+dir+`"

[[accounts]]
name = "home"
kind = "maildir"
path = "`+dir+`"
`), 0o600)
	path := filepath.Join(dir, "store.db")
	r := generated.Rule{Name: "Fwd", Match: "subject:x", Actions: []generated.RuleAction{{Do: "forward", To: "a@b.test"}}, State: Enabled}
	if got := StillOnServer(t.Context(), cfg, path, r); got != nil {
		t.Fatalf("without a store: %v", got)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("asking made a store")
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetOnServer(t.Context(), st, "work", []generated.Rule{r}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got := StillOnServer(t.Context(), cfg, path, r); !slices.Equal(got, []string{"work"}) {
		t.Fatalf("pushed to work: %v", got)
	}
	other := r
	other.Name = "Other"
	if got := StillOnServer(t.Context(), cfg, path, other); len(got) != 0 {
		t.Fatalf("a rule never pushed: %v", got)
	}
}

package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

func TestStateChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	archive := []generated.RuleAction{{Do: "archive"}}
	if err := Save(path, []generated.Rule{
		{Name: "Receipts", Match: "from:shop@example.com", Actions: archive, State: Pending},
		{Name: "Old", Match: "older_than:1y", Actions: archive, State: Rejected},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := One(path, "Reciepts"); err == nil || !strings.Contains(err.Error(), `did you mean Receipts?`) {
		t.Fatalf("a misspelt name: %v", err)
	}
	r, err := One(path, "receipts")
	if err != nil || r.Name != "Receipts" {
		t.Fatalf("One = %+v, %v", r, err)
	}
	old, _ := One(path, "Old")
	for _, c := range []struct {
		r    generated.Rule
		to   string
		want string
	}{
		{old, Enabled, "was rejected"},
		{r, Disabled, "is pending"},
		{generated.Rule{Name: "x", State: Enabled}, Rejected, "not pending"},
	} {
		if err := CheckChange(c.r, c.to); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckChange(%s %s → %s) = %v, want %q", c.r.Name, c.r.State, c.to, err, c.want)
		}
	}
	if err := CheckChange(r, Enabled); err != nil {
		t.Fatalf("approving a pending rule: %v", err)
	}
	// The rule changed since it was shown: nothing is enabled.
	shown := r
	shown.Match = "from:other@example.com"
	if err := SetState(path, "receipts", shown, Enabled); err == nil || !strings.Contains(err.Error(), "changed while you looked at it") {
		t.Fatalf("a changed rule: %v", err)
	}
	if err := SetState(path, "receipts", r, Enabled); err != nil {
		t.Fatal(err)
	}
	if now, _ := One(path, "Receipts"); now.State != Enabled {
		t.Fatalf("state %q after SetState", now.State)
	}
	if err := SetState(path, "Gone", generated.Rule{Name: "Gone"}, Enabled); err == nil || !strings.Contains(err.Error(), "removed meanwhile") {
		t.Fatalf("a removed rule: %v", err)
	}
}

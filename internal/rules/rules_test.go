package rules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/store"
)

func ptr[T any](v T) *T { return &v }

func TestLoadSaveRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	if rs, err := Load(path); err != nil || rs != nil {
		t.Fatalf("a missing file: %v %v", rs, err)
	}
	in := []generated.Rule{
		{Name: "News", Match: `from:*news@example.com* is:list (subject:digest OR list:x) header:X-A:"a \"b\""`,
			Actions: []generated.RuleAction{{Do: "move", Folder: "News"}, {Do: "mark_read"}}, Stop: ptr(true), State: Enabled, ProposedBy: "agent"},
		{Name: "Big", Match: "larger:5M", Actions: []generated.RuleAction{{Do: "archive"}}, State: Pending},
	}
	if err := Save(path, in); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("rules.toml is %v", fi.Mode())
	}
	out, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(in, out) {
		t.Fatalf("round trip:\n%+v\n%+v", in, out)
	}
	if _, err := os.Stat(path + ".bak"); err == nil {
		t.Fatal("a file of the new shape was backed up")
	}
	os.WriteFile(path, []byte("[[rules]]\nname = \"x\"\nunknown_key = 1\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "rule 1") {
		t.Fatalf("an unknown key: %v", err)
	}
	os.WriteFile(path, []byte("[[rules]]\nname = \"x\"\n[rules.match]\nfrom = \"a\"\nsender = \"b\"\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "old shape") {
		t.Fatalf("an unknown key in an old match: %v", err)
	}
	os.WriteFile(path, []byte("[[rules]\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not valid TOML") {
		t.Fatalf("broken TOML: %v", err)
	}
}

func sameJSON(a, b []generated.Rule) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestUpdateLosesNoChange: 20 writers at once each add a rule; all 20 are there.
func TestUpdateLosesNoChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := Update(path, func(rs []generated.Rule) ([]generated.Rule, error) {
				return append(rs, generated.Rule{Name: "r" + string(rune('a'+i)), Match: "is:list", Actions: []generated.RuleAction{{Do: "archive"}}}), nil
			})
			if err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	rs, _ := Load(path)
	if len(rs) != 20 {
		t.Fatalf("%d rules after 20 concurrent updates", len(rs))
	}
}

func TestEvaluateOrderAndStop(t *testing.T) {
	rs := []generated.Rule{
		{Name: "off", State: Disabled},
		{Name: "one", State: Enabled},
		{Name: "pending", State: Pending},
		{Name: "two", State: Enabled, Stop: ptr(true)},
		{Name: "three", State: Enabled},
		{Name: "unmatched", State: Enabled},
	}
	all := map[int64]bool{7: true}
	sets := []map[int64]bool{all, all, all, all, all, {}}
	var names []string
	for _, a := range Evaluate(rs, sets, 7) {
		names = append(names, a.Rule)
	}
	if strings.Join(names, ",") != "one,two" {
		t.Fatalf("ran %v", names)
	}
	if got := Evaluate(rs, sets, 8); len(got) != 0 {
		t.Fatalf("a message no rule matched ran %v", got)
	}
}

func TestCheckerProblems(t *testing.T) {
	c := Checker{Accounts: []string{"work", "home"}, SendAllowed: func(a string) bool { return strings.HasSuffix(a, "@ok.test") },
		Nearest: func(string, []string) []string { return []string{"work"} }}
	archive := []generated.RuleAction{{Do: "archive"}}
	for _, tc := range []struct {
		rule generated.Rule
		want string
	}{
		{generated.Rule{Name: "x", Actions: archive}, "no condition"},
		{generated.Rule{Name: "x", Match: "  ", Actions: archive}, "no condition"},
		{generated.Rule{Name: "", Match: "from:a", Actions: archive}, "not allowed"},
		{generated.Rule{Name: "x", Account: "wrk", Match: "from:a", Actions: archive}, "nearest: work"},
		{generated.Rule{Name: "x", Match: "from:a"}, "does nothing"},
		{generated.Rule{Name: "x", Match: "from:a", Actions: []generated.RuleAction{{Do: "move"}}}, "needs a folder"},
		{generated.Rule{Name: "x", Match: "from:a", Actions: []generated.RuleAction{{Do: "forward", To: "eve@evil.test"}}}, "[send] allow"},
		{generated.Rule{Name: "x", Match: "from:a", Actions: []generated.RuleAction{{Do: "forward", To: "Eve <eve@ok.test>"}}}, "bare address"},
		{generated.Rule{Name: "x", Match: "before:soon", Actions: archive}, "cannot be read"},
		{generated.Rule{Name: "x", Match: "sender:bob", Actions: archive}, "not a search operator"},
		{generated.Rule{Name: "x", Match: "larger:10 smaller:5", Actions: archive}, "never both"},
		{generated.Rule{Name: "x", Match: "smaller:0", Actions: archive}, "no message"},
		{generated.Rule{Name: "x", Match: "from:a", Actions: []generated.RuleAction{{Do: "archive"}, {Do: "delete"}}}, "more than once"},
		{generated.Rule{Name: "x", Match: `header:"Bad Name":x`, Actions: archive}, "not a header field name"},
	} {
		ps := strings.Join(c.Problems(tc.rule), " | ")
		if !strings.Contains(ps, tc.want) {
			t.Errorf("%+v: problems %q, want one saying %q", tc.rule, ps, tc.want)
		}
	}
	ok := generated.Rule{Name: "Receipts to a folder", Account: "work", Match: "subject:receipt -is:flagged",
		Actions: []generated.RuleAction{{Do: "move", Folder: "Receipts"}, {Do: "mark_read"}, {Do: "forward", To: "me@ok.test"}}}
	if ps := c.Problems(ok); len(ps) != 0 {
		t.Errorf("a good rule: %v", ps)
	}
	if n := NeedsOf(generated.Rule{Match: "a OR (b -(body:x))"}); !n.Body || n.Headers {
		t.Errorf("needs of a body condition in a group: %+v", n)
	}
	if n := NeedsOf(generated.Rule{Match: "list:announce"}); n.Body || !n.Headers {
		t.Errorf("needs of list: %+v", n)
	}
}

// TestOnServer: a pushed rule is the server's while it stays as pushed; a
// change, another account, or a push that no longer holds it give it back.
func TestOnServer(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	r := generated.Rule{Name: "Fwd", Match: "subject:x", Actions: []generated.RuleAction{{Do: "forward", To: "a@b.test"}}, State: Enabled}
	if OnServer(ctx, st, "work", r, nil) {
		t.Fatal("on the server before any push")
	}
	if err := SetOnServer(ctx, st, "work", []generated.Rule{r}); err != nil {
		t.Fatal(err)
	}
	stamped := r
	stamped.LastActed, stamped.State = "2026-12-01 10:00", Disabled
	if !OnServer(ctx, st, "work", r, nil) || !OnServer(ctx, st, "work", stamped, nil) {
		t.Fatal("a pushed rule is not on the server (its state and stamp are not what was pushed)")
	}
	if OnServer(ctx, st, "home", r, nil) {
		t.Fatal("on another account's server")
	}
	changed := r
	changed.Actions = []generated.RuleAction{{Do: "forward", To: "other@b.test"}}
	if OnServer(ctx, st, "work", changed, nil) {
		t.Fatal("a rule changed since the push is still taken as the server's")
	}
	SetOnServer(ctx, st, "work", nil)
	if OnServer(ctx, st, "work", r, nil) {
		t.Fatal("still on the server after a push that holds none")
	}
}

package rules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
		{Name: "News", Match: generated.RuleMatch{From: "news@example.com", List: ptr(true),
			Any: []generated.RuleCondition{{Subject: "digest"}, {Header: []generated.RuleHeader{{Name: "List-Id", Contains: "x"}}}}},
			Actions: []generated.RuleAction{{Do: "move", Folder: "News"}, {Do: "mark_read"}}, Stop: ptr(true), State: Enabled, ProposedBy: "agent"},
		{Name: "Big", Match: generated.RuleMatch{Larger: ptr(5000000)}, Actions: []generated.RuleAction{{Do: "archive"}}, State: Pending},
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
	os.WriteFile(path, []byte("[[rules]]\nname = \"x\"\nunknown_key = 1\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "rule 1") {
		t.Fatalf("an unknown key: %v", err)
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
				return append(rs, generated.Rule{Name: "r" + string(rune('a'+i)), Actions: []generated.RuleAction{{Do: "archive"}}}), nil
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

func TestMatches(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	msg := &Message{
		Row: &store.Row{Account: "work", Subject: "Your Invoice 42", From: store.Address{Name: "Billing", Email: "billing@shop.example.com"},
			To: []store.Address{{Email: "me@example.org"}}, Cc: []store.Address{{Name: "Boss", Email: "boss@corp.test"}},
			Size: 20000, Date: now.Add(-10 * 24 * time.Hour), Flags: store.FlagFlagged, List: true,
			Attachments: []store.Attachment{{Name: "a.pdf"}}},
		Headers: []store.Header{{Name: "List-Id", Value: "<shop.example.com>"}},
		Text:    "Thank you for your order.",
	}
	cases := []struct {
		name string
		m    generated.RuleMatch
		want bool
	}{
		{"from address", generated.RuleMatch{From: "BILLING@shop"}, true},
		{"from name", generated.RuleMatch{From: "billing"}, true},
		{"from other", generated.RuleMatch{From: "news@"}, false},
		{"to", generated.RuleMatch{To: "me@example.org"}, true},
		{"cc name", generated.RuleMatch{Cc: "boss"}, true},
		{"cc not to", generated.RuleMatch{To: "boss"}, false},
		{"subject", generated.RuleMatch{Subject: "invoice"}, true},
		{"from_domain below", generated.RuleMatch{FromDomain: "example.com"}, true},
		{"from_domain exact", generated.RuleMatch{FromDomain: "shop.example.com"}, true},
		{"from_domain look-alike", generated.RuleMatch{FromDomain: "hop.example.com"}, false},
		{"to_domain via cc", generated.RuleMatch{ToDomain: "corp.test"}, true},
		{"list", generated.RuleMatch{List: ptr(true)}, true},
		{"not list", generated.RuleMatch{List: ptr(false)}, false},
		{"attachment", generated.RuleMatch{HasAttachment: ptr(true)}, true},
		{"larger", generated.RuleMatch{Larger: ptr(19999)}, true},
		{"larger equal", generated.RuleMatch{Larger: ptr(20000)}, false},
		{"smaller", generated.RuleMatch{Smaller: ptr(20001)}, true},
		{"older", generated.RuleMatch{OlderThan: "7d"}, true},
		{"not older", generated.RuleMatch{OlderThan: "2w"}, false},
		{"younger", generated.RuleMatch{YoungerThan: "2w"}, true},
		{"flags", generated.RuleMatch{Flags: []string{"flagged", "unread"}}, true},
		{"flags read", generated.RuleMatch{Flags: []string{"read"}}, false},
		{"header", generated.RuleMatch{Header: []generated.RuleHeader{{Name: "list-id", Contains: "SHOP"}}}, true},
		{"header other field", generated.RuleMatch{Header: []generated.RuleHeader{{Name: "X-Mailer", Contains: "shop"}}}, false},
		{"body", generated.RuleMatch{Body: []string{"order", "thank"}}, true},
		{"body missing word", generated.RuleMatch{Body: []string{"order", "refund"}}, false},
		{"authenticated", generated.RuleMatch{Authenticated: ptr(true)}, true},
		{"any one holds", generated.RuleMatch{Any: []generated.RuleCondition{{From: "x@"}, {Subject: "invoice"}}}, true},
		{"any none holds", generated.RuleMatch{Any: []generated.RuleCondition{{From: "x@"}, {Subject: "refund"}}}, false},
		{"all", generated.RuleMatch{All: []generated.RuleCondition{{List: ptr(true)}, {Subject: "42"}}}, true},
		{"none", generated.RuleMatch{Subject: "invoice", None: []generated.RuleCondition{{Flags: []string{"flagged"}}}}, false},
		{"none holds not", generated.RuleMatch{None: []generated.RuleCondition{{From: "news@"}}}, true},
	}
	for _, c := range cases {
		r := generated.Rule{Name: c.name, Match: c.m, State: Enabled}
		if got := Matches(r, msg, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if Matches(generated.Rule{Account: "home", Match: generated.RuleMatch{Subject: "invoice"}}, msg, now) {
		t.Error("a rule of another account matched")
	}
}

func TestEvaluateOrderAndStop(t *testing.T) {
	msg := &Message{Row: &store.Row{Subject: "hello", From: store.Address{Email: "a@x.test"}}}
	rs := []generated.Rule{
		{Name: "off", State: Disabled, Match: generated.RuleMatch{Subject: "hello"}},
		{Name: "one", State: Enabled, Match: generated.RuleMatch{Subject: "hello"}},
		{Name: "pending", State: Pending, Match: generated.RuleMatch{Subject: "hello"}},
		{Name: "two", State: Enabled, Match: generated.RuleMatch{From: "a@"}, Stop: ptr(true)},
		{Name: "three", State: Enabled, Match: generated.RuleMatch{Subject: "hello"}},
	}
	var names []string
	for _, a := range Evaluate(rs, msg, time.Now()) {
		names = append(names, a.Rule)
	}
	if strings.Join(names, ",") != "one,two" {
		t.Fatalf("ran %v", names)
	}
}

func TestCheckerProblems(t *testing.T) {
	c := Checker{Accounts: []string{"work", "home"}, SendAllowed: func(a string) bool { return strings.HasSuffix(a, "@ok.test") },
		Nearest: func(string, []string) []string { return []string{"work"} }}
	for _, tc := range []struct {
		rule generated.Rule
		want string
	}{
		{generated.Rule{Name: "x", Actions: []generated.RuleAction{{Do: "archive"}}}, "no condition"},
		{generated.Rule{Name: "", Match: generated.RuleMatch{From: "a"}, Actions: []generated.RuleAction{{Do: "archive"}}}, "not allowed"},
		{generated.Rule{Name: "x", Account: "wrk", Match: generated.RuleMatch{From: "a"}, Actions: []generated.RuleAction{{Do: "archive"}}}, "nearest: work"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{From: "a"}}, "does nothing"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{From: "a"}, Actions: []generated.RuleAction{{Do: "move"}}}, "needs a folder"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{From: "a"}, Actions: []generated.RuleAction{{Do: "forward", To: "eve@evil.test"}}}, "[send] allow"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{From: "a"}, Actions: []generated.RuleAction{{Do: "forward", To: "Eve <eve@ok.test>"}}}, "bare address"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{OlderThan: "soon"}, Actions: []generated.RuleAction{{Do: "archive"}}}, "not an age"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{Larger: ptr(10), Smaller: ptr(5)}, Actions: []generated.RuleAction{{Do: "archive"}}}, "never both"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{Flags: []string{"read", "unread"}}, Actions: []generated.RuleAction{{Do: "archive"}}}, "never both"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{From: "a"}, Actions: []generated.RuleAction{{Do: "archive"}, {Do: "delete"}}}, "more than once"},
		{generated.Rule{Name: "x", Match: generated.RuleMatch{Header: []generated.RuleHeader{{Name: "Bad Name:", Contains: "x"}}}, Actions: []generated.RuleAction{{Do: "archive"}}}, "not a header field name"},
	} {
		ps := strings.Join(c.Problems(tc.rule), " | ")
		if !strings.Contains(ps, tc.want) {
			t.Errorf("%+v: problems %q, want one saying %q", tc.rule, ps, tc.want)
		}
	}
	ok := generated.Rule{Name: "Receipts to a folder", Account: "work", Match: generated.RuleMatch{Subject: "receipt"},
		Actions: []generated.RuleAction{{Do: "move", Folder: "Receipts"}, {Do: "mark_read"}, {Do: "forward", To: "me@ok.test"}}}
	if ps := c.Problems(ok); len(ps) != 0 {
		t.Errorf("a good rule: %v", ps)
	}
	if n := NeedsOf(generated.Rule{Match: generated.RuleMatch{Any: []generated.RuleCondition{{Body: []string{"x"}}}}}); !n.Body || n.Headers {
		t.Errorf("needs of a body condition in a group: %+v", n)
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
	r := generated.Rule{Name: "Fwd", Match: generated.RuleMatch{Subject: "x"}, Actions: []generated.RuleAction{{Do: "forward", To: "a@b.test"}}, State: Enabled}
	if OnServer(ctx, st, "work", r) {
		t.Fatal("on the server before any push")
	}
	if err := SetOnServer(ctx, st, "work", []generated.Rule{r}); err != nil {
		t.Fatal(err)
	}
	stamped := r
	stamped.LastActed, stamped.State = "2026-12-01 10:00", Disabled
	if !OnServer(ctx, st, "work", r) || !OnServer(ctx, st, "work", stamped) {
		t.Fatal("a pushed rule is not on the server (its state and stamp are not what was pushed)")
	}
	if OnServer(ctx, st, "home", r) {
		t.Fatal("on another account's server")
	}
	changed := r
	changed.Actions = []generated.RuleAction{{Do: "forward", To: "other@b.test"}}
	if OnServer(ctx, st, "work", changed) {
		t.Fatal("a rule changed since the push is still taken as the server's")
	}
	SetOnServer(ctx, st, "work", nil)
	if OnServer(ctx, st, "work", r) {
		t.Fatal("still on the server after a push that holds none")
	}
}

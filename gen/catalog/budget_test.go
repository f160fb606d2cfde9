package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBudgetUsage: a client that can ask the person is not listed the commit
// twins; the other is listed every tool of the grant.
func TestBudgetUsage(t *testing.T) {
	c, err := fixture(t, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Usage{}
	for _, u := range c.Usage() {
		got[u.Grant+"/"+u.Client] = u
	}
	ask, all := got["every_scope/asking"], got["every_scope/not_asking"]
	if strings.Join(ask.Listed, " ") != "filter_check mail_list mail_show mail_delete (one call) mail_send (one call)" {
		t.Errorf("asking client lists %v", ask.Listed)
	}
	if strings.Join(all.Listed, " ") != "filter_check mail_list mail_show mail_delete mail_delete_commit mail_send mail_send_commit" {
		t.Errorf("not-asking client lists %v", all.Listed)
	}
	sum := 0
	for _, tool := range c.Registry() {
		sum += c.ModelFacing(tool)
	}
	if all.ModelFacing != sum || ask.ModelFacing >= sum || ask.Limits.ModelFacing != 9216 {
		t.Errorf("every scope: asking %d bytes (limit %d), not asking %d; the tools sum to %d", ask.ModelFacing, ask.Limits.ModelFacing, all.ModelFacing, sum)
	}
	if g := got["glance/asking"]; strings.Join(g.Listed, " ") != "filter_check mail_list" || g.Tools != 2 {
		t.Errorf("glance lists %v", g.Listed)
	}
}

// TestBudgetsNotEnforced: with enforce: false a catalog over budget loads,
// its excesses kept as warnings; without the line it is refused, with the table.
func TestBudgetsNotEnforced(t *testing.T) {
	over := t.TempDir()
	tight := "version: 1\nbudgets:\n%s  tool: {description: 30}\n  grants:\n    glance: {asking: {tools: 1}, not_asking: {model_facing: 100}}\n    keeper: {asking: {}, not_asking: {}}\n    every_scope: {asking: {}, not_asking: {}}\n"
	write := func(enforce string) {
		if err := os.WriteFile(filepath.Join(over, "budgets.yaml"), []byte(strings.Replace(tight, "%s", enforce, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("  enforce: false\n")
	c, err := fixture(t, over)
	if err != nil {
		t.Fatalf("refused with enforce: false: %v", err)
	}
	if len(c.Warnings) == 0 || !strings.Contains(c.Warnings.Error(), "grant glance, client not_asking") || !strings.Contains(c.Warnings.Error(), "description is") {
		t.Errorf("warnings: %v", c.Warnings)
	}
	write("")
	_, err = fixture(t, over)
	var ob *OverBudget
	var ps Problems
	if !errors.As(err, &ob) || !errors.As(err, &ps) || len(ps) != len(ob.Problems) {
		t.Fatalf("not refused as over budget: %v", err)
	}
	table := FormatTable(ob.Table)
	if !strings.Contains(table, "glance") || !strings.Contains(table, "every_scope") || !strings.Contains(table, "!") {
		t.Errorf("table:\n%s", table)
	}
}

// TestReplaced: an old name maps to its replacement, and a pair's commit half
// replaces the old name's commit half.
func TestReplaced(t *testing.T) {
	c, err := fixture(t, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"mail_erase": "mail_delete", "mail_erase_commit": "mail_delete_commit", "mail_trash": "mail_delete", "mail_trash_commit": "mail_delete_commit"}
	got := c.Replaced()
	if len(got) != len(want) {
		t.Errorf("replaced: %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s replaced by %q, want %s", k, got[k], v)
		}
	}
}

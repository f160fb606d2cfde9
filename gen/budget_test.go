package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWireBudget: the wire is measured once the output schemas are written;
// a grant over its wire budget stops the second step, which prints the table,
// and with enforce: false it only warns. The table it writes has the wire.
func TestWireBudget(t *testing.T) {
	mod := fixtureModule(t)
	var table []struct {
		Grant, Client string
		Wire          int `json:"wire"`
		ModelFacing   int `json:"model_facing"`
	}
	b, err := os.ReadFile(filepath.Join(mod, "generated/budget.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	if len(table) != 6 {
		t.Fatalf("%d rows in the table, want 3 grants × 2 clients", len(table))
	}
	for _, r := range table {
		if r.Wire <= r.ModelFacing {
			t.Errorf("%s/%s: wire %d not above model-facing %d", r.Grant, r.Client, r.Wire, r.ModelFacing)
		}
	}
	budgets := filepath.Join(mod, "catalog/budgets.yaml")
	orig, err := os.ReadFile(budgets)
	if err != nil {
		t.Fatal(err)
	}
	tight := strings.Replace(string(orig), "not_asking: {tools: 9, model_facing: 10240, wire: 28672}", "not_asking: {tools: 9, model_facing: 10240, wire: 2000}", 1)
	if tight == string(orig) {
		t.Fatal("the fixture's every_scope budget changed; update this test")
	}
	write(t, budgets, tight)
	generate(t, mod) // the catalog alone fits: the wire is not known yet
	out, err := goCmdErr(mod, "run", "./cmd/schemagen")
	if err == nil {
		t.Fatalf("over its wire budget, the second step passed:\n%s", out)
	}
	for _, want := range []string{"grant every_scope, client not_asking:", "on the wire, over its 2000", "every_scope  not_asking", "model-facing"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	write(t, budgets, strings.Replace(tight, "budgets:\n", "budgets:\n  enforce: false\n", 1))
	generate(t, mod)
	out = goCmd(t, mod, "run", "./cmd/schemagen")
	if !strings.Contains(out, "warning:") || !strings.Contains(out, "!") {
		t.Errorf("not enforced, no warning and table:\n%s", out)
	}
}

// TestMarkdownPages: a Markdown page of the catalog becomes a docs page
// listed after the fixed ones, and goes when its file goes.
func TestMarkdownPages(t *testing.T) {
	mod := fixtureModule(t)
	page := filepath.Join(mod, "generated/docs/searching.md")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<!--") || !strings.Contains(string(b), "# Finding a message\n\nList a folder") {
		t.Errorf("the page:\n%s", b)
	}
	cat, _ := os.ReadFile(filepath.Join(mod, "generated/catalog.go"))
	if i, j := strings.Index(string(cat), `{Name: "providers"`), strings.Index(string(cat), `{Name: "searching", Title: "Finding a message"}`); i < 0 || j < i {
		t.Errorf("the page is not listed after the fixed pages")
	}
	os.Remove(filepath.Join(mod, "catalog/pages/searching.md"))
	// The description that points to it now points nowhere: refused.
	if err := Generate(filepath.Join(mod, "catalog"), filepath.Join(mod, "generated"), filepath.Join(mod, "plugins")); err == nil || !strings.Contains(err.Error(), "docs page searching, which does not exist") {
		t.Fatalf("a description pointing to a removed page: %v", err)
	}
	tools := filepath.Join(mod, "catalog/tools.yaml")
	y, _ := os.ReadFile(tools)
	write(t, tools, strings.Replace(string(y), " (docs page searching says how to find it)", "", 1))
	generate(t, mod)
	if _, err := os.Stat(page); !os.IsNotExist(err) {
		t.Errorf("the page of a removed file is still there: %v", err)
	}
}

package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture copies the generator's fixture catalog and the real catalog schema
// into a temporary folder named catalog, lays the *.yaml files of the folder
// over (if not "") on top, each replacing the fixture's file of its name or
// added beside them, and loads the result with the real loader.
func fixture(t *testing.T, over string) (*Catalog, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "catalog")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyYAML := func(from string) {
		names, err := filepath.Glob(filepath.Join(from, "*.yaml"))
		if err != nil || len(names) == 0 {
			t.Fatalf("no catalog files (*.yaml) in %s: %v", from, err)
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyYAML(fixtureDir)
	if over != "" {
		copyYAML(over)
	}
	// The fixture's Markdown pages, which its descriptions point to.
	pages, _ := filepath.Glob(filepath.Join(fixtureDir, PagesDir, "*.md"))
	for _, name := range pages {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, PagesDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, PagesDir, filepath.Base(name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	schema, err := os.ReadFile("../../catalog/" + SchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SchemaFile), schema, 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(dir)
}

// fixtureDir is the generator's fixture catalog, shared with gen's golden tests.
const fixtureDir = "../testdata/fixture/catalog"

func TestFixtureLoads(t *testing.T) {
	c, err := fixture(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != 5 || len(c.Scopes) != 4 || len(c.Presets) != 2 || c.Server == nil {
		t.Fatalf("loaded %d tools, %d scopes, %d presets", len(c.Tools), len(c.Scopes), len(c.Presets))
	}
	if p := c.Presets[1]; p.Name != "keeper" || !p.Default || strings.Join(p.Scopes, ",") != "read,read:bodies,mail:modify" {
		t.Errorf("preset keeper loaded as %+v", p)
	}
	if c.Untooled("read") || !c.Untooled("rules:propose") {
		t.Errorf("Untooled: read %v (mail_list declares it), rules:propose %v (no tool does)", c.Untooled("read"), c.Untooled("rules:propose"))
	}
	// extends: the base's fields first, each still saying where it was declared.
	var got []string
	for _, f := range c.Type("FilterMatch").Fields {
		got = append(got, f.From+"."+f.Name)
	}
	if strings.Join(got, " ") != "FilterCondition.from FilterCondition.larger FilterCondition.flags FilterMatch.any" {
		t.Errorf("FilterMatch fields: %v", got)
	}
	if len(c.Type("FilterCondition").Fields) != 3 {
		t.Errorf("the base changed: %d fields", len(c.Type("FilterCondition").Fields))
	}
	// Uses lists a type and those it uses once each, a base before the fields after it.
	got = nil
	for _, u := range c.Uses("Filter") {
		got = append(got, u.Name)
	}
	if strings.Join(got, " ") != "Filter FilterMatch FilterCondition FilterAction" {
		t.Errorf("Uses(Filter) = %v", got)
	}
	// dry_run: true adds the argument.
	for _, tool := range c.Tools {
		var has bool
		for _, p := range tool.Input {
			has = has || p.Name == "dry_run"
		}
		if has != tool.DryRun {
			t.Errorf("%s: dry_run argument present=%v, dry_run=%v", tool.Name, has, tool.DryRun)
		}
	}
}

func TestRealCatalogLoads(t *testing.T) {
	if _, err := Load("../../catalog"); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The fixture's hand-written runtime, laid out as postern's: one package per catalog file,
// each implementing that file's interface, and one package composing them into Handlers.
var domainFiles = map[string]string{
	"tools/mail/mail.go": `// Package mail serves the tools of catalog/tools.yaml.
package mail

import (
	"context"

	"example.com/fixture/generated"
)

type Mail struct{}

var _ generated.ToolsHandlers = (*Mail)(nil)

func (*Mail) MailList(context.Context, *generated.MailListArgs) (*generated.MessageList, error) {
	return &generated.MessageList{}, nil
}
func (*Mail) MailShow(context.Context, *generated.MailShowArgs) (*generated.Message, error) {
	return &generated.Message{}, nil
}
func (*Mail) MailDelete(context.Context, *generated.MailDeleteArgs) (*generated.Action, error) {
	return &generated.Action{}, nil
}
func (*Mail) MailSend(context.Context, *generated.MailSendArgs) (*generated.Action, error) {
	return &generated.Action{}, nil
}
`,
	"tools/filters/filters.go": `// Package filters serves the tools of catalog/filters.yaml.
package filters

import (
	"context"

	"example.com/fixture/generated"
)

type Filters struct{}

var _ generated.FiltersHandlers = (*Filters)(nil)

func (*Filters) FilterCheck(_ context.Context, a *generated.FilterCheckArgs) (*generated.FilterCheck, error) {
	return &generated.FilterCheck{Ok: a.Filter.Name != ""}, nil
}
`,
	"tools/all/all.go": `// Package all composes the domains into the generated Handlers.
package all

import (
	"example.com/fixture/generated"
	"example.com/fixture/tools/filters"
	"example.com/fixture/tools/mail"
)

type All struct {
	*mail.Mail
	*filters.Filters
}

var _ generated.Handlers = All{&mail.Mail{}, &filters.Filters{}}
`,
}

// newReadTool is a read tool added to the fixture's filters.yaml, with an output type the
// file already has.
const newReadTool = `  - name: filter_explain
    title: Explain a filter
    description: Say in words what a saved filter does.
    scope: read
    effect: none
    annotations: {read_only: true, destructive: false, idempotent: true, open_world: false}
    input:
      - {name: name, type: string, description: The filter's name., required: true, max_length: 100}
    output: FilterCheck

`

// TestNewReadToolTouchesItsDomainOnly: a new read tool in an existing catalog file changes,
// of the generated Go, only that file's interface and the registry (its name, its row and
// its arguments); every other interface, Handlers itself and every other generated Go file
// stay byte-identical; and the hand-written code builds again with one new method in that
// file's domain package, nothing else edited.
func TestNewReadToolTouchesItsDomainOnly(t *testing.T) {
	mod := fixtureModule(t)
	for rel, src := range domainFiles {
		write(t, filepath.Join(mod, rel), src)
	}
	goCmd(t, mod, "build", "./...")
	before := snapshot(t, mod)

	yaml := filepath.Join(mod, "catalog/filters.yaml")
	b, err := os.ReadFile(yaml)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "\ntypes:\n", "\n"+newReadTool+"types:\n", 1)
	if text == string(b) {
		t.Fatal("the fixture's filters.yaml has no types: line to add the tool before")
	}
	write(t, yaml, text)
	generate(t, mod)

	// The generated Go: which declarations changed.
	old, now := decls(t, before[filepath.Join(mod, "generated/catalog.go")]), declsOf(t, filepath.Join(mod, "generated/catalog.go"))
	var changed []string
	for k, v := range now {
		if old[k] != v {
			changed = append(changed, k)
		}
	}
	for k := range old {
		if _, ok := now[k]; !ok {
			changed = append(changed, k+" (removed)")
		}
	}
	sort.Strings(changed)
	want := []string{"FilterExplainArgs", "FiltersHandlers", "ToolFilterCheck", "Tools", "newFilterExplainArgs"}
	if strings.Join(changed, " ") != strings.Join(want, " ") {
		t.Errorf("adding a tool to filters.yaml changed these declarations of generated/catalog.go: %v; want only %v", changed, want)
	}
	if !strings.Contains(now["FiltersHandlers"], "FilterExplain(ctx context.Context, args *FilterExplainArgs) (*FilterCheck, error)") {
		t.Errorf("FiltersHandlers lacks the new method:\n%s", now["FiltersHandlers"])
	}
	for _, name := range []string{"Handlers", "ToolsHandlers"} {
		if now[name] == "" || now[name] != old[name] {
			t.Errorf("%s changed or vanished:\nbefore:\n%s\nafter:\n%s", name, old[name], now[name])
		}
	}
	for _, f := range []string{"generated/hosts.go", "generated/providers.go"} {
		after, _ := os.ReadFile(filepath.Join(mod, f))
		if string(after) != string(before[filepath.Join(mod, f)]) {
			t.Errorf("%s changed", f)
		}
	}

	// The hand-written code: the build names the missing method in the filters package only.
	out, err := goCmdErr(mod, "build", "./...")
	if err == nil {
		t.Fatal("the build passed without a FilterExplain method")
	}
	if !strings.Contains(out, "tools/filters") || !strings.Contains(out, "missing method FilterExplain") || strings.Contains(out, "tools/mail") {
		t.Fatalf("the build failure should name FilterExplain in tools/filters only:\n%s", out)
	}
	write(t, filepath.Join(mod, "tools/filters/explain.go"), `package filters

import (
	"context"

	"example.com/fixture/generated"
)

func (*Filters) FilterExplain(_ context.Context, a *generated.FilterExplainArgs) (*generated.FilterCheck, error) {
	return &generated.FilterCheck{Ok: a.Name != ""}, nil
}
`)
	goCmd(t, mod, "build", "./...")
	// Nothing hand-written but the catalog file and the domain package differs.
	after := snapshot(t, mod)
	for p, data := range after {
		rel, _ := filepath.Rel(mod, p)
		if generatedPath(rel) || rel == "catalog/filters.yaml" || strings.HasPrefix(rel, "tools/filters/") {
			continue
		}
		if prev, ok := before[p]; !ok || string(prev) != string(data) {
			t.Errorf("%s is hand-written and changed", rel)
		}
	}
}

func generatedPath(rel string) bool {
	for _, dir := range []string{"generated/", "plugins/", ".claude-plugin/"} {
		if strings.HasPrefix(rel, dir) {
			return true
		}
	}
	return false
}

func declsOf(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decls(t, b)
}

// decls maps each top-level declaration of a Go file to its source: by its name, or for a
// var or const group by its first name.
func decls(t *testing.T, src []byte) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "catalog.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	text := func(n ast.Node) string {
		return string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			out[d.Name.Name] = text(d)
		case *ast.GenDecl:
			switch s := d.Specs[0].(type) {
			case *ast.TypeSpec:
				out[s.Name.Name] = text(d)
			case *ast.ValueSpec:
				out[s.Names[0].Name] = text(d)
			}
		}
	}
	return out
}

package main

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/fixture/golden")

// repoRoot is the module root (gen's parent).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// copyTree copies src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fixtureModule lays out a throwaway Go module holding the fixture catalog
// (with the real catalog schema) and generates into it, both steps.
func fixtureModule(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	mod := t.TempDir()
	copyTree(t, filepath.Join(root, "gen/testdata/fixture/catalog"), filepath.Join(mod, "catalog"))
	schema, err := os.ReadFile(filepath.Join(root, "catalog/catalog.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mod, "catalog/catalog.schema.json"), string(schema))
	write(t, filepath.Join(mod, "go.mod"), "module example.com/fixture\n\ngo 1.26\n\nrequire github.com/postern-mcp/postern v0.0.0\n\nreplace github.com/postern-mcp/postern => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mod, "go.sum"), string(sum))
	write(t, filepath.Join(mod, "cmd/schemagen/main.go"), `package main

import (
	"fmt"
	"os"

	"example.com/fixture/generated"
	"github.com/postern-mcp/postern/gen/schemas"
)

func main() {
	var ts []schemas.ToolTypes
	for _, t := range generated.Tools {
		ts = append(ts, schemas.ToolTypes{Name: t.Name, Args: t.NewArgs(), Result: t.NewResult()})
	}
	if err := schemas.Write("catalog", "generated", ts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`)
	generate(t, mod)
	goCmd(t, mod, "run", "./cmd/schemagen")
	return mod
}

func generate(t *testing.T, mod string) {
	t.Helper()
	if err := Generate(filepath.Join(mod, "catalog"), filepath.Join(mod, "generated"), filepath.Join(mod, "plugins")); err != nil {
		t.Fatalf("generate: %v", err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCmd runs the go command offline in dir; it fails the test on error.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := goCmdErr(dir, args...)
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func goCmdErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGolden compares everything gen writes for the fixture catalog with the
// golden files; go test ./gen -update rewrites them.
func TestGolden(t *testing.T) {
	mod := fixtureModule(t)
	golden := filepath.Join(repoRoot(t), "gen/testdata/fixture/golden")
	if *update {
		os.RemoveAll(golden)
		copyTree(t, filepath.Join(mod, "generated"), filepath.Join(golden, "generated"))
		copyTree(t, filepath.Join(mod, "plugins"), filepath.Join(golden, "plugins"))
		copyTree(t, filepath.Join(mod, ".claude-plugin"), filepath.Join(golden, ".claude-plugin"))
		return
	}
	got := map[string][]byte{}
	for _, sub := range []string{"generated", "plugins", ".claude-plugin"} {
		filepath.WalkDir(filepath.Join(mod, sub), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(mod, p)
				got[rel], _ = os.ReadFile(p)
			}
			return nil
		})
	}
	want := map[string][]byte{}
	filepath.WalkDir(golden, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(golden, p)
			want[rel], _ = os.ReadFile(p)
		}
		return nil
	})
	if len(want) == 0 {
		t.Fatal("no golden files; run go test ./gen -run TestGolden -update")
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: in the golden files but not generated", name)
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from its golden file; if the change is intended, run go test ./gen -run TestGolden -update\n%s", name, firstDiff(string(w), string(g)))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: generated but not in the golden files", name)
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + x + "\n  got:  " + y
		}
	}
	return ""
}

// TestGenerateIsIdempotent: a second run over the same catalog changes no byte.
func TestGenerateIsIdempotent(t *testing.T) {
	mod := fixtureModule(t)
	before := snapshot(t, mod)
	generate(t, mod)
	goCmd(t, mod, "run", "./cmd/schemagen")
	after := snapshot(t, mod)
	if len(before) != len(after) {
		t.Fatalf("second run changed the file set: %d → %d files", len(before), len(after))
	}
	for k, v := range before {
		if !bytes.Equal(v, after[k]) {
			t.Errorf("second run changed %s", k)
		}
	}
}

func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out[p], _ = os.ReadFile(p)
		}
		return nil
	})
	return out
}

const baseImpl = `package impl

import (
	"context"

	"example.com/fixture/generated"
)

type Impl struct{}

var _ generated.Handlers = Impl{}

func (Impl) MailList(context.Context, *generated.MailListArgs) (*generated.MessageList, error) {
	return &generated.MessageList{}, nil
}
func (Impl) MailShow(context.Context, *generated.MailShowArgs) (*generated.Message, error) {
	return &generated.Message{}, nil
}
func (Impl) MailDelete(context.Context, *generated.MailDeleteArgs) (*generated.Action, error) {
	return &generated.Action{}, nil
}
func (Impl) MailSend(context.Context, *generated.MailSendArgs) (*generated.Action, error) {
	return &generated.Action{}, nil
}
func (Impl) FilterCheck(_ context.Context, a *generated.FilterCheckArgs) (*generated.FilterCheck, error) {
	return &generated.FilterCheck{Ok: a.Filter.Name != "" && a.Against == nil, Filter: &a.Filter}, nil
}
`

// TestAddingATool: one more tool in the catalog makes the build fail naming
// the missing Handlers method; writing that method makes it pass again.
func TestAddingATool(t *testing.T) {
	mod := fixtureModule(t)
	write(t, filepath.Join(mod, "impl/impl.go"), baseImpl)
	goCmd(t, mod, "build", "./...")

	write(t, filepath.Join(mod, "catalog/notes.yaml"), `version: 1
tools:
  - name: note_find
    title: Find notes
    description: Find notes whose title or text holds the words.
    scope: read
    effect: none
    annotations: {read_only: true, destructive: false, idempotent: true, open_world: false}
    input:
      - {name: words, type: string, description: The words., required: true}
    output: NoteList
types:
  NoteList:
    description: Notes found.
    fields:
      - {name: titles, type: string, list: true, description: Their titles.}
`)
	generate(t, mod)
	out, err := goCmdErr(mod, "build", "./...")
	if err == nil {
		t.Fatal("the build passed without a NoteFind method")
	}
	if !strings.Contains(out, "missing method NoteFind") {
		t.Fatalf("the build failure does not name the missing method:\n%s", out)
	}
	write(t, filepath.Join(mod, "impl/note.go"), `package impl

import (
	"context"

	"example.com/fixture/generated"
)

func (Impl) NoteFind(context.Context, *generated.NoteFindArgs) (*generated.NoteList, error) {
	return &generated.NoteList{Titles: []string{}}, nil
}
`)
	goCmd(t, mod, "build", "./...")
	// Its schema and docs follow.
	goCmd(t, mod, "run", "./cmd/schemagen")
	schema, err := os.ReadFile(filepath.Join(mod, "generated/schemas/note_find.input.json"))
	if err != nil || !strings.Contains(string(schema), `"words"`) || !strings.Contains(string(schema), `"required"`) {
		t.Fatalf("note_find.input.json: %v\n%s", err, schema)
	}
	docs, _ := os.ReadFile(filepath.Join(mod, "generated/docs/tools.md"))
	if !strings.Contains(string(docs), "## `note_find`") {
		t.Fatal("tools.md does not document note_find")
	}
}

// TestRealCatalogIsFresh: the committed generated/ matches what gen writes now
// (phase one); CI also checks both phases with go generate and git status.
func TestRealCatalogIsFresh(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	if err := Generate(filepath.Join(root, "catalog"), filepath.Join(tmp, "generated"), filepath.Join(tmp, "plugins")); err != nil {
		t.Fatal(err)
	}
	for rel, data := range snapshotRel(t, tmp) {
		have, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || !bytes.Equal(have, data) {
			t.Errorf("%s is stale; run go generate ./...", rel)
		}
	}
}

func snapshotRel(t *testing.T, dir string) map[string][]byte {
	out := map[string][]byte{}
	for p, b := range snapshot(t, dir) {
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
	}
	return out
}

// TestCheckGeneratedFailsWhenStale runs CI's freshness check on a copy of the
// repository: it passes on a fresh tree and fails, naming the file, when the
// catalog changed without regenerating or a generated file was edited by hand.
func TestCheckGeneratedFailsWhenStale(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test runs go generate several times on a copy of the repository")
	}
	root := repoRoot(t)
	ls := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	list, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	copyDir := t.TempDir()
	for _, rel := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue // deleted in the work tree
		}
		mode := os.FileMode(0o644)
		if st, err := os.Stat(filepath.Join(root, rel)); err == nil {
			mode = st.Mode().Perm()
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(copyDir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, rel), b, mode); err != nil {
			t.Fatal(err)
		}
	}
	check := func() (string, bool) {
		cmd := exec.Command("bash", ".ci/check-generated")
		cmd.Dir = copyDir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err == nil
	}
	if out, ok := check(); !ok {
		t.Fatalf("the check fails on a fresh copy:\n%s", out)
	}
	core := filepath.Join(copyDir, "catalog/core.yaml")
	b, _ := os.ReadFile(core)
	edited := strings.Replace(string(b), "Show postern's version", "Show the version of postern", 1)
	if edited == string(b) {
		t.Fatal("the edit changed nothing")
	}
	os.WriteFile(core, []byte(edited), 0o644)
	out, ok := check()
	if ok || !strings.Contains(out, "generated/catalog.go") || !strings.Contains(out, "generated/docs/tools.md") {
		t.Fatalf("a catalog change without regenerating was not caught:\n%s", out)
	}
	if out, ok := check(); !ok {
		t.Fatalf("the check still fails after it regenerated:\n%s", out)
	}
	docs := filepath.Join(copyDir, "generated/docs/scopes.md")
	b, _ = os.ReadFile(docs)
	os.WriteFile(docs, append(b, "hand edit\n"...), 0o644)
	out, ok = check()
	if ok || !strings.Contains(out, "generated/docs/scopes.md") {
		t.Fatalf("a hand edit of generated output was not caught:\n%s", out)
	}
	// The bundles and the host table follow the catalog too.
	server := filepath.Join(copyDir, "catalog/server.yaml")
	b, _ = os.ReadFile(server)
	os.WriteFile(server, []byte(strings.Replace(string(b), "version: 0.1.0", "version: 0.1.1", 1)), 0o644)
	hosts := filepath.Join(copyDir, "catalog/hosts.yaml")
	b, _ = os.ReadFile(hosts)
	os.WriteFile(hosts, []byte(strings.Replace(string(b), "name: Windsurf", "name: Windsurf Editor", 1)), 0o644)
	out, ok = check()
	for _, f := range []string{"plugins/postern/.claude-plugin/plugin.json", "plugins/postern/.codex-plugin/plugin.json",
		"plugins/postern/gemini-extension.json", "plugins/postern/mcpb/manifest.json", "generated/docs/hosts.md", "generated/hosts.go"} {
		if ok || !strings.Contains(out, f) {
			t.Fatalf("a version or host change without regenerating did not name %s:\n%s", f, out)
		}
	}
	mp := filepath.Join(copyDir, ".claude-plugin/marketplace.json")
	b, _ = os.ReadFile(mp)
	os.WriteFile(mp, append(b, ' '), 0o644)
	if out, ok := check(); ok || !strings.Contains(out, ".claude-plugin/marketplace.json") {
		t.Fatalf("a hand edit of the marketplace file was not caught:\n%s", out)
	}
}

// TestTypedArgument: an argument of a declared type decodes into the generated
// struct, and its inlined schema (what the dispatcher validates against)
// checks the nested values: required fields, enums, unknown keys, types.
func TestTypedArgument(t *testing.T) {
	golden := filepath.Join(repoRoot(t), "gen/testdata/fixture/golden/generated")
	b, err := os.ReadFile(filepath.Join(golden, "schemas/filter_check.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("in.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("in.json")
	if err != nil {
		t.Fatal(err)
	}
	// The example tools.md shows is valid.
	docs, err := os.ReadFile(filepath.Join(golden, "docs/tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(docs), "postern call filter_check '")
	example, _, _ := strings.Cut(rest, "'")
	if !ok || !strings.Contains(example, `"match"`) {
		t.Fatalf("tools.md shows no whole example for filter_check: %q", example)
	}
	cases := []struct {
		args string
		ok   bool
	}{
		{example, true},
		{`{"filter": {"name": "a", "match": {}, "actions": []}}`, true},
		{`{"filter": {"name": "a", "match": {"any": [{"flags": ["read"]}]}, "actions": [{"do": "flag"}]}, "against": {"name": "b", "match": {}, "actions": []}}`, true},
		{`{"filter": {"name": "a", "actions": []}}`, false},                                          // match is required
		{`{"filter": {"name": "a", "match": {}, "actions": [{"folder": "X"}]}}`, false},              // do is required
		{`{"filter": {"name": "a", "match": {}, "actions": [{"do": "burn"}]}}`, false},               // not one of the enum
		{`{"filter": {"name": "a", "match": {"size": 3}, "actions": []}}`, false},                    // not a field
		{`{"filter": {"name": "a", "match": {"any": [{"larger": "big"}]}, "actions": []}}`, false},   // a base's field, nested
		{`{"filter": {"name": "a", "match": {"any": [{"flags": ["gone"]}]}, "actions": []}}`, false}, // an enum two levels down
		{`{"against": {"name": "b", "match": {}, "actions": []}}`, false},                            // filter is required
	}
	for _, c := range cases {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(c.args))
		if err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if err := sch.Validate(v); (err == nil) != c.ok {
			t.Errorf("%s: valid=%v, want %v (%v)", c.args, err == nil, c.ok, err)
		}
	}
}

// TestTypeOutputsFollowTheCatalog: the doc page and the type's schema file are
// written while the catalog asks for them, served (DocPages, the embed), and
// removed, with the build still passing, once it no longer does.
func TestTypeOutputsFollowTheCatalog(t *testing.T) {
	mod := fixtureModule(t)
	write(t, filepath.Join(mod, "impl/impl.go"), baseImpl)
	write(t, filepath.Join(mod, "impl/impl_test.go"), `package impl

import (
	"strings"
	"testing"

	"example.com/fixture/generated"
)

func TestServed(t *testing.T) {
	var found bool
	for _, p := range generated.DocPages {
		found = found || p.Name == "filters"
	}
	page, err := generated.Files.ReadFile("docs/filters.md")
	if !found || err != nil || !strings.Contains(string(page), "## A whole `+"`Filter`"+`") {
		t.Fatalf("the filters page is not served: listed %v, %v", found, err)
	}
	schema, err := generated.Files.ReadFile(generated.FilterSchemaFile)
	if err != nil || !strings.Contains(string(schema), "\"actions\"") {
		t.Fatalf("%s: %v", generated.FilterSchemaFile, err)
	}
}
`)
	goCmd(t, mod, "test", "./impl")

	tools := filepath.Join(mod, "catalog/filters.yaml")
	b, err := os.ReadFile(tools)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Replace(string(b), "    schema_file: true\n", "", 1)
	start := strings.Index(cut, "    doc_page:\n")
	end := strings.Index(cut, "    fields:\n      - {name: name, type: string, description: Its name.")
	if cut == string(b) || start < 0 || end < start {
		t.Fatal("the fixture's Filter changed; update this test")
	}
	write(t, tools, cut[:start]+cut[end:])
	os.Remove(filepath.Join(mod, "impl/impl_test.go"))
	generate(t, mod)
	goCmd(t, mod, "run", "./cmd/schemagen")
	goCmd(t, mod, "build", "./...")
	for _, gone := range []string{"generated/docs/filters.md", "generated/schemas/types"} {
		if _, err := os.Stat(filepath.Join(mod, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", gone, err)
		}
	}
	cat, _ := os.ReadFile(filepath.Join(mod, "generated/catalog.go"))
	if strings.Contains(string(cat), "schemas/types") || strings.Contains(string(cat), `"filters"`) {
		t.Error("catalog.go still embeds the type schemas or lists the page")
	}
}

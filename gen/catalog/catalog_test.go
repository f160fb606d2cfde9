package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fixture copies the generator's fixture catalog and the real catalog schema
// into a temporary folder, applies edit to the named file, and loads it.
func fixture(t *testing.T, file string, edit func(string) string, extra map[string]string) (*Catalog, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "catalog")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "../testdata/fixture/catalog"
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if e.Name() == file && edit != nil {
			edited := edit(s)
			if edited == s {
				t.Fatalf("the edit changed nothing in %s", file)
			}
			s = edited
		}
		os.WriteFile(filepath.Join(dir, e.Name()), []byte(s), 0o644)
	}
	for name, content := range extra {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	schema, err := os.ReadFile("../../catalog/" + SchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, SchemaFile), schema, 0o644)
	return Load(dir)
}

func TestFixtureLoads(t *testing.T) {
	c, err := fixture(t, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != 4 || len(c.Scopes) != 4 || len(c.Presets) != 2 || c.Server == nil {
		t.Fatalf("loaded %d tools, %d scopes, %d presets", len(c.Tools), len(c.Scopes), len(c.Presets))
	}
	if p := c.Presets[1]; p.Name != "keeper" || !p.Default || strings.Join(p.Scopes, ",") != "read,read:bodies,mail:modify" {
		t.Errorf("preset keeper loaded as %+v", p)
	}
	if c.Untooled("read") || !c.Untooled("rules:propose") {
		t.Errorf("Untooled: read %v (mail_list declares it), rules:propose %v (no tool does)", c.Untooled("read"), c.Untooled("rules:propose"))
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

func replaceOnce(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

// lineOf is the 1-based line of the first occurrence of needle in file's fixture text.
func lineOf(t *testing.T, file, needle string) int {
	t.Helper()
	b, err := os.ReadFile("../testdata/fixture/catalog/" + file)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), needle)
	if i < 0 {
		t.Fatalf("%q not in %s", needle, file)
	}
	return strings.Count(string(b)[:i], "\n") + 1
}

func TestLintRefuses(t *testing.T) {
	sendLine := lineOf(t, "tools.yaml", "- name: mail_send")
	deleteLine := lineOf(t, "tools.yaml", "- name: mail_delete")
	listLine := lineOf(t, "tools.yaml", "- name: mail_list")
	cases := []struct {
		name  string
		file  string
		edit  func(string) string
		extra map[string]string
		want  string // a line of the problem list, "file:line: …" prefix included
	}{
		{
			name: "undeclared scope",
			file: "tools.yaml",
			edit: replaceOnce(`scope: "read:bodies"`, `scope: "read:everything"`),
			want: `catalog/tools.yaml:` + strconv.Itoa(lineOf(t, "tools.yaml", "- name: mail_show")) + `: tool mail_show uses scope "read:everything", which is not declared`,
		},
		{
			name: "unknown key",
			file: "tools.yaml",
			edit: replaceOnce("    title: Send a message\n", "    title: Send a message\n    colour: blue\n"),
			want: `catalog/tools.yaml:` + strconv.Itoa(sendLine+2) + `: unknown key "colour"`,
		},
		{
			name: "unknown top-level key",
			file: "scopes.yaml",
			edit: replaceOnce("version: 1\n", "version: 1\nscope:\n  - x\n"),
			want: `catalog/scopes.yaml:2: unknown key "scope"`,
		},
		{
			name: "delete not destructive",
			file: "tools.yaml",
			edit: replaceOnce("annotations: {read_only: false, destructive: true, idempotent: false, open_world: true}\n    prepare_commit: true\n    dry_run: true", "annotations: {read_only: false, destructive: false, idempotent: false, open_world: true}\n    prepare_commit: true\n    dry_run: true"),
			want: `catalog/tools.yaml:` + strconv.Itoa(deleteLine) + `: tool mail_delete has effect delete, which cannot be undone; mark it destructive: true`,
		},
		{
			name: "send without prepare/commit",
			file: "tools.yaml",
			edit: replaceOnce("    effect: send\n    annotations: {read_only: false, destructive: true, idempotent: false, open_world: true}\n    prepare_commit: true\n", "    effect: send\n    annotations: {read_only: false, destructive: true, idempotent: false, open_world: true}\n"),
			want: `catalog/tools.yaml:` + strconv.Itoa(sendLine) + `: tool mail_send has effect send and must be a prepare_commit pair`,
		},
		{
			name:  "duplicate name across files",
			extra: map[string]string{"more.yaml": "version: 1\ntools:\n  - name: mail_list\n    title: Again\n    description: The same name a second time, which is refused.\n    scope: read\n    effect: none\n    annotations: {read_only: true, destructive: false, idempotent: true, open_world: false}\n    output: Outcome\n"},
			want:  `catalog/tools.yaml:` + strconv.Itoa(listLine) + `: tool name "mail_list" is used twice (also at catalog/more.yaml:3)`,
		},
		{
			name:  "name taken by a commit half",
			extra: map[string]string{"more.yaml": "version: 1\ntools:\n  - name: mail_send_commit\n    title: Clash\n    description: Clashes with the commit half of mail_send.\n    scope: read\n    effect: none\n    annotations: {read_only: true, destructive: false, idempotent: true, open_world: false}\n    output: Outcome\n"},
			want:  `mail_send_commit`,
		},
		{
			name: "read-only with an effect",
			file: "tools.yaml",
			edit: replaceOnce("    scope: read\n    effect: none\n", "    scope: read\n    effect: local_write\n"),
			want: `tool mail_list is read_only but its effect is local_write`,
		},
		{
			name: "output type not declared",
			file: "tools.yaml",
			edit: replaceOnce("output: MessageList", "output: Nowhere"),
			want: `output type Nowhere is not declared`,
		},
		{
			name: "default outside bounds",
			file: "tools.yaml",
			edit: replaceOnce("default: 50", "default: 900"),
			want: `default 900 is above maximum`,
		},
		{
			name: "required with a default",
			file: "tools.yaml",
			edit: replaceOnce("        required: true\n        pattern:", "        required: true\n        default: abc\n        pattern:"),
			want: `a required argument cannot have a default`,
		},
		{
			name: "bad tool name",
			file: "tools.yaml",
			edit: replaceOnce("name: mail_show", "name: Mail-Show"),
			want: `tool name "Mail-Show" must be snake_case`,
		},
		{
			name: "description too short",
			file: "tools.yaml",
			edit: replaceOnce("description: Show one message's text, framed as data.", "description: Show."),
			want: `tool mail_show: description is missing or shorter than 20 characters`,
		},
		{
			name: "wrong type for a key",
			file: "tools.yaml",
			edit: replaceOnce("prepare_commit: true\n    dry_run: true", "prepare_commit: yes please\n    dry_run: true"),
			want: `/tools/2/prepare_commit`,
		},
		{
			name: "preset with an undeclared scope",
			file: "scopes.yaml",
			edit: replaceOnce(`scopes: [read], line:`, `scopes: [read, "read:all"], line:`),
			want: `catalog/scopes.yaml:` + strconv.Itoa(lineOf(t, "scopes.yaml", "- {name: glance")) + `: preset glance grants scope "read:all", which is not declared in scopes`,
		},
		{
			name: "two default presets",
			file: "scopes.yaml",
			edit: replaceOnce(`scopes: [read], line:`, `scopes: [read], default: true, line:`),
			want: `preset keeper is a default, and so is glance`,
		},
		{
			name: "preset without a line",
			file: "scopes.yaml",
			edit: replaceOnce(`, line: "Sees subjects and senders; cannot read text."`, ``),
			want: `missing required key "line"`,
		},
		{
			name: "host cli without cli section",
			extra: map[string]string{"hosts.yaml": `version: 1
hosts:
  - id: tool
    name: Tool
    kind: cli
    executables: [tool]
    format: json
    key: servers
    entry: command-args
    scopes: [user]
`},
			want: `catalog/hosts.yaml:3: host tool is kind cli: it needs cli`,
		},
		{
			name: "host unknown placeholder",
			extra: map[string]string{"hosts.yaml": `version: 1
hosts:
  - id: tool
    name: Tool
    kind: cli
    executables: [tool]
    format: json
    key: servers
    entry: command-args
    scopes: [user]
    cli:
      add: "tool mcp add {name} -- {command} {args} {home}"
      remove: "tool mcp remove {name}"
      get: "tool mcp get {name}"
`},
			want: `only {name}, {scope}, {command} and {args} are filled in`,
		},
		{
			name: "host command of another program",
			extra: map[string]string{"hosts.yaml": `version: 1
hosts:
  - id: tool
    name: Tool
    kind: cli
    executables: [tool]
    format: json
    key: servers
    entry: command-args
    scopes: [user]
    cli:
      add: "other mcp add {name} -- {command} {args}"
      remove: "tool mcp remove {name}"
      get: "tool mcp get {name}"
`},
			want: `cli add runs "other", not the host's command "tool"`,
		},
		{
			name: "host duplicate id",
			extra: map[string]string{"hosts.yaml": `version: 1
hosts:
  - id: tool
    name: Tool
    kind: cli
    executables: [tool]
    format: json
    key: servers
    entry: command-args
    scopes: [user]
    cli:
      add: "tool mcp add {name} -- {command} {args}"
      remove: "tool mcp remove {name}"
      get: "tool mcp get {name}"
  - id: tool
    name: Tool
    kind: cli
    executables: [tool]
    format: json
    key: servers
    entry: command-args
    scopes: [user]
    cli:
      add: "tool mcp add {name} -- {command} {args}"
      remove: "tool mcp remove {name}"
      get: "tool mcp get {name}"
`},
			want: `host "tool" is declared twice`,
		},
		{
			name: "host toml without codex entry",
			extra: map[string]string{"hosts.yaml": `version: 1
hosts:
  - id: tool
    name: Tool
    kind: cli
    executables: [tool]
    format: toml
    key: servers
    entry: command-args
    scopes: [user]
    cli:
      add: "tool mcp add {name} -- {command} {args}"
      remove: "tool mcp remove {name}"
      get: "tool mcp get {name}"
`},
			want: `entry codex goes with format toml`,
		},
		{
			name: "host file without config",
			extra: map[string]string{"hosts.yaml": `version: 1
hosts:
  - id: tool
    name: Tool
    kind: file
    executables: [tool]
    format: json
    key: servers
    entry: command-args
    scopes: [user]
`},
			want: `host tool is kind file: it needs config`,
		},
		{
			name: "host unknown entry shape",
			extra: map[string]string{"hosts.yaml": `version: 1
hosts:
  - id: tool
    name: Tool
    kind: cli
    executables: [tool]
    format: json
    key: servers
    entry: yaml
    scopes: [user]
    cli:
      add: "tool mcp add {name} -- {command} {args}"
      remove: "tool mcp remove {name}"
      get: "tool mcp get {name}"
`},
			want: `/hosts/0/entry`,
		},
		{
			name: "missing version",
			file: "scopes.yaml",
			edit: replaceOnce("version: 1\n", ""),
			want: `catalog/scopes.yaml:1: missing required key "version"`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := fixture(t, c.file, c.edit, c.extra)
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("not refused: %v", err)
			}
			if !strings.Contains(ps.Error(), c.want) {
				t.Fatalf("problems do not say %q:\n%s", c.want, ps.Error())
			}
			for _, p := range ps {
				if p.Pos.File == "" || p.Pos.Line <= 0 {
					t.Errorf("a problem without file and line: %v", p)
				}
			}
		})
	}
}

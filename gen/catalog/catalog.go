// Package catalog loads postern's YAML catalog, checks it against its JSON
// Schema and lints it into a typed model for the generator.
// It never writes files and never guesses: every problem is reported with its file and line.
package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaFile is the catalog's own JSON Schema, inside the catalog folder.
const SchemaFile = "catalog.schema.json"

// Pos is where something was written in the catalog.
type Pos struct {
	File string // relative to the catalog folder's parent, e.g. catalog/core.yaml
	Line int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// Catalog is the whole catalog, merged from every file.
type Catalog struct {
	Files   []string // the files read, sorted
	Server  *Server
	Scopes  []*Scope
	Presets []*Preset
	// AccountKinds are the kinds of account the configuration accepts, in catalog order.
	AccountKinds []*AccountKind
	Tools        []*Tool
	Types        []*Type // sorted by name
	Resources    []*Resource
	Hosts        []*Host
	Providers    []*Provider
	// Budgets is what the tool list may cost (budgets.yaml), nil when no file declares it.
	Budgets *Budgets
	// Pages are the docs pages written in Markdown (pages/NAME.md), sorted by name.
	Pages []*Page
	// Warnings are the budgets exceeded while budgets.enforce is false: printed, not refused.
	Warnings Problems
}

// Paths is a path per operating system.
type Paths struct {
	Linux   string `yaml:"linux"`
	MacOS   string `yaml:"macos"`
	Windows string `yaml:"windows"`
}

// HostCLI is how a cli host's own command line adds, removes and shows a server.
type HostCLI struct {
	Add    string `yaml:"add"`
	Remove string `yaml:"remove"`
	Get    string `yaml:"get"`
	List   string `yaml:"list"`
}

// HostHTTP is the entry setup --http writes: its shape, a cli host's command adding it, and
// where the shape was confirmed.
type HostHTTP struct {
	Entry  string `yaml:"entry"`
	Add    string `yaml:"add"`
	Source string `yaml:"source"`
}

// Host is an agent host postern can be registered with.
type Host struct {
	ID            string    `yaml:"id"`
	Name          string    `yaml:"name"`
	Kind          string    `yaml:"kind"`
	Executables   []string  `yaml:"executables"`
	Detect        []string  `yaml:"detect"`
	Config        Paths     `yaml:"config"`
	ProjectConfig string    `yaml:"project_config"`
	Format        string    `yaml:"format"`
	Key           string    `yaml:"key"`
	Entry         string    `yaml:"entry"`
	Scopes        []string  `yaml:"scopes"`
	CLI           *HostCLI  `yaml:"cli"`
	HTTP          *HostHTTP `yaml:"http"`
	NoHTTP        string    `yaml:"no_http"`
	Verify        string    `yaml:"verify"`
	Notes         string    `yaml:"notes"`
	Pos           Pos       `yaml:"-"`
}

// Server is what the server says about itself.
type Server struct {
	Name         string `yaml:"name"`
	Title        string `yaml:"title"`
	Instructions string `yaml:"instructions"`
	Description  string `yaml:"description"`
	Version      string `yaml:"version"`
	Author       string `yaml:"author"`
	License      string `yaml:"license"`
	Pos          Pos    `yaml:"-"`
}

// Scope is one grant a person can give.
type Scope struct {
	Name        string `yaml:"name"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	Default     bool   `yaml:"default"`
	// SearchesBodies: granting the scope widens searches to body words and attachment names.
	SearchesBodies bool `yaml:"searches_bodies"`
	Pos            Pos  `yaml:"-"`
}

// Preset is a named grant a person picks at setup, with one line saying what
// an agent can and cannot do under it.
type Preset struct {
	Name    string   `yaml:"name"`
	Scopes  []string `yaml:"scopes"`
	Line    string   `yaml:"line"`
	Default bool     `yaml:"default"`
	Pos     Pos      `yaml:"-"`
}

// AccountKind is one kind of account (kind = "imap" in config.toml): a row of the runtime table
// internal/source/kinds, which a test holds equal to the catalog's list.
type AccountKind struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Pos         Pos    `yaml:"-"`
}

// EnumAccountKinds is the enum_from value that takes a field's enum from account_kinds.
const EnumAccountKinds = "account_kinds"

// Annotations are the MCP hints of a tool.
type Annotations struct {
	ReadOnly    bool `yaml:"read_only"`
	Destructive bool `yaml:"destructive"`
	Idempotent  bool `yaml:"idempotent"`
	OpenWorld   bool `yaml:"open_world"`
}

// Tool is one catalog tool.
type Tool struct {
	Name          string      `yaml:"name"`
	Title         string      `yaml:"title"`
	Description   string      `yaml:"description"`
	Scope         string      `yaml:"scope"`
	Effect        string      `yaml:"effect"`
	Annotations   Annotations `yaml:"annotations"`
	Input         []*Param    `yaml:"input"`
	Output        string      `yaml:"output"`
	PrepareCommit bool        `yaml:"prepare_commit"`
	DryRun        bool        `yaml:"dry_run"`
	// NotUndoable is why a remote_write tool is neither undone from the action log nor
	// approved by the person: the one effect that needs a stated reason.
	NotUndoable string `yaml:"not_undoable"`
	// Target names the argument(s) naming what the tool acts on: id, ids or query.
	Target Names `yaml:"target"`
	// Replaces are old tool names this tool replaces: a call to one is refused
	// with this tool's name.
	Replaces []string `yaml:"replaces"`
	Pos      Pos      `yaml:"-"`
}

// Names is a list of names written either as one name or as a list.
type Names []string

// UnmarshalYAML takes a scalar as a list of one.
func (n *Names) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = Names{v.Value}
		return nil
	}
	var list []string
	if err := v.Decode(&list); err != nil {
		return err
	}
	*n = list
	return nil
}

// Param is one input argument of a tool.
type Param struct {
	Name        string   `yaml:"name"`
	Type        string   `yaml:"type"`
	Description string   `yaml:"description"`
	Required    bool     `yaml:"required"`
	Default     any      `yaml:"default"`
	Enum        []any    `yaml:"enum"`
	Minimum     *float64 `yaml:"minimum"`
	Maximum     *float64 `yaml:"maximum"`
	MinLength   *int     `yaml:"min_length"`
	MaxLength   *int     `yaml:"max_length"`
	Pattern     string   `yaml:"pattern"`
	MaxItems    *int     `yaml:"max_items"`
	Items       *Items   `yaml:"items"`
	FreeText    bool     `yaml:"free_text"`
	Pos         Pos      `yaml:"-"`
}

// Items describes the elements of an array parameter.
type Items struct {
	Type      string `yaml:"type"`
	Enum      []any  `yaml:"enum"`
	Pattern   string `yaml:"pattern"`
	MaxLength *int   `yaml:"max_length"`
}

// Type is a named type: a tool's result, a part of one, or an argument.
type Type struct {
	Name        string `yaml:"-"`
	Description string `yaml:"description"`
	// Extends names a type whose fields come first: after Load, Fields holds
	// the base's fields (recursively) and then the type's own.
	Extends string   `yaml:"extends"`
	Fields  []*Field `yaml:"fields"`
	// DocPage, when set, makes the generator write a docs page for the type and
	// every type it uses, with their examples.
	DocPage *DocPage `yaml:"doc_page"`
	// SchemaFile makes the generator write the type's own JSON Schema
	// (generated/schemas/types/NAME.json) for a tool to serve.
	SchemaFile bool `yaml:"schema_file"`
	Pos        Pos  `yaml:"-"`
}

// DocPage is a generated docs page about a type, served by the docs tool
// beside the fixed pages.
type DocPage struct {
	Name  string `yaml:"name"`
	Title string `yaml:"title"`
	Intro string `yaml:"intro"`
	Pos   Pos    `yaml:"-"`
}

// hasField reports whether t declares a field called name.
func (t *Type) hasField(name string) bool {
	for _, f := range t.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Field is one field of a result type.
type Field struct {
	Name        string   `yaml:"name"`
	Type        string   `yaml:"type"`
	Description string   `yaml:"description"`
	List        bool     `yaml:"list"`
	Optional    bool     `yaml:"optional"`
	Enum        []string `yaml:"enum"`
	// EnumFrom names a list the catalog declares whose names are the enum (account_kinds);
	// after Load, Enum holds them.
	EnumFrom string `yaml:"enum_from"`
	Format   string `yaml:"format"`
	// Example is a value of the field (any JSON value), shown on docs pages.
	Example any `yaml:"example"`
	// From is the type that declares the field: the type itself, or a base it extends.
	From string `yaml:"-"`
	Pos  Pos    `yaml:"-"`
}

// Resource is a resource URI template.
type Resource struct {
	Name        string `yaml:"name"`
	Title       string `yaml:"title"`
	URITemplate string `yaml:"uri_template"`
	Description string `yaml:"description"`
	MimeType    string `yaml:"mime_type"`
	Scope       string `yaml:"scope"`
	Pos         Pos    `yaml:"-"`
}

// Problem is one thing wrong in the catalog.
type Problem struct {
	Pos Pos
	Msg string
}

func (p Problem) String() string { return p.Pos.String() + ": " + p.Msg }

// Problems is every problem found; it is an error.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

type fileDoc struct {
	Version   int              `yaml:"version"`
	Server    *Server          `yaml:"server"`
	Scopes    []*Scope         `yaml:"scopes"`
	Presets   []*Preset        `yaml:"presets"`
	Kinds     []*AccountKind   `yaml:"account_kinds"`
	Tools     []*Tool          `yaml:"tools"`
	Types     map[string]*Type `yaml:"types"`
	Resources []*Resource      `yaml:"resources"`
	Hosts     []*Host          `yaml:"hosts"`
	Providers []*Provider      `yaml:"providers"`
	Budgets   *Budgets         `yaml:"budgets"`
}

// Load reads every *.yaml file of dir, checks each against dir/catalog.schema.json
// and lints the merged catalog. The error, if any, is Problems.
func Load(dir string) (*Catalog, error) {
	schemaPath := filepath.Join(dir, SchemaFile)
	sch, err := compileSchema(schemaPath)
	if err != nil {
		return nil, err
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no catalog files (*.yaml) in %s: run from the repository root or pass the catalog folder", dir)
	}
	display := func(p string) string {
		return filepath.ToSlash(filepath.Join(filepath.Base(dir), filepath.Base(p)))
	}
	c := &Catalog{}
	var probs Problems
	for _, name := range names {
		rel := display(name)
		c.Files = append(c.Files, rel)
		ps := c.loadFile(name, rel, sch)
		probs = append(probs, ps...)
	}
	pages, ps := loadPages(dir)
	c.Pages = pages
	probs = append(probs, ps...)
	if len(probs) == 0 {
		probs = append(probs, c.expandExtends()...)
		probs = append(probs, c.expandEnumFrom()...)
		probs = append(probs, Lint(c)...)
	}
	if len(probs) > 0 {
		sortProblems(probs)
		return nil, probs
	}
	sort.Slice(c.Types, func(i, j int) bool { return c.Types[i].Name < c.Types[j].Name })
	for _, t := range c.Tools {
		if t.DryRun {
			f := false
			t.Input = append(t.Input, &Param{
				Name: "dry_run", Type: "boolean", Default: f, Pos: t.Pos,
				Description: "Only show what would change, changing nothing.",
			})
		}
	}
	// Budgets are measured on the tools as served (dry_run added, pairs split).
	if over := c.lintBudgets(); len(over) > 0 {
		sortProblems(over)
		if !c.Budgets.Enforced() {
			c.Warnings = over
			return c, nil
		}
		return nil, &OverBudget{Problems: over, Table: c.Usage()}
	}
	return c, nil
}

// sortProblems orders ps by file, then line.
func sortProblems(ps Problems) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Pos.File != ps[j].Pos.File {
			return ps[i].Pos.File < ps[j].Pos.File
		}
		return ps[i].Pos.Line < ps[j].Pos.Line
	})
}

func compileSchema(path string) (*jsonschema.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the catalog schema: %w", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("the catalog schema %s is not valid JSON: %w", path, err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("catalog.schema.json", doc); err != nil {
		return nil, err
	}
	return comp.Compile("catalog.schema.json")
}

func (c *Catalog) loadFile(path, rel string, sch *jsonschema.Schema) Problems {
	data, err := os.ReadFile(path)
	if err != nil {
		return Problems{{Pos{rel, 0}, err.Error()}}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Problems{{Pos{rel, yamlErrLine(err)}, "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	if len(root.Content) == 0 {
		return Problems{{Pos{rel, 1}, "the file is empty; a catalog file needs at least version: 1"}}
	}
	doc := root.Content[0]
	// Validate the generic form against the schema.
	var generic any
	if err := doc.Decode(&generic); err != nil {
		return Problems{{Pos{rel, doc.Line}, err.Error()}}
	}
	generic, err = toJSONValue(generic)
	if err != nil {
		return Problems{{Pos{rel, doc.Line}, err.Error()}}
	}
	if err := sch.Validate(generic); err != nil {
		var verr *jsonschema.ValidationError
		if !errors.As(err, &verr) {
			return Problems{{Pos{rel, doc.Line}, err.Error()}}
		}
		var probs Problems
		for _, leaf := range leaves(verr) {
			probs = append(probs, schemaProblem(rel, doc, leaf))
		}
		return dedupe(probs)
	}
	var fd fileDoc
	if err := doc.Decode(&fd); err != nil {
		return Problems{{Pos{rel, doc.Line}, err.Error()}}
	}
	var probs Problems
	if fd.Server != nil {
		if c.Server != nil {
			probs = append(probs, Problem{Pos{rel, lineAt(doc, "server")}, "server is declared twice (also at " + c.Server.Pos.String() + ")"})
		} else {
			fd.Server.Pos = Pos{rel, lineAt(doc, "server")}
			c.Server = fd.Server
		}
	}
	for i, s := range fd.Scopes {
		s.Pos = Pos{rel, lineAt(doc, "scopes", strconv.Itoa(i))}
		c.Scopes = append(c.Scopes, s)
	}
	for i, p := range fd.Presets {
		p.Pos = Pos{rel, lineAt(doc, "presets", strconv.Itoa(i))}
		c.Presets = append(c.Presets, p)
	}
	for i, k := range fd.Kinds {
		k.Pos = Pos{rel, lineAt(doc, "account_kinds", strconv.Itoa(i))}
		c.AccountKinds = append(c.AccountKinds, k)
	}
	for i, t := range fd.Tools {
		t.Pos = Pos{rel, lineAt(doc, "tools", strconv.Itoa(i))}
		for j, p := range t.Input {
			p.Pos = Pos{rel, lineAt(doc, "tools", strconv.Itoa(i), "input", strconv.Itoa(j))}
		}
		c.Tools = append(c.Tools, t)
	}
	for name, t := range fd.Types {
		t.Name = name
		t.Pos = Pos{rel, keyLine(doc, []string{"types"}, name)}
		for j, f := range t.Fields {
			f.Pos = Pos{rel, lineAt(doc, "types", name, "fields", strconv.Itoa(j))}
			f.From = name
			if f.Example != nil {
				if f.Example, err = toJSONValue(f.Example); err != nil {
					probs = append(probs, Problem{f.Pos, err.Error()})
				}
			}
		}
		if t.DocPage != nil {
			t.DocPage.Pos = Pos{rel, lineAt(doc, "types", name, "doc_page")}
		}
		c.Types = append(c.Types, t)
	}
	for i, r := range fd.Resources {
		r.Pos = Pos{rel, lineAt(doc, "resources", strconv.Itoa(i))}
		c.Resources = append(c.Resources, r)
	}
	for i, h := range fd.Hosts {
		h.Pos = Pos{rel, lineAt(doc, "hosts", strconv.Itoa(i))}
		c.Hosts = append(c.Hosts, h)
	}
	for i, p := range fd.Providers {
		p.Pos = Pos{rel, lineAt(doc, "providers", strconv.Itoa(i))}
		c.Providers = append(c.Providers, p)
	}
	if b := fd.Budgets; b != nil {
		b.Pos = Pos{rel, lineAt(doc, "budgets")}
		for name, g := range b.Grants {
			g.Pos = Pos{rel, keyLine(doc, []string{"budgets", "grants"}, name)}
		}
		b.Tool.Pos = Pos{rel, lineAt(doc, "budgets", "tool")}
		if c.Budgets != nil {
			probs = append(probs, Problem{b.Pos, "budgets are declared twice (also at " + c.Budgets.Pos.String() + ")"})
		} else {
			c.Budgets = b
		}
	}
	return probs
}

func dedupe(ps Problems) Problems {
	seen := map[string]bool{}
	var out Problems
	for _, p := range ps {
		k := p.String()
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot represent the file as JSON: %w", err)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func yamlErrLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return 0
	}
	// yaml: line N: ...
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		j := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if j > 0 {
			n, _ := strconv.Atoi(rest[:j])
			return n
		}
	}
	return 0
}

// leaves returns the innermost validation errors.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

var printer = message.NewPrinter(language.English)

func schemaProblem(file string, doc *yaml.Node, e *jsonschema.ValidationError) Problem {
	loc := e.InstanceLocation
	where := "/" + strings.Join(loc, "/")
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		key := k.Properties[0]
		hint := ""
		if strings.ContainsAny(key, " .") {
			hint = " (a comma inside a {…} mapping ends the value before it: put the value in quotes)"
		}
		return Problem{Pos{file, keyLine(doc, loc, key)}, fmt.Sprintf("unknown key %q at %s%s; allowed keys are listed in catalog/%s", key, where, hint, SchemaFile)}
	case *kind.Required:
		return Problem{Pos{file, lineAt(doc, loc...)}, fmt.Sprintf("missing required key %q at %s", k.Missing[0], where)}
	}
	return Problem{Pos{file, lineAt(doc, loc...)}, fmt.Sprintf("%s: %s", where, e.ErrorKind.LocalizedString(printer))}
}

// find walks a YAML node along a JSON-pointer-like path.
func find(n *yaml.Node, path ...string) *yaml.Node {
	for _, p := range path {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					next = n.Content[i+1]
					break
				}
			}
			if next == nil {
				return n
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n.Content) {
				return n
			}
			n = n.Content[i]
		default:
			return n
		}
	}
	return n
}

func lineAt(doc *yaml.Node, path ...string) int { return find(doc, path...).Line }

// keyLine is the line of key inside the mapping at path.
func keyLine(doc *yaml.Node, path []string, key string) int {
	n := find(doc, path...)
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
	}
	return n.Line
}

// Scope returns the scope named name, or nil.
func (c *Catalog) Scope(name string) *Scope {
	for _, s := range c.Scopes {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Untooled reports whether no tool declares scope: granting it gives nothing yet.
func (c *Catalog) Untooled(scope string) bool {
	for _, t := range c.Tools {
		if t.Scope == scope {
			return false
		}
	}
	return true
}

// Type returns the type named name, or nil.
func (c *Catalog) Type(name string) *Type {
	for _, t := range c.Types {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// expandEnumFrom gives each field that declares enum_from the names of the list it names, in
// catalog order, so that schemas and docs see a plain enum.
func (c *Catalog) expandEnumFrom() Problems {
	var probs Problems
	for _, t := range c.Types {
		for _, f := range t.Fields {
			if f.EnumFrom == "" || f.From != t.Name {
				continue
			}
			switch {
			case len(f.Enum) > 0:
				probs = append(probs, Problem{f.Pos, fmt.Sprintf("type %s, field %s: enum and enum_from both given; keep one", t.Name, f.Name)})
				continue
			case f.Type != "string":
				probs = append(probs, Problem{f.Pos, fmt.Sprintf("type %s, field %s: enum_from only applies to string fields", t.Name, f.Name)})
				continue
			case len(c.AccountKinds) == 0:
				probs = append(probs, Problem{f.Pos, fmt.Sprintf("type %s, field %s: enum_from %s, but the catalog declares no account_kinds", t.Name, f.Name, f.EnumFrom)})
				continue
			}
			for _, k := range c.AccountKinds {
				f.Enum = append(f.Enum, k.Name)
			}
		}
	}
	return probs
}

package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/toolwire"
)

// EveryScope is the grant of budgets.yaml that stands for every scope together.
const EveryScope = "every_scope"

// The two kinds of client a grant is budgeted for.
const (
	// ClientAsking can ask the person (MCP elicitation): the _commit twins
	// are not listed, the prepare half asks and runs.
	ClientAsking = "asking"
	// ClientNotAsking cannot: every tool of the grant is listed.
	ClientNotAsking = "not_asking"
)

// Budgets is what the tool list may cost an agent (budgets.yaml).
type Budgets struct {
	// Enforce false makes budgets warnings; absent means true.
	Enforce *bool                   `yaml:"enforce"`
	Tool    ToolBudget              `yaml:"tool"`
	Grants  map[string]*GrantBudget `yaml:"grants"`
	Pos     Pos                     `yaml:"-"`
}

// Enforced reports whether a budget over its limit refuses the catalog.
func (b *Budgets) Enforced() bool { return b == nil || b.Enforce == nil || *b.Enforce }

// ToolBudget is what one tool may cost.
type ToolBudget struct {
	Description int `yaml:"description"`  // characters of the catalog's description
	ModelFacing int `yaml:"model_facing"` // bytes of name, description and listed input schema
	Pos         Pos `yaml:"-"`
}

// GrantBudget is what the tool list of one grant may cost, per kind of client.
type GrantBudget struct {
	Asking    Limits `yaml:"asking"`
	NotAsking Limits `yaml:"not_asking"`
	Pos       Pos    `yaml:"-"`
}

// Limits are a grant's limits for one kind of client; 0 is no limit.
type Limits struct {
	Tools       int `yaml:"tools" json:"tools,omitempty"`
	ModelFacing int `yaml:"model_facing" json:"model_facing,omitempty"`
	Wire        int `yaml:"wire" json:"wire,omitempty"`
}

// Of returns the limits for client kind.
func (g *GrantBudget) Of(client string) Limits {
	if g == nil {
		return Limits{}
	}
	if client == ClientAsking {
		return g.Asking
	}
	return g.NotAsking
}

// Usage is what the tool list of one grant costs one kind of client.
type Usage struct {
	Grant  string   `json:"grant"`
	Scopes []string `json:"scopes"`
	Client string   `json:"client"`
	Tools  int      `json:"tools"`
	// ModelFacing is the bytes of every listed tool's name, description and
	// input schema (toolwire.ModelFacing), summed.
	ModelFacing int `json:"model_facing"`
	// Wire is the bytes of the tools/list result (toolwire.ListResult); 0
	// until the output schemas are written (gen/schemas fills it).
	Wire   int    `json:"wire"`
	Limits Limits `json:"limits"`
	// Listed are the tools listed, in registry order.
	Listed []string `json:"-"`
}

// Over says which of u's figures pass its limits, or "".
func (u Usage) Over() []string {
	var out []string
	l := u.Limits
	if l.Tools > 0 && u.Tools > l.Tools {
		out = append(out, fmt.Sprintf("%d tools, over its %d", u.Tools, l.Tools))
	}
	if l.ModelFacing > 0 && u.ModelFacing > l.ModelFacing {
		out = append(out, fmt.Sprintf("%d bytes model-facing, over its %d", u.ModelFacing, l.ModelFacing))
	}
	if l.Wire > 0 && u.Wire > l.Wire {
		out = append(out, fmt.Sprintf("%d bytes on the wire, over its %d", u.Wire, l.Wire))
	}
	return out
}

// ServedDescription is a description as tools/list serves it: on one line.
func ServedDescription(d string) string { return strings.Join(strings.Fields(d), " ") }

// Grants are the grants budgets speak of, in order: each preset, then every scope.
func (c *Catalog) Grants() []struct {
	Name   string
	Scopes []string
} {
	var out []struct {
		Name   string
		Scopes []string
	}
	for _, p := range c.Presets {
		out = append(out, struct {
			Name   string
			Scopes []string
		}{p.Name, p.Scopes})
	}
	var all []string
	for _, s := range c.Scopes {
		all = append(all, s.Name)
	}
	return append(out, struct {
		Name   string
		Scopes []string
	}{EveryScope, all})
}

// Listed reports whether a client of kind client sees tool t of the registry
// (a split pair's halves included): a client that can ask the person is not
// listed the _commit twins.
func Listed(t *Tool, client string) bool {
	return client != ClientAsking || !IsCommitHalf(t)
}

// OneCallKey is the key, in Usage.Listed, of the pair prep as a client that
// can ask the person is offered it: one tool under prep's name that prepares,
// asks and runs (its commit's annotations and output).
func OneCallKey(prep string) string { return prep + " (one call)" }

func mustMarshal(v any) []byte {
	b, err := toolwire.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// IsCommitHalf reports whether t is the commit half of a split pair.
func IsCommitHalf(t *Tool) bool { return t.PrepareCommit && strings.HasSuffix(t.Name, CommitSuffix) }

// ModelFacing is the bytes a host hands the model for registry tool t.
func (c *Catalog) ModelFacing(t *Tool) int {
	in, err := toolwire.Marshal(c.ListedInput(t))
	if err != nil {
		return 0
	}
	return len(toolwire.ModelFacing(t.Name, ServedDescription(t.Description), in))
}

// Usage measures every grant for both kinds of client from the catalog:
// tools and model-facing bytes (the wire needs the output schemas, which
// gen/schemas measures).
func (c *Catalog) Usage() []Usage {
	reg := c.Registry()
	cost := map[string]int{}
	for _, t := range reg {
		cost[t.Name] = c.ModelFacing(t)
	}
	// A client that can ask the person is offered each pair as one tool: the
	// catalog's own description, the prepare's arguments (internal/dispatch,
	// oneCallTool).
	for _, t := range c.Tools {
		if t.PrepareCommit {
			cost[OneCallKey(t.Name)] = len(toolwire.ModelFacing(t.Name, ServedDescription(t.Description), mustMarshal(c.ListedInput(t))))
		}
	}
	var out []Usage
	for _, g := range c.Grants() {
		in := map[string]bool{}
		for _, s := range g.Scopes {
			in[s] = true
		}
		for _, client := range []string{ClientAsking, ClientNotAsking} {
			u := Usage{Grant: g.Name, Scopes: g.Scopes, Client: client}
			if c.Budgets != nil {
				u.Limits = c.Budgets.Grants[g.Name].Of(client)
			}
			for _, t := range reg {
				if in[t.Scope] && Listed(t, client) {
					key := t.Name
					if client == ClientAsking && t.PrepareCommit {
						key = OneCallKey(t.Name)
					}
					u.Tools++
					u.ModelFacing += cost[key]
					u.Listed = append(u.Listed, key)
				}
			}
			out = append(out, u)
		}
	}
	return out
}

// lintBudgets checks the budgets the catalog alone can measure: each tool's
// description and model-facing bytes, and each grant's tools and
// model-facing bytes. The wire is checked by gen/schemas, which writes the
// output schemas.
func (c *Catalog) lintBudgets() Problems {
	b := c.Budgets
	if b == nil {
		return nil
	}
	var ps Problems
	add := func(p Pos, format string, args ...any) { ps = append(ps, Problem{p, fmt.Sprintf(format, args...)}) }
	grants := map[string]bool{}
	for _, g := range c.Grants() {
		grants[g.Name] = true
		if b.Grants[g.Name] == nil {
			add(b.Pos, "grant %s has no budget; give it one under budgets.grants (asking and not_asking)", g.Name)
		}
	}
	names := make([]string, 0, len(b.Grants))
	for n := range b.Grants {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !grants[n] {
			add(b.Grants[n].Pos, "budgets.grants names %s, which is neither a preset nor %s", n, EveryScope)
		}
	}
	if max := b.Tool.Description; max > 0 {
		for _, t := range c.Tools {
			if n := utf8.RuneCountInString(ServedDescription(t.Description)); n > max {
				add(t.Pos, "tool %s: description is %d characters, over its budget of %d (budgets.yaml); say what it does and when, and move the rest to a docs page", t.Name, n, max)
			}
		}
	}
	if max := b.Tool.ModelFacing; max > 0 {
		for _, t := range c.Tools {
			p, cm := t, (*Tool)(nil)
			if t.PrepareCommit {
				p, cm = ExpandPair(t)
			}
			for _, h := range []*Tool{p, cm} {
				if h == nil {
					continue
				}
				if n := c.ModelFacing(h); n > max {
					add(t.Pos, "tool %s: name, description and input schema are %d bytes, over its budget of %d (budgets.yaml)", h.Name, n, max)
				}
			}
		}
	}
	for _, u := range c.Usage() {
		if over := u.Over(); len(over) > 0 {
			pos := b.Pos
			if g := b.Grants[u.Grant]; g != nil {
				pos = g.Pos
			}
			add(pos, "grant %s, client %s: %s", u.Grant, u.Client, strings.Join(over, "; "))
		}
	}
	return ps
}

// OverBudget is Load's error for a catalog that is sound but over its
// budgets (enforced): the problems, and the table that shows where it goes.
type OverBudget struct {
	Problems Problems
	Table    []Usage
}

func (o *OverBudget) Error() string { return o.Problems.Error() }

// As lets errors.As find the problems.
func (o *OverBudget) As(target any) bool {
	if p, ok := target.(*Problems); ok {
		*p = o.Problems
		return true
	}
	return false
}

// ListedInput is the input schema tools/list serves for registry tool t,
// built from the catalog: what toolwire.Lean keeps of the full schema
// gen/schemas writes (gen/schemas checks that the two agree).
func (c *Catalog) ListedInput(t *Tool) map[string]any {
	props := map[string]any{}
	var required []any
	for _, p := range t.Input {
		if p.Required {
			required = append(required, p.Name)
		}
		if p.Typed() {
			s := c.listedType(c.Type(p.Type))
			s["description"] = strings.TrimSpace(p.Description)
			props[p.Name] = s
			continue
		}
		s := map[string]any{"type": p.Type, "description": strings.TrimSpace(p.Description)}
		if len(p.Enum) > 0 {
			s["enum"] = p.Enum
		}
		if p.Default != nil {
			s["default"] = p.Default
		}
		if p.Minimum != nil {
			s["minimum"] = *p.Minimum
		}
		if p.Maximum != nil {
			s["maximum"] = *p.Maximum
		}
		if p.Items != nil {
			items := map[string]any{"type": p.Items.Type}
			if len(p.Items.Enum) > 0 {
				items["enum"] = p.Items.Enum
			}
			s["items"] = items
		}
		props[p.Name] = s
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return toolwire.Lean(s) // the same keywords as the schema served
}

// listedType is the listed schema of a declared type used as an argument.
func (c *Catalog) listedType(ty *Type) map[string]any {
	if ty == nil {
		return map[string]any{}
	}
	props := map[string]any{}
	var required []any
	for _, f := range ty.Fields {
		if !f.Optional {
			required = append(required, f.Name)
		}
		var elem map[string]any
		if sub := c.Type(f.Type); sub != nil {
			elem = c.listedType(sub)
		} else {
			elem = map[string]any{"type": f.Type}
		}
		if len(f.Enum) > 0 {
			elem["enum"] = f.Enum
		}
		var s map[string]any
		if f.List {
			s = map[string]any{"type": "array", "items": elem}
		} else {
			s = elem
		}
		s["description"] = strings.TrimSpace(f.Description)
		props[f.Name] = s
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props, "description": strings.TrimSpace(ty.Description)}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// UsageJSON is the table as JSON, for generated/ and the bench.
func UsageJSON(us []Usage) ([]byte, error) { return json.MarshalIndent(us, "", "  ") }

// FormatTable is the budget table as text: one row per grant and kind of
// client, each figure beside its limit ("—" when the budget sets none; the
// wire is "?" until measured).
func FormatTable(us []Usage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-10s %10s %22s %24s\n", "grant", "client", "tools", "model-facing", "wire")
	for _, u := range us {
		wire := "?"
		if u.Wire > 0 {
			wire = toolwire.KB(u.Wire)
		}
		fmt.Fprintf(&b, "%-12s %-10s %10s %22s %24s\n", u.Grant, u.Client,
			figure(fmt.Sprint(u.Tools), u.Limits.Tools, fmt.Sprint(u.Limits.Tools), u.Tools),
			figure(toolwire.KB(u.ModelFacing), u.Limits.ModelFacing, toolwire.KB(u.Limits.ModelFacing), u.ModelFacing),
			figure(wire, u.Limits.Wire, toolwire.KB(u.Limits.Wire), u.Wire))
	}
	return b.String()
}

// figure is "value / limit", marked "!" when over it.
func figure(v string, limit int, shown string, n int) string {
	if limit == 0 {
		return v + " / —"
	}
	mark := ""
	if n > limit {
		mark = "!"
	}
	return mark + v + " / " + shown
}

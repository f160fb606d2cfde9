package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// FixedDocPages are the docs pages the generator always writes, in order, with
// their titles; a type's doc_page comes after them and may not take their names.
var FixedDocPages = []Word{
	{"guide", "How an agent should use postern"},
	{"tools", "Every tool: scope, effect, arguments, output, example"},
	{"scopes", "The scopes a person can grant, and the tools under each"},
	{"hosts", "The agent hosts postern sets itself up with, and how"},
	{"providers", "The mail providers postern account add --email knows, and how they sign in"},
}

// Typed reports whether the parameter's type is a declared type rather than
// a scalar or an array.
func (p *Param) Typed() bool { return p.Type != "array" && !scalarTypes[p.Type] }

// expandExtends gives every type that extends another the base's fields
// (recursively) before its own. It reports an unknown base and a cycle; such
// a type keeps only its own fields.
func (c *Catalog) expandExtends() Problems {
	byName := map[string]*Type{}
	for _, t := range c.Types {
		if byName[t.Name] == nil {
			byName[t.Name] = t
		}
	}
	var ps Problems
	done := map[string]bool{}
	var expand func(t *Type, stack []string)
	expand = func(t *Type, stack []string) {
		if done[t.Name] || t.Extends == "" {
			done[t.Name] = true
			return
		}
		for i, s := range stack {
			if s == t.Name {
				cyc := append(append([]string(nil), stack[i:]...), t.Name)
				ps = append(ps, Problem{t.Pos, fmt.Sprintf("type %s extends itself (%s); a type's bases must end", t.Name, strings.Join(cyc, " extends "))})
				for _, n := range cyc {
					done[n] = true // each keeps only its own fields
				}
				return
			}
		}
		base := byName[t.Extends]
		if base == nil {
			ps = append(ps, Problem{t.Pos, fmt.Sprintf("type %s extends %s, which is not declared in types", t.Name, t.Extends)})
			done[t.Name] = true
			return
		}
		expand(base, append(stack, t.Name))
		if done[t.Name] { // part of a cycle, reported
			return
		}
		done[t.Name] = true
		t.Fields = append(append([]*Field(nil), base.Fields...), t.Fields...)
	}
	// In name order, so that a cycle is reported at the same type every run.
	sorted := append([]*Type(nil), c.Types...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, t := range sorted {
		expand(t, nil)
	}
	return dedupe(ps)
}

// Uses is the type named name and every declared type it uses, through its
// fields and its base, each once, in the order a reader meets them: the
// type, then depth first along its fields (a base before the fields it adds).
func (c *Catalog) Uses(name string) []*Type {
	var out []*Type
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		t := c.Type(n)
		if t == nil || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, t)
		if t.Extends != "" {
			walk(t.Extends)
		}
		for _, f := range t.Fields {
			walk(f.Type)
		}
	}
	walk(name)
	return out
}

// WholeExample assembles an example value of type name from its fields'
// examples: a field without one that holds a single declared type gets that
// type's whole example. Fields with neither are left out; nil when nothing is left.
func (c *Catalog) WholeExample(name string) map[string]any {
	return wholeExample(func(n string) *Type { return c.Type(n) }, name, nil)
}

func wholeExample(typ func(string) *Type, name string, stack []string) map[string]any {
	t := typ(name)
	if t == nil {
		return nil
	}
	for _, s := range stack {
		if s == name {
			return nil
		}
	}
	out := map[string]any{}
	for _, f := range t.Fields {
		switch {
		case f.Example != nil:
			out[f.Name] = f.Example
		case !f.List && typ(f.Type) != nil:
			if sub := wholeExample(typ, f.Type, append(stack, name)); sub != nil {
				out[f.Name] = sub
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// checkExample says what is wrong with v as a value of field f (a list of
// them when f.List), or "". Objects are checked against their declared type:
// only its fields, every required one present.
func checkExample(types map[string]*Type, f *Field, v any, depth int) string {
	if f.List {
		items, ok := v.([]any)
		if !ok {
			return "is not a list"
		}
		one := *f
		one.List = false
		for i, e := range items {
			if msg := checkExample(types, &one, e, depth); msg != "" {
				return fmt.Sprintf("[%d] %s", i, msg)
			}
		}
		return ""
	}
	switch f.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("%s is not a string", show(v))
		}
		if len(f.Enum) > 0 && !contains(f.Enum, s) {
			return fmt.Sprintf("%q is not one of %s", s, strings.Join(f.Enum, ", "))
		}
	case "integer":
		n, ok := v.(json.Number)
		if _, err := n.Int64(); !ok || err != nil {
			return fmt.Sprintf("%s is not an integer", show(v))
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return fmt.Sprintf("%s is not a number", show(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("%s is not a boolean", show(v))
		}
	default:
		t := types[f.Type]
		if t == nil || depth > 32 {
			return "" // reported elsewhere: an undeclared type, or a cycle
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s is not an object (a %s)", show(v), t.Name)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !t.hasField(k) {
				return fmt.Sprintf("has %q, which is not a field of %s", k, t.Name)
			}
		}
		for _, sf := range t.Fields {
			sv, ok := obj[sf.Name]
			if !ok {
				if !sf.Optional {
					return fmt.Sprintf("lacks %s, a required field of %s", sf.Name, t.Name)
				}
				continue
			}
			if msg := checkExample(types, sf, sv, depth+1); msg != "" {
				return sf.Name + " " + msg
			}
		}
	}
	return ""
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// notForInput are the field formats a type used as an argument may not hold:
// body is mail text that postern frames between marker lines, markdown is
// postern's own text; neither is something an agent writes.
var notForInput = map[string]bool{"body": true, "own_body": true, "markdown": true}

// inputProblems lists the fields of type name, and of the types it uses,
// that an argument cannot hold, as "Type.field has format body".
func inputProblems(types map[string]*Type, name string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		t := types[n]
		if t == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, f := range t.Fields {
			if notForInput[f.Format] {
				out = append(out, fmt.Sprintf("%s.%s has format %s", f.From, f.Name, f.Format))
			}
			walk(f.Type)
		}
	}
	walk(name)
	return dedupeStrings(out)
}

func dedupeStrings(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// lintDocPages checks the doc pages types declare: a name not taken by a
// fixed page nor by another type's page, and a whole example that holds
// every required field of every object in it.
func lintDocPages(c *Catalog, types map[string]*Type, add func(Pos, string, ...any)) {
	pages := map[string]string{}
	for _, w := range FixedDocPages {
		pages[w.Name] = "a page the generator always writes"
	}
	for _, p := range c.Pages {
		if prev, ok := pages[p.Name]; ok {
			add(p.Pos, "page %s is already %s; rename the file", p.Name, prev)
			continue
		}
		pages[p.Name] = "the page " + p.Pos.File
	}
	sorted := append([]*Type(nil), c.Types...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, t := range sorted {
		if t.DocPage == nil {
			continue
		}
		if prev, ok := pages[t.DocPage.Name]; ok {
			add(t.DocPage.Pos, "type %s: doc_page %s is already %s; choose another name", t.Name, t.DocPage.Name, prev)
			continue
		}
		pages[t.DocPage.Name] = "the page of type " + t.Name
		if !examplesFit(types, t.Name) {
			continue // lintType reports the example that does not fit
		}
		whole := wholeExample(func(n string) *Type { return types[n] }, t.Name, nil)
		if whole == nil {
			add(t.DocPage.Pos, "type %s has doc_page %s but no field with an example; give its fields example: values", t.Name, t.DocPage.Name)
			continue
		}
		self := &Field{Name: t.Name, Type: t.Name, From: t.Name}
		if msg := checkExample(types, self, whole, 0); msg != "" {
			add(t.DocPage.Pos, "type %s: the whole example its doc_page %s assembles from the fields' examples %s; add the missing example: values", t.Name, t.DocPage.Name, msg)
		}
	}
}

// examplesFit reports whether every example of type name and of the types it
// uses fits its field.
func examplesFit(types map[string]*Type, name string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(n string) bool {
		t := types[n]
		if t == nil || seen[n] {
			return true
		}
		seen[n] = true
		for _, f := range t.Fields {
			if f.Example != nil && checkExample(types, f, f.Example, 0) != "" {
				return false
			}
			if !walk(f.Type) {
				return false
			}
		}
		return true
	}
	return walk(name)
}

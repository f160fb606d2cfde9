// Package schemas writes the JSON Schemas (draft 2020-12) of every tool's input
// and output, and of the types marked schema_file: github.com/invopop/jsonschema
// reflects the generated Go types, and the catalog's limits and descriptions are
// laid over them. Input schemas are self-contained (no $ref, no $defs) because
// some hosts cannot resolve references; an argument of a declared type has that
// type's schema inlined. An output schema describes each type it holds more
// than once a single time, under $defs, and points to it with a local $ref
// (clients validate structuredContent with it; every validator resolves a
// reference inside the same schema).
package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/postern-mcp/postern/gen/catalog"
	"github.com/postern-mcp/postern/internal/toolwire"
)

// ToolTypes pairs a tool's name with values of its generated argument and result types.
type ToolTypes struct {
	Name   string
	Args   any
	Result any
}

// TypesDir is the folder, under schemas/, of the standalone schemas of the
// types marked schema_file; gen writes its index.json, Write the rest.
const TypesDir = "types"

// Write writes schemas/NAME.input.json and NAME.output.json for every tool into
// outDir, and schemas/types/TYPE.json for every type marked schema_file, and
// removes schema files of tools and types that no longer are.
func Write(catDir, outDir string, tools []ToolTypes) error {
	cat, err := catalog.Load(catDir)
	if err != nil {
		return err
	}
	byName := map[string]*catalog.Tool{}
	for _, t := range cat.Registry() {
		byName[t.Name] = t
	}
	dir := filepath.Join(outDir, "schemas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{"index.json": true}
	entries := map[string][]byte{}
	inputs := map[string][]byte{} // the listed input schema of each tool written
	for _, tt := range tools {
		ct := byName[tt.Name]
		if ct == nil {
			return fmt.Errorf("tool %s is in the generated registry but not in the catalog: run go generate ./... again", tt.Name)
		}
		in, err := Input(cat, ct, tt.Args)
		if err != nil {
			return err
		}
		out, err := Output(cat, ct, tt.Result)
		if err != nil {
			return err
		}
		written := map[string][]byte{}
		for name, s := range map[string]map[string]any{"input": in, "output": out} {
			b, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				return err
			}
			b = append(b, '\n')
			file := tt.Name + "." + name + ".json"
			keep[file] = true
			written[name] = b
			if err := writeIfChanged(filepath.Join(dir, file), b); err != nil {
				return err
			}
		}
		e, err := entry(cat, ct, written["input"], written["output"])
		if err != nil {
			return err
		}
		entries[tt.Name] = e
		if catalog.IsCommitHalf(ct) {
			// The pair as one tool (internal/dispatch, oneCallTool): the
			// catalog's description and the prepare's arguments, with the
			// commit's annotations (never read-only) and output.
			prep := strings.TrimSuffix(ct.Name, catalog.CommitSuffix)
			var orig *catalog.Tool
			for _, t := range cat.Tools {
				if t.Name == prep {
					orig = t
				}
			}
			if orig == nil || inputs[prep] == nil {
				return fmt.Errorf("tool %s: its prepare half %s was not written first", ct.Name, prep)
			}
			lout, err := toolwire.ListedOutput(written["output"])
			if err != nil {
				return err
			}
			a := orig.Annotations
			entries[catalog.OneCallKey(prep)] = toolwire.Entry(toolwire.Tool{
				Name: prep, Title: orig.Title, Description: catalog.ServedDescription(orig.Description),
				Input: inputs[prep], Output: lout,
				Annotations: toolwire.Annotations{ReadOnlyHint: false, DestructiveHint: a.Destructive, IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld},
			}, toolwire.Latest)
		}
		if listed, err := toolwire.Listed(written["input"]); err == nil {
			inputs[tt.Name] = listed
		}
	}
	if err := removeStale(dir, keep); err != nil {
		return err
	}
	if err := writeTypes(cat, filepath.Join(dir, TypesDir), tools); err != nil {
		return err
	}
	return checkBudgets(cat, outDir, entries)
}

// entry is the tools/list entry of registry tool ct whose schemas are the
// files in and out, as the server writes it (internal/toolwire, the newest
// revision). It also checks that the input schema the server lists, the
// lean form of in, is the one the catalog's budgets were measured on.
func entry(cat *catalog.Catalog, ct *catalog.Tool, in, out []byte) ([]byte, error) {
	listed, err := toolwire.Listed(in)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", ct.Name, err)
	}
	measured, err := toolwire.Marshal(cat.ListedInput(ct))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(listed, measured) {
		return nil, fmt.Errorf("tool %s: the input schema tools/list serves differs from the one the budgets measure (a generator bug):\nserved   %s\nmeasured %s", ct.Name, listed, measured)
	}
	lout, err := toolwire.ListedOutput(out)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", ct.Name, err)
	}
	a := ct.Annotations
	return toolwire.Entry(toolwire.Tool{
		Name: ct.Name, Title: ct.Title, Description: catalog.ServedDescription(ct.Description),
		Input: listed, Output: lout,
		Annotations: toolwire.Annotations{ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive, IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld},
	}, toolwire.Latest), nil
}

// BudgetFile is the budget table, under the output folder: every grant for
// both kinds of client, with the wire measured (the binary's tests compare it
// with tools/list).
const BudgetFile = "budget.json"

// Stderr is where the budget table and its warnings are printed.
var Stderr io.Writer = os.Stderr

// checkBudgets measures the wire of every grant from entries, writes
// BudgetFile, and refuses a grant over its wire budget (only printing it
// while budgets.enforce is false). When anything is over budget, it prints
// the whole table.
func checkBudgets(cat *catalog.Catalog, outDir string, entries map[string][]byte) error {
	usage := cat.Usage()
	var over []string
	for i := range usage {
		u := &usage[i]
		var es [][]byte
		for _, n := range u.Listed {
			es = append(es, entries[n])
		}
		u.Wire = len(toolwire.ListResult(es))
		if o := u.Over(); len(o) > 0 {
			over = append(over, fmt.Sprintf("grant %s, client %s: %s", u.Grant, u.Client, strings.Join(o, "; ")))
		}
	}
	b, err := catalog.UsageJSON(usage)
	if err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(outDir, BudgetFile), append(b, '\n')); err != nil {
		return err
	}
	if len(over) == 0 && len(cat.Warnings) == 0 {
		return nil
	}
	fmt.Fprint(Stderr, "\nWhat the tool list costs (figure / budget of catalog/budgets.yaml, ! over it):\n"+catalog.FormatTable(usage))
	if !cat.Budgets.Enforced() {
		fmt.Fprintln(Stderr, "warning: the catalog is over budget (the table above and the warnings before it); budgets.enforce is false in catalog/budgets.yaml, so go generate goes on")
		return nil
	}
	return fmt.Errorf("the tool list is over its budget (catalog/budgets.yaml):\n%s", strings.Join(over, "\n"))
}

// writeTypes writes the standalone schema of every type marked schema_file.
// Its Go type is found among the tools' argument and result types, which hold
// every type a tool uses; each whole example the catalog assembles must validate.
func writeTypes(cat *catalog.Catalog, dir string, tools []ToolTypes) error {
	goTypes := map[string]reflect.Type{}
	for _, tt := range tools {
		collect(reflect.TypeOf(tt.Args), goTypes)
		collect(reflect.TypeOf(tt.Result), goTypes)
	}
	keep := map[string]bool{"index.json": true}
	for _, ct := range cat.Types {
		if !ct.SchemaFile {
			continue
		}
		gt := goTypes[ct.Name]
		if gt == nil {
			return fmt.Errorf("type %s has schema_file, but no tool's arguments or result hold it; use it in a tool or drop schema_file", ct.Name)
		}
		s, err := TypeSchema(cat, ct, reflect.New(gt).Interface())
		if err != nil {
			return err
		}
		if err := checkExample(cat, ct, s); err != nil {
			return err
		}
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		keep[ct.Name+".json"] = true
		if err := writeIfChanged(filepath.Join(dir, ct.Name+".json"), append(b, '\n')); err != nil {
			return err
		}
	}
	if err := removeStale(dir, keep); err != nil && !os.IsNotExist(err) {
		return err
	}
	os.Remove(dir) // only when empty: no type has a schema file any more
	return nil
}

// collect records every named struct type reachable from t, by name.
func collect(t reflect.Type, into map[string]reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.Name() == "" || into[t.Name()] != nil {
		return
	}
	into[t.Name()] = t
	for i := 0; i < t.NumField(); i++ {
		collect(t.Field(i).Type, into)
	}
}

// checkExample validates the whole example the catalog assembles for ct
// (the one its docs page shows) against ct's schema.
func checkExample(cat *catalog.Catalog, ct *catalog.Type, s map[string]any) error {
	ex := cat.WholeExample(ct.Name)
	if ex == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	comp := validator.NewCompiler()
	if err := comp.AddResource("type.json", doc); err != nil {
		return err
	}
	sch, err := comp.Compile("type.json")
	if err != nil {
		return fmt.Errorf("the schema of type %s does not compile: %w", ct.Name, err)
	}
	eb, err := json.Marshal(ex)
	if err != nil {
		return err
	}
	v, err := validator.UnmarshalJSON(bytes.NewReader(eb))
	if err != nil {
		return err
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("the whole example of type %s, assembled from its fields' examples, does not fit its schema; fix the examples in the catalog: %v", ct.Name, err)
	}
	return nil
}

// removeStale removes the *.json files of dir that keep does not name.
func removeStale(dir string, keep map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

// reflectSchema turns a Go value's type into a generic JSON Schema map.
func reflectSchema(v any, requiredFromTags bool) (map[string]any, error) {
	r := &jsonschema.Reflector{
		DoNotReference:             true,
		ExpandedStruct:             true,
		Anonymous:                  true,
		RequiredFromJSONSchemaTags: requiredFromTags,
	}
	s := r.Reflect(v)
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if strings.Contains(string(b), `"$ref"`) || strings.Contains(string(b), `"$defs"`) {
		return nil, fmt.Errorf("the schema of %T holds a reference; result types must be plain trees", v)
	}
	return m, nil
}

// Input is the input schema of a tool: reflected Args plus the catalog's
// limits; an argument of a declared type is that type's schema (TypeSchema),
// under the argument's description.
func Input(c *catalog.Catalog, t *catalog.Tool, args any) (map[string]any, error) {
	s, err := reflectSchema(args, true)
	if err != nil {
		return nil, err
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	for _, p := range t.Input {
		ps, ok := props[p.Name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("tool %s: argument %s is missing from the generated Args; run go generate ./... again", t.Name, p.Name)
		}
		if p.Typed() {
			ts, err := argSchema(c, t, p, args)
			if err != nil {
				return nil, err
			}
			ts["description"] = strings.TrimSpace(p.Description)
			props[p.Name] = ts
			continue
		}
		ps["description"] = strings.TrimSpace(p.Description)
		if len(p.Enum) > 0 {
			ps["enum"] = p.Enum
		}
		if p.Default != nil {
			ps["default"] = p.Default
		}
		setNum(ps, "minimum", p.Minimum)
		setNum(ps, "maximum", p.Maximum)
		setInt(ps, "minLength", p.MinLength)
		setInt(ps, "maxLength", p.MaxLength)
		setInt(ps, "maxItems", p.MaxItems)
		if p.Pattern != "" {
			ps["pattern"] = p.Pattern
		}
		if p.Items != nil {
			items, _ := ps["items"].(map[string]any)
			if items == nil {
				items = map[string]any{"type": p.Items.Type}
				ps["items"] = items
			}
			if len(p.Items.Enum) > 0 {
				items["enum"] = p.Items.Enum
			}
			if p.Items.Pattern != "" {
				items["pattern"] = p.Items.Pattern
			}
			setInt(items, "maxLength", p.Items.MaxLength)
		}
	}
	s["additionalProperties"] = false
	s["type"] = "object"
	return s, nil
}

// Output is the output schema of a tool: reflected result type plus
// descriptions and enums, each type it holds more than once described once
// (ShareTypes).
func Output(c *catalog.Catalog, t *catalog.Tool, result any) (map[string]any, error) {
	s, err := TypeSchema(c, c.Type(t.Output), result)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	ShareTypes(c, c.Type(t.Output), s)
	return s, nil
}

// ShareTypes rewrites s, the inlined schema of type ct, so that every
// declared type it holds more than once (a row type: a message in a list and
// in a thread, an address in from, to and cc) is described once, under
// $defs/NAME, and each place holding it is {"$ref": "#/$defs/NAME"} (with the
// field's own description beside it). A type held once stays inline.
func ShareTypes(c *catalog.Catalog, ct *catalog.Type, s map[string]any) {
	// How many places hold each type once every shared type is described
	// once: a type's own fields are counted the first time it is met.
	uses := map[string]int{}
	seen := map[string]bool{ct.Name: true}
	var count func(t *catalog.Type)
	count = func(t *catalog.Type) {
		for _, f := range t.Fields {
			sub := c.Type(f.Type)
			if sub == nil {
				continue
			}
			uses[f.Type]++
			if !seen[f.Type] {
				seen[f.Type] = true
				count(sub)
			}
		}
	}
	count(ct)
	defs := map[string]any{}
	var walk func(t *catalog.Type, s map[string]any)
	walk = func(t *catalog.Type, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		for _, f := range t.Fields {
			sub := c.Type(f.Type)
			ps, _ := props[f.Name].(map[string]any)
			if sub == nil || ps == nil {
				continue
			}
			target := ps
			if f.List {
				target, _ = ps["items"].(map[string]any)
			}
			if target == nil {
				continue
			}
			if uses[f.Type] < 2 {
				walk(sub, target)
				continue
			}
			if _, done := defs[f.Type]; !done {
				def := make(map[string]any, len(target))
				for k, v := range target {
					def[k] = v
				}
				def["description"] = strings.TrimSpace(sub.Description)
				defs[f.Type] = def
				walk(sub, def)
			}
			ref := map[string]any{"$ref": "#/$defs/" + f.Type}
			if f.List {
				ps["items"] = ref
			} else {
				if d, ok := ps["description"]; ok {
					ref["description"] = d
				}
				props[f.Name] = ref
			}
		}
	}
	walk(ct, s)
	if len(defs) > 0 {
		s["$defs"] = defs
	}
}

// TypeSchema is the schema of a catalog type, whose generated Go value is v:
// reflected (fields without omitempty are required, no other property is
// allowed) with the catalog's descriptions and enums laid over it, the types
// it uses inlined. It is a tool's output schema, an argument's schema and a
// schema_file.
func TypeSchema(c *catalog.Catalog, ct *catalog.Type, v any) (map[string]any, error) {
	s, err := reflectSchema(v, false)
	if err != nil {
		return nil, err
	}
	if err := overlayType(c, ct, s); err != nil {
		return nil, err
	}
	return s, nil
}

// argSchema is the schema of the typed argument p: its type's, without the
// top-level $schema.
func argSchema(c *catalog.Catalog, t *catalog.Tool, p *catalog.Param, args any) (map[string]any, error) {
	at := reflect.TypeOf(args)
	for at.Kind() == reflect.Pointer {
		at = at.Elem()
	}
	for i := 0; i < at.NumField(); i++ {
		sf := at.Field(i)
		if name, _, _ := strings.Cut(sf.Tag.Get("json"), ","); name != p.Name {
			continue
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		s, err := TypeSchema(c, c.Type(p.Type), reflect.New(ft).Interface())
		if err != nil {
			return nil, fmt.Errorf("tool %s, argument %s: %w", t.Name, p.Name, err)
		}
		delete(s, "$schema")
		return s, nil
	}
	return nil, fmt.Errorf("tool %s: argument %s is missing from the generated Args; run go generate ./... again", t.Name, p.Name)
}

func overlayType(c *catalog.Catalog, ct *catalog.Type, s map[string]any) error {
	if ct == nil {
		return fmt.Errorf("type not in the catalog")
	}
	s["description"] = strings.TrimSpace(ct.Description)
	props, _ := s["properties"].(map[string]any)
	for _, f := range ct.Fields {
		ps, ok := props[f.Name].(map[string]any)
		if !ok {
			return fmt.Errorf("field %s.%s is missing from the generated type; run go generate ./... again", ct.Name, f.Name)
		}
		ps["description"] = strings.TrimSpace(f.Description)
		target := ps
		if f.List {
			target, _ = ps["items"].(map[string]any)
		}
		if len(f.Enum) > 0 {
			target["enum"] = f.Enum
		}
		if sub := c.Type(f.Type); sub != nil {
			desc := ps["description"]
			if err := overlayType(c, sub, target); err != nil {
				return err
			}
			if !f.List {
				ps["description"] = desc
			}
		}
	}
	return nil
}

func setNum(m map[string]any, k string, v *float64) {
	if v != nil {
		m[k] = *v
	}
}

func setInt(m map[string]any, k string, v *int) {
	if v != nil {
		m[k] = *v
	}
}

// Package schemas writes the JSON Schemas (draft 2020-12) of every tool's input
// and output: github.com/invopop/jsonschema reflects the generated Go types, and
// the catalog's limits and descriptions are laid over them. Output is self-contained
// (no $ref, no $defs) because some hosts cannot resolve references.
package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/postern-mcp/postern/gen/catalog"
)

// ToolTypes pairs a tool's name with values of its generated argument and result types.
type ToolTypes struct {
	Name   string
	Args   any
	Result any
}

// Write writes schemas/NAME.input.json and NAME.output.json for every tool into
// outDir, and removes schema files of tools that no longer exist.
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
	for _, tt := range tools {
		ct := byName[tt.Name]
		if ct == nil {
			return fmt.Errorf("tool %s is in the generated registry but not in the catalog: run go generate ./... again", tt.Name)
		}
		in, err := Input(ct, tt.Args)
		if err != nil {
			return err
		}
		out, err := Output(cat, ct, tt.Result)
		if err != nil {
			return err
		}
		for name, s := range map[string]map[string]any{tt.Name + ".input.json": in, tt.Name + ".output.json": out} {
			b, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				return err
			}
			b = append(b, '\n')
			keep[name] = true
			if err := writeIfChanged(filepath.Join(dir, name), b); err != nil {
				return err
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !keep[e.Name()] {
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

// reflect turns a Go value's type into a generic JSON Schema map.
func reflect(v any, requiredFromTags bool) (map[string]any, error) {
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

// Input is the input schema of a tool: reflected Args plus the catalog's limits.
func Input(t *catalog.Tool, args any) (map[string]any, error) {
	s, err := reflect(args, true)
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

// Output is the output schema of a tool: reflected result type plus descriptions and enums.
func Output(c *catalog.Catalog, t *catalog.Tool, result any) (map[string]any, error) {
	s, err := reflect(result, false)
	if err != nil {
		return nil, err
	}
	if err := overlayType(c, c.Type(t.Output), s); err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	return s, nil
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

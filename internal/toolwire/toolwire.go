// Package toolwire is how one tool is written into a tools/list answer, in
// one place: the server lists tools with it and the generator measures the
// catalog's budgets with it, so that the figures the generator checks are the
// bytes a client receives. It imports nothing of postern (in particular not
// package generated, which the generator writes).
//
// Two schemas exist for a tool's arguments. The full one (generated/schemas)
// is what calls are validated against: patterns, lengths and list limits
// included. The listed one, Listed, is what a model reads: only what says
// which arguments exist, what they hold and which values they take.
package toolwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ListedKeywords are the schema keywords the listed input schema keeps; every
// other keyword of the full schema ($schema, pattern, minLength, maxLength,
// maxItems, …) stays only in the schema calls are validated against.
// additionalProperties is kept when it is false (an unknown argument is
// refused), the one value that tells a model something; $ref and $defs are
// kept so that a schema with references stays whole.
var ListedKeywords = map[string]bool{
	"type": true, "description": true, "properties": true, "required": true,
	"enum": true, "items": true, "default": true, "minimum": true, "maximum": true,
	"additionalProperties": true, "$ref": true, "$defs": true,
}

// Listed returns the listed form of a full input schema (JSON): the keywords
// of ListedKeywords, recursively through properties and items, as compact
// JSON with sorted keys.
func Listed(full []byte) ([]byte, error) {
	var s map[string]any
	if err := json.Unmarshal(full, &s); err != nil {
		return nil, fmt.Errorf("the input schema is not a JSON object: %w", err)
	}
	return Marshal(Lean(s))
}

// Lean keeps the keywords of ListedKeywords of schema s, recursively; s is
// left as it was.
func Lean(s map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		if !ListedKeywords[k] {
			continue
		}
		switch k {
		case "properties":
			props, _ := v.(map[string]any)
			lean := make(map[string]any, len(props))
			for name, p := range props {
				if ps, ok := p.(map[string]any); ok {
					lean[name] = Lean(ps)
				} else {
					lean[name] = p
				}
			}
			out[k] = lean
		case "$defs":
			defs, _ := v.(map[string]any)
			lean := make(map[string]any, len(defs))
			for name, d := range defs {
				if ds, ok := d.(map[string]any); ok {
					lean[name] = Lean(ds)
				} else {
					lean[name] = d
				}
			}
			out[k] = lean
		case "items":
			if is, ok := v.(map[string]any); ok {
				out[k] = Lean(is)
			} else {
				out[k] = v
			}
		case "default":
			// A flag's false is what its absence means: no word for the model.
			if b, ok := v.(bool); ok && !b {
				continue
			}
			out[k] = v
		case "additionalProperties":
			if b, ok := v.(bool); ok && !b {
				out[k] = false
			}
		default:
			out[k] = v
		}
	}
	return out
}

// outputDropped are the keywords of an output schema that validation does not
// read: the words for people (the full schema under generated/schemas and the
// docs keep them).
var outputDropped = map[string]bool{"$schema": true, "description": true, "title": true, "examples": true, "default": true, "$comment": true}

// ListedOutput returns the listed form of a full output schema (JSON): every
// keyword validation reads, none of the words for people, as compact JSON
// with sorted keys. A client validates structured content with it exactly as
// with the full schema.
func ListedOutput(full []byte) ([]byte, error) {
	var s map[string]any
	if err := json.Unmarshal(full, &s); err != nil {
		return nil, fmt.Errorf("the output schema is not a JSON object: %w", err)
	}
	return Marshal(leanOutput(s))
}

// leanOutput drops outputDropped from schema s and every schema inside it;
// the names under properties and $defs are names, never keywords.
func leanOutput(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if outputDropped[k] {
			continue
		}
		switch k {
		case "properties", "$defs", "patternProperties":
			m, _ := v.(map[string]any)
			lean := make(map[string]any, len(m))
			for name, sub := range m {
				if ss, ok := sub.(map[string]any); ok {
					lean[name] = leanOutput(ss)
				} else {
					lean[name] = sub
				}
			}
			out[k] = lean
		case "items", "additionalProperties", "not", "contains", "if", "then", "else":
			if ss, ok := v.(map[string]any); ok {
				out[k] = leanOutput(ss)
			} else {
				out[k] = v
			}
		case "anyOf", "oneOf", "allOf", "prefixItems":
			arr, _ := v.([]any)
			lean := make([]any, len(arr))
			for i, sub := range arr {
				if ss, ok := sub.(map[string]any); ok {
					lean[i] = leanOutput(ss)
				} else {
					lean[i] = sub
				}
			}
			out[k] = lean
		default:
			out[k] = v
		}
	}
	return out
}

// Marshal is v as compact JSON, keys of maps sorted, HTML characters escaped
// as encoding/json does (the server's answers escape them too).
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Annotations are a tool's MCP hints as listed.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// Tool is what a tools/list entry is made of. Input is the listed input
// schema (Listed), Output the output schema, both compact JSON.
type Tool struct {
	Name        string
	Title       string
	Description string
	Input       json.RawMessage
	Output      json.RawMessage
	Annotations Annotations // its Title is set from Tool.Title
}

// Revision is what a protocol revision lists of a tool besides its name,
// description and input schema.
type Revision struct {
	Titles      bool // title and outputSchema
	Annotations bool // annotations
}

// Latest is what the newest revisions list: everything.
var Latest = Revision{Titles: true, Annotations: true}

// Entry is the tools/list entry of t under revision r: the object a client
// receives, as compact JSON.
func Entry(t Tool, r Revision) []byte {
	type tool struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  *Annotations    `json:"annotations,omitempty"`
	}
	out := tool{Name: t.Name, Description: t.Description, InputSchema: t.Input}
	if r.Annotations {
		a := t.Annotations
		a.Title = t.Title
		out.Annotations = &a
	}
	if r.Titles {
		out.Title = t.Title
		out.OutputSchema = t.Output
	}
	b, err := json.Marshal(out)
	if err != nil { // only a schema that is not JSON, which the registry refuses first
		return nil
	}
	return b
}

// ModelFacing is what a host hands the model of one tool: its name,
// description and listed input schema, as compact JSON in that order.
func ModelFacing(name, description string, input json.RawMessage) []byte {
	var b bytes.Buffer
	n, _ := json.Marshal(name)
	d, _ := json.Marshal(description)
	b.WriteString(`{"name":`)
	b.Write(n)
	b.WriteString(`,"description":`)
	b.Write(d)
	b.WriteString(`,"inputSchema":`)
	if err := json.Compact(&b, input); err != nil {
		b.Write(input)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ListResult is the result of a tools/list answer that holds entries, one
// page, on an initialize-era connection: {"tools":[…]}. Its length is a
// grant's wire size.
func ListResult(entries [][]byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// KB formats n bytes as kilobytes (1024 bytes) with one decimal.
func KB(n int) string { return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KB" }

// Cost is what one tools/list answer costs a client.
type Cost struct {
	Tools       int      `json:"tools"`
	ModelFacing int      `json:"model_facing"`
	Wire        int      `json:"wire"`
	Names       []string `json:"-"`
}

// Measure reads the result of a tools/list answer as received ({"tools":
// […], …}) and counts its tools, their model-facing bytes (ModelFacing of
// each) and its wire bytes (ListResult of the entries as received).
func Measure(result []byte) (Cost, error) {
	var r struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return Cost{}, fmt.Errorf("the tools/list result is not an object with tools: %w", err)
	}
	var c Cost
	for _, raw := range r.Tools {
		var t struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return Cost{}, fmt.Errorf("a tool of the tools/list result: %w", err)
		}
		c.Tools++
		c.ModelFacing += len(ModelFacing(t.Name, t.Description, t.InputSchema))
		c.Names = append(c.Names, t.Name)
	}
	c.Wire = len(ListResult(func() [][]byte {
		out := make([][]byte, len(r.Tools))
		for i, t := range r.Tools {
			out[i] = t
		}
		return out
	}()))
	return c, nil
}

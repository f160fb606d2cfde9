package main

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/postern-mcp/postern/gen/catalog"
)

// newTypePage lays out the doc page of type root: root and every type it
// uses, each with its own fields (a base's are listed under the base) and
// their examples, then one whole value of root.
func newTypePage(c *catalog.Catalog, root *catalog.Type) *typePage {
	p := &typePage{DocPage: root.DocPage, Root: root.Name}
	for _, t := range c.Uses(root.Name) {
		pt := &pageType{Name: t.Name, Description: strings.TrimSpace(t.Description), Extends: t.Extends}
		for _, f := range t.Fields {
			if f.From != t.Name {
				continue
			}
			pf := &pageField{Name: f.Name, TypeDoc: newFieldView(f).TypeDoc, Description: strings.TrimSpace(f.Description), Required: !f.Optional, Enum: f.Enum}
			if f.Example != nil {
				pf.Example = inlineJSON(object{{f.Name, ordered(c, f.Type, f.Example)}})
			}
			pt.Fields = append(pt.Fields, pf)
		}
		p.Types = append(p.Types, pt)
	}
	if whole := c.WholeExample(root.Name); whole != nil {
		b, _ := json.MarshalIndent(ordered(c, root.Name, whole), "", "  ")
		p.Whole = string(b)
	}
	return p
}

// object is a JSON object that keeps its keys in order.
type object []member

type member struct {
	Key   string
	Value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ordered returns v, a value of catalog type typ (or a list of them), with
// every object's keys in the order its type declares its fields.
func ordered(c *catalog.Catalog, typ string, v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ordered(c, typ, e)
		}
		return out
	case map[string]any:
		t := c.Type(typ)
		if t == nil {
			return x
		}
		var o object
		for _, f := range t.Fields {
			if fv, ok := x[f.Name]; ok {
				o = append(o, member{f.Name, ordered(c, f.Type, fv)})
			}
		}
		return o
	}
	return v
}

// inlineJSON is v as JSON on one line, with a space after each colon and comma.
func inlineJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var out strings.Builder
	inString, escaped := false, false
	for _, r := range string(b) {
		out.WriteRune(r)
		switch {
		case escaped:
			escaped = false
		case inString && r == '\\':
			escaped = true
		case r == '"':
			inString = !inString
		case !inString && (r == ':' || r == ','):
			out.WriteByte(' ')
		}
	}
	return out.String()
}

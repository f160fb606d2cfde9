package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestOutputSchemaSharesTypes: a type an output schema holds twice is
// described once under $defs; the schema still takes a right answer and
// refuses a wrong one in either place.
func TestOutputSchemaSharesTypes(t *testing.T) {
	mod := fixtureModule(t)
	b, err := os.ReadFile(filepath.Join(mod, "generated/schemas/filter_check.output.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"$ref": "#/$defs/Filter"`); n != 2 || strings.Count(string(b), `"The filter language`) > 0 {
		t.Errorf("%d references to $defs/Filter:\n%s", n, b)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("out.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("out.json")
	if err != nil {
		t.Fatal(err)
	}
	good := `{"ok":true,"filter":{"name":"a","match":{},"actions":[{"do":"flag"}]},"previous":{"name":"b","match":{"any":[{"from":"x"}]},"actions":[]}}`
	bad := `{"ok":true,"previous":{"name":"b","match":{},"actions":[{"do":"burn"}]}}`
	for _, tc := range []struct {
		doc  string
		want bool
	}{{good, true}, {bad, false}} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(tc.doc))
		if err := sch.Validate(v); (err == nil) != tc.want {
			t.Errorf("%s: validates %v, want %v (%v)", tc.doc, err == nil, tc.want, err)
		}
	}
}

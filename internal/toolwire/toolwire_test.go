package toolwire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestListedKeepsWhatSaysWhichValuesAreTaken(t *testing.T) {
	full := `{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "type": "object", "additionalProperties": false, "required": ["id"],
	  "properties": {
	    "id": {"type": "string", "description": "The message.", "pattern": "^m[0-9a-z]{1,16}$", "maxLength": 17},
	    "pattern": {"type": "string", "description": "An argument named like a keyword.", "minLength": 1},
	    "limit": {"type": "integer", "default": 50, "minimum": 1, "maximum": 500},
	    "fields": {"type": "array", "maxItems": 3, "items": {"type": "string", "enum": ["a", "b"], "maxLength": 9}},
	    "rule": {"type": "object", "additionalProperties": false, "properties": {"name": {"type": "string", "maxLength": 80}}, "required": ["name"]}
	  }
	}`
	got, err := Listed([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"fields":{"items":{"enum":["a","b"],"type":"string"},"type":"array"},` +
		`"id":{"description":"The message.","type":"string"},"limit":{"default":50,"maximum":500,"minimum":1,"type":"integer"},` +
		`"pattern":{"description":"An argument named like a keyword.","type":"string"},` +
		`"rule":{"additionalProperties":false,"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}},"required":["id"],"type":"object"}`
	if string(got) != want {
		t.Errorf("listed:\n got %s\nwant %s", got, want)
	}
	for _, kw := range []string{"$schema", "maxLength", "minLength", "maxItems", `"^m`} {
		if strings.Contains(string(got), kw) {
			t.Errorf("the listed schema keeps %s", kw)
		}
	}
	if _, err := Listed([]byte(`[1]`)); err == nil {
		t.Error("a schema that is not an object was taken")
	}
}

func TestEntryAndModelFacing(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{}}`)
	tool := Tool{Name: "mail_x", Title: "X <mail>", Description: "Does x & y.", Input: in, Output: json.RawMessage(`{"type":"object"}`),
		Annotations: Annotations{ReadOnlyHint: true}}
	full := string(Entry(tool, Latest))
	want := `{"name":"mail_x","title":"X \u003cmail\u003e","description":"Does x \u0026 y.","inputSchema":{"type":"object","properties":{}},` +
		`"outputSchema":{"type":"object"},"annotations":{"title":"X \u003cmail\u003e","readOnlyHint":true,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}`
	if full != want {
		t.Errorf("entry:\n got %s\nwant %s", full, want)
	}
	if old := string(Entry(tool, Revision{})); old != `{"name":"mail_x","description":"Does x \u0026 y.","inputSchema":{"type":"object","properties":{}}}` {
		t.Errorf("2024-11-05 entry: %s", old)
	}
	mf := string(ModelFacing(tool.Name, tool.Description, json.RawMessage("{\n \"type\": \"object\"\n}")))
	if mf != `{"name":"mail_x","description":"Does x \u0026 y.","inputSchema":{"type":"object"}}` {
		t.Errorf("model-facing: %s", mf)
	}
	if got := string(ListResult([][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)})); got != `{"tools":[{"a":1},{"b":2}]}` {
		t.Errorf("list result: %s", got)
	}
}

func TestMeasureReadsWhatEntryWrote(t *testing.T) {
	a := Entry(Tool{Name: "a", Description: "A <b>.", Input: json.RawMessage(`{"type":"object"}`), Output: json.RawMessage(`{}`)}, Latest)
	b := Entry(Tool{Name: "b", Title: "B", Description: "B.", Input: json.RawMessage(`{"type":"object","required":["id"]}`)}, Latest)
	res := ListResult([][]byte{a, b})
	c, err := Measure(res)
	if err != nil {
		t.Fatal(err)
	}
	mf := len(ModelFacing("a", "A <b>.", json.RawMessage(`{"type":"object"}`))) + len(ModelFacing("b", "B.", json.RawMessage(`{"type":"object","required":["id"]}`)))
	if c.Tools != 2 || c.Wire != len(res) || c.ModelFacing != mf || strings.Join(c.Names, ",") != "a,b" {
		t.Errorf("measured %+v; want 2 tools, wire %d, model-facing %d", c, len(res), mf)
	}
}

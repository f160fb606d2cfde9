package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// failing implements every handler by panicking or failing, whatever the tool.
type failing struct {
	generated.Handlers // nil: any method not overridden panics with a nil dereference
}

func grantAll() Grant {
	g := Grant{}
	for _, s := range ScopeNames() {
		g[s] = true
	}
	return g
}

// TestPanickingHandlerIsAnswered: every tool whose handler panics is answered
// with an isError result that says what to do, and the registry keeps working.
func TestPanickingHandlerIsAnswered(t *testing.T) {
	var logged bytes.Buffer
	old := stderr
	stderr = &logged
	defer func() { stderr = old }()
	r, err := New(failing{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range r.All() {
		res, err := r.Call(context.Background(), tool.Spec.Name, validArgs(t, tool), grantAll())
		if err != nil {
			t.Fatalf("%s: %v", tool.Spec.Name, err)
		}
		if !res.IsError || !strings.Contains(res.Text, "failed unexpectedly") || res.Structured != nil {
			t.Fatalf("%s: %+v", tool.Spec.Name, res)
		}
	}
	if !strings.Contains(logged.String(), "panicked") {
		t.Fatalf("the panic was not logged: %q", logged.String())
	}
}

// validArgs finds arguments the tool's schema accepts: each required argument
// gets the first of a few candidate values that validates.
func validArgs(t *testing.T, tool *Tool) json.RawMessage {
	t.Helper()
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(tool.Input, &schema)
	var raw struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(tool.Input, &raw)
	args := map[string]any{}
	cands := func(name string) []any {
		if e := schema.Properties[name].Enum; len(e) > 0 {
			return e[:1]
		}
		if schema.Properties[name].Type == "object" {
			return []any{sampleObject(raw.Properties[name])}
		}
		switch schema.Properties[name].Type {
		case "integer", "number":
			return []any{1}
		case "boolean":
			return []any{true}
		case "array":
			return []any{[]any{}}
		}
		return []any{"x", "m1", "c1", "a1", "b1", "e1", "t1", "guide", strings.Repeat("T", 43)}
	}
	// Each required argument takes a candidate that the schema accepts for it:
	// one whose error list no longer names it.
	for _, name := range schema.Required {
		for _, c := range cands(name) {
			args[name] = c
			b, _ := json.Marshal(args)
			res := tool.validate(b)
			if res == nil || !strings.Contains(res.Text, "/"+name+":") && !strings.Contains(res.Text, `"`+name+`"`) {
				break
			}
		}
	}
	b, _ := json.Marshal(args)
	if res := tool.validate(b); res != nil {
		t.Fatalf("%s: no valid arguments found: %s", tool.Spec.Name, res.Text)
	}
	return b
}

// sampleObject is a value of an object schema: each required property gets
// its first enum value, or a value of its type (nested objects likewise).
func sampleObject(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	json.Unmarshal(schema, &s)
	out := map[string]any{}
	for _, name := range s.Required {
		var p struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		}
		json.Unmarshal(s.Properties[name], &p)
		switch {
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
		case p.Type == "object":
			out[name] = sampleObject(s.Properties[name])
		case p.Type == "array":
			out[name] = []any{}
		case p.Type == "integer" || p.Type == "number":
			out[name] = 1
		case p.Type == "boolean":
			out[name] = true
		default:
			out[name] = "x"
		}
	}
	return out
}

type erring struct{ generated.Handlers }

func (erring) Status(context.Context, *generated.StatusArgs) (*generated.StatusResult, error) {
	return nil, errors.New("the store is locked by another program")
}

func TestHandlerErrorIsOneSentence(t *testing.T) {
	r, err := New(erring{})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := r.Call(context.Background(), "status", json.RawMessage(`{}`), grantAll())
	if !res.IsError || res.Text != "The store is locked by another program." {
		t.Fatalf("%+v", res)
	}
	if _, err := r.Call(context.Background(), "no_such_tool", nil, grantAll()); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("unknown tool: %v", err)
	}
}

func TestParseGrant(t *testing.T) {
	g, err := ParseGrant(" read , read:bodies,")
	if err != nil || !g["read"] || !g["read:bodies"] || len(g) != 2 {
		t.Fatalf("%v %v", g, err)
	}
	if _, err := ParseGrant("read,root"); err == nil || !strings.Contains(err.Error(), `"root"`) {
		t.Fatalf("unknown scope accepted: %v", err)
	}
}

// TestReplacedName: Call refuses the old name of a replaced tool with the
// sentence naming its replacement; it is an unknown tool too, and a name the
// registry has is never taken for an old one.
func TestReplacedName(t *testing.T) {
	r, err := New(failing{})
	if err != nil {
		t.Fatal(err)
	}
	r.SetReplaced(map[string]string{"mail_get": generated.ToolMailShow, generated.ToolStatus: "mail_other"})
	_, err = r.Call(context.Background(), "mail_get", nil, DefaultGrant())
	var re *ReplacedError
	if !errors.As(err, &re) || re.New != generated.ToolMailShow || !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("mail_get: %v", err)
	}
	if want := "mail_get was replaced by " + generated.ToolMailShow + ": call " + generated.ToolMailShow + " and update any allow-list naming mail_get"; err.Error() != want {
		t.Errorf("the refusal: %q, want %q", err, want)
	}
	if r.Replaced(generated.ToolStatus) != nil || r.Replaced("mail_nothing") != nil {
		t.Error("a tool of the registry, or a name never replaced, taken as replaced")
	}
	if _, err := r.Call(context.Background(), "mail_nothing", nil, DefaultGrant()); !errors.Is(err, ErrUnknownTool) || errors.As(err, &re) {
		t.Errorf("an unknown name: %v", err)
	}
}

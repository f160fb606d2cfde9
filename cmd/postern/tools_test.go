package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
)

// sampleArgs builds valid arguments for a tool from its input schema: each
// required argument gets its first enum value, its default, or a plain value.
func sampleArgs(t *testing.T, schema json.RawMessage, known map[string]any) map[string]any {
	t.Helper()
	var s struct {
		Properties map[string]struct {
			Type    string `json:"type"`
			Enum    []any  `json:"enum"`
			Default any    `json:"default"`
			Minimum *float64
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		if v, ok := known[name]; ok {
			args[name] = v
			continue
		}
		switch {
		case len(p.Enum) > 0:
			args[name] = p.Enum[0]
		case p.Default != nil:
			args[name] = p.Default
		case p.Type == "integer" || p.Type == "number":
			args[name] = 1
		case p.Type == "boolean":
			args[name] = true
		case p.Type == "array":
			args[name] = []any{}
		default:
			args[name] = "x"
		}
	}
	return args
}

func compile(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func allScopes() string { return strings.Join(dispatch.ScopeNames(), ",") }

// TestEveryToolOutputValidates calls every tool of the registry through the real
// binary, with every scope granted, and checks its structuredContent against the
// outputSchema that tools/list announced.
func TestEveryToolOutputValidates(t *testing.T) {
	env, cfg := mailHome(t, 60)
	withNotes(t, cfg, map[string]string{"first.md": "# First note\n\nSome text.\n"})
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
			params := func(p map[string]any) map[string]any {
				if era == "modern" {
					return withMeta(p)
				}
				return p
			}
			if era == "legacy" {
				s.initialize("2025-11-25")
			}
			page := result(t, s.rpc("page", "tools/call", params(map[string]any{"name": "mail_list", "arguments": map[string]any{"limit": 1}})))
			msgID := page["structuredContent"].(map[string]any)["messages"].([]any)[0].(map[string]any)["id"]
			listed := result(t, s.rpc("list", "tools/list", params(nil)))["tools"].([]any)
			if len(listed) != len(generated.Tools) {
				t.Fatalf("all scopes granted but %d of %d tools listed", len(listed), len(generated.Tools))
			}
			for i, raw := range listed {
				tool := raw.(map[string]any)
				name := tool["name"].(string)
				if spec := specOf(name); spec == nil || spec.Phase != "" || spec.Effect == generated.EffectReversible || strings.HasPrefix(name, "rules_") {
					// A prepare/commit pair needs an IMAP account and a token: its
					// answers are validated by TestPairAnswersValidate (send_test.go).
					// A change postern can undo needs an IMAP account (this one is a
					// Maildir import): TestActionAnswersValidate (actions_e2e_test.go).
					// The rules tools take a rule and act on rules.toml:
					// TestRuleAnswersValidate (rules_e2e_test.go).
					continue
				}
				if kind := davLookups[name]; kind != "" {
					// A lookup of one event, task or contact: this Maildir store holds none to
					// look up. TestCalendarAnswersValidate (calendar_e2e_test.go) checks them
					// over a CalDAV account.
					t.Logf("%s: left to TestCalendarAnswersValidate (no %s here to look up)", name, kind)
					continue
				}
				known := map[string]any{"id": msgID}
				if name == generated.ToolNoteRead {
					known["id"] = "Notes/first.md"
				}
				in, _ := json.Marshal(tool["inputSchema"])
				out, _ := json.Marshal(tool["outputSchema"])
				if bytes.Contains(in, []byte(`"$ref"`)) {
					t.Errorf("%s: the input schema holds a $ref", name)
				}
				// An output schema describes a type it holds more than once under
				// $defs: every reference points inside the schema itself.
				if n := bytes.Count(out, []byte(`"$ref"`)); n != bytes.Count(out, []byte(`"$ref":"#/$defs/`)) {
					t.Errorf("%s: the output schema holds a $ref outside its own $defs", name)
				}
				args := sampleArgs(t, in, known)
				r := result(t, s.rpc(i, "tools/call", params(map[string]any{"name": name, "arguments": args})))
				if r["isError"] != false {
					t.Errorf("%s %v: isError: %v", name, args, r["content"])
					continue
				}
				if err := compile(t, out).Validate(r["structuredContent"]); err != nil {
					t.Errorf("%s: structuredContent does not validate against its outputSchema: %v", name, err)
				}
				text := r["content"].([]any)[0].(map[string]any)["text"].(string)
				if strings.TrimSpace(text) == "" {
					t.Errorf("%s: empty text content", name)
				}
			}
		})
	}
}

// davLookups are the tools whose id names an event, a task or a contact (a message's
// id names a message, a note's its path).
var davLookups = map[string]string{generated.ToolCalendarEvent: "event", generated.ToolTaskGet: "task", generated.ToolContactGet: "contact"}

// specOf is the registry row of a tool.
func specOf(name string) *generated.ToolSpec {
	for i := range generated.Tools {
		if generated.Tools[i].Name == name {
			return &generated.Tools[i]
		}
	}
	return nil
}

func callText(r map[string]any) string {
	c, _ := r["content"].([]any)
	if len(c) == 0 {
		return ""
	}
	return c[0].(map[string]any)["text"].(string)
}

// TestUnknownArgumentNamed: every tool refuses an unknown argument, naming it and those it takes.
func TestUnknownArgumentNamed(t *testing.T) {
	s := start(t, "--scopes", allScopes())
	s.initialize("2025-11-25")
	for i, spec := range generated.Tools {
		r := result(t, s.rpc(i, "tools/call", map[string]any{"name": spec.Name, "arguments": map[string]any{"bogus_arg": 1}}))
		text := callText(r)
		if r["isError"] != true || !strings.Contains(text, `"bogus_arg"`) {
			t.Errorf("%s: %v %q", spec.Name, r["isError"], text)
		}
		schema, _ := generated.Files.ReadFile(spec.InputSchema)
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		json.Unmarshal(schema, &in)
		for p := range in.Properties {
			if !strings.Contains(text, p) {
				t.Errorf("%s: the refusal does not list accepted argument %s: %q", spec.Name, p, text)
			}
		}
		if len(in.Properties) == 0 && !strings.Contains(text, "no arguments") {
			t.Errorf("%s: the refusal does not say the tool takes no arguments: %q", spec.Name, text)
		}
	}
}

func TestWrongTypeAndRangeGivePath(t *testing.T) {
	s := start(t)
	s.initialize("2025-11-25")
	cases := []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"page": 7}, []string{"/page", "string"}},
		{map[string]any{"page": "Not A Page!"}, []string{"/page", "match"}},
		{map[string]any{"page": strings.Repeat("a", 60)}, []string{"/page"}},
	}
	for i, c := range cases {
		r := result(t, s.rpc(i, "tools/call", map[string]any{"name": "docs", "arguments": c.args}))
		text := callText(r)
		if r["isError"] != true {
			t.Fatalf("%v accepted: %q", c.args, text)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v: %q lacks %q", c.args, text, w)
			}
		}
	}
	// Arguments that are not an object.
	r := result(t, s.rpc(9, "tools/call", map[string]any{"name": "docs", "arguments": []any{1}}))
	if r["isError"] != true || !strings.Contains(callText(r), "object") {
		t.Fatalf("array arguments: %v", r)
	}
	// A valid call still works, and an unknown page is a clear error.
	r = result(t, s.rpc(10, "tools/call", map[string]any{"name": "docs", "arguments": map[string]any{"page": "guide"}}))
	if r["isError"] != false || !strings.Contains(r["structuredContent"].(map[string]any)["text"].(string), "never as\ninstructions") {
		t.Fatalf("docs guide: %v", callText(r))
	}
	r = result(t, s.rpc(11, "tools/call", map[string]any{"name": "docs", "arguments": map[string]any{"page": "nope"}}))
	if r["isError"] != true || !strings.Contains(callText(r), "guide") {
		t.Fatalf("unknown page: %v", callText(r))
	}
}

// TestScopes: for every tool, a connection granted only other scopes neither
// lists it nor can call it, and the refusal names the scope it needs.
func TestScopes(t *testing.T) {
	for _, spec := range generated.Tools {
		var others []string
		for _, sc := range dispatch.ScopeNames() {
			if sc != spec.Scope {
				others = append(others, sc)
			}
		}
		t.Run(spec.Name, func(t *testing.T) {
			s := start(t, "--scopes", strings.Join(others, ","))
			s.initialize("2025-11-25")
			for _, raw := range result(t, s.rpc(1, "tools/list", nil))["tools"].([]any) {
				if raw.(map[string]any)["name"] == spec.Name {
					t.Fatalf("%s is listed without its scope %s", spec.Name, spec.Scope)
				}
			}
			r := result(t, s.rpc(2, "tools/call", map[string]any{"name": spec.Name}))
			if r["isError"] != true || !strings.Contains(callText(r), `"`+spec.Scope+`"`) {
				t.Fatalf("call without scope: %v", r)
			}
			if _, ok := r["structuredContent"]; ok {
				t.Fatalf("a refused call returned structured content")
			}
		})
	}
	t.Run("read only lists read tools", func(t *testing.T) {
		s := start(t, "--scopes", "read")
		s.initialize("2025-11-25")
		var want int
		for _, spec := range generated.Tools {
			if spec.Scope == "read" {
				want++
			}
		}
		got := result(t, s.rpc(1, "tools/list", nil))["tools"].([]any)
		if len(got) != want {
			t.Fatalf("--scopes read lists %d tools, want %d", len(got), want)
		}
		for _, raw := range got {
			name := raw.(map[string]any)["name"].(string)
			for _, spec := range generated.Tools {
				if spec.Name == name && spec.Scope != "read" {
					t.Fatalf("%s (scope %s) listed under --scopes read", name, spec.Scope)
				}
			}
		}
	})
	t.Run("unknown scope refused at start", func(t *testing.T) {
		_, errOut, code := runCLI(t, home(t), "mcp", "--scopes", "read,everything")
		if code == 0 || !strings.Contains(errOut, `"everything"`) {
			t.Fatalf("code %d, stderr %q", code, errOut)
		}
	})
}

// TestConfigScopesAndAccounts: the configuration's scopes and accounts are read,
// re-read when the file changes, --account hides the others, a broken file is said.
func TestConfigScopesAndAccounts(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		// The server looks at the file again at most every 200 ms.
		time.Sleep(300 * time.Millisecond)
	}
	write(`[mcp]
scopes = ["read:bodies"]
[[accounts]]
name = "work"
kind = "imap"
server = "imap.example.com:993"
user = "me@example.com"
password_cmd = "echo hunter2-secret"
tls = "implicit"
[[accounts]]
name = "home"
kind = "maildir"
path = "/home/me/Maildir"
`)
	s := startEnv(t, env, "--config", cfg)
	s.initialize("2025-11-25")
	for _, raw := range result(t, s.rpc(1, "tools/list", nil))["tools"].([]any) {
		name := raw.(map[string]any)["name"].(string)
		for _, spec := range generated.Tools {
			if spec.Name == name && spec.Scope != "read:bodies" {
				t.Fatalf("config grants only read:bodies, yet %s (scope %s) is listed", name, spec.Scope)
			}
		}
	}
	write(`[mcp]
scopes = ["read"]
[[accounts]]
name = "work"
kind = "imap"
server = "imap.example.com:993"
user = "me@example.com"
password_cmd = "echo hunter2-secret"
[[accounts]]
name = "home"
kind = "maildir"
path = "/home/me/Maildir"
`)
	r := result(t, s.rpc(2, "tools/call", map[string]any{"name": "status"}))
	body, _ := json.Marshal(r)
	if r["isError"] != false || !strings.Contains(string(body), "imap.example.com:993") || !strings.Contains(string(body), "/home/me/Maildir") {
		t.Fatalf("status after the config changed: %s", body)
	}
	if strings.Contains(string(body), "hunter2") || strings.Contains(string(body), "password") {
		t.Fatalf("status shows the password command: %s", body)
	}
	write("[mcp\nscopes = [")
	r = result(t, s.rpc(3, "tools/call", map[string]any{"name": "status"}))
	st := r["structuredContent"].(map[string]any)
	if ce, _ := st["config_error"].(string); !strings.Contains(ce, "cannot be parsed at line") {
		t.Fatalf("status does not report the broken config: %v", st)
	}

	// --account hides every other account.
	write(`[[accounts]]
name = "work"
kind = "imap"
server = "imap.example.com:993"
[[accounts]]
name = "secret-side"
kind = "maildir"
path = "/srv/hidden"
`)
	h := startEnv(t, env, "--config", cfg, "--account", "work")
	h.initialize("2025-11-25")
	for i, name := range []string{"status"} {
		r := result(t, h.rpc(i, "tools/call", map[string]any{"name": name}))
		b, _ := json.Marshal(r)
		if !strings.Contains(string(b), "work") || strings.Contains(string(b), "secret-side") || strings.Contains(string(b), "/srv/hidden") {
			t.Fatalf("%s with --account work: %s", name, b)
		}
	}
}

func TestCLICall(t *testing.T) {
	env := home(t)
	out, _, code := runCLI(t, env, "call", "status")
	if code != 0 || !strings.Contains(out, `protocol_era: "cli"`) {
		t.Fatalf("call status: %d %q", code, out)
	}
	out, _, code = runCLI(t, env, "call", "docs", `{"page":"scopes"}`, "--json")
	var r map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r["page"] != "scopes" {
		t.Fatalf("call docs --json: %d %q", code, out)
	}
	_, errOut, code := runCLI(t, env, "call", "docs", `{"pag":"x"}`)
	if code != 1 || !strings.Contains(errOut, `"pag"`) || !strings.Contains(errOut, "page") {
		t.Fatalf("call with unknown argument: %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, env, "call", "status", "--scopes", "read:bodies")
	if code != 1 || !strings.Contains(errOut, `"read"`) {
		t.Fatalf("call outside scope: %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, env, "call", "nope")
	if code != 1 || !strings.Contains(errOut, "status") {
		t.Fatalf("call unknown tool: %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, env, "call", "docs", `{bad`)
	if code != 1 || !strings.Contains(errOut, "not valid JSON") {
		t.Fatalf("call bad JSON: %d %q", code, errOut)
	}
	out, _, code = runCLI(t, env, "version")
	if code != 0 || !strings.HasPrefix(out, "postern ") {
		t.Fatalf("version: %d %q", code, out)
	}
	_, _, code = runCLI(t, env, "mcp", "--help")
	if code != 0 {
		t.Fatalf("mcp --help exit %d", code)
	}
}

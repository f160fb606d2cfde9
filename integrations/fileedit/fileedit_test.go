package fileedit

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// What each host is given for postern, in its own shape.
const (
	claudeServer   = `{"command":"/usr/local/bin/postern","args":["serve"]}`
	vscodeServer   = `{"type":"stdio","command":"postern","args":["serve"]}`
	opencodeServer = `{"type":"local","command":["postern","serve"],"enabled":true}`
)

var editCases = []struct {
	name  string // golden file: testdata/golden/<name>.golden
	in    string // input file under testdata/in; .jsonc and vscode_mcp.json are read as JSONC
	path  []string
	value string // Set when non-empty, Delete otherwise
}{
	{"claude_add", "claude_desktop_config.json", []string{"mcpServers", "postern"}, claudeServer},
	{"claude_replace", "claude_with_postern.json", []string{"mcpServers", "postern"}, claudeServer},
	{"claude_delete_middle", "claude_with_postern.json", []string{"mcpServers", "postern"}, ""},
	{"claude_delete_first", "claude_with_postern.json", []string{"mcpServers", "filesystem"}, ""},
	{"claude_delete_last", "claude_desktop_config.json", []string{"mcpServers", "github"}, ""},
	{"claude_nested", "claude_no_servers.json", []string{"mcpServers", "postern"}, claudeServer},
	{"claude_top_level_scalar", "claude_desktop_config.json", []string{"globalShortcut"}, `"Ctrl+Alt+Space"`},
	{"crlf_add", "claude_windows_crlf.json", []string{"mcpServers", "postern"}, claudeServer},
	{"crlf_delete_only", "claude_windows_crlf.json", []string{"mcpServers", "everything"}, ""},
	{"vscode_add", "vscode_mcp.json", []string{"servers", "postern"}, vscodeServer},
	{"vscode_replace_commented", "vscode_mcp.json", []string{"servers", "github", "headers"}, `{"Authorization":"Bearer ${input:gh}"}`},
	{"vscode_delete_first", "vscode_mcp.json", []string{"servers", "memory"}, ""},
	{"vscode_delete_last", "vscode_mcp.json", []string{"servers", "github"}, ""},
	{"opencode_add", "opencode.jsonc", []string{"mcp", "postern"}, opencodeServer},
	{"opencode_delete_only", "opencode.jsonc", []string{"mcp", "context7"}, ""},
	{"opencode_delete_top_trailing_comma", "opencode.jsonc", []string{"theme"}, ""},
	{"cursor_empty_object", "cursor_empty.json", []string{"mcpServers", "postern"}, claudeServer},
	{"empty_file", "empty.json", []string{"mcpServers", "postern"}, claudeServer},
	{"windsurf_empty_servers", "windsurf_mcp_config.json", []string{"mcpServers", "postern"}, claudeServer},
	{"tabs_add", "tabs.json", []string{"mcpServers", "postern"}, claudeServer},
	{"one_line_add", "one_line.json", []string{"mcpServers", "postern"}, claudeServer},
	{"one_line_delete", "one_line.json", []string{"mcpServers", "fetch"}, ""},
}

func isJSONC(name string) bool {
	return strings.HasSuffix(name, ".jsonc") || strings.HasPrefix(name, "vscode")
}

// TestEditGolden runs each edit on a real host file, compares with its golden file, and checks
// what a person would notice: the result parses, says what was asked, and is the input byte for
// byte outside the edited member.
func TestEditGolden(t *testing.T) {
	for _, c := range editCases {
		t.Run(c.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "in", c.in))
			if err != nil {
				t.Fatal(err)
			}
			jsonc := isJSONC(c.in)
			d, err := Parse(in, jsonc)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			before, _ := Parse(in, jsonc)
			var out []byte
			if c.value != "" {
				if out, err = d.Set([]byte(c.value), c.path...); err != nil {
					t.Fatalf("Set: %v", err)
				}
			} else {
				var ok bool
				if out, ok, err = d.Delete(c.path...); err != nil || !ok {
					t.Fatalf("Delete = %v, %v; want true, nil", ok, err)
				}
			}
			golden(t, filepath.Join("testdata", "golden", c.name+".golden"), out)

			after, err := Parse(out, jsonc)
			if err != nil {
				t.Fatalf("the result does not parse again: %v\n%s", err, out)
			}
			if !bytes.Equal(after.Bytes(), d.Bytes()) {
				t.Errorf("the Doc does not hold the returned text")
			}
			sameOtherTopLevel(t, before, after, c.path[0])
			if hasCRLF := bytes.Contains(in, []byte("\r\n")); hasCRLF && bytes.Count(out, []byte("\n")) != bytes.Count(out, []byte("\r\n")) {
				t.Errorf("a file with CRLF line endings got a bare LF:\n%q", out)
			}
			if len(in) == 0 || in[len(in)-1] == '\n' {
				if !bytes.HasSuffix(out, []byte("\n")) {
					t.Errorf("the final newline was lost")
				}
			}

			parent, i := locate(before, c.path)
			switch {
			case c.value == "":
				if got, ok := d.Get(c.path...); ok {
					t.Errorf("Get after Delete = %s; want nothing", got)
				}
				ms := parent.members
				lo, hi := parent.start+1, parent.end-1
				if i > 0 {
					lo = ms[i-1].val.end
				}
				if i+1 < len(ms) {
					hi = ms[i+1].keyStart
				}
				confined(t, in, out, lo, hi)
			case i >= 0:
				m := parent.members[i]
				confined(t, in, out, m.val.start, m.val.end)
			case parent != nil && len(parent.members) > 0:
				// Inserted into an object that had members: Delete gives the input back exactly.
				back, ok, err := d.Delete(c.path[:len(c.path)-deepest(before, c.path)]...)
				if err != nil || !ok || !bytes.Equal(back, in) {
					t.Errorf("Set then Delete = %v, %v, gives\n%s\nwant the input back\n%s", ok, err, back, in)
				}
				d, _ = Parse(out, jsonc)
			case parent != nil:
				confined(t, in, out, parent.start+1, parent.end-1)
			}

			if c.value != "" {
				got, ok := after.Get(c.path...)
				if !ok || !bytes.Equal(compact(got), compact([]byte(c.value))) {
					t.Errorf("Get after Set = %s, %v; want %s", got, ok, c.value)
				}
				again, err := d.Set([]byte(c.value), c.path...)
				if err != nil || !bytes.Equal(again, out) {
					t.Errorf("setting the same value twice changed the text:\n%s\nthen\n%s", out, again)
				}
			}
		})
	}
}

// TestSetThenDeleteEmptyObject checks what holds when the object was empty: Set then Delete cannot
// tell "{}" from "{\n}" (both give the same text after Set), so it leaves "{}" and the rest as it was.
func TestSetThenDeleteEmptyObject(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{}\n", "{}\n"},
		{"{\n}\n", "{}\n"},
		{"", "{}\n"},
		{"{\n    \"mcpServers\": {}\n}\n", "{\n    \"mcpServers\": {}\n}\n"},
		{"{\n  \"mcpServers\": { }\n}", "{\n  \"mcpServers\": {}\n}"},
	} {
		d, err := Parse([]byte(c.in), false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Set([]byte(claudeServer), "mcpServers", "postern"); err != nil {
			t.Fatal(err)
		}
		out, ok, err := d.Delete("mcpServers", "postern")
		if err != nil || !ok {
			t.Fatalf("Delete = %v, %v", ok, err)
		}
		if strings.Contains(c.in, "mcpServers") {
			if string(out) != c.want {
				t.Errorf("%q: Set then Delete gives %q; want %q", c.in, out, c.want)
			}
			continue
		}
		out, _, _ = d.Delete("mcpServers")
		if string(out) != c.want {
			t.Errorf("%q: Set then Delete gives %q; want %q", c.in, out, c.want)
		}
	}
}

func TestSetKeepsEqualValue(t *testing.T) {
	in := "{\n  // postern\n  \"mcpServers\": {\"postern\": {\"args\": [ \"serve\" ], /* x */ \"command\": \"p\",}}\n}\n"
	d, err := Parse([]byte(in), true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Set([]byte(`{"args":["serve"],"command":"p"}`), "mcpServers", "postern")
	if err != nil || string(out) != in {
		t.Errorf("Set of an equal value = %q, %v; want the text unchanged", out, err)
	}
}

func TestSetErrors(t *testing.T) {
	d, err := Parse([]byte(`{"mcpServers": "none", "list": [1]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value string
		path  []string
		want  string
	}{
		{claudeServer, []string{"mcpServers", "postern"}, `cannot set mcpServers.postern: mcpServers holds a string, not an object; move or remove it by hand first`},
		{claudeServer, []string{"list", "x", "y"}, `cannot set list.x.y: list holds an array, not an object; move or remove it by hand first`},
		{`{"command":`, []string{"a"}, `cannot set a: the new value is not valid JSON; pass valid JSON`},
		{`1`, nil, `fileedit: Set needs a path of at least one key`},
	} {
		if _, err := d.Set([]byte(c.value), c.path...); err == nil || err.Error() != c.want {
			t.Errorf("Set(%s, %q) error = %v; want %s", c.value, c.path, err, c.want)
		}
	}
	if string(d.Bytes()) != `{"mcpServers": "none", "list": [1]}` {
		t.Errorf("a failed Set changed the document: %s", d.Bytes())
	}
	if out, ok, err := d.Delete("mcpServers", "postern"); ok || err != nil || string(out) != string(d.Bytes()) {
		t.Errorf("Delete of a path through a string = %s, %v, %v; want the text unchanged, false", out, ok, err)
	}
}

// TestDuplicateKeys: hosts parse with JSON.parse, where the last duplicate wins; so do Get and Set.
func TestDuplicateKeys(t *testing.T) {
	d, err := Parse([]byte(`{"a": 1, "a": 2}`), false)
	if err != nil {
		t.Fatalf("duplicate keys refused: %v", err)
	}
	if got, _ := d.Get("a"); string(got) != "2" {
		t.Errorf("Get = %s; want the last one, 2", got)
	}
	if out, _ := d.Set([]byte("3"), "a"); string(out) != `{"a": 1, "a": 3}` {
		t.Errorf("Set = %s; want the last one replaced", out)
	}
	if out, ok, _ := d.Delete("a"); !ok || string(out) != `{"a": 1}` {
		t.Errorf("Delete = %s, %v; want the last one removed", out, ok)
	}
	if got, _ := d.Get("a"); string(got) != "1" {
		t.Errorf("after Delete, Get = %s; want the earlier duplicate, 1", got)
	}
}

func TestGetJSONC(t *testing.T) {
	d, err := Parse([]byte("{\n  \"s\": {\"a\": 1, // one\n  \"b\": [2,], /* two */},\n}"), true)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := d.Get("s")
	if !ok || !bytes.Equal(compact(got), []byte(`{"a":1,"b":[2]}`)) {
		t.Errorf("Get = %q, %v; want valid JSON without the comments", got, ok)
	}
	if got, ok := d.Get("s", "b"); !ok || string(compact(got)) != "[2]" {
		t.Errorf("Get(s, b) = %q, %v", got, ok)
	}
	if _, ok := d.Get("s", "a", "x"); ok {
		t.Errorf("Get through a number reports a value")
	}
	if got, ok := d.Get(); !ok || got[0] != '{' {
		t.Errorf("Get() = %q, %v; want the whole object", got, ok)
	}
}

// TestParseErrors: malformed files are refused with the line and column a person can go to.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, src string
		jsonc     bool
		want      string
	}{
		{"missing comma", "{\n  \"servers\": {}\n  \"inputs\": []\n}", false, `line 3, column 3: expected a comma or } after the value of "servers", found a string`},
		{"trailing comma strict", "{\n  \"a\": 1,\n}", false, `line 2, column 9: found a trailing comma before }, which strict JSON does not allow`},
		{"trailing comma in array strict", `{"a": [1, 2,]}`, false, `line 1, column 12: found a trailing comma before ], which strict JSON does not allow`},
		{"unterminated string", "{\n  \"command\": \"postern\n}", false, `line 2, column 14: unterminated string: expected a closing quote before the end of the line`},
		{"unterminated string at end", `{"a": "b`, true, `line 1, column 7: unterminated string: expected a closing quote before the end of the document`},
		{"comment strict", "{\n  // servers\n}", false, `line 2, column 3: found a comment, which strict JSON does not allow`},
		{"block comment strict", `{/* x */}`, false, `line 1, column 2: found a comment, which strict JSON does not allow`},
		{"unterminated comment", "{\n  /* servers\n}", true, `line 2, column 3: unterminated comment: expected */ before the end of the document`},
		{"top-level array", `[{"a": 1}]`, false, `line 1, column 1: expected an object { at the top level, found an array`},
		{"top-level string", ` "x"`, true, `line 1, column 2: expected an object { at the top level, found a string`},
		{"missing colon", `{"a" 1}`, false, `line 1, column 6: expected a colon after the key "a", found a number`},
		{"missing value", `{"a": }`, false, `line 1, column 7: expected a value for "a", found "}"`},
		{"bare word", `{"a": yes}`, false, `line 1, column 7: expected a value for "a", found "y"`},
		{"unquoted key", `{a: 1}`, true, `line 1, column 2: expected a quoted key or }, found "a"`},
		{"comma then brace twice", `{"a": 1,,}`, true, `line 1, column 9: expected a quoted key after the comma, found a comma`},
		{"array missing comma", `{"a": [1 2]}`, false, `line 1, column 10: expected a comma or ] after an array item, found a number`},
		{"unclosed object", `{"a": {"b": 1}`, false, `line 1, column 15: expected a comma or } after the value of "a", found the end of the document`},
		{"text after the object", "{}\n}", false, `line 2, column 1: expected the end of the document after the top-level object, found "}"`},
		{"leading zero", `{"a": 01}`, false, `line 1, column 8: expected a comma or } after the value of "a", found a number`},
		{"bad number", `{"a": -x}`, false, `line 1, column 7: invalid number: expected a digit after the minus sign`},
		{"bad escape", `{"a": "\x"}`, false, `line 1, column 8: invalid escape \x in a string`},
		{"control character", "{\"a\": \"\tb\"}", false, `line 1, column 8: found a control character (U+0009) in a string; write it as an escape`},
		{"columns count characters", `{"é": 1 "b": 2}`, false, `line 1, column 9: expected a comma or } after the value of "é", found a string`},
		{"crlf lines", "{\r\n  \"a\": 1\r\n  \"b\": 2\r\n}", false, `line 3, column 3: expected a comma or } after the value of "a", found a string`},
		{"too deep", `{"a":` + strings.Repeat("[", maxDepth+1), false, `line 1, column 1005: the document nests deeper than 1000 levels; this is not a configuration file`},
	} {
		_, err := Parse([]byte(c.src), c.jsonc)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: Parse error = %v; want a *SyntaxError", c.name, err)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s: Parse error =\n  %s\nwant\n  %s", c.name, err, c.want)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	for _, c := range []struct {
		src   string
		jsonc bool
	}{
		{"", false},
		{" \r\n\t", false},
		{"\uFEFF{}", false},
		{"// nothing yet\n", true},
		{`{"a": [1, 2,], "b": {"c": 1,},}`, true},
		{`{"a": "\u00e9\n\"/", "b": -0.5e+3, "c": [true, false, null, {}]}`, false},
		{"{\"a\": 1 // end\r}", true},
	} {
		if _, err := Parse([]byte(c.src), c.jsonc); err != nil {
			t.Errorf("Parse(%q, %v): %v", c.src, c.jsonc, err)
		}
	}
}

func TestSetOnCommentOnlyFile(t *testing.T) {
	d, err := Parse([]byte("// opencode settings\n\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Set([]byte(`"x"`), "theme")
	if want := "// opencode settings\n{\n  \"theme\": \"x\"\n}\n"; err != nil || string(out) != want {
		t.Errorf("Set = %q, %v; want %q", out, err, want)
	}
}

// locate returns the object holding the last key of path in d and its index there (-1 when the
// key is missing). When an earlier key is missing, it returns the deepest object that exists.
func locate(d *Doc, path []string) (*node, int) {
	n := d.root
	if n == nil {
		return nil, -1
	}
	for k, key := range path {
		i := find(n, key)
		if k == len(path)-1 || i < 0 {
			return n, i
		}
		n = &n.members[i].val
	}
	return n, -1
}

// deepest counts the keys of path, after the first missing one, that a Set creates as objects.
func deepest(d *Doc, path []string) int {
	n := d.root
	for k, key := range path {
		i := find(n, key)
		if i < 0 {
			return len(path) - 1 - k
		}
		n = &n.members[i].val
	}
	return 0
}

// sameOtherTopLevel checks that every top-level key but skip reads the same before and after.
func sameOtherTopLevel(t *testing.T, before, after *Doc, skip string) {
	t.Helper()
	if before.root == nil {
		return
	}
	for _, m := range before.root.members {
		if m.key == skip {
			continue
		}
		a, _ := before.Get(m.key)
		b, ok := after.Get(m.key)
		if !ok || !bytes.Equal(a, b) {
			t.Errorf("top-level %q changed from %s to %s", m.key, a, b)
		}
	}
}

// confined fails unless out is in with only in[lo:hi] changed.
func confined(t *testing.T, in, out []byte, lo, hi int) {
	t.Helper()
	tail := len(in) - hi
	if len(out) < lo+tail || !bytes.Equal(in[:lo], out[:lo]) || !bytes.Equal(in[hi:], out[len(out)-tail:]) {
		t.Errorf("the input changed outside the edited member (bytes %d to %d):\n%s", lo, hi, out)
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./integrations/fileedit -update to create it", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestSetThenDeleteRestores tries layouts where the last member shares its line with a comment, a
// brace or the next member, and odd line endings: Set then Delete gives the input back.
func TestSetThenDeleteRestores(t *testing.T) {
	for _, in := range []string{
		`{"mcpServers": {"a": 1 /* x */ }}`,
		"{\n  \"mcpServers\": {\n    \"a\": 1 /* c */ }\n}",
		"{\n  \"mcpServers\": {\n    \"a\": 1\r\n  }\n}",
		"{\n  \"mcpServers\": {\n    \"a\": 1, // c\n  }\n}",
		"{\n  \"mcpServers\": {\n    \"a\": {\n    } /* multi\nline */\n  }\n}",
		"{\n  \"mcpServers\": {\n    \"a\": 1\n    ,\"b\": 2\n  }\n}",
		"{\"mcpServers\": {\"a\": 1\n}}",
		`{"mcpServers": {"a": 1,   }}`,
		"{\r\n\t\"mcpServers\": {\r\n\t\t\"a\": 1\r\n\t}\r\n}",
		"{\"mcpServers\": {\r\"a\": 1\r}}",
		"{\n  \"mcpServers\": {\n    \"a\": 1 // c\n  }\n}",
	} {
		d, err := Parse([]byte(in), true)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		out, err := d.Set([]byte(claudeServer), "mcpServers", "postern")
		if err != nil {
			t.Fatalf("%q: Set: %v", in, err)
		}
		back, ok, err := d.Delete("mcpServers", "postern")
		if err != nil || !ok || string(back) != in {
			t.Errorf("Set then Delete = %v, %v:\n%q\nthrough\n%q\nwant\n%q", ok, err, back, out, in)
		}
	}
}

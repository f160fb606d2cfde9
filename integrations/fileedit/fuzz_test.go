package fileedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseEdit: Parse never panics; in strict mode it agrees with encoding/json; and for any
// document it accepts, Set of mcpServers.postern gives text that parses again, reads back the value
// and leaves every other top-level key byte-equal. When mcpServers already had members, Delete
// then gives the input back exactly.
func FuzzParseEdit(f *testing.F) {
	ins, _ := filepath.Glob(filepath.Join("testdata", "in", "*"))
	for _, in := range ins {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, isJSONC(in))
	}
	for _, s := range []string{
		`{"mcpServers": {"a": 1}}`, `{"mcpServers":{"a":1,}}`, "{\"mcpServers\": {\"a\": 1 /* x */ }}",
		"{\n \"mcpServers\": {\n  \"a\": 1, // c\n }\n}", `{"mcpServers": []}`, `{"a": 1,}`, `[]`, `{"a": "\u00e9"}`,
		"{\"mcpServers\": { // none\n}}", `{"mcpServers": {}, "mcpServers": {"x": 2}}`, "\uFEFF{}",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	value := []byte(`{"command":"postern","args":["serve"]}`)
	f.Fuzz(func(t *testing.T, src []byte, jsonc bool) {
		d, err := Parse(src, jsonc)
		if !jsonc {
			body := bytes.TrimPrefix(src, []byte("\uFEFF"))
			isObject := json.Valid(body) && bytes.TrimLeft(body, " \t\r\n")[0] == '{'
			blank := len(bytes.TrimLeft(body, " \t\r\n")) == 0
			if err == nil && !isObject && !blank {
				t.Fatalf("strict Parse accepted what encoding/json refuses: %q", src)
			}
			if err != nil && isObject && !strings.Contains(err.Error(), "nests deeper") {
				t.Fatalf("strict Parse refused a JSON object: %v\n%q", err, src)
			}
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("Parse error %v is not a *SyntaxError with a position", err)
			}
			return
		}
		var top []member
		if d.root != nil {
			top = d.root.members
		}
		for _, m := range top {
			one, _ := Parse(src, jsonc)
			out, ok, err := one.Delete(m.key)
			if err != nil || !ok {
				t.Fatalf("Delete(%q) = %v, %v\n%q", m.key, ok, err, src)
			}
			after, _ := Parse(out, jsonc)
			sameOtherTopLevel(t, d, after, m.key)
		}
		servers, had := d.Get("mcpServers")
		before, _ := Parse(src, jsonc)
		out, err := d.Set(value, "mcpServers", "postern")
		if err != nil {
			if had && servers[0] != '{' {
				return // through a value that is not an object: refused, as it should be
			}
			t.Fatalf("Set: %v\n%q", err, src)
		}
		after, err := Parse(out, jsonc)
		if err != nil {
			t.Fatalf("Set made text that does not parse: %v\n%q\n%q", err, src, out)
		}
		if got, ok := after.Get("mcpServers", "postern"); !ok || !bytes.Equal(compact(got), value) {
			t.Fatalf("Get after Set = %s, %v\n%q", got, ok, out)
		}
		sameOtherTopLevel(t, before, after, "mcpServers")
		if again, err := d.Set(value, "mcpServers", "postern"); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("a second Set changed the text: %q then %q", out, again)
		}
		if n, i := locate(before, []string{"mcpServers", "postern"}); i < 0 && n != before.root && len(n.members) > 0 {
			back, ok, err := d.Delete("mcpServers", "postern")
			if err != nil || !ok || !bytes.Equal(back, src) {
				t.Fatalf("Set then Delete = %v, %v:\n%q\nwant\n%q", ok, err, back, src)
			}
		}
	})
}

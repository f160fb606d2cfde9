package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

var (
	beginRE = regexp.MustCompile(`^<<<([a-z0-9-]+) ([0-9a-f]{32}) begins>>>$`)
	fieldRE = regexp.MustCompile(`^(- )?[a-z][a-z_]*:( |$)`)
)

// checkAnswer asserts what SPEC §7 promises of one answer's text: outside a
// frame every line is a field line; a frame opened with a mark closes only
// with the same mark, once, and no line inside carries the real end marker;
// no invisible character survives anywhere. It returns the answer's marks.
func checkAnswer(t *testing.T, what, text string) []string {
	t.Helper()
	var marks []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := beginRE.FindStringSubmatch(line); m != nil {
			end := "<<<" + m[1] + " " + m[2] + " ends>>>"
			closed := -1
			for j := i + 1; j < len(lines); j++ {
				if lines[j] == end {
					closed = j
					break
				}
				if strings.Contains(lines[j], m[2]) {
					t.Fatalf("%s: the body carries its frame's mark on line %d: %q", what, j, lines[j])
				}
			}
			if closed < 0 {
				t.Fatalf("%s: a frame opened on line %d never closes", what, i)
			}
			marks = append(marks, m[2])
			i = closed
			continue
		}
		if !fieldRE.MatchString(line) && line != "nothing found" {
			t.Fatalf("%s: line %d is not a field line: %q", what, i, line)
		}
	}
	for _, r := range text {
		if r != '\n' && r != '\t' && clean.Forbidden(r) && !allowedInContext(text, r) {
			t.Fatalf("%s: an invisible or control character U+%04X survived", what, r)
		}
	}
	return marks
}

// allowedInContext is true for the joiners and selectors clean keeps inside emoji.
func allowedInContext(text string, r rune) bool {
	return (r == '\u200D' || r == '\uFE0F') && strings.ContainsFunc(text, func(x rune) bool { return x > 0x1F000 })
}

// TestHostileCorpusThroughEveryTool syncs the hostile corpus from a real Dovecot
// and reads every message through every read tool that takes one, and the
// listing tools, checking each answer.
func TestHostileCorpusThroughEveryTool(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	entries, err := os.ReadDir(filepath.Join("testdata", "hostile"))
	if err != nil || len(entries) < 40 {
		t.Fatalf("the hostile corpus: %v (%d files)", err, len(entries))
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join("testdata", "hostile", e.Name()))
		u.AddMessage(t, "INBOX", b, "")
	}
	env, cfg, _ := imapHome(t, u, srv.Addr, "none")
	// An address to write from, so that replies to the corpus can be prepared.
	f, _ := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("address = \"me@example.test\"\n")
	f.Close()
	if out, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatalf("sync: %s %s", out, errOut)
	}
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	seenMarks := map[string]bool{}
	answers := 0
	call := func(name string, args map[string]any) map[string]any {
		r := result(t, s.rpc(answers, "tools/call", map[string]any{"name": name, "arguments": args}))
		answers++
		what := name
		if id, ok := args["id"]; ok {
			what += " " + id.(string)
		}
		text := callText(r)
		marks := checkAnswer(t, what, text)
		if strings.Contains(alnumUpper(text), "482913") {
			t.Fatalf("%s: a code written with invisible characters or other digits survived:\n%s", what, text)
		}
		for _, w := range hiddenWords {
			if strings.Contains(strings.ToLower(text), w) {
				t.Fatalf("%s: text hidden from a person reached the agent: %q", what, w)
			}
		}
		if r["isError"] == false {
			// The text reads back as exactly the structured content: no stranger's value became
			// a field, a row or a frame.
			got, err := parseTextForm(text)
			if err != nil {
				t.Fatalf("%s: the text does not parse: %v\n%s", what, err, text)
			}
			if want := r["structuredContent"]; want != nil && !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("%s: the text reads as\n%s\nbut structuredContent is\n%s", what, g, w)
			}
		}
		structured, _ := json.Marshal(r["structuredContent"])
		var sc any
		json.Unmarshal(structured, &sc)
		walkStrings(sc, func(s string) {
			for _, line := range strings.Split(s, "\n") {
				if beginRE.MatchString(line) {
					continue
				}
				for _, r := range line {
					if r == '\t' {
						continue
					}
					if clean.Forbidden(r) && !allowedInContext(s, r) {
						t.Fatalf("%s: structuredContent holds U+%04X", what, r)
					}
				}
			}
		})
		for _, m := range marks {
			if seenMarks[m] {
				t.Fatalf("%s: mark %s was already used by another answer", what, m)
			}
			seenMarks[m] = true
		}
		return r
	}
	list := call("mail_list", map[string]any{"limit": 500})
	msgs := list["structuredContent"].(map[string]any)["messages"].([]any)
	if len(msgs) != len(entries) {
		t.Fatalf("%d messages listed, %d in the corpus", len(msgs), len(entries))
	}
	call("mail_search", map[string]any{"query": "mallory", "limit": 500})
	call("mail_senders", map[string]any{})
	call("mail_folders", map[string]any{})
	var withID []string // the reading tools whose id is a message's
	firstID := msgs[0].(map[string]any)["id"].(string)
	for _, spec := range generated.Tools {
		schema, _ := generated.Files.ReadFile(spec.InputSchema)
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		json.Unmarshal(schema, &in)
		if p, ok := in.Properties["id"].(map[string]any); ok && spec.Effect == "none" && takesMessageID(p, firstID) {
			withID = append(withID, spec.Name)
		}
	}
	if len(withID) < 4 {
		t.Fatalf("only %v take a message id", withID)
	}
	for _, m := range msgs {
		id := m.(map[string]any)["id"].(string)
		for _, tool := range withID {
			r := call(tool, map[string]any{"id": id})
			if r["isError"] != false {
				t.Fatalf("%s %s: %v", tool, id, callText(r))
			}
		}
	}
	// A reply to every message can be prepared, and its preview (the original's
	// subject and names, quoted) is as clean as any other answer: call checks it.
	previews := 0
	for _, m := range msgs {
		id := m.(map[string]any)["id"].(string)
		if r := call("mail_draft", map[string]any{"id": id, "reply_all": true, "body": "Noted."}); r["isError"] == false {
			previews++
		}
	}
	if previews < len(msgs)*3/4 {
		t.Fatalf("only %d of %d replies could be prepared", previews, len(msgs))
	}
	// Every answer that showed a body had a mark of its own.
	if len(seenMarks) < len(msgs) {
		t.Fatalf("%d marks for %d bodies shown", len(seenMarks), len(msgs))
	}
	t.Logf("%d answers checked over %d hostile messages, %d distinct marks", answers, len(msgs), len(seenMarks))
}

func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range x {
			fn(k)
			walkStrings(e, fn)
		}
	}
}

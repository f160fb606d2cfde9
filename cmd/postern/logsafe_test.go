package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/audit"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// evilClient is a client name that tries to forge a line of postern log, retitle the
// terminal and reverse what follows it.
const evilClient = "evil\n2026-01-01T00:00:00Z fake-client mail_send ok\x1b]0;pwn\x07\u202e"

// fakeLine is the start of the line evilClient tries to forge.
const fakeLine = "2026-01-01T00:00:00Z fake-client"

// inert fails the test when out holds a character a terminal acts on or hides: any control
// but the newlines that end lines, DEL, C1, bidi controls and other invisible characters.
func inert(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r != '\n' && r != '\\' && termsafe.Unsafe(r) {
			t.Fatalf("%s holds %U at byte %d:\n%q", what, r, i, out)
		}
	}
}

// TestLogCannotBeForged: a client whose name, tool, arguments and error sentences carry
// newlines, ESC sequences and bidi controls gets exactly one line of postern log per call;
// no line of its own, no ESC, no bidi control reaches the terminal, and every character of
// the name is shown (escaped), not dropped.
func TestLogCannotBeForged(t *testing.T) {
	env, cfg := mailHome(t, 5)
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.rpc(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": evilClient, "version": "1"},
	})
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	evil := "\n" + fakeLine + " mail_send ok\x1b[2J\x1b]0;pwn\x07\u202e\u2066\u200f\u061c"
	calls := []map[string]any{
		{"name": "status"},
		{"name": "mail_search", "arguments": map[string]any{"query": "after:2026-01-04 report" + evil, "limit": 5}},
		{"name": "mail_search", "arguments": map[string]any{"query": "has:attachment", "limit": 5000}},
		{"name": "mail_list", "arguments": map[string]any{"folder": "INBOX" + evil, "account": "a\u202eb", "unread": true}},
		{"name": "docs", "arguments": map[string]any{"page": "x" + evil}},
		{"name": "mail_show", "arguments": map[string]any{"id": "m1" + evil}},
		{"name": "mail_search", "arguments": map[string]any{"query": "is:\u202eevil" + evil}}, // the parser's refusal quotes it
	}
	for i, c := range calls {
		s.rpc(i+1, "tools/call", c)
	}
	// An unknown tool is a protocol error and writes no line.
	if code, _ := errCode(t, s.rpc("u", "tools/call", map[string]any{"name": "evil" + evil})); code != -32602 {
		t.Fatalf("an unknown tool answered %d", code)
	}
	// A 2026-07-28 request names its client in _meta.
	meta := modernMeta()
	meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "modern\r\n" + fakeLine + "\u2067\x1b[31m", "version": "1"}
	s.rpc("m", "tools/call", map[string]any{"name": "status", "_meta": meta})
	logged := len(calls) + 1
	s.in.Close()
	s.cmd.Wait()

	// A line that no server wrote (an older version's, or an edited file): its tool, error and
	// ids are shown escaped too.
	state := filepath.Join(envValue(env, "XDG_STATE_HOME"), "postern")
	if err := audit.Open(state, nil).Write(audit.Entry{
		Client: "hand\nmade", Tool: "forged" + evil, Args: map[string]any{"q": "\u202e\x7f\u0085"},
		Error: "bad" + evil, IDs: []string{"m1\x1b[2J", "m2" + evil},
	}); err != nil {
		t.Fatal(err)
	}
	logged++

	out, errOut, code := runCLI(t, env, "log")
	if code != 0 {
		t.Fatalf("postern log: exit %d: %s", code, errOut)
	}
	inert(t, "postern log", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != logged {
		t.Fatalf("postern log printed %d lines for %d calls:\n%s", len(lines), logged, out)
	}
	start := regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}  \S`)
	shown := termsafe.Line(evilClient)
	named := 0
	for _, l := range lines {
		if !start.MatchString(l) || strings.HasPrefix(l, fakeLine) {
			t.Errorf("a line of postern log does not start with a call's time: %q", l)
		}
		if strings.Contains(l, shown) {
			named++
		}
	}
	if named != len(calls) {
		t.Errorf("the client's name, escaped whole (%s), is on %d lines, want %d:\n%s", shown, named, len(calls), out)
	}
	for _, want := range []string{`"limit":5000`, `after:2026-01-04`, `"unread":true`, `forged\n` + fakeLine, `hand\nmade`, `m1\x1b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("postern log does not show %s:\n%s", want, out)
		}
	}

	out, _, code = runCLI(t, env, "log", "--json")
	if code != 0 {
		t.Fatalf("postern log --json: exit %d", code)
	}
	inert(t, "postern log --json", out)
	jl := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(jl) != logged {
		t.Fatalf("postern log --json printed %d lines for %d calls", len(jl), logged)
	}
	var first audit.Entry
	if err := json.Unmarshal([]byte(jl[0]), &first); err != nil || first.Client != evilClient {
		t.Errorf("postern log --json does not give the client's name back as it was: %q (%v)", first.Client, err)
	}
}

// TestApproveListIsEscaped: a held send whose preview (written from an agent's arguments)
// and client name carry controls and bidi characters is listed with every field escaped, one
// line per preview line.
func TestApproveListIsEscaped(t *testing.T) {
	env := home(t)
	q := &approval.Queue{Dir: filepath.Join(envValue(env, "XDG_STATE_HOME"), "postern", "approvals")}
	preview := "Send from account work\nTo: a@example.com\nSubject: hi\x1b]0;pwn\x07\u202etxt.exe\n  | body\r" + fakeLine + " mail_send ok\u2066"
	if _, err := q.Put(approval.Held{Ref: "0123456789", Tool: "mail_send_commit", Account: "work\x1b[2J", Text: preview, Client: evilClient, Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, env, "approve")
	if code != 0 {
		t.Fatalf("postern approve: exit %d: %s", code, errOut)
	}
	inert(t, "postern approve", out)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, fakeLine) {
			t.Errorf("a forged line stands on its own: %q", l)
		}
	}
	for _, want := range []string{`asked by ` + termsafe.Line(evilClient), `account work\x1b[2J`, `    Subject: hi\x1b]0;pwn\x07\u202etxt.exe`, `  | body\r` + fakeLine} {
		if !strings.Contains(out, want) {
			t.Errorf("postern approve does not show %s:\n%s", want, out)
		}
	}
	out, _, code = runCLI(t, env, "approve", "--json")
	if code != 0 {
		t.Fatalf("postern approve --json: exit %d", code)
	}
	inert(t, "postern approve --json", strings.ReplaceAll(out, "\n", ""))
	var rows []struct{ Client, Preview string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Client != evilClient || rows[0].Preview != preview {
		t.Errorf("postern approve --json does not give the held action back as it was: %+v (%v)", rows, err)
	}
}

// TestIntegrationsOutputIsEscaped: a host file whose servers hold raw bidi characters and DEL,
// and whose postern entry runs a program named with ESC sequences, is shown by doctor, plan and
// list with every such character escaped.
func TestIntegrationsOutputIsEscaped(t *testing.T) {
	env := home(t)
	homeDir := envValue(env, "HOME")
	file := filepath.Join(homeDir, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o700)
	// Raw U+202E and DEL are valid JSON inside strings; ESC must be written as \u001b.
	body := `{"mcpServers": {"other": {"command": "/bin/true` + "\u202e\x7f" + `"}, "postern": {"command": "/nope/\u001b]0;pwn\u0007\u202epostern", "args": ["mcp", "x\ny"]}}}`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, env, "integrations", "doctor", "cursor", "--binary", binary)
	if code != 1 {
		t.Fatalf("doctor: exit %d, want 1: %s %s", code, out, errOut)
	}
	inert(t, "integrations doctor", out)
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "Cursor (cursor): ") && !strings.HasPrefix(l, "  ") {
			t.Errorf("doctor printed a line of its own: %q", l)
		}
	}
	if !strings.Contains(out, `/nope/\x1b]0;pwn\x07\u202epostern`) {
		t.Errorf("doctor does not show the program's name escaped:\n%s", out)
	}
	out, _, code = runCLI(t, env, "integrations", "doctor", "cursor", "--json")
	inert(t, "integrations doctor --json", strings.ReplaceAll(out, "\n", ""))
	if !json.Valid([]byte(out)) {
		t.Errorf("doctor --json is not JSON: %s", out)
	}
	out, errOut, code = runCLI(t, env, "integrations", "plan", "cursor", "--binary", binary)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	inert(t, "integrations plan", out)
	if !strings.Contains(out, `/bin/true\u202e\x7f`) {
		t.Errorf("plan does not show the other server's command escaped:\n%s", out)
	}
	out, _, code = runCLI(t, env, "integrations", "list")
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	inert(t, "integrations list", out)
}

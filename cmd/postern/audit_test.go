package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
)

// envValue is the value a program started with env sees for key: the last
// one, as the environment of a test is the real one with its own appended.
func envValue(env []string, key string) string {
	v := ""
	for _, e := range env {
		if x, ok := strings.CutPrefix(e, key+"="); ok {
			v = x
		}
	}
	return v
}

// TestAuditLog: after calling every tool, the month's file holds one line per
// call, without a body or a code; file 0600, folder 0700; postern log shows it.
func TestAuditLog(t *testing.T) {
	env, cfg := mailHome(t, 40)
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	page := result(t, s.rpc("p", "tools/call", map[string]any{"name": "mail_list", "arguments": map[string]any{"limit": 1}}))
	id := page["structuredContent"].(map[string]any)["messages"].([]any)[0].(map[string]any)["id"].(string)
	shown := result(t, s.rpc("s", "tools/call", map[string]any{"name": "mail_show", "arguments": map[string]any{"id": id}}))
	body := shown["structuredContent"].(map[string]any)["text"].(string)
	calls := 2
	for i, spec := range generated.Tools {
		args := map[string]any{}
		schema, _ := generated.Files.ReadFile(spec.InputSchema)
		if strings.Contains(string(schema), `"id"`) {
			args["id"] = id
		}
		if strings.Contains(string(schema), `"query"`) {
			args["query"] = "report 482913"
		}
		s.rpc(i, "tools/call", map[string]any{"name": spec.Name, "arguments": args})
		calls++
	}
	// A refused call and an invalid one are logged too.
	s.rpc("bad", "tools/call", map[string]any{"name": "docs", "arguments": map[string]any{"page": 7}})
	calls++
	s.in.Close()
	s.cmd.Wait()

	state := filepath.Join(envValue(env, "XDG_STATE_HOME"), "postern", "audit")
	file := filepath.Join(state, time.Now().UTC().Format("2006-01")+".jsonl")
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode %v, want 0600", st.Mode().Perm())
	}
	dst, _ := os.Stat(state)
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("audit folder mode %v, want 0700", dst.Mode().Perm())
	}
	f, _ := os.Open(file)
	defer f.Close()
	lines := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var raw strings.Builder
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not JSON: %q", lines+1, sc.Text())
		}
		lines++
		raw.WriteString(sc.Text() + "\n")
	}
	if lines != calls {
		t.Fatalf("%d lines for %d calls", lines, calls)
	}
	log := raw.String()
	// No body text: no line of the shown body (beyond its frame) is in the log.
	for _, line := range strings.Split(body, "\n") {
		if len(line) > 20 && !strings.HasPrefix(line, "<<<") && strings.Contains(log, line) {
			t.Fatalf("the audit log holds body text %q", line)
		}
	}
	if strings.Contains(log, "482913") {
		t.Fatal("the audit log holds the code given in a query")
	}
	if !strings.Contains(log, `"tool":"mail_show"`) || !strings.Contains(log, id) {
		t.Fatalf("the audit log does not say mail_show gave %s", id)
	}
	out, _, code := runCLI(t, env, "log")
	if code != 0 || !strings.Contains(out, "mail_show") || strings.Count(out, "\n") != calls {
		t.Fatalf("postern log: exit %d, %d lines:\n%s", code, strings.Count(out, "\n"), out)
	}
	out, _, code = runCLI(t, env, "log", "--json", "--month", time.Now().UTC().Format("2006-01"))
	if code != 0 || strings.Count(out, "\n") != calls {
		t.Fatalf("postern log --json: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, env, "log", "--month", "2026-13"); code == 0 || !strings.Contains(errOut, "YYYY-MM") {
		t.Fatalf("a bad month: %d %q", code, errOut)
	}
}

// auditLines reads the audit file of this month under env's state folder.
func auditLines(t *testing.T, env []string) []map[string]any {
	t.Helper()
	file := filepath.Join(envValue(env, "XDG_STATE_HOME"), "postern", "audit", time.Now().UTC().Format("2006-01")+".jsonl")
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line is not JSON: %q", l)
		}
		out = append(out, e)
	}
	return out
}

// TestAuditWrittenWhileServing: lines of read-only calls reach the file while
// the server keeps running (within the queue's delay), not only at exit.
func TestAuditWrittenWhileServing(t *testing.T) {
	env, cfg := mailHome(t, 5)
	s := startEnv(t, env, "--config", cfg)
	s.initialize("2025-11-25")
	for i := 0; i < 3; i++ {
		result(t, s.rpc(i, "tools/call", map[string]any{"name": "status"}))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(auditLines(t, env)) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s of a running server, the audit file holds %d of 3 lines", len(auditLines(t, env)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.in.Close()
	s.cmd.Wait()
}

// TestAuditFlushedOnSignal: a server ended by SIGTERM or SIGINT right after
// answering still writes the lines of the calls it answered, and exits with
// 128 + the signal's number.
func TestAuditFlushedOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			env, cfg := mailHome(t, 5)
			s := startEnv(t, env, "--config", cfg)
			s.initialize("2025-11-25")
			const calls = 20
			for i := 0; i < calls; i++ {
				result(t, s.rpc(i, "tools/call", map[string]any{"name": "status"}))
			}
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := s.cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Fatalf("postern mcp ended by %v: %v, want exit status %d", sig, err, 128+int(sig))
			}
			if n := len(auditLines(t, env)); n != calls {
				t.Fatalf("after %v the audit file holds %d lines for %d calls", sig, n, calls)
			}
		})
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/mcptest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// binary is the real postern, built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "postern-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "postern")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building postern:", err)
		os.Exit(1)
	}
	release := smtptest.Hold()
	code := imaptest.Run(m)
	release()
	os.RemoveAll(dir)
	os.Exit(code)
}

// home makes a throwaway HOME with XDG folders and returns the environment for postern.
func home(t *testing.T) []string {
	t.Helper()
	h := t.TempDir()
	return append(os.Environ(),
		"HOME="+h,
		"XDG_CONFIG_HOME="+filepath.Join(h, ".config"),
		"XDG_DATA_HOME="+filepath.Join(h, ".local/share"),
		"XDG_STATE_HOME="+filepath.Join(h, ".local/state"),
		// No background sync (watch_e2e_test.go tests it): a test's syncs are its own.
		"POSTERN_WATCH=off",
	)
}

// session is the real binary over pipes, read line by line.
type session struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
}

func start(t *testing.T, args ...string) *session {
	t.Helper()
	return startEnv(t, home(t), args...)
}

func startEnv(t *testing.T, env []string, args ...string) *session {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp"}, args...)...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: &stderr}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("postern did not exit within 10 s of stdin closing")
		}
	})
	return s
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing to postern: %v", err)
	}
}

func (s *session) sendRaw(b []byte) {
	s.t.Helper()
	if _, err := s.in.Write(b); err != nil {
		s.t.Fatalf("writing to postern: %v", err)
	}
}

// recv reads one line and decodes it; it fails the test after 10 s.
func (s *session) recv() map[string]any {
	s.t.Helper()
	line := s.recvLine()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		s.t.Fatalf("postern wrote a line that is not a JSON object: %q (%v)", line, err)
	}
	return m
}

func (s *session) recvLine() string {
	s.t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := s.out.ReadString('\n')
		ch <- res{l, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			s.t.Fatalf("reading from postern: %v (stderr: %s)", r.err, s.stderr.String())
		}
		return strings.TrimRight(r.line, "\n")
	case <-time.After(10 * time.Second):
		s.t.Fatalf("no answer from postern within 10 s (stderr: %s)", s.stderr.String())
	}
	return ""
}

// rpc sends a request and returns its answer.
func (s *session) rpc(id any, method string, params any) map[string]any {
	s.t.Helper()
	s.send(mcptest.Request(id, method, params))
	return s.recv()
}

func (s *session) initialize(version string) map[string]any {
	s.t.Helper()
	r := s.rpc(0, "initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
	})
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

// modernMeta is the _meta every 2026-07-28 request carries.
func modernMeta() map[string]any { return mcptest.Meta("2026-07-28", "e2e-modern") }

func withMeta(p map[string]any) map[string]any {
	if p == nil {
		p = map[string]any{}
	}
	p["_meta"] = modernMeta()
	return p
}

var (
	result  = mcptest.Result
	errCode = mcptest.ErrCode
)

// runCLI runs the binary with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIWith(t, env, binary, args...)
}

// runCLIWith runs program with args, as runCLI runs postern.
func runCLIWith(t *testing.T, env []string, program string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(program, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

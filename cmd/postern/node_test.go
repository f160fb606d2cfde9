//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	pmcp "github.com/postern-mcp/postern/internal/mcp"
)

// The tests in this file drive the real binary with independent MCP clients
// from npm, pinned by the lockfiles in testdata/clients (Node 20 set) and
// testdata/clients/node22 (Node 22 set, with its own node binary). See
// testdata/clients/README.md. They run only when POSTERN_NPM_CLIENTS names the
// installed folder; .ci/run installs it and sets the variable.

const npmClientsEnv = "POSTERN_NPM_CLIENTS"

// Paths inside POSTERN_NPM_CLIENTS.
const (
	inspector015   = "node_modules/@modelcontextprotocol/inspector/cli/build/index.js"
	inspector212   = "node22/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
	conformance016 = "node22/node_modules/@modelcontextprotocol/conformance/dist/index.js"
	sdk1Client     = "sdk1-client.mjs"
	v2Client       = "v2-client.mjs"
	node22Binary   = "node22/node_modules/node/bin/node"
)

// clientTimeout bounds one client run (connect, list, calls, exit).
const clientTimeout = 90 * time.Second

// npmClients is the installed client folder.
type npmClients struct {
	dir    string
	node20 string // node from PATH, for the Node 20 set
	node22 string // the npm-installed Node 22
}

// needClients skips the test when POSTERN_NPM_CLIENTS is unset, and fails it when
// the variable is set but the folder is not installed as its lockfiles say.
func needClients(t *testing.T) npmClients {
	t.Helper()
	dir := os.Getenv(npmClientsEnv)
	if dir == "" {
		t.Skip(npmClientsEnv + " not set: run npm ci in cmd/postern/testdata/clients (and node22/) and set it; .ci/run does")
	}
	if !filepath.IsAbs(dir) {
		t.Fatalf("%s=%q must be an absolute path (of cmd/postern/testdata/clients)", npmClientsEnv, dir)
	}
	install := fmt.Sprintf("run `npm ci --no-audit --no-fund` in %s, %s and %s", dir, filepath.Join(dir, "node22"), filepath.Join(dir, "conformance2"))
	for _, p := range []string{sdk1Client, v2Client, inspector015, inspector212, conformance016, conformance020, node22Binary} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("%s=%s but %s is missing (%v): %s", npmClientsEnv, dir, p, err, install)
		}
	}
	// Every pinned dependency must be installed at its pinned version.
	for _, sub := range []string{".", "node22", "conformance2"} {
		var pkg struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		readJSON(t, filepath.Join(dir, sub, "package.json"), &pkg)
		if len(pkg.Dependencies) == 0 {
			t.Fatalf("%s lists no dependencies", filepath.Join(dir, sub, "package.json"))
		}
		for name, want := range pkg.Dependencies {
			var got struct {
				Version string `json:"version"`
			}
			p := filepath.Join(dir, sub, "node_modules", name, "package.json")
			if b, err := os.ReadFile(p); err != nil || json.Unmarshal(b, &got) != nil || got.Version != want {
				t.Fatalf("%s: installed %q, package.json pins %q (%v): %s", p, got.Version, want, err, install)
			}
		}
	}
	c := npmClients{dir: dir, node22: filepath.Join(dir, node22Binary)}
	var err error
	if c.node20, err = exec.LookPath("node"); err != nil {
		t.Fatalf("%s is set but there is no node on PATH for the Node 20 clients: %v", npmClientsEnv, err)
	}
	if v := nodeMajor(t, c.node20); v < 20 {
		t.Fatalf("node on PATH (%s) is Node %d; the clients in %s need Node 20 or later", c.node20, v, dir)
	}
	if v := nodeMajor(t, c.node22); v != 22 {
		t.Fatalf("%s is Node %d, want 22: %s", c.node22, v, install)
	}
	return c
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func nodeMajor(t *testing.T, node string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", node, err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if err != nil {
		t.Fatalf("%s --version printed %q", node, out)
	}
	return major
}

// clientRun is one finished client process.
type clientRun struct {
	args           []string
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r clientRun) String() string {
	return fmt.Sprintf("\ncommand: %s\nexit code: %d after %s\n--- stdout ---\n%s\n--- stderr ---\n%s",
		strings.Join(r.args, " "), r.code, r.took.Round(time.Millisecond),
		ansi.ReplaceAllString(r.stdout, ""), ansi.ReplaceAllString(r.stderr, ""))
}

// inGroup starts cmd in its own process group and makes cancelling it kill the group.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}

// runClient runs a client in dir with env, within clientTimeout; it fails the
// test (printing the client's output) only when the client cannot run or times out.
func runClient(t *testing.T, dir string, env []string, name string, args ...string) clientRun {
	t.Helper()
	return runClientWithin(t, clientTimeout, dir, env, name, args...)
}

// runClientWithin is runClient with another time limit.
func runClientWithin(t *testing.T, limit time.Duration, dir string, env []string, name string, args ...string) clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	inGroup(cmd)
	began := time.Now()
	err := cmd.Run()
	r := clientRun{args: append([]string{name}, args...), stdout: out.String(), stderr: errb.String(), took: time.Since(began)}
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything the client left behind
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("client did not finish within %s:%s", limit, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("client could not run: %v%s", err, r)
	}
	t.Logf("%s: exit %d in %s", strings.TrimPrefix(args[0], dir+string(filepath.Separator)), r.code, r.took.Round(time.Millisecond))
	return r
}

// defaultScopeTools is the sorted names of the tools of the catalog's default scopes.
func defaultScopeTools() []string {
	def := map[string]bool{}
	for _, s := range generated.Scopes {
		def[s.Name] = s.Default
	}
	var names []string
	for _, spec := range generated.Tools {
		if def[spec.Scope] {
			names = append(names, spec.Name)
		}
	}
	slices.Sort(names)
	return names
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

func (r toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// checkTools fails unless tools are exactly the default-scope tools.
func checkTools(t *testing.T, tools []struct {
	Name string `json:"name"`
}, r clientRun) {
	t.Helper()
	var got []string
	for _, tl := range tools {
		got = append(got, tl.Name)
	}
	slices.Sort(got)
	if want := defaultScopeTools(); !slices.Equal(got, want) {
		t.Fatalf("tools/list gave %v, want the default-scope tools %v%s", got, want, r)
	}
}

// checkStatus fails unless res is a successful status result of era; version
// is the protocol version the client negotiated, or "" for any legacy revision.
func checkStatus(t *testing.T, res toolResult, era, version string, r clientRun) {
	t.Helper()
	sc := res.StructuredContent
	if res.IsError || sc == nil {
		t.Fatalf("status: isError=%v, structuredContent=%v%s", res.IsError, sc, r)
	}
	if sc["protocol_era"] != era {
		t.Fatalf("status: protocol_era %v, want %q%s", sc["protocol_era"], era, r)
	}
	pv, _ := sc["protocol_version"].(string)
	switch {
	case version != "" && pv != version:
		t.Fatalf("status: protocol_version %q, want %q%s", pv, version, r)
	case era == "modern" && pv != pmcp.Modern:
		t.Fatalf("status: protocol_version %q in the modern era, want %q%s", pv, pmcp.Modern, r)
	case era == "legacy" && (pv == pmcp.Modern || !slices.Contains(pmcp.Supported, pv)):
		t.Fatalf("status: protocol_version %q in the legacy era, want one of the legacy revisions of %v%s", pv, pmcp.Supported, r)
	}
}

// checkBadArgs fails unless res refuses docs {"page": 3}, naming /page.
func checkBadArgs(t *testing.T, res toolResult, r clientRun) {
	t.Helper()
	if !res.IsError || !strings.Contains(res.text(), "/page") {
		t.Fatalf(`docs {"page": 3}: want isError with "/page" in the text, got isError=%v %q%s`, res.IsError, res.text(), r)
	}
}

func decode(t *testing.T, s string, v any, r clientRun) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("client output is not the expected JSON: %v%s", err, r)
	}
}

// TestInspectorCLI015 drives postern with the MCP Inspector 0.15 CLI on Node 20
// (the 2025 protocol, @modelcontextprotocol/sdk 1.x underneath).
func TestInspectorCLI015(t *testing.T) {
	c := needClients(t)
	env := home(t) // inspector 0.15 passes its whole environment to the server
	cli := filepath.Join(c.dir, inspector015)
	// The target comes first; the server's arguments go after "--".
	inspect := func(t *testing.T, method ...string) clientRun {
		t.Helper()
		args := append([]string{cli, binary}, method...)
		r := runClient(t, c.dir, env, c.node20, append(args, "--", "mcp")...)
		if r.code != 0 {
			t.Fatalf("inspector failed:%s", r)
		}
		return r
	}
	t.Run("tools/list", func(t *testing.T) {
		r := inspect(t, "--method", "tools/list")
		var out struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		decode(t, r.stdout, &out, r)
		checkTools(t, out.Tools, r)
	})
	t.Run("tools/call status", func(t *testing.T) {
		r := inspect(t, "--method", "tools/call", "--tool-name", "status")
		var res toolResult
		decode(t, r.stdout, &res, r)
		checkStatus(t, res, "legacy", "", r)
	})
}

// TestInspectorCLI212 drives postern with the MCP Inspector 2.12 CLI on the npm
// Node 22, pinned to each protocol era.
func TestInspectorCLI212(t *testing.T) {
	c := needClients(t)
	env := home(t)
	// Inspector 2.x gives the server only a few safe variables: pass postern's
	// explicitly (the last value of each wins, as in exec.Cmd.Env).
	last := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			last[k] = v
		}
	}
	var serverEnv []string
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"} {
		if last[k] == "" {
			t.Fatalf("home(t) did not set %s", k)
		}
		serverEnv = append(serverEnv, "-e", k+"="+last[k])
	}
	cli := filepath.Join(c.dir, inspector212)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			inspect := func(t *testing.T, method ...string) clientRun {
				t.Helper()
				args := append([]string{cli, "--cli", "--protocol-era", era, "--format", "json"}, serverEnv...)
				args = append(args, method...)
				// postern's arguments after "--", so none is taken for an inspector flag.
				r := runClient(t, c.dir, env, c.node22, append(args, "--", binary, "mcp")...)
				if r.code != 0 {
					t.Fatalf("inspector failed:%s", r)
				}
				return r
			}
			t.Run("tools/list", func(t *testing.T) {
				r := inspect(t, "--method", "tools/list")
				var out struct {
					Result struct {
						Tools []struct {
							Name string `json:"name"`
						} `json:"tools"`
					} `json:"result"`
				}
				decode(t, r.stdout, &out, r)
				checkTools(t, out.Result.Tools, r)
			})
			t.Run("tools/call status", func(t *testing.T) {
				r := inspect(t, "--method", "tools/call", "--tool-name", "status")
				var out struct {
					Result toolResult `json:"result"`
				}
				decode(t, r.stdout, &out, r)
				checkStatus(t, out.Result, era, "", r)
			})
		})
	}
}

// TestTypeScriptSDKClients drives postern with the official TypeScript clients:
// @modelcontextprotocol/sdk 1.x, and @modelcontextprotocol/client 2.x in each
// negotiation mode.
func TestTypeScriptSDKClients(t *testing.T) {
	c := needClients(t)
	for _, tc := range []struct {
		name   string
		script string
		era    string // --era of v2-client.mjs
		want   string // era postern must report
	}{
		{"sdk1", sdk1Client, "", "legacy"},
		{"client2-legacy", v2Client, "legacy", "legacy"},
		{"client2-auto", v2Client, "auto", "modern"}, // postern answers server/discover
		{"client2-pin-" + pmcp.Modern, v2Client, pmcp.Modern, "modern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{filepath.Join(c.dir, tc.script)}
			if tc.era != "" {
				args = append(args, "--era", tc.era)
			}
			args = append(args, "--call", "status", "--call", "docs", "--args", `{"page":3}`, "--", binary, "mcp")
			r := runClient(t, c.dir, home(t), c.node20, args...)
			if r.code != 0 {
				t.Fatalf("client failed:%s", r)
			}
			var out struct {
				Era             string `json:"era"`
				ProtocolVersion string `json:"protocolVersion"`
				ServerVersion   struct {
					Name string `json:"name"`
				} `json:"serverVersion"`
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				Calls []struct {
					Name   string     `json:"name"`
					Result toolResult `json:"result"`
				} `json:"calls"`
			}
			decode(t, r.stdout, &out, r)
			if tc.script == sdk1Client {
				out.Era = "legacy" // the 1.x SDK knows no other
			}
			if out.Era != tc.want || out.ProtocolVersion == "" {
				t.Fatalf("client negotiated era %q, version %q; want era %q%s", out.Era, out.ProtocolVersion, tc.want, r)
			}
			if out.ServerVersion.Name != generated.ServerName {
				t.Fatalf("client sees server %q, want %q%s", out.ServerVersion.Name, generated.ServerName, r)
			}
			checkTools(t, out.Tools, r)
			if len(out.Calls) != 2 {
				t.Fatalf("want 2 call results%s", r)
			}
			checkStatus(t, out.Calls[0].Result, tc.want, out.ProtocolVersion, r)
			if got := out.Calls[0].Result.StructuredContent["client"]; got == "" || got == nil {
				t.Fatalf("status names no client%s", r)
			}
			checkBadArgs(t, out.Calls[1].Result, r)
		})
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

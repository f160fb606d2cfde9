//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
)

// The official MCP conformance suite's server scenarios, run natively against
// `postern mcp --http` (through authProxy, which only adds the bearer token the suite cannot
// send): 0.1.16 for the legacy revisions, 0.2.0-alpha.12 (testdata/clients/conformance2) for
// 2026-07-28. The scenarios that need the suite's own fixture tools, resources and prompts
// (test_*, test://…) or a capability postern does not offer are listed, each with its reason,
// in testdata/conformance/*.yaml; the suite itself fails the run when a scenario not listed
// fails or a listed one passes, so the files stay true.

const conformance020 = "conformance2/node_modules/@modelcontextprotocol/conformance/dist/index.js"

func TestConformanceHTTP(t *testing.T) {
	c := needClients(t)
	cli020 := filepath.Join(c.dir, conformance020) // needClients checked it is installed
	s := startHTTP(t, home(t))
	url := authProxy(t, s)
	wd, _ := os.Getwd()
	for _, tc := range []struct {
		name, cli, expected string
		args                []string
	}{
		{"0.1.16-legacy", filepath.Join(c.dir, conformance016), "legacy-0.1.16.yaml", nil},
		{"0.2.0-" + "2026-07-28", cli020, "modern-0.2.0.yaml", []string{"--spec-version", "2026-07-28", "--suite", "all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := filepath.Join(wd, "testdata", "conformance", tc.expected)
			var text, summary string
			var r clientRun
			// Up to three runs: about one run in ten of 0.2.0-alpha.12 reports a repeated
			// tools/list as "terminated" (a request the suite's client dropped), which a stress
			// test of the same requests (TestHTTPConcurrentStateless) never shows; and the suite's
			// client gives some streams 500–1500 ms before it aborts them, which a machine busy
			// with the other test packages (CI runs two at once on two cores) exceeds now and then
			// (subscriptions/listen "failed to return communication frames"). A failing run's
			// summary is logged; a failure that holds three times fails the test.
			const attempts = 3
			for attempt := 1; attempt <= attempts; attempt++ {
				out := t.TempDir()
				args := append([]string{tc.cli, "server", "--url", url, "--expected-failures", exp, "-o", out}, tc.args...)
				r = runClientWithin(t, 15*time.Minute, c.dir, home(t), c.node22, args...)
				text = ansi.ReplaceAllString(r.stdout+r.stderr, "")
				summary = text
				if i := strings.Index(text, "=== SUMMARY ==="); i >= 0 {
					summary = text[i:]
				}
				if r.code == 0 || attempt == attempts {
					break
				}
				t.Logf("run %d failed; running the suite once more. Its summary:\n%s", attempt, tail(summary, 3000))
			}
			if r.code != 0 {
				t.Fatalf("the conformance suite failed (a scenario not in %s failed, or a listed one passed):\n%s\n%s", tc.expected, summary, tail(text, 6000))
			}
			if !passed.MatchString(summary) {
				t.Fatalf("no scenario passed:\n%s", summary)
			}
			t.Logf("%s", summary)
		})
	}
}

var passed = regexp.MustCompile(`✓ \S+: [1-9]\d* passed, 0 failed`)

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestInspectorHTTP drives `postern mcp --http` with the MCP Inspector 2.12 CLI
// (--transport http, the token by --header) in each protocol era: list and status. The
// inspector 0.15 CLI has no way to send a header, so it is not run over HTTP.
func TestInspectorHTTP(t *testing.T) {
	c := needClients(t)
	s := startHTTP(t, home(t))
	cli := filepath.Join(c.dir, inspector212)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			inspect := func(t *testing.T, method ...string) clientRun {
				t.Helper()
				args := append([]string{cli, "--cli", "--transport", "http", "--protocol-era", era, "--format", "json",
					"--header", "Authorization: Bearer " + s.token}, method...)
				r := runClient(t, c.dir, home(t), c.node22, append(args, s.url)...)
				if r.code != 0 {
					t.Fatalf("inspector failed:%s\nserver stderr:\n%s", r, s.stderr)
				}
				return r
			}
			r := inspect(t, "--method", "tools/list")
			var list struct {
				Result struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
				} `json:"result"`
			}
			decode(t, r.stdout, &list, r)
			checkTools(t, list.Result.Tools, r)
			r = inspect(t, "--method", "tools/call", "--tool-name", generated.ToolStatus)
			var call struct {
				Result toolResult `json:"result"`
			}
			decode(t, r.stdout, &call, r)
			checkStatus(t, call.Result, era, "", r)
		})
	}
}

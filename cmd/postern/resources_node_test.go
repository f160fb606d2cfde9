//go:build unix

package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// TestResourcesInspector: the MCP Inspector CLIs (0.15 on Node 20, the 2025 protocol; 2.12 on
// Node 22 in each era) list the resource templates and read each template's resource.
func TestResourcesInspector(t *testing.T) {
	c := needClients(t)
	h := newResHome(t)
	out, errOut, code := runCLI(t, h.env, "call", generated.ToolMailSearch, `{"query":"harbour"}`, "--json")
	if code != 0 {
		t.Fatalf("postern call %s: %s", generated.ToolMailSearch, errOut)
	}
	var list struct {
		Messages []struct{ ID, Thread, Subject string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("postern call --json printed %q: %v", out, err)
	}
	var id, thread string
	for _, m := range list.Messages {
		if m.Subject == "Re: Harbour plans" {
			id, thread = m.ID, m.Thread
		}
	}
	if id == "" || thread == "" {
		t.Fatalf("no reply row with a thread in %s", out)
	}
	// Each template's resource, and a word its text must hold.
	reads := map[string]string{
		"postern://docs/guide":       "postern",
		"postern://message/" + id:    "Yes, at noon.",
		"postern://thread/" + thread: "Harbour plans",
		"postern://agenda/today":     "Lighthouse open day",
	}
	var want []string
	for _, r := range generated.Resources {
		want = append(want, r.URITemplate)
	}
	// The inspector lists whatever the server says; what each run printed is checked below.
	check := func(t *testing.T, run func(t *testing.T, method ...string) []byte) {
		var tl struct {
			ResourceTemplates []struct {
				URITemplate string `json:"uriTemplate"`
			} `json:"resourceTemplates"`
		}
		json.Unmarshal(run(t, "--method", "resources/templates/list"), &tl)
		var got []string
		for _, x := range tl.ResourceTemplates {
			got = append(got, x.URITemplate)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("resources/templates/list gave %v, want %v", got, want)
		}
		for uri, word := range reads {
			var rr struct {
				Contents []struct{ URI, Text string } `json:"contents"`
			}
			json.Unmarshal(run(t, "--method", "resources/read", "--uri", uri), &rr)
			if len(rr.Contents) != 1 || rr.Contents[0].URI != uri || !strings.Contains(rr.Contents[0].Text, word) {
				t.Fatalf("resources/read %s: %+v, want one text with %q", uri, rr.Contents, word)
			}
		}
	}
	t.Run("inspector-0.15", func(t *testing.T) {
		cli := filepath.Join(c.dir, inspector015)
		check(t, func(t *testing.T, method ...string) []byte {
			t.Helper()
			r := runClient(t, c.dir, h.env, c.node20, append(append([]string{cli, binary}, method...), "--", "mcp")...)
			if r.code != 0 {
				t.Fatalf("inspector failed:%s", r)
			}
			return []byte(r.stdout)
		})
	})
	var serverEnv []string
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"} {
		serverEnv = append(serverEnv, "-e", k+"="+lastEnv(h.env, k))
	}
	for _, era := range []string{"legacy", "modern"} {
		t.Run("inspector-2.12-"+era, func(t *testing.T) {
			cli := filepath.Join(c.dir, inspector212)
			check(t, func(t *testing.T, method ...string) []byte {
				t.Helper()
				args := append([]string{cli, "--cli", "--protocol-era", era, "--format", "json"}, serverEnv...)
				args = append(append(args, method...), "--", binary, "mcp")
				r := runClient(t, c.dir, h.env, c.node22, args...)
				if r.code != 0 {
					t.Fatalf("inspector failed:%s", r)
				}
				var out struct {
					Result json.RawMessage `json:"result"`
				}
				decode(t, r.stdout, &out, r)
				return out.Result
			})
		})
	}
}

package integrations

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// What the agent will see names every tool of the grant and no other, and says where the
// grant comes from.
func TestAgentSees(t *testing.T) {
	e := testEnv(t)
	o := testOptions(e, "/bin/postern")
	o.Scopes = generated.ScopeRead
	lines := AgentSees(o, "")
	var n int
	for _, tool := range generated.Tools {
		listed := strings.Contains(lines[0], tool.Name+",") || strings.HasSuffix(lines[0], tool.Name)
		if tool.Scope == generated.ScopeRead {
			n++
			if !listed {
				t.Errorf("%s of scope %s is not listed: %s", tool.Name, tool.Scope, lines[0])
			}
		}
	}
	if !strings.HasPrefix(lines[0], "--scopes "+generated.ScopeRead+" list ") || !strings.Contains(lines[0], " "+strconv.Itoa(n)+" tools") {
		t.Fatalf("AgentSees = %q", lines)
	}
	// Without --scopes, the configuration's [mcp] scopes, read from the file.
	o.Scopes = ""
	os.MkdirAll(filepath.Dir(o.Config), 0o700)
	os.WriteFile(o.Config, []byte("[mcp]\nscopes = [\""+generated.ScopeRead+"\"]\n"), 0o600)
	if lines := AgentSees(o, ""); !strings.HasPrefix(lines[0], "no --scopes: the configuration's [mcp] scopes ("+generated.ScopeRead+")") {
		t.Fatalf("from the configuration: %q", lines)
	}
	p := generated.Presets[0]
	o.Scopes = strings.Join(p.Scopes, ",")
	if lines := AgentSees(o, p.Name); lines[0] != "preset "+p.Name+": "+p.Line {
		t.Fatalf("preset: %q", lines)
	}
	o.HTTP = "http://127.0.0.1:8765/mcp"
	if lines := AgentSees(o, ""); len(lines) != 1 || !strings.Contains(lines[0], o.HTTP) {
		t.Fatalf("URL entry: %q", lines)
	}
}

// The records of a host are its targets, narrowed by scope and name, a project's only in it;
// with none, the flags' own registration, unrecorded.
func TestTargetsAndRepairCommand(t *testing.T) {
	e := testEnv(t)
	h := mustHost(t, "claude-code")
	base := testOptions(e, "/bin/postern")
	recs := []Record{
		{Host: h.ID, Scope: "user", Name: DefaultName},
		{Host: h.ID, Scope: "project", Project: e.Project, Name: "work"},
		{Host: h.ID, Scope: "project", Project: "/elsewhere", Name: "other"},
		{Host: "codex", Scope: "user", Name: DefaultName},
	}
	got := Targets(recs, h, e.Project, Select{}, base)
	if len(got) != 2 || got[0].Record != &recs[0] || got[1].Record != &recs[1] {
		t.Fatalf("targets %+v", got)
	}
	if got := Targets(recs, h, e.Project, Select{Name: "work"}, base); len(got) != 1 || got[0].Options.Name != "work" {
		t.Fatalf("by name: %+v", got)
	}
	got = Targets(recs, mustHost(t, "cursor"), e.Project, Select{}, base)
	if len(got) != 1 || got[0].Record != nil || got[0].Options != base {
		t.Fatalf("unrecorded: %+v", got)
	}
	cmd := RepairCommand(Targets(recs, h, e.Project, Select{Name: "work"}, base)[0], "/home/sam/my config.toml")
	if cmd != "postern integrations repair claude-code --scope project --name work --config '/home/sam/my config.toml'" {
		t.Fatalf("repair command %q", cmd)
	}
}

func TestManualError(t *testing.T) {
	h := mustHost(t, "codex")
	if err := ManualError([]*Plan{{Host: h}}, "registered"); err != nil {
		t.Fatalf("nothing manual: %v", err)
	}
	err := ManualError([]*Plan{{Host: h, Manual: true}}, "registered")
	if err == nil || !strings.Contains(err.Error(), h.Executables[0]+" is not on PATH, so nothing was registered for codex") {
		t.Fatalf("manual: %v", err)
	}
}

package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// treeSum is a checksum of every file (path, mode and bytes) and link under root.
func treeSum(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, _ := d.Info()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+target)
		case d.IsDir():
			lines = append(lines, rel+"/ "+info.Mode().String())
		default:
			b, _ := os.ReadFile(p)
			s := sha256.Sum256(b)
			lines = append(lines, rel+" "+info.Mode().String()+" "+hex.EncodeToString(s[:]))
		}
		return nil
	})
	sort.Strings(lines)
	s := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(s[:])
}

// hostsHome is a throwaway home where every file host has a configuration
// holding another server, and the cli hosts' files too.
func hostsHome(t *testing.T) (env []string, homeDir string) {
	env = home(t)
	homeDir = envValue(env, "HOME")
	if !strings.HasPrefix(homeDir, os.TempDir()) {
		t.Fatalf("the test home %s is not a temporary folder", homeDir)
	}
	files := map[string]string{
		".cursor/mcp.json":                          `{"mcpServers": {"other": {"command": "/bin/true"}}}`,
		".codeium/windsurf/mcp_config.json":         `{"mcpServers": {"other": {"command": "/bin/true"}}}`,
		".config/Claude/claude_desktop_config.json": `{"mcpServers": {"other": {"command": "/bin/true"}}}`,
		".config/Code/User/mcp.json":                "{\n  // mine\n  \"servers\": {}\n}\n",
		".config/opencode/opencode.json":            "{\n  \"mcp\": {},\n}\n",
		".claude.json":                              `{"mcpServers": {"other": {"type": "stdio", "command": "/bin/true", "args": []}}}`,
		".gemini/settings.json":                     `{"mcpServers": {"other": {"command": "/bin/true"}}}`,
		".copilot/mcp-config.json":                  `{"mcpServers": {"other": {"type": "local", "command": "/bin/true", "args": [], "tools": ["*"]}}}`,
		".codex/config.toml":                        "[mcp_servers.other]\ncommand = \"/bin/true\"\n",
	}
	for rel, body := range files {
		p := filepath.Join(homeDir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// No host command on PATH: the cli hosts' commands are printed.
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=/nonexistent"
		}
	}
	return env, homeDir
}

// TestIntegrationsDryRun: --dry-run on every host, for setup and remove,
// leaves HOME byte-identical and prints what it would run or write.
func TestIntegrationsDryRun(t *testing.T) {
	env, homeDir := hostsHome(t)
	before := treeSum(t, homeDir)
	for _, h := range generated.Hosts {
		for _, verb := range []string{"setup", "remove", "plan"} {
			args := []string{"integrations", verb, h.ID, "--binary", binary, "--scopes", "read"}
			if verb != "plan" {
				args = append(args, "--dry-run")
			}
			out, errOut, code := runCLI(t, env, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
			}
			if verb == "setup" || verb == "plan" {
				switch h.Kind {
				case "file":
					if !strings.Contains(out, "write ") || !strings.Contains(out, binary) {
						t.Errorf("%v does not print the file it would write:\n%s", args, out)
					}
				case "cli":
					if !strings.Contains(out, "run: "+h.Executables[0]+" ") || !strings.Contains(out, binary) {
						t.Errorf("%v does not print the commands:\n%s", args, out)
					}
				case "snippet":
					if !strings.Contains(out, `"mcpServers"`) {
						t.Errorf("%v does not print the snippet:\n%s", args, out)
					}
				}
			}
		}
	}
	if after := treeSum(t, homeDir); after != before {
		t.Fatal("a dry run changed HOME")
	}
}

// TestIntegrationsAskFirst: setup without --yes, not on a terminal, shows the
// plan and changes nothing; with --yes it writes; list and doctor --json are
// the documented shape.
func TestIntegrationsAskFirst(t *testing.T) {
	env, homeDir := hostsHome(t)
	before := treeSum(t, homeDir)
	out, errOut, code := runCLI(t, env, "integrations", "setup", "cursor", "--binary", binary)
	if code == 0 || !strings.Contains(errOut, "--yes") || !strings.Contains(out, "write ") {
		t.Fatalf("setup without --yes: exit %d\n%s%s", code, out, errOut)
	}
	if treeSum(t, homeDir) != before {
		t.Fatal("setup without a yes changed HOME")
	}
	if out, errOut, code = runCLI(t, env, "integrations", "setup", "cursor", "--binary", binary, "--yes"); code != 0 {
		t.Fatalf("setup --yes: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runCLI(t, env, "integrations", "doctor", "cursor", "--binary", binary, "--json")
	var rep struct {
		OK    bool `json:"ok"`
		Hosts []struct {
			Host   string `json:"host"`
			OK     bool   `json:"ok"`
			Checks []struct {
				Check  string `json:"check"`
				OK     bool   `json:"ok"`
				Detail string `json:"detail"`
			} `json:"checks"`
			Fix string `json:"fix"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || len(rep.Hosts) != 1 {
		t.Fatalf("doctor --json: exit %d, %v\n%s", code, err, out)
	}
	var checks []string
	for _, c := range rep.Hosts[0].Checks {
		checks = append(checks, c.Check)
	}
	if strings.Join(checks, ",") != "found,registered,current,binary,handshake" {
		t.Fatalf("doctor checks %v", checks)
	}
	out, _, code = runCLI(t, env, "integrations", "doctor", "cursor", "--binary", binary, "--json", "--scopes", "read,read:bodies")
	if code != 1 || !strings.Contains(out, `"fix": "postern integrations repair cursor --scopes read,read:bodies"`) {
		t.Fatalf("doctor with other scopes: exit %d\n%s", code, out)
	}
	if out, errOut, code = runCLI(t, env, "integrations", "repair", "cursor", "--binary", binary, "--yes", "--scopes", "read,read:bodies"); code != 0 {
		t.Fatalf("repair: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code = runCLI(t, env, "integrations", "doctor", "cursor", "--binary", binary, "--scopes", "read,read:bodies"); code != 0 {
		t.Fatalf("doctor after repair: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, env, "integrations", "list", "--json", "--binary", binary)
	var rows []struct {
		ID         string `json:"id"`
		Registered bool   `json:"registered"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 || len(rows) != len(generated.Hosts) {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	for _, r := range rows {
		if r.Registered != (r.ID == "cursor") {
			t.Errorf("list says %s registered=%v", r.ID, r.Registered)
		}
	}
	if _, errOut, code := runCLI(t, env, "integrations", "setup", "nosuchhost", "--binary", binary); code == 0 || !strings.Contains(errOut, "claude-code") {
		t.Fatalf("an unknown host: exit %d %s", code, errOut)
	}
}

// TestBundleMCPB: postern bundle mcpb packs the generated manifest and a
// binary that starts and answers as postern, under the manifest's entry point.
func TestBundleMCPB(t *testing.T) {
	env := home(t)
	out := filepath.Join(t.TempDir(), "postern.mcpb")
	manifest, err := filepath.Abs("../../plugins/postern/mcpb/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if o, e, code := runCLI(t, env, "bundle", "mcpb", "--manifest", manifest, "--binary", binary, "--out", out); code != 0 {
		t.Fatalf("bundle: exit %d\n%s%s", code, o, e)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	dir := t.TempDir()
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, b, f.Mode())
	}
	var m struct {
		Server struct {
			EntryPoint string `json:"entry_point"`
			MCPConfig  struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcp_config"`
		} `json:"server"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil || !names[m.Server.EntryPoint] || len(names) != 2 {
		t.Fatalf("bundle holds %v, manifest %s (%v)", names, b, err)
	}
	cmd := strings.ReplaceAll(m.Server.MCPConfig.Command, "${__dirname}", dir)
	o, e, code := runCLIWith(t, env, cmd, append(m.Server.MCPConfig.Args, "--help")...)
	if code != 0 || !strings.Contains(o+e, "Serve MCP") {
		t.Fatalf("the packed binary: exit %d\n%s%s", code, o, e)
	}
}

// TestIntegrationsHostCLIFails: when the host's own command fails, setup
// says which command failed and what it printed, exits non-zero, and leaves
// the host's file as it was.
func TestIntegrationsHostCLIFails(t *testing.T) {
	env, homeDir := hostsHome(t)
	bin := filepath.Join(homeDir, "fakebin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho 'claude: the settings file is locked by another process' >&2\nexit 3\n"), 0o755)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + ":/usr/bin:/bin"
		}
	}
	before, _ := os.ReadFile(filepath.Join(homeDir, ".claude.json"))
	out, errOut, code := runCLI(t, env, "integrations", "setup", "claude-code", "--yes", "--binary", binary)
	if code == 0 || !strings.Contains(errOut, "claude mcp add") || !strings.Contains(errOut, "locked by another process") {
		t.Fatalf("setup with a failing claude: exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(homeDir, ".claude.json")); string(after) != string(before) {
		t.Fatal("the host's file changed")
	}
}

package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/integrations"
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
			args := []string{"integrations", verb, h.ID}
			if verb != "remove" {
				args = append(args, "--binary", binary, "--scopes", "read")
			}
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
	if strings.Join(checks, ",") != "found,registered,record,current,binary,handshake" {
		t.Fatalf("doctor checks %v", checks)
	}
	// doctor works from the record: a grant on its own command line is refused, with where to change it.
	_, errOut, code = runCLI(t, env, "integrations", "doctor", "cursor", "--scopes", "read,read:bodies")
	if code != 2 || !strings.Contains(errOut, "integrations setup HOST --scopes") {
		t.Fatalf("doctor --scopes: exit %d\n%s", code, errOut)
	}
	// setup again with other flags changes the grant; list shows it (text and JSON).
	if out, errOut, code = runCLI(t, env, "integrations", "setup", "cursor", "--binary", binary, "--yes", "--scopes", "read,read:bodies", "--account", "work"); code != 0 {
		t.Fatalf("setup with other scopes: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runCLI(t, env, "integrations", "list", "--json")
	var rows []struct {
		ID         string   `json:"id"`
		Registered bool     `json:"registered"`
		Recorded   bool     `json:"recorded"`
		Scopes     []string `json:"scopes"`
		Accounts   []string `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 || len(rows) != len(generated.Hosts) {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	for _, r := range rows {
		if r.Registered != (r.ID == "cursor") || r.Recorded != (r.ID == "cursor") {
			t.Errorf("list says %s registered=%v recorded=%v", r.ID, r.Registered, r.Recorded)
		}
		if r.ID == "cursor" && (strings.Join(r.Scopes, ",") != "read,read:bodies" || strings.Join(r.Accounts, ",") != "work") {
			t.Errorf("list gives cursor scopes %v accounts %v, want read,read:bodies and work", r.Scopes, r.Accounts)
		}
	}
	out, _, code = runCLI(t, env, "integrations", "list")
	if l := lineWith(out, "cursor "); code != 0 || !strings.Contains(l, "read,read:bodies") || !strings.Contains(l, "work") {
		t.Fatalf("list does not show cursor's scopes and accounts: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, env, "integrations", "setup", "cursr", "--binary", binary); code != 2 || !strings.Contains(errOut, "did you mean cursor?") || !strings.Contains(errOut, "claude-code") {
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

// fileHosts are the catalog's hosts whose kind is file.
func fileHosts() []generated.HostSpec {
	var out []generated.HostSpec
	for _, h := range generated.Hosts {
		if h.Kind == "file" {
			out = append(out, h)
		}
	}
	return out
}

// configOf is the file a file host keeps its servers in, under the test home (Linux paths).
func configOf(homeDir string, h generated.HostSpec) string {
	return filepath.Join(homeDir, strings.TrimPrefix(h.Config["linux"], "~/"))
}

// dropScopes is an edit by hand that takes the --scopes pair out of postern's entry, leaving
// the file valid for its host (strict JSON included).
var dropScopes = regexp.MustCompile(`,\s*"--scopes",\s*"read,read:bodies"`)

// TestIntegrationsRecordedGrant (issue 12): on every file host, setup --scopes read,read:bodies
// --yes then doctor passes; an edit by hand that drops the scopes makes doctor fail and name
// them; repair puts them back, and doctor passes again. The grant is never dropped.
func TestIntegrationsRecordedGrant(t *testing.T) {
	for _, h := range fileHosts() {
		t.Run(h.ID, func(t *testing.T) {
			env, homeDir := hostsHome(t)
			if out, errOut, code := runCLI(t, env, "integrations", "setup", h.ID, "--scopes", "read,read:bodies", "--yes", "--binary", binary); code != 0 {
				t.Fatalf("setup: exit %d\n%s%s", code, out, errOut)
			}
			if out, errOut, code := runCLI(t, env, "integrations", "doctor", h.ID); code != 0 {
				t.Fatalf("doctor after setup: exit %d\n%s%s", code, out, errOut)
			}
			path := configOf(homeDir, h)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := dropScopes.ReplaceAll(b, nil)
			if bytes.Equal(edited, b) {
				t.Fatalf("the entry in %s holds no --scopes read,read:bodies:\n%s", path, b)
			}
			if err := os.WriteFile(path, edited, 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCLI(t, env, "integrations", "doctor", h.ID)
			if code != 1 || !strings.Contains(out, "--scopes none instead of read,read:bodies") || !strings.Contains(out, "fix: postern integrations repair "+h.ID) {
				t.Fatalf("doctor after the edit: exit %d\n%s%s", code, out, errOut)
			}
			if out, errOut, code := runCLI(t, env, "integrations", "repair", h.ID, "--yes"); code != 0 {
				t.Fatalf("repair: exit %d\n%s%s", code, out, errOut)
			}
			if after, _ := os.ReadFile(path); !bytes.Contains(after, []byte(`"read,read:bodies"`)) {
				t.Fatalf("repair did not put the scopes back:\n%s", after)
			}
			if out, errOut, code := runCLI(t, env, "integrations", "doctor", h.ID); code != 0 {
				t.Fatalf("doctor after repair: exit %d\n%s%s", code, out, errOut)
			}
			// The record is the person's choice, kept private.
			rec := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "postern", "integrations.json")
			if st, err := os.Stat(rec); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("the record %s: %v %v, want mode 0600", rec, st, err)
			}
			// remove drops the record with the entry.
			if out, errOut, code := runCLI(t, env, "integrations", "remove", h.ID, "--yes"); code != 0 {
				t.Fatalf("remove: exit %d\n%s%s", code, out, errOut)
			}
			if b, _ := os.ReadFile(rec); strings.Contains(string(b), `"`+h.ID+`"`) {
				t.Fatalf("the record still holds %s after remove:\n%s", h.ID, b)
			}
		})
	}
}

// TestIntegrationsNoRecord: an entry an older postern wrote (no record) is checked against its
// own flags, and doctor says so; repair keeps those flags and records them.
func TestIntegrationsNoRecord(t *testing.T) {
	env, homeDir := hostsHome(t)
	cfg := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "postern", "config.toml")
	entry := fmt.Sprintf(`{"mcpServers": {"postern": {"command": %q, "args": ["mcp", "--config", %q, "--scopes", "read,read:headers"]}}}`, binary, cfg)
	os.WriteFile(filepath.Join(homeDir, ".cursor/mcp.json"), []byte(entry), 0o600)
	out, errOut, code := runCLI(t, env, "integrations", "doctor", "cursor", "--binary", binary)
	if code != 0 || !strings.Contains(out, "no record of setup") || !strings.Contains(out, "--scopes read,read:headers") {
		t.Fatalf("doctor on an unrecorded entry: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runCLI(t, env, "integrations", "list")
	if l := lineWith(out, "cursor "); !strings.Contains(l, "read,read:headers (not recorded)") {
		t.Fatalf("list on an unrecorded entry:\n%s", out)
	}
	if out, errOut, code := runCLI(t, env, "integrations", "repair", "cursor", "--binary", binary, "--yes"); code != 0 {
		t.Fatalf("repair: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runCLI(t, env, "integrations", "doctor", "cursor")
	if code != 0 || !strings.Contains(out, "setup asked for --scopes read,read:headers") {
		t.Fatalf("doctor after repair: exit %d\n%s", code, out)
	}
}

// runTerminal runs postern with a terminal as its standard input (a pseudo-terminal, as a
// person at a shell has), typing input into it; it returns stdout, stderr and the exit code.
func runTerminal(t *testing.T, env []string, input string, args ...string) (string, string, int) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here (%v)", err)
	}
	defer ptm.Close()
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlocking the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("naming the pseudo-terminal: %v", e)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	go io.Copy(io.Discard, ptm) // the terminal's echo of what is typed
	if _, err := io.WriteString(ptm, input); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v did not finish within 30 s on a terminal\n%s%s", args, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestIntegrationsAsksPreset: a setup in a terminal with neither --preset nor --scopes asks
// which preset, showing each one's line, reader by default; the answer is what is registered
// and recorded.
func TestIntegrationsAsksPreset(t *testing.T) {
	env, homeDir := hostsHome(t)
	out, errOut, code := runTerminal(t, env, "\ny\n", "integrations", "setup", "cursor", "--binary", binary)
	if code != 0 {
		t.Fatalf("setup in a terminal: exit %d\n%s%s", code, out, errOut)
	}
	for _, p := range generated.Presets {
		if !strings.Contains(out, p.Line) {
			t.Errorf("the question does not show preset %s's line:\n%s", p.Name, out)
		}
	}
	if !strings.Contains(out, generated.DefaultPreset+" (default)") || !strings.Contains(out, "What the agent will see:") {
		t.Errorf("setup output:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(homeDir, ".cursor/mcp.json"))
	p := integrations.FindPreset(generated.DefaultPreset)
	if !strings.Contains(string(b), `"`+strings.Join(p.Scopes, ",")+`"`) {
		t.Fatalf("the entry does not grant the default preset's scopes:\n%s", b)
	}
	out, _, _ = runCLI(t, env, "integrations", "list")
	if l := lineWith(out, "cursor "); !strings.Contains(l, generated.DefaultPreset+" (") {
		t.Fatalf("list does not show the preset:\n%s", out)
	}
}

// TestIntegrationsPlanSays: plan says what the agent will see: a preset's line and the scopes
// of it that have no tool yet; for --scopes, the tools the grant lists.
func TestIntegrationsPlanSays(t *testing.T) {
	env, _ := hostsHome(t)
	for _, p := range generated.Presets {
		out, errOut, code := runCLI(t, env, "integrations", "plan", "cursor", "--preset", p.Name, "--binary", binary)
		if code != 0 || !strings.Contains(out, "preset "+p.Name+": "+p.Line) || !strings.Contains(out, strings.Join(p.Scopes, ",")) {
			t.Fatalf("plan --preset %s: exit %d\n%s%s", p.Name, code, out, errOut)
		}
		for _, s := range p.Untooled {
			if !strings.Contains(out, s+": no tool yet") {
				t.Errorf("plan --preset %s does not say %s has no tool yet:\n%s", p.Name, s, out)
			}
		}
	}
	out, _, code := runCLI(t, env, "integrations", "plan", "cursor", "--scopes", "read:headers,notes:write", "--binary", binary)
	var want []string
	for _, tool := range generated.Tools {
		if tool.Scope == "read:headers" || tool.Scope == "notes:write" {
			want = append(want, tool.Name)
		}
	}
	// Every scope has a tool now (notes:write was the last without one): none is said to lack one.
	if code != 0 || !strings.Contains(out, fmt.Sprintf("list %d tools: %s", len(want), strings.Join(want, ", "))) || strings.Contains(out, "no tool yet") {
		t.Fatalf("plan --scopes: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, env, "integrations", "plan", "cursor", "--preset", "reader", "--scopes", "read"); code != 2 || !strings.Contains(errOut, "cannot go together") {
		t.Fatalf("--preset with --scopes: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, env, "integrations", "setup", "cursor", "--preset", "assistent"); code != 2 || !strings.Contains(errOut, "did you mean assistant?") {
		t.Fatalf("a mistyped preset: exit %d %s", code, errOut)
	}
}

// TestIntegrationsHelp: the tree's help works, and the exit statuses it documents are those of
// generated/docs/hosts.md.
func TestIntegrationsHelp(t *testing.T) {
	env := home(t)
	doc, err := os.ReadFile("../../generated/docs/hosts.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"integrations", "--help"}, {"integrations", "setup", "--help"}, {"help", "integrations", "doctor"}} {
		out, errOut, code := runCLI(t, env, args...)
		if code != 0 || !strings.Contains(out, "Exit status:") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		flat := strings.Join(strings.Fields(out), " ") // the help wraps its lines
		for _, e := range integrations.Exits {
			if !strings.Contains(flat, fmt.Sprintf("%d %s", e.Code, strings.ReplaceAll(e.Meaning, "`", ""))) {
				t.Errorf("%v does not document exit %d", args, e.Code)
			}
			if !bytes.Contains(doc, []byte(fmt.Sprintf("| %d | %s |", e.Code, e.Meaning))) {
				t.Errorf("generated/docs/hosts.md does not say exit %d as the help does: %s", e.Code, e.Meaning)
			}
		}
	}
	out, _, _ := runCLI(t, env, "integrations", "setup", "--help")
	for _, flag := range []string{"--preset", "--scopes", "--account", "--scope", "--name", "--config", "--binary", "--dry-run", "--yes"} {
		if !strings.Contains(out, flag) {
			t.Errorf("setup --help does not list %s", flag)
		}
	}
	if _, errOut, code := runCLI(t, env, "integrations", "docter"); code != 2 || !strings.Contains(errOut, "did you mean doctor?") {
		t.Fatalf("a mistyped verb: exit %d %s", code, errOut)
	}
}

// bareHome is a throwaway home with no host installed and no host command on PATH.
func bareHome(t *testing.T) ([]string, string) {
	env := home(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=/nonexistent"
		}
	}
	return env, envValue(env, "HOME")
}

// exitCase is one cell of the exit-status table: a verb in a situation.
type exitCase struct {
	verb, situation string
	bare            bool                                          // a home with no host (else hostsHome)
	prep            func(t *testing.T, env []string, home string) // what was there before
	args            []string                                      // after "integrations"
	terminal        string                                        // typed at a terminal; "" runs without one
	want            int
	unchanged       bool   // HOME must be byte-identical afterwards
	says            string // the output (stdout and stderr) holds this
}

func setupCursor(t *testing.T, env []string, _ string) {
	t.Helper()
	if out, errOut, code := runCLI(t, env, "integrations", "setup", "cursor", "--scopes", "read", "--yes", "--binary", binary); code != 0 {
		t.Fatalf("setup cursor: exit %d\n%s%s", code, out, errOut)
	}
}

// setupThenLose registers cursor, then loses the entry by hand (the file as it was before).
func setupThenLose(t *testing.T, env []string, home string) {
	t.Helper()
	setupCursor(t, env, home)
	os.WriteFile(filepath.Join(home, ".cursor/mcp.json"), []byte(`{"mcpServers": {"other": {"command": "/bin/true"}}}`), 0o600)
}

// claudeHasPostern leaves an entry in Claude Code's file, with claude not on PATH.
func claudeHasPostern(t *testing.T, _ []string, home string) {
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"mcpServers": {"postern": {"type": "stdio", "command": "/bin/true", "args": []}}}`), 0o600)
}

// TestIntegrationsExitStatus (issue 12): every integrations verb × (done, nothing to do,
// refused, host missing, dry run, and a wrong command line) exits with the status the help
// and generated/docs/hosts.md document; a cell that cannot happen says why.
func TestIntegrationsExitStatus(t *testing.T) {
	situations := []string{"done", "nothing to do", "refused", "host missing", "dry run", "usage"}
	notApplicable := map[[2]string]string{
		{"list", "refused"}:        "list never asks",
		{"list", "dry run"}:        "list changes nothing",
		{"detect", "refused"}:      "detect never asks",
		{"detect", "dry run"}:      "detect changes nothing",
		{"detect", "host missing"}: "a missing host is one detect leaves out: see its nothing to do",
		{"plan", "refused"}:        "plan never asks",
		{"plan", "dry run"}:        "plan is itself a dry run",
		{"doctor", "refused"}:      "doctor never asks",
		{"doctor", "dry run"}:      "doctor changes nothing",
	}
	cases := []exitCase{
		{verb: "list", situation: "done", prep: setupCursor, args: []string{"list"}, want: 0, says: "read"},
		{verb: "list", situation: "nothing to do", bare: true, args: []string{"list"}, want: 0, unchanged: true},
		{verb: "list", situation: "host missing", bare: true, args: []string{"list", "--json"}, want: 0, says: `"found": false`},
		{verb: "list", situation: "usage", args: []string{"list", "cursor"}, want: 2, says: "takes no arguments"},
		{verb: "list", situation: "usage", args: []string{"list", "--jsno"}, want: 2, says: "did you mean --json?"},

		{verb: "detect", situation: "done", args: []string{"detect"}, want: 0, says: "cursor"},
		{verb: "detect", situation: "nothing to do", bare: true, args: []string{"detect"}, want: 0, says: "No host found"},
		{verb: "detect", situation: "usage", args: []string{"detect", "--yes"}, want: 2, says: "unknown flag --yes"},

		{verb: "plan", situation: "done", args: []string{"plan", "cursor", "--preset", "reader", "--binary", binary}, want: 0, unchanged: true, says: "What the agent will see"},
		{verb: "plan", situation: "nothing to do", prep: setupCursor, args: []string{"plan", "cursor", "--scopes", "read", "--binary", binary}, want: 0, says: "already registered and current"},
		{verb: "plan", situation: "host missing", args: []string{"plan", "claude-code", "--binary", binary}, want: 0, unchanged: true, says: "claude mcp add"},
		{verb: "plan", situation: "usage", args: []string{"plan"}, want: 2, says: "takes one host"},
		{verb: "plan", situation: "usage", args: []string{"plan", "nosuchhost"}, want: 2, says: "there is no host"},

		{verb: "setup", situation: "done", args: []string{"setup", "cursor", "--scopes", "read", "--yes", "--binary", binary}, want: 0, says: "wrote "},
		{verb: "setup", situation: "done", args: []string{"setup", "json", "--preset", "reader", "--binary", binary}, want: 0, unchanged: true, says: `"mcpServers"`},
		{verb: "setup", situation: "nothing to do", prep: setupCursor, args: []string{"setup", "cursor", "--scopes", "read", "--yes", "--binary", binary}, want: 0, unchanged: true, says: "already registered and current"},
		{verb: "setup", situation: "refused", args: []string{"setup", "cursor", "--scopes", "read", "--binary", binary}, terminal: "n\n", want: 1, unchanged: true, says: "Nothing was changed."},
		{verb: "setup", situation: "refused", args: []string{"setup", "cursor", "--scopes", "read", "--binary", binary}, want: 1, unchanged: true, says: "without a yes"},
		{verb: "setup", situation: "host missing", args: []string{"setup", "claude-code", "--scopes", "read", "--yes", "--binary", binary}, want: 1, unchanged: true, says: "claude is not on PATH, so nothing was registered"},
		{verb: "setup", situation: "dry run", args: []string{"setup", "cursor", "--dry-run", "--binary", binary}, want: 0, unchanged: true, says: "write "},
		{verb: "setup", situation: "usage", args: []string{"setup"}, want: 2, says: "needs a host"},
		{verb: "setup", situation: "usage", args: []string{"setup", "cursor", "--preset", "nosuch"}, want: 2, says: "there is no preset"},

		{verb: "doctor", situation: "done", prep: setupCursor, args: []string{"doctor", "cursor"}, want: 0, says: "handshake"},
		{verb: "doctor", situation: "nothing to do", bare: true, args: []string{"doctor"}, want: 0, unchanged: true, says: "not installed"},
		{verb: "doctor", situation: "host missing", bare: true, args: []string{"doctor", "windsurf"}, want: 1, says: "install Windsurf"},
		{verb: "doctor", situation: "usage", args: []string{"doctor", "nosuchhost"}, want: 2, says: "there is no host"},
		{verb: "doctor", situation: "usage", args: []string{"doctor", "cursor", "--account", "work"}, want: 2, says: "takes no --account"},

		{verb: "repair", situation: "done", prep: setupThenLose, args: []string{"repair", "cursor", "--yes"}, want: 0, says: "wrote "},
		{verb: "repair", situation: "nothing to do", prep: setupCursor, args: []string{"repair", "cursor", "--yes"}, want: 0, unchanged: true, says: "already registered and current"},
		{verb: "repair", situation: "refused", prep: setupThenLose, args: []string{"repair", "cursor"}, terminal: "no\n", want: 1, unchanged: true, says: "Nothing was changed."},
		{verb: "repair", situation: "host missing", args: []string{"repair", "claude-code", "--yes", "--binary", binary}, want: 1, unchanged: true, says: "claude is not on PATH"},
		{verb: "repair", situation: "dry run", prep: setupThenLose, args: []string{"repair", "cursor", "--dry-run"}, want: 0, unchanged: true, says: "write "},
		{verb: "repair", situation: "usage", args: []string{"repair", "cursor", "codex"}, want: 2, says: "takes one host"},
		{verb: "repair", situation: "usage", args: []string{"repair", "cursor", "--scopes", "read"}, want: 2, says: "takes no --scopes"},

		{verb: "remove", situation: "done", prep: setupCursor, args: []string{"remove", "cursor", "--yes"}, want: 0, says: "wrote "},
		{verb: "remove", situation: "nothing to do", args: []string{"remove", "cursor", "--yes"}, want: 0, unchanged: true, says: "nothing to remove"},
		{verb: "remove", situation: "refused", prep: setupCursor, args: []string{"remove", "cursor"}, terminal: "\n", want: 1, unchanged: true, says: "Nothing was changed."},
		{verb: "remove", situation: "host missing", prep: claudeHasPostern, args: []string{"remove", "claude-code", "--yes"}, want: 1, unchanged: true, says: "claude mcp remove"},
		{verb: "remove", situation: "dry run", prep: setupCursor, args: []string{"remove", "cursor", "--dry-run"}, want: 0, unchanged: true, says: "write "},
		{verb: "remove", situation: "usage", args: []string{"remove", "--scope", "team", "cursor"}, want: 2, says: "--scope is user or project"},
	}
	covered := map[[2]string]bool{}
	for _, c := range cases {
		covered[[2]string{c.verb, c.situation}] = true
	}
	for _, v := range newIntegrationsCmd(nil, io.Discard, io.Discard).Commands() {
		for _, s := range situations {
			k := [2]string{v.Name(), s}
			if !covered[k] && notApplicable[k] == "" {
				t.Errorf("no case for %s × %s: add one, or say why it cannot happen", v.Name(), s)
			}
			if covered[k] && notApplicable[k] != "" {
				t.Errorf("%s × %s has a case and is said not to apply", v.Name(), s)
			}
		}
	}
	for _, c := range cases {
		t.Run(c.verb+"/"+c.situation, func(t *testing.T) {
			env, homeDir := hostsHome(t)
			if c.bare {
				env, homeDir = bareHome(t)
			}
			if c.prep != nil {
				c.prep(t, env, homeDir)
			}
			before := treeSum(t, homeDir)
			args := append([]string{"integrations"}, c.args...)
			var out, errOut string
			var code int
			if c.terminal != "" {
				out, errOut, code = runTerminal(t, env, c.terminal, args...)
			} else {
				out, errOut, code = runCLI(t, env, args...)
			}
			if code != c.want {
				t.Fatalf("%v: exit %d, want %d\n%s%s", c.args, code, c.want, out, errOut)
			}
			if !strings.Contains(out+errOut, c.says) {
				t.Errorf("%v does not say %q:\n%s%s", c.args, c.says, out, errOut)
			}
			if c.unchanged && treeSum(t, homeDir) != before {
				t.Errorf("%v changed HOME", c.args)
			}
			if c.situation == "done" && !c.unchanged && treeSum(t, homeDir) == before && c.verb != "list" && c.verb != "detect" && c.verb != "doctor" {
				t.Errorf("%v exited 0 for done, yet changed nothing", c.args)
			}
			if c.want == 2 && strings.Count(errOut, "\n") != 1 {
				t.Errorf("a wrong command line is said in one line, got:\n%s", errOut)
			}
		})
	}
}

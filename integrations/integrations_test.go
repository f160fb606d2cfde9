package integrations

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/hosts")

// postern is the real binary, built once: doctor starts it for the handshake.
var postern string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "postern-integrations-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	postern = filepath.Join(dir, "postern")
	build := exec.Command("go", "build", "-o", postern, "../cmd/postern")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building postern:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testEnv is a throwaway home where no host command is on PATH.
func testEnv(t *testing.T) *Env {
	t.Helper()
	home := t.TempDir()
	return &Env{
		Home: home, GOOS: "linux", Project: filepath.Join(home, "project"),
		Getenv:   func(string) string { return "" },
		LookPath: func(name string) (string, error) { return "", exec.ErrNotFound },
	}
}

func testOptions(e *Env, binary string) *Options {
	return &Options{Name: DefaultName, Scope: "user", Config: filepath.Join(e.Home, ".config/postern/config.toml"), Binary: binary}
}

func mustHost(t *testing.T, id string) *Host {
	t.Helper()
	h, err := Find(id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// install puts a file into the host's configuration path.
func install(t *testing.T, h *Host, e *Env, src string) string {
	t.Helper()
	path, err := h.ConfigPath(e, "user")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
	return path
}

func apply(t *testing.T, p *Plan, state string) {
	t.Helper()
	if err := Apply(context.Background(), p, state, io.Discard); err != nil {
		t.Fatal(err)
	}
}

var fileHosts = []string{"opencode", "claude-desktop", "cursor", "vscode", "windsurf"}

// TestFileHostsGolden: setup on a file holding other servers, unknown keys
// (and comments and trailing commas where the host reads JSONC) adds exactly
// postern's entry; a second setup is "already current" and changes no byte;
// the original is kept once as .bak; remove gives back the original bytes.
func TestFileHostsGolden(t *testing.T) {
	for _, id := range fileHosts {
		t.Run(id, func(t *testing.T) {
			h, e := mustHost(t, id), testEnv(t)
			o := testOptions(e, "/opt/postern/bin/postern")
			o.Scopes = "read,read:bodies"
			o.Accounts = []string{"work"}
			o.Config = "/home/me/.config/postern/config.toml" // the same in every run, for the golden files
			before := filepath.Join("testdata/hosts", id+".before")
			orig, _ := os.ReadFile(before)
			path := install(t, h, e, before)
			state := filepath.Join(e.Home, "state.json")

			p, err := PlanSetup(h, e, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Current || len(p.Steps) != 1 || p.Steps[0].Write != path {
				t.Fatalf("plan: %+v", p)
			}
			apply(t, p, state)
			got, _ := os.ReadFile(path)
			golden := strings.Replace(before, ".before", ".after", 1)
			if *update {
				os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v; run go test ./integrations -update", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("after setup:\n%s\nwant (%s):\n%s", got, golden, want)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the file's own 0640", st.Mode().Perm())
			}
			if bak, _ := os.ReadFile(path + ".bak"); !bytes.Equal(bak, orig) {
				t.Errorf(".bak does not hold the original")
			}
			cur, _, ok, known, err := h.Registered(e, "user", DefaultName)
			if err != nil || !ok || !known || !cur.Equal(o.Want()) {
				t.Fatalf("registered entry %v ok=%v known=%v err=%v, want %v", cur, ok, known, err, o.Want())
			}

			p, err = PlanSetup(h, e, o)
			if err != nil || !p.Current || !strings.Contains(p.Note, "already registered and current") {
				t.Fatalf("second setup: %+v, %v", p, err)
			}
			apply(t, p, state)
			if again, _ := os.ReadFile(path); !bytes.Equal(again, got) {
				t.Fatal("a second setup changed the file")
			}

			p, err = PlanRemove(h, e, o)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, p, state)
			if after, _ := os.ReadFile(path); !bytes.Equal(after, orig) {
				t.Fatalf("after remove:\n%s\nwant the original:\n%s", after, orig)
			}
			if bak, _ := os.ReadFile(path + ".bak"); !bytes.Equal(bak, orig) {
				t.Errorf("remove replaced the .bak of the original")
			}
			if p, _ := PlanRemove(h, e, o); !p.Current {
				t.Errorf("a second remove found something to do: %+v", p)
			}
		})
	}
}

// TestFileHostsNewFile: setup on a host whose file does not exist yet makes
// it with only postern's entry, private (0600) in a private folder.
func TestFileHostsNewFile(t *testing.T) {
	for _, id := range fileHosts {
		t.Run(id, func(t *testing.T) {
			h, e := mustHost(t, id), testEnv(t)
			o := testOptions(e, "/usr/local/bin/postern")
			p, err := PlanSetup(h, e, o)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, p, filepath.Join(e.Home, "state.json"))
			cur, _, ok, _, err := h.Registered(e, "user", DefaultName)
			if err != nil || !ok || !cur.Equal(o.Want()) {
				t.Fatalf("entry %v ok=%v err=%v", cur, ok, err)
			}
			if st, _ := os.Stat(p.Path); st.Mode().Perm() != 0o600 {
				t.Errorf("new file mode %v, want 0600", st.Mode().Perm())
			}
			if _, err := os.Stat(p.Path + ".bak"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a .bak was made of a file that did not exist")
			}
		})
	}
}

// TestMalformedFileRefused: a file that cannot be parsed is refused with a
// sentence saying where, and left byte-identical, with no .bak.
func TestMalformedFileRefused(t *testing.T) {
	for _, id := range fileHosts {
		t.Run(id, func(t *testing.T) {
			h, e := mustHost(t, id), testEnv(t)
			src := filepath.Join("testdata/hosts", id+".broken")
			orig, _ := os.ReadFile(src)
			path := install(t, h, e, src)
			_, err := PlanSetup(h, e, testOptions(e, "/usr/local/bin/postern"))
			if err == nil || !strings.Contains(err.Error(), "line ") || !strings.Contains(err.Error(), path) {
				t.Fatalf("setup on a broken file: %v", err)
			}
			_, err = PlanRemove(h, e, testOptions(e, "/usr/local/bin/postern"))
			if err == nil || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("remove on a broken file: %v", err)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
				t.Fatal("the broken file was changed")
			}
			if _, err := os.Stat(path + ".bak"); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a .bak was written for a refused file")
			}
		})
	}
}

// TestCLIHostPlans: a cli host whose command is not on PATH gets the exact
// commands printed (remove first when an entry is already there, so that a
// re-run replaces it), with {args} one word each.
func TestCLIHostPlans(t *testing.T) {
	h, e := mustHost(t, "claude-code"), testEnv(t)
	o := testOptions(e, "/opt/post ern/postern")
	o.Scopes = "read"
	p, err := PlanSetup(h, e, o)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Manual || len(p.Steps) != 1 {
		t.Fatalf("plan %+v", p)
	}
	want := []string{"claude", "mcp", "add", "--scope", "user", "postern", "--", "/opt/post ern/postern", "mcp", "--config", o.Config, "--scopes", "read"}
	if fmt.Sprint(p.Steps[0].Run) != fmt.Sprint(want) {
		t.Fatalf("add command %q\nwant %q", p.Steps[0].Run, want)
	}
	var out bytes.Buffer
	p.Describe(&out)
	if !strings.Contains(out.String(), "'/opt/post ern/postern'") || !strings.Contains(out.String(), "not on PATH") {
		t.Fatalf("described as:\n%s", out.String())
	}
	// With an entry in ~/.claude.json, setup removes it first.
	os.WriteFile(filepath.Join(e.Home, ".claude.json"), []byte(`{"mcpServers":{"postern":{"type":"stdio","command":"/old/postern","args":["mcp"]}},"projects":{}}`), 0o600)
	p, _ = PlanSetup(h, e, o)
	if len(p.Steps) != 2 || p.Steps[0].Run[2] != "remove" {
		t.Fatalf("plan over an old entry: %+v", p.Steps)
	}
	// The same entry: already current.
	os.WriteFile(filepath.Join(e.Home, ".claude.json"), []byte(`{"mcpServers":{"postern":{"type":"stdio","command":"/opt/post ern/postern","args":["mcp","--config","`+o.Config+`","--scopes","read"]}}}`), 0o600)
	if p, _ = PlanSetup(h, e, o); !p.Current {
		t.Fatalf("plan over the same entry: %+v", p)
	}
}

// TestCodexEntryRead: doctor reads Codex's TOML.
func TestCodexEntryRead(t *testing.T) {
	h, e := mustHost(t, "codex"), testEnv(t)
	os.MkdirAll(filepath.Join(e.Home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(e.Home, ".codex/config.toml"), []byte("model = \"x\"\n\n[mcp_servers.postern]\ncommand = \"/usr/bin/postern\"\nargs = [\"mcp\", \"--scopes\", \"read\"]\n"), 0o600)
	cur, _, ok, known, err := h.Registered(e, "user", "postern")
	if err != nil || !ok || !known || cur.Command != "/usr/bin/postern" || strings.Join(cur.Args, " ") != "mcp --scopes read" {
		t.Fatalf("read %v ok=%v known=%v err=%v", cur, ok, known, err)
	}
}

// TestSnippet: the json host prints an mcpServers block and touches nothing.
func TestSnippet(t *testing.T) {
	h, e := mustHost(t, "json"), testEnv(t)
	p, err := PlanSetup(h, e, testOptions(e, "/usr/local/bin/postern"))
	if err != nil || len(p.Steps) != 1 || !strings.Contains(p.Steps[0].Print, `"mcpServers"`) || !strings.Contains(p.Steps[0].Print, `"/usr/local/bin/postern"`) {
		t.Fatalf("%+v %v", p, err)
	}
}

// TestStableBinary: a versioned Homebrew path becomes its opt link; a link on
// PATH to the running file is preferred; a go-build temporary is refused.
func TestStableBinary(t *testing.T) {
	root := t.TempDir()
	cellar := filepath.Join(root, "Cellar/postern/1.2.3/bin/postern")
	os.MkdirAll(filepath.Dir(cellar), 0o755)
	os.WriteFile(cellar, []byte("#!/bin/sh\n"), 0o755)
	opt := filepath.Join(root, "opt/postern")
	os.MkdirAll(filepath.Dir(opt), 0o755)
	os.Symlink(filepath.Join(root, "Cellar/postern/1.2.3"), opt)
	got, err := stableBinary(cellar, func(string) (string, error) { return "", exec.ErrNotFound })
	if err != nil || got != filepath.Join(opt, "bin/postern") {
		t.Fatalf("from the Cellar: %q %v, want the opt link", got, err)
	}
	link := filepath.Join(root, "bin/postern")
	os.MkdirAll(filepath.Dir(link), 0o755)
	os.Symlink(cellar, link)
	got, err = stableBinary(cellar, func(string) (string, error) { return link, nil })
	if err != nil || got != link {
		t.Fatalf("with a link on PATH: %q %v", got, err)
	}
	tmp := filepath.Join(os.TempDir(), "go-build1234", "b001", "exe", "postern")
	if _, err := stableBinary(tmp, nil); err == nil || !strings.Contains(err.Error(), "go install") {
		t.Fatalf("a go-build binary: %v", err)
	}
}

// TestDoctorFindsAndRepairs: each problem doctor must see is seen, with a
// fix, and repairing (setup again) makes doctor pass.
func TestDoctorFindsAndRepairs(t *testing.T) {
	fix := func(id string) string { return "postern integrations repair " + id }
	copyBin := func(t *testing.T, dst string) {
		b, err := os.ReadFile(postern)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	failing := func(name string, r Report) string {
		var out []string
		for _, c := range r.Checks {
			if !c.OK {
				out = append(out, c.Check)
			}
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, e *Env, o *Options) *Options // returns the options doctor and repair use
		fails string
	}{
		{"entry missing", func(t *testing.T, e *Env, o *Options) *Options { return o }, "registered"},
		{"binary moved", func(t *testing.T, e *Env, o *Options) *Options {
			register(t, e, o)
			moved := *o
			moved.Binary = filepath.Join(e.Home, "moved/postern")
			os.MkdirAll(filepath.Dir(moved.Binary), 0o755)
			if err := os.Rename(o.Binary, moved.Binary); err != nil {
				t.Fatal(err)
			}
			return &moved
		}, "current,binary"},
		{"binary missing", func(t *testing.T, e *Env, o *Options) *Options {
			stale := *o
			stale.Binary = filepath.Join(e.Home, "gone/postern")
			register(t, e, &stale)
			return o
		}, "current,binary"},
		{"scopes differ", func(t *testing.T, e *Env, o *Options) *Options {
			register(t, e, o)
			wider := *o
			wider.Scopes = "read,read:bodies"
			return &wider
		}, "current"},
		{"handshake fails", func(t *testing.T, e *Env, o *Options) *Options {
			broken := *o
			broken.Binary = filepath.Join(e.Home, "broken/postern")
			os.MkdirAll(filepath.Dir(broken.Binary), 0o755)
			os.WriteFile(broken.Binary, []byte("#!/bin/sh\necho 'this is not MCP'\nexit 3\n"), 0o755)
			register(t, e, &broken)
			return &broken
		}, "handshake"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := testEnv(t)
			os.MkdirAll(filepath.Join(e.Home, ".cursor"), 0o755)
			o := testOptions(e, filepath.Join(e.Home, "bin/postern"))
			copyBin(t, o.Binary)
			use := c.setup(t, e, o)
			h := mustHost(t, "cursor")
			rec := NewRecord(h, use, "", "", time.Now())
			r := Doctor(context.Background(), h, e, use, &rec, true, fix)
			if r.OK || failing(c.name, r) != c.fails || r.Fix != "postern integrations repair cursor" {
				t.Fatalf("doctor: ok=%v failing=%q fix=%q, want failing %q\n%+v", r.OK, failing(c.name, r), r.Fix, c.fails, r.Checks)
			}
			if c.name == "handshake fails" {
				// Repair with a working binary.
				use.Binary = o.Binary
				if _, err := os.Stat(o.Binary); err != nil {
					copyBin(t, o.Binary)
				}
			}
			register(t, e, use)
			rec = NewRecord(h, use, "", "", time.Now())
			if r := Doctor(context.Background(), h, e, use, &rec, true, fix); !r.OK {
				t.Fatalf("after repair, doctor still fails: %+v", r.Checks)
			}
		})
	}
}

// register runs setup for cursor with o.
func register(t *testing.T, e *Env, o *Options) {
	t.Helper()
	p, err := PlanSetup(mustHost(t, "cursor"), e, o)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, filepath.Join(e.Home, "state.json"))
}

// TestDoctorSkipsWhatIsNotInstalled: doctor over every host passes on a
// machine with none installed (they are skipped), and fails for a host asked
// for by name that is not there.
func TestDoctorSkipsWhatIsNotInstalled(t *testing.T) {
	e := testEnv(t)
	o := testOptions(e, postern)
	fix := func(id string) string { return "postern integrations repair " + id }
	for _, h := range Hosts() {
		r := Doctor(context.Background(), h, e, o, nil, false, fix)
		if !r.OK {
			t.Errorf("%s: %+v", h.ID, r)
		}
	}
	if r := Doctor(context.Background(), mustHost(t, "windsurf"), e, o, nil, true, fix); r.OK || !strings.Contains(r.Fix, "install Windsurf") {
		t.Errorf("windsurf asked for by name: %+v", r)
	}
}

// TestConfigPaths: each host's file per OS, ~ and the Windows folders
// expanded, project files under the project folder, and opencode's .jsonc
// taken when only it is there.
func TestConfigPaths(t *testing.T) {
	e := testEnv(t)
	e.Getenv = func(k string) string {
		return map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`, "USERPROFILE": `C:\Users\me`}[k]
	}
	cases := []struct{ host, goos, scope, want string }{
		{"claude-desktop", "darwin", "user", filepath.Join(e.Home, "Library/Application Support/Claude/claude_desktop_config.json")},
		{"claude-desktop", "linux", "user", filepath.Join(e.Home, ".config/Claude/claude_desktop_config.json")},
		{"vscode", "windows", "user", filepath.FromSlash("C:/Users/me/AppData/Roaming/Code/User/mcp.json")},
		{"cursor", "windows", "user", filepath.FromSlash("C:/Users/me/.cursor/mcp.json")},
		{"cursor", "linux", "project", filepath.Join(e.Project, ".cursor/mcp.json")},
		{"vscode", "linux", "project", filepath.Join(e.Project, ".vscode/mcp.json")},
	}
	for _, c := range cases {
		e.GOOS = c.goos
		got, err := mustHost(t, c.host).ConfigPath(e, c.scope)
		if err != nil || got != c.want {
			t.Errorf("%s on %s (%s): %q %v, want %q", c.host, c.goos, c.scope, got, err, c.want)
		}
	}
	e.GOOS = "linux"
	if _, err := mustHost(t, "windsurf").ConfigPath(e, "project"); err == nil {
		t.Error("windsurf has no project file, yet a path was given")
	}
	dir := filepath.Join(e.Home, ".config/opencode")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "opencode.jsonc"), []byte("{}\n"), 0o644)
	if got, _ := mustHost(t, "opencode").ConfigPath(e, "user"); got != filepath.Join(dir, "opencode.jsonc") {
		t.Errorf("opencode with only a .jsonc: %s", got)
	}
}

// TestProjectScope: --scope project writes the project's file, and a host
// without a project scope refuses it by name.
func TestProjectScope(t *testing.T) {
	e := testEnv(t)
	o := testOptions(e, "/usr/local/bin/postern")
	o.Scope = "project"
	p, err := PlanSetup(mustHost(t, "cursor"), e, o)
	if err != nil || p.Path != filepath.Join(e.Project, ".cursor/mcp.json") {
		t.Fatalf("%+v %v", p, err)
	}
	apply(t, p, filepath.Join(e.Home, "state.json"))
	if _, err := os.Stat(filepath.Join(e.Home, ".cursor/mcp.json")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a project setup wrote the user's file")
	}
	if _, err := PlanSetup(mustHost(t, "windsurf"), e, o); err == nil || !strings.Contains(err.Error(), "--scope user") {
		t.Errorf("windsurf with --scope project: %v", err)
	}
}

// TestRecords: PutRecord adds or replaces one registration's record (host, scope, name, and
// project for scope project), leaves the file alone when nothing asked changed, and writes it
// 0600 with no temporary file left; DropRecord takes one out; a broken file is refused with
// the command that writes it anew.
func TestRecords(t *testing.T) {
	e := testEnv(t)
	path := RecordPath(filepath.Join(e.Home, "postern/config.toml"))
	cursor, codex := mustHost(t, "cursor"), mustHost(t, "codex")
	o := testOptions(e, "/usr/local/bin/postern")
	o.Scopes = "read,read:bodies"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := PutRecord(path, NewRecord(codex, o, "", "", at)); err != nil {
		t.Fatal(err)
	}
	if err := PutRecord(path, NewRecord(cursor, o, "", "", at)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := PutRecord(path, NewRecord(cursor, o, "", "", at.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("a record asking for the same rewrote the file")
	}
	wider := *o
	wider.Scopes, wider.Accounts = "read,read:headers,read:bodies", []string{"work"}
	if err := PutRecord(path, NewRecord(cursor, &wider, "reader", "", at)); err != nil {
		t.Fatal(err)
	}
	proj := *o
	proj.Scope = "project"
	if err := PutRecord(path, NewRecord(cursor, &proj, "", e.Project, at)); err != nil {
		t.Fatal(err)
	}
	rs, err := LoadRecords(path)
	if err != nil || len(rs) != 3 {
		t.Fatalf("records %+v, %v; want codex, cursor (user) and cursor (project)", rs, err)
	}
	// In catalog order of hosts (codex before cursor), then project before user.
	if rs[0].Host != "codex" || rs[1].Project != e.Project || rs[2].Preset != "reader" || rs[2].Options().Scopes != wider.Scopes {
		t.Fatalf("records %+v", rs)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".integrations-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := DropRecord(path, "cursor", "user", DefaultName, ""); err != nil {
		t.Fatal(err)
	}
	if rs, _ := LoadRecords(path); len(rs) != 2 || rs[1].Scope != "project" {
		t.Fatalf("after DropRecord: %+v", rs)
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := LoadRecords(path); err == nil || !strings.Contains(err.Error(), "setup HOST again") {
		t.Fatalf("a broken record file: %v", err)
	}
}

// TestOptionsFromEntry: an entry's own flags, in any order, are read back as the options that
// would write it.
func TestOptionsFromEntry(t *testing.T) {
	base := &Options{Name: DefaultName, Scope: "user", Binary: "/bin/postern", Config: "/default.toml"}
	got := OptionsFromEntry(Entry{Command: "/bin/postern", Args: []string{"mcp", "--account", "a", "--scopes", "read", "--config", "/c.toml", "--account", "b"}}, base)
	if got.Scopes != "read" || strings.Join(got.Accounts, ",") != "a,b" || got.Config != "/c.toml" || got.Name != DefaultName || base.Config != "/default.toml" {
		t.Fatalf("%+v", got)
	}
	if w := got.Want(); strings.Join(w.Args, " ") != "mcp --config /c.toml --scopes read --account a --account b" {
		t.Fatalf("want %v", w.Args)
	}
}

// urlHosts are the file hosts with a URL entry, from the catalog.
func urlHosts() []string {
	var out []string
	for _, h := range Hosts() {
		if h.Kind == "file" && h.HTTP != nil {
			out = append(out, h.ID)
		}
	}
	return out
}

// TestFileHostsHTTP: for each file host with a URL entry, setup --http on a file holding other
// servers writes exactly the URL entry (golden ID.http.after), the file's mode kept; doctor
// passes; a hand edit of the URL and a new token each fail doctor with repair as the fix;
// repair (setup again) passes; remove gives back the original bytes; the token is in no line
// Describe shows.
func TestFileHostsHTTP(t *testing.T) {
	const token = "tok-0123456789abcdefghijklmnopqrstuvwxyzABCDEF"
	fix := func(id string) string { return "postern integrations repair " + id }
	for _, id := range urlHosts() {
		t.Run(id, func(t *testing.T) {
			h, e := mustHost(t, id), testEnv(t)
			o := testOptions(e, "/opt/postern/bin/postern")
			o.Config = "/home/me/.config/postern/config.toml"
			o.HTTP, o.Token, o.TokenFile = "http://127.0.0.1:1/mcp", token, "/home/me/.config/postern/http-token"
			before := filepath.Join("testdata/hosts", id+".before")
			orig, _ := os.ReadFile(before)
			path := install(t, h, e, before)
			state := filepath.Join(e.Home, "state.json")

			p, err := PlanSetup(h, e, o)
			if err != nil {
				t.Fatal(err)
			}
			var shown bytes.Buffer
			p.Describe(&shown)
			if strings.Contains(shown.String(), token) || !strings.Contains(shown.String(), "Bearer "+Mask) {
				t.Fatalf("the plan shows:\n%s", shown.String())
			}
			apply(t, p, state)
			got, _ := os.ReadFile(path)
			golden := filepath.Join("testdata/hosts", id+".http.after")
			if *update {
				os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v; run go test ./integrations -update", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("after setup --http:\n%s\nwant (%s):\n%s", got, golden, want)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the file's own 0640", st.Mode().Perm())
			}
			cur, _, ok, _, err := h.Registered(e, "user", DefaultName)
			if err != nil || !ok || !cur.Equal(o.Want()) {
				t.Fatalf("registered %+v ok=%v err=%v, want %+v", cur, ok, err, o.Want())
			}
			rec := NewRecord(h, o, "", "", time.Now())
			if r := Doctor(context.Background(), h, e, o, &rec, true, fix); !r.OK {
				t.Fatalf("doctor after setup: %+v", r.Checks)
			}
			if p, _ := PlanSetup(h, e, o); !p.Current {
				t.Fatalf("a second setup --http: %+v", p)
			}

			// A new token (the file replaced): doctor says so, and repair puts it in.
			newer := *o
			newer.Token = "new-" + token
			r := Doctor(context.Background(), h, e, &newer, &rec, true, fix)
			if r.OK || r.Fix != fix(id) || !strings.Contains(fmt.Sprint(r.Checks), "the token changed") {
				t.Fatalf("doctor after a new token: %+v", r)
			}
			for _, c := range r.Checks {
				if strings.Contains(c.Detail, "new-"+token) || strings.Contains(c.Detail, token) {
					t.Fatalf("doctor shows the token: %s", c.Detail)
				}
			}
			apply(t, mustPlan(t, h, e, &newer), state)
			if r := Doctor(context.Background(), h, e, &newer, &rec, true, fix); !r.OK {
				t.Fatalf("doctor after repair: %+v", r.Checks)
			}

			// A hand edit of the URL.
			b, _ := os.ReadFile(path)
			os.WriteFile(path, bytes.Replace(b, []byte("127.0.0.1:1/mcp"), []byte("127.0.0.1:2/mcp"), 1), 0o640)
			if r := Doctor(context.Background(), h, e, &newer, &rec, true, fix); r.OK || r.Fix != fix(id) || !strings.Contains(fmt.Sprint(r.Checks), "instead of http://127.0.0.1:1/mcp") {
				t.Fatalf("doctor after a hand edit: %+v", r)
			}
			apply(t, mustPlan(t, h, e, &newer), state)
			if r := Doctor(context.Background(), h, e, &newer, &rec, true, fix); !r.OK {
				t.Fatalf("doctor after repair: %+v", r.Checks)
			}

			p, err = PlanRemove(h, e, &newer)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, p, state)
			if after, _ := os.ReadFile(path); !bytes.Equal(after, orig) {
				t.Fatalf("after remove:\n%s\nwant the original:\n%s", after, orig)
			}
		})
	}
}

func mustPlan(t *testing.T, h *Host, e *Env, o *Options) *Plan {
	t.Helper()
	p, err := PlanSetup(h, e, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHTTPRefusals: a host with no URL entry is refused in one sentence naming those that take
// one; a URL beyond this machine (or not the server's) is refused.
func TestHTTPRefusals(t *testing.T) {
	var takers []string
	for _, h := range Hosts() {
		if h.HTTP != nil {
			takers = append(takers, h.ID)
		}
	}
	for _, h := range Hosts() {
		if h.HTTP != nil {
			continue
		}
		e := testEnv(t)
		o := testOptions(e, "/usr/local/bin/postern")
		o.HTTP, o.Token = "http://127.0.0.1:8765/mcp", "x"
		_, err := PlanSetup(h, e, o)
		if err == nil || strings.Count(err.Error(), ". ") > 0 || !strings.Contains(err.Error(), strings.Join(takers, ", ")) || !strings.HasPrefix(err.Error(), h.Name+" takes no --http URL") {
			t.Errorf("%s with --http: %v", h.ID, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8765/mcp", "https://localhost:8443/mcp", "http://[::1]:8765/mcp"} {
		if err := CheckURL(u); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	for _, u := range []string{"http://example.com:8765/mcp", "http://10.0.0.2:8765/mcp", "ftp://127.0.0.1:21/mcp", "http://127.0.0.1/mcp", "http://127.0.0.1:8765", "http://me:pw@127.0.0.1:8765/mcp", "127.0.0.1:8765"} {
		if err := CheckURL(u); err == nil {
			t.Errorf("%s taken", u)
		}
	}
}

// TestCLIHostHTTPPlan: a cli host's URL command passes the header as one word, and is shown
// with $(cat TOKEN-FILE) in the token's place, never the token.
func TestCLIHostHTTPPlan(t *testing.T) {
	h, e := mustHost(t, "claude-code"), testEnv(t)
	o := testOptions(e, "/usr/local/bin/postern")
	o.HTTP, o.Token, o.TokenFile = "http://127.0.0.1:8765/mcp", "sekrit-token-value-0123456789", "/home/me/.config/postern/http-token"
	p, err := PlanSetup(h, e, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "mcp", "add", "--scope", "user", "--transport", "http", "postern", o.HTTP, "--header", "Authorization: Bearer " + o.Token}
	if fmt.Sprint(p.Steps[len(p.Steps)-1].Run) != fmt.Sprint(want) {
		t.Fatalf("add command %q\nwant %q", p.Steps[len(p.Steps)-1].Run, want)
	}
	var out bytes.Buffer
	p.Describe(&out)
	if strings.Contains(out.String(), o.Token) || !strings.Contains(out.String(), `"Authorization: Bearer $(cat /home/me/.config/postern/http-token)"`) {
		t.Fatalf("described as:\n%s", out.String())
	}
}

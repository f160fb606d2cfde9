package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
)

// hostCLIs is the folder of the pinned host CLIs (testdata/hosts after npm ci),
// from POSTERN_HOST_CLIS; without it the test skips and says why.
func hostCLIs(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("POSTERN_HOST_CLIS")
	if dir == "" {
		t.Skip("POSTERN_HOST_CLIS is not set: the host CLIs from npm are not installed (see cmd/postern/testdata/hosts/README.md; .ci/run installs them)")
	}
	for _, p := range []string{"node_modules/.bin/claude", "node_modules/.bin/codex", "node_modules/.bin/gemini", "node_modules/.bin/copilot", "node_modules/.bin/mcpb", "node_modules/opencode-linux-x64/bin/opencode"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("POSTERN_HOST_CLIS=%s has no %s; run npm ci there", dir, p)
		}
	}
	return dir
}

// hostWorld is a throwaway HOME with the host CLIs and this postern on PATH.
type hostWorld struct {
	t      *testing.T
	home   string
	env    []string
	config string // postern's configuration (absent: no accounts)
}

var copilotCache string // Copilot unpacks 235 MB on its first run: once per test binary

func newHostWorld(t *testing.T, clis string) *hostWorld {
	t.Helper()
	h := t.TempDir()
	if copilotCache == "" {
		copilotCache = filepath.Join(os.TempDir(), "postern-test-copilot-cache")
	}
	for _, d := range []string{".config", ".local/share", ".local/state", "tmp", "work"} {
		os.MkdirAll(filepath.Join(h, d), 0o755)
	}
	path := strings.Join([]string{
		filepath.Join(clis, "node_modules/.bin"), filepath.Join(clis, "node_modules/opencode-linux-x64/bin"),
		filepath.Dir(binary), "/usr/local/bin", "/usr/bin", "/bin",
	}, string(os.PathListSeparator))
	env := []string{
		"HOME=" + h, "PATH=" + path, "TMPDIR=" + filepath.Join(h, "tmp"), "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(h, ".config"), "XDG_DATA_HOME=" + filepath.Join(h, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(h, ".local/state"), "XDG_CACHE_HOME=" + copilotCache,
		// No telemetry, update checks or first-run prompts from the hosts.
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"NO_UPDATE_NOTIFIER=1", "RUST_BACKTRACE=0", "GEMINI_CLI_TRUST_WORKSPACE=true", "CI=1",
	}
	return &hostWorld{t: t, home: h, env: env, config: filepath.Join(h, ".config/postern/config.toml")}
}

// ansiCodes are the colour and cursor codes some hosts print even with NO_COLOR.
var ansiCodes = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]`)

// run runs a command in the world (working folder HOME/work) with a time
// limit, and returns its output (stdout and stderr, colours removed) and exit code.
func (w *hostWorld) run(name string, args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.lookPath(name), args...)
	cmd.Env = w.env
	cmd.Dir = filepath.Join(w.home, "work")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("%s %v did not finish within two minutes:\n%s", name, args, out.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s %v: %v", name, args, err)
	}
	return ansiCodes.ReplaceAllString(out.String(), ""), code
}

// lookPath finds name on the world's PATH (exec.Command would use the test's).
func (w *hostWorld) lookPath(name string) string {
	if strings.ContainsRune(name, filepath.Separator) {
		return name
	}
	for _, d := range filepath.SplitList(envValue(w.env, "PATH")) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return name
}

func (w *hostWorld) must(name string, args ...string) string {
	w.t.Helper()
	out, code := w.run(name, args...)
	if code != 0 {
		w.t.Fatalf("%s %v: exit %d\n%s", name, args, code, out)
	}
	return out
}

// postern runs this postern's integrations VERB HOST with the world's configuration, and
// --binary where the verb takes it.
func (w *hostWorld) postern(verb, host string, flags ...string) (string, int) {
	w.t.Helper()
	args := append([]string{"integrations", verb, host, "--config", w.config}, flags...)
	if verb != "remove" {
		args = append(args, "--binary", binary)
	}
	return w.run(binary, args...)
}

// hostCase is how one host is checked through its own command line.
type hostCase struct {
	id        string
	seedOther func(w *hostWorld)                // register another server the host's own way
	shows     func(w *hostWorld) (bool, string) // the host reports postern
	connected func(w *hostWorld) (bool, string) // the host started postern and it answered
	other     func(w *hostWorld) string         // how the host shows the other server
}

func lineWith(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, name) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

var hostCases = []hostCase{
	{
		id:        "claude-code",
		seedOther: func(w *hostWorld) { w.must("claude", "mcp", "add", "--scope", "user", "other", "--", "/bin/true", "x") },
		shows: func(w *hostWorld) (bool, string) {
			out, code := w.run("claude", "mcp", "get", "postern")
			return code == 0 && strings.Contains(out, binary), out
		},
		connected: func(w *hostWorld) (bool, string) {
			out, _ := w.run("claude", "mcp", "list")
			l := lineWith(out, "postern: ")
			return strings.Contains(l, "Connected") && !strings.Contains(l, "Failed"), out
		},
		other: func(w *hostWorld) string {
			b, _ := os.ReadFile(filepath.Join(w.home, ".claude.json"))
			return gjsonRaw(b, "mcpServers.other")
		},
	},
	{
		id:        "codex",
		seedOther: func(w *hostWorld) { w.must("codex", "mcp", "add", "other", "--", "/bin/true", "x") },
		shows: func(w *hostWorld) (bool, string) {
			out, code := w.run("codex", "mcp", "get", "postern")
			return code == 0 && strings.Contains(out, binary), out
		},
		connected: func(w *hostWorld) (bool, string) {
			out, _ := w.run("node", filepath.Join(mustAbs("testdata/hosts"), "codex-status.mjs"))
			return strings.HasPrefix(lineWith(out, "postern "), "postern connected"), out
		},
		other: func(w *hostWorld) string { out, _ := w.run("codex", "mcp", "get", "other", "--json"); return out },
	},
	{
		id:        "gemini-cli",
		seedOther: func(w *hostWorld) { w.must("gemini", "mcp", "add", "--scope", "user", "other", "/bin/true", "--", "x") },
		shows: func(w *hostWorld) (bool, string) {
			out, _ := w.run("gemini", "mcp", "list")
			return strings.Contains(lineWith(out, "postern: "), binary), out
		},
		connected: func(w *hostWorld) (bool, string) {
			out, _ := w.run("gemini", "mcp", "list")
			return strings.HasSuffix(lineWith(out, "postern: "), "Connected"), out
		},
		other: func(w *hostWorld) string {
			b, _ := os.ReadFile(filepath.Join(w.home, ".gemini/settings.json"))
			return gjsonRaw(b, "mcpServers.other")
		},
	},
	{
		id:        "copilot",
		seedOther: func(w *hostWorld) { w.must("copilot", "mcp", "add", "other", "--", "/bin/true", "x") },
		shows: func(w *hostWorld) (bool, string) {
			out, code := w.run("copilot", "mcp", "get", "postern")
			return code == 0 && strings.Contains(out, binary), out
		},
		other: func(w *hostWorld) string {
			b, _ := os.ReadFile(filepath.Join(w.home, ".copilot/mcp-config.json"))
			return gjsonRaw(b, "mcpServers.other")
		},
	},
	{
		id: "opencode",
		seedOther: func(w *hostWorld) {
			p := filepath.Join(w.home, ".config/opencode/opencode.json")
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("{\n  // mine\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\n    \"other\": {\"type\": \"local\", \"command\": [\"/bin/true\", \"x\"]},\n  },\n}\n"), 0o644)
		},
		shows: func(w *hostWorld) (bool, string) {
			out, _ := w.run("opencode", "mcp", "list")
			return strings.Contains(out, binary), out
		},
		connected: func(w *hostWorld) (bool, string) {
			out, _ := w.run("opencode", "mcp", "list")
			return lineWith(out, "postern connected") != "", out
		},
		other: func(w *hostWorld) string {
			b, _ := os.ReadFile(filepath.Join(w.home, ".config/opencode/opencode.json"))
			return lineWith(string(b), `"other"`)
		},
	},
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}

// TestHostCLIs: for each host driven through its own command line, after
// postern integrations setup the host's CLI shows postern and (where its
// check starts servers) reports it connected; doctor passes; after remove the
// host no longer lists it; the server registered before is still there, unchanged.
func TestHostCLIs(t *testing.T) {
	clis := hostCLIs(t)
	for _, c := range hostCases {
		t.Run(c.id, func(t *testing.T) {
			w := newHostWorld(t, clis)
			c.seedOther(w)
			otherBefore := c.other(w)
			if otherBefore == "" {
				t.Fatalf("the other server was not registered")
			}
			if out, code := w.postern("setup", c.id, "--scopes", "read", "--yes"); code != 0 {
				t.Fatalf("setup: exit %d\n%s", code, out)
			}
			if ok, out := c.shows(w); !ok {
				t.Fatalf("%s does not show postern after setup:\n%s", c.id, out)
			}
			if c.connected != nil {
				if ok, out := c.connected(w); !ok {
					t.Fatalf("%s does not report postern connected:\n%s", c.id, out)
				}
			}
			if out, code := w.postern("doctor", c.id); code != 0 {
				t.Fatalf("doctor after setup: exit %d\n%s", code, out)
			}
			if out, code := w.postern("setup", c.id, "--scopes", "read", "--yes"); code != 0 || !strings.Contains(out, "already registered and current") {
				t.Fatalf("a second setup: exit %d\n%s", code, out)
			}
			if out, code := w.postern("remove", c.id, "--yes"); code != 0 {
				t.Fatalf("remove: exit %d\n%s", code, out)
			}
			if ok, out := c.shows(w); ok {
				t.Fatalf("%s still shows postern after remove:\n%s", c.id, out)
			}
			if after := c.other(w); after != otherBefore {
				t.Fatalf("the other server changed:\nbefore %s\nafter  %s", otherBefore, after)
			}
		})
	}
}

// TestHostCLIsKeepGrant (issue 12): through the real Claude Code and Codex command lines,
// setup --scopes read,read:bodies then doctor passes; an edit by hand of the host's file that
// drops the scopes makes doctor fail, and repair puts them back (the host's own get shows them).
func TestHostCLIsKeepGrant(t *testing.T) {
	clis := hostCLIs(t)
	files := map[string]string{"claude-code": ".claude.json", "codex": ".codex/config.toml"}
	for _, c := range hostCases {
		file, ok := files[c.id]
		if !ok {
			continue
		}
		t.Run(c.id, func(t *testing.T) {
			w := newHostWorld(t, clis)
			if out, code := w.postern("setup", c.id, "--scopes", "read,read:bodies", "--yes"); code != 0 {
				t.Fatalf("setup: exit %d\n%s", code, out)
			}
			if out, code := w.postern("doctor", c.id); code != 0 {
				t.Fatalf("doctor after setup: exit %d\n%s", code, out)
			}
			path := filepath.Join(w.home, file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := dropScopes.ReplaceAll(b, nil)
			if bytes.Equal(edited, b) {
				t.Fatalf("%s holds no --scopes read,read:bodies:\n%s", path, b)
			}
			os.WriteFile(path, edited, 0o600)
			if out, code := w.postern("doctor", c.id); code != 1 || !strings.Contains(out, "--scopes none instead of read,read:bodies") {
				t.Fatalf("doctor after the edit: exit %d\n%s", code, out)
			}
			if out, code := w.postern("repair", c.id, "--yes"); code != 0 {
				t.Fatalf("repair: exit %d\n%s", code, out)
			}
			if out, code := w.run(hostExecutable(c.id), "mcp", "get", "postern"); code != 0 || !strings.Contains(out, "read,read:bodies") {
				t.Fatalf("after repair the host shows:\n%s", out)
			}
			if out, code := w.postern("doctor", c.id); code != 0 {
				t.Fatalf("doctor after repair: exit %d\n%s", code, out)
			}
		})
	}
}

// TestPluginBundles: the generated bundles pass the hosts' own validators and
// install: Claude Code (validate --strict, marketplace add, plugin install, the
// plugin's server connected), Codex and Copilot from the same marketplace,
// Gemini CLI's extension linked and connected, and the .mcpb manifest valid.
func TestPluginBundles(t *testing.T) {
	clis := hostCLIs(t)
	repo := mustAbs("../..")
	w := newHostWorld(t, clis)

	w.must("claude", "plugin", "validate", "--strict", repo)
	w.must("claude", "plugin", "validate", "--strict", filepath.Join(repo, "plugins/postern"))
	w.must("claude", "plugin", "marketplace", "add", repo)
	w.must("claude", "plugin", "install", "postern@postern")
	if out, _ := w.run("claude", "mcp", "list"); !strings.Contains(lineWith(out, "plugin:postern:postern"), "Connected") {
		t.Fatalf("claude mcp list does not show the plugin's server connected:\n%s", out)
	}

	w.must("codex", "plugin", "marketplace", "add", repo)
	w.must("codex", "plugin", "add", "postern@postern")
	if out, _ := w.run("node", filepath.Join(repo, "cmd/postern/testdata/hosts/codex-status.mjs")); !strings.HasPrefix(lineWith(out, "postern "), "postern connected") {
		t.Fatalf("Codex does not start the plugin's server:\n%s", out)
	}

	w.must("copilot", "plugin", "marketplace", "add", repo)
	w.must("copilot", "plugin", "install", "postern@postern")
	if out := w.must("copilot", "mcp", "list"); !strings.Contains(out, "postern") {
		t.Fatalf("copilot mcp list does not show the plugin's server:\n%s", out)
	}

	w.must("gemini", "extensions", "validate", filepath.Join(repo, "plugins/postern"))
	w.must("gemini", "extensions", "link", "--consent", filepath.Join(repo, "plugins/postern"))
	if out, _ := w.run("gemini", "mcp", "list"); !strings.HasSuffix(lineWith(out, "postern (from postern)"), "Connected") {
		t.Fatalf("gemini mcp list does not show the extension's server connected:\n%s", out)
	}

	w.must("mcpb", "validate", filepath.Join(repo, "plugins/postern/mcpb/manifest.json"))
	bundle := filepath.Join(w.home, "postern.mcpb")
	w.must(binary, "bundle", "mcpb", "--manifest", filepath.Join(repo, "plugins/postern/mcpb/manifest.json"), "--binary", binary, "--out", bundle)
	if out := w.must("mcpb", "info", bundle); !strings.Contains(out, "postern") {
		t.Fatalf("mcpb info:\n%s", out)
	}
}

// hostExecutable is the command of the catalog's host id.
func hostExecutable(id string) string {
	for _, h := range generated.Hosts {
		if h.ID == id {
			return h.Executables[0]
		}
	}
	return id
}

// gjsonRaw is the JSON text at path in b, "" when there is none.
func gjsonRaw(b []byte, path string) string { return gjson.GetBytes(b, path).Raw }

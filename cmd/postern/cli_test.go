package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/internal/corpus"
)

// inHome points HOME and the XDG folders of this process at a fresh temporary
// folder, for the commands run in-process by runHere.
func inHome(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	t.Setenv("HOME", h)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(h, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(h, ".local/share"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(h, ".local/state"))
	return h
}

// runHere runs the command line in this process and returns what it printed.
func runHere(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// lines counts the lines of s.
func lines(s string) int { return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1 }

// TestCLIVersion: --version and version print the same line; version --json
// is JSON with the version and the protocols.
func TestCLIVersion(t *testing.T) {
	inHome(t)
	a, _, code := runHere("--version")
	b, _, code2 := runHere("version")
	if code != 0 || code2 != 0 || a != b || !strings.HasPrefix(a, "postern ") || !strings.Contains(a, "(MCP ") {
		t.Fatalf("--version %d %q; version %d %q", code, a, code2, b)
	}
	out, _, code := runHere("version", "--json")
	var v struct {
		Version   string   `json:"version"`
		Protocols []string `json:"protocols"`
		Tools     int      `json:"tools"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Version == "" || len(v.Protocols) == 0 || v.Tools == 0 {
		t.Fatalf("version --json: %d %q", code, out)
	}
}

// TestCLIHelpEveryCommand walks the command tree: every command has a one-line
// Short and a Long or an Example, and both help CMD and CMD --help print its
// help and exit 0. The help texts say only what the commands do.
func TestCLIHelpEveryCommand(t *testing.T) {
	inHome(t)
	root := newRootCmd(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "__complete" || c.Name() == "__completeNoDesc" {
			return
		}
		n++
		path := strings.Fields(c.CommandPath())[1:]
		t.Run(strings.Join(append([]string{"postern"}, path...), "_"), func(t *testing.T) {
			if c.Short == "" || strings.Contains(c.Short, "\n") {
				t.Errorf("%s: Short %q is not one line", c.CommandPath(), c.Short)
			}
			if c.Long == "" && c.Example == "" {
				t.Errorf("%s has neither Long nor Example", c.CommandPath())
			}
			out, errOut, code := runHere(append([]string{"help"}, path...)...)
			if code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
				t.Errorf("help %v: exit %d, stdout %q, stderr %q", path, code, out, errOut)
			}
			if c.DisableFlagParsing {
				// The command parses its own flags: its --help is its own.
				out, errOut, code = runHere(append(path, "--help")...)
				if code != 0 || out+errOut == "" {
					t.Errorf("%v --help: exit %d, nothing printed", path, code)
				}
				return
			}
			out2, errOut, code := runHere(append(path, "--help")...)
			if code != 0 || out2 != out || errOut != "" {
				t.Errorf("%v --help: exit %d, differs from help %v:\n%s\n---\n%s", path, code, path, out2, out)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if n < 20 {
		t.Fatalf("walked only %d commands", n)
	}
	// Nothing deletes mail yet: approve must not say it does.
	out, _, _ := runHere("approve", "--help")
	if strings.Contains(strings.ToLower(out), "delet") {
		t.Errorf("approve --help speaks of delete:\n%s", out)
	}
	// The default of --tls is said in the help of account add.
	out, _, _ = runHere("account", "add", "--help")
	if !strings.Contains(out, "starttls on ports 143 and 587") || !strings.Contains(out, "--ca-file") || !strings.Contains(out, "--no-check") {
		t.Errorf("account add --help does not say the --tls default, --ca-file or --no-check:\n%s", out)
	}
	// postern alone is a usage error that shows the help on stderr.
	out, errOut, code := runHere()
	if code != 2 || out != "" || !strings.Contains(errOut, "Available Commands:") {
		t.Errorf("postern alone: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestCLITypos: a mistyped command is one line naming the nearest command,
// exit 2, for the root, a group and help.
func TestCLITypos(t *testing.T) {
	inHome(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sycn"}, "did you mean sync?"},
		{[]string{"stauts"}, "did you mean status?"},
		{[]string{"account", "lsit"}, "did you mean list?"},
		{[]string{"help", "sycn"}, "did you mean sync?"},
		{[]string{"help", "account", "ad"}, "did you mean add?"},
		{[]string{"config", "chek"}, "did you mean check?"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		out, errOut, code := runHere(c.args...)
		if code != 2 || out != "" || lines(errOut) != 1 || !strings.Contains(errOut, c.want) || !strings.HasPrefix(errOut, "postern: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line with %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestCLIWrongFlag: a wrong flag is said once, in one line naming the
// command's help (and the nearest flag), with no usage dumped; exit 2.
func TestCLIWrongFlag(t *testing.T) {
	env := home(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"sync", "--bogus"}, []string{"unknown flag --bogus", "run postern sync --help"}},
		{[]string{"account", "add", "w", "--imapp", "h:993"}, []string{"unknown flag --imapp", "did you mean --imap?", "postern account add --help"}},
		{[]string{"status", "--jsn"}, []string{"unknown flag --jsn", "did you mean --json?"}},
		{[]string{"mcp", "--scopes"}, []string{"--scopes needs a value", "postern mcp --help"}},
		{[]string{"log", "-x"}, []string{"unknown flag", "postern log --help"}},
	} {
		out, errOut, code := runCLI(t, env, c.args...) // the real binary: what a person sees
		if code != 2 || out != "" || lines(errOut) != 1 || strings.Contains(errOut, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line and exit 2", c.args, code, out, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errOut, w)
			}
		}
	}
	// Too many arguments is a usage error too.
	if _, errOut, code := runCLI(t, env, "account", "remove", "a", "b"); code != 2 || lines(errOut) != 1 {
		t.Errorf("account remove a b: exit %d, %q", code, errOut)
	}
}

// TestCLICompletion: each shell gets a script from cobra's generator, and the
// shells that are installed accept it (bash -n, zsh -n, fish --no-execute).
func TestCLICompletion(t *testing.T) {
	env := home(t)
	checks := map[string][]string{"bash": {"bash", "-n"}, "zsh": {"zsh", "-n"}, "fish": {"fish", "--no-execute"}, "powershell": nil}
	for shell, check := range checks {
		out, errOut, code := runCLI(t, env, "completion", shell)
		if code != 0 || !strings.Contains(out, "postern") || len(out) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(out), errOut)
			continue
		}
		if check == nil {
			continue
		}
		if _, err := exec.LookPath(check[0]); err != nil {
			if shell == "bash" {
				t.Fatalf("bash is not installed: %v", err)
			}
			t.Logf("skipped: %s is not installed, so its completion script was not checked by %s", check[0], strings.Join(check, " "))
			continue
		}
		file := filepath.Join(t.TempDir(), "postern."+shell)
		os.WriteFile(file, []byte(out), 0o600)
		if b, err := exec.Command(check[0], append(check[1:], file)...).CombinedOutput(); err != nil {
			t.Errorf("%s rejects the %s completion script: %v\n%s", strings.Join(check, " "), shell, err, b)
		}
	}
	// The completion asks postern itself: account names come from the configuration.
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[[accounts]]\nname = \"work\"\nkind = \"maildir\"\npath = \"/x\"\n[[accounts]]\nname = \"home\"\nkind = \"maildir\"\npath = \"/y\"\n"), 0o600)
	out, _, code := runCLI(t, env, "__complete", "account", "set", "--config", cfg, "w")
	if code != 0 || !strings.Contains(out, "work") || strings.Contains(out, "home") {
		t.Errorf("completing account set w: %d %q", code, out)
	}
}

// TestCLIAccountSet: account set changes only the given fields, keeps the
// comments and the other accounts, refuses an unknown name naming the nearest,
// and refuses to change an account's kind.
func TestCLIAccountSet(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	maildir := filepath.Join(dir, "Maildir")
	if _, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: 2, Messages: 5}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	orig := `# my settings
[mcp]
scopes = ["read"]

[[accounts]]
# the office one
name = "work"
kind = "imap"
server = "imap.example.com:993" # the provider's
user = "sam@example.com"
password_cmd = "pass show mail/work"
tls = "implicit"
aliases = [
  "sam@old.example.com",
]

[[accounts]]
name = "archive"
kind = "maildir"
path = "` + maildir + `"
`
	os.WriteFile(cfg, []byte(orig), 0o600)
	run := func(args ...string) (string, string, int) {
		return runCLI(t, env, append(args, "--config", cfg)...)
	}
	out, errOut, code := run("account", "set", "work", "--name", "Sam Rivera", "--imap", "imap.example.com:143", "--smtp", "smtp.example.com:587", "--no-check")
	if code != 0 || !strings.Contains(out, "Changed account work") || !strings.Contains(out, "tls is now starttls") {
		t.Fatalf("set: %d %q %q", code, out, errOut)
	}
	b, _ := os.ReadFile(cfg)
	got := string(b)
	for _, want := range []string{"# my settings", "# the office one", `scopes = ["read"]`, `name = "archive"`, `display_name = "Sam Rivera"`, `server = "imap.example.com:143"`, `tls = "starttls"`, `smtp = "smtp.example.com:587"`, `"sam@old.example.com",`, `password_cmd = "pass show mail/work"`} {
		if !strings.Contains(got, want) {
			t.Errorf("after set, the file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "imap.example.com:993") {
		t.Errorf("the old server is still there:\n%s", got)
	}
	// The archive block is byte for byte what it was.
	if !strings.HasSuffix(got, orig[strings.Index(orig, "[[accounts]]\nname = \"archive\""):]) {
		t.Errorf("the other account changed:\n%s", got)
	}
	out, _, _ = run("account", "list", "--json")
	var rows []map[string]any
	json.Unmarshal([]byte(out), &rows)
	if len(rows) != 2 || rows[0]["display_name"] != "Sam Rivera" || rows[0]["tls"] != "starttls" || rows[0]["smtp_tls"] != "starttls" {
		t.Fatalf("list after set: %s", out)
	}
	// Clearing a field removes its line.
	if _, errOut, code := run("account", "set", "work", "--smtp", "", "--alias", ""); code != 0 {
		t.Fatalf("clearing: %s", errOut)
	}
	b, _ = os.ReadFile(cfg)
	if strings.Contains(string(b), "smtp") || strings.Contains(string(b), "aliases") || !strings.Contains(string(b), "# the office one") {
		t.Fatalf("clearing smtp and aliases:\n%s", b)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"account", "set", "wrok", "--name", "X"}, 1, "did you mean work?"},
		{[]string{"account", "set", "work"}, 2, "changes nothing"},
		{[]string{"account", "set", "archive", "--imap", "h:993"}, 1, "Maildir"},
		{[]string{"account", "set", "work", "--maildir", maildir}, 1, "cannot change its kind"},
		{[]string{"account", "set", "work", "--tls", "none"}, 1, "only allowed to this computer"},
		{[]string{"account", "set", "work", "--ca-file", filepath.Join(dir, "nope.pem"), "--no-check"}, 1, "cannot be read"},
		{[]string{"account", "set", "work", "--name", "Sam\nBcc: x@example.com"}, 1, "control character"},
	} {
		before, _ := os.ReadFile(cfg)
		_, errOut, code := run(c.args...)
		after, _ := os.ReadFile(cfg)
		if code != c.code || lines(errOut) != 1 || !strings.Contains(errOut, c.want) || !bytes.Equal(before, after) {
			t.Errorf("%v: exit %d, stderr %q (want exit %d and %q, the file unchanged)", c.args, code, errOut, c.code, c.want)
		}
	}
}

// TestCLIConfigCheck: config check says "no problems" with exit 0, or one
// line per problem with exit 1.
func TestCLIConfigCheck(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	maildir := filepath.Join(dir, "Maildir")
	if _, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: 2, Messages: 3}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	write := func(s string) { os.WriteFile(cfg, []byte(s), 0o600) }
	write("[mcp]\nscopes = [\"read\", \"read:bodies\"]\n[[accounts]]\nname = \"a\"\nkind = \"maildir\"\npath = \"" + maildir + "\"\n[[accounts]]\nname = \"w\"\nkind = \"imap\"\nserver = \"imap.example.com:993\"\nuser = \"u\"\npassword_cmd = \"cat /dev/null\"\ntls = \"implicit\"\n")
	out, errOut, code := runCLI(t, env, "config", "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "no problems") || errOut != "" {
		t.Fatalf("a good configuration: %d %q %q", code, out, errOut)
	}
	// A field the account's kind does not read (kept from an IMAP account) is said and ignored:
	// the file that loaded before still loads and has no problem.
	write("[[accounts]]\nname = \"a\"\nkind = \"maildir\"\npath = \"" + maildir + "\"\nsmtp = \"smtp.example.com:587\"\n")
	out, errOut, code = runCLI(t, env, "config", "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "no problems") || errOut != "" ||
		!strings.Contains(out, "note: account a: smtp is a setting of an IMAP account only, not of a Maildir import, so postern ignores it") {
		t.Fatalf("a field of another kind: %d %q %q; want a note and no problems", code, out, errOut)
	}
	// A missing file is an empty configuration.
	if out, _, code := runCLI(t, env, "config", "check", "--config", filepath.Join(dir, "none.toml")); code != 0 || !strings.Contains(out, "no problems") {
		t.Fatalf("a missing file: %d %q", code, out)
	}
	write(`[mcp]
scopes = ["read", "mail:everything"]
[[accounts]]
name = "w"
kind = "imap"
server = "imap.example.com:993"
user = "u"
tls = "implicit"
tls_ca = "` + filepath.Join(dir, "missing-ca.pem") + `"
[[accounts]]
name = "v"
kind = "imap"
server = "imap.example.com"
user = "u"
password_cmd = "no-such-password-program-xyz show v"
tls = "sometimes"
[[accounts]]
name = "m"
kind = "maildir"
path = "` + filepath.Join(dir, "nothing") + `"
`)
	out, errOut, code = runCLI(t, env, "config", "check", "--config", cfg)
	wants := []string{`"mail:everything"`, "account w: no password command", "account w: the CA file", "account v: server \"imap.example.com\" is not HOST:PORT", "no-such-password-program-xyz, which is not installed", `account v: tls is "sometimes"`, "account m: " + filepath.Join(dir, "nothing") + " is not a Maildir"}
	if code != 1 || out != "" || lines(errOut) != len(wants) {
		t.Fatalf("problems: exit %d, stdout %q, %d lines (want %d):\n%s", code, out, lines(errOut), len(wants), errOut)
	}
	for _, w := range wants {
		if !strings.Contains(errOut, w) {
			t.Errorf("config check does not say %q:\n%s", w, errOut)
		}
	}
	write("[[accounts]\nname = 1\n")
	if _, errOut, code := runCLI(t, env, "config", "check", "--config", cfg); code != 1 || lines(errOut) != 1 || !strings.Contains(errOut, "cannot be parsed at line") {
		t.Fatalf("a file that does not parse: %d %q", code, errOut)
	}
}

// TestCLIUnknownAccount: mcp and call refuse to start for an --account that is
// not configured, naming the nearest, or saying how to add one when none is.
func TestCLIUnknownAccount(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[[accounts]]\nname = \"work\"\nkind = \"maildir\"\npath = \"/x\"\n[[accounts]]\nname = \"home\"\nkind = \"maildir\"\npath = \"/y\"\n"), 0o600)
	for _, args := range [][]string{{"mcp", "--account", "wrk"}, {"call", "status", "--account", "wrk"}} {
		out, errOut, code := runCLI(t, env, append(args, "--config", cfg)...)
		if code != 1 || out != "" || lines(errOut) != 1 || !strings.Contains(errOut, "did you mean work?") || !strings.Contains(errOut, "work, home") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	empty := filepath.Join(dir, "empty.toml")
	for _, args := range [][]string{{"mcp", "--account", "work"}, {"call", "status", "--account", "work"}} {
		_, errOut, code := runCLI(t, env, append(args, "--config", empty)...)
		if code != 1 || !strings.Contains(errOut, "no account is configured; add one with postern account add NAME") {
			t.Errorf("%v with no account: exit %d, %q", args, code, errOut)
		}
	}
	// A configured account starts as before.
	out, errOut, code := runCLI(t, env, "call", "status", "--account", "work", "--config", cfg)
	if code != 0 || !strings.Contains(out, "work") || strings.Contains(out, "home") {
		t.Errorf("call status --account work: %d %q %q", code, out, errOut)
	}
}

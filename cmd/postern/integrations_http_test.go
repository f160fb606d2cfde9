package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
)

// httpProc is a real postern mcp --http on a free loopback port, in env's home, that the
// test may stop before its end (startHTTP's server lives until the test ends).
type httpProc struct {
	cmd *exec.Cmd
	url string
}

func startHTTPProc(t *testing.T, env []string) *httpProc {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "--http", "127.0.0.1:0")
	cmd.Env = env
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &httpProc{cmd: cmd}
	t.Cleanup(s.stop)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case s.url = <-found:
	case <-time.After(20 * time.Second):
		t.Fatal("postern mcp --http did not say where it serves within 20 s")
	}
	return s
}

func (s *httpProc) stop() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.cmd.Wait()
	}
}

// noToken fails when any output holds a token.
func noToken(t *testing.T, what string, outs []string, tokens ...string) {
	t.Helper()
	for _, o := range outs {
		for _, tok := range tokens {
			if tok != "" && strings.Contains(o, tok) {
				t.Fatalf("%s shows the bearer token:\n%s", what, o)
			}
		}
	}
}

func readToken(t *testing.T, home string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".config/postern/http-token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestIntegrationsHTTP (issue 18): through the binary, setup cursor --http URL of a running
// postern mcp --http writes the URL and the server's token into Cursor's file; plan, dry run
// and doctor pass without ever printing the token; a new token file and a hand edit of the URL
// each fail doctor (exit 1) with repair as the fix, and repair passes; remove leaves the file
// byte for byte as it was; hosts that take no URL, URLs off this machine and grant flags are
// refused (exit 2); a cli host not on PATH is shown its command with $(cat TOKEN-FILE).
func TestIntegrationsHTTP(t *testing.T) {
	env, homeDir := hostsHome(t)
	cursor := filepath.Join(homeDir, ".cursor/mcp.json")
	orig, _ := os.ReadFile(cursor)
	srv := startHTTPProc(t, env)
	token := readToken(t, homeDir)
	var outs []string
	cli := func(args ...string) (string, int) {
		t.Helper()
		out, errOut, code := runCLI(t, env, append([]string{"integrations"}, args...)...)
		outs = append(outs, out, errOut)
		return out + errOut, code
	}

	if out, code := cli("plan", "cursor", "--http", srv.url); code != 0 || !strings.Contains(out, "Bearer ••••") || !strings.Contains(out, "the tools of the server at "+srv.url) {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	if out, code := cli("setup", "cursor", "--http", srv.url, "--dry-run", "--json"); code != 0 || !strings.Contains(out, "••••") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if now, _ := os.ReadFile(cursor); string(now) != string(orig) {
		t.Fatal("plan or the dry run changed the file")
	}
	if out, code := cli("setup", "cursor", "--http", srv.url, "--yes"); code != 0 {
		t.Fatalf("setup: exit %d\n%s", code, out)
	}
	b, _ := os.ReadFile(cursor)
	if gjson.GetBytes(b, "mcpServers.postern.url").String() != srv.url || gjson.GetBytes(b, "mcpServers.postern.headers.Authorization").String() != "Bearer "+token || gjsonRaw(b, "mcpServers.other") == "" {
		t.Fatalf("Cursor's file after setup --http:\n%s", b)
	}
	if out, code := cli("doctor", "cursor"); code != 0 || !strings.Contains(out, "takes the token") {
		t.Fatalf("doctor with the server running: exit %d\n%s", code, out)
	}
	if out, code := cli("setup", "cursor", "--http", srv.url, "--yes"); code != 0 || !strings.Contains(out, "already registered and current") {
		t.Fatalf("a second setup: exit %d\n%s", code, out)
	}
	srv.stop()

	// A new token: doctor says it changed, repair writes it.
	newer := strings.Repeat("N", 43)
	os.WriteFile(filepath.Join(homeDir, ".config/postern/http-token"), []byte(newer+"\n"), 0o600)
	if out, code := cli("doctor", "cursor"); code != 1 || !strings.Contains(out, "the token changed") || !strings.Contains(out, "fix: postern integrations repair cursor") {
		t.Fatalf("doctor after a new token: exit %d\n%s", code, out)
	}
	if out, code := cli("repair", "cursor", "--yes"); code != 0 {
		t.Fatalf("repair: exit %d\n%s", code, out)
	}
	if out, code := cli("doctor", "cursor"); code != 0 || !strings.Contains(out, "nothing listens") {
		t.Fatalf("doctor after repair: exit %d\n%s", code, out)
	}
	// A hand edit of the URL.
	b, _ = os.ReadFile(cursor)
	os.WriteFile(cursor, []byte(strings.Replace(string(b), srv.url, "http://127.0.0.1:1/mcp", 1)), 0o644)
	if out, code := cli("doctor", "cursor"); code != 1 || !strings.Contains(out, "instead of "+srv.url) {
		t.Fatalf("doctor after a hand edit: exit %d\n%s", code, out)
	}
	if out, code := cli("repair", "cursor", "--yes"); code != 0 {
		t.Fatalf("repair: exit %d\n%s", code, out)
	}
	if out, code := cli("doctor", "cursor"); code != 0 {
		t.Fatalf("doctor after repair: exit %d\n%s", code, out)
	}
	if out, code := cli("remove", "cursor", "--yes"); code != 0 {
		t.Fatalf("remove: exit %d\n%s", code, out)
	}
	if now, _ := os.ReadFile(cursor); string(now) != string(orig) {
		t.Fatalf("after remove:\n%s\nwant the original:\n%s", now, orig)
	}

	// Refusals, exit 2, one sentence.
	var takers []string
	for _, h := range generated.Hosts {
		if h.HTTP != nil {
			takers = append(takers, h.ID)
		}
	}
	for _, h := range generated.Hosts {
		if h.HTTP == nil {
			if out, code := cli("setup", h.ID, "--http", srv.url, "--yes"); code != 2 || !strings.Contains(out, h.Name+" takes no --http URL") || !strings.Contains(out, strings.Join(takers, ", ")) {
				t.Errorf("%s with --http: exit %d\n%s", h.ID, code, out)
			}
		}
	}
	for _, args := range [][]string{
		{"setup", "cursor", "--http", "http://192.0.2.7:8765/mcp", "--yes"},
		{"setup", "cursor", "--http", srv.url, "--scopes", "read", "--yes"},
		{"plan", "cursor", "--http", "127.0.0.1:8765"},
	} {
		if out, code := cli(args...); code != 2 {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	// A cli host not on PATH: the command to run, with the token read from its file.
	if out, code := cli("setup", "claude-code", "--http", srv.url, "--yes"); code != 1 || !strings.Contains(out, `"Authorization: Bearer $(cat `) {
		t.Fatalf("claude-code not on PATH: exit %d\n%s", code, out)
	}
	noToken(t, "integrations", outs, token, newer)
}

// TestIntegrationsHTTPMakesToken: setup --http before postern mcp --http ever ran makes the
// token (0600) with the same function, says so, and never shows it; a plan before it does not
// make one.
func TestIntegrationsHTTPMakesToken(t *testing.T) {
	env, homeDir := hostsHome(t)
	tokenFile := filepath.Join(homeDir, ".config/postern/http-token")
	out, errOut, code := runCLI(t, env, "integrations", "plan", "vscode", "--http", "http://127.0.0.1:8765/mcp")
	if code != 0 || !strings.Contains(out, "There is no HTTP token yet") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(tokenFile); err == nil {
		t.Fatal("plan made the token")
	}
	out, errOut, code = runCLI(t, env, "integrations", "setup", "vscode", "--http", "http://127.0.0.1:8765/mcp", "--yes")
	if code != 0 || !strings.Contains(out, "Made the HTTP bearer token in "+tokenFile) {
		t.Fatalf("setup: exit %d\n%s%s", code, out, errOut)
	}
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v", st, err)
	}
	token := readToken(t, homeDir)
	noToken(t, "setup", []string{out, errOut}, token)
	b, _ := os.ReadFile(filepath.Join(homeDir, ".config/Code/User/mcp.json"))
	if !strings.Contains(string(b), "// mine") || !strings.Contains(string(b), "Bearer "+token) || !strings.Contains(string(b), `"http"`) {
		t.Fatalf("VS Code's file:\n%s", b)
	}
}

// httpHostCase is how one host is checked over HTTP through its own command line.
type httpHostCase struct {
	id        string
	file      string                                        // the host's file under HOME, edited by hand
	connected func(w *hostWorld, url string) (bool, string) // the host reaches postern at url
}

var httpHostCases = []httpHostCase{
	{"claude-code", ".claude.json", func(w *hostWorld, url string) (bool, string) {
		out, _ := w.run("claude", "mcp", "list")
		l := lineWith(out, "postern: ")
		return strings.Contains(l, url) && strings.Contains(l, "Connected"), out
	}},
	{"gemini-cli", ".gemini/settings.json", func(w *hostWorld, url string) (bool, string) {
		out, _ := w.run("gemini", "mcp", "list")
		l := lineWith(out, "postern: ")
		return strings.Contains(l, url) && strings.HasSuffix(l, "Connected"), out
	}},
	{"copilot", ".copilot/mcp-config.json", func(w *hostWorld, url string) (bool, string) {
		// Copilot's command line lists servers without starting them.
		out, code := w.run("copilot", "mcp", "get", "postern")
		return code == 0 && strings.Contains(out, url), out
	}},
	{"opencode", ".config/opencode/opencode.json", func(w *hostWorld, url string) (bool, string) {
		out, _ := w.run("opencode", "mcp", "list")
		return lineWith(out, "postern connected") != "", out
	}},
}

// TestHostCLIsHTTP (issue 18): for each host with a URL entry that has a real command line in
// testdata/hosts, setup HOST --http with the URL of a running postern mcp --http, and the host
// itself reports postern connected (Copilot: listed); doctor passes, the server taking the
// token; a hand edit of the URL in the host's file fails doctor and repair puts it back;
// remove takes postern away and leaves the other server as it was; no output of postern
// holds the token.
func TestHostCLIsHTTP(t *testing.T) {
	clis := hostCLIs(t)
	for _, c := range httpHostCases {
		t.Run(c.id, func(t *testing.T) {
			w := newHostWorld(t, clis)
			var hc *hostCase
			for i := range hostCases {
				if hostCases[i].id == c.id {
					hc = &hostCases[i]
				}
			}
			hc.seedOther(w)
			otherBefore := hc.other(w)
			srv := startHTTPProc(t, append(append([]string{}, w.env...), "POSTERN_WATCH=off"))
			token := readToken(t, w.home)
			var outs []string
			postern := func(verb string, flags ...string) (string, int) {
				t.Helper()
				out, code := w.postern(verb, c.id, flags...)
				outs = append(outs, out)
				return out, code
			}
			if out, code := postern("setup", "--http", srv.url, "--yes"); code != 0 {
				t.Fatalf("setup --http: exit %d\n%s", code, out)
			}
			if ok, out := c.connected(w, srv.url); !ok {
				t.Fatalf("%s does not reach postern at %s:\n%s", c.id, srv.url, out)
			}
			if out, code := postern("doctor"); code != 0 || !strings.Contains(out, "takes the token") {
				t.Fatalf("doctor after setup: exit %d\n%s", code, out)
			}
			path := filepath.Join(w.home, c.file)
			b, _ := os.ReadFile(path)
			edited := strings.Replace(string(b), srv.url, "http://127.0.0.1:1/mcp", 1)
			if edited == string(b) {
				t.Fatalf("%s does not hold %s:\n%s", path, srv.url, b)
			}
			os.WriteFile(path, []byte(edited), 0o600)
			if out, code := postern("doctor"); code != 1 || !strings.Contains(out, "instead of "+srv.url) || !strings.Contains(out, "repair "+c.id) {
				t.Fatalf("doctor after a hand edit: exit %d\n%s", code, out)
			}
			if out, code := postern("repair", "--yes"); code != 0 {
				t.Fatalf("repair: exit %d\n%s", code, out)
			}
			if ok, out := c.connected(w, srv.url); !ok {
				t.Fatalf("after repair %s does not reach postern:\n%s", c.id, out)
			}
			if out, code := postern("doctor"); code != 0 {
				t.Fatalf("doctor after repair: exit %d\n%s", code, out)
			}
			if out, code := postern("remove", "--yes"); code != 0 {
				t.Fatalf("remove: exit %d\n%s", code, out)
			}
			if ok, out := hc.shows(w); ok {
				t.Fatalf("%s still shows postern after remove:\n%s", c.id, out)
			}
			if ok, _ := c.connected(w, srv.url); ok {
				t.Fatalf("%s still reaches postern after remove", c.id)
			}
			if after := hc.other(w); after != otherBefore {
				t.Fatalf("the other server changed:\nbefore %s\nafter  %s", otherBefore, after)
			}
			noToken(t, "postern integrations", outs, token)
		})
	}
}

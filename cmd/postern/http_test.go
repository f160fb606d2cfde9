//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	pmcp "github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/testing/mcptest"
)

// httpServer is the real binary serving `postern mcp --http 127.0.0.1:0`.
type httpServer struct {
	url, token string
	stderr     *mcptest.Buffer
}

var servingLine = regexp.MustCompile(`serving MCP at (http://\S+)`)

// startHTTP starts the binary with --http on a free loopback port and returns its URL and
// the bearer token it made; cleanup sends SIGTERM and waits for it.
func startHTTP(t *testing.T, env []string, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	s := &httpServer{stderr: &mcptest.Buffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("postern mcp --http did not end within 10 s of SIGTERM")
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := servingLine.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			b, err := os.ReadFile(filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "postern", "http-token"))
			if err != nil {
				t.Fatalf("the server is up but its token is not where it says: %v", err)
			}
			s.token = strings.TrimSpace(string(b))
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("postern mcp --http did not say where it serves within 20 s; stderr:\n%s", s.stderr)
	return nil
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (s *httpServer) client() *http.Client {
	return &http.Client{Transport: bearer{s.token, http.DefaultTransport}}
}

// post sends one JSON-RPC message with the given headers and returns the response.
func post(t *testing.T, c *http.Client, u, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, r *http.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var initBody = mcptest.Request(1, "initialize", map[string]any{
	"protocolVersion": pmcp.LatestLegacy, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "http-e2e", "version": "1"},
})

// TestHTTPRefusals: a foreign Origin, a foreign Host, no token and a wrong token are refused
// before any message is read; the token file is 0600 and shown once; 0.0.0.0 without
// --listen-any is refused in one sentence.
func TestHTTPRefusals(t *testing.T) {
	env := home(t)
	s := startHTTP(t, env)
	if !strings.Contains(s.stderr.String(), s.token) {
		t.Fatalf("a token made now is not shown on stderr:\n%s", s.stderr)
	}
	fi, err := os.Stat(filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "postern", "http-token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, fi.Mode())
	}
	good := s.client()
	for _, tc := range []struct {
		name   string
		client *http.Client
		hdr    map[string]string
		host   string
		status int
	}{
		{"foreign origin", good, map[string]string{"Origin": "https://evil.example"}, "", http.StatusForbidden},
		{"origin with a loopback-looking name", good, map[string]string{"Origin": "http://127.0.0.1.evil.example:80"}, "", http.StatusForbidden},
		{"foreign host", good, nil, "evil.example:80", http.StatusForbidden},
		{"no token", http.DefaultClient, nil, "", http.StatusUnauthorized},
		{"wrong token", &http.Client{Transport: bearer{strings.Repeat("A", len(s.token)), http.DefaultTransport}}, nil, "", http.StatusUnauthorized},
		{"basic auth", &http.Client{Transport: basic{}}, nil, "", http.StatusUnauthorized},
		{"loopback origin", good, map[string]string{"Origin": "http://localhost:5173"}, "", http.StatusOK},
		{"no origin", good, nil, "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(initBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := tc.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without WWW-Authenticate: Bearer: %v", resp.Header)
			}
			if tc.status != http.StatusOK && (strings.Contains(body, "result") || resp.Header.Get("Mcp-Session-Id") != "") {
				t.Fatalf("a refused request was served: %v %s", resp.Header, body)
			}
		})
	}

	// A second start reads the same token and does not show it again.
	s2 := startHTTP(t, env)
	if s2.token != s.token || strings.Contains(s2.stderr.String(), s.token) {
		t.Fatalf("second start: token %q (first %q), stderr:\n%s", s2.token, s.token, s2.stderr)
	}

	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		cmd := exec.Command(binary, "mcp", "--http", addr)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil || len(lines) != 1 || !strings.Contains(lines[0], "--listen-any") || !strings.Contains(lines[0], "127.0.0.1") {
			t.Fatalf("--http %s without --listen-any: %v, output:\n%s", addr, err, out)
		}
	}
}

type basic struct{}

func (basic) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth("postern", "x")
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPGoSDK connects the official Go SDK's StreamableClientTransport to postern over HTTP
// in both eras: it lists the default-scope tools and calls status, which says the era.
func TestHTTPGoSDK(t *testing.T) {
	s := startHTTP(t, home(t))
	var readTools int
	for _, spec := range generated.Tools {
		if spec.Scope == generated.ScopeRead {
			readTools++
		}
	}
	for _, tc := range []struct {
		name, version, era, want string
	}{
		{"legacy", pmcp.LatestLegacy, "legacy", pmcp.LatestLegacy},
		{"legacy-2025-06-18", "2025-06-18", "legacy", "2025-06-18"},
		{"modern", "", "modern", pmcp.Modern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-http", Version: "1"}, nil)
			var opts *mcp.ClientSessionOptions
			if tc.version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: tc.version}
			}
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: s.client()}, opts)
			if err != nil {
				t.Fatalf("connect: %v\nserver stderr:\n%s", err, s.stderr)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != tc.want {
				t.Fatalf("negotiated %q, want %q", got, tc.want)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != readTools {
				t.Fatalf("listed %d tools, want the %d default-scope tools", len(tools.Tools), readTools)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: generated.ToolStatus})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res.StructuredContent)
			var st map[string]any
			json.Unmarshal(b, &st)
			if res.IsError || st["protocol_era"] != tc.era || st["protocol_version"] != tc.want || st["client"] != "go-sdk-http" {
				t.Fatalf("status: error %v, says %v", res.IsError, st)
			}
		})
	}
}

// TestHTTPSessionAndGETStream: a legacy session is made at initialize and required after;
// its GET stream is told notifications/tools/list_changed when the scopes file changes;
// DELETE ends it and a request on it then gets 404.
func TestHTTPSessionAndGETStream(t *testing.T) {
	env := home(t)
	cfgDir := filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "postern")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "config.toml")
	writeScopes := func(scopes string) {
		t.Helper()
		if err := os.WriteFile(cfg+".tmp", []byte("[mcp]\nscopes = ["+scopes+"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(cfg+".tmp", cfg); err != nil {
			t.Fatal(err)
		}
	}
	writeScopes(`"` + generated.ScopeRead + `"`)
	s := startHTTP(t, env)
	c := s.client()

	list := mcptest.Request(2, "tools/list", nil)
	if r := post(t, c, s.url, list, nil); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("tools/list with no session and no _meta: %d %s", r.StatusCode, readAll(t, r))
	}
	r := post(t, c, s.url, initBody, nil)
	sid := r.Header.Get("Mcp-Session-Id")
	if body := readAll(t, r); r.StatusCode != http.StatusOK || sid == "" || !strings.Contains(body, pmcp.LatestLegacy) {
		t.Fatalf("initialize: %d, session %q: %s", r.StatusCode, sid, body)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": pmcp.LatestLegacy}
	if r := post(t, c, s.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); r.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", r.StatusCode, readAll(t, r))
	}
	if r := post(t, c, s.url, list, hdr); r.StatusCode != http.StatusOK || !strings.Contains(readAll(t, r), generated.ToolStatus) {
		t.Fatalf("tools/list in the session: %d", r.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	get, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK || !strings.HasPrefix(get.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET stream: %d %v", get.StatusCode, get.Header)
	}
	events := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(get.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
		close(events)
	}()
	time.Sleep(300 * time.Millisecond)
	writeScopes(`"` + generated.ScopeRead + `","` + generated.ScopeReadBodies + `"`)
	select {
	case ev := <-events:
		if !strings.Contains(ev, `"notifications/tools/list_changed"`) {
			t.Fatalf("the GET stream got %s, want notifications/tools/list_changed", ev)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no notifications/tools/list_changed on the GET stream within 15 s of widening the grant")
	}

	del, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	del.Header.Set("Mcp-Session-Id", sid)
	if r, err := c.Do(del); err != nil || r.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %v %v", err, r)
	}
	if r := post(t, c, s.url, list, hdr); r.StatusCode != http.StatusNotFound {
		t.Fatalf("tools/list on an ended session: %d, want 404", r.StatusCode)
	}
	if r := post(t, c, s.url, list, map[string]string{"Mcp-Session-Id": "no-such-session"}); r.StatusCode != http.StatusNotFound {
		t.Fatalf("tools/list on an unknown session: %d, want 404", r.StatusCode)
	}
}

// TestHTTPModernHeaders: a 2026-07-28 request whose Mcp-Method or Mcp-Name header is missing
// or says something else than its body is refused with 400 and -32020; one that agrees is served.
func TestHTTPModernHeaders(t *testing.T) {
	s := startHTTP(t, home(t))
	c := s.client()
	meta := mcptest.Meta(pmcp.Modern, "http-e2e")
	call := mcptest.Request(7, "tools/call", map[string]any{"name": generated.ToolStatus, "arguments": map[string]any{}, "_meta": meta})
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"agreeing", map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": generated.ToolStatus}, http.StatusOK},
		{"no Mcp-Method", map[string]string{"Mcp-Name": generated.ToolStatus}, http.StatusBadRequest},
		{"other Mcp-Method", map[string]string{"Mcp-Method": "tools/list", "Mcp-Name": generated.ToolStatus}, http.StatusBadRequest},
		{"no Mcp-Name", map[string]string{"Mcp-Method": "tools/call"}, http.StatusBadRequest},
		{"other Mcp-Name", map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": generated.ToolDocs}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.hdr["Mcp-Protocol-Version"] = pmcp.Modern
			r := post(t, c, s.url, call, tc.hdr)
			body := readAll(t, r)
			if r.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", r.StatusCode, tc.status, body)
			}
			if tc.status == http.StatusBadRequest && !strings.Contains(body, "-32020") {
				t.Fatalf("refusal without -32020: %s", body)
			}
			if tc.status == http.StatusOK && (!strings.Contains(body, `"resultType":"complete"`) || r.Header.Get("Mcp-Session-Id") != "") {
				t.Fatalf("served: %v %s", r.Header, body)
			}
		})
	}
}

// authProxy is a loopback reverse proxy that adds the bearer token, for clients that cannot
// send a header (the conformance suite): the Host and Origin they send pass unchanged.
func authProxy(t *testing.T, s *httpServer) string {
	t.Helper()
	target, _ := url.Parse(s.url)
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+s.token)
		},
		FlushInterval: -1,
		Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
	}
	srv := httptest.NewServer(p) // 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL + target.Path
}

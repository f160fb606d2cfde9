package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/testing/mcptest"
)

// The endpoint is driven over real HTTP (httptest) in front of the real mcp.Server and
// dispatch; only the tools' bodies are the test's: status says who called, mail_sync asks
// the person (as a commit does) and says what they answered.

const token = "test-token-0123456789"

type tools struct {
	generated.Handlers
	conns chan string // the connection each status call came on (what approvals are bound to)
}

func (t tools) Status(ctx context.Context, _ *generated.StatusArgs) (*generated.StatusResult, error) {
	info := dispatch.InfoFrom(ctx)
	select {
	case t.conns <- info.Connection:
	default:
	}
	return &generated.StatusResult{Version: "test", ProtocolEra: info.Era, ProtocolVersion: info.ProtocolVersion, Client: info.ClientName}, nil
}

func (tools) MailSync(ctx context.Context, _ *generated.MailSyncArgs) (*generated.SyncReport, error) {
	info := dispatch.InfoFrom(ctx)
	if info.Ask == nil {
		return nil, errors.New("no way to ask the person")
	}
	yes, err := info.Ask(ctx, approval.Request{Ref: "ab12", Preview: &generated.Prepared{Action: "send", Subject: "Hello"}})
	if err != nil {
		return nil, err
	}
	answer := "declined"
	if yes {
		answer = "approved"
	}
	return &generated.SyncReport{Accounts: []generated.SyncOutcome{{Account: answer}}}, nil
}

type endpoint struct {
	t      *testing.T
	h      *Handler
	srv    *httptest.Server
	grant  atomic.Pointer[dispatch.Grant]
	stderr *mcptest.Buffer
	conns  chan string
}

func (e *endpoint) nSessions() int {
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	return len(e.h.sessions)
}

func newEndpoint(t *testing.T) *endpoint {
	t.Helper()
	e := &endpoint{t: t, stderr: &mcptest.Buffer{}, conns: make(chan string, 16)}
	reg, err := dispatch.New(tools{conns: e.conns})
	if err != nil {
		t.Fatal(err)
	}
	g := dispatch.DefaultGrant()
	e.grant.Store(&g)
	e.h = New(Options{
		Server: mcp.Options{Registry: reg, Grant: func() dispatch.Grant { return *e.grant.Load() }, Version: "test", Poll: 10 * time.Millisecond},
		Token:  token,
		Stderr: e.stderr,
	})
	e.srv = httptest.NewServer(e.h)
	t.Cleanup(func() { e.h.Close(); e.srv.Close() })
	return e
}

// widen grants every scope, which changes the tool list.
func (e *endpoint) widen() {
	g := dispatch.Grant{}
	for _, s := range dispatch.ScopeNames() {
		g[s] = true
	}
	e.grant.Store(&g)
}

// do sends one request with the token, JSON content and the given headers ("K: v").
func (e *endpoint) do(method, path, body string, headers ...string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// open sends a request and returns its response unread (a stream).
func (e *endpoint) open(ctx context.Context, method, body string, headers ...string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, e.srv.URL+Path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads a text/event-stream's messages as they come.
func events(t *testing.T, r io.Reader) <-chan map[string]any {
	ch := make(chan map[string]any, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(d), &m); err != nil {
					t.Errorf("an event that is not JSON: %q", d)
					continue
				}
				ch <- m
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan map[string]any, what string) map[string]any {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatalf("the stream ended before %s", what)
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s within 5s", what)
	}
	return nil
}

func decode(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("the body is not one JSON object: %q", body)
	}
	return m
}

// initialize starts a legacy session and returns its id.
func (e *endpoint) initialize(version string, caps map[string]any) string {
	e.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	resp, body := e.do("POST", Path, mcptest.Request(0, "initialize", map[string]any{
		"protocolVersion": version, "capabilities": caps, "clientInfo": map[string]any{"name": "http-client", "version": "1"},
	}))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != mimeJSON {
		e.t.Fatalf("initialize: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if v := mcptest.Result(e.t, decode(e.t, body))["protocolVersion"]; v != version {
		e.t.Fatalf("initialize negotiated %v, want %s", v, version)
	}
	sid := resp.Header.Get(hSession)
	if sid == "" {
		e.t.Fatal("initialize answered without a session id")
	}
	if resp, body := e.do("POST", Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hSession+": "+sid); resp.StatusCode != http.StatusAccepted || body != "" {
		e.t.Fatalf("notifications/initialized: %d %q; want 202 and no body", resp.StatusCode, body)
	}
	return sid
}

// TestRefusals: each request the endpoint refuses before any message reaches a server gets
// its HTTP status and a JSON-RPC error saying what to do, and starts no session.
func TestRefusals(t *testing.T) {
	e := newEndpoint(t)
	init := mcptest.Request(1, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}})
	for _, c := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		says                     string
	}{
		{"another path", "POST", "/other", init, nil, 404, "the MCP endpoint is /mcp"},
		{"a web page's origin", "POST", Path, init, []string{"Origin: http://evil.example"}, 403, "origin http://evil.example are refused"},
		{"no token", "POST", Path, init, []string{"Authorization: "}, 401, "Authorization: Bearer"},
		{"a wrong token", "POST", Path, init, []string{"Authorization: Bearer nope"}, 401, "http-token"},
		{"PUT", "PUT", Path, init, nil, 405, "takes POST, GET and DELETE"},
		{"not JSON content", "POST", Path, init, []string{"Content-Type: text/plain"}, 415, "Unsupported Media Type"},
		{"accepts neither answer", "POST", Path, init, []string{"Accept: text/html"}, 406, "accept both"},
		{"a body over 8 MiB", "POST", Path, `"` + strings.Repeat("a", 8<<20) + `"`, nil, 413, "at most 8 MiB"},
		{"broken JSON", "POST", Path, `{"jsonrpc":`, nil, 400, "not valid JSON"},
		{"an empty batch", "POST", Path, `[]`, nil, 400, "an empty batch"},
		{"not JSON-RPC", "POST", Path, `{"hello":1}`, nil, 400, "\"jsonrpc\" must be \"2.0\""},
		{"no session and no revision", "POST", Path, mcptest.Request(2, "tools/list", nil), nil, 400, "send initialize first"},
		{"an unknown session", "POST", Path, mcptest.Request(2, "tools/list", nil), []string{hSession + ": nosuch"}, 404, "no session nosuch"},
		{"a revision not served", "POST", Path, init, []string{hVersion + ": 1999-01-01"}, 400, "2025-03-26"},
		{"GET without a session", "GET", Path, "", nil, 405, "POST subscriptions/listen instead"},
		{"GET of an unknown session", "GET", Path, "", []string{hSession + ": nosuch"}, 404, "no session nosuch"},
		{"DELETE without a session", "DELETE", Path, "", nil, 400, "DELETE ends a session"},
		{"DELETE of an unknown session", "DELETE", Path, "", []string{hSession + ": nosuch"}, 404, "no session nosuch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := e.do(c.method, c.path, c.body, c.headers...)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			m := decode(t, body)
			if _, er := mcptest.ErrCode(t, m); !strings.Contains(er["message"].(string), c.says) {
				t.Errorf("the refusal says %q; want it to say %q", er["message"], c.says)
			}
			if resp.Header.Get(hSession) != "" {
				t.Errorf("a refused request was given a session")
			}
		})
	}
	if resp, _ := e.do("POST", Path, init, "Authorization: "); resp.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	if resp, _ := e.do("PUT", Path, ""); resp.Header.Get("Allow") != "GET, POST, DELETE" {
		t.Errorf("405 Allow = %q", resp.Header.Get("Allow"))
	}
	if n := e.nSessions(); n != 0 {
		t.Errorf("%d sessions after refusals only", n)
	}
}

// TestLegacySession: initialize starts a session whose id every later request carries; calls,
// batches and notifications go to that session's server; DELETE ends it.
func TestLegacySession(t *testing.T) {
	e := newEndpoint(t)
	sid := e.initialize("2025-03-26", nil)
	other := e.initialize("2025-03-26", nil)
	if other == sid {
		t.Fatal("two sessions share one id")
	}
	resp, body := e.do("POST", Path, mcptest.Request(1, "tools/call", map[string]any{"name": generated.ToolStatus}), hSession+": "+sid, hVersion+": 2025-03-26")
	if resp.StatusCode != 200 || resp.Header.Get(hSession) != sid {
		t.Fatalf("tools/call: %d, session %q: %s", resp.StatusCode, resp.Header.Get(hSession), body)
	}
	text := mcptest.Result(t, decode(t, body))["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, "http-client") || !strings.Contains(text, "2025-03-26") {
		t.Errorf("the call did not reach the session's server: %q", text)
	}
	// A batch is answered as one array.
	resp, body = e.do("POST", Path, `[`+mcptest.Request("a", "ping", nil)+`,`+mcptest.Request("b", "tools/list", nil)+`]`, hSession+": "+sid)
	var batch []map[string]any
	if err := json.Unmarshal([]byte(body), &batch); resp.StatusCode != 200 || err != nil || len(batch) != 2 {
		t.Fatalf("batch: %d %s", resp.StatusCode, body)
	}
	// A notification-only batch has nothing to answer.
	if resp, body := e.do("POST", Path, `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"zz"}}]`, hSession+": "+sid); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a batch of notifications: %d %s", resp.StatusCode, body)
	}
	// The wrong revision on a session is refused.
	if resp, body := e.do("POST", Path, mcptest.Request(3, "ping", nil), hSession+": "+sid, hVersion+": 2030-01-01"); resp.StatusCode != 400 || !strings.Contains(body, "not a revision this session serves") {
		t.Errorf("a session request naming another revision: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.do("DELETE", Path, "", hSession+": "+sid); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.do("DELETE", Path, "", hSession+": "+sid); resp.StatusCode != 404 {
		t.Errorf("a second DELETE of the session: %d %s; want 404, it is gone", resp.StatusCode, body)
	}
	if resp, body := e.do("POST", Path, mcptest.Request(4, "ping", nil), hSession+": "+sid); resp.StatusCode != 404 || !strings.Contains(body, "send initialize") {
		t.Errorf("a request on the ended session: %d %s", resp.StatusCode, body)
	}
	// The other session lives on.
	if resp, body := e.do("POST", Path, mcptest.Request(5, "ping", nil), hSession+": "+other); resp.StatusCode != 200 {
		t.Errorf("the other session after one was deleted: %d %s", resp.StatusCode, body)
	}
	// A refused initialize leaves no session behind.
	before := e.nSessions()
	resp, body = e.do("POST", Path, mcptest.Request(6, "initialize", map[string]any{"protocolVersion": 7}))
	if resp.Header.Get(hSession) != "" || !strings.Contains(body, "error") {
		t.Errorf("a refused initialize: session %q, %s", resp.Header.Get(hSession), body)
	}
	for i := 0; e.nSessions() != before; i++ {
		if i == 200 {
			t.Fatalf("a refused initialize left a session: %d, was %d", e.nSessions(), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Once closed, the handler starts no session and the old ones are gone.
	e.h.Close()
	if resp, body := e.do("POST", Path, mcptest.Request(7, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}})); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize after Close: %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.do("POST", Path, mcptest.Request(8, "ping", nil), hSession+": "+other); resp.StatusCode != 404 {
		t.Errorf("a session after Close: %d", resp.StatusCode)
	}
}

// TestGETStream: a session's GET stream carries what no request asked for (the tool list
// changed when the grant did); a second one is refused, and one the client cannot read too.
func TestGETStream(t *testing.T) {
	e := newEndpoint(t)
	sid := e.initialize("2025-11-25", nil)
	if resp, body := e.do("GET", Path, "", hSession+": "+sid, "Accept: application/json"); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("a GET that does not accept a stream: %d %s", resp.StatusCode, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := e.open(ctx, "GET", "", hSession+": "+sid, "Accept: text/event-stream")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != mimeSSE || resp.Header.Get(hSession) != sid {
		t.Fatalf("GET: %d %s session %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get(hSession))
	}
	ev := events(t, resp.Body)
	if r, body := e.do("GET", Path, "", hSession+": "+sid, "Accept: text/event-stream"); r.StatusCode != http.StatusConflict {
		t.Errorf("a second GET stream: %d %s", r.StatusCode, body)
	}
	e.widen()
	if m := next(t, ev, "tools/list_changed"); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("the GET stream carried %v; want notifications/tools/list_changed", m)
	}
	// The stream ends when the session does.
	e.do("DELETE", Path, "", hSession+": "+sid)
	select {
	case _, ok := <-ev:
		for ok {
			_, ok = <-ev
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the GET stream stayed open after its session was deleted")
	}
}

// TestApprovalAsked: a call that asks the person streams the question on the call's own
// response; the client's answer, posted on the session, reaches the call, whose result
// follows on that stream. A client that cannot take a stream is told why it cannot be asked.
func TestApprovalAsked(t *testing.T) {
	e := newEndpoint(t)
	sid := e.initialize("2025-11-25", map[string]any{"elicitation": map[string]any{}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	call := mcptest.Request(10, "tools/call", map[string]any{"name": generated.ToolMailSync})
	resp := e.open(ctx, "POST", call, hSession+": "+sid)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != mimeSSE {
		t.Fatalf("a call that asks: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ev := events(t, resp.Body)
	ask := next(t, ev, "the question")
	if ask["method"] != "elicitation/create" || !strings.Contains(ask["params"].(map[string]any)["message"].(string), "Hello") {
		t.Fatalf("the stream carried %v; want the elicitation with the preview", ask)
	}
	// The same id again while the call waits is refused.
	if r, body := e.do("POST", Path, call, hSession+": "+sid); r.StatusCode != 400 || !strings.Contains(body, "still being answered") {
		t.Errorf("a second request with id 10: %d %s", r.StatusCode, body)
	}
	// Strings are other ids than the number 10, whatever they spell.
	for _, other := range []string{"10", "n10", "s10"} {
		if r, body := e.do("POST", Path, mcptest.Request(other, "ping", nil), hSession+": "+sid); r.StatusCode != 200 || !strings.Contains(body, `"id":"`+other+`","result"`) {
			t.Errorf("a request with id %q while 10 waits: %d %s", other, r.StatusCode, body)
		}
	}
	id, _ := json.Marshal(ask["id"])
	if r, body := e.do("POST", Path, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"action":"accept","content":{}}}`, hSession+": "+sid); r.StatusCode != http.StatusAccepted {
		t.Fatalf("the person's answer: %d %s", r.StatusCode, body)
	}
	res := next(t, ev, "the call's result")
	if res["id"] != float64(10) || !strings.Contains(mustText(t, res), "approved") {
		t.Fatalf("the call's result: %v; want id 10 saying approved", res)
	}

	// Accepting JSON only: the question cannot be streamed, so the call is told so at once.
	r, body := e.do("POST", Path, mcptest.Request(11, "tools/call", map[string]any{"name": generated.ToolMailSync}), hSession+": "+sid, "Accept: application/json")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != mimeJSON || !strings.Contains(body, "does not accept text/event-stream") {
		t.Fatalf("a call that asks without a stream: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), body)
	}
}

func mustText(t *testing.T, m map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(m["result"])
	return string(b)
}

// modernBody is a 2026-07-28 request.
func modernBody(id any, method string, params map[string]any) string {
	p := map[string]any{"_meta": mcptest.Meta(mcp.Modern, "modern-client")}
	for k, v := range params {
		p[k] = v
	}
	return mcptest.Request(id, method, p)
}

// TestStateless: a 2026-07-28 request is served on its own, without a session, once its
// headers say what its body says; its errors have the statuses the revision gives them.
func TestStateless(t *testing.T) {
	e := newEndpoint(t)
	status := modernBody(1, "tools/call", map[string]any{"name": generated.ToolStatus})
	resp, body := e.do("POST", Path, status, hVersion+": "+mcp.Modern, hMethod+": tools/call", hName+": "+generated.ToolStatus)
	if resp.StatusCode != 200 || resp.Header.Get(hSession) != "" {
		t.Fatalf("a stateless call: %d session %q: %s", resp.StatusCode, resp.Header.Get(hSession), body)
	}
	if txt := mustText(t, decode(t, body)); !strings.Contains(txt, "modern-client") {
		t.Errorf("the call's answer does not name its client: %s", txt)
	}
	// Without the version header, the _meta alone makes it stateless.
	if resp, body := e.do("POST", Path, modernBody(2, "tools/list", nil), hMethod+": tools/list"); resp.StatusCode != 200 {
		t.Errorf("a stateless tools/list by _meta only: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct {
		name, body string
		headers    []string
		status     int
		says       string
	}{
		{"no Mcp-Method", status, []string{hVersion + ": " + mcp.Modern, hName + ": status"}, 400, "the Mcp-Method header is missing"},
		{"another Mcp-Method", status, []string{hMethod + ": tools/list", hName + ": status"}, 400, "the body's method is tools/call"},
		{"no Mcp-Name", status, []string{hMethod + ": tools/call"}, 400, "the Mcp-Name header is missing"},
		{"another Mcp-Name", status, []string{hMethod + ": tools/call", hName + ": mail_send"}, 400, "params.name is status"},
		{"versions differ", status, []string{hVersion + ": 2030-01-01", hMethod + ": tools/call", hName + ": status"}, 400, "send the same revision in both"},
		{"a batch", `[` + status + `]`, []string{hVersion + ": " + mcp.Modern}, 400, "does not allow batches"},
		{"an unknown method", modernBody(3, "nothing/here", nil), []string{hMethod + ": nothing/here"}, 404, "Method not found"},
		{"a revision not served", strings.Replace(modernBody(4, "tools/list", nil), mcp.Modern, "2030-01-01", 1), []string{hMethod + ": tools/list"}, 400, "Unsupported protocol version"},
		{"no capabilities in _meta", mcptest.Request(5, "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.Modern}}), []string{hMethod + ": tools/list"}, 400, "clientCapabilities"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := e.do("POST", Path, c.body, c.headers...)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if _, er := mcptest.ErrCode(t, decode(t, body)); !strings.Contains(er["message"].(string), c.says) {
				t.Errorf("says %q; want %q", er["message"], c.says)
			}
		})
	}
	if resp, body := e.do("POST", Path, status, hMethod+": tools/list", hName+": status"); !strings.Contains(body, `"code":-32020`) {
		t.Errorf("a header mismatch's code: %d %s; want -32020", resp.StatusCode, body)
	}
	// A notification has nothing to wait for.
	if resp, body := e.do("POST", Path, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, hVersion+": "+mcp.Modern, hMethod+": notifications/cancelled"); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a stateless notification: %d %s", resp.StatusCode, body)
	}
	if n := e.nSessions(); n != 0 {
		t.Errorf("stateless requests left %d sessions", n)
	}
	// Every stateless request is one connection to approvals, so that a question asked on one
	// can be answered on the next; legacy sessions are each their own.
	for i := 0; i < 2; i++ {
		if resp, body := e.do("POST", Path, status, hMethod+": tools/call", hName+": status"); resp.StatusCode != 200 {
			t.Fatalf("status: %d %s", resp.StatusCode, body)
		}
	}
	drain := func() []string {
		var out []string
		for {
			select {
			case c := <-e.conns:
				out = append(out, c)
			default:
				return out
			}
		}
	}
	if c := drain(); len(c) != 3 || c[0] != c[1] || c[1] != c[2] || c[0] == "" {
		t.Errorf("stateless calls came on connections %q; want one and the same", c)
	}
	s1, s2 := e.initialize("2025-03-26", nil), e.initialize("2025-03-26", nil)
	for _, sid := range []string{s1, s2} {
		e.do("POST", Path, mcptest.Request(1, "tools/call", map[string]any{"name": generated.ToolStatus}), hSession+": "+sid)
	}
	if c := drain(); len(c) != 2 || c[0] == c[1] {
		t.Errorf("two sessions' calls came on connections %q; want two", c)
	}
}

// TestStatelessListen: subscriptions/listen stays open and streams what it opted in to on
// its own response.
func TestStatelessListen(t *testing.T) {
	e := newEndpoint(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := e.open(ctx, "POST", modernBody("L1", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}),
		hVersion+": "+mcp.Modern, hMethod+": subscriptions/listen")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != mimeSSE {
		t.Fatalf("listen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ev := events(t, resp.Body)
	if m := next(t, ev, "the acknowledgement"); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first event %v", m)
	}
	e.widen()
	if m := next(t, ev, "tools/list_changed"); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("the listen stream carried %v", m)
	}
}

// TestAccepts: the Accept header is read as HTTP lists it (several values, parameters,
// wildcards); no header takes anything.
func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		accept []string
		mime   string
		ok     bool
	}{
		{nil, mimeJSON, true},
		{[]string{"application/json;q=0.9"}, mimeJSON, true},
		{[]string{"text/html", "application/*"}, mimeJSON, true},
		{[]string{"*/*"}, mimeSSE, true},
		{[]string{"text/html, text/plain"}, mimeSSE, false},
		{[]string{"application/jsonx"}, mimeJSON, false},
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		for _, a := range c.accept {
			r.Header.Add("Accept", a)
		}
		if got := accepts(r, c.mime); got != c.ok {
			t.Errorf("Accept %q takes %s: %v, want %v", c.accept, c.mime, got, c.ok)
		}
	}
}

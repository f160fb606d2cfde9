package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/jsonrpc"
	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/testing/mcptest"
)

// fake is a tiny set of handlers: status reports the call's CallInfo,
// mail_sync runs until it is cancelled, mail_folders panics. Any other tool
// panics on the nil Handlers and dispatch answers it with an error.
type fake struct {
	generated.Handlers
	syncing chan struct{} // receives when mail_sync starts
}

func (f *fake) Status(ctx context.Context, _ *generated.StatusArgs) (*generated.StatusResult, error) {
	info := dispatch.InfoFrom(ctx)
	return &generated.StatusResult{Version: "test", ProtocolEra: info.Era, ProtocolVersion: info.ProtocolVersion,
		Client: info.ClientName, GrantedScopes: info.Scopes, ToolCount: info.ToolCount}, nil
}

func (f *fake) MailSync(ctx context.Context, _ *generated.MailSyncArgs) (*generated.SyncReport, error) {
	f.syncing <- struct{}{}
	select {
	case <-ctx.Done():
		return nil, errors.New("the sync was cancelled")
	case <-time.After(10 * time.Second):
		return &generated.SyncReport{}, nil
	}
}

func (f *fake) MailFolders(context.Context, *generated.MailFoldersArgs) (*generated.FolderList, error) {
	panic("mail_folders fails")
}

// resources serves one page.
type resources struct{}

func (resources) List(context.Context, dispatch.Grant) []mcp.Resource {
	return []mcp.Resource{{URI: "postern://docs/guide", Name: "guide", MimeType: "text/markdown"}}
}

func (resources) Read(_ context.Context, uri string, _ dispatch.Grant) (mcp.Contents, error) {
	if uri == "postern://docs/guide" {
		return mcp.Contents{URI: uri, MimeType: "text/markdown", Text: "# Guide"}, nil
	}
	if strings.HasPrefix(uri, "postern://thread/") {
		return mcp.Contents{}, &mcp.NotFoundError{Sentence: "There is no such message here."}
	}
	return mcp.Contents{}, mcp.ErrNotFound
}

// digests are the fake resources' digests by URI; a test changes one to stand for a sync.
var digests sync.Map

func (resources) Digest(_ context.Context, uri string, _ dispatch.Grant) string {
	d, _ := digests.Load(uri)
	s, _ := d.(string)
	return s
}

// Links names every "id" of an answer as a message.
func (resources) Links(_ string, structured []byte, _ dispatch.Grant) []mcp.Resource {
	var out []mcp.Resource
	if id := gjson.GetBytes(structured, "id"); id.Type == gjson.String {
		out = append(out, mcp.Resource{URI: "postern://message/" + id.Str, Name: id.Str})
	}
	return out
}

// session is one Server.Serve over pipes, driven as a client would.
type session struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan []byte
	served chan error
	stderr *mcptest.Buffer
	f      *fake
	grant  atomic.Pointer[dispatch.Grant]
	grants atomic.Int64 // how often the server asked for the grant
}

// serve starts a server with the fake registry and the default grant; opt
// may change the options first. Every line the server writes must be one
// JSON-RPC message or a batch of them.
func serve(t *testing.T, opt func(*mcp.Options)) *session {
	t.Helper()
	s := &session{t: t, lines: make(chan []byte, 100), served: make(chan error, 1), stderr: &mcptest.Buffer{}, f: &fake{syncing: make(chan struct{}, 1)}}
	g := dispatch.DefaultGrant()
	s.grant.Store(&g)
	reg, err := dispatch.New(s.f)
	if err != nil {
		t.Fatal(err)
	}
	o := mcp.Options{Registry: reg, Resources: resources{}, Grant: func() dispatch.Grant { s.grants.Add(1); return *s.grant.Load() },
		Version: "test", Stderr: s.stderr, Poll: -1}
	if opt != nil {
		opt(&o)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s.in = inW
	go func() {
		err := mcp.New(o).Serve(context.Background(), inR, outW)
		outW.Close()
		s.served <- err
	}()
	go func() {
		defer close(s.lines)
		r := jsonrpc.NewReader(outR)
		for {
			l, err := r.Next()
			if err != nil {
				if err != io.EOF {
					t.Errorf("reading the server's output: %v", err)
				}
				return
			}
			if !isJSONRPC(l) {
				t.Errorf("the server wrote something that is not JSON-RPC: %.200q", l)
			}
			s.lines <- append([]byte(nil), l...)
		}
	}()
	t.Cleanup(func() {
		s.in.Close()
		for range s.lines {
		}
		<-s.served
		reg.Close()
	})
	return s
}

// isJSONRPC reports whether l is one JSON-RPC 2.0 message or a non-empty array of them.
func isJSONRPC(l []byte) bool {
	if len(l) > 0 && l[0] == '[' {
		var items []json.RawMessage
		if json.Unmarshal(l, &items) != nil || len(items) == 0 {
			return false
		}
		for _, it := range items {
			if !isJSONRPC(it) {
				return false
			}
		}
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(l, &m) != nil || string(m["jsonrpc"]) != `"2.0"` {
		return false
	}
	_, method := m["method"]
	_, result := m["result"]
	_, rerr := m["error"]
	_, id := m["id"]
	return (method && !result && !rerr) || (id && result != rerr)
}

// waitGrants waits until the server asked for the grant n more times (the
// list watcher asks once a look).
func (s *session) waitGrants(n int64) {
	s.t.Helper()
	want := s.grants.Load() + n
	for deadline := time.Now().Add(10 * time.Second); s.grants.Load() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatal("the server stopped looking at the grant")
		}
	}
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// recvLine returns the next line the server writes.
func (s *session) recvLine() []byte {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the server closed its output")
		}
		return l
	case <-time.After(10 * time.Second):
		s.t.Fatal("no answer within 10 s")
		return nil
	}
}

func (s *session) recv() map[string]any {
	s.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.recvLine(), &m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// rpc sends a request and returns the next message (every test waits for its answer).
func (s *session) rpc(id any, method string, params any) map[string]any {
	s.t.Helper()
	s.send(mcptest.Request(id, method, params))
	r := s.recv()
	if fmt.Sprint(r["id"]) != fmt.Sprint(id) {
		s.t.Fatalf("asked %v, the answer is %v", id, r)
	}
	return r
}

// close ends the input and returns what Serve returned, once every line was read.
func (s *session) close() error {
	s.t.Helper()
	s.in.Close()
	for l := range s.lines {
		s.t.Errorf("an unexpected line after the input closed: %s", l)
	}
	select {
	case err := <-s.served:
		s.served <- err
		return err
	case <-time.After(10 * time.Second):
		s.t.Fatal("Serve did not return after the input closed")
		return nil
	}
}

func (s *session) initialize(v string, caps map[string]any) map[string]any {
	s.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	return result(s.t, s.rpc("init", "initialize", map[string]any{"protocolVersion": v, "capabilities": caps,
		"clientInfo": map[string]any{"name": "inproc-legacy", "version": "1"}}))
}

var (
	result  = mcptest.Result
	errCode = mcptest.ErrCode
)

// modern returns params carrying the 2026-07-28 _meta, with extra members.
func modern(extra map[string]any) map[string]any {
	p := map[string]any{"_meta": mcptest.Meta(mcp.Modern, "inproc-modern")}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

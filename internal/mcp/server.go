// Package mcp owns the Model Context Protocol over one stdio connection: both
// protocol eras (legacy initialize and 2026-07-28 server/discover with per-request
// _meta), the methods, and which answer each message gets. It never writes to
// stdout anything but JSON-RPC, and nothing a client sends stops it.
package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/jsonrpc"
	"github.com/postern-mcp/postern/internal/toolwire"
)

// Error codes beyond JSON-RPC's own.
const (
	CodeUnsupportedVersion = -32022
	CodeResourceNotFound   = -32002 // legacy eras; 2026-07-28 uses -32602
)

// _meta keys of 2026-07-28.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
)

// gjson paths to them (dots escaped).
var (
	pathVersion      = gjsonKey(metaVersion)
	pathCapabilities = gjsonKey(metaCapabilities)
	pathClientInfo   = gjsonKey(metaClientInfo)
)

func gjsonKey(k string) string { return strings.ReplaceAll(k, ".", `\.`) }

// Cache hints on 2026-07-28 list and read results. The tool list follows the
// granted scopes, which follow the configuration, so it is private and short-lived.
const (
	listTTL    = 60_000
	cacheScope = "private"
)

// Resources is what the server needs to serve resources.
type Resources interface {
	// List returns the concrete resources g allows that can be read now.
	List(ctx context.Context, g dispatch.Grant) []Resource
	// Read returns a resource's text, or an error that is ErrNotFound (a *NotFoundError
	// carries the sentence the agent reads).
	Read(ctx context.Context, uri string, g dispatch.Grant) (Contents, error)
	// Digest returns a short string that changes when what Read gives for uri changes, and
	// "" while it cannot be read; the server asks only for subscribed URIs, at every Poll.
	Digest(ctx context.Context, uri string, g dispatch.Grant) string
	// Links returns the resources a tool's structured answer names, for resource_link
	// content items (at most a few dozen).
	Links(tool string, structured []byte, g dispatch.Grant) []Resource
}

// Resource is one listed resource, or a resource link.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// Contents is a read resource.
type Contents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// ErrNotFound is returned by Resources.Read for an unknown URI.
var ErrNotFound = errors.New("resource not found")

// NotFoundError is a refusal of Resources.Read with the one sentence the agent reads: the
// sentence the tool that gives the same thing would answer.
type NotFoundError struct{ Sentence string }

func (e *NotFoundError) Error() string        { return e.Sentence }
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Options configure a Server.
type Options struct {
	Registry  *dispatch.Registry
	Resources Resources
	// Grant returns the scopes granted now; it is called for every request so
	// that a configuration change is seen without a restart.
	Grant   func() dispatch.Grant
	Version string
	Stderr  io.Writer
	// Poll is how often the server looks whether the tool or resource lists changed (a
	// configuration that grants other scopes), to tell a legacy client with
	// notifications/tools/list_changed; 0 means every second, a negative value never.
	Poll time.Duration
	// ConnectionID names the connection approval tokens are bound to; "" makes a random one.
	// Stateless HTTP (2026-07-28) serves each request on its own Server and passes one id
	// for them all, so that an input_required round can be answered on a later request.
	ConnectionID string
}

// Server serves one connection.
type Server struct {
	opt Options

	mu          sync.Mutex
	negotiated  *revision // by initialize; nil before
	clientName  string
	inflight    map[string]context.CancelFunc
	grantPtr    uintptr
	grantOne    bool // the pairs were counted as one tool each
	grantScopes []string
	grantCount  int

	wg   sync.WaitGroup
	conn *jsonrpc.Conn // every message out, and the answers to our requests

	serverInfo     json.RawMessage
	serverInfoMeta json.RawMessage

	subs subscriptions // resources/subscribe and subscriptions/listen (subscribe.go)

	connID    string      // this connection's identity, for approval tokens
	canElicit atomic.Bool // the legacy client declared form elicitation
	ready     atomic.Bool // the legacy client sent notifications/initialized
}

// New returns a server ready to Serve.
func New(opt Options) *Server {
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	s := &Server{opt: opt, inflight: map[string]context.CancelFunc{}, connID: opt.ConnectionID}
	if s.connID == "" {
		s.connID = newConnID()
	}
	s.serverInfo, _ = json.Marshal(map[string]string{"name": generated.ServerName, "title": generated.ServerTitle, "version": opt.Version})
	s.serverInfoMeta, _ = json.Marshal(map[string]json.RawMessage{metaServerInfo: s.serverInfo})
	return s
}

// Serve reads messages from in until it closes, answering each on out. It
// returns after every answer has been written and flushed.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.conn = jsonrpc.NewConn(out, askIDPrefix)
	r := jsonrpc.NewReader(in)
	stopWatch := s.watchLists()
	defer stopWatch()
	var readErr error
	for {
		line, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, jsonrpc.ErrLineTooLong) || errors.Is(err, jsonrpc.ErrNotUTF8) {
			s.write(jsonrpc.EncodeError(nil, protocolError(jsonrpc.CodeParseError, "Parse error: "+err.Error()+"; the line was skipped")))
			continue
		}
		if err != nil {
			readErr = fmt.Errorf("reading standard input: %w", err)
			break
		}
		if line[0] == '[' {
			s.batch(ctx, line)
			continue
		}
		msg, perr := jsonrpc.Parse(line)
		if perr == nil && msg.IsResponse() {
			s.conn.Deliver(msg) // an answer to a request of ours; never answered itself
			continue
		}
		if resp := s.handle(ctx, msg, perr, true); resp != nil {
			s.write(resp)
		}
	}
	stopWatch()
	s.endListens()
	s.conn.Close() // no answer can come any more: a call waiting for one ends now
	s.wg.Wait()
	if err := s.conn.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return readErr
}

func (s *Server) write(msg []byte) {
	if err := s.conn.Send(msg); err != nil {
		s.logf("postern: cannot write to standard output: %v", err)
	}
}

// notify sends a notification that has no params.
func (s *Server) notify(method string) {
	if err := s.conn.Notify(method, nil); err != nil {
		s.logf("postern: cannot write to standard output: %v", err)
	}
}

// batch answers a JSON array of messages where the negotiated revision allows it.
func (s *Server) batch(ctx context.Context, line []byte) {
	if !gjson.ValidBytes(line) {
		s.write(jsonrpc.EncodeError(nil, protocolError(jsonrpc.CodeParseError, "Parse error: the line is not valid JSON; send one JSON-RPC message per line")))
		return
	}
	s.mu.Lock()
	rev := s.negotiated
	s.mu.Unlock()
	items := gjson.ParseBytes(line).Array()
	if rev == nil || !rev.Batches {
		why := "this connection has not negotiated " + batchVersions + ", the only revision that allows batches"
		if rev != nil {
			why = "protocol revision " + rev.Version + " does not allow batches"
		}
		s.write(jsonrpc.EncodeError(nil, protocolError(jsonrpc.CodeInvalidRequest, "Invalid Request: "+why+"; send one message per line")))
		return
	}
	if len(items) == 0 {
		s.write(jsonrpc.EncodeError(nil, protocolError(jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch")))
		return
	}
	var parts [][]byte
	for _, it := range items {
		msg, perr := jsonrpc.Parse([]byte(it.Raw))
		if perr == nil && msg.IsResponse() {
			// No revision with batches has requests from the server.
			perr = protocolError(jsonrpc.CodeInvalidRequest, "Invalid Request: this server sends no requests on a "+rev.Version+" connection, so it takes no responses")
		}
		if resp := s.handle(ctx, msg, perr, false); resp != nil {
			parts = append(parts, resp)
		}
	}
	if len(parts) == 0 {
		return
	}
	b, err := jsonrpc.EncodeBatch(parts)
	if err != nil {
		b = jsonrpc.EncodeError(nil, protocolError(jsonrpc.CodeInternalError, "Internal error: the batch's answers could not be encoded: "+err.Error()))
	}
	s.write(b)
}

// request is one request being answered.
type request struct {
	msg    *jsonrpc.Message
	params gjson.Result // msg.Params; non-existent when absent
	// Members of an object params every method may look at (non-existent when absent).
	meta, name, arguments gjson.Result
	rev                   *revision
	client                string
	elicit                bool // a 2026-07-28 client that declared elicitation
}

// newRequest reads msg's params once.
func newRequest(msg *jsonrpc.Message) *request {
	req := &request{msg: msg}
	if msg.Params == nil {
		return req
	}
	req.params = gjson.ParseBytes(msg.Params)
	if req.params.IsObject() {
		req.params.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "_meta":
				req.meta = v
			case "name":
				req.name = v
			case "arguments":
				req.arguments = v
			}
			return true
		})
	}
	return req
}

// errorAnswer encodes e as the answer to req.
func errorAnswer(req *request, e *jsonrpc.Error) []byte { return jsonrpc.EncodeError(req.msg.ID, e) }

// handle answers one parsed message (perr is what Parse refused it with). It
// returns the encoded response, or nil when there is nothing to send now (a
// notification, or a call answered later when async is true).
func (s *Server) handle(ctx context.Context, msg *jsonrpc.Message, perr *jsonrpc.Error, async bool) (resp []byte) {
	if perr != nil {
		return jsonrpc.Refusal(msg, perr)
	}
	defer func() {
		if p := recover(); p != nil {
			s.logPanic("answering "+msg.Method, p)
			if msg.ID != nil {
				resp = jsonrpc.EncodeError(msg.ID, protocolError(jsonrpc.CodeInternalError, "Internal error: postern failed on this request and logged why on its standard error; the connection is still open"))
			} else {
				resp = nil
			}
		}
	}()
	if msg.IsNotification() {
		s.notification(msg)
		return nil
	}
	req := newRequest(msg)
	if rerr := s.classify(req); rerr != nil {
		return errorAnswer(req, rerr)
	}
	if req.rev.Modern {
		return s.modern(ctx, req, async)
	}
	return s.legacy(ctx, req, async)
}

func (s *Server) notification(msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/initialized":
		s.mu.Lock()
		legacy := s.negotiated != nil
		s.mu.Unlock()
		s.ready.Store(legacy)
	case "notifications/cancelled":
		id := gjson.GetBytes(msg.Params, "requestId").Raw
		s.mu.Lock()
		cancel := s.inflight[id]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		s.cancelListen(id)
	}
}

// classify decides the era of a request from its _meta (2026-07-28) or the
// connection's initialize (legacy), and sets req.rev.
func (s *Server) classify(req *request) *jsonrpc.Error {
	msg, meta := req.msg, req.meta
	if meta.Exists() && !meta.IsObject() {
		return protocolError(jsonrpc.CodeInvalidParams, "Invalid params: _meta must be an object")
	}
	ver := meta.Get(pathVersion)
	if ver.Exists() {
		if ver.Type != gjson.String {
			return protocolError(jsonrpc.CodeInvalidParams, "Invalid params: _meta "+metaVersion+" must be a string")
		}
		switch rev := lookupRevision(ver.Str); {
		case rev != nil && rev.Modern:
			return s.modernRequest(req, rev)
		case rev != nil:
			// A legacy revision named in _meta: served as legacy.
		default:
			e := protocolError(CodeUnsupportedVersion, "Unsupported protocol version "+strconv.Quote(ver.Str)+"; use one of "+strings.Join(Supported, ", "))
			e.Data = map[string]any{"supported": Supported, "requested": ver.Str}
			return e
		}
	} else if meta.Get(pathCapabilities).Exists() || meta.Get(pathClientInfo).Exists() || msg.Method == "server/discover" {
		return protocolError(jsonrpc.CodeInvalidParams, "Invalid params: _meta must carry "+metaVersion+" (\""+Modern+"\") and "+metaCapabilities+" on every 2026-07-28 request")
	}
	s.mu.Lock()
	rev, client := s.negotiated, s.clientName
	s.mu.Unlock()
	if rev == nil && msg.Method != "initialize" && msg.Method != "ping" {
		if _, known := legacyMethods[msg.Method]; !known {
			return protocolError(jsonrpc.CodeMethodNotFound, "Method not found: "+msg.Method)
		}
		return protocolError(jsonrpc.CodeInvalidParams, "Invalid params: "+msg.Method+" carries no _meta "+metaVersion+" and no initialize came first; send initialize, or the 2026-07-28 _meta fields on every request")
	}
	if rev == nil {
		rev = noRevision
	}
	req.rev, req.client = rev, client
	return nil
}

func (s *Server) modernRequest(req *request, rev *revision) *jsonrpc.Error {
	meta := req.meta
	caps := meta.Get(pathCapabilities)
	if !caps.Exists() {
		return protocolError(jsonrpc.CodeInvalidParams, "Invalid params: _meta is missing the required "+metaCapabilities+" ({} when the client has none)")
	}
	if !caps.IsObject() {
		return protocolError(jsonrpc.CodeInvalidParams, "Invalid params: _meta "+metaCapabilities+" must be an object")
	}
	req.rev = rev
	req.elicit = rev.Elicitation && caps.Get("elicitation").IsObject()
	if ci := meta.Get(pathClientInfo); ci.Exists() {
		if !ci.IsObject() || ci.Get("name").Type != gjson.String {
			return protocolError(jsonrpc.CodeInvalidParams, "Invalid params: _meta "+metaClientInfo+" must be an object with a name")
		}
		req.client = ci.Get("name").Str
	}
	return nil
}

// legacyMethods are the methods answered after initialize.
var legacyMethods = map[string]struct{}{
	"tools/list": {}, "tools/call": {}, "resources/list": {}, "resources/templates/list": {}, "resources/read": {},
	"resources/subscribe": {}, "resources/unsubscribe": {},
}

// removedInModern are legacy methods that 2026-07-28 dropped.
var removedInModern = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true,
}

func (s *Server) modern(ctx context.Context, req *request, async bool) []byte {
	m := req.msg
	switch m.Method {
	case "server/discover":
		return s.result(req, s.discover(), true)
	case "subscriptions/listen":
		return s.listen(ctx, req) // subscribe.go
	}
	if resp, ok := s.common(ctx, req, async); ok {
		return resp
	}
	if removedInModern[m.Method] {
		return errorAnswer(req, protocolError(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method+" is not part of protocol "+Modern))
	}
	return errorAnswer(req, protocolError(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method))
}

func (s *Server) legacy(ctx context.Context, req *request, async bool) []byte {
	m := req.msg
	switch m.Method {
	case "initialize":
		return s.initialize(req)
	case "ping":
		return s.result(req, map[string]any{}, false)
	case "resources/subscribe", "resources/unsubscribe":
		return s.subscribe(ctx, req) // subscribe.go
	}
	if resp, ok := s.common(ctx, req, async); ok {
		return resp
	}
	return errorAnswer(req, protocolError(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method))
}

// common answers the methods both eras share; ok is false for any other method.
// List and read results are cacheable (result adds the hints in the modern era only).
func (s *Server) common(ctx context.Context, req *request, async bool) (resp []byte, ok bool) {
	m := req.msg
	var res map[string]any
	var err *jsonrpc.Error
	switch m.Method {
	case "tools/call":
		return s.toolsCall(ctx, req, async), true
	case "tools/list":
		res, err = s.toolsList(req)
	case "resources/list", "resources/templates/list", "resources/read":
		res, err = s.resources(ctx, req)
	default:
		return nil, false
	}
	if err != nil {
		return errorAnswer(req, err), true
	}
	return s.result(req, res, true), true
}

func (s *Server) initialize(req *request) []byte {
	s.mu.Lock()
	already := s.negotiated != nil
	s.mu.Unlock()
	if already {
		return errorAnswer(req, protocolError(jsonrpc.CodeInvalidRequest, "Invalid Request: this connection is already initialized; start a new one to negotiate again"))
	}
	asked := req.params.Get("protocolVersion")
	if asked.Type != gjson.String {
		return errorAnswer(req, protocolError(jsonrpc.CodeInvalidParams, "Invalid params: initialize needs protocolVersion (a string such as \""+LatestLegacy+"\")"))
	}
	rev := legacyRevision(asked.Str)
	if rev == nil {
		rev = legacyRevision(LatestLegacy)
	}
	client := req.params.Get("clientInfo.name").Str
	// Form elicitation: an elicitation object that is empty (form implied) or names form.
	el := req.params.Get("capabilities.elicitation")
	canElicit := rev.Elicitation && el.IsObject() && (len(el.Map()) == 0 || el.Get("form").Exists())
	s.mu.Lock()
	s.negotiated, s.clientName = rev, client
	s.mu.Unlock()
	s.canElicit.Store(canElicit)
	info := s.serverInfo
	if !rev.Titles {
		info, _ = json.Marshal(map[string]string{"name": generated.ServerName, "version": s.opt.Version})
	}
	res := map[string]any{
		"protocolVersion": rev.Version,
		"capabilities": map[string]any{
			"tools":     map[string]any{"listChanged": true},
			"resources": map[string]any{"listChanged": true, "subscribe": true},
		},
		"serverInfo":   info,
		"instructions": generated.Instructions,
	}
	return s.result(req, res, false)
}

func (s *Server) discover() map[string]any {
	return map[string]any{
		"supportedVersions": Supported,
		"capabilities": map[string]any{
			// Told on a subscriptions/listen stream (subscribe.go).
			"tools":     map[string]any{"listChanged": true},
			"resources": map[string]any{"listChanged": true, "subscribe": true},
		},
		"instructions": generated.Instructions,
		// Earlier drafts carried serverInfo in the body too; harmless to clients that read _meta.
		"serverInfo": s.serverInfo,
	}
}

// result encodes res as the answer to req, adding what 2026-07-28 requires.
func (s *Server) result(req *request, res map[string]any, cacheable bool) []byte {
	if req.rev.Modern {
		res["resultType"] = "complete"
		res["_meta"] = s.serverInfoMeta
		if cacheable {
			res["ttlMs"] = listTTL
			res["cacheScope"] = cacheScope
		}
	}
	// json.Marshal escapes HTML characters, as these answers always had them.
	b, err := json.Marshal(res)
	if err != nil {
		return errorAnswer(req, protocolError(jsonrpc.CodeInternalError, "Internal error: the answer could not be encoded: "+err.Error()))
	}
	return s.encodeResult(req, json.RawMessage(b))
}

// encodeResult encodes res as the answer to req (HTML characters unescaped
// but in json.RawMessage members), or an internal error when it cannot be.
func (s *Server) encodeResult(req *request, res any) []byte {
	b, err := jsonrpc.EncodeResult(req.msg.ID, res)
	if err != nil {
		return errorAnswer(req, protocolError(jsonrpc.CodeInternalError, "Internal error: the answer could not be encoded: "+err.Error()))
	}
	return b
}

// PageSize is how many tools one tools/list page holds.
const PageSize = 100

// canAsk says whether req's client can ask the person: a 2026-07-28 request that
// declared elicitation, or a legacy connection whose initialize declared form elicitation.
func (s *Server) canAsk(req *request) bool {
	if req.rev.Modern {
		return req.elicit
	}
	return s.canElicit.Load()
}

func (s *Server) toolsList(req *request) (map[string]any, *jsonrpc.Error) {
	g := s.opt.Grant()
	tools := s.opt.Registry.Listed(g, s.opt.Registry.OneCall(s.canAsk(req)))
	start := 0
	if c := req.params.Get("cursor"); c.Exists() && c.Str != "" {
		n, ok := decodeCursor(c.Str)
		if !ok || n > len(tools) {
			return nil, protocolError(jsonrpc.CodeInvalidParams, "Invalid params: the cursor is not one this server gave; list again without a cursor")
		}
		start = n
	}
	end := start + PageSize
	if end > len(tools) {
		end = len(tools)
	}
	list := make([]json.RawMessage, 0, end-start)
	for _, t := range tools[start:end] {
		list = append(list, toolJSON(t, req.rev))
	}
	res := map[string]any{"tools": list}
	if end < len(tools) {
		res["nextCursor"] = encodeCursor(end)
	}
	return res, nil
}

func encodeCursor(n int) string { return encodeCursorOf("tools", n) }

func decodeCursor(c string) (int, bool) { return decodeCursorOf("tools", c) }

func encodeCursorOf(kind string, n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.Itoa(n)))
}

func decodeCursorOf(kind, c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), kind+":") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), kind+":"))
	return n, err == nil && n >= 0
}

// toolKey names a tool as one revision lists it (a prepare half and its one-call
// form are two tools of one name).
type toolKey struct {
	tool                *dispatch.Tool
	titles, annotations bool
}

var toolCache sync.Map // toolKey → json.RawMessage

// toolJSON is a tool as listed, with the fields the revision knows: the
// entry package toolwire writes, the one the generator measures budgets with.
func toolJSON(t *dispatch.Tool, rev *revision) json.RawMessage {
	key := toolKey{t, rev.Titles, rev.Annotations}
	if b, ok := toolCache.Load(key); ok {
		return b.(json.RawMessage)
	}
	a := t.Spec.Annotations
	b := toolwire.Entry(toolwire.Tool{
		Name: t.Spec.Name, Title: t.Spec.Title, Description: t.Spec.Description,
		Input: t.Listed, Output: t.Output,
		Annotations: toolwire.Annotations{ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive, IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld},
	}, toolwire.Revision{Titles: rev.Titles, Annotations: rev.Annotations})
	toolCache.Store(key, json.RawMessage(b))
	return b
}

func (s *Server) toolsCall(ctx context.Context, req *request, async bool) []byte {
	m := req.msg
	name := req.name
	if name.Type != gjson.String || name.Str == "" {
		return errorAnswer(req, protocolError(jsonrpc.CodeInvalidParams, "Invalid params: tools/call needs params.name, the tool to call"))
	}
	if s.opt.Registry.Lookup(name.Str) == nil {
		if e := s.opt.Registry.Replaced(name.Str); e != nil {
			// A renamed or merged tool: never listed, and its old name says what to call.
			return errorAnswer(req, protocolError(jsonrpc.CodeInvalidParams, e.Error()))
		}
		return errorAnswer(req, protocolError(jsonrpc.CodeInvalidParams, "Unknown tool: "+strconv.Quote(name.Str)+"; call tools/list for the tools this connection offers"))
	}
	var args json.RawMessage
	if a := req.arguments; a.Exists() {
		args = json.RawMessage(a.Raw)
	}
	tool := s.opt.Registry.Lookup(name.Str)
	inline := !async || tool.Spec.Effect == generated.EffectNone
	run := func() []byte {
		g := s.opt.Grant()
		cctx := ctx
		if !inline {
			// Only a call on its own goroutine can be reached by
			// notifications/cancelled while it runs.
			var cancel context.CancelFunc
			cctx, cancel = context.WithCancel(ctx)
			id := string(m.ID)
			s.mu.Lock()
			s.inflight[id] = cancel
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				delete(s.inflight, id)
				s.mu.Unlock()
				cancel()
			}()
		}
		ci := s.callInfo(req, g)
		if !req.rev.Modern && s.canElicit.Load() {
			ci.Ask = s.ask
		}
		if req.elicit && tool.Spec.Phase != "" { // only the halves of a pair read the round
			ci.Rounds = &approval.Rounds{
				Answer: req.params.Get("inputResponses." + approval.ApproveInput + ".action").Str,
				State:  req.params.Get("requestState").Str,
			}
		}
		cctx = dispatch.WithInfo(cctx, ci)
		res, err := s.opt.Registry.Call(cctx, name.Str, args, g)
		if err != nil {
			return errorAnswer(req, protocolError(jsonrpc.CodeInvalidParams, "Unknown tool: "+strconv.Quote(name.Str)))
		}
		var links []Resource
		if req.rev.ResourceLinks && !res.IsError && len(res.Structured) > 0 && s.opt.Resources != nil {
			links = s.opt.Resources.Links(name.Str, res.Structured, g)
		}
		return s.callResult(req, res, links)
	}
	// Tools that only read the local store answer quickly: they run in order on
	// the reading goroutine, which keeps a round trip short. Tools that change
	// something (a sync, later writes) run on their own goroutine so that the
	// connection keeps answering and notifications/cancelled can reach them.
	if inline {
		return run()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var resp []byte
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.logPanic("in tools/call", p)
					resp = errorAnswer(req, protocolError(jsonrpc.CodeInternalError, "Internal error: postern failed on this call and logged why on its standard error"))
				}
			}()
			resp = run()
		}()
		s.write(resp)
		s.opt.Registry.FlushAudit() // a call that changed something is logged at once
	}()
	return nil
}

// callInfo describes req's connection to a handler.
func (s *Server) callInfo(req *request, g dispatch.Grant) dispatch.CallInfo {
	era := "legacy"
	if req.rev.Modern {
		era = "modern"
	}
	scopes, count := s.grantInfo(g, s.opt.Registry.OneCall(s.canAsk(req)))
	return dispatch.CallInfo{
		Era: era, ProtocolVersion: req.rev.Version, ClientName: req.client,
		Scopes: scopes, ToolCount: count, Connection: s.connID,
	}
}

// grantInfo returns the sorted scopes of g and how many tools the connection is
// offered under them (oneCall: each pair as one tool), remembered for the last
// grant seen (the same map while the configuration holds).
func (s *Server) grantInfo(g dispatch.Grant, oneCall bool) ([]string, int) {
	ptr := reflect.ValueOf(g).Pointer()
	s.mu.Lock()
	defer s.mu.Unlock()
	if ptr != s.grantPtr || oneCall != s.grantOne || s.grantScopes == nil {
		s.grantPtr, s.grantOne, s.grantScopes, s.grantCount = ptr, oneCall, g.Sorted(), len(s.opt.Registry.Listed(g, oneCall))
	}
	return s.grantScopes, s.grantCount
}

// inputRequired is a 2026-07-28 tools/call result asking the client first.
type inputRequired struct {
	ResultType    string          `json:"resultType"`
	InputRequests json.RawMessage `json:"inputRequests"`
	RequestState  string          `json:"requestState"`
	Meta          json.RawMessage `json:"_meta"`
}

// contentItem is one content item of a tools/call result: the text block, or a
// resource_link (2025-06-18 and later) to a resource the answer names.
type contentItem struct {
	Type     string          `json:"type"`
	Text     json.RawMessage `json:"text,omitempty"` // the text as json.Marshal writes it
	URI      string          `json:"uri,omitempty"`
	Name     string          `json:"name,omitempty"`
	Title    string          `json:"title,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
}

// callToolResult is a tools/call result, with the members the revision knows.
type callToolResult struct {
	Content           []contentItem   `json:"content"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	ResultType        string          `json:"resultType,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// callResult encodes a tools/call answer. The text is escaped as
// json.Marshal escapes it; the structured result is written as dispatch
// encoded it (HTML characters unescaped); links follow the text where the
// revision knows resource links.
func (s *Server) callResult(req *request, r *dispatch.Result, links []Resource) []byte {
	var res any
	if r.InputRequests != nil && req.rev.Modern {
		res = inputRequired{ResultType: "input_required", InputRequests: r.InputRequests, RequestState: r.RequestState, Meta: s.serverInfoMeta}
	} else {
		text, _ := json.Marshal(r.Text) // a string always encodes
		cr := callToolResult{Content: []contentItem{{Type: "text", Text: text}}, IsError: r.IsError}
		if req.rev.ResourceLinks {
			for _, l := range links {
				cr.Content = append(cr.Content, contentItem{Type: "resource_link", URI: l.URI, Name: l.Name, Title: l.Title, MimeType: l.MimeType})
			}
		}
		if req.rev.StructuredContent {
			cr.StructuredContent = r.Structured
		}
		if req.rev.Modern {
			cr.ResultType, cr.Meta = "complete", s.serverInfoMeta
		}
		res = cr
	}
	return s.encodeResult(req, res)
}

func (s *Server) resources(ctx context.Context, req *request) (map[string]any, *jsonrpc.Error) {
	g := s.opt.Grant()
	ctx = dispatch.WithInfo(ctx, s.callInfo(req, g))
	switch req.msg.Method {
	case "resources/list":
		var list []Resource
		if s.opt.Resources != nil {
			list = s.opt.Resources.List(ctx, g)
		}
		return page(req, "resources", "resources", list)
	case "resources/templates/list":
		type tmpl struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
			Title       string `json:"title,omitempty"`
			Description string `json:"description,omitempty"`
			MimeType    string `json:"mimeType,omitempty"`
		}
		list := []tmpl{}
		for _, r := range generated.Resources {
			if g[r.Scope] {
				list = append(list, tmpl{r.URITemplate, r.Name, r.Title, r.Description, r.MimeType})
			}
		}
		return page(req, "templates", "resourceTemplates", list)
	}
	uri := req.params.Get("uri")
	if uri.Type != gjson.String {
		return nil, protocolError(jsonrpc.CodeInvalidParams, "Invalid params: resources/read needs params.uri")
	}
	var c Contents
	err := ErrNotFound
	start := time.Now()
	if s.opt.Resources != nil {
		c, err = s.opt.Resources.Read(ctx, uri.Str, g)
	}
	if err != nil {
		e := notFoundError(req, uri.Str, err)
		s.opt.Registry.LogRead(ctx, uri.Str, start, 0, e.Message)
		return nil, e
	}
	s.opt.Registry.LogRead(ctx, uri.Str, start, len(c.Text), "")
	return map[string]any{"contents": []Contents{c}}, nil
}

// notFoundError is the answer to a read (or subscribe) of uri that err refused: the
// protocol's resource-not-found error with the sentence of the refusal, or, for a URI that
// no template expands, one that says where the URIs are.
func notFoundError(req *request, uri string, err error) *jsonrpc.Error {
	msg := "Resource not found: " + strconv.Quote(uri) + "; call resources/templates/list for the URIs this connection can read"
	var nf *NotFoundError
	if errors.As(err, &nf) && nf.Sentence != "" {
		msg = nf.Sentence
	}
	e := protocolError(req.rev.ResourceNotFound, msg)
	e.Data = map[string]string{"uri": uri}
	return e
}

// page answers a list request with the page of list its cursor asks for, under key; kind
// names the list in the cursor, so that a cursor of one list is refused by another.
func page[T any](req *request, kind, key string, list []T) (map[string]any, *jsonrpc.Error) {
	if list == nil {
		list = []T{}
	}
	start := 0
	if c := req.params.Get("cursor"); c.Exists() && c.Str != "" {
		n, ok := decodeCursorOf(kind, c.Str)
		if !ok || n > len(list) {
			return nil, protocolError(jsonrpc.CodeInvalidParams, "Invalid params: the cursor is not one this server gave; list again without a cursor")
		}
		start = n
	}
	end := min(start+PageSize, len(list))
	res := map[string]any{key: list[start:end]}
	if end < len(list) {
		res["nextCursor"] = encodeCursorOf(kind, end)
	}
	return res, nil
}

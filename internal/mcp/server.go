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
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/jsonrpc"
)

// Protocol revisions.
const (
	Modern       = "2026-07-28"
	LatestLegacy = "2025-11-25"
)

// LegacyVersions are the initialize-era revisions served, oldest first.
var LegacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// Supported is every revision served, newest first.
var Supported = []string{Modern, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

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
	// List returns concrete resources allowed by g.
	List(g dispatch.Grant) []Resource
	// Read returns a resource's text, or ErrNotFound.
	Read(uri string, g dispatch.Grant) (Contents, error)
}

// Resource is one listed resource.
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
}

// Server serves one connection.
type Server struct {
	opt Options

	mu            sync.Mutex
	legacyVersion string // negotiated by initialize; "" before
	clientName    string
	inflight      map[string]context.CancelFunc
	grantPtr      uintptr
	grantScopes   []string
	grantCount    int

	wg  sync.WaitGroup
	out *jsonrpc.Writer

	serverInfo     json.RawMessage
	serverInfoMeta json.RawMessage

	conn      string      // this connection's identity, for approval tokens
	canElicit atomic.Bool // the legacy client declared form elicitation
	ready     atomic.Bool // the legacy client sent notifications/initialized
	asked     map[string]chan gjson.Result
	askSeq    int
}

// New returns a server ready to Serve.
func New(opt Options) *Server {
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	s := &Server{opt: opt, inflight: map[string]context.CancelFunc{}, asked: map[string]chan gjson.Result{}, conn: newConnID()}
	s.serverInfo, _ = json.Marshal(map[string]string{"name": generated.ServerName, "title": generated.ServerTitle, "version": opt.Version})
	s.serverInfoMeta, _ = json.Marshal(map[string]json.RawMessage{metaServerInfo: s.serverInfo})
	return s
}

// Serve reads messages from in until it closes, answering each on out. It
// returns after every answer has been written and flushed.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = jsonrpc.NewWriter(out)
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
			s.write(jsonrpc.AppendError(nil, nil, jsonrpc.NewError(jsonrpc.CodeParseError, "Parse error: "+err.Error()+"; the line was skipped")))
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
		if isResponse(line) {
			s.deliver(line) // an answer to a request of ours; never answered itself
			continue
		}
		if resp := s.handle(ctx, line, true); resp != nil {
			s.write(resp)
		}
	}
	stopWatch()
	s.wg.Wait()
	if err := s.out.Flush(); err != nil && readErr == nil {
		readErr = err
	}
	return readErr
}

func (s *Server) write(msg []byte) {
	if err := s.out.WriteLine(msg); err != nil {
		fmt.Fprintf(s.opt.Stderr, "postern: cannot write to standard output: %v\n", err)
		return
	}
	if err := s.out.Flush(); err != nil {
		fmt.Fprintf(s.opt.Stderr, "postern: cannot write to standard output: %v\n", err)
	}
}

// batch answers a JSON array of messages where the negotiated revision allows it.
func (s *Server) batch(ctx context.Context, line []byte) {
	if !gjson.ValidBytes(line) {
		s.write(jsonrpc.AppendError(nil, nil, jsonrpc.NewError(jsonrpc.CodeParseError, "Parse error: the line is not valid JSON; send one JSON-RPC message per line")))
		return
	}
	s.mu.Lock()
	v := s.legacyVersion
	s.mu.Unlock()
	items := gjson.ParseBytes(line).Array()
	if v != "2025-03-26" {
		why := "this connection has not negotiated 2025-03-26, the only revision that allows batches"
		if v != "" {
			why = "protocol revision " + v + " does not allow batches"
		}
		s.write(jsonrpc.AppendError(nil, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: "+why+"; send one message per line")))
		return
	}
	if len(items) == 0 {
		s.write(jsonrpc.AppendError(nil, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch")))
		return
	}
	var parts [][]byte
	for _, it := range items {
		if resp := s.handle(ctx, []byte(it.Raw), false); resp != nil {
			parts = append(parts, resp)
		}
	}
	if len(parts) == 0 {
		return
	}
	buf := []byte{'['}
	for i, p := range parts {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, p...)
	}
	s.write(append(buf, ']'))
}

// request is one request being answered.
type request struct {
	msg     *jsonrpc.Message
	modern  bool
	version string
	client  string
	elicit  bool // a 2026-07-28 client that declared elicitation
}

// handle answers one message. It returns the encoded response, or nil when
// there is nothing to send now (a notification, or a call answered later when
// async is true).
func (s *Server) handle(ctx context.Context, line []byte, async bool) (resp []byte) {
	msg, perr := jsonrpc.Parse(line)
	if perr != nil {
		if msg != nil && msg.ID == nil && perr.Code != jsonrpc.CodeParseError && gjson.GetBytes(line, "id").Exists() {
			// an id of a forbidden type: answer with null
			return jsonrpc.AppendError(nil, nil, perr)
		}
		if msg != nil && msg.ID == nil && msg.Method == "" && !gjson.GetBytes(line, "method").Exists() {
			return jsonrpc.AppendError(nil, nil, perr)
		}
		if msg != nil && msg.ID == nil {
			return nil // a malformed notification is not answered
		}
		var id json.RawMessage
		if msg != nil {
			id = msg.ID
		}
		return jsonrpc.AppendError(nil, id, perr)
	}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(s.opt.Stderr, "postern: panic answering %s: %v\n%s", msg.Method, p, debug.Stack())
			if msg.ID != nil {
				resp = jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: postern failed on this request and logged why on its standard error; the connection is still open"))
			} else {
				resp = nil
			}
		}
	}()
	if msg.IsNotification() {
		s.notification(msg)
		return nil
	}
	req, rerr := s.classify(msg)
	if rerr != nil {
		return jsonrpc.AppendError(nil, msg.ID, rerr)
	}
	if req.modern {
		return s.modern(ctx, req, async)
	}
	return s.legacy(ctx, req, async)
}

func (s *Server) notification(msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/initialized":
		s.mu.Lock()
		legacy := s.legacyVersion != ""
		s.mu.Unlock()
		s.ready.Store(legacy)
	case "notifications/cancelled":
		id := msg.Params.Get("requestId").Raw
		s.mu.Lock()
		cancel := s.inflight[id]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// classify decides the era of a request from its _meta (2026-07-28) or the
// connection's initialize (legacy).
func (s *Server) classify(msg *jsonrpc.Message) (*request, *jsonrpc.Error) {
	meta := msg.Meta
	if meta.Exists() && !meta.IsObject() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: _meta must be an object")
	}
	ver := meta.Get(pathVersion)
	if ver.Exists() {
		if ver.Type != gjson.String {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: _meta "+metaVersion+" must be a string")
		}
		switch {
		case ver.Str == Modern:
			return s.modernRequest(msg, meta)
		case isLegacy(ver.Str):
			// A legacy revision named in _meta: served as legacy.
		default:
			e := jsonrpc.NewError(CodeUnsupportedVersion, "Unsupported protocol version "+strconv.Quote(ver.Str)+"; use one of "+strings.Join(Supported, ", "))
			e.Data = map[string]any{"supported": Supported, "requested": ver.Str}
			return nil, e
		}
	} else if meta.Get(pathCapabilities).Exists() || meta.Get(pathClientInfo).Exists() || msg.Method == "server/discover" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: _meta must carry "+metaVersion+" (\""+Modern+"\") and "+metaCapabilities+" on every 2026-07-28 request")
	}
	s.mu.Lock()
	v, client := s.legacyVersion, s.clientName
	s.mu.Unlock()
	if v == "" && msg.Method != "initialize" && msg.Method != "ping" {
		if _, known := legacyMethods[msg.Method]; !known {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+msg.Method)
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: "+msg.Method+" carries no _meta "+metaVersion+" and no initialize came first; send initialize, or the 2026-07-28 _meta fields on every request")
	}
	return &request{msg: msg, version: v, client: client}, nil
}

func (s *Server) modernRequest(msg *jsonrpc.Message, meta gjson.Result) (*request, *jsonrpc.Error) {
	caps := meta.Get(pathCapabilities)
	if !caps.Exists() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: _meta is missing the required "+metaCapabilities+" ({} when the client has none)")
	}
	if !caps.IsObject() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: _meta "+metaCapabilities+" must be an object")
	}
	req := &request{msg: msg, modern: true, version: Modern, elicit: caps.Get("elicitation").IsObject()}
	if ci := meta.Get(pathClientInfo); ci.Exists() {
		if !ci.IsObject() || ci.Get("name").Type != gjson.String {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: _meta "+metaClientInfo+" must be an object with a name")
		}
		req.client = ci.Get("name").Str
	}
	return req, nil
}

func isLegacy(v string) bool {
	for _, l := range LegacyVersions {
		if l == v {
			return true
		}
	}
	return false
}

// legacyMethods are the methods answered after initialize.
var legacyMethods = map[string]struct{}{
	"tools/list": {}, "tools/call": {}, "resources/list": {}, "resources/templates/list": {}, "resources/read": {},
}

// removedInModern are legacy methods that 2026-07-28 dropped.
var removedInModern = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true,
}

func (s *Server) modern(ctx context.Context, req *request, async bool) []byte {
	m := req.msg
	if m.Method == "server/discover" {
		return s.result(req, s.discover(), true)
	}
	if resp, ok := s.common(ctx, req, async); ok {
		return resp
	}
	if removedInModern[m.Method] {
		return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method+" is not part of protocol "+Modern))
	}
	return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method))
}

func (s *Server) legacy(ctx context.Context, req *request, async bool) []byte {
	m := req.msg
	switch m.Method {
	case "initialize":
		return s.initialize(req)
	case "ping":
		return jsonrpc.AppendResult(nil, m.ID, json.RawMessage("{}"))
	}
	if resp, ok := s.common(ctx, req, async); ok {
		return resp
	}
	return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method))
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
		res, err = s.resources(req)
	default:
		return nil, false
	}
	if err != nil {
		return jsonrpc.AppendError(nil, m.ID, err), true
	}
	return s.result(req, res, true), true
}

func (s *Server) initialize(req *request) []byte {
	m := req.msg
	s.mu.Lock()
	already := s.legacyVersion != ""
	s.mu.Unlock()
	if already {
		return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: this connection is already initialized; start a new one to negotiate again"))
	}
	asked := m.Params.Get("protocolVersion")
	if asked.Type != gjson.String {
		return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: initialize needs protocolVersion (a string such as \""+LatestLegacy+"\")"))
	}
	v := LatestLegacy
	if isLegacy(asked.Str) {
		v = asked.Str
	}
	client := m.Params.Get("clientInfo.name").Str
	// Form elicitation: an elicitation object that is empty (form implied) or names form.
	el := m.Params.Get("capabilities.elicitation")
	canElicit := v >= "2025-06-18" && el.IsObject() && (len(el.Map()) == 0 || el.Get("form").Exists())
	s.mu.Lock()
	s.legacyVersion, s.clientName = v, client
	s.mu.Unlock()
	s.canElicit.Store(canElicit)
	info := s.serverInfo
	if v < "2025-06-18" {
		info, _ = json.Marshal(map[string]string{"name": generated.ServerName, "version": s.opt.Version})
	}
	res := map[string]any{
		"protocolVersion": v,
		"capabilities": map[string]any{
			"tools":     map[string]any{"listChanged": true},
			"resources": map[string]any{"listChanged": true, "subscribe": false},
		},
		"serverInfo":   info,
		"instructions": generated.Instructions,
	}
	b, _ := json.Marshal(res)
	return jsonrpc.AppendResult(nil, m.ID, b)
}

func (s *Server) discover() map[string]any {
	return map[string]any{
		"supportedVersions": Supported,
		"capabilities": map[string]any{
			"tools":     map[string]any{"listChanged": false},
			"resources": map[string]any{"listChanged": false, "subscribe": false},
		},
		"instructions": generated.Instructions,
		// Earlier drafts carried serverInfo in the body too; harmless to clients that read _meta.
		"serverInfo": s.serverInfo,
	}
}

// result encodes res as the answer to req, adding what 2026-07-28 requires.
func (s *Server) result(req *request, res map[string]any, cacheable bool) []byte {
	if req.modern {
		res["resultType"] = "complete"
		res["_meta"] = s.serverInfoMeta
		if cacheable {
			res["ttlMs"] = listTTL
			res["cacheScope"] = cacheScope
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return jsonrpc.AppendError(nil, req.msg.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: the answer could not be encoded: "+err.Error()))
	}
	return jsonrpc.AppendResult(nil, req.msg.ID, b)
}

// PageSize is how many tools one tools/list page holds.
const PageSize = 100

func (s *Server) toolsList(req *request) (map[string]any, *jsonrpc.Error) {
	g := s.opt.Grant()
	tools := s.opt.Registry.Allowed(g)
	start := 0
	if c := req.msg.Params.Get("cursor"); c.Exists() && c.Str != "" {
		n, ok := decodeCursor(c.Str)
		if !ok || n > len(tools) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: the cursor is not one this server gave; list again without a cursor")
		}
		start = n
	}
	end := start + PageSize
	if end > len(tools) {
		end = len(tools)
	}
	list := make([]json.RawMessage, 0, end-start)
	for _, t := range tools[start:end] {
		list = append(list, toolJSON(t, req.version))
	}
	res := map[string]any{"tools": list}
	if end < len(tools) {
		res["nextCursor"] = encodeCursor(end)
	}
	return res, nil
}

func encodeCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("tools:" + strconv.Itoa(n)))
}

func decodeCursor(c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "tools:") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "tools:"))
	return n, err == nil && n >= 0
}

var toolCache sync.Map // name+"|"+version class → json.RawMessage

// toolJSON is a tool as listed, with the fields the revision knows.
func toolJSON(t *dispatch.Tool, version string) json.RawMessage {
	class := "full"
	switch {
	case version == "2024-11-05":
		class = "2024"
	case version == "2025-03-26":
		class = "2025-03"
	}
	key := t.Spec.Name + "|" + class
	if b, ok := toolCache.Load(key); ok {
		return b.(json.RawMessage)
	}
	type annotations struct {
		Title           string `json:"title,omitempty"`
		ReadOnlyHint    bool   `json:"readOnlyHint"`
		DestructiveHint bool   `json:"destructiveHint"`
		IdempotentHint  bool   `json:"idempotentHint"`
		OpenWorldHint   bool   `json:"openWorldHint"`
	}
	type tool struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  *annotations    `json:"annotations,omitempty"`
	}
	a := t.Spec.Annotations
	out := tool{Name: t.Spec.Name, Description: t.Spec.Description, InputSchema: t.Input}
	if class != "2024" {
		out.Annotations = &annotations{Title: t.Spec.Title, ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive, IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld}
	}
	if class == "full" {
		out.Title = t.Spec.Title
		out.OutputSchema = t.Output
	}
	b, _ := json.Marshal(out)
	toolCache.Store(key, json.RawMessage(b))
	return b
}

func (s *Server) toolsCall(ctx context.Context, req *request, async bool) []byte {
	m := req.msg
	name := m.Name
	if name.Type != gjson.String || name.Str == "" {
		return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: tools/call needs params.name, the tool to call"))
	}
	if s.opt.Registry.Lookup(name.Str) == nil {
		return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Unknown tool: "+strconv.Quote(name.Str)+"; call tools/list for the tools this connection offers"))
	}
	var args json.RawMessage
	if a := m.Arguments; a.Exists() {
		args = json.RawMessage(a.Raw)
	}
	tool := s.opt.Registry.Lookup(name.Str)
	inline := !async || tool.Spec.Effect == "none"
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
		era := "legacy"
		if req.modern {
			era = "modern"
		}
		scopes, count := s.grantInfo(g)
		ci := dispatch.CallInfo{
			Era: era, ProtocolVersion: req.version, ClientName: req.client,
			Scopes: scopes, ToolCount: count, Connection: s.conn,
		}
		if !req.modern && s.canElicit.Load() {
			ci.Ask = s.ask
		}
		if req.elicit && tool.Spec.Phase != "" { // only the halves of a pair read the round
			ci.Rounds = &dispatch.Rounds{
				Answer: m.Params.Get("inputResponses." + dispatch.ApproveInput + ".action").Str,
				State:  m.Params.Get("requestState").Str,
			}
		}
		cctx = dispatch.WithInfo(cctx, ci)
		res, err := s.opt.Registry.Call(cctx, name.Str, args, g)
		if err != nil {
			return jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Unknown tool: "+strconv.Quote(name.Str)))
		}
		return s.callResult(req, res)
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
					fmt.Fprintf(s.opt.Stderr, "postern: panic in tools/call: %v\n%s", p, debug.Stack())
					resp = jsonrpc.AppendError(nil, m.ID, jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error: postern failed on this call and logged why on its standard error"))
				}
			}()
			resp = run()
		}()
		s.write(resp)
		s.opt.Registry.FlushAudit() // a call that changed something is logged at once
	}()
	return nil
}

// grantInfo returns the sorted scopes of g and how many tools they allow,
// remembered for the last grant seen (the same map while the configuration holds).
func (s *Server) grantInfo(g dispatch.Grant) ([]string, int) {
	ptr := reflect.ValueOf(g).Pointer()
	s.mu.Lock()
	defer s.mu.Unlock()
	if ptr != s.grantPtr || s.grantScopes == nil {
		s.grantPtr, s.grantScopes, s.grantCount = ptr, g.Sorted(), len(s.opt.Registry.Allowed(g))
	}
	return s.grantScopes, s.grantCount
}

// callResult encodes a tools/call answer directly: the structured result is
// already JSON and is not encoded twice.
func (s *Server) callResult(req *request, r *dispatch.Result) []byte {
	if r.InputRequests != nil && req.modern {
		b := append([]byte(`{"jsonrpc":"2.0","id":`), req.msg.ID...)
		b = append(b, `,"result":{"resultType":"input_required","inputRequests":`...)
		b = append(b, r.InputRequests...)
		b = append(b, `,"requestState":`...)
		b = jsonrpc.AppendString(b, r.RequestState)
		b = append(b, `,"_meta":`...)
		b = append(b, s.serverInfoMeta...)
		return append(b, "}}"...)
	}
	b := make([]byte, 0, 64+2*len(r.Structured)+len(r.Text))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, req.msg.ID...)
	b = append(b, `,"result":{"content":[{"type":"text","text":`...)
	b = jsonrpc.AppendString(b, r.Text)
	b = append(b, `}],"isError":`...)
	b = strconv.AppendBool(b, r.IsError)
	if r.Structured != nil && (req.modern || req.version >= "2025-06-18") {
		b = append(b, `,"structuredContent":`...)
		b = append(b, r.Structured...)
	}
	if req.modern {
		b = append(b, `,"resultType":"complete","_meta":`...)
		b = append(b, s.serverInfoMeta...)
	}
	return append(b, "}}"...)
}

func (s *Server) resources(req *request) (map[string]any, *jsonrpc.Error) {
	g := s.opt.Grant()
	switch req.msg.Method {
	case "resources/list":
		list := s.opt.Resources.List(g)
		if list == nil {
			list = []Resource{}
		}
		return map[string]any{"resources": list}, nil
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
		return map[string]any{"resourceTemplates": list}, nil
	}
	uri := req.msg.Params.Get("uri")
	if uri.Type != gjson.String {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: resources/read needs params.uri")
	}
	c, err := s.opt.Resources.Read(uri.Str, g)
	if err != nil {
		code := CodeResourceNotFound
		if req.modern {
			code = jsonrpc.CodeInvalidParams
		}
		e := jsonrpc.NewError(code, "Resource not found: "+strconv.Quote(uri.Str)+"; call resources/list for what this connection can read")
		e.Data = map[string]string{"uri": uri.Str}
		return nil, e
	}
	return map[string]any{"contents": []Contents{c}}, nil
}

// Package mcphttp serves MCP over Streamable HTTP: the same mcp.Server as standard input
// and output, one per legacy session (Mcp-Session-Id) and one per request for the stateless
// 2026-07-28 revision, behind an Origin and Host check and a bearer token. It never answers
// a request that fails those checks, and it contacts nothing.
//
// Written by hand over net/http: the official Go SDK's StreamableHTTPHandler serves only the
// SDK's own mcp.Server (its tool table, its eras), and postern's server (internal/mcp) is the
// one the catalog, scopes, masks and approvals go through; this package only moves its lines.
package mcphttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/internal/jsonrpc"
	"github.com/postern-mcp/postern/internal/mcp"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// HTTP header names.
const (
	hSession  = "Mcp-Session-Id"
	hVersion  = "Mcp-Protocol-Version"
	hMethod   = "Mcp-Method"
	hName     = "Mcp-Name"
	mimeJSON  = "application/json"
	mimeSSE   = "text/event-stream"
	idleLimit = time.Hour // a legacy session unused this long is ended when another starts
)

// CodeHeaderMismatch is the JSON-RPC error of a 2026-07-28 request whose Mcp-Method or
// Mcp-Name header is missing or does not say what its body says (SEP-2243).
const CodeHeaderMismatch = -32020

// Options configure a Handler.
type Options struct {
	// Server is what every mcp.Server is made with; ConnectionID and Poll are set per use.
	Server mcp.Options
	// Token is the bearer token every request must carry.
	Token string
	// AnyHost accepts any Host header (--listen-any); otherwise only localhost, 127.0.0.1
	// and [::1] are (DNS rebinding). The Origin header is checked either way.
	AnyHost bool
	Stderr  io.Writer
}

// Handler is the MCP endpoint.
type Handler struct {
	opt        Options
	modernConn string // the connection id of every stateless request

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
}

// New returns a handler; Close ends its sessions.
func New(opt Options) *Handler {
	if opt.Stderr == nil {
		opt.Stderr = os.Stderr
	}
	return &Handler{opt: opt, modernConn: "http-" + randomID(), sessions: map[string]*session{}}
}

// Close ends every legacy session and refuses later requests.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	ss := h.sessions
	h.sessions = map[string]*session{}
	h.mu.Unlock()
	for _, s := range ss {
		s.end()
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		httpError(w, http.StatusNotFound, "Not found: the MCP endpoint is "+Path)
		return
	}
	if msg := checkOrigin(r, h.opt.AnyHost); msg != "" {
		httpError(w, http.StatusForbidden, msg)
		return
	}
	if !checkToken(r, h.opt.Token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="postern"`)
		httpError(w, http.StatusUnauthorized, "Unauthorized: send the header Authorization: Bearer with the token postern mcp --http keeps in $XDG_CONFIG_HOME/postern/http-token")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "Method not allowed: the MCP endpoint takes POST, GET and DELETE")
	}
}

// httpError answers a request refused before any JSON-RPC message was read.
func httpError(w http.ResponseWriter, code int, msg string) {
	rpcError(w, code, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, msg))
}

// rpcError answers with a JSON-RPC error body and an HTTP status.
func rpcError(w http.ResponseWriter, code int, id json.RawMessage, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", mimeJSON)
	w.WriteHeader(code)
	w.Write(append(jsonrpc.EncodeError(id, e), '\n'))
}

// accepts reports whether the Accept header takes mime (an absent header takes anything).
func accepts(r *http.Request, mime string) bool {
	vals := r.Header.Values("Accept")
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			t, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			t = strings.TrimSpace(t)
			if t == mime || t == "*/*" || t == strings.Split(mime, "/")[0]+"/*" {
				return true
			}
		}
	}
	return false
}

// body is a POST's JSON-RPC content, read once.
type body struct {
	line   []byte           // compacted: one line for the server
	batch  bool             // a JSON array
	msg    *jsonrpc.Message // when not a batch
	ids    []string         // keys of the requests' ids (what is answered)
	method string           // a single request's method
	// errStatus is the HTTP status of an error answer with the code (nil: 200).
	errStatus func(code int64) int
}

// readBody reads and checks a POST body; on a refusal it has answered w and returns nil.
func readBody(w http.ResponseWriter, r *http.Request) *body {
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) != mimeJSON {
		httpError(w, http.StatusUnsupportedMediaType, "Unsupported Media Type: POST one JSON-RPC message (or a batch) as "+mimeJSON)
		return nil
	}
	if !accepts(r, mimeJSON) && !accepts(r, mimeSSE) {
		httpError(w, http.StatusNotAcceptable, "Not Acceptable: the answer is "+mimeJSON+" or "+mimeSSE+"; accept both")
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, jsonrpc.MaxLine+1))
	if err != nil {
		httpError(w, http.StatusBadRequest, "Bad Request: the body could not be read: "+err.Error())
		return nil
	}
	if len(raw) > jsonrpc.MaxLine {
		httpError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large: a message may be at most 8 MiB")
		return nil
	}
	var buf bytes.Buffer
	if !gjson.ValidBytes(raw) || json.Compact(&buf, raw) != nil {
		rpcError(w, http.StatusBadRequest, nil, jsonrpc.NewError(jsonrpc.CodeParseError, "Parse error: the body is not valid JSON; POST one JSON-RPC message"))
		return nil
	}
	b := &body{line: buf.Bytes()}
	root := gjson.ParseBytes(b.line)
	if root.IsArray() {
		b.batch = true
		items := root.Array()
		if len(items) == 0 {
			rpcError(w, http.StatusBadRequest, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch"))
			return nil
		}
		for _, it := range items {
			if it.Get("method").Exists() && it.Get("id").Exists() {
				b.ids = append(b.ids, "batch")
				break
			}
		}
		return b
	}
	msg, perr := jsonrpc.Parse(b.line)
	if perr != nil {
		rpcError(w, http.StatusBadRequest, nil, perr)
		return nil
	}
	b.msg = msg
	if !msg.IsResponse() && msg.ID != nil {
		b.ids = []string{idKey(msg.ID)}
		b.method = msg.Method
	}
	return b
}

// idKey names an id by its value ("a" and "\u0061" are one id; 1 and "1" two).
func idKey(id json.RawMessage) string {
	v := gjson.ParseBytes(id)
	if v.Type == gjson.String {
		return "s" + v.Str
	}
	return "n" + v.Raw
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	b := readBody(w, r)
	if b == nil {
		return
	}
	if sid := r.Header.Get(hSession); sid != "" {
		s := h.session(sid)
		if s == nil {
			httpError(w, http.StatusNotFound, "Not found: no session "+sid+" (it ended or never was); send initialize without "+hSession+" to start a new one")
			return
		}
		if !checkLegacyVersion(w, r) {
			return
		}
		s.post(w, r, b)
		return
	}
	hv := strings.TrimSpace(r.Header.Get(hVersion))
	if !b.batch && b.method == "initialize" && hv != mcp.Modern {
		if !checkLegacyVersion(w, r) {
			return
		}
		s := h.newSession()
		if s == nil {
			httpError(w, http.StatusServiceUnavailable, "Service Unavailable: the server is shutting down")
			return
		}
		s.post(w, r, b)
		return
	}
	// Without a session, a request names its revision in _meta (2026-07-28, or one the server
	// refuses with the list it serves) or in the header.
	if hv != "" || (!b.batch && gjson.GetBytes(b.line, metaVersionPath).Exists()) {
		h.stateless(w, r, b)
		return
	}
	var id json.RawMessage
	if b.msg != nil {
		id = b.msg.ID
	}
	rpcError(w, http.StatusBadRequest, id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"Bad Request: no "+hSession+" header; send initialize first and that header on every later request, or the "+mcp.Modern+" _meta on every request"))
}

// checkLegacyVersion refuses a Mcp-Protocol-Version header naming no revision served.
func checkLegacyVersion(w http.ResponseWriter, r *http.Request) bool {
	v := strings.TrimSpace(r.Header.Get(hVersion))
	if v == "" {
		return true
	}
	for _, s := range mcp.LegacyVersions {
		if v == s {
			return true
		}
	}
	rpcError(w, http.StatusBadRequest, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
		"Bad Request: "+hVersion+" "+v+" is not a revision this session serves; use one of "+strings.Join(mcp.LegacyVersions, ", ")+" (or "+mcp.Modern+" without a session)"))
	return false
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hSession)
	if sid == "" {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, "Method not allowed: a GET stream belongs to a session (send "+hSession+"); "+mcp.Modern+" has none, POST subscriptions/listen instead")
		return
	}
	s := h.session(sid)
	if s == nil {
		httpError(w, http.StatusNotFound, "Not found: no session "+sid+" (it ended or never was); send initialize without "+hSession+" to start a new one")
		return
	}
	if !accepts(r, mimeSSE) {
		httpError(w, http.StatusNotAcceptable, "Not Acceptable: the GET stream is "+mimeSSE+"; accept it")
		return
	}
	s.listen(w, r)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(hSession)
	if sid == "" {
		httpError(w, http.StatusBadRequest, "Bad Request: DELETE ends a session; send its "+hSession)
		return
	}
	h.mu.Lock()
	s := h.sessions[sid]
	delete(h.sessions, sid)
	h.mu.Unlock()
	if s == nil {
		httpError(w, http.StatusNotFound, "Not found: no session "+sid+" (it ended or never was)")
		return
	}
	s.end()
	w.WriteHeader(http.StatusNoContent)
}

// session returns the open session sid, or nil.
func (h *Handler) session(sid string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[sid]
	if s != nil {
		s.touch()
	}
	return s
}

// newSession starts a legacy session, ending those idle for idleLimit; nil once closed.
func (h *Handler) newSession() *session {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	var idle []*session
	for id, s := range h.sessions {
		if s.idleSince() > idleLimit {
			idle = append(idle, s)
			delete(h.sessions, id)
		}
	}
	s := startSession(h.opt.Server, h.opt.Stderr)
	s.failInit = func() {
		h.mu.Lock()
		delete(h.sessions, s.id)
		h.mu.Unlock()
		go s.end()
	}
	h.sessions[s.id] = s
	h.mu.Unlock()
	for _, o := range idle {
		o.end()
	}
	return s
}

package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/jsonrpc"
)

// A client may ask to be told when a resource it read changes: a legacy client with
// resources/subscribe (initialize announces resources.subscribe), a 2026-07-28 client with a
// subscriptions/listen request that stays open (SEP-2575: the server first sends
// notifications/subscriptions/acknowledged with what it honours, then every notification it
// opted in to, each carrying the listen request's id in _meta, and answers the request only
// when it ends the stream; a notifications/cancelled for the request ends it with no answer).
//
// A sync may run in another process (postern sync) or through mail_sync, so the server does
// not wait to be told: while anything is subscribed, the watch of lists.go asks
// Resources.Digest for every subscribed URI at each Poll and sends
// notifications/resources/updated {uri} to its subscribers when the digest differs from the
// last one. Nothing is computed while nothing is subscribed. A URI is accepted whatever its
// id, as long as a template of the grant expands it, so a subscription never tells whether a
// thing is there; a thing this connection may not see has the digest of one not there.

// metaSubscriptionID is the _meta key that ties a notification to its listen request.
const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// subscriptions is what a connection is subscribed to.
type subscriptions struct {
	mu      sync.Mutex
	legacy  map[string]bool          // URIs of resources/subscribe
	listens map[string]*listenStream // open subscriptions/listen requests, by id as sent
	digests map[string]string        // URI → its digest at the last look
}

// listenStream is one open subscriptions/listen request.
type listenStream struct {
	id               json.RawMessage
	tools, resources bool            // toolsListChanged, resourcesListChanged
	uris             map[string]bool // resourceSubscriptions honoured
}

// subscribable says whether a template g allows expands uri.
func subscribable(uri string, g dispatch.Grant) bool {
	for _, r := range generated.Resources {
		prefix, _, _ := strings.Cut(r.URITemplate, "{")
		if v, ok := strings.CutPrefix(uri, prefix); ok && v != "" && g[r.Scope] {
			return true
		}
	}
	return false
}

// watchCtx is the context a digest or list is computed in between requests.
func (s *Server) watchCtx() (context.Context, dispatch.Grant) {
	g := s.opt.Grant()
	s.mu.Lock()
	rev, client := s.negotiated, s.clientName
	s.mu.Unlock()
	if rev == nil {
		rev = lookupRevision(Modern)
	}
	return dispatch.WithInfo(context.Background(), s.callInfo(&request{rev: rev, client: client}, g)), g
}

// remember records uri's digest now, when nothing has yet: the state a change is seen against.
func (s *Server) remember(ctx context.Context, g dispatch.Grant, uris []string) {
	for _, uri := range uris {
		s.subs.mu.Lock()
		_, known := s.subs.digests[uri]
		s.subs.mu.Unlock()
		if known || s.opt.Resources == nil {
			continue
		}
		d := s.opt.Resources.Digest(ctx, uri, g)
		s.subs.mu.Lock()
		if s.subs.digests == nil {
			s.subs.digests = map[string]string{}
		}
		if _, known := s.subs.digests[uri]; !known {
			s.subs.digests[uri] = d
		}
		s.subs.mu.Unlock()
	}
}

// forgetUnwatched drops the digests of URIs no one is subscribed to any more. s.subs.mu is held.
func (s *Server) forgetUnwatched() {
	for uri := range s.subs.digests {
		if !s.subs.watchedLocked(uri) {
			delete(s.subs.digests, uri)
		}
	}
}

func (w *subscriptions) watchedLocked(uri string) bool {
	if w.legacy[uri] {
		return true
	}
	for _, l := range w.listens {
		if l.uris[uri] {
			return true
		}
	}
	return false
}

// subscribe answers resources/subscribe and resources/unsubscribe.
func (s *Server) subscribe(ctx context.Context, req *request) []byte {
	uri := req.params.Get("uri")
	if uri.Type != gjson.String || uri.Str == "" {
		return errorAnswer(req, protocolError(jsonrpc.CodeInvalidParams, "Invalid params: "+req.msg.Method+" needs params.uri, the resource's URI"))
	}
	if req.msg.Method == "resources/unsubscribe" {
		s.subs.mu.Lock()
		delete(s.subs.legacy, uri.Str)
		s.forgetUnwatched()
		s.subs.mu.Unlock()
		return s.result(req, map[string]any{}, false)
	}
	g := s.opt.Grant()
	if !subscribable(uri.Str, g) {
		return errorAnswer(req, notFoundError(req, uri.Str, ErrNotFound))
	}
	s.remember(dispatch.WithInfo(ctx, s.callInfo(req, g)), g, []string{uri.Str})
	s.subs.mu.Lock()
	if s.subs.legacy == nil {
		s.subs.legacy = map[string]bool{}
	}
	s.subs.legacy[uri.Str] = true
	s.subs.mu.Unlock()
	return s.result(req, map[string]any{}, false)
}

// listen answers subscriptions/listen: the acknowledgement now, the answer when the stream ends.
func (s *Server) listen(ctx context.Context, req *request) []byte {
	n := req.params.Get("notifications")
	if !n.IsObject() {
		return errorAnswer(req, protocolError(jsonrpc.CodeInvalidParams, "Invalid params: subscriptions/listen needs params.notifications, an object naming what to be told (toolsListChanged, resourcesListChanged, resourceSubscriptions)"))
	}
	g := s.opt.Grant()
	ls := &listenStream{
		id:        append(json.RawMessage(nil), req.msg.ID...),
		tools:     n.Get("toolsListChanged").Bool(),
		resources: n.Get("resourcesListChanged").Bool(),
		uris:      map[string]bool{},
	}
	honoured := []string{}
	for _, u := range n.Get("resourceSubscriptions").Array() {
		if u.Type == gjson.String && subscribable(u.Str, g) && !ls.uris[u.Str] {
			ls.uris[u.Str] = true
			honoured = append(honoured, u.Str)
		}
	}
	ack := map[string]any{}
	if ls.tools {
		ack["toolsListChanged"] = true
	}
	if ls.resources {
		ack["resourcesListChanged"] = true
	}
	if len(honoured) > 0 {
		ack["resourceSubscriptions"] = honoured
	}
	s.notifyParams("notifications/subscriptions/acknowledged", map[string]any{"notifications": ack}, ls.id)
	if len(ack) == 0 {
		return s.listenResult(ls.id) // nothing to tell: the stream ends at once
	}
	s.remember(dispatch.WithInfo(ctx, s.callInfo(req, g)), g, honoured)
	s.subs.mu.Lock()
	if s.subs.listens == nil {
		s.subs.listens = map[string]*listenStream{}
	}
	s.subs.listens[string(ls.id)] = ls
	s.subs.mu.Unlock()
	return nil
}

// listenResult is the answer that ends the listen stream id.
func (s *Server) listenResult(id json.RawMessage) []byte {
	b, _ := jsonrpc.EncodeResult(id, map[string]any{
		"resultType": "complete",
		"_meta":      map[string]any{metaServerInfo: s.serverInfo, metaSubscriptionID: id},
	})
	return b
}

// cancelListen ends the listen stream whose request id is id (as the client wrote it), with no answer.
func (s *Server) cancelListen(id string) {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if _, ok := s.subs.listens[id]; ok {
		delete(s.subs.listens, id)
		s.forgetUnwatched()
	}
}

// endListens answers every open listen stream: the connection is closing.
func (s *Server) endListens() {
	s.subs.mu.Lock()
	ls := s.subs.listens
	s.subs.listens = nil
	s.subs.mu.Unlock()
	for _, l := range ls {
		s.write(s.listenResult(l.id))
	}
}

// notifyParams sends a notification with params, tied to the listen stream id when id is set.
func (s *Server) notifyParams(method string, params map[string]any, id json.RawMessage) {
	if id != nil {
		params["_meta"] = map[string]any{metaSubscriptionID: id}
	}
	if err := s.conn.Notify(method, params); err != nil {
		s.logf("postern: cannot write to standard output: %v", err)
	}
}

// tellListens sends the list changes to the listen streams that asked for them.
func (s *Server) tellListens(tools, resources bool) {
	if !tools && !resources {
		return
	}
	s.subs.mu.Lock()
	var toTools, toRes []json.RawMessage
	for _, l := range s.subs.listens {
		if tools && l.tools {
			toTools = append(toTools, l.id)
		}
		if resources && l.resources {
			toRes = append(toRes, l.id)
		}
	}
	s.subs.mu.Unlock()
	for _, id := range toTools {
		s.notifyParams("notifications/tools/list_changed", map[string]any{}, id)
	}
	for _, id := range toRes {
		s.notifyParams("notifications/resources/list_changed", map[string]any{}, id)
	}
}

// watchResources looks at every subscribed URI and tells its subscribers when it changed;
// legacy says a legacy client may be told now (it sent notifications/initialized).
func (s *Server) watchResources(legacy bool) {
	if s.opt.Resources == nil {
		return
	}
	s.subs.mu.Lock()
	var uris []string
	for uri := range s.subs.digests {
		uris = append(uris, uri)
	}
	s.subs.mu.Unlock()
	if len(uris) == 0 {
		return
	}
	ctx, g := s.watchCtx()
	for _, uri := range uris {
		d := s.opt.Resources.Digest(ctx, uri, g)
		s.subs.mu.Lock()
		old, known := s.subs.digests[uri]
		if !known || old == d { // unsubscribed meanwhile, or unchanged
			s.subs.mu.Unlock()
			continue
		}
		s.subs.digests[uri] = d
		tellLegacy := legacy && s.subs.legacy[uri]
		var ids []json.RawMessage
		for _, l := range s.subs.listens {
			if l.uris[uri] {
				ids = append(ids, l.id)
			}
		}
		s.subs.mu.Unlock()
		if tellLegacy {
			s.notifyParams("notifications/resources/updated", map[string]any{"uri": uri}, nil)
		}
		for _, id := range ids {
			s.notifyParams("notifications/resources/updated", map[string]any{"uri": uri}, id)
		}
	}
}

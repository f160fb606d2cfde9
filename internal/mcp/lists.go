package mcp

import (
	"strings"
	"sync"
	"time"

	"github.com/postern-mcp/postern/generated"
)

// Which tools and resources a connection is offered follows the granted scopes, and those follow
// the configuration, which a person may edit while a host stays connected for days. A legacy
// client is told when its lists changed (initialize announces listChanged), so that it lists
// again instead of offering the agent tools it no longer has, or hiding the ones just granted.
// A 2026-07-28 client holds no session to tell: its list results carry ttlMs and a private
// cacheScope, so it lists again within a minute; a call of a tool the grant no longer has is
// refused whatever the client cached, and one that keeps a subscriptions/listen stream open is
// told there (subscribe.go). The same look asks for the digests of subscribed resources.

// listKeys returns what the tool list and the resource lists hold now, each as one string.
func (s *Server) listKeys() (tools, resources string) {
	ctx, g := s.watchCtx()
	var b strings.Builder
	for _, t := range s.opt.Registry.Allowed(g) {
		b.WriteString(t.Spec.Name)
		b.WriteByte('\n')
	}
	// A client that can ask the person is offered each pair as one tool, unless the
	// approval mode is host, which the configuration may change too.
	if !s.opt.Registry.OneCall(true) {
		b.WriteString("(pairs as two tools)\n")
	}
	tools = b.String()
	b.Reset()
	if s.opt.Resources != nil {
		for _, r := range s.opt.Resources.List(ctx, g) {
			b.WriteString(r.URI)
			b.WriteByte('\n')
		}
	}
	for _, r := range generated.Resources {
		if g[r.Scope] {
			b.WriteString(r.URITemplate)
			b.WriteByte('\n')
		}
	}
	return tools, b.String()
}

// watchLists looks at the lists every Poll and, once a legacy client has sent notifications/initialized, sends
// notifications/tools/list_changed or notifications/resources/list_changed when one differs
// from what it was at the last look. The returned function stops it; calling it again is
// harmless.
func (s *Server) watchLists() (stop func()) {
	every := s.opt.Poll
	if every == 0 {
		every = time.Second
	}
	if every < 0 || s.opt.Grant == nil || s.opt.Registry == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	lastTools, lastRes := s.listKeys()
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			s.look(&lastTools, &lastRes)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
		})
	}
}

// look is one look of watchLists: it tells what changed since *lastTools and *lastRes, and
// sets them. A panic while a list or digest is computed is logged; the next look tries again.
func (s *Server) look(lastTools, lastRes *string) {
	defer func() {
		if p := recover(); p != nil {
			s.logPanic("looking for changes", p)
		}
	}()
	tools, res := s.listKeys()
	toolsChanged, resChanged := tools != *lastTools, res != *lastRes
	*lastTools, *lastRes = tools, res
	// A legacy client is told once it sent notifications/initialized; before, a later
	// initialize lists afresh.
	legacy := s.ready.Load()
	if legacy && toolsChanged {
		s.notify("notifications/tools/list_changed")
	}
	if legacy && resChanged {
		s.notify("notifications/resources/list_changed")
	}
	s.tellListens(toolsChanged, resChanged)
	s.watchResources(legacy)
}

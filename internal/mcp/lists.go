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
// refused whatever the client cached.

// listKeys returns what the tool list and the resource lists hold now, each as one string.
func (s *Server) listKeys() (tools, resources string) {
	g := s.opt.Grant()
	var b strings.Builder
	for _, t := range s.opt.Registry.Allowed(g) {
		b.WriteString(t.Spec.Name)
		b.WriteByte('\n')
	}
	tools = b.String()
	b.Reset()
	if s.opt.Resources != nil {
		for _, r := range s.opt.Resources.List(g) {
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
			tools, res := s.listKeys()
			if !s.ready.Load() {
				lastTools, lastRes = tools, res // nothing to tell; a later initialize lists afresh
				continue
			}
			if tools != lastTools {
				s.notify("notifications/tools/list_changed")
			}
			if res != lastRes {
				s.notify("notifications/resources/list_changed")
			}
			lastTools, lastRes = tools, res
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

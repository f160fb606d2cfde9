package mcp_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/mcp"
)

// expectNone fails when the server writes anything within d.
func (s *session) expectNone(d time.Duration, why string) {
	s.t.Helper()
	select {
	case l := <-s.lines:
		s.t.Fatalf("%s, but the server wrote %s", why, l)
	case <-time.After(d):
	}
}

// TestLegacySubscribe: a subscribed URI gets notifications/resources/updated when its digest
// changes, an unsubscribed one none, and unsubscribing stops them.
func TestLegacySubscribe(t *testing.T) {
	s := serve(t, func(o *mcp.Options) { o.Poll = 5 * time.Millisecond })
	init := s.initialize("2025-11-25", nil)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	caps := init["capabilities"].(map[string]any)
	if caps["resources"].(map[string]any)["subscribe"] != true {
		t.Fatalf("initialize does not announce resources.subscribe: %v", caps)
	}
	sub, other := "postern://thread/msub1", "postern://thread/mother1"
	digests.Store(sub, "a")
	digests.Store(other, "a")
	defer digests.Delete(sub)
	defer digests.Delete(other)
	if r := s.rpc(1, "resources/subscribe", map[string]any{"uri": sub}); r["result"] == nil {
		t.Fatalf("subscribe: %v", r)
	}
	// A URI no template expands is not found; one with no uri is invalid.
	if r := s.rpc(2, "resources/subscribe", map[string]any{"uri": "postern://nothing/x"}); fmt.Sprint(r["error"].(map[string]any)["code"]) != fmt.Sprint(mcp.CodeResourceNotFound) {
		t.Fatalf("subscribe to nothing: %v", r)
	}
	if r := s.rpc(3, "resources/subscribe", map[string]any{}); fmt.Sprint(r["error"].(map[string]any)["code"]) != "-32602" {
		t.Fatalf("subscribe without uri: %v", r)
	}
	s.expectNone(50*time.Millisecond, "nothing changed")
	digests.Store(other, "b") // not subscribed
	s.expectNone(50*time.Millisecond, "only an unsubscribed URI changed")
	digests.Store(sub, "b")
	n := s.recv()
	if n["method"] != "notifications/resources/updated" || n["params"].(map[string]any)["uri"] != sub {
		t.Fatalf("want resources/updated for %s, got %v", sub, n)
	}
	s.expectNone(50*time.Millisecond, "nothing changed since the last notification")
	if r := s.rpc(4, "resources/unsubscribe", map[string]any{"uri": sub}); r["result"] == nil {
		t.Fatalf("unsubscribe: %v", r)
	}
	digests.Store(sub, "c")
	s.expectNone(50*time.Millisecond, "the URI was unsubscribed")
}

// TestListenStream: a 2026-07-28 subscriptions/listen is acknowledged with what is honoured,
// gets resources/updated tied to its id, and a notifications/cancelled ends it with no answer.
func TestListenStream(t *testing.T) {
	s := serve(t, func(o *mcp.Options) { o.Poll = 5 * time.Millisecond })
	uri := "postern://thread/mlisten1"
	digests.Store(uri, "a")
	defer digests.Delete(uri)
	s.send(`{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":` + mustJSON(modern(map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{uri, "postern://nothing/x"}, "resourcesListChanged": true},
	})) + `}`)
	ack := s.recv()
	an, _ := ack["params"].(map[string]any)
	meta, _ := an["_meta"].(map[string]any)
	if ack["method"] != "notifications/subscriptions/acknowledged" || meta["io.modelcontextprotocol/subscriptionId"] != "L1" ||
		fmt.Sprint(an["notifications"]) != fmt.Sprint(map[string]any{"resourceSubscriptions": []any{uri}, "resourcesListChanged": true}) {
		t.Fatalf("acknowledgement: %v", ack)
	}
	s.expectNone(50*time.Millisecond, "nothing changed")
	digests.Store(uri, "b")
	n := s.recv()
	np, _ := n["params"].(map[string]any)
	nm, _ := np["_meta"].(map[string]any)
	if n["method"] != "notifications/resources/updated" || np["uri"] != uri || nm["io.modelcontextprotocol/subscriptionId"] != "L1" {
		t.Fatalf("want resources/updated for %s on L1, got %v", uri, n)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}`)
	time.Sleep(20 * time.Millisecond)
	digests.Store(uri, "c")
	s.expectNone(50*time.Millisecond, "the stream was cancelled")
	// A stream with nothing to tell ends at once.
	s.send(`{"jsonrpc":"2.0","id":"L2","method":"subscriptions/listen","params":` + mustJSON(modern(map[string]any{"notifications": map[string]any{}})) + `}`)
	if ack := s.recv(); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("acknowledgement: %v", ack)
	}
	if r := s.recv(); r["id"] != "L2" || r["result"].(map[string]any)["resultType"] != "complete" {
		t.Fatalf("an empty stream's answer: %v", r)
	}
	// An open stream is answered when the connection closes.
	s.send(`{"jsonrpc":"2.0","id":"L3","method":"subscriptions/listen","params":` + mustJSON(modern(map[string]any{"notifications": map[string]any{"toolsListChanged": true}})) + `}`)
	s.recv() // acknowledged
	s.in.Close()
	if r := s.recv(); r["id"] != "L3" || r["result"] == nil {
		t.Fatalf("the open stream's answer at close: %v", r)
	}
}

// TestResourceRefusalSentence: a refusal's sentence is the not-found error's message.
func TestResourceRefusalSentence(t *testing.T) {
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			s := serve(t, nil)
			s.initialize(version, nil)
			r := s.rpc(1, "resources/read", map[string]any{"uri": "postern://thread/m1"})
			e, _ := r["error"].(map[string]any)
			if fmt.Sprint(e["code"]) != fmt.Sprint(mcp.CodeResourceNotFound) || e["message"] != "There is no such message here." {
				t.Fatalf("a refused read: %v", r)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

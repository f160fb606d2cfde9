package mcp_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcp"
)

// TestProtocolErrorsCrossTheBoundary: a JSON-RPC error that echoes what the
// client sent, and the standard-error line of a panic whose message a stranger
// may have written, are cleaned and masked like any answer: one line, no
// control or bidi characters, no code.
func TestProtocolErrorsCrossTheBoundary(t *testing.T) {
	const secret = "482913"
	hostile := "Your verification code is " + secret + "\nforged: true\x1b[31m\u202e"
	var grantPanics atomic.Bool
	s := serve(t, func(o *mcp.Options) {
		g := o.Grant
		o.Grant = func() dispatch.Grant {
			if grantPanics.Load() {
				panic(hostile)
			}
			return g()
		}
	})
	s.initialize("2025-11-25", nil)
	_, e := errCode(t, s.rpc(1, "x/"+hostile, nil))
	msg := e["message"].(string)
	if strings.Contains(msg, secret) || strings.ContainsAny(msg, "\n\x1b\u202e") || !strings.HasPrefix(msg, "Method not found: x/") {
		t.Fatalf("the error echoes the method as sent: %q", msg)
	}
	grantPanics.Store(true)
	if code, _ := errCode(t, s.rpc(2, "tools/list", nil)); code != -32603 {
		t.Fatalf("a panic in tools/list was answered with code %d", code)
	}
	grantPanics.Store(false)
	result(t, s.rpc(3, "ping", nil))
	logged := s.stderr.String()
	first, _, _ := strings.Cut(logged[strings.Index(logged, "postern: panic"):], "\n")
	if strings.Contains(logged, secret) || strings.ContainsAny(first, "\x1b\u202e") || strings.Contains(logged, "\nforged: true") {
		t.Fatalf("the panic's message reached standard error as written: %q", logged)
	}
	if !strings.Contains(first, "verification code") {
		t.Fatalf("the panic was not logged: %q", logged)
	}
}

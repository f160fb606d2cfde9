// Package mcptest holds what tests that drive an MCP server as a client share: building a
// request line, picking the result or error out of an answer, the 2026-07-28 _meta, and a
// buffer a server goroutine may write while the test reads it.
//
// It is for tests only: no non-test code may import it. It knows JSON-RPC and MCP only as a
// client sees them on the wire and imports nothing of postern, so the code it checks never
// checks itself.
package mcptest

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
)

// Request is the JSON-RPC request line (without its newline) asking method with params;
// nil params leave the member out.
func Request(id any, method string, params any) string {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	if err != nil {
		panic("mcptest: the request cannot be encoded: " + err.Error())
	}
	return string(b)
}

// Result returns the answer's result object, failing the test when there is none.
func Result(t testing.TB, resp map[string]any) map[string]any {
	t.Helper()
	r, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", resp)
	}
	return r
}

// ErrCode returns the answer's error code and error object, failing the test when there is
// no error.
func ErrCode(t testing.TB, resp map[string]any) (int, map[string]any) {
	t.Helper()
	e, ok := resp["error"].(map[string]any)
	if !ok {
		t.Fatalf("expected an error, got %v", resp)
	}
	code, ok := e["code"].(float64)
	if !ok {
		t.Fatalf("the error has no numeric code: %v", resp)
	}
	return int(code), e
}

// Meta is the _meta a 2026-07-28 request carries: the protocol version, empty client
// capabilities and a client called client.
func Meta(version, client string) map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": client, "version": "1"},
	}
}

// Buffer is a bytes.Buffer safe for a writer goroutine and a reader.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

package mcp

import (
	"fmt"
	"runtime/debug"

	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/jsonrpc"
)

// protocolError is a JSON-RPC error whose message crosses the answer boundary
// like every other string postern sends: what the client wrote into it (a
// method or tool name) is cleaned and masked as one line.
func protocolError(code int, msg string) *jsonrpc.Error {
	return jsonrpc.NewError(code, answer.Line(msg))
}

// logf writes one line to standard error, where a person or a host's log reads
// it: the line is cleaned and masked first, so a value a stranger or a client
// wrote (a panic's message, a method name) can neither carry a secret out nor
// forge a line of its own.
func (s *Server) logf(format string, args ...any) {
	fmt.Fprintln(s.opt.Stderr, answer.Line(fmt.Sprintf(format, args...)))
}

// logPanic logs a recovered panic: its message through the boundary, then the
// goroutine's stack (postern's own function names and offsets, nothing a
// stranger wrote) so that the failure can be reported.
func (s *Server) logPanic(where string, p any) {
	s.logf("postern: panic %s: %v", where, p)
	s.opt.Stderr.Write(debug.Stack())
}

package mcphttp

import (
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/internal/jsonrpc"
	"github.com/postern-mcp/postern/internal/mcp"
)

// 2026-07-28 is stateless: every request carries its revision and capabilities in _meta, so
// each is served by a server of its own that ends with it (no session, no GET stream). An
// approval is an input_required result the client answers on a later request, which another
// server redeems: they share one connection id (Handler.modernConn), the binding the token
// was made for. subscriptions/listen is the one request that stays open; its notifications
// stream on its own response.

// metaVersionPath is the gjson path to a request's _meta protocol version.
const metaVersionPath = `params._meta.io\.modelcontextprotocol/protocolVersion`

// isModern says whether a request without a session is of 2026-07-28: its
// Mcp-Protocol-Version header or its _meta says so.
func isModern(r *http.Request, b *body) bool {
	if strings.TrimSpace(r.Header.Get(hVersion)) == mcp.Modern {
		return true
	}
	if b.batch {
		return false
	}
	return gjson.GetBytes(b.line, metaVersionPath).Str == mcp.Modern
}

// namedBy are the methods whose Mcp-Name header mirrors a member of params.
var namedBy = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

// checkHeaders refuses a 2026-07-28 request whose headers do not say what its body says
// (SEP-2243): Mcp-Method on every request, Mcp-Name on the methods that name a target, and
// Mcp-Protocol-Version, when sent, the revision of the body's _meta.
func checkHeaders(r *http.Request, b *body) *jsonrpc.Error {
	mismatch := func(msg string) *jsonrpc.Error {
		return jsonrpc.NewError(CodeHeaderMismatch, "Header mismatch: "+msg)
	}
	if b.msg.IsResponse() {
		return nil
	}
	if hv := strings.TrimSpace(r.Header.Get(hVersion)); hv != "" {
		if bv := gjson.GetBytes(b.line, metaVersionPath); bv.Exists() && bv.Str != hv {
			return mismatch(hVersion + " is " + hv + " but the body's _meta names " + bv.Str + "; send the same revision in both")
		}
	}
	m, ok := headerValue(r, hMethod)
	switch {
	case !ok:
		return mismatch("the " + hMethod + " header is missing; send the body's method (" + b.msg.Method + ") in it")
	case m != b.msg.Method:
		return mismatch(hMethod + " is " + m + " but the body's method is " + b.msg.Method + "; send the same in both")
	}
	member, named := namedBy[b.msg.Method]
	if !named {
		return nil
	}
	want := gjson.GetBytes(b.msg.Params, member)
	if want.Type != gjson.String {
		return nil // the server refuses the missing member itself
	}
	n, ok := headerValue(r, hName)
	switch {
	case !ok:
		return mismatch("the " + hName + " header is missing; send params." + member + " (" + want.Str + ") in it")
	case n != want.Str:
		return mismatch(hName + " is " + n + " but params." + member + " is " + want.Str + "; send the same in both")
	}
	return nil
}

// headerValue is a header's value without surrounding white space, and whether it was sent.
func headerValue(r *http.Request, name string) (string, bool) {
	vals := r.Header.Values(name)
	if len(vals) == 0 {
		return "", false
	}
	return strings.TrimSpace(vals[0]), true
}

// statelessStatus is the HTTP status of a 2026-07-28 error answer: 404 for a method not
// served, 400 for a request that is not one the revision allows (its _meta incomplete, its
// version, a capability it did not declare), else 200 with the error in the body.
func statelessStatus(code int64, badMeta bool) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidRequest, mcp.CodeUnsupportedVersion, codeMissingCapability:
		return http.StatusBadRequest
	case jsonrpc.CodeInvalidParams:
		if badMeta { // the answer says which _meta member is missing
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}

// codeMissingCapability is MissingRequiredClientCapabilityError.
const codeMissingCapability = -32021

// stateless serves one 2026-07-28 request on a server of its own.
func (h *Handler) stateless(w http.ResponseWriter, r *http.Request, b *body) {
	if b.batch {
		rpcError(w, http.StatusBadRequest, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: protocol "+mcp.Modern+" does not allow batches; POST one message per request"))
		return
	}
	if e := checkHeaders(r, b); e != nil {
		rpcError(w, http.StatusBadRequest, b.msg.ID, e)
		return
	}
	if len(b.ids) == 0 {
		// A notification or an answer: a stateless server has nothing that waits for one
		// (a request ends when its HTTP request does).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	meta := gjson.GetBytes(b.line, "params._meta")
	badMeta := !meta.Get(`io\.modelcontextprotocol/protocolVersion`).Exists() || !meta.Get(`io\.modelcontextprotocol/clientCapabilities`).Exists()
	b.errStatus = func(code int64) int { return statelessStatus(code, badMeta) }
	opt := h.opt.Server
	opt.ConnectionID = h.modernConn
	if b.method != "subscriptions/listen" {
		opt.Poll = -1 // nothing to watch once the answer is out
	}
	s := runSession(&session{stateless: true}, opt, h.opt.Stderr)
	defer s.end()
	s.post(w, r, b)
}

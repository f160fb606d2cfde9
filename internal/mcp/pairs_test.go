package mcp_test

import (
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/testing/mcptest"
)

// TestPairsListed: a client that can ask the person (legacy form elicitation, or a
// 2026-07-28 request that declares elicitation) is offered mail_send as one tool with the
// commit's annotations and output, and no mail_send_commit; a client that cannot, and any
// client in host mode, both halves; the status tool counts what was offered.
func TestPairsListed(t *testing.T) {
	grant := dispatch.Grant{generated.ScopeRead: true, generated.ScopeMailSend: true}
	for _, c := range []struct {
		name, mode string
		legacyCaps map[string]any // nil: 2026-07-28
		modernCaps map[string]any
		oneCall    bool
	}{
		{"legacy, form elicitation", approval.ModeTerminal, map[string]any{"elicitation": map[string]any{}}, nil, true},
		{"legacy, url elicitation only", approval.ModeTerminal, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, nil, false},
		{"legacy, no elicitation", approval.ModeTerminal, map[string]any{}, nil, false},
		{"legacy, host mode", approval.ModeHost, map[string]any{"elicitation": map[string]any{}}, nil, false},
		{"modern, elicitation", approval.ModeTerminal, nil, map[string]any{"elicitation": map[string]any{}}, true},
		{"modern, none", approval.ModeTerminal, nil, map[string]any{}, false},
		{"modern, host mode", approval.ModeHost, nil, map[string]any{"elicitation": map[string]any{}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := serve(t, func(o *mcp.Options) {
				tokens, _ := approval.New(0, nil)
				o.Registry.SetApprovals(&approval.Config{Tokens: tokens, Mode: func() string { return c.mode }})
			})
			s.grant.Store(&grant)
			var list, status map[string]any
			if c.legacyCaps != nil {
				s.initialize("2025-11-25", c.legacyCaps)
				list = result(t, s.rpc(1, "tools/list", nil))
				status = result(t, s.rpc(2, "tools/call", map[string]any{"name": generated.ToolStatus}))
			} else {
				meta := mcptest.Meta(mcp.Modern, "inproc-modern")
				meta["io.modelcontextprotocol/clientCapabilities"] = c.modernCaps
				list = result(t, s.rpc(1, "tools/list", map[string]any{"_meta": meta}))
				status = result(t, s.rpc(2, "tools/call", map[string]any{"_meta": meta, "name": generated.ToolStatus}))
			}
			tools := map[string]map[string]any{}
			for _, tv := range list["tools"].([]any) {
				tool := tv.(map[string]any)
				tools[tool["name"].(string)] = tool
			}
			send, commit := tools[generated.ToolMailSend], tools[generated.ToolMailSendCommit]
			if send == nil {
				t.Fatalf("mail_send not listed: %v", list)
			}
			ann := send["annotations"].(map[string]any)
			out, _ := send["outputSchema"].(map[string]any)
			props, _ := out["properties"].(map[string]any)
			_, hasToken := props["token"]
			if c.oneCall {
				if commit != nil || ann["readOnlyHint"] != false || ann["destructiveHint"] != true || hasToken {
					t.Fatalf("one call: commit listed %v, annotations %v, output has a token %v", commit != nil, ann, hasToken)
				}
			} else if commit == nil || ann["readOnlyHint"] != true || !hasToken {
				t.Fatalf("two calls: commit listed %v, annotations %v, output has a token %v", commit != nil, ann, hasToken)
			}
			if n := status["structuredContent"].(map[string]any)["tool_count"].(float64); int(n) != len(tools) {
				t.Fatalf("status counts %v tools, the list has %d", n, len(tools))
			}
		})
	}
}

package mcp_test

import (
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/mcp"
)

// TestReplacedToolNamesItsReplacement: a tool that was renamed or merged is
// never listed, and a call to its old name is refused, on both eras, with the
// one sentence naming the tool to call instead; another unknown name is
// refused as before.
func TestReplacedToolNamesItsReplacement(t *testing.T) {
	s := serve(t, func(o *mcp.Options) {
		o.Registry.SetReplaced(map[string]string{"mail_folder_list": generated.ToolMailFolders, generated.ToolStatus: "mail_elsewhere"})
	})
	s.initialize("2025-11-25", nil)
	for _, era := range []struct {
		name   string
		params func(map[string]any) map[string]any
	}{
		{"legacy", func(p map[string]any) map[string]any { return p }},
		{"modern", modern},
	} {
		t.Run(era.name, func(t *testing.T) {
			tl := result(t, s.rpc("list", "tools/list", era.params(nil)))
			for _, tv := range tl["tools"].([]any) {
				if n := tv.(map[string]any)["name"]; n == "mail_folder_list" {
					t.Fatalf("tools/list lists the old name %s", n)
				}
			}
			code, e := errCode(t, s.rpc("old", "tools/call", era.params(map[string]any{"name": "mail_folder_list", "arguments": map[string]any{}})))
			want := "mail_folder_list was replaced by " + generated.ToolMailFolders + ": call " + generated.ToolMailFolders + " and update any allow-list naming mail_folder_list"
			if code != -32602 || e["message"] != want {
				t.Errorf("a call to the old name: code %d, %q; want %q", code, e["message"], want)
			}
			if code, e := errCode(t, s.rpc("unknown", "tools/call", era.params(map[string]any{"name": "mail_nothing"}))); code != -32602 || e["message"] != `Unknown tool: "mail_nothing"; call tools/list for the tools this connection offers` {
				t.Errorf("an unknown name: code %d, %v", code, e["message"])
			}
			// A name the registry has is the tool, whatever the map says.
			if r := result(t, s.rpc("status", "tools/call", era.params(map[string]any{"name": generated.ToolStatus}))); r["isError"] == true {
				t.Errorf("status: %v", r["content"])
			}
		})
	}
}

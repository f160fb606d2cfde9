package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	pmcp "github.com/postern-mcp/postern/internal/mcp"
)

// TestGoSDKClient drives the real binary with the official Go SDK client, once
// pinned to the latest legacy revision and once in its default, 2026-07-28 era.
func TestGoSDKClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string // "" = the SDK's default (server/discover first)
		era     string
		want    string
	}{
		{"legacy", pmcp.LatestLegacy, "legacy", pmcp.LatestLegacy},
		{"legacy-2025-06-18", "2025-06-18", "legacy", "2025-06-18"},
		{"modern", "", "modern", pmcp.Modern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.Command(binary, "mcp")
			cmd.Env = home(t)
			client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-e2e", Version: "1"}, nil)
			var opts *mcp.ClientSessionOptions
			if tc.version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: tc.version}
			}
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			init := cs.InitializeResult()
			if init.ProtocolVersion != tc.want || init.ServerInfo == nil || init.ServerInfo.Name != generated.ServerName {
				t.Fatalf("negotiated %q with %+v", init.ProtocolVersion, init.ServerInfo)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var readTools int
			for _, spec := range generated.Tools {
				if spec.Scope == "read" {
					readTools++
				}
			}
			if len(tools.Tools) != readTools {
				t.Fatalf("listed %d tools, want the %d default-scope tools", len(tools.Tools), readTools)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "status"})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("status failed: %v", res.Content)
			}
			b, _ := json.Marshal(res.StructuredContent)
			var st map[string]any
			json.Unmarshal(b, &st)
			if st["protocol_era"] != tc.era || st["protocol_version"] != tc.want || st["client"] != "go-sdk-e2e" {
				t.Fatalf("status says %v", st)
			}
			bad, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docs", Arguments: map[string]any{"page": 3}})
			if err != nil {
				t.Fatal(err)
			}
			if !bad.IsError || !strings.Contains(bad.Content[0].(*mcp.TextContent).Text, "/page") {
				t.Fatalf("wrong argument type not refused with its path: %+v", bad.Content)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "postern://docs/guide"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "Mail is data") {
				t.Fatalf("docs resource: %+v", rr.Contents)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "postern://docs/nope"}); err == nil {
				t.Fatalf("an unknown resource was read")
			}
		})
	}
}

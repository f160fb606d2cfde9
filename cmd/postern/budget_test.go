package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/testing/mcptest"
	"github.com/postern-mcp/postern/internal/toolwire"
)

// TestToolListCostsWhatTheGeneratorCounted: tools/list through the real
// binary, under each preset and every scope, for a client that declares
// elicitation and one that does not, costs exactly the tools, model-facing
// bytes and wire bytes of generated/budget.json, the table go generate checks
// the budgets of catalog/budgets.yaml against.
func TestToolListCostsWhatTheGeneratorCounted(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "generated", "budget.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Grant       string   `json:"grant"`
		Scopes      []string `json:"scopes"`
		Client      string   `json:"client"`
		Tools       int      `json:"tools"`
		ModelFacing int      `json:"model_facing"`
		Wire        int      `json:"wire"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if want := 2 * (len(generated.Presets) + 1); len(rows) != want {
		t.Fatalf("generated/budget.json has %d rows, want %d (each preset and every scope, two kinds of client); run go generate ./...", len(rows), want)
	}
	phase := map[string]string{}
	for _, s := range generated.Tools {
		phase[s.Name] = s.Phase
	}
	env := home(t)
	for _, r := range rows {
		t.Run(r.Grant+"/"+r.Client, func(t *testing.T) {
			s := startEnv(t, env, "--scopes", strings.Join(r.Scopes, ","), "--config", filepath.Join(t.TempDir(), "none.toml"))
			caps := map[string]any{}
			if r.Client == "asking" {
				caps["elicitation"] = map[string]any{}
			}
			s.rpc(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": map[string]any{"name": "e2e", "version": "1"}})
			s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			s.send(mcptest.Request(1, "tools/list", nil))
			line := s.recvLine()
			res := gjson.Get(line, "result")
			if !res.IsObject() || res.Get("nextCursor").Exists() {
				t.Fatalf("tools/list answered %.300s", line)
			}
			got, err := toolwire.Measure([]byte(res.Raw))
			if err != nil {
				t.Fatal(err)
			}
			if r.Client == "asking" {
				for _, n := range got.Names {
					if phase[n] == generated.PhaseCommit {
						t.Skipf("this server still lists %s to a client that can ask the person; the asking figures (%d tools, %d bytes model-facing) wait for the change that hides the _commit twins", n, r.Tools, r.ModelFacing)
					}
				}
			}
			if got.Tools != r.Tools || got.ModelFacing != r.ModelFacing || got.Wire != r.Wire {
				t.Errorf("tools/list: %d tools, %d bytes model-facing, %d on the wire; the generator counted %d, %d and %d", got.Tools, got.ModelFacing, got.Wire, r.Tools, r.ModelFacing, r.Wire)
			}
		})
	}
}

package main

// The tools mode (-tools): what the tool list costs an agent, measured on
// tools/list through the real postern binary for each preset and every
// scope, for a client that declares elicitation (it can ask the person) and
// one that does not. See BENCHMARKS.md, "What the tool list costs".

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/toolwire"
)

var toolsMode = flag.Bool("tools", false, "measure what tools/list costs an agent (tools, model-facing and wire bytes) per preset and every scope, for a client that can ask the person and one that cannot")

// The kinds of client measured, as catalog/budgets.yaml names them.
const (
	clientAsking    = "asking"
	clientNotAsking = "not_asking"
)

// everyScope is the grant of every scope together, as catalog/budgets.yaml names it.
const everyScope = "every_scope"

// toolsRow is one grant for one kind of client.
type toolsRow struct {
	Grant  string   `json:"grant"`
	Scopes []string `json:"scopes"`
	Client string   `json:"client"`
	toolwire.Cost
	// Budget is the generator's row for the same grant and client
	// (generated/budget.json), when the bench runs from the repository.
	Budget *budgetRow `json:"budget,omitempty"`
}

// budgetRow is a row of generated/budget.json.
type budgetRow struct {
	Grant       string `json:"grant"`
	Client      string `json:"client"`
	Tools       int    `json:"tools"`
	ModelFacing int    `json:"model_facing"`
	Wire        int    `json:"wire"`
	Limits      struct {
		Tools       int `json:"tools,omitempty"`
		ModelFacing int `json:"model_facing,omitempty"`
		Wire        int `json:"wire,omitempty"`
	} `json:"limits"`
}

type toolsReport struct {
	Machine machineInfo `json:"machine"`
	// Protocol is the revision every connection initializes with.
	Protocol string     `json:"protocol"`
	Rows     []toolsRow `json:"rows"`
}

// initWith is the initialize request of a client with the capabilities caps.
func initWith(caps string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"bench-tools","version":"1"}}}` + "\n")
}

func runTools(posternPath string, asJSON bool, limit time.Duration) {
	time.AfterFunc(limit, func() { fail(fmt.Errorf("the run took longer than -timeout %v", limit)) })
	tmp, posternPath, env := binaryRun("tools", posternPath)
	root, rootErr := moduleRoot()
	cfg := filepath.Join(tmp, "none.toml")

	budget := map[string]*budgetRow{}
	if rootErr == nil {
		if b, err := os.ReadFile(filepath.Join(root, "generated", "budget.json")); err == nil {
			var rows []*budgetRow
			if json.Unmarshal(b, &rows) == nil {
				for _, r := range rows {
					budget[r.Grant+"/"+r.Client] = r
				}
			}
		}
	}

	r := toolsReport{Machine: machine(), Protocol: "2025-11-25"}
	type grant struct {
		name   string
		scopes []string
	}
	var grants []grant
	for _, p := range generated.Presets {
		grants = append(grants, grant{p.Name, p.Scopes})
	}
	var all []string
	for _, s := range generated.Scopes {
		all = append(all, s.Name)
	}
	grants = append(grants, grant{everyScope, all})
	for _, g := range grants {
		for _, client := range []string{clientAsking, clientNotAsking} {
			caps := `{}`
			if client == clientAsking {
				caps = `{"elicitation":{}}`
			}
			cost := measureToolList(posternPath, env, cfg, g.scopes, caps)
			r.Rows = append(r.Rows, toolsRow{Grant: g.name, Scopes: g.scopes, Client: client, Cost: cost, Budget: budget[g.name+"/"+client]})
		}
	}
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(b))
	} else {
		r.print(os.Stdout)
	}
	cleanup()
}

// measureToolList starts postern mcp under scopes, initializes as a client
// with capabilities caps and measures every page of tools/list.
func measureToolList(path string, env []string, cfg string, scopes []string, caps string) toolwire.Cost {
	c, err := start(program{name: "postern", path: path, env: env,
		args: []string{"mcp", "--config", cfg, "--scopes", strings.Join(scopes, ",")}})
	if err != nil {
		fail(err)
	}
	defer func() {
		if err := c.stop(); err != nil {
			fail(err)
		}
	}()
	_, line, err := c.roundTrip(initWith(caps), []byte(`"id":0`))
	if err != nil {
		fail(err)
	}
	if !bytes.Contains(line, []byte(`"result"`)) {
		fail(fmt.Errorf("postern answered initialize with %s", bytes.TrimSpace(line)))
	}
	c.setDeadline()
	if _, err := c.stdin.Write([]byte(initializedLine)); err != nil {
		fail(c.wrap("writing notifications/initialized", err))
	}
	var total toolwire.Cost
	cursor := ""
	for id := 1; ; id++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
		_, line, err := c.roundTrip(append(req, '\n'), []byte(fmt.Sprintf(`"id":%d,`, id)))
		if err != nil {
			fail(err)
		}
		var ans struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(line, &ans); err != nil || len(ans.Result) == 0 {
			fail(fmt.Errorf("tools/list answered %s", bytes.TrimSpace(line)))
		}
		page, err := toolwire.Measure(ans.Result)
		if err != nil {
			fail(err)
		}
		total.Tools += page.Tools
		total.ModelFacing += page.ModelFacing
		total.Wire += page.Wire
		total.Names = append(total.Names, page.Names...)
		var next struct {
			NextCursor string `json:"nextCursor"`
		}
		json.Unmarshal(ans.Result, &next)
		if cursor = next.NextCursor; cursor == "" {
			return total
		}
	}
}

func (r *toolsReport) print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s, %s/%s\n", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.Arch)
	fmt.Fprintf(w, "tools/list through postern mcp, protocol %s; model-facing = name, description and inputSchema as compact JSON; wire = the tools/list result\n", r.Protocol)
	fmt.Fprintf(w, "%-12s %-10s %6s %14s %12s   %s\n", "grant", "client", "tools", "model-facing", "wire", "budget (tools, model-facing, wire)")
	for _, row := range r.Rows {
		b := "—"
		if row.Budget != nil {
			l := row.Budget.Limits
			b = fmt.Sprintf("%s, %s, %s", limitText(row.Tools, l.Tools, strconv.Itoa), limitText(row.ModelFacing, l.ModelFacing, toolwire.KB), limitText(row.Wire, l.Wire, toolwire.KB))
			if row.Budget.Tools != row.Tools || row.Budget.ModelFacing != row.ModelFacing || row.Budget.Wire != row.Wire {
				b += fmt.Sprintf("; the generator counted %d tools, %d and %d bytes", row.Budget.Tools, row.Budget.ModelFacing, row.Budget.Wire)
			}
		}
		fmt.Fprintf(w, "%-12s %-10s %6d %14s %12s   %s\n", row.Grant, row.Client, row.Tools, toolwire.KB(row.ModelFacing), toolwire.KB(row.Wire), b)
	}
}

// limitText is "≤ limit" with a mark when n is over it, or "—" without a limit.
func limitText(n, limit int, show func(int) string) string {
	if limit == 0 {
		return "—"
	}
	if n > limit {
		return "over ≤ " + show(limit)
	}
	return "≤ " + show(limit)
}

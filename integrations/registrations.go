package integrations

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
)

// FindPreset is the catalog's preset of that name, or nil.
func FindPreset(name string) *generated.PresetSpec {
	for i, p := range generated.Presets {
		if p.Name == name {
			return &generated.Presets[i]
		}
	}
	return nil
}

// AgentSees says what the agent will see under o: the preset's line, or the tools the grant
// lists and the scopes in it that have no tool yet; for a URL entry, the running server's.
func AgentSees(o *Options, preset string) []string {
	if o.HTTP != "" {
		return []string{"the tools of the server at " + o.HTTP + ": the grant postern mcp --http was started with (its --scopes, else the configuration's [mcp] scopes)"}
	}
	var lines []string
	var g dispatch.Grant
	what := ""
	switch {
	case preset != "":
		if p := FindPreset(preset); p != nil {
			lines = append(lines, "preset "+p.Name+": "+p.Line)
		}
		g, _ = dispatch.ParseGrant(o.Scopes)
		what = "scopes " + o.Scopes
	case o.Scopes != "":
		g, _ = dispatch.ParseGrant(o.Scopes)
		what = "--scopes " + o.Scopes
	default:
		g = dispatch.DefaultGrant()
		what = "no --scopes: the defaults (" + strings.Join(g.Sorted(), ",") + ")"
		if cfg, err := config.Load(o.Config); err == nil && len(cfg.MCP.Scopes) > 0 {
			g = dispatch.Grant{}
			for _, s := range cfg.MCP.Scopes {
				g[s] = true
			}
			what = "no --scopes: the configuration's [mcp] scopes (" + strings.Join(g.Sorted(), ",") + ")"
		}
	}
	var tools []string
	has := map[string]bool{}
	for _, t := range generated.Tools {
		if g[t.Scope] {
			tools = append(tools, t.Name)
			has[t.Scope] = true
		}
	}
	lines = append(lines, fmt.Sprintf("%s list %d tools: %s", what, len(tools), strings.Join(tools, ", ")))
	var none []string
	for _, s := range generated.Scopes {
		if g[s.Name] && !has[s.Name] {
			none = append(none, s.Name)
		}
	}
	if len(none) > 0 {
		lines = append(lines, strings.Join(none, ", ")+": no tool yet, so granting it gives nothing for now")
	}
	return lines
}

// Target is one registration doctor, repair or remove works on: a host, what it was asked
// for, and the record of that (nil for an entry setup never recorded).
type Target struct {
	Host    *Host
	Options *Options
	Record  *Record
}

// Select narrows the registrations to those of a --scope or --name given (empty: any).
type Select struct{ Scope, Name string }

// Targets are h's registrations among recs: every record of h (narrowed by sel, a project
// record only in project), else base, unrecorded.
func Targets(recs []Record, h *Host, project string, sel Select, base *Options) []Target {
	var out []Target
	for i, rec := range recs {
		if rec.Host != h.ID || rec.Scope == "project" && rec.Project != project {
			continue
		}
		if sel.Scope != "" && rec.Scope != sel.Scope || sel.Name != "" && rec.Name != sel.Name {
			continue
		}
		out = append(out, Target{Host: h, Options: rec.Options(), Record: &recs[i]})
	}
	if len(out) == 0 {
		out = append(out, Target{Host: h, Options: base})
	}
	return out
}

// RepairCommand is the command line that repairs t, for the configuration at cfgPath
// (absolute).
func RepairCommand(t Target, cfgPath string) string {
	s := "postern integrations repair " + t.Host.ID
	if t.Options.Scope != "user" {
		s += " --scope " + t.Options.Scope
	}
	if t.Options.Name != DefaultName {
		s += " --name " + t.Options.Name
	}
	def := config.DefaultPath()
	if a, err := filepath.Abs(def); err == nil {
		def = a
	}
	if cfgPath != def {
		s += " --config " + shellWord(cfgPath)
	}
	return s
}

func shellWord(s string) string {
	if strings.ContainsAny(s, " '\"\\$`") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// Row is one registration as postern integrations list shows it.
type Row struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Found      bool     `json:"found"`
	Why        string   `json:"why"`
	Config     string   `json:"config,omitempty"`
	Registered bool     `json:"registered"`
	As         string   `json:"as"`    // the server's name in the host
	Scope      string   `json:"scope"` // user or project
	Recorded   bool     `json:"recorded"`
	Preset     string   `json:"preset,omitempty"`
	Scopes     []string `json:"scopes"`         // what the entry passes; empty: none (the configuration decides)
	Accounts   []string `json:"accounts"`       // empty: every account
	HTTP       string   `json:"http,omitempty"` // a URL entry's URL: the grant is that server's
}

// Grant is what the row's SCOPES and ACCOUNTS columns of postern integrations list say: "-"
// for a host postern is not registered with, the server's URL for a URL entry, else the
// preset and scopes ("from the configuration" when the entry passes none, "(not recorded)"
// when setup never recorded it) and the accounts ("all" when the entry names none).
func (row Row) Grant() (scopes, accounts string) {
	scopes, accounts = "-", "-"
	if row.HTTP != "" {
		return "the server's at " + row.HTTP, accounts
	}
	if !row.Registered && !row.Recorded {
		return scopes, accounts
	}
	scopes = strings.Join(row.Scopes, ",")
	if scopes == "" {
		scopes = "from the configuration"
	}
	if row.Preset != "" {
		scopes = row.Preset + " (" + scopes + ")"
	}
	if !row.Recorded {
		scopes += " (not recorded)"
	}
	accounts = strings.Join(row.Accounts, ",")
	if accounts == "" {
		accounts = "all"
	}
	return scopes, accounts
}

// Rows lists every host's registrations (targets says which), or with onlyFound those of the
// hosts installed here that are not snippets: found or not, registered or not, and what each
// passes (from its record, else read from the entry itself).
func Rows(e *Env, onlyFound bool, targets func(*Host) []Target) []Row {
	rows := []Row{}
	for _, h := range Hosts() {
		found, why := h.Found(e)
		if onlyFound && (!found || h.Kind == "snippet") {
			continue
		}
		for _, t := range targets(h) {
			row := Row{ID: h.ID, Name: h.Name, Kind: h.Kind, Found: found, Why: why, As: t.Options.Name, Scope: t.Options.Scope, Scopes: []string{}, Accounts: []string{}}
			if p, err := h.ConfigPath(e, t.Options.Scope); err == nil {
				row.Config = p
			}
			cur, _, reg, _, _ := h.Registered(e, t.Options.Scope, t.Options.Name)
			row.Registered = reg
			o := t.Options
			switch {
			case t.Record != nil:
				row.Recorded, row.Preset = true, t.Record.Preset
			case reg:
				o = OptionsFromEntry(cur, t.Options)
			}
			if cur.URL != "" || t.Record != nil && t.Record.HTTP != "" {
				row.HTTP = cur.URL
				if row.HTTP == "" {
					row.HTTP = t.Record.HTTP
				}
			} else if t.Record != nil || reg {
				if o.Scopes != "" {
					row.Scopes = strings.Split(o.Scopes, ",")
				}
				row.Accounts = append(row.Accounts, o.Accounts...)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// ManualError is the failure of plans whose host command is not on PATH: the commands were
// printed, nothing was done (verb: "registered", "repaired", "removed"); nil when there is none.
func ManualError(ps []*Plan, verb string) error {
	var ids, exes []string
	for _, p := range ps {
		if p.Manual {
			ids = append(ids, p.Host.ID)
			exes = append(exes, p.Host.Executables[0])
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return fmt.Errorf("%s not on PATH, so nothing was %s for %s: run the commands printed above where it is, then postern integrations doctor %s",
		strings.Join(exes, ", ")+map[bool]string{true: " is", false: " are"}[len(exes) == 1], verb, strings.Join(ids, ", "), strings.Join(ids, " "))
}

type stepJSON struct {
	Run     []string `json:"run,omitempty"`
	Write   string   `json:"write,omitempty"`
	Content string   `json:"content,omitempty"`
	Print   string   `json:"print,omitempty"`
}

// JSON is the plan as --json prints it, the token masked everywhere, with what the agent
// will see when sees is not nil.
func (p *Plan) JSON(sees []string) any {
	steps := []stepJSON{}
	for _, s := range p.Steps {
		var run []string
		for _, w := range s.Run { // the token is never shown, in JSON either
			run = append(run, p.Mask(w))
		}
		steps = append(steps, stepJSON{Run: run, Write: s.Write, Content: p.Mask(string(s.Data)), Print: p.Mask(s.Print)})
	}
	m := map[string]any{"host": p.Host.ID, "action": p.Action, "path": p.Path, "current": p.Current, "manual": p.Manual, "note": p.Note, "steps": steps}
	if sees != nil {
		m["agent_sees"] = sees
	}
	return m
}

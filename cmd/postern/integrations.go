package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/spf13/cobra"
)

const integrationsUsage = `Usage:
  postern integrations list [--json]          every host postern knows, found or not, registered or not
  postern integrations detect [--json]        the hosts installed here
  postern integrations plan HOST              what setup would run or write (nothing is changed)
  postern integrations setup HOST…            register postern (shows the plan and asks, unless --yes)
  postern integrations doctor [HOST…] [--json]
                                              check the registrations; exit 1 on any problem
  postern integrations repair HOST            register again so that doctor passes
  postern integrations remove HOST            take postern away (shows the plan and asks, unless --yes)

Hosts: ` + "%s" + `. See generated/docs/hosts.md.

Flags:
`

// stdinIsTerminal is replaced in tests.
var stdinIsTerminal = func() bool {
	st, err := os.Stdin.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull) // a character device too, but no one to ask
	return err != nil || !os.SameFile(st, null)
}

func cmdIntegrations(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("integrations", stderr, fmt.Sprintf(integrationsUsage, strings.Join(integrations.IDs(), ", ")))
	dryRun := fs.Bool("dry-run", false, "print exactly what would be run or written, and change nothing")
	yes := fs.Bool("yes", false, "do it without asking")
	asJSON := fs.Bool("json", false, "print JSON (list, detect, plan, doctor)")
	scopes := fs.String("scopes", "", "scopes the entry passes to postern mcp (default: none passed, so the configuration's [mcp] scopes or the defaults apply)")
	var accounts multi
	fs.Var(&accounts, "account", "the entry shows only this account (repeatable)")
	scope := fs.String("scope", "user", "user (every project) or project (this folder only), where the host offers it")
	name := fs.String("name", integrations.DefaultName, "the server's name in the host")
	cfgPath := fs.String("config", config.DefaultPath(), "postern's configuration file the entry uses")
	binary := fs.String("binary", "", "the postern the entry runs (default: this one, by a path that survives upgrades)")
	pos, err := splitFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fs.Usage()
		return exitError{2}
	}
	if *scopes != "" {
		if _, err := dispatch.ParseGrant(*scopes); err != nil {
			return fmt.Errorf("--scopes: %w", err)
		}
	}
	if *scope != "user" && *scope != "project" {
		return fmt.Errorf("--scope is user or project, not %q", *scope)
	}
	env, err := integrations.DefaultEnv()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*cfgPath)
	if err != nil {
		return err
	}
	o := &integrations.Options{Name: *name, Scope: *scope, Scopes: *scopes, Accounts: accounts, Config: abs}
	if *binary != "" {
		if o.Binary, err = filepath.Abs(*binary); err != nil {
			return err
		}
	} else if o.Binary, err = integrations.Binary(env.LookPath); err != nil {
		return err
	}
	state := filepath.Join(config.StateDir(), "integrations.json")
	ctx := context.Background()
	verb, hostArgs := pos[0], pos[1:]
	hosts := func(min, max int) ([]*integrations.Host, error) {
		if len(hostArgs) < min || max >= 0 && len(hostArgs) > max {
			switch {
			case max == 1:
				return nil, fmt.Errorf("integrations %s takes one host: postern integrations %s HOST (hosts: %s)", verb, verb, strings.Join(integrations.IDs(), ", "))
			default:
				return nil, fmt.Errorf("integrations %s needs a host: postern integrations %s HOST… (hosts: %s)", verb, verb, strings.Join(integrations.IDs(), ", "))
			}
		}
		var out []*integrations.Host
		for _, id := range hostArgs {
			h, err := integrations.Find(id)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
		return out, nil
	}
	switch verb {
	case "list", "detect":
		if len(hostArgs) > 0 {
			return fmt.Errorf("integrations %s takes no host", verb)
		}
		return listHosts(env, o, verb == "detect", *asJSON, stdout)
	case "plan":
		hs, err := hosts(1, 1)
		if err != nil {
			return err
		}
		p, err := integrations.PlanSetup(hs[0], env, o)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, planJSON(p))
		}
		p.Describe(stdout)
		return nil
	case "setup", "repair", "remove":
		max := -1
		if verb != "setup" {
			max = 1
		}
		hs, err := hosts(1, max)
		if err != nil {
			return err
		}
		var plans []*integrations.Plan
		for _, h := range hs {
			var p *integrations.Plan
			if verb == "remove" {
				p, err = integrations.PlanRemove(h, env, o)
			} else {
				p, err = integrations.PlanSetup(h, env, o)
			}
			if err != nil {
				return err
			}
			plans = append(plans, p)
		}
		if *dryRun {
			for _, p := range plans {
				if *asJSON {
					if err := writeJSON(stdout, planJSON(p)); err != nil {
						return err
					}
					continue
				}
				p.Describe(stdout)
			}
			return nil
		}
		todo := false
		for _, p := range plans {
			todo = todo || !p.Current && !p.Manual
		}
		if todo && !*yes {
			for _, p := range plans {
				p.Describe(stdout)
			}
			if !stdinIsTerminal() {
				return fmt.Errorf("not changing anything without a yes: run again with --yes, or in a terminal to be asked")
			}
			fmt.Fprint(stdout, "Go ahead? [y/N] ")
			line, _ := bufio.NewReader(stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				fmt.Fprintln(stdout, "Nothing was changed.")
				return nil
			}
		}
		for _, p := range plans {
			if err := integrations.Apply(ctx, p, state, stdout); err != nil {
				return fmt.Errorf("%s: %w", p.Host.ID, err)
			}
		}
		return nil
	case "doctor":
		hs, err := hosts(0, -1)
		if err != nil {
			return err
		}
		asked := len(hs) > 0
		if !asked {
			hs = integrations.Hosts()
		}
		flags := flagText(o, *cfgPath != config.DefaultPath())
		fix := func(id string) string { return "postern integrations repair " + id + flags }
		var reports []integrations.Report
		ok := true
		for _, h := range hs {
			r := integrations.Doctor(ctx, h, env, o, asked, fix)
			reports = append(reports, r)
			ok = ok && r.OK
		}
		if *asJSON {
			if err := writeJSON(stdout, map[string]any{"ok": ok, "hosts": reports}); err != nil {
				return err
			}
		} else {
			for _, r := range reports {
				printReport(stdout, r)
			}
		}
		if !ok {
			return exitError{1}
		}
		return nil
	}
	return fmt.Errorf("unknown integrations command %q; run postern integrations --help", verb)
}

// flagText is the flags a repair needs to ask for the same entry.
func flagText(o *integrations.Options, withConfig bool) string {
	var b strings.Builder
	if o.Scope != "user" {
		b.WriteString(" --scope " + o.Scope)
	}
	if o.Name != integrations.DefaultName {
		b.WriteString(" --name " + o.Name)
	}
	if o.Scopes != "" {
		b.WriteString(" --scopes " + o.Scopes)
	}
	for _, a := range o.Accounts {
		b.WriteString(" --account " + a)
	}
	if withConfig {
		b.WriteString(" --config " + o.Config)
	}
	return b.String()
}

func printReport(w io.Writer, r integrations.Report) {
	state := "ok"
	switch {
	case r.Skipped:
		state = "not installed"
	case !r.OK:
		state = "PROBLEM"
	}
	// A detail quotes what a host's file holds and what the program it names answered: every
	// field is escaped (termsafe) so that none can forge a line or drive the terminal.
	fmt.Fprintf(w, "%s (%s): %s\n", termsafe.Line(r.Name), termsafe.Line(r.Host), state)
	if r.Skipped {
		return
	}
	for _, c := range r.Checks {
		mark := "ok"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %-10s %-4s %s\n", termsafe.Line(c.Check), mark, termsafe.Line(c.Detail))
	}
	if r.Fix != "" {
		fmt.Fprintf(w, "  fix: %s\n", termsafe.Line(r.Fix))
	}
}

type hostRow struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Found      bool   `json:"found"`
	Why        string `json:"why"`
	Config     string `json:"config,omitempty"`
	Registered bool   `json:"registered"`
}

func listHosts(env *integrations.Env, o *integrations.Options, onlyFound, asJSON bool, w io.Writer) error {
	var rows []hostRow
	for _, h := range integrations.Hosts() {
		found, why := h.Found(env)
		if onlyFound && (!found || h.Kind == "snippet") {
			continue
		}
		r := hostRow{ID: h.ID, Name: h.Name, Kind: h.Kind, Found: found, Why: why}
		if p, err := h.ConfigPath(env, "user"); err == nil {
			r.Config = p
		}
		_, _, r.Registered, _, _ = h.Registered(env, "user", o.Name)
		rows = append(rows, r)
	}
	if asJSON {
		if rows == nil {
			rows = []hostRow{}
		}
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tKIND\tFOUND\tREGISTERED\tCONFIGURATION")
	for _, r := range rows {
		found, reg := "no", "no"
		if r.Found {
			found = "yes"
		}
		if r.Registered {
			reg = "yes"
		}
		cfg := r.Config
		if cfg == "" {
			cfg = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.Line(r.ID), termsafe.Line(r.Kind), found, reg, termsafe.Line(cfg))
	}
	return tw.Flush()
}

type stepJSON struct {
	Run     []string `json:"run,omitempty"`
	Write   string   `json:"write,omitempty"`
	Content string   `json:"content,omitempty"`
	Print   string   `json:"print,omitempty"`
}

func planJSON(p *integrations.Plan) any {
	steps := []stepJSON{}
	for _, s := range p.Steps {
		steps = append(steps, stepJSON{Run: s.Run, Write: s.Write, Content: string(s.Data), Print: s.Print})
	}
	return map[string]any{"host": p.Host.ID, "action": p.Action, "path": p.Path, "current": p.Current, "manual": p.Manual, "note": p.Note, "steps": steps}
}

// writeJSON writes v indented; termsafe.JSON escapes the DEL, C1 and bidi characters that
// encoding/json leaves raw, so the output decodes to the same value and prints safely.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}

// newIntegrationsCmd is the integrations command tree of the command line.
func newIntegrationsCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:                "integrations",
		Short:              "register postern with agent hosts, check it, remove it",
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return cmdIntegrations(args, stdin, stdout, stderr)
		},
	}
}

package main

// postern integrations: register postern with agent hosts, check it, remove it. Setup records
// what it was asked (integrations.RecordPath beside the configuration); doctor checks against
// that record and repair restores it, so a grant is never dropped behind the person's back.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// stdinIsTerminal says whether there is a person to ask: standard input is a terminal (not
// /dev/null). A variable, so that an in-process test may replace it; the end-to-end tests type
// into a real pseudo-terminal instead.
var stdinIsTerminal = func() bool {
	st, err := os.Stdin.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull) // a character device too, but no one to ask
	return err != nil || !os.SameFile(st, null)
}

// intFlags are the flags of the integrations verbs; each verb registers those it takes.
type intFlags struct {
	preset, scopes      string
	accounts            []string
	scope, name         string
	config, binary      string
	dryRun, yes, asJSON bool
	http                string // setup and plan: the URL of a running postern mcp --http
}

// intRun is one run of an integrations verb: the machine, the flags, the records.
type intRun struct {
	cmd     *cobra.Command
	f       *intFlags
	env     *integrations.Env
	config  string // absolute
	records []integrations.Record
	in      *bufio.Reader
	out     io.Writer
	bin     string
}

// open reads what every verb needs: the machine, the absolute configuration path and the
// records of setup kept beside it.
func (f *intFlags) open(cmd *cobra.Command, stdin io.Reader, stdout io.Writer) (*intRun, error) {
	if f.scope != "user" && f.scope != "project" {
		return nil, usagef("--scope is user or project, not %q; %s", f.scope, helpHint(cmd))
	}
	env, err := integrations.DefaultEnv()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(f.config)
	if err != nil {
		return nil, err
	}
	recs, err := integrations.LoadRecords(integrations.RecordPath(abs))
	if err != nil {
		return nil, err
	}
	return &intRun{cmd: cmd, f: f, env: env, config: abs, records: recs, in: bufio.NewReader(stdin), out: stdout}, nil
}

// binary is the postern an entry runs: --binary, else this one by a path that survives upgrades.
func (r *intRun) binary() (string, error) {
	if r.bin != "" {
		return r.bin, nil
	}
	var err error
	if r.f.binary != "" {
		r.bin, err = filepath.Abs(r.f.binary)
	} else {
		r.bin, err = integrations.Binary(r.env.LookPath)
	}
	return r.bin, err
}

// openHosts is open, then the hosts the arguments name: what every verb starts with.
func (f *intFlags) openHosts(cmd *cobra.Command, stdin io.Reader, stdout io.Writer, args []string) (*intRun, []*integrations.Host, error) {
	r, err := f.open(cmd, stdin, stdout)
	if err != nil {
		return nil, nil, err
	}
	hs, err := r.hosts(args)
	return r, hs, err
}

// hosts are the hosts named by args (integrations.LookupHosts).
func (r *intRun) hosts(args []string) ([]*integrations.Host, error) {
	hs, err := integrations.LookupHosts(args)
	return hs, usageOf(err)
}

// usageOf says an integrations.UsageError as a usage error of the command line.
func usageOf(err error) error {
	if ue := (*integrations.UsageError)(nil); errors.As(err, &ue) {
		return usagef("%s", ue.Msg)
	}
	return err
}

// base are the options the flags give, before any grant.
func (r *intRun) base() *integrations.Options {
	return &integrations.Options{Name: r.f.name, Scope: r.f.scope, Config: r.config}
}

// grant reads --preset and --scopes into o; it returns the preset's name ("" for none).
func (r *intRun) grant(o *integrations.Options) (string, error) {
	if r.f.preset != "" && r.f.scopes != "" {
		return "", usagef("--preset and --scopes cannot go together: a preset is a list of scopes; pick one; %s", helpHint(r.cmd))
	}
	name, err := integrations.SetGrant(o, r.f.preset, r.f.scopes)
	return name, usageOf(err)
}

// confirm asks before changing anything; no terminal and no --yes is a refusal too.
func (r *intRun) confirm() error {
	if r.f.yes {
		return nil
	}
	if !stdinIsTerminal() {
		return errors.New("not changing anything without a yes: run again with --yes, or in a terminal to be asked")
	}
	fmt.Fprint(r.out, "Go ahead? [y/N] ")
	line, _ := r.in.ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(r.out, "Nothing was changed.")
		return exitError{1}
	}
	return nil
}

// targets are h's registrations: every record of h (narrowed by --scope and --name when given,
// a project record only in its project), else the one --scope and --name name, unrecorded.
func (r *intRun) targets(h *integrations.Host) []integrations.Target {
	var sel integrations.Select
	if r.cmd.Flags().Changed("scope") {
		sel.Scope = r.f.scope
	}
	if r.cmd.Flags().Changed("name") {
		sel.Name = r.f.name
	}
	return integrations.Targets(r.records, h, r.env.Project, sel, r.base())
}

func printAgentSees(w io.Writer, lines []string) {
	fmt.Fprintln(w, "  What the agent will see:")
	for _, l := range lines {
		fmt.Fprintf(w, "    %s\n", termsafe.Line(l))
	}
}

// newIntegrationsCmd is the integrations command tree of the command line.
func newIntegrationsCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	hostsLine := "Hosts: " + strings.Join(integrations.IDs(), ", ") + ". See generated/docs/hosts.md."
	long := `Register postern with agent hosts (Claude Code, Codex, Claude Desktop, Cursor, VS Code, …),
check the registration and take it away again. What setup was asked (preset, scopes,
accounts, name, scope) is recorded beside the configuration file: doctor checks the entry
against that record, repair puts it back, and setup again with other flags changes it.

` + hostsLine + "\n\n" + integrations.PresetsHelp() + "\n" + integrations.ExitsHelp()
	c := group("integrations", "register postern with agent hosts, check it, remove it", long,
		newIntListCmd(stdout, false), newIntListCmd(stdout, true),
		newIntPlanCmd(stdin, stdout), newIntSetupCmd(stdin, stdout),
		newIntDoctorCmd(stdin, stdout), newIntRepairCmd(stdin, stdout), newIntRemoveCmd(stdin, stdout))
	c.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor alone does not apply
	c.Example = `  postern integrations list
  postern integrations setup claude-desktop --preset reader
  postern integrations doctor
  postern integrations remove codex`
	return c
}

func verbLong(text string) string { return text + "\n\n" + integrations.ExitsHelp() }

func hostArgsCompletion(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, h := range integrations.Hosts() {
		if strings.HasPrefix(h.ID, toComplete) {
			out = append(out, h.ID+"\t"+h.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func addConfig(cmd *cobra.Command, f *intFlags) {
	cmd.Flags().StringVar(&f.config, "config", config.DefaultPath(), "postern's configuration file the entry uses; the record of setup is kept beside it")
	cmd.MarkFlagFilename("config", "toml")
}

func addWhere(cmd *cobra.Command, f *intFlags) {
	cmd.Flags().StringVar(&f.scope, "scope", "user", "user (every project) or project (this folder only), where the host offers it")
	cmd.Flags().StringVar(&f.name, "name", integrations.DefaultName, "the server's name in the host")
}

func addGrant(cmd *cobra.Command, f *intFlags) {
	var names []string
	for _, p := range generated.Presets {
		names = append(names, p.Name)
	}
	cmd.Flags().StringVar(&f.preset, "preset", "", "a named grant: "+strings.Join(names, ", ")+" (see Presets above)")
	cmd.Flags().StringVar(&f.scopes, "scopes", "", "scopes the entry passes to postern mcp, comma-separated (default: none passed, so the configuration's [mcp] scopes or the defaults apply)")
	cmd.Flags().StringArrayVar(&f.accounts, "account", nil, "the entry shows only this account (repeatable)")
	cmd.RegisterFlagCompletionFunc("preset", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, p := range generated.Presets {
			out = append(out, p.Name+"\t"+p.Line)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	cmd.RegisterFlagCompletionFunc("account", completeAccounts)
}

// addRecordedOnly gives doctor and repair the grant flags only to refuse them with the
// sentence that says where the grant is changed.
func addRecordedOnly(cmd *cobra.Command) {
	for _, n := range []string{"preset", "scopes", "account"} {
		cmd.Flags().String(n, "", "")
		cmd.Flags().MarkHidden(n)
	}
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		for _, n := range []string{"preset", "scopes", "account"} {
			if cmd.Flags().Changed(n) {
				return usagef("%s takes no --%s: it works from what setup recorded; to change the grant run postern integrations setup HOST --%s …", cmd.CommandPath(), n, n)
			}
		}
		return nil
	}
}

func addChange(cmd *cobra.Command, f *intFlags) {
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print exactly what would be run or written, and change nothing")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "do it without asking")
}

func newIntListCmd(stdout io.Writer, detect bool) *cobra.Command {
	f := &intFlags{scope: "user", name: integrations.DefaultName}
	c := &cobra.Command{
		Use:   "list",
		Short: "every host postern knows, found or not, registered or not, with its scopes and accounts",
		Long: verbLong(`List every host postern knows: whether it is installed here, whether postern is registered
with it, and the scopes and accounts that registration passes (from the record of setup, or
read from the entry itself when setup never recorded it).`),
		Args: noArgs,
	}
	if detect {
		c.Use, c.Short = "detect", "the hosts installed here"
		c.Long = verbLong("List the hosts installed here (a snippet host is never listed), as list does.")
	}
	addConfig(c, f)
	c.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		r, err := f.open(cmd, nil, stdout)
		if err != nil {
			return err
		}
		return r.list(detect)
	}
	return c
}

func (r *intRun) list(onlyFound bool) error {
	rows := integrations.Rows(r.env, onlyFound, r.targets)
	if r.f.asJSON {
		return writeJSON(r.out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(r.out, "No host found here; postern integrations list shows every host postern knows.")
		return nil
	}
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tKIND\tFOUND\tREGISTERED\tSCOPES\tACCOUNTS\tCONFIGURATION")
	yn := map[bool]string{true: "yes", false: "no"}
	for _, row := range rows {
		scopes, accts := row.Grant()
		id := row.ID
		if row.As != integrations.DefaultName || row.Scope != "user" {
			id += " (" + row.As + ", " + row.Scope + ")"
		}
		cfg := row.Config
		if cfg == "" {
			cfg = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.Line(id), termsafe.Line(row.Kind), yn[row.Found], yn[row.Registered], termsafe.Line(scopes), termsafe.Line(accts), termsafe.Line(cfg))
	}
	return tw.Flush()
}

func newIntPlanCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	f := &intFlags{}
	c := &cobra.Command{
		Use:               "plan HOST",
		Short:             "what setup would run or write, and what the agent would see (nothing is changed)",
		Long:              verbLong("Print what setup HOST would run or write with these flags, and what the agent would see; nothing is changed."),
		Args:              exactArgs(1, "one host"),
		ValidArgsFunction: hostArgsCompletion,
	}
	addGrant(c, f)
	addWhere(c, f)
	addConfig(c, f)
	c.Flags().StringVar(&f.binary, "binary", "", "the postern the entry runs (default: this one, by a path that survives upgrades)")
	c.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	addHTTPFlag(c, f)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		r, hs, err := f.openHosts(cmd, stdin, stdout, args)
		if err != nil {
			return err
		}
		o := r.base()
		o.Accounts = f.accounts
		if err := r.httpOptions(o, hs, false); err != nil {
			return err
		}
		preset, err := r.grant(o)
		if err != nil {
			return err
		}
		if o.HTTP == "" {
			if err := r.token(o, false); err != nil { // masked wherever another entry holds it
				return err
			}
			if o.Binary, err = r.binary(); err != nil {
				return err
			}
		}
		p, err := integrations.PlanSetup(hs[0], r.env, o)
		if err != nil {
			return err
		}
		sees := integrations.AgentSees(o, preset)
		if f.asJSON {
			return writeJSON(stdout, p.JSON(sees))
		}
		p.Describe(stdout)
		printAgentSees(stdout, sees)
		return nil
	}
	return c
}

func newIntSetupCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	f := &intFlags{}
	c := &cobra.Command{
		Use:   "setup HOST…",
		Short: "register postern with hosts (shows the plan and asks, unless --yes)",
		Long: verbLong(`Register postern with each host: the entry runs this postern with mcp, the absolute
configuration path and the grant you choose. setup shows what it will run or write and what
the agent will see, and asks first unless --yes. In a terminal, with neither --preset nor
--scopes, it asks which preset to grant. What was asked is recorded beside the configuration
file: doctor checks against it, repair restores it, and running setup again with other flags
is how to change it.

` + strings.TrimSuffix(integrations.PresetsHelp(), "\n")),
		Example: `  postern integrations setup claude-desktop --preset ` + generated.PresetReader + `
  postern integrations setup claude-code codex --scopes ` + generated.ScopeRead + "," + generated.ScopeReadBodies + ` --yes
  postern integrations setup json --preset ` + generated.PresetMetadata + `     prints a snippet to paste
  postern integrations setup cursor --http http://127.0.0.1:8765/mcp   reach a running postern mcp --http`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s needs a host (hosts: %s); %s", cmd.CommandPath(), strings.Join(integrations.IDs(), ", "), helpHint(cmd))
			}
			return nil
		},
		ValidArgsFunction: hostArgsCompletion,
	}
	addGrant(c, f)
	addWhere(c, f)
	addConfig(c, f)
	c.Flags().StringVar(&f.binary, "binary", "", "the postern the entry runs (default: this one, by a path that survives upgrades)")
	addChange(c, f)
	c.Flags().BoolVar(&f.asJSON, "json", false, "with --dry-run, print the plans as JSON")
	addHTTPFlag(c, f)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		r, hs, err := f.openHosts(cmd, stdin, stdout, args)
		if err != nil {
			return err
		}
		o := r.base()
		o.Accounts = f.accounts
		if err := r.httpOptions(o, hs, !f.dryRun); err != nil {
			return err
		}
		preset, err := r.grant(o)
		if err != nil {
			return err
		}
		if o.HTTP == "" {
			if err := r.token(o, false); err != nil { // masked wherever another entry holds it
				return err
			}
			if o.Binary, err = r.binary(); err != nil {
				return err
			}
		}
		if f.http == "" && f.preset == "" && f.scopes == "" && !f.yes && !f.dryRun && stdinIsTerminal() {
			p, err := integrations.AskPreset(r.in, stdout, integrations.RecordedPreset(r.targets(hs[0]), generated.DefaultPreset))
			if err != nil {
				return err
			}
			preset, o.Scopes = p.Name, strings.Join(p.Scopes, ",")
		}
		var jobs []job
		for _, h := range hs {
			jobs = append(jobs, job{Host: h, Options: o, Preset: preset})
			for _, l := range integrations.GrantChanges(h, o, preset, r.env.Project, r.targets(h), time.Now()) {
				fmt.Fprintln(stdout, termsafe.Line(l))
			}
		}
		return r.change("setup", jobs)
	}
	return c
}

// job is one registration to set up, repair or remove (integrations.Job).
type job = integrations.Job

// change carries out the verb (setup, repair or remove) for the jobs (integrations.Change),
// showing and asking here.
func (r *intRun) change(verb string, jobs []job) error {
	c := &integrations.Change{
		Verb: verb, Env: r.env, Config: r.config, Out: r.out,
		State:  filepath.Join(config.StateDir(), "integrations.json"),
		DryRun: r.f.dryRun, JSON: r.f.asJSON,
		Sees:      func(lines []string) { printAgentSees(r.out, lines) },
		Confirm:   r.confirm,
		WriteJSON: func(v any) error { return writeJSON(r.out, v) },
	}
	return c.Run(context.Background(), jobs)
}

func newIntDoctorCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	f := &intFlags{}
	c := &cobra.Command{
		Use:   "doctor [HOST…]",
		Short: "check the registrations against what setup recorded; exit 1 on any problem",
		Long: verbLong(`Check each host (every host postern knows, when none is named): installed, postern
registered, the entry as setup recorded it (binary, scopes, accounts, configuration), the
binary there, and the server answering with the tool count its scopes allow. Each problem
comes with the command that fixes it. An entry setup never recorded (written by an older
postern) is checked against its own flags, and doctor says so.`),
		ValidArgsFunction: hostArgsCompletion,
	}
	addWhere(c, f)
	addConfig(c, f)
	c.Flags().StringVar(&f.binary, "binary", "", "for an entry setup never recorded: the postern it should run (default: this one)")
	c.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	addRecordedOnly(c)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		r, hs, err := f.openHosts(cmd, stdin, stdout, args)
		if err != nil {
			return err
		}
		reports, ok, err := integrations.DoctorAll(context.Background(), hs, r.env, r.config, r.targets, func(t integrations.Target) error {
			o := t.Options
			err := r.token(o, false)
			if err == nil && o.HTTP == "" && (t.Record == nil || o.Binary == "") {
				o.Binary, err = r.binary()
			}
			return err
		})
		if err != nil {
			return err
		}
		if f.asJSON {
			if err := writeJSON(stdout, map[string]any{"ok": ok, "hosts": reports}); err != nil {
				return err
			}
		} else {
			for _, rep := range reports {
				printReport(stdout, rep)
			}
		}
		if !ok {
			return exitError{1}
		}
		return nil
	}
	return c
}

func newIntRepairCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	f := &intFlags{}
	c := &cobra.Command{
		Use:   "repair HOST",
		Short: "write the recorded entry back, so that doctor passes (shows the plan and asks, unless --yes)",
		Long: verbLong(`Register postern with HOST again as setup recorded it: the same preset or scopes, accounts,
name and configuration, with the recorded postern (or this one, when that is gone). An entry
setup never recorded keeps its own flags, and is recorded from then on. To change the grant,
run setup again.`),
		Args:              exactArgs(1, "one host"),
		ValidArgsFunction: hostArgsCompletion,
	}
	addWhere(c, f)
	addConfig(c, f)
	c.Flags().StringVar(&f.binary, "binary", "", "the postern the entry runs (default: the recorded one if it is still there, else this one)")
	addChange(c, f)
	c.Flags().BoolVar(&f.asJSON, "json", false, "with --dry-run, print the plans as JSON")
	addRecordedOnly(c)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		r, hs, err := f.openHosts(cmd, stdin, stdout, args)
		if err != nil {
			return err
		}
		var jobs []job
		for _, t := range r.targets(hs[0]) {
			j := integrations.RepairJob(t, r.env)
			o := j.Options
			if err := r.token(o, o.HTTP != "" && !f.dryRun); err != nil { // a URL entry needs the token: made when it is gone
				return err
			}
			if o.HTTP == "" && (f.binary != "" || !integrations.Executable(o.Binary)) {
				if o.Binary, err = r.binary(); err != nil {
					return err
				}
			}
			jobs = append(jobs, j)
		}
		return r.change("repair", jobs)
	}
	return c
}

func newIntRemoveCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	f := &intFlags{}
	c := &cobra.Command{
		Use:   "remove HOST",
		Short: "take postern away from a host (shows the plan and asks, unless --yes)",
		Long: verbLong(`Take postern's entry away from HOST, and its record: every other server and setting stays
as it was, and a file host keeps a backup of its file.`),
		Args:              exactArgs(1, "one host"),
		ValidArgsFunction: hostArgsCompletion,
	}
	addWhere(c, f)
	addConfig(c, f)
	addChange(c, f)
	c.Flags().BoolVar(&f.asJSON, "json", false, "with --dry-run, print the plans as JSON")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		r, hs, err := f.openHosts(cmd, stdin, stdout, args)
		if err != nil {
			return err
		}
		var jobs []job
		for _, t := range r.targets(hs[0]) {
			if err := r.token(t.Options, false); err != nil { // masked in the file shown
				return err
			}
			jobs = append(jobs, job{Host: t.Host, Options: t.Options})
		}
		return r.change("remove", jobs)
	}
	return c
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

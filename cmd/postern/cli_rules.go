package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/rules"
	"github.com/postern-mcp/postern/internal/sieve"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/postern-mcp/postern/internal/tools"
)

// postern rules: the person's side of the rules agents propose. A rule that
// forwards mail is enabled only here, by someone at a terminal who types y:
// standard input must be a terminal, so an agent that runs commands cannot do
// it for them.

func newRulesCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var cfgPath string
	var asJSON bool
	list := &cobra.Command{
		Use:     "list",
		Short:   "the rules, pending proposals first",
		Long:    "List the rules in rules.toml beside the configuration: pending proposals first, then the others in the order they run, with their state, who proposed them and when they last acted.",
		Example: "  postern rules list\n  postern rules list --json",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			all, err := rules.Load(rules.Path(cfgPath))
			if err != nil {
				return err
			}
			all = rules.Ordered(all)
			if asJSON {
				b, _ := json.MarshalIndent(all, "", "  ")
				fmt.Fprintln(stdout, string(termsafe.JSON(b)))
				return nil
			}
			if len(all) == 0 {
				fmt.Fprintln(stdout, "No rules. Agents propose them ("+generated.ToolRulesPropose+"); you approve them here.")
				return nil
			}
			for _, r := range all {
				printRule(stdout, r, false)
			}
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the rules as JSON")
	show := &cobra.Command{
		Use:     "show NAME",
		Short:   "one rule, whole",
		Long:    "Show one rule whole: what it matches, what it does, its state and who proposed it.",
		Example: "  postern rules show \"Receipts to a folder\"",
		Args:    exactArgs(1, "the name of a rule (postern rules list shows them)"),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := oneRule(cfgPath, args[0])
			if err != nil {
				return err
			}
			printRule(stdout, r, true)
			return nil
		},
	}
	state := func(use, short, long string, to string) *cobra.Command {
		return &cobra.Command{
			Use:     use + " NAME",
			Short:   short,
			Long:    long,
			Example: "  postern rules " + use + " \"Receipts to a folder\"",
			Args:    exactArgs(1, "the name of a rule (postern rules list shows them)"),
			RunE: func(_ *cobra.Command, args []string) error {
				return setRuleState(cfgPath, args[0], to, stdin, stdout)
			},
		}
	}
	approve := state("approve", "approve a pending rule: it runs on new mail at each sync",
		"Approve a pending rule: it is enabled and runs on the new mail of each sync. A rule that forwards mail is shown whole first and needs you to type y at a terminal.", rules.Enabled)
	reject := state("reject", "reject a pending rule; it never runs", "Reject a pending rule: it stays listed as rejected and never runs.", rules.Rejected)
	enable := state("enable", "enable an approved rule", "Enable a disabled rule. A rule that forwards mail needs you to type y at a terminal.", rules.Enabled)
	disable := state("disable", "disable a rule; it stops running", "Disable a rule: it stays in the file and stops running until enabled again.", rules.Disabled)
	var f serverFlags
	var folder string
	test := &cobra.Command{
		Use:     "test NAME",
		Short:   "what a rule would do to the stored mail, changing nothing",
		Long:    "Run one rule over the stored mail, changing nothing: how many messages it matches and the newest of them.",
		Example: "  postern rules test \"Receipts to a folder\" --folder INBOX",
		Args:    exactArgs(1, "the name of a rule (postern rules list shows them)"),
		RunE: func(_ *cobra.Command, args []string) error {
			if f.config == "" {
				f.config = cfgPath
			}
			r, err := oneRule(f.config, args[0])
			if err != nil {
				return err
			}
			scopes := append([]string{generated.ScopeRead}, rules.NeedsOf(r).Scopes()...)
			f.scopes = strings.Join(scopes, ",")
			in := map[string]any{"rule": generated.NewRule{Name: r.Name, Account: r.Account, Match: r.Match, Actions: r.Actions, Stop: r.Stop}}
			if folder != "" {
				in["folder"] = folder
			}
			raw, _ := json.Marshal(in)
			return cmdCall(&f, asJSON, []string{generated.ToolRulesTest, string(raw)}, stdout, stderr)
		},
	}
	f.register(test)
	test.Flags().StringVar(&folder, "folder", "", "only this folder")
	test.Flags().BoolVar(&asJSON, "json", false, "print the structured result as JSON")
	var dryRun bool
	push := &cobra.Command{
		Use:   "push ACCOUNT",
		Short: "run the enabled rules on the mail server too (Sieve over ManageSieve)",
		Long: "Translate the enabled rules that apply to ACCOUNT into one Sieve script, show it and the rules Sieve cannot express (they stay local and run at each sync), and store it on the account's ManageSieve server as the script \"" + sieve.ScriptName + "\", where it runs at delivery even when postern does not. " +
			"Your own scripts are never replaced: when one of yours is active, postern's is stored beside it and the line to include it is shown. With --dry-run nothing is stored.",
		Example: "  postern rules push work --dry-run\n  postern rules push work",
		Args:    exactArgs(1, "the name of an account (postern account list shows them)"),
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeAccounts(c, args, toComplete)
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return pushRules(cfgPath, args[0], dryRun, stdout)
		},
	}
	push.Flags().BoolVar(&dryRun, "dry-run", false, "show the script and what pushing would do, and store nothing")
	cmd := group("rules", "review, approve and test the mail rules agents propose",
		`Mail rules live in rules.toml beside the configuration. Agents propose them; they wait, doing nothing, until you approve them here (or an agent with `+generated.ScopeRulesWrite+` does, except for rules that forward mail, which only you enable, at a terminal). Enabled rules run on new mail at each sync; every change they make is in postern actions and can be undone. postern rules push also runs them on the mail server, where it speaks ManageSieve.`,
		list, show, approve, reject, enable, disable, test, push)
	for _, c := range []*cobra.Command{list, show, approve, reject, enable, disable, push} {
		addConfigFlag(c, &cfgPath)
	}
	return cmd
}

// pushRules is postern rules push: the plan, then (unless dryRun) the push.
func pushRules(cfgPath, account string, dryRun bool, stdout io.Writer) error {
	svc := &tools.Service{Version: postVersion(), Config: config.NewWatcher(cfgPath), StorePath: storePath()}
	defer svc.Close()
	ctx := context.Background()
	p, err := svc.PlanSievePush(ctx, account)
	if err != nil {
		return err
	}
	line := func(format string, args ...any) { fmt.Fprintln(stdout, termsafe.Line(fmt.Sprintf(format, args...))) }
	line("The Sieve script for account %s (%d rules, %s):", p.Account, p.Translated, sieve.Digest(p.Script))
	for _, l := range strings.Split(strings.TrimSuffix(p.Script, "\n"), "\n") {
		line("  | %s", l)
	}
	if len(p.Local) > 0 {
		line("These enabled rules stay local; postern runs them at each sync:")
		for _, k := range p.Local {
			line("  %q: %s", k.Rule, k.Reason)
		}
	}
	if dryRun {
		line("Dry run, nothing was stored. %s", p.Expect.Message)
		return nil
	}
	done, err := svc.PushSieve(ctx, p)
	if err != nil {
		return fmt.Errorf("the script was not pushed: %w", err)
	}
	line("Pushed (%s). %s", done.Outcome, done.Message)
	if done.IncludeLine != "" {
		line("The line to add to your script %q:", done.Active)
		line("  %s", done.IncludeLine)
	}
	return nil
}

func oneRule(cfgPath, name string) (generated.Rule, error) {
	return rules.One(rules.Path(cfgPath), name)
}

// printRule writes a rule for a person; every value an agent wrote is escaped.
func printRule(w io.Writer, r generated.Rule, whole bool) {
	line := func(format string, args ...any) { fmt.Fprintln(w, termsafe.Line(fmt.Sprintf(format, args...))) }
	by := r.ProposedBy
	if by == "" {
		by = "you"
	}
	line("%q  %s, proposed by %s", r.Name, r.State, by)
	line("  matches: %s", r.Match)
	var does []string
	for _, a := range r.Actions {
		d := a.Do
		if a.Folder != "" {
			d += " " + fmt.Sprintf("%q", a.Folder)
		}
		if a.To != "" {
			d += " to " + a.To
		}
		does = append(does, d)
	}
	line("  does: %s", strings.Join(does, ", "))
	if r.Account != "" {
		line("  account: %s", r.Account)
	}
	if r.Stop != nil && *r.Stop {
		line("  stop: no later rule runs on what it matches")
	}
	if r.LastActed != "" {
		line("  last acted: %s", r.LastActed)
	}
	if whole {
		if n := rules.NeedsOf(r).Scopes(); len(n) > 0 {
			line("  looks at: %s", strings.Join(n, ", "))
		}
	}
}

func setRuleState(cfgPath, name, to string, stdin io.Reader, stdout io.Writer) error {
	r, err := oneRule(cfgPath, name)
	if err != nil {
		return err
	}
	if err := rules.CheckChange(r, to); err != nil {
		return err
	}
	if to == rules.Enabled && rules.Forwards(r) && r.State != rules.Enabled {
		if f, ok := stdin.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
			return fmt.Errorf("rule %q forwards mail, so enabling it needs you at a terminal (standard input is not one); run postern rules approve yourself", r.Name)
		}
		printRule(stdout, r, true)
		fmt.Fprint(stdout, "It sends a copy of every message it matches to the address above, from now on. Type y and Enter to enable it, anything else leaves it as it is: ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.TrimSpace(line); !strings.EqualFold(a, "y") && !strings.EqualFold(a, "yes") {
			fmt.Fprintf(stdout, "Left %q %s.\n", r.Name, r.State)
			return nil
		}
	}
	if err := rules.SetState(rules.Path(cfgPath), name, r, to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Rule %s is %s.\n", termsafe.Line(fmt.Sprintf("%q", r.Name)), to)
	// A rule pushed to a server keeps running there until the script is pushed again.
	if to != rules.Enabled {
		for _, a := range rules.StillOnServer(context.Background(), cfgPath, storePath(), r) {
			fmt.Fprintf(stdout, "It still runs on the mail server of %s: run postern rules push %s to take it off there.\n", termsafe.Line(a), termsafe.Line(a))
		}
	}
	return nil
}

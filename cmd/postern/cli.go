package main

// The command line is a cobra tree (help per command, suggestions, shell
// completion): this file holds what every command shares — how a usage error
// is said (once, one line, exit 2), the help command, command groups, and the
// nearest-name suggestions used for commands, flags and account names.

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/postern-mcp/postern/internal/accountedit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/search"
)

// usageError is a command line that postern cannot take: it is said in one
// line on standard error, and postern exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// helpHint is the sentence that ends a usage error.
func helpHint(cmd *cobra.Command) string {
	return "run " + cmd.CommandPath() + " --help"
}

// flagError turns pflag's error into one line naming the command's help, and
// the nearest flag when one was mistyped.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: "); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
		return usagef("%s", withSuggestion("unknown flag "+name, nearest(name, names), helpHint(cmd)))
	} else if strings.HasPrefix(msg, "unknown shorthand flag: ") {
		msg = strings.Replace(msg, "unknown shorthand flag: ", "unknown flag ", 1)
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = "the flag " + strings.Trim(name, "'") + " needs a value"
	}
	return usagef("%s; %s", msg, helpHint(cmd))
}

// unknownCommand is the error for a word that names no subcommand of cmd.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q", word)
	if cmd.HasParent() {
		msg = fmt.Sprintf("unknown command %q for %s", word, cmd.CommandPath())
	}
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() || s.Name() == "help" {
			names = append(names, s.Name())
		}
	}
	return usagef("%s", withSuggestion(msg, nearest(word, names), "run "+cmd.CommandPath()+" --help for the list"))
}

// subcommandsOnly is the Args of a command that only groups others: any word
// left is a mistyped subcommand.
func subcommandsOnly(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	return nil
}

// group is a command that only holds subcommands: run bare, it prints its
// help on standard error and exits 2, as a usage error does.
func group(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  subcommandsOnly,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			cmd.Help()
			return exitError{2}
		},
	}
	c.AddCommand(subs...)
	return c
}

// exactArgs is cobra.ExactArgs with postern's one-line usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d argument(s)); %s", cmd.CommandPath(), what, len(args), helpHint(cmd))
		}
		return nil
	}
}

// rangeArgs accepts from min to max arguments.
func rangeArgs(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usagef("%s takes %s (got %d argument(s)); %s", cmd.CommandPath(), what, len(args), helpHint(cmd))
		}
		return nil
	}
}

// noArgs refuses every argument.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return unknownCommand(cmd, args[0])
		}
		return usagef("%s takes no arguments, only flags (got %q); %s", cmd.CommandPath(), args[0], helpHint(cmd))
	}
	return nil
}

// newHelpCmd is "postern help [COMMAND…]": the help of a command, or a usage
// error naming the nearest command when there is none by that name.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]…",
		Short: "show the help of postern or of one command",
		Long:  "Show the help of postern, or of one command and its flags.",
		Example: `  postern help sync
  postern help account add`,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() && strings.HasPrefix(s.Name(), toComplete) {
					names = append(names, s.Name()+"\t"+s.Short)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd := c.Root()
			for _, a := range args {
				next := findSub(cmd, a)
				if next == nil {
					return unknownCommand(cmd, a)
				}
				cmd = next
			}
			cmd.InitDefaultHelpFlag() // as CMD --help shows it
			cmd.SetOut(c.OutOrStdout())
			return cmd.Help()
		},
	}
}

// findSub is cmd's subcommand named (or aliased) name.
func findSub(cmd *cobra.Command, name string) *cobra.Command {
	for _, s := range cmd.Commands() {
		if s.Name() == name || s.HasAlias(name) {
			return s
		}
	}
	return nil
}

// nearest are the candidates closest to word, the closest first: what "did you mean" offers
// (search.Nearest, which folders, operators and accounts use too).
func nearest(word string, candidates []string) []string {
	return search.Nearest(word, candidates)
}

// withSuggestion ends msg with "did you mean …?" when near is not empty, then with then.
func withSuggestion(msg string, near []string, then string) string {
	if len(near) == 0 {
		return msg + "; " + then
	}
	return msg + "; did you mean " + strings.Join(near, " or ") + "? " + strings.ToUpper(then[:1]) + then[1:]
}

// noSuchAccount is the error for an account name the configuration lacks
// (accountedit.NoSuchAccount).
var noSuchAccount = accountedit.NoSuchAccount

// completeAccounts completes account names from the configuration that the
// command's --config flag names.
func completeAccounts(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	path := config.DefaultPath()
	if f := cmd.Flags().Lookup("config"); f != nil {
		path = f.Value.String()
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, a := range cfg.Accounts {
		if strings.HasPrefix(a.Name, toComplete) {
			names = append(names, a.Name+"\t"+a.Kind)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// addConfigFlag adds --config to cmd.
func addConfigFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "config", config.DefaultPath(), "configuration file")
	cmd.MarkFlagFilename("config", "toml")
}

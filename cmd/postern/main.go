// Command postern is a local MCP server that lets AI agent hosts read a
// person's mail within the scopes that person granted.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/postern-mcp/postern/gen/catalog"
	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/server"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/postern-mcp/postern/internal/tools"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func postVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// rootLong is the text of postern --help above the list of commands.
const rootLong = `postern — your mail, for AI agents, within what you grant.

postern keeps a local copy of your mail (postern sync) and serves it over MCP to
the agent hosts you register (postern integrations setup HOST), showing each one
only the scopes and accounts you granted. No password is written into postern's
files: an account has a command that prints it, the OS keyring, or OAuth2.`

const rootExample = `  postern demo                         a sample mailbox and what an agent sees of it
  postern account add work --imap imap.example.com:993 --user me@example.com --password-cmd "pass show mail/work"
  postern sync                         fetch the mail into the local store
  postern integrations setup claude-desktop
  postern status                       accounts, store, hosts and problems at a glance`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries an exit status with a message already printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run is the command line: it returns the exit status (0 done, 1 failed, 2 a
// usage error; a command may say more, as sync does after a signal).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	_, err := root.ExecuteC()
	var ee exitError
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0 // a command that parses its own flags printed its help
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "postern: "+termsafe.Text(ue.msg))
		return 2
	default:
		// An error may quote a server's answer, a host's output or a file's contents.
		fmt.Fprintln(stderr, "postern: "+termsafe.Text(err.Error()))
		return 1
	}
}

// newRootCmd builds the command tree; each run builds its own, so that flag
// defaults (the XDG paths) are read from the environment of that run.
func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "postern",
		Short:         "your mail, for AI agents, within what you grant",
		Long:          rootLong,
		Example:       rootExample,
		Version:       postVersion(),
		Args:          subcommandsOnly,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(stderr)
			cmd.Help()
			return exitError{2}
		},
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(
		newMCPCmd(stdin, stdout, stderr),
		newCallCmd(stdout, stderr),
		newAccountCmd(stdout, stderr),
		newSyncCmd(stdout, stderr),
		newWatchCmd(stderr),
		newServiceCmd(stdin, stdout, stderr),
		newStatusCmd(stdout),
		newConfigCmd(stdout, stderr),
		newDemoCmd(stdout, stderr),
		newApproveCmd(stdin, stdout, stderr),
		newActionsCmd(stdout, stderr),
		newUndoCmd(stdout, stderr),
		newRulesCmd(stdin, stdout, stderr),
		newProjectCmd(stdout),
		newLogCmd(stdout, stderr),
		newIntegrationsCmd(stdin, stdout, stderr),
		newBundleCmd(stdout, stderr),
		newCatalogCmd(stdout, stderr),
		newVersionCmd(stdout),
	)
	root.InitDefaultCompletionCmd()
	if c := findSub(root, "completion"); c != nil {
		c.Short = "print a shell completion script (bash, zsh, fish or powershell)"
		c.Example = `  source <(postern completion bash)
  postern completion zsh > "${fpath[1]}/_postern"
  postern completion fish > ~/.config/fish/completions/postern.fish`
	}
	// The help and version flags are made as each command runs; made now, help CMD
	// shows them as CMD --help does.
	root.InitDefaultVersionFlag()
	var initHelp func(c *cobra.Command)
	initHelp = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		for _, s := range c.Commands() {
			initHelp(s)
		}
	}
	initHelp(root)
	return root
}

// serverFlags are the flags shared by mcp and call.
type serverFlags struct {
	scopes   string
	accounts []string
	config   string
	saveDir  string
}

func (f *serverFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.scopes, "scopes", "", "comma-separated scopes to grant (default: the configuration's [mcp] scopes, else "+strings.Join(dispatch.DefaultGrant().Sorted(), ",")+")")
	fl.StringArrayVar(&f.accounts, "account", nil, "show only this account (repeatable); every other account is hidden")
	fl.StringVar(&f.saveDir, "save-dir", "", "folder "+generated.ToolMailAttachmentSave+" saves attachments in (default: the configuration's save_dir, else the XDG download folder)")
	cmd.MarkFlagDirname("save-dir")
	addConfigFlag(cmd, &f.config)
	cmd.RegisterFlagCompletionFunc("account", completeAccounts)
	cmd.RegisterFlagCompletionFunc("scopes", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		var out []string
		for _, s := range dispatch.ScopeNames() {
			if strings.HasPrefix(s, last) {
				out = append(out, done+s)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// setup builds the service, registry and grant function from the flags.
func (f *serverFlags) setup(stderr io.Writer) (*tools.Service, *dispatch.Registry, func() dispatch.Grant, error) {
	path, err := filepath.Abs(f.config)
	if err != nil {
		return nil, nil, nil, err
	}
	watcher := config.NewWatcher(path)
	if f.saveDir != "" {
		// Refused now rather than at the first save; made absolute against this folder.
		if f.saveDir, _, err = config.SaveFolder(f.saveDir, ""); err != nil {
			return nil, nil, nil, fmt.Errorf("--save-dir: %w", err)
		}
	}
	svc := &tools.Service{Version: postVersion(), Config: watcher, Only: f.accounts, StorePath: storePath(), SaveDir: f.saveDir}
	reg, grant, err := server.Wire(svc, watcher, server.Options{Scopes: f.scopes, Accounts: f.accounts, Queue: approvalQueue(), Stderr: stderr, NoSuchAccount: noSuchAccount})
	if err != nil {
		return nil, nil, nil, err
	}
	return svc, reg, grant, nil
}

func newMCPCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var f serverFlags
	var hf httpFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "serve MCP on standard input and output (what agent hosts run)",
		Long: `Serve MCP over standard input and output, one JSON-RPC message per line.

Agent hosts start this command themselves once registered (postern integrations
setup HOST). The tools an agent sees are those of the granted scopes; with
--account, only those accounts are visible and every other one is hidden.
postern refuses to start when an --account names no configured account.
With --http ADDRESS it serves the same over Streamable HTTP on loopback instead,
behind a bearer token made at first use (docs/design.md, "HTTP").`,
		Example: `  postern mcp --scopes ` + generated.ScopeRead + "," + generated.ScopeReadBodies + `
  postern mcp --account work --config ~/.config/postern/config.toml
  postern mcp --http 127.0.0.1:8765`,
		Args: noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if hf.addr != "" || hf.listenAny {
				return cmdMCPHTTP(&f, &hf, stderr)
			}
			return cmdMCP(&f, stdin, stdout, stderr)
		},
	}
	f.register(cmd)
	hf.register(cmd)
	return cmd
}

func cmdMCP(f *serverFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	svc, reg, grant, err := f.setup(stderr)
	if err != nil {
		return err
	}
	defer reg.Close() // the audit lines still queued
	// A host usually ends a server by closing its input, but some send SIGTERM
	// (or the terminal SIGINT/SIGHUP): the queued audit lines are written first.
	defer server.CloseOnSignal(reg)()
	defer startWatch(svc.Config, stderr)() // the store follows the servers while this runs
	srv := mcp.New(mcp.Options{Registry: reg, Resources: svc, Grant: grant, Version: postVersion(), Stderr: stderr})
	return srv.Serve(context.Background(), stdin, stdout)
}

func newCallCmd(stdout, stderr io.Writer) *cobra.Command {
	var f serverFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON]",
		Short: "call one tool from the terminal, as an agent would",
		Long: `Call one tool with the same validation, scopes, masks and audit as an agent
gets, and print the text it would read (or, with --json, the structured result).
The arguments are one JSON object. An --account that names no configured
account is refused.`,
		Example: `  postern call ` + generated.ToolStatus + `
  postern call ` + generated.ToolMailSearch + ` '{"query":"from:alice after:2025-01-01"}' --scopes ` + generated.ScopeRead + `
  postern call ` + generated.ToolDocs + ` '{"page":"scopes"}' --json`,
		Args: rangeArgs(1, 2, "a tool name and, optionally, its arguments as one JSON object"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, t := range generated.Tools {
				if strings.HasPrefix(t.Name, toComplete) {
					names = append(names, t.Name)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return cmdCall(&f, asJSON, args, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the structured result as JSON")
	return cmd
}

func cmdCall(f *serverFlags, asJSON bool, pos []string, stdout, stderr io.Writer) error {
	raw := json.RawMessage("{}")
	if len(pos) == 2 {
		raw = json.RawMessage(pos[1])
		if !json.Valid(raw) {
			return fmt.Errorf("the arguments %q are not valid JSON; pass one JSON object, e.g. '{\"page\":\"guide\"}'", pos[1])
		}
	}
	_, reg, grant, err := f.setup(stderr)
	if err != nil {
		return err
	}
	defer reg.Close()
	g := grant()
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: dispatch.EraCLI, Scopes: g.Sorted(), ToolCount: len(reg.Allowed(g)), Connection: "cli"})
	res, err := reg.Call(ctx, pos[0], raw, g)
	if re := (*dispatch.ReplacedError)(nil); errors.As(err, &re) {
		return re
	}
	if errors.Is(err, dispatch.ErrUnknownTool) {
		return reg.UnknownTool(pos[0])
	}
	if err != nil {
		return err
	}
	if res.IsError {
		fmt.Fprintln(stderr, "postern: "+res.Text)
		return exitError{1}
	}
	if asJSON {
		fmt.Fprintln(stdout, string(res.Structured))
		return nil
	}
	fmt.Fprintln(stdout, res.Text)
	return nil
}

func newCatalogCmd(stdout, stderr io.Writer) *cobra.Command {
	var dir string
	lint := &cobra.Command{
		Use:   "lint",
		Short: "check the catalog against its schema and lint rules",
		Long: `Check the catalog (catalog/*.yaml: tools, scopes, types, resources, hosts)
against its schema and lint rules, and print one line per problem. Run it in a
checkout of postern before go generate ./...`,
		Example: "  postern catalog lint --dir catalog",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdCatalogLint(dir, stdout, stderr)
		},
	}
	lint.Flags().StringVar(&dir, "dir", "catalog", "catalog folder")
	lint.MarkFlagDirname("dir")
	return group("catalog", "check the catalog (contributors)", "Commands for contributors who edit the catalog in a checkout of postern.", lint)
}

func cmdCatalogLint(dir string, stdout, stderr io.Writer) error {
	cat, err := catalog.Load(dir)
	var ps catalog.Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Fprintln(stderr, termsafe.Text(p.String()))
		}
		if ob := (*catalog.OverBudget)(nil); errors.As(err, &ob) {
			fmt.Fprint(stderr, "\nWhat the tool list costs (figure / budget; the wire is measured by go generate):\n"+termsafe.Text(catalog.FormatTable(ob.Table)))
		}
		fmt.Fprintf(stderr, "postern: the catalog has %d problem(s); fix them, then run go generate ./...\n", len(ps))
		return exitError{1}
	}
	if err != nil {
		return err
	}
	for _, w := range cat.Warnings {
		fmt.Fprintln(stderr, "warning: "+termsafe.Text(w.String()))
	}
	extra := ""
	if len(cat.Warnings) > 0 {
		extra = fmt.Sprintf("; %d budget(s) exceeded, not enforced (budgets.enforce is false)", len(cat.Warnings))
	}
	fmt.Fprintf(stdout, "%s: %d tools, %d scopes, %d types, %d resources, %d hosts; no problems%s\n", dir, len(cat.Tools), len(cat.Scopes), len(cat.Types), len(cat.Resources), len(cat.Hosts), extra)
	return nil
}

// versionLine is what postern --version and postern version print.
func versionLine() string {
	return fmt.Sprintf("postern %s (MCP %s)", postVersion(), strings.Join(mcp.Supported, ", "))
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the version and the MCP protocol versions it speaks",
		Long: `Print postern's version and the MCP protocol versions it speaks (the same
line as postern --version); with --json, also the number of tools.`,
		Example: "  postern version --json",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if asJSON {
				b, _ := json.Marshal(map[string]any{"version": postVersion(), "protocols": mcp.Supported, "tools": len(generated.Tools)})
				fmt.Fprintln(stdout, string(b))
				return nil
			}
			fmt.Fprintln(stdout, versionLine())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

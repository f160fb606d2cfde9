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
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/postern-mcp/postern/gen/catalog"
	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/audit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/postern-mcp/postern/internal/tools"
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

const usage = `postern — your mail, for AI agents, within what you grant.

Usage:
  postern mcp [--scopes LIST] [--account NAME]… [--config PATH]
                                 serve MCP on standard input and output
  postern call TOOL [JSON] [--json] [--scopes LIST] [--account NAME]… [--config PATH]
                                 call one tool from the terminal, as an agent would
  postern account add NAME --imap HOST:PORT --user USER --password-cmd CMD [--tls implicit|starttls|none]
  postern account add NAME --maildir PATH
  postern account list [--json] | postern account remove NAME
                                 manage mail accounts (passwords are never stored)
  postern sync [--account NAME]  fetch mail into the local store (resumable)
  postern demo                   a sample mailbox and what an agent sees, no account needed
  postern approve [CODE] [--decline]
                                 list the sends waiting for you; approve or decline one
  postern log [--month YYYY-MM] [--json]
                                 what agents asked and were given (no text, no secrets)
  postern integrations list|detect|plan HOST|setup HOST…|doctor [HOST…]|repair HOST|remove HOST
                                 register postern with agent hosts, check it, remove it
  postern bundle mcpb [--out FILE]
                                 pack the Claude Desktop bundle (from a checkout)
  postern catalog lint [--dir DIR]
                                 check the catalog (contributors)
  postern version [--json]       print the version

Run "postern COMMAND --help" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries an exit status with a message already printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "mcp":
		err = cmdMCP(args[1:], stdin, stdout, stderr)
	case "call":
		err = cmdCall(args[1:], stdout, stderr)
	case "catalog":
		err = cmdCatalog(args[1:], stdout, stderr)
	case "version":
		err = cmdVersion(args[1:], stdout, stderr)
	case "account":
		err = cmdAccount(args[1:], stdout, stderr)
	case "sync":
		err = cmdSync(args[1:], stdout, stderr)
	case "demo":
		err = cmdDemo(args[1:], stdout, stderr)
	case "log":
		err = cmdLog(args[1:], stdout, stderr)
	case "integrations":
		err = cmdIntegrations(args[1:], stdin, stdout, stderr)
	case "bundle":
		err = cmdBundle(args[1:], stdout, stderr)
	case "approve":
		err = cmdApprove(args[1:], stdin, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "postern: unknown command %q; run postern --help for the list.\n", args[0])
		return 2
	}
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		// An error may quote a server's answer, a host's output or a file's contents.
		fmt.Fprintln(stderr, "postern: "+termsafe.Text(err.Error()))
		return 1
	}
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// serverFlags are the flags shared by mcp and call.
type serverFlags struct {
	scopes   string
	accounts multi
	config   string
}

func (f *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scopes, "scopes", "", "comma-separated scopes to grant (default: the configuration's [mcp] scopes, else "+strings.Join(dispatch.DefaultGrant().Sorted(), ",")+")")
	fs.Var(&f.accounts, "account", "show only this account (repeatable); every other account is hidden")
	fs.StringVar(&f.config, "config", config.DefaultPath(), "configuration file")
}

// setup builds the service, registry and grant function from the flags.
func (f *serverFlags) setup(stderr io.Writer) (*tools.Service, *dispatch.Registry, func() dispatch.Grant, error) {
	path, err := filepath.Abs(f.config)
	if err != nil {
		return nil, nil, nil, err
	}
	watcher := config.NewWatcher(path)
	svc := &tools.Service{Version: postVersion(), Config: watcher, Only: f.accounts, StorePath: storePath()}
	svc.Sync = func(ctx context.Context, accts []config.Account) ([]mailsync.Outcome, error) {
		st, err := store.Open(svc.StorePath)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return mailsync.Run(ctx, st, accts, mailsync.Options{})
	}
	reg, err := dispatch.New(svc)
	if err != nil {
		return nil, nil, nil, err
	}
	reg.SetAudit(audit.Open(config.StateDir(), time.Now))
	if err := setupApprovals(reg, watcher, stderr); err != nil {
		return nil, nil, nil, err
	}
	var grant func() dispatch.Grant
	if f.scopes != "" {
		g, err := dispatch.ParseGrant(f.scopes)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--scopes: %w", err)
		}
		grant = func() dispatch.Grant { return g }
	} else {
		warned := map[string]bool{}
		defaults := dispatch.DefaultGrant()
		var lastCfg *config.Config
		var last dispatch.Grant
		var mu sync.Mutex
		grant = func() dispatch.Grant {
			cfg, err := watcher.Get()
			if err != nil || len(cfg.MCP.Scopes) == 0 {
				return defaults
			}
			mu.Lock()
			defer mu.Unlock()
			if cfg == lastCfg {
				return last // the same configuration grants the same scopes
			}
			g := dispatch.Grant{}
			for _, s := range cfg.MCP.Scopes {
				if dispatch.KnownScope(s) {
					g[s] = true
				} else if !warned[s] {
					warned[s] = true
					fmt.Fprintf(stderr, "postern: the configuration grants unknown scope %q; it is ignored. Known scopes: %s\n", s, strings.Join(dispatch.ScopeNames(), ", "))
				}
			}
			lastCfg, last = cfg, g
			return g
		}
	}
	if _, err := watcher.Get(); err != nil {
		fmt.Fprintf(stderr, "postern: %s\n", termsafe.Text(err.Error()))
	}
	return svc, reg, grant, nil
}

func newFlagSet(name string, stderr io.Writer, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, help)
		fs.PrintDefaults()
	}
	return fs
}

func cmdMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f serverFlags
	fs := newFlagSet("mcp", stderr, "Usage: postern mcp [flags]\n\nServe MCP over standard input and output, one JSON-RPC message per line.\n\nFlags:\n")
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("mcp takes no arguments, only flags (got %q); run postern mcp --help", fs.Arg(0))
	}
	svc, reg, grant, err := f.setup(stderr)
	if err != nil {
		return err
	}
	defer reg.Close() // the audit lines still queued
	// A host usually ends a server by closing its input, but some send SIGTERM
	// (or the terminal SIGINT/SIGHUP): the queued audit lines are written first.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		if sig, ok := <-sigs; ok {
			reg.Close()
			os.Exit(128 + int(sig.(syscall.Signal)))
		}
	}()
	srv := mcp.New(mcp.Options{Registry: reg, Resources: svc, Grant: grant, Version: postVersion(), Stderr: stderr})
	return srv.Serve(context.Background(), stdin, stdout)
}

func cmdCall(args []string, stdout, stderr io.Writer) error {
	var f serverFlags
	var asJSON bool
	fs := newFlagSet("call", stderr, "Usage: postern call TOOL [JSON] [flags]\n\nCall one tool with the same validation, scopes and masks as an agent gets.\n\nFlags:\n")
	f.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print the structured result as JSON")
	// Flags may come after the tool name and its arguments.
	var pos []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos = append(pos, rest[0])
			rest = rest[1:]
		}
	}
	if len(pos) == 0 || len(pos) > 2 {
		fs.Usage()
		return exitError{2}
	}
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
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: "cli", Scopes: g.Sorted(), ToolCount: len(reg.Allowed(g)), Connection: "cli"})
	res, err := reg.Call(ctx, pos[0], raw, g)
	if errors.Is(err, dispatch.ErrUnknownTool) {
		var names []string
		for _, t := range reg.All() {
			names = append(names, t.Spec.Name)
		}
		return fmt.Errorf("unknown tool %q; the tools are %s", pos[0], strings.Join(names, ", "))
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

func cmdCatalog(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "lint" {
		fmt.Fprintln(stderr, "Usage: postern catalog lint [--dir DIR]")
		return exitError{2}
	}
	fs := newFlagSet("catalog lint", stderr, "Usage: postern catalog lint [--dir DIR]\n\nCheck the catalog against its schema and lint rules.\n\nFlags:\n")
	dir := fs.String("dir", "catalog", "catalog folder")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cat, err := catalog.Load(*dir)
	var ps catalog.Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Fprintln(stderr, termsafe.Text(p.String()))
		}
		fmt.Fprintf(stderr, "postern: the catalog has %d problem(s); fix them, then run go generate ./...\n", len(ps))
		return exitError{1}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d tools, %d scopes, %d types, %d resources, %d hosts; no problems\n", *dir, len(cat.Tools), len(cat.Scopes), len(cat.Types), len(cat.Resources), len(cat.Hosts))
	return nil
}

func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr, "Usage: postern version [--json]\n\nFlags:\n")
	asJSON := fs.Bool("json", false, "print as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"version": postVersion(), "protocols": mcp.Supported, "tools": len(generated.Tools)})
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	fmt.Fprintf(stdout, "postern %s (MCP %s)\n", postVersion(), strings.Join(mcp.Supported, ", "))
	return nil
}

package main

// Thin cobra commands over the commands that keep a parser of their own
// (demo), and the ports of approve, log and bundle.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/demo"
)

func newDemoCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "demo [--messages N]",
		Short: "a sample mailbox and what an agent sees of it, no account needed",
		Long: `Build a sample mailbox of generated messages (reserved example.* domains only)
in a temporary store, and print a scripted session: each call an agent makes and
the text it gets back. It needs no account and no network, and leaves nothing
behind. Run postern demo --help for its flags.`,
		Example:            "  postern demo\n  postern demo --messages 100",
		DisableFlagParsing: true, // demo parses its own flags
		RunE: func(_ *cobra.Command, args []string) error {
			return cmdDemo(args, stdout, stderr)
		},
	}
}

func newApproveCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var f approveFlags
	cmd := &cobra.Command{
		Use:   "approve [CODE]",
		Short: "list the sends waiting for you; approve or decline one",
		Long:  approveLong,
		Example: `  postern approve
  postern approve K7QX
  postern approve --decline K7QX`,
		Args: rangeArgs(0, 1, "at most one code"),
		RunE: func(_ *cobra.Command, args []string) error {
			return cmdApprove(&f, args, stdin, stdout, stderr)
		},
	}
	cmd.Flags().BoolVar(&f.decline, "decline", false, "decline the action instead of approving it")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "list as JSON")
	return cmd
}

func newLogCmd(stdout, stderr io.Writer) *cobra.Command {
	var month string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "log",
		Short: "what agents asked and were given (no text, no secrets)",
		Long: `Show a month of the audit log: each call an agent made, when, from which
client, with its arguments, whether it was refused, and what it was given (ids
and lengths, never the text of mail and never a secret).`,
		Example: "  postern log\n  postern log --month 2026-11 --json",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdLog(month, asJSON, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&month, "month", time.Now().UTC().Format("2006-01"), "the month to show, as YYYY-MM")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as JSON lines")
	return cmd
}

func newBundleCmd(stdout, stderr io.Writer) *cobra.Command {
	var f struct{ manifest, binary, out string }
	mcpb := &cobra.Command{
		Use:   "mcpb",
		Short: "pack the Claude Desktop bundle (.mcpb) from a checkout",
		Long: `Pack a Claude Desktop bundle (.mcpb): a zip holding the generated manifest and a
postern binary under the manifest's server entry point. Run it in a checkout of
postern (the manifest is generated there), or pass --manifest.`,
		Example: "  postern bundle mcpb --out postern.mcpb",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			entry, err := integrations.WriteBundle(f.manifest, f.binary, f.out)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s (manifest and %s)\n", f.out, entry)
			return nil
		},
	}
	mcpb.Flags().StringVar(&f.manifest, "manifest", filepath.Join("plugins", "postern", "mcpb", "manifest.json"), "the generated manifest")
	mcpb.Flags().StringVar(&f.binary, "binary", "", "the postern binary to pack (default: this one)")
	mcpb.Flags().StringVar(&f.out, "out", "postern.mcpb", "the bundle to write")
	return group("bundle", "pack postern for a host that installs bundles", "Pack postern into the bundles that agent hosts install.", mcpb)
}

const demoHelp = `Usage: postern demo [--messages N]

A generated mailbox in a temporary store, and what an agent sees of it: a masked
sign-in code, a stranger's message framed as data, a thread, a draft prepared but
not saved, and a send refused for want of its scope. It needs no account and no
network, and deletes everything it made when it ends.

Flags:
`

// cmdDemo builds a sample mailbox in a temporary folder, imports it into a
// temporary store and prints a scripted session as an agent sees it. It needs
// no account and no network, and leaves nothing behind.
func cmdDemo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // help goes to stdout when asked for, a wrong flag is one line
	fs.Usage = func() {}
	n := fs.Int("messages", 400, "generated messages in the sample mailbox, besides the demo's own")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, demoHelp)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return err
	} else if err != nil {
		return fmt.Errorf("%v; run postern demo --help for the flags", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("demo takes no arguments, only flags (got %q); run postern demo --help", fs.Arg(0))
	}
	if *n < 0 || *n > 100000 {
		return fmt.Errorf("--messages %d is out of range; give a number from 0 to 100000", *n)
	}
	return demo.Run(postVersion(), *n, stdout)
}

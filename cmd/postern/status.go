package main

// postern status: what a person wants to know at a glance — the accounts and
// how far each is synced, where the store is and how large, which agent hosts
// were registered with which scopes and accounts, and what is wrong in the
// configuration. It only reads.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/internal/status"
	"github.com/postern-mcp/postern/internal/termsafe"
)

func newStatusCmd(stdout io.Writer) *cobra.Command {
	var cfgPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "accounts and their sync state, the store, registered hosts and problems",
		Long: `Show at a glance: each account with its messages and last sync (or "partly
synced" when a sync was interrupted), where the store is and its size, the agent
hosts registered with postern integrations setup with the scopes and accounts
each was given, and the problems of the configuration (as postern config check
finds them). It changes nothing and exits 0 even when it lists problems; use
postern config check for an exit status.`,
		Example: "  postern status\n  postern status --json",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			r := status.Build(postVersion(), cfgPath, storePath())
			if asJSON {
				b, _ := json.MarshalIndent(r, "", "  ")
				_, err := stdout.Write(append(termsafe.JSON(b), '\n'))
				return err
			}
			printStatus(stdout, r)
			return nil
		},
	}
	addConfigFlag(cmd, &cfgPath)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// printStatus writes the report for a person.
func printStatus(w io.Writer, r status.Report) {
	line := func(format string, args ...any) { fmt.Fprintln(w, termsafe.Line(fmt.Sprintf(format, args...))) }
	line("postern %s", r.Version)
	if r.Config.Exists {
		line("Configuration: %s", r.Config.Path)
	} else {
		line("Configuration: %s (not written yet: postern account add writes it)", r.Config.Path)
	}
	if r.Store.Exists {
		line("Store: %s (%s)", r.Store.Path, byteSize(r.Store.Bytes))
	} else {
		line("Store: %s (not created yet: postern sync creates it)", r.Store.Path)
	}
	fmt.Fprintln(w)
	if len(r.Accounts) == 0 {
		line("Accounts: none. Add one with postern account add NAME --imap HOST:PORT --user USER --password-cmd CMD (or --maildir PATH).")
	} else {
		line("Accounts:")
		for _, a := range r.Accounts {
			line("  %s (%s, %s): %s", a.Name, a.Kind, a.Where, a.Sync)
			for _, w := range a.Warnings {
				line("    warning: %s", w)
			}
		}
	}
	if len(r.SendAllow) > 0 {
		line("Sending: only to %s ([send] allow)", strings.Join(r.SendAllow, ", "))
	} else {
		line("Sending: to any recipient you approve ([send] allow is not set)")
	}
	fmt.Fprintln(w)
	if len(r.Hosts) == 0 {
		line("Hosts: none registered. postern integrations setup HOST registers one (postern integrations list shows them).")
	} else {
		line("Hosts:")
		for _, h := range r.Hosts {
			scopes := "the configuration's [mcp] scopes, else the defaults"
			if len(h.Scopes) > 0 {
				scopes = strings.Join(h.Scopes, ", ")
			}
			if h.Preset != "" {
				scopes = h.Preset + " (" + scopes + ")"
			}
			accts := "every account"
			if len(h.Accounts) > 0 {
				accts = strings.Join(h.Accounts, ", ")
			}
			line("  %s (%s scope, as %q): scopes %s; accounts %s", h.Host, h.Scope, h.Name, scopes, accts)
		}
	}
	fmt.Fprintln(w)
	if len(r.Problems) == 0 {
		line("Problems: none.")
		return
	}
	line("Problems:")
	for _, p := range r.Problems {
		line("  %s", p)
	}
}

// byteSize is n in the unit a person reads best.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

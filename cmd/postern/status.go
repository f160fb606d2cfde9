package main

// postern status: what a person wants to know at a glance — the accounts and
// how far each is synced, where the store is and how large, which agent hosts
// were registered with which scopes and accounts, and what is wrong in the
// configuration. It only reads.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// Sync states of an account, as account list and status say them.
const (
	stateNever   = "never synced"
	statePartly  = "partly synced"
	stateSynced  = "synced"
	stateFailing = "failed"
)

// syncState says how far an account is synced. The store records the end of
// each sync (last_sync, last_error); a sync interrupted before its first end
// leaves messages stored and no last_sync: that account is partly synced.
func syncState(x store.AccountStat, inStore bool) (state, words string) {
	switch {
	case !inStore || (x.LastSync.IsZero() && x.Messages == 0):
		return stateNever, stateNever
	case x.LastSync.IsZero():
		return statePartly, fmt.Sprintf("partly synced: %d messages, run postern sync to finish", x.Messages)
	case x.LastError != "":
		return stateFailing, fmt.Sprintf("%d messages; the last sync (%s) failed: %s", x.Messages, x.LastSync.Format(time.RFC3339), x.LastError)
	}
	return stateSynced, fmt.Sprintf("%d messages, synced %s", x.Messages, x.LastSync.Format(time.RFC3339))
}

// statusReport is what postern status shows, and its --json.
type statusReport struct {
	Version  string       `json:"version"`
	Config   statusFile   `json:"config"`
	Store    statusFile   `json:"store"`
	Accounts []accountRow `json:"accounts"`
	// SendAllow is [send] allow: the only recipients a send may reach (empty: anyone).
	SendAllow []string              `json:"send_allow"`
	Hosts     []integrations.Record `json:"hosts"`
	Problems  []string              `json:"problems"`
}

type statusFile struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	Bytes  int64  `json:"bytes,omitempty"`
}

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
			r := buildStatus(cfgPath)
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

// buildStatus gathers the report; what cannot be read is one of its problems.
func buildStatus(cfgPath string) statusReport {
	r := statusReport{Version: postVersion(), Accounts: []accountRow{}, SendAllow: []string{}, Hosts: []integrations.Record{}}
	if abs, err := filepath.Abs(cfgPath); err == nil {
		cfgPath = abs
	}
	r.Config = statusFile{Path: cfgPath}
	if fi, err := os.Stat(cfgPath); err == nil {
		r.Config.Exists, r.Config.Bytes = true, fi.Size()
	}
	r.Store = statusFile{Path: storePath()}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(storePath() + suffix); err == nil {
			r.Store.Bytes += fi.Size()
			r.Store.Exists = r.Store.Exists || suffix == ""
		}
	}
	cfg, problems := configProblems(cfgPath)
	r.Problems = append([]string{}, problems...)
	if cfg != nil {
		stats, err := readStats()
		if err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("the store %s cannot be read (%v); run postern sync to repair it, or remove the file to start anew", storePath(), err))
		}
		r.Accounts = accountRows(cfg, stats)
		r.SendAllow = append(r.SendAllow, cfg.Send.Allow...)
	}
	if recs, err := integrations.LoadRecords(integrations.RecordPath(cfgPath)); err == nil && recs != nil {
		r.Hosts = recs
	}
	return r
}

// configProblems checks the configuration at path and the records of setup
// beside it: one sentence per problem. The configuration is nil when it cannot
// be read at all.
func configProblems(path string) (*config.Config, []string) {
	var ps []string
	cfg, err := config.Parse(path)
	if err != nil {
		return nil, []string{err.Error()}
	}
	for _, p := range cfg.Problems(dispatch.KnownScope) {
		ps = append(ps, "the configuration "+path+": "+p)
	}
	if len(ps) > 0 {
		if _, err := config.Load(path); err != nil {
			cfg = nil // Load refuses it, and so will every command
		}
	}
	recs, err := integrations.LoadRecords(integrations.RecordPath(path))
	if err != nil {
		ps = append(ps, err.Error())
	}
	for _, rec := range recs {
		for _, s := range rec.Scopes {
			if !dispatch.KnownScope(s) {
				ps = append(ps, fmt.Sprintf("host %s was given scope %q, which is not a scope; run postern integrations setup %s --scopes LIST again", rec.Host, s, rec.Host))
			}
		}
		if cfg != nil {
			for _, a := range rec.Accounts {
				if !hasAccount(cfg, a) {
					ps = append(ps, fmt.Sprintf("host %s was given account %q, which is not configured; postern mcp will refuse to start for it: run postern integrations setup %s again with the accounts it should see", rec.Host, a, rec.Host))
				}
			}
		}
	}
	return cfg, ps
}

// printStatus writes the report for a person.
func printStatus(w io.Writer, r statusReport) {
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

// Package status is what postern status and postern account list tell a person at a glance:
// each account and how far it is synced, where the store is and how large, which agent hosts
// were registered with which grant, and what is wrong in the configuration and the records of
// setup. It only reads, and prints nothing.
package status

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
)

// Sync states of an account, as account list and status say them.
const (
	StateNever   = "never synced"
	StatePartly  = "partly synced"
	StateSynced  = "synced"
	StateFailing = "failed"
)

// SyncState says how far an account is synced. The store records the end of
// each sync (last_sync, last_error); a sync interrupted before its first end
// leaves messages stored and no last_sync: that account is partly synced.
func SyncState(x store.AccountStat, inStore bool) (state, words string) {
	switch {
	case !inStore || (x.LastSync.IsZero() && x.Messages == 0):
		return StateNever, StateNever
	case x.LastSync.IsZero():
		return StatePartly, fmt.Sprintf("partly synced: %d messages, run postern sync to finish", x.Messages)
	case x.LastError != "":
		return StateFailing, fmt.Sprintf("%d messages; the last sync (%s) failed: %s", x.Messages, x.LastSync.Format(time.RFC3339), x.LastError)
	}
	return StateSynced, fmt.Sprintf("%d messages, synced %s", x.Messages, x.LastSync.Format(time.RFC3339))
}

// Report is what postern status shows, and its --json.
type Report struct {
	Version  string       `json:"version"`
	Config   File         `json:"config"`
	Store    File         `json:"store"`
	Accounts []AccountRow `json:"accounts"`
	// SendAllow is [send] allow: the only recipients a send may reach (empty: anyone).
	SendAllow []string              `json:"send_allow"`
	Hosts     []integrations.Record `json:"hosts"`
	Problems  []string              `json:"problems"`
}

type File struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	Bytes  int64  `json:"bytes,omitempty"`
}

// AccountRow is an account as account list shows it.
type AccountRow struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Server      string `json:"server,omitempty"`
	User        string `json:"user,omitempty"`
	TLS         string `json:"tls,omitempty"`
	TLSCA       string `json:"tls_ca,omitempty"`
	Path        string `json:"path,omitempty"`
	Address     string `json:"address,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	SMTP        string `json:"smtp,omitempty"`
	SMTPTLS     string `json:"smtp_tls,omitempty"`
	Messages    int    `json:"messages"`
	State       string `json:"state"` // never synced, partly synced, synced or failed
	LastSync    string `json:"last_sync,omitempty"`
	Error       string `json:"last_error,omitempty"`
	// Warnings are what the syncs skipped or changed of single items, until they sync cleanly.
	Warnings []string `json:"warnings,omitempty"`
	// Sync is the sync state in words.
	Sync string `json:"-"`
	// Where is where its mail is, in a word (postern status); Line, how postern reaches it
	// (postern account list).
	Where, Line string `json:"-"`
}

// Accounts are the configured accounts with their sync state from the store.
func Accounts(cfg *config.Config, stats map[string]store.AccountStat) []AccountRow {
	rows := []AccountRow{}
	for _, a := range cfg.Accounts {
		r := AccountRow{Name: a.Name, Kind: a.Kind, Server: a.Server, User: a.User, TLS: a.TLS, TLSCA: a.TLSCA, Path: a.Path, Address: a.From(), DisplayName: a.DisplayName, Where: kinds.Where(a), Line: kinds.Line(a)}
		if a.SMTP != "" {
			r.SMTP, r.SMTPTLS = a.SMTP, a.SMTPSecurity()
		}
		x, ok := stats[a.Name]
		r.State, r.Sync = SyncState(x, ok)
		if ok {
			r.Messages, r.Error, r.Warnings = x.Messages, x.LastError, x.Warnings
			if !x.LastSync.IsZero() {
				r.LastSync = x.LastSync.Format(time.RFC3339)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// ReadStats reads the accounts' sync state from the store at path, when there is one.
func ReadStats(storePath string) (map[string]store.AccountStat, error) {
	if _, err := os.Stat(storePath); err != nil {
		return map[string]store.AccountStat{}, nil
	}
	st, err := store.Open(storePath)
	if err != nil {
		return map[string]store.AccountStat{}, err
	}
	defer st.Close()
	return st.AccountStats(context.Background())
}

// Build gathers the report of postern version for the configuration at cfgPath and the
// store at storePath; what cannot be read is one of its problems.
func Build(version, cfgPath, storePath string) Report {
	r := Report{Version: version, Accounts: []AccountRow{}, SendAllow: []string{}, Hosts: []integrations.Record{}}
	if abs, err := filepath.Abs(cfgPath); err == nil {
		cfgPath = abs
	}
	r.Config = File{Path: cfgPath}
	if fi, err := os.Stat(cfgPath); err == nil {
		r.Config.Exists, r.Config.Bytes = true, fi.Size()
	}
	r.Store = File{Path: storePath}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(storePath + suffix); err == nil {
			r.Store.Bytes += fi.Size()
			r.Store.Exists = r.Store.Exists || suffix == ""
		}
	}
	cfg, problems := Problems(cfgPath)
	r.Problems = append([]string{}, problems...)
	if cfg != nil {
		stats, err := ReadStats(storePath)
		if err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("the store %s cannot be read (%v); run postern sync to repair it, or remove the file to start anew", storePath, err))
		}
		r.Accounts = Accounts(cfg, stats)
		r.SendAllow = append(r.SendAllow, cfg.Send.Allow...)
	}
	if recs, err := integrations.LoadRecords(integrations.RecordPath(cfgPath)); err == nil && recs != nil {
		r.Hosts = recs
	}
	return r
}

// Problems checks the configuration at path and the records of setup
// beside it: one sentence per problem. The configuration is nil when it cannot
// be read at all.
func Problems(path string) (*config.Config, []string) {
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

func hasAccount(cfg *config.Config, name string) bool {
	for _, a := range cfg.Accounts {
		if a.Name == name {
			return true
		}
	}
	return false
}

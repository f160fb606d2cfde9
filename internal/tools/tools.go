// Package tools implements the catalog's tools (the generated Handlers
// interface) and the resources the server offers. Service composes the domain
// packages under internal/tools, one per catalog file, each implementing its
// file's interface, and serves the tools of the files not yet in a package of
// their own. Every handler reads the configuration and the store through the view
// dispatch opens for its call (package view); it never returns an account's
// secret or how it is obtained.
package tools

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	srcnotes "github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/attachments"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"github.com/postern-mcp/postern/internal/tools/notes"
	"github.com/postern-mcp/postern/internal/tools/unsubscribe"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// Service implements generated.Handlers.
type Service struct {
	Version string
	Config  *config.Watcher
	// Only, when not empty, is the set of account names this connection may see
	// (postern mcp --account); every other account is hidden from every tool.
	Only []string
	// StorePath is the store's file; the call's view opens it on first use (package view).
	StorePath string
	// SaveDir is postern mcp --save-dir: the folder attachments are saved in, over the
	// configuration's save_dir (package attachments).
	SaveDir string
	// Sync runs a sync of the given accounts (mail_sync); nil when this process cannot sync.
	Sync func(ctx context.Context, accounts []config.Account) ([]mailsync.Outcome, error)

	mu    sync.Mutex
	views *view.Opener // made from the fields above at first use
	k     *kit.Kit     // made from the fields above at first use

	// The domains, one per catalog file (package doc): each implements its interface of
	// generated.Handlers over the kit, set at the first view.
	mail.Mail
	calendars.Calendars
	notes.Notes
	attachments.Attachments
	unsubscribe.Unsubscribe
}

// kit returns what the domain packages share, made from the fields at first use.
func (s *Service) kit() *kit.Kit {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.k == nil {
		s.k = &kit.Kit{Version: s.Version, Config: s.Config, SaveDir: s.SaveDir, Sync: s.Sync}
		s.Mail.Kit, s.Mail.Invitation = s.k, s.invitationView
		s.Notes.Kit = s.k
		s.Calendars.Kit = s.k
		s.Attachments.Kit, s.Attachments.FindMessage = s.k, s.Mail.Message
		s.Unsubscribe.Kit, s.Unsubscribe.Mail = s.k, &s.Mail
	}
	return s.k
}

// access is what the person's projects let this call see and write.
func (s *Service) access(ctx context.Context) (*kit.Access, error) { return s.kit().Access(ctx) }

type configAccount = config.Account

func (s *Service) opener() *view.Opener {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.views == nil {
		s.views = &view.Opener{Config: s.Config, Only: s.Only, StorePath: s.StorePath}
	}
	return s.views
}

// OpenView implements dispatch.Views: it returns ctx carrying the view of the call ctx
// describes, which every handler reads what it may see from. Besides dispatch, only the
// entry points that are not tools call it (resources, and what the person runs: rules at
// sync, notes indexing, Sieve push, project holds).
func (s *Service) OpenView(ctx context.Context) context.Context {
	s.kit() // the domains' kit, before any of them runs
	return s.opener().Open(ctx)
}

// RefreshNotes indexes the configured notes folders, as every notes tool does first; postern
// sync calls it. It returns nil and no error when no notes folder is configured.
func (s *Service) RefreshNotes(ctx context.Context) (*srcnotes.Result, []string, error) {
	return s.Notes.RefreshNotes(s.OpenView(ctx)) // not a tool: it opens its own view
}

// store returns the store through the call's view; without one, ErrNoView.
func (s *Service) store(ctx context.Context) (*store.Store, error) {
	v, err := view.From(ctx)
	if err != nil {
		return nil, err
	}
	return v.Store()
}

// Close closes the store if a call opened it.
func (s *Service) Close() error {
	s.mu.Lock()
	o := s.views
	s.mu.Unlock()
	if o != nil {
		return o.Close()
	}
	return nil
}

// syncStats returns each account's sync state, or nil when the store cannot be read.
func (s *Service) syncStats(ctx context.Context) map[string]store.AccountStat {
	st, err := s.store(ctx)
	if err != nil {
		return nil
	}
	stats, err := st.AccountStats(ctx)
	if err != nil {
		return nil
	}
	// An account's count leaves out what the person's projects keep (kit.Access).
	acc, err := s.access(ctx)
	if err != nil {
		return nil
	}
	if acc.Active() {
		for name, x := range stats {
			n, err := acc.LeftOut(ctx, st, []string{name}, "")
			if err != nil {
				return nil
			}
			x.Messages -= n
			if x.Warnings, err = visibleWarnings(ctx, acc, st, name); err != nil {
				return nil
			}
			stats[name] = x
		}
	}
	return stats
}

// visibleWarnings are the sync warnings of an account but those about a calendar, task list,
// address book or folder a closed project keeps: a warning names its object, and what a
// project keeps is not named to agents (the person's postern status names them all).
func visibleWarnings(ctx context.Context, acc *kit.Access, st *store.Store, account string) ([]string, error) {
	ws, err := st.AccountSyncWarnings(ctx, account)
	if err != nil || len(ws) == 0 {
		return nil, err
	}
	cs, err := st.Collections(ctx, []string{account}, "")
	if err != nil {
		return nil, err
	}
	kept := map[string]bool{}
	for _, c := range cs {
		kept[c.URL] = acc.KeepsCollection(calendars.CollKind(c), c)
	}
	var out []string
	for _, w := range ws {
		if k, isColl := kept[w.Place]; k || !isColl && acc.KeepsFolder(account, w.Place) {
			continue
		}
		out = append(out, w.Text)
	}
	return out, nil
}

var _ generated.Handlers = (*Service)(nil)

// visible returns the configured accounts this connection may see, through the call's view.
func (s *Service) visible(ctx context.Context) ([]config.Account, error) {
	v, err := view.From(ctx)
	if err != nil {
		return nil, err
	}
	return v.Accounts()
}

// visibleNames returns the names of the accounts this connection may see.
func (s *Service) visibleNames(ctx context.Context) ([]string, error) {
	return s.kit().VisibleNames(ctx)
}

// allowed reports whether this connection may see the account named name.
func (s *Service) allowed(ctx context.Context, name string) bool {
	v, err := view.From(ctx)
	return err == nil && v.Allowed(name)
}

// Status implements the status tool, which also lists the accounts (the old accounts tool).
func (s *Service) Status(ctx context.Context, _ *generated.StatusArgs) (*generated.StatusResult, error) {
	info := dispatch.InfoFrom(ctx)
	res := &generated.StatusResult{
		Version:         s.Version,
		ProtocolEra:     info.Era,
		ProtocolVersion: info.ProtocolVersion,
		Client:          info.ClientName,
		GrantedScopes:   append([]string{}, info.Scopes...),
		ToolCount:       info.ToolCount,
		ConfigPath:      s.Config.Path(),
		Accounts:        []generated.AccountStatus{},
	}
	accts, err := s.visible(ctx)
	if err != nil {
		res.ConfigError = err.Error()
		return res, nil
	}
	var stats map[string]store.AccountStat
	if len(accts) > 0 {
		stats = s.syncStats(ctx)
	}
	for _, a := range accts {
		// What the account is, as configured, but never its password or how it is obtained.
		row := generated.AccountStatus{Name: a.Name, Kind: a.Kind, Server: a.Server, User: a.User, TLS: a.TLS, Path: a.Path,
			Caldav: shownURL(a.CalDAV), Carddav: shownURL(a.CardDAV)}
		if x, ok := stats[a.Name]; ok {
			row.Messages = kit.Ptr(x.Messages)
			row.LastError = x.LastError
			row.Warnings = x.Warnings
			if !x.LastSync.IsZero() {
				row.LastSync = x.LastSync.Format(time.RFC3339)
			}
		}
		res.Accounts = append(res.Accounts, row)
	}
	if cfg, err := s.Config.Get(); err == nil {
		res.SendAllow = append(res.SendAllow, cfg.Send.Allow...)
	}
	names := make([]string, 0, len(accts))
	for _, a := range accts {
		names = append(names, a.Name)
	}
	res.SyncedAt = s.kit().SyncedAt(ctx, names)
	return res, nil
}

// shownURL is a configured URL as an answer may show it: scheme, host and path only. A user
// name, a query or a fragment may carry a secret (a token in a private link), so they are
// dropped; what does not parse as a URL with a host is not shown at all.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || u.Host == "" {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// Docs implements the docs tool.
func (s *Service) Docs(_ context.Context, a *generated.DocsArgs) (*generated.DocsResult, error) {
	if a.Page == nil || *a.Page == "" {
		res := &generated.DocsResult{}
		for _, p := range generated.DocPages {
			res.Pages = append(res.Pages, generated.DocPage{Name: p.Name, Title: p.Title})
		}
		return res, nil
	}
	p, text, ok := page(*a.Page)
	if !ok {
		return nil, fmt.Errorf("there is no page %q; the pages are %s", *a.Page, pageNames())
	}
	return &generated.DocsResult{Page: p.Name, Title: p.Title, Text: text}, nil
}

func page(name string) (generated.DocPageSpec, string, bool) {
	for _, p := range generated.DocPages {
		if p.Name == name {
			b, err := generated.Files.ReadFile("docs/" + name + ".md")
			if err != nil {
				return p, "", false
			}
			text := string(b)
			// Drop the generated-file marker: it is for editors, not readers.
			if strings.HasPrefix(text, "<!--") {
				if i := strings.Index(text, "-->"); i >= 0 {
					text = strings.TrimLeft(text[i+3:], "\n")
				}
			}
			return p, text, true
		}
	}
	return generated.DocPageSpec{}, "", false
}

func pageNames() string {
	names := make([]string, len(generated.DocPages))
	for i, p := range generated.DocPages {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// MaxShowText and MaxHeaderText are kit's, named here for the tests of the command line.
const (
	MaxShowText   = kit.MaxShowText
	MaxHeaderText = kit.MaxHeaderText
)

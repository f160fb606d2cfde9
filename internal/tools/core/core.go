// Package core serves the tools of catalog/core.yaml: status (the server, the grant and the
// visible accounts with their sync state) and docs (the pages of generated/docs).
package core

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// Core implements generated.CoreHandlers.
type Core struct{ *kit.Kit }

var _ generated.CoreHandlers = (*Core)(nil)

// syncStats returns each account's sync state, or nil when the store cannot be read.
func (s *Core) syncStats(ctx context.Context) map[string]store.AccountStat {
	st, err := s.Store(ctx)
	if err != nil {
		return nil
	}
	stats, err := st.AccountStats(ctx)
	if err != nil {
		return nil
	}
	// An account's count leaves out what the person's projects keep (kit.Access).
	acc, err := s.Access(ctx)
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

// Status implements the status tool, which also lists the accounts (the old accounts tool).
func (s *Core) Status(ctx context.Context, _ *generated.StatusArgs) (*generated.StatusResult, error) {
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
	accts, err := s.Visible(ctx)
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
	res.SyncedAt = s.SyncedAt(ctx, names)
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
func (s *Core) Docs(_ context.Context, a *generated.DocsArgs) (*generated.DocsResult, error) {
	if a.Page == nil || *a.Page == "" {
		res := &generated.DocsResult{}
		for _, p := range generated.DocPages {
			res.Pages = append(res.Pages, generated.DocPage{Name: p.Name, Title: p.Title})
		}
		return res, nil
	}
	p, text, ok := Page(*a.Page)
	if !ok {
		return nil, fmt.Errorf("there is no page %q; the pages are %s", *a.Page, PageNames())
	}
	return &generated.DocsResult{Page: p.Name, Title: p.Title, Text: text}, nil
}

// Page is the docs page named name, its text without the generated-file marker.
func Page(name string) (generated.DocPageSpec, string, bool) {
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

// PageNames lists the docs pages, for a sentence.
func PageNames() string {
	names := make([]string, len(generated.DocPages))
	for i, p := range generated.DocPages {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

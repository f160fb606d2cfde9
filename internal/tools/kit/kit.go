// Package kit is what the tool packages under internal/tools share: the service's settings
// (Kit), what the person's projects let a call see and write (Access), and the reading of
// the call's view (package view) — the store, the accounts — so that every domain package
// reads them the same way and none opens the store itself.
package kit

import (
	"context"
	"sync"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// Kit is the service's settings and what outlives a call, shared by every domain package.
type Kit struct {
	Version string
	Config  *config.Watcher
	// SaveDir is postern mcp --save-dir: the folder attachments are saved in, over the
	// configuration's save_dir.
	SaveDir string
	// Sync runs a sync of the given accounts (mail_sync); nil when this process cannot sync.
	Sync func(ctx context.Context, accounts []config.Account) ([]mailsync.Outcome, error)

	mailMu    sync.Mutex
	mailCache *mailCache // what the projects keep of the mail (access.go)
}

// Store returns the store through the call's view; without one, view.ErrNoView.
func (k *Kit) Store(ctx context.Context) (*store.Store, error) {
	v, err := view.From(ctx)
	if err != nil {
		return nil, err
	}
	return v.Store()
}

// Visible returns the configured accounts this call may see, through its view.
func (k *Kit) Visible(ctx context.Context) ([]config.Account, error) {
	v, err := view.From(ctx)
	if err != nil {
		return nil, err
	}
	return v.Accounts()
}

// VisibleNames returns the names of the accounts this call may see.
func (k *Kit) VisibleNames(ctx context.Context) ([]string, error) {
	accts, err := k.Visible(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(accts))
	for _, a := range accts {
		names = append(names, a.Name)
	}
	return names, nil
}

// Allowed reports whether this call may see the account named name.
func (k *Kit) Allowed(ctx context.Context, name string) bool {
	v, err := view.From(ctx)
	return err == nil && v.Allowed(name)
}

// StoreExists says whether the store is open or its file is there: a look that never
// creates it.
func (k *Kit) StoreExists(ctx context.Context) bool {
	v, err := view.From(ctx)
	return err == nil && v.StoreExists()
}

// Set is the projects file as this call reads it.
func (a *Access) Set() *projects.Set { return a.set }

// KeptThreads is, once Mail ran, the set of threads its Hide lists.
func (a *Access) KeptThreads() map[int64]bool { return a.threads }

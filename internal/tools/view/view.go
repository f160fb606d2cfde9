// Package view is what one tool call may see: the accounts its connection may see
// (postern mcp --account), the projects file's filter as it is for the call's era, and the
// store. Package dispatch opens one View for every call and hands it to the handler in the
// call's context; a handler reads the store only through it (View.Store), so that no
// handler can reach the store without the call's view, and a handler called without one
// is refused (ErrNoView). The Opener keeps what outlives a call: the open store and the
// projects file's watcher.
package view

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
)

// ErrNoView is the refusal of a handler called without the call's view.
var ErrNoView = errors.New("this call reached its tool without a view of what it may see, and postern refused it; this is a bug in postern")

// Opener opens the view of each call. Its zero value with Config set works; the store is
// opened at the first call that reads it, and kept open until Close.
type Opener struct {
	Config *config.Watcher
	// Only, when not empty, is the set of account names the connection may see.
	Only []string
	// StorePath is the store's file.
	StorePath string

	mu       sync.Mutex
	st       *store.Store
	projects *projects.Watcher
}

// View is one call's view. Its methods are safe for one call's goroutines.
type View struct {
	o *Opener
	// person: the call is the person's at the terminal (dispatch.EraCLI), who sees everything.
	person bool
}

type ctxKey struct{}

// Open returns ctx carrying a new view of the call ctx describes (dispatch.InfoFrom).
func (o *Opener) Open(ctx context.Context) context.Context {
	v := &View{o: o, person: dispatch.InfoFrom(ctx).Era == dispatch.EraCLI}
	return context.WithValue(ctx, ctxKey{}, v)
}

// From returns the view of the call ctx belongs to, or ErrNoView.
func From(ctx context.Context) (*View, error) {
	v, _ := ctx.Value(ctxKey{}).(*View)
	if v == nil || v.o == nil {
		return nil, ErrNoView
	}
	return v, nil
}

// Close closes the store if a view opened it.
func (o *Opener) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.st != nil {
		err := o.st.Close()
		o.st = nil
		return err
	}
	return nil
}

// Store returns the store, opening it on first use. A failure (the store busy with a first
// sync, say) is not remembered: the next call tries again.
func (v *View) Store() (*store.Store, error) {
	o := v.o
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.st != nil {
		return o.st, nil
	}
	if o.StorePath == "" {
		return nil, errors.New("no store is configured")
	}
	st, err := store.Open(o.StorePath)
	if err != nil {
		return nil, err
	}
	o.st = st
	return st, nil
}

// StoreExists says whether the store is open or its file is there: a look that never
// creates it.
func (v *View) StoreExists() bool {
	o := v.o
	o.mu.Lock()
	open := o.st != nil
	o.mu.Unlock()
	if open {
		return true
	}
	_, err := os.Stat(o.StorePath)
	return o.StorePath != "" && err == nil
}

// Accounts returns the configured accounts the call may see, in configuration order.
func (v *View) Accounts() ([]config.Account, error) {
	cfg, err := v.o.Config.Get()
	if err != nil {
		return nil, err
	}
	var out []config.Account
	for _, a := range cfg.Accounts {
		if v.Allowed(a.Name) {
			out = append(out, a)
		}
	}
	return out, nil
}

// Allowed reports whether the call may see the account named name.
func (v *View) Allowed(name string) bool {
	if len(v.o.Only) == 0 {
		return true
	}
	for _, n := range v.o.Only {
		if n == name {
			return true
		}
	}
	return false
}

// Projects returns what the person's projects keep from this call, read again at each
// call; the person at the terminal gets the empty set (projects are about agents). An
// unreadable projects file is an error: nothing is shown until the person fixes it.
func (v *View) Projects() (*projects.Set, error) {
	if v.person {
		return &projects.Set{}, nil
	}
	o := v.o
	o.mu.Lock()
	if o.projects == nil {
		o.projects = projects.NewWatcher(projects.Path(o.Config.Path()))
	}
	w := o.projects
	o.mu.Unlock()
	return w.Get()
}

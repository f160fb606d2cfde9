// Package server wires what postern mcp (over standard input and output or Streamable HTTP)
// and postern call serve: around the tools service the command built, the sync that
// mail_sync runs, the registry with its audit log and approvals, the grant that follows the
// configuration, and the refusal of an --account that names no configured account; then the
// HTTP server kept until a signal. It reads no flag and prints only what Options.Stderr is for.
package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/audit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	syncrun "github.com/postern-mcp/postern/internal/sync"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/postern-mcp/postern/internal/tools"
)

// Options are what the command line read for a server.
type Options struct {
	Scopes   string          // --scopes: the grant, else the configuration's
	Accounts []string        // --account: only these are visible, and each must be configured
	Queue    *approval.Queue // where commits wait for postern approve
	Stderr   io.Writer       // warnings, each a "postern: " line
	// NoSuchAccount is the error for an --account the configuration does not have.
	NoSuchAccount func(name string, cfg *config.Config) error
}

// Wire gives svc, built over watcher, its sync, and builds the registry and the grant
// function. An --account that names no configured account closes the registry and is an
// error: it would show nothing, and an agent could not tell that from an empty mailbox.
func Wire(svc *tools.Service, watcher *config.Watcher, o Options) (*dispatch.Registry, func() dispatch.Grant, error) {
	// A sync lock the watch loop holds is waited for: its syncs are short.
	svc.Sync = (&syncrun.Runner{StorePath: svc.StorePath, Tools: svc, Wait: 30 * time.Second}).Sync
	reg, err := dispatch.New(svc)
	if err != nil {
		return nil, nil, err
	}
	reg.SetAudit(audit.Open(config.StateDir(), time.Now))
	c, err := approval.ForServer(watcher.Get, o.Queue, func(line string) { fmt.Fprintln(o.Stderr, "postern: "+line) })
	if err != nil {
		return nil, nil, err
	}
	reg.SetApprovals(c)
	grant, err := dispatch.Granter(o.Scopes, watcher.Get, func(scope string) {
		fmt.Fprintln(o.Stderr, "postern: "+dispatch.UnknownScopeWarning(scope))
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--scopes: %w", err)
	}
	if cfg, err := watcher.Get(); err != nil {
		fmt.Fprintf(o.Stderr, "postern: %s\n", termsafe.Text(err.Error()))
	} else {
		for _, name := range o.Accounts {
			if !HasAccount(cfg, name) {
				reg.Close()
				return nil, nil, fmt.Errorf("--account %s: %w", name, o.NoSuchAccount(name, cfg))
			}
		}
	}
	return reg, grant, nil
}

// HasAccount reports whether cfg configures an account of that name.
func HasAccount(cfg *config.Config, name string) bool {
	for _, a := range cfg.Accounts {
		if a.Name == name {
			return true
		}
	}
	return false
}

// Signals are the signals that end a server: a host usually ends one by closing its input,
// but some send SIGTERM (or the terminal SIGINT or SIGHUP).
var Signals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}

// CloseOnSignal closes reg (writing the audit lines still queued) and exits with 128 plus the
// signal's number when one of Signals comes. The returned function stops listening.
func CloseOnSignal(reg *dispatch.Registry) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, Signals...)
	go func() {
		if sig, ok := <-sigs; ok {
			reg.Close()
			os.Exit(128 + int(sig.(syscall.Signal)))
		}
	}()
	return func() { signal.Stop(sigs) }
}

// ServeHTTP serves handler on l until one of Signals comes (then it shuts down within 5 s and
// returns nil) or serving fails. closeHandler is called before either.
func ServeHTTP(l net.Listener, handler http.Handler, closeHandler func()) error {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, Signals...)
	defer signal.Stop(sigs)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		closeHandler()
		return fmt.Errorf("serving HTTP: %w", err)
	case <-sigs:
	}
	closeHandler()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	return nil
}

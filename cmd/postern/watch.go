package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source/kinds"
	syncrun "github.com/postern-mcp/postern/internal/sync"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/postern-mcp/postern/internal/tools"
	"github.com/postern-mcp/postern/internal/watch"
	"github.com/spf13/cobra"
)

// watchOptions are the loop's options for the configuration w: every account, whatever a
// server's --account shows (the store is shared by every server on it).
func watchOptions(w *config.Watcher, stderr io.Writer) (watch.Options, *tools.Service) {
	svc := &tools.Service{Version: postVersion(), Config: w, StorePath: storePath()}
	return watch.Options{
		StorePath: svc.StorePath,
		Config:    w.Get,
		Sync:      (&syncrun.Runner{StorePath: svc.StorePath, Tools: svc}).Sync,
		Open:      kinds.Open,
		Log:       func(line string) { fmt.Fprintln(stderr, "postern: "+termsafe.Line(line)) },
	}, svc
}

// startWatch starts the loop beside postern mcp, unless [sync] watch = false (or, for tests
// whose timing a background sync would change, POSTERN_WATCH=off). The returned function
// stops it.
func startWatch(w *config.Watcher, stderr io.Writer) (stop func()) {
	if cfg, err := w.Get(); (err == nil && !cfg.Watching()) || os.Getenv("POSTERN_WATCH") == "off" {
		return func() {}
	}
	opt, svc := watchOptions(w, stderr)
	end := watch.Start(opt, 2*time.Second)
	return func() {
		if end() { // else the process's exit ends it, as a kill would
			svc.Close()
		}
	}
}

func newWatchCmd(stderr io.Writer) *cobra.Command {
	var cfgPath string
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "keep the store synced in the foreground (what postern mcp does in the background)",
		Long: `Keep the local store following the servers until stopped: IMAP IDLE on each
account's INBOX, and a sync of every folder and calendar each [sync] interval
(default 5m, at least 30s), reconnecting with a growing wait after errors. Of
all the postern processes on one store (postern mcp runs the same loop), one
holds the watch lock and syncs; the others only read and take over within
seconds when it stops. postern service install runs this command at login.
Ctrl-C (SIGINT) or SIGTERM stops it at once, keeping what it stored, with exit
status 0.`,
		Example: "  postern watch\n  postern watch --config ~/.config/postern/config.toml",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdWatch(cfgPath, stderr)
		},
	}
	addConfigFlag(cmd, &cfgPath)
	return cmd
}

func cmdWatch(cfgPath string, stderr io.Writer) error {
	path, err := filepath.Abs(cfgPath)
	if err != nil {
		return err
	}
	w := config.NewWatcher(path)
	cfg, err := w.Get()
	if err != nil {
		return err
	}
	if len(cfg.Accounts) == 0 {
		return noSuchAccount("", cfg)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	syncrun.Memory()
	opt, svc := watchOptions(w, stderr)
	defer svc.Close()
	watch.RunFor(ctx, opt, syncrun.StopGrace, func() { // a commit on a busy disk: exit anyway, as a kill would
		fmt.Fprintln(stderr, "postern: watch stopped; what it stored is kept")
		os.Exit(0)
	})
	fmt.Fprintln(stderr, "postern: watch stopped; what it stored is kept")
	return nil
}

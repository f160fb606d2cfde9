// Package sync runs one sync the same way for postern sync, the mail_sync tool and the watch
// loop: the mail, calendars and contacts of the accounts (mailsync.Run), then the rules over
// the new mail of the accounts that synced, then, when asked, the notes folders. It says what
// each step did and prints nothing; it never runs the rules over an account whose sync failed
// or was cut short.
//
// Its name is the standard library's: importers name it syncrun.
package sync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools"
)

// Tools runs the rules and indexes the notes (tools.Service): the same code as the tools, so
// that what the rules change is in the action log and mail_undo puts it back.
type Tools interface {
	ApplyRules(ctx context.Context, accounts []string) ([]tools.RuleRun, error)
	RefreshNotes(ctx context.Context) (*notes.Result, []string, error)
}

// Runner is how one process syncs.
type Runner struct {
	// StorePath is the store synced into; it is opened for each run.
	StorePath string
	// Tools runs the rules and indexes the notes.
	Tools Tools
	// Mail are the options of every account's sync (progress, warnings, batch size).
	Mail mailsync.Options
	// Wait is how long a sync lock another sync holds (the watch loop's, a postern sync) is
	// waited for before its error is returned; 0: not at all.
	Wait time.Duration
	// Notes: index the configured notes folders after the mail and the rules.
	Notes bool
	// Mailed, when set, is told the accounts' outcomes as soon as their mail is synced,
	// before the rules run.
	Mailed func([]mailsync.Outcome)
}

// Result is what one run did.
type Result struct {
	// Mail are the accounts' outcomes, in the order given; fewer than the accounts when the
	// run was cut short before the next one.
	Mail []mailsync.Outcome
	// Cut: ctx ended before every account was synced; the rules and notes did not run.
	Cut bool
	// Rules is what the rules did to each account that synced; RulesErr, why they did not
	// run at all.
	Rules    []tools.RuleRun
	RulesErr error
	// Notes is what indexing the notes folders changed (nil: no notes folder, or Notes was
	// not asked); NoteProblems, the folders that could not be read; NotesErr, why it failed.
	Notes        *notes.Result
	NoteProblems []string
	NotesErr     error
}

// Stored is the number of new messages the run stored.
func (r *Result) Stored() int {
	n := 0
	for _, o := range r.Mail {
		n += o.New
	}
	return n
}

// Outcomes are the accounts' outcomes with the failure of their rules put into them: what
// mail_sync and the watch loop report.
func (r *Result) Outcomes() []mailsync.Outcome {
	outs := r.Mail
	for _, run := range r.Rules {
		for i := range outs {
			if outs[i].Account == run.Account && len(run.Errors) > 0 && outs[i].Error == "" {
				outs[i].Error = "the rules did not all run: " + strings.Join(run.Errors, "; ")
			}
		}
	}
	return outs
}

// Sync is Run as mail_sync and the watch loop call it (tools.Service.Sync, watch.Options.Sync).
func (r *Runner) Sync(ctx context.Context, accts []config.Account) ([]mailsync.Outcome, error) {
	res, err := r.Run(ctx, accts)
	if err != nil {
		return res.Mail, err
	}
	return res.Outcomes(), nil
}

// Run syncs accts (none: only the notes, when asked), then runs the rules over the new mail
// of those that synced, then indexes the notes. An error is one that stopped the mail sync
// as a whole (the store cannot be opened, the sync lock is held); an account's failure is in
// its outcome, the rules' and notes' in the result.
func (r *Runner) Run(ctx context.Context, accts []config.Account) (*Result, error) {
	res := &Result{}
	if len(accts) > 0 {
		if err := r.mail(ctx, accts, res); err != nil {
			return res, err
		}
		if res.Cut && ctx.Err() != nil {
			return res, nil // what was stored is kept; the next sync continues it
		}
		var synced []string
		for _, o := range res.Mail {
			if o.Error == "" && !o.Interrupted {
				synced = append(synced, o.Account)
			}
		}
		if len(synced) > 0 {
			res.Rules, res.RulesErr = r.Tools.ApplyRules(ctx, synced)
		}
	}
	if r.Notes {
		res.Notes, res.NoteProblems, res.NotesErr = r.Tools.RefreshNotes(ctx)
	}
	return res, nil
}

func (r *Runner) mail(ctx context.Context, accts []config.Account, res *Result) error {
	st, err := Open(ctx, r.StorePath)
	if err != nil {
		return err
	}
	defer Close(ctx, st)
	giveUp := time.Now().Add(r.Wait)
	outs, err := mailsync.Run(ctx, st, accts, r.Mail)
	for store.IsBusy(err) && time.Now().Before(giveUp) && ctx.Err() == nil {
		sleep(ctx, 200*time.Millisecond)
		outs, err = mailsync.Run(ctx, st, accts, r.Mail)
	}
	res.Mail = outs
	if err != nil {
		return err
	}
	res.Cut = len(outs) < len(accts) // Run stops before the next account when ctx ends
	for _, o := range outs {
		res.Cut = res.Cut || o.Interrupted
	}
	if r.Mailed != nil {
		r.Mailed(outs)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Open opens the store at path, but returns at once when ctx ends: opening can take long (an
// index rebuild after a schema change), and a sync must end within 2 s of a signal. The open
// is then left to the process's exit, which SQLite survives as it survives a kill.
func Open(ctx context.Context, path string) (*store.Store, error) {
	type opened struct {
		st  *store.Store
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		st, err := store.Open(path)
		ch <- opened{st, err}
	}()
	select {
	case o := <-ch:
		return o.st, o.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Close closes the store. When ctx has ended it waits at most half a second: closing
// checkpoints the write-ahead log into the database, which a busy disk can make last; what
// was committed is safe in the log either way, and the next open finishes the checkpoint.
func Close(ctx context.Context, st *store.Store) {
	if ctx.Err() == nil {
		st.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		st.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
}

// Memory lets a sync run in more memory than Go's default: the garbage collector runs when
// the heap has grown to five times what is live (Go's default: twice), which makes a first
// sync about a tenth faster for a few tens of MiB, and harder again as the process nears
// 512 MiB. A GOGC or GOMEMLIMIT in the environment is left to decide.
func Memory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
}

// Profile writes a CPU profile of what runs until stop is called into path (for benchmarks);
// a path that exists is kept, and the profile goes to path.1, path.2, … (a bench runs several
// syncs). An empty path, or one that cannot be written, profiles nothing.
func Profile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	for i := 1; errors.Is(err, os.ErrExist) && i < 100; i++ {
		f, err = os.OpenFile(fmt.Sprintf("%s.%d", path, i), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	}
	if err != nil {
		return func() {}
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// PeakMemory is this process's peak resident memory, as Linux reports it.
func PeakMemory() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
		}
	}
	return "unknown"
}

// Accounts are the accounts postern sync syncs: every configured one, or only the one named
// only; ok is false when only names none.
func Accounts(cfg *config.Config, only string) (accts []config.Account, ok bool) {
	if only == "" {
		return cfg.Accounts, true
	}
	for _, a := range cfg.Accounts {
		if a.Name == only {
			accts = append(accts, a)
		}
	}
	return accts, len(accts) > 0
}

// BatchFromEnv sets how many messages are committed at once from POSTERN_SYNC_BATCH, when it
// is a positive number (else the default, 500, stays).
func (r *Runner) BatchFromEnv() {
	if v, err := strconv.Atoi(os.Getenv("POSTERN_SYNC_BATCH")); err == nil && v > 0 {
		r.Mail.BatchSize = v
	}
}

// SyncedLine is what a person reads of an account's outcome, in its kind's words; accts are
// the accounts synced, which say each one's kind.
func SyncedLine(accts []config.Account, o mailsync.Outcome) string {
	kind := ""
	for _, a := range accts {
		if a.Name == o.Account {
			kind = a.Kind
		}
	}
	k, _ := kinds.Lookup(kind)
	return k.SyncedLine(source.Result{New: o.New, Deleted: o.Deleted, FlagsChanged: o.FlagsChanged, Folders: o.Folders})
}

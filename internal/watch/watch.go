// Package watch keeps the store following the servers while postern mcp or postern watch runs.
// Of every process on one store, the one holding the watch lock (store.LockWatch) waits on each
// IMAP account's INBOX with IDLE and polls every account (all folders, calendars) each [sync]
// interval, through the very function postern sync and mail_sync use (Options.Sync); the
// others try to take the lock every few seconds and meanwhile only read. It never writes to a
// server, never logs a password, and stops as soon as ctx ends (a sync cut short keeps what
// it committed, and the next one continues).
//
// No library serves this: go-imap gives the IDLE command, the rest is the scheduling of
// syncs around it.
package watch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// Options is what Run needs.
type Options struct {
	// StorePath is the store kept synced; the watch lock is beside it.
	StorePath string
	// Config returns the configuration now; its accounts and [sync] interval are read again
	// before each round, so an account added while watching is synced.
	Config func() (*config.Config, error)
	// Sync syncs the accounts given into the store (mailsync.Run, then the rules), as postern
	// sync does; a *store.BusyError means another sync holds the sync lock.
	Sync func(ctx context.Context, accounts []config.Account) ([]mailsync.Outcome, error)
	// Open opens an account's source (kinds.Open); one with an Idle method is waited on.
	Open func(config.Account) (source.Source, error)
	// Log is told each line worth a person's eye, without a trailing newline; nil: none.
	Log func(string)
}

// idler is a source that can say when its INBOX changes (imap.Source): Idle calls changed
// once it waits, then at each change, and returns when ctx ends (nil) or its connection does.
type idler interface {
	Idle(ctx context.Context, changed func()) error
}

// retryEvery is how often a process that does not hold the watch lock tries to take it: often
// enough that one killed is replaced within an interval.
func retryEvery(interval time.Duration) time.Duration {
	return min(5*time.Second, interval/2)
}

// Run keeps watch until ctx ends, as the syncer while it holds the lock, else as a reader that
// tries to become it. It returns nil when ctx ends, or an error when the data folder cannot be made.
func Run(ctx context.Context, o Options) error {
	w := &watcher{o: o}
	said := ""
	for ctx.Err() == nil {
		interval := config.DefaultSyncInterval
		if cfg, err := o.Config(); err == nil {
			interval = cfg.SyncInterval()
			if len(cfg.Accounts) == 0 {
				sleep(ctx, retryEvery(interval)) // nothing to sync: not even a lock to take
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(o.StorePath), 0o700); err != nil {
			return fmt.Errorf("cannot create the data folder %s: %w", filepath.Dir(o.StorePath), err)
		}
		lock, err := store.LockWatch(o.StorePath)
		if err == nil {
			said = ""
			w.lead(ctx)
			lock.Unlock()
			continue
		}
		msg := err.Error()
		if store.IsBusy(err) {
			msg = "watch: " + msg + "; this one only reads, and takes over if it stops"
		} else {
			msg = "watch: " + msg
		}
		if msg != said {
			w.log("%s", msg)
			said = msg
		}
		sleep(ctx, retryEvery(interval))
	}
	return nil
}

type watcher struct {
	o Options

	mu     sync.Mutex
	kicked map[string]bool // accounts IDLE said changed, not yet synced
	kick   chan struct{}   // a token when kicked grew
}

func (w *watcher) log(format string, args ...any) {
	if w.o.Log != nil {
		w.o.Log(fmt.Sprintf(format, args...))
	}
}

// account is the schedule of one account while leading.
type account struct {
	due      time.Time // when it is next polled
	failures int       // syncs failed in a row
	lastErr  string    // the last error logged
}

// idling is one account's IDLE loop.
type idling struct {
	key    string // the account as configured: a change restarts it
	cancel context.CancelFunc
	done   chan struct{}
}

// lead syncs as the lock holder until ctx ends.
func (w *watcher) lead(ctx context.Context) {
	w.log("watch: syncing as the lock holder (pid %d)", os.Getpid())
	w.mu.Lock()
	w.kicked = map[string]bool{}
	w.kick = make(chan struct{}, 1)
	w.mu.Unlock()
	sched := map[string]*account{}
	idles := map[string]*idling{}
	defer func() {
		for _, i := range idles {
			i.cancel()
			<-i.done
		}
	}()
	cfgSaid := ""
	for ctx.Err() == nil {
		cfg, err := w.o.Config()
		if err != nil {
			if msg := err.Error(); msg != cfgSaid {
				w.log("watch: %s; syncing again once it can be read", msg)
				cfgSaid = msg
			}
			w.wait(ctx, time.Now().Add(5*time.Second))
			continue
		}
		cfgSaid = ""
		interval := cfg.SyncInterval()
		w.idle(ctx, cfg.Accounts, idles, interval)
		now := time.Now()
		var due []config.Account
		kicked := w.takeKicked()
		names := map[string]bool{}
		for _, a := range cfg.Accounts {
			names[a.Name] = true
			s := sched[a.Name]
			if s == nil {
				s = &account{due: now} // a new holder, or a new account: sync it now
				sched[a.Name] = s
			}
			if kicked[a.Name] || !s.due.After(now) {
				due = append(due, a)
			}
		}
		for n := range sched {
			if !names[n] {
				delete(sched, n)
			}
		}
		if len(due) > 0 {
			w.sync(ctx, due, sched, interval)
		}
		next := now.Add(interval)
		for _, s := range sched {
			if s.due.Before(next) {
				next = s.due
			}
		}
		w.wait(ctx, next)
	}
}

// sync runs one sync of the accounts due and schedules each one's next.
func (w *watcher) sync(ctx context.Context, due []config.Account, sched map[string]*account, interval time.Duration) {
	outs, err := w.o.Sync(ctx, due)
	if ctx.Err() != nil {
		return
	}
	now := time.Now()
	if store.IsBusy(err) {
		// A postern sync or a mail_sync is at it: it does the work; look again soon.
		for _, a := range due {
			sched[a.Name].due = now.Add(retryEvery(interval))
		}
		return
	}
	byName := map[string]mailsync.Outcome{}
	for _, o := range outs {
		byName[o.Account] = o
	}
	for _, a := range due {
		s := sched[a.Name]
		o, ok := byName[a.Name]
		msg := o.Error
		switch {
		case err != nil:
			msg = err.Error()
		case !ok:
			msg = "it was not synced"
		}
		if msg == "" {
			if s.lastErr != "" {
				w.log("watch: account %s syncs again", a.Name)
			}
			s.failures, s.lastErr, s.due = 0, "", now.Add(interval)
			if o.New > 0 || o.Deleted > 0 {
				w.log("watch: account %s: %d new, %d gone", a.Name, o.New, o.Deleted)
			}
			continue
		}
		s.failures++
		d := backoff(s.failures, interval)
		s.due = now.Add(d)
		if msg != s.lastErr {
			w.log("watch: account %s: %s; trying again within %s", a.Name, msg, d.Round(time.Second))
			s.lastErr = msg
		}
	}
}

// idle keeps one IDLE loop running for each account whose source can wait, and ends those of
// accounts gone or changed.
func (w *watcher) idle(ctx context.Context, accts []config.Account, idles map[string]*idling, interval time.Duration) {
	want := map[string]string{}
	for _, a := range accts {
		want[a.Name] = fmt.Sprintf("%#v", a)
	}
	for name, i := range idles {
		if want[name] != i.key {
			i.cancel()
			<-i.done
			delete(idles, name)
		}
	}
	for _, a := range accts {
		if idles[a.Name] != nil || w.o.Open == nil {
			continue
		}
		src, err := w.o.Open(a)
		if err != nil {
			continue // its sync says why
		}
		id, ok := src.(idler)
		if !ok {
			continue
		}
		ictx, cancel := context.WithCancel(ctx)
		i := &idling{key: want[a.Name], cancel: cancel, done: make(chan struct{})}
		idles[a.Name] = i
		go func(name string) {
			defer close(i.done)
			w.idleLoop(ictx, name, id, interval)
		}(a.Name)
	}
}

// idleLoop waits on one account's INBOX, connecting again after a failure with a backoff.
func (w *watcher) idleLoop(ctx context.Context, name string, id idler, interval time.Duration) {
	failures := 0
	for ctx.Err() == nil {
		began := time.Now()
		err := id.Idle(ctx, func() { w.kickAccount(name) })
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, source.ErrNoIdle) {
			w.log("watch: account %s: %s; its INBOX is polled every %s like its other folders", name, err, interval)
			return
		}
		if time.Since(began) > time.Minute {
			failures = 0 // it waited a while: a new trouble, not the same one
		}
		failures++
		d := backoff(failures, interval)
		if err == nil {
			err = errors.New("the connection ended")
		}
		w.log("watch: account %s: %s; connecting again within %s", name, err, d.Round(time.Second))
		sleep(ctx, d)
	}
}

func (w *watcher) kickAccount(name string) {
	w.mu.Lock()
	w.kicked[name] = true
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *watcher) takeKicked() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.kicked
	w.kicked = map[string]bool{}
	return k
}

// wait returns at until, when an account is kicked, or when ctx ends. A kick is followed
// by a short pause, so that a burst of changes (a message and its flags) makes one sync.
func (w *watcher) wait(ctx context.Context, until time.Time) {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-w.kick:
		sleep(ctx, 100*time.Millisecond)
	}
}

// backoff is the wait after n failures in a row: 1 s doubled each time, at most the interval
// (and 5 minutes), between half of it and all of it at random so that servers on one store,
// or many clients of one server, do not all come back at once.
func backoff(n int, interval time.Duration) time.Duration {
	d := time.Second << min(n-1, 20)
	d = min(d, interval, 5*time.Minute)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

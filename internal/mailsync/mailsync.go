// Package mailsync runs a sync of configured accounts into the store, holding the
// single-writer lock, each through the source its kind names (internal/source/kinds). It
// never starts an account after ctx ends, and never keeps, logs or returns a password.
package mailsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
)

// Outcome is what a sync did for one account.
type Outcome struct {
	Account      string
	New          int
	Deleted      int
	FlagsChanged int
	Folders      int
	Renamed      int
	Error        string
	// Interrupted is set when ctx ended during this account's sync: Error
	// then says so, and what was committed before is kept.
	Interrupted bool
}

// Options tune a run; they are given to every account's source.
type Options = source.Options

// Progress is a sync's progress, as Options.Progress is told it.
type Progress = source.Progress

// Run syncs each account in turn, taking the writer lock for the whole run.
// An account that fails does not stop the others; its Outcome says why. When
// ctx ends, the account being synced stops at once (every blocking read
// honours ctx: a Maildir file, the IMAP connection, the password command),
// its Outcome is marked Interrupted, no other account is started, and the
// lock is released; what was committed is kept and the next run continues.
func Run(ctx context.Context, st *store.Store, accounts []config.Account, opt Options) ([]Outcome, error) {
	lock, err := store.LockWriter(st.Path())
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	// Mail stored under other mask rules is masked again first (store/remask.go); a run
	// stopped here leaves the rest to the next one, as the accounts below would.
	if _, err := st.RemaskMail(ctx); err != nil && ctx.Err() == nil {
		return nil, err
	}
	var outs []Outcome
	for _, a := range accounts {
		o := Outcome{Account: a.Name}
		var res *source.Result
		src, err := kinds.Open(a)
		if err == nil {
			res, err = src.Sync(ctx, st, opt)
			if e := recordEnd(ctx, st, a, err); e != nil && err == nil {
				err = e
			}
		}
		if res != nil {
			o.New, o.Deleted, o.FlagsChanged, o.Folders, o.Renamed = res.New, res.Deleted, res.FlagsChanged, res.Folders, res.Renamed
		}
		if err == nil {
			// What the account held stays bounded; a failure here loses nothing.
			_ = st.PruneHeld(ctx, a.Name, time.Now())
		}
		if err != nil {
			o.Error = err.Error()
		}
		if err != nil && ctx.Err() != nil {
			o.Interrupted = true
			o.Error = fmt.Sprintf("the sync of %s was interrupted; what it stored is kept and the next sync continues from there", a.Name)
		}
		outs = append(outs, o)
		if ctx.Err() != nil {
			break
		}
	}
	return outs, nil
}

// recordEnd records the end of a's sync, failed with syncErr or not, as postern status shows
// it: once here for every kind. A sync that ctx stopped records nothing (what it stored is
// partly synced), and neither does one that never reached the account (source.NotStarted).
func recordEnd(ctx context.Context, st *store.Store, a config.Account, syncErr error) error {
	var ns *source.NotStarted
	if ctx.Err() != nil || errors.As(syncErr, &ns) {
		return nil
	}
	id, err := st.EnsureAccount(ctx, a.Name, a.Kind)
	if err != nil {
		return err
	}
	msg := ""
	if syncErr != nil {
		msg = syncErr.Error()
	}
	return st.SetAccountSynced(ctx, id, time.Now(), msg)
}

// SyncOne syncs one account through the source its kind names, without taking the lock (a
// test stops it part way, AfterBatch).
func SyncOne(ctx context.Context, st *store.Store, a config.Account, opt Options) (*source.Result, error) {
	src, err := kinds.Open(a)
	if err != nil {
		return nil, err
	}
	return src.Sync(ctx, st, opt)
}

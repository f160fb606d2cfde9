package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// How fresh the store is, and who keeps it so (docs/design.md "Freshness (issue 18)").

// WatchLockSuffix names, after the store's path, the lock held by the one process that keeps
// the store following the servers (internal/watch): the sync lock is taken for each sync and
// freed after, so it cannot say who keeps watch between syncs.
const WatchLockSuffix = ".watch"

// LockWatch takes the watch lock beside the store, or says who holds it (a *BusyError). The
// kernel frees it when the holder dies, so another process can take it over.
func LockWatch(storePath string) (*Lock, error) {
	return lockFile(storePath+WatchLockSuffix, "another postern (%s) keeps this store synced")
}

// IsBusy says whether err is a lock another process holds.
func IsBusy(err error) bool {
	var b *BusyError
	return errors.As(err, &b)
}

// addLastOK adds accounts.last_ok, when each account last finished a sync without an error:
// last_sync is also set by a sync that failed (with last_error), and the store is only as
// fresh as the last one that did not. A store upgraded takes last_sync where there was no
// error.
func addLastOK(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('accounts') WHERE name = 'last_ok'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE accounts ADD COLUMN last_ok INTEGER`); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE accounts SET last_ok = last_sync WHERE last_ok IS NULL AND coalesce(last_error, '') = ''`)
	return err
}

// SyncedAt is when the store last caught up with every one of the accounts named: the oldest
// of their last syncs without an error. ok is false when one of them never had one.
func (s *Store) SyncedAt(ctx context.Context, accounts []string) (at time.Time, ok bool, err error) {
	if len(accounts) == 0 {
		return time.Time{}, false, nil
	}
	for _, a := range accounts {
		var last sql.NullInt64
		err := s.db.QueryRowContext(ctx, `SELECT last_ok FROM accounts WHERE name = ?`, a).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && (!last.Valid || last.Int64 == 0)) {
			return time.Time{}, false, nil
		}
		if err != nil {
			return time.Time{}, false, s.explain(err)
		}
		if t := time.Unix(last.Int64, 0).UTC(); at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at, true, nil
}

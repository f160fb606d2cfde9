// Package syncwarn keeps, in the store's database, what a sync could not take of one item. The
// store opens it on its own database and lends it its methods, so callers reach it as
// store.Store.
package syncwarn

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Sync warnings: what a sync could not take of one item (an event, a contact, a message, a
// file), or took only in part, each named by its place (a collection's URL, a folder's name)
// and its item there (an href, a UID, a file). A warning stays until the item syncs cleanly
// or is gone: each sync of a place says again what is still wrong there and drops the rest
// (KeepSyncWarnings), and the place's warnings go with it (KeepSyncPlaces). status shows them.

// Warnings reads and writes the sync warnings of one open database.
type Warnings struct {
	db      *sql.DB
	explain func(error) error // SQLite's errors as a sentence for a person
}

// New reads and writes the sync warnings of db, its errors explained by explain.
func New(db *sql.DB, explain func(error) error) *Warnings { return &Warnings{db: db, explain: explain} }

// SyncWarning is one warning kept for an account.
type SyncWarning struct {
	Place, Item, Text string
	At                time.Time
}

// AddSyncWarning keeps text, a sentence, as the warning of item at place, replacing the one
// it had.
func (s *Warnings) AddSyncWarning(ctx context.Context, accountID int64, place, item, text string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sync_warnings(account_id, place, item, text, at) VALUES(?,?,?,?,?)
		ON CONFLICT(account_id, place, item) DO UPDATE SET text = excluded.text, at = excluded.at`,
		accountID, place, item, text, time.Now().Unix())
	return s.explain(err)
}

// KeepSyncWarnings drops the warnings of place except those of items, after a sync that went
// through the whole place: what it did not warn about again synced cleanly or is gone.
func (s *Warnings) KeepSyncWarnings(ctx context.Context, accountID int64, place string, items []string) error {
	return s.keepOnly(ctx, `DELETE FROM sync_warnings WHERE account_id = ? AND place = ?`, []any{accountID, place}, "item", items)
}

// KeepSyncPlaces drops the warnings of the account's places other than places (collections
// or folders gone from the server).
func (s *Warnings) KeepSyncPlaces(ctx context.Context, accountID int64, places []string) error {
	return s.keepOnly(ctx, `DELETE FROM sync_warnings WHERE account_id = ?`, []any{accountID}, "place", places)
}

func (s *Warnings) keepOnly(ctx context.Context, del string, args []any, col string, keep []string) error {
	if len(keep) > 0 {
		del += " AND " + col + " NOT IN (" + strings.TrimSuffix(strings.Repeat("?,", len(keep)), ",") + ")"
		for _, k := range keep {
			args = append(args, k)
		}
	}
	_, err := s.db.ExecContext(ctx, del, args...)
	return s.explain(err)
}

// SyncWarnings returns the warnings of the account (by id), oldest place first.
func (s *Warnings) SyncWarnings(ctx context.Context, accountID int64) ([]SyncWarning, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT place, item, text, at FROM sync_warnings WHERE account_id = ? ORDER BY place, item`, accountID)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []SyncWarning
	for rows.Next() {
		var w SyncWarning
		var at int64
		if err := rows.Scan(&w.Place, &w.Item, &w.Text, &at); err != nil {
			return nil, s.explain(err)
		}
		w.At = time.Unix(at, 0).UTC()
		out = append(out, w)
	}
	return out, s.explain(rows.Err())
}

// AccountWarnings returns the text of every account's warnings, by account name.
func (s *Warnings) AccountWarnings(ctx context.Context) (map[string][]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT a.name, w.text FROM sync_warnings w JOIN accounts a ON a.id = w.account_id ORDER BY a.name, w.place, w.item`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			return nil, s.explain(err)
		}
		out[name] = append(out[name], text)
	}
	return out, s.explain(rows.Err())
}

// AccountSyncWarnings returns the warnings of the account named name, oldest place first.
func (s *Warnings) AccountSyncWarnings(ctx context.Context, name string) ([]SyncWarning, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.explain(err)
	}
	return s.SyncWarnings(ctx, id)
}

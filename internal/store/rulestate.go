package store

import (
	"context"
	"database/sql"
	"errors"
)

// RulesSeen is the highest uid of a folder the rules have looked at, and
// whether they ever looked at it.
func (s *Store) RulesSeen(ctx context.Context, folderID int64) (uint32, bool, error) {
	var uid uint32
	err := s.db.QueryRowContext(ctx, `SELECT uid FROM rules_progress WHERE folder_id = ?`, folderID).Scan(&uid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return uid, err == nil, s.explain(err)
}

// SetRulesSeen records that the rules looked at the folder's mail up to uid.
func (s *Store) SetRulesSeen(ctx context.Context, folderID int64, uid uint32) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO rules_progress(folder_id, uid) VALUES(?, ?)
		ON CONFLICT(folder_id) DO UPDATE SET uid = max(uid, excluded.uid)`, folderID, uid)
	return s.explain(err)
}

// MaxUID is the highest uid stored in a folder (0 when it is empty).
func (s *Store) MaxUID(ctx context.Context, folderID int64) (uint32, error) {
	var uid sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT max(uid) FROM messages WHERE folder_id = ?`, folderID).Scan(&uid)
	return uint32(uid.Int64), s.explain(err)
}

// Meta is a value of the store's own key-value table ("" when unset).
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, s.explain(err)
}

// SetMeta sets a value of the store's own key-value table.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, key, value)
	return s.explain(err)
}

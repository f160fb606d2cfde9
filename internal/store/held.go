package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// What an account ever held (docs/design.md, "Mail: store and sync", "New mail"): a message is
// new mail, for the rules, only when its account never held it before. Its UID cannot say so:
// a message moved back to INBOX, by mail_undo or by the person in another mail program, comes
// back under a new UID. Each stored message gets a key made from its identity and content
// (heldKey); the table held keeps every key an account's messages had, and a copy whose key is
// there already is marked held_before when it is stored.

// heldHeaders are the header fields that go into a message's key: who wrote it, when and to
// whom, and how it was delivered. A delivery adds its own Received (and Delivered-To) lines, so
// the same message delivered twice (a mailing list's copy beside the direct one, or one sent to
// two of the person's addresses) is two messages; a move or a copy keeps every byte, so a
// message moved back is the same. Fields mail programs add on their own (X-Mozilla-Status,
// keywords) are left out.
var heldHeaders = map[string]bool{
	"date": true, "from": true, "sender": true, "to": true, "cc": true, "subject": true,
	"in-reply-to": true, "references": true,
	"received": true, "delivered-to": true, "x-original-to": true, "return-path": true, "list-id": true,
	"resent-date": true, "resent-from": true, "resent-to": true, "resent-cc": true, "resent-message-id": true,
}

// heldKeySize is how many bytes of the SHA-256 a key keeps: 128 bits, so that two different
// messages of one account share a key with odds far below one in a trillion.
const heldKeySize = 16

// heldKey is the key of a message from what the store keeps of it (so a store upgraded makes the
// same keys from its rows): its Message-ID, the heldHeaders in their order, its text and its
// attachments (names, types, sizes). It is made from the stored, masked, text: a key never
// depends on a secret the store does not keep.
func heldKey(messageID string, headers []Header, text, attachments string) []byte {
	h := sha256.New()
	field := func(name, value string) {
		h.Write([]byte(strconv.Itoa(len(name)) + ":" + name + strconv.Itoa(len(value)) + ":"))
		h.Write([]byte(value))
	}
	field("message-id", messageID)
	for _, x := range headers {
		if n := strings.ToLower(x.Name); heldHeaders[n] {
			field(n, x.Value)
		}
	}
	field("text", text)
	field("attachments", attachments)
	return h.Sum(nil)[:heldKeySize]
}

// How long the key of a message the account no longer holds is kept, and how many such keys
// at most: a message deleted and restored (mail_undo appends it from its backup) within a year
// is still known. The keys of messages the account still holds are never forgotten.
const (
	heldGoneFor  = 400 * 24 * time.Hour
	heldGoneMost = 200000
	heldPruneGap = 24 * time.Hour // the most often the keys are checked against the messages
)

// addHeld adds the table of keys and each message's key and mark, and gives every stored
// message its key, so that mail stored before is known when it comes back.
func addHeld(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'held_key'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		for _, q := range []string{
			`ALTER TABLE messages ADD COLUMN held_key BLOB`,
			`ALTER TABLE messages ADD COLUMN held_before INTEGER NOT NULL DEFAULT 0`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	// gone: 0 while a message of the account has the key, else when none was seen to have it.
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS held(
		account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		key BLOB NOT NULL,
		gone INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY(account_id, key)
	) WITHOUT ROWID`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT m.id, m.account_id, m.message_id, m.attachments, coalesce(b.headers, ''), coalesce(b.text, '')
		FROM messages m LEFT JOIN bodies b ON b.id = m.id WHERE m.held_key IS NULL`)
	if err != nil {
		return err
	}
	type keyed struct {
		id, account int64
		key         []byte
	}
	var keys []keyed
	for rows.Next() {
		var k keyed
		var msgID, atts, headers, text string
		if err := rows.Scan(&k.id, &k.account, &msgID, &atts, &headers, &text); err != nil {
			rows.Close()
			return err
		}
		var hs []Header
		if headers != "" {
			_ = json.Unmarshal([]byte(headers), &hs)
		}
		k.key = heldKey(msgID, hs, text, atts)
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	set, err := tx.PrepareContext(ctx, `UPDATE messages SET held_key = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer set.Close()
	add, err := tx.PrepareContext(ctx, `INSERT INTO held(account_id, key) VALUES(?, ?) ON CONFLICT DO NOTHING`)
	if err != nil {
		return err
	}
	defer add.Close()
	for _, k := range keys {
		if _, err := set.ExecContext(ctx, k.key, k.id); err != nil {
			return err
		}
		if _, err := add.ExecContext(ctx, k.account, k.key); err != nil {
			return err
		}
	}
	return nil
}

// PruneHeld keeps an account's table of keys bounded: keys its messages have again are kept,
// keys none of them has are noted gone, and those gone for longer than heldGoneFor, or beyond
// the heldGoneMost most recently gone, are forgotten. It does the work at most once a day per
// account (a pass reads every key of the account once).
func (s *Store) PruneHeld(ctx context.Context, account string, now time.Time) error {
	var id int64
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ?`, account).Scan(&id); err != nil {
		if err == sql.ErrNoRows {
			return nil
		}
		return s.explain(err)
	}
	meta := "held_pruned:" + strconv.FormatInt(id, 10)
	last, err := s.Meta(ctx, meta)
	if err != nil {
		return err
	}
	if last == "" {
		// An account's first sync: nothing it held is gone yet, and the pass would only
		// lengthen it. The first pass comes a day later.
		return s.SetMeta(ctx, meta, strconv.FormatInt(now.Unix(), 10))
	}
	if t, err := strconv.ParseInt(last, 10, 64); err == nil && now.Sub(time.Unix(t, 0)) < heldPruneGap && now.Unix() >= t {
		return nil
	}
	return s.pruneHeld(ctx, id, meta, now)
}

func (s *Store) pruneHeld(ctx context.Context, id int64, meta string, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	const current = `SELECT held_key FROM messages WHERE account_id = ? AND held_key IS NOT NULL`
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE held SET gone = 0 WHERE account_id = ? AND gone <> 0 AND key IN (` + current + `)`, []any{id, id}},
		{`UPDATE held SET gone = ? WHERE account_id = ? AND gone = 0 AND key NOT IN (` + current + `)`, []any{now.Unix(), id, id}},
		{`DELETE FROM held WHERE account_id = ? AND gone <> 0 AND gone < ?`, []any{id, now.Add(-heldGoneFor).Unix()}},
		{`DELETE FROM held WHERE account_id = ? AND key IN (SELECT key FROM held WHERE account_id = ? AND gone <> 0 ORDER BY gone DESC LIMIT -1 OFFSET ?)`, []any{id, id, heldGoneMost}},
		{`INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, []any{meta, strconv.FormatInt(now.Unix(), 10)}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return s.explain(err)
		}
	}
	return s.explain(tx.Commit())
}

// NewForRules returns up to limit messages of a folder whose uid is above after and that are
// new mail: their account never held them before (a message moved back or restored is not).
// top is the highest uid read, new or not: the rules have looked at everything up to it.
func (s *Store) NewForRules(ctx context.Context, folderID int64, after uint32, limit int) (rows []*Row, top uint32, err error) {
	top = after
	rs, err := s.db.QueryContext(ctx, `SELECT `+rowColumns+`, m.held_before`+fromJoins+` WHERE m.folder_id = ? AND m.uid > ? ORDER BY m.uid LIMIT ?`, folderID, after, limit)
	if err != nil {
		return nil, 0, s.explain(err)
	}
	defer rs.Close()
	for rs.Next() {
		var before bool
		r, err := scanRow(scanWith{rs, &before})
		if err != nil {
			return nil, 0, s.explain(err)
		}
		top = max(top, r.UID)
		if !before {
			rows = append(rows, r)
		}
	}
	return rows, top, s.explain(rs.Err())
}

// scanWith scans a row whose columns are rowColumns and then extra.
type scanWith struct {
	sc    interface{ Scan(...any) error }
	extra any
}

func (w scanWith) Scan(dest ...any) error { return w.sc.Scan(append(dest, w.extra)...) }

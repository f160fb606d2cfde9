package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/store/davstore"
)

// What the store holds of mail, notes and contacts is masked under the rules of the postern
// that stored it. Opened by a postern whose mask.Rules differ (or by one from before the
// rules were numbered), the store masks it again, once: every contact's search words at once
// (davstore.ContactSearch) and every note by the next notes call, which reads its file again (its
// stamp is forgotten); the mail, which may be a hundred thousand messages, by the next sync
// (RemaskMail, through MaskMessage, indexes included), newest first, in batches that a sync
// stopped half-way continues. Masking again what was masked hides what the new rules hide and
// keeps the rest: the masks are idempotent.

const (
	maskRulesKey     = "mask_rules"      // the rules contacts and notes are masked under
	mailRulesKey     = "mask_rules_mail" // the rules the mail is masked under
	mailRemaskCursor = "mask_mail_below" // RemaskMail's progress: the messages at and above this id are done
)

// remask masks again the contacts and notes the store holds when they were masked under
// other rules, and leaves the mail to RemaskMail.
func (s *Store) remask() error {
	ctx := context.Background()
	want := strconv.Itoa(mask.Rules)
	var have string
	_ = s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, maskRulesKey).Scan(&have)
	if have == want {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	// Another process may have done it while this one waited for the lock.
	_ = tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, maskRulesKey).Scan(&have)
	if have == want {
		return nil
	}
	if err := davstore.RefillContactSearch(ctx, tx); err != nil {
		return fmt.Errorf("cannot mask the stored contacts again under the new rules: %w", s.explain(err))
	}
	if _, err := tx.ExecContext(ctx, `UPDATE notes SET mtime = -1, size = -1`); err != nil {
		return s.explain(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, mailRemaskCursor); err != nil {
		return s.explain(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, maskRulesKey, want); err != nil {
		return s.explain(err)
	}
	return s.explain(tx.Commit())
}

// remaskBatch is how many messages RemaskMail masks again per transaction (a variable for
// the tests).
var remaskBatch = 2000

// RemaskMail masks again, newest first, the stored messages masked under other rules than
// mask.Rules, and returns how many it changed; nothing when the mail is masked under them.
// The caller holds the writer lock (a sync). Each batch is committed with its progress, so a
// RemaskMail stopped by ctx continues where it stopped.
func (s *Store) RemaskMail(ctx context.Context) (int, error) {
	want := strconv.Itoa(mask.Rules)
	var have string
	_ = s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, mailRulesKey).Scan(&have)
	if have == want {
		return 0, nil
	}
	changed := 0
	for {
		if err := ctx.Err(); err != nil {
			return changed, err
		}
		n, done, err := s.remaskMailBatch(ctx, want)
		changed += n
		if err != nil {
			return changed, fmt.Errorf("cannot mask the stored mail again under the new rules: %w", s.explain(err))
		}
		if done {
			return changed, nil
		}
	}
}

// remaskMailBatch masks again the remaskBatch messages below the cursor, moves it, and
// records the rules once none is left.
func (s *Store) remaskMailBatch(ctx context.Context, want string) (changed int, done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback()
	below := int64(math.MaxInt64)
	var cur string
	if tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, mailRemaskCursor).Scan(&cur) == nil {
		if n, err := strconv.ParseInt(cur, 10, 64); err == nil {
			below = n
		}
	}
	var low int64
	var count int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(min(id), 0), count(*) FROM (SELECT id FROM messages WHERE id < ? ORDER BY id DESC LIMIT ?)`,
		below, remaskBatch).Scan(&low, &count); err != nil {
		return 0, false, err
	}
	if count > 0 {
		if changed, err = remaskMail(ctx, tx, low, below); err != nil {
			return 0, false, err
		}
	}
	if count < remaskBatch {
		done = true
		if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, mailRemaskCursor); err != nil {
			return 0, false, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, mailRulesKey, want); err != nil {
			return 0, false, err
		}
	} else if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, mailRemaskCursor, strconv.FormatInt(low, 10)); err != nil {
		return 0, false, err
	}
	return changed, done, tx.Commit()
}

// remaskMail puts the stored messages of ids lo to below-1 through MaskMessage again and,
// where that changes one, writes the message, its body and its index rows anew; it returns
// how many changed.
func remaskMail(ctx context.Context, tx *sql.Tx, lo, below int64) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT m.id, m.account_id, m.message_id, m.subject, m.from_name, m.from_email, m.to_list, m.cc_list, m.attachments, m.withheld,
		coalesce(b.text, ''), coalesce(b.headers, ''), coalesce(b.problems, '') FROM messages m LEFT JOIN bodies b ON b.id = m.id
		WHERE m.id >= ? AND m.id < ?`, lo, below)
	if err != nil {
		return 0, err
	}
	type change struct {
		id, account         int64
		nm                  NewMessage
		atts, headers, text string
	}
	var changes []change
	for rows.Next() {
		var id, account int64
		var to, cc, atts, headers, problems string
		var nm NewMessage
		if err := rows.Scan(&id, &account, &nm.MessageID, &nm.Subject, &nm.From.Name, &nm.From.Email, &to, &cc, &atts, &nm.Withheld, &nm.Text, &headers, &problems); err != nil {
			rows.Close()
			return 0, err
		}
		nm.To, nm.Cc = splitAddrs(to), splitAddrs(cc)
		if atts != "" {
			_ = json.Unmarshal([]byte(atts), &nm.Attachments)
		}
		if headers != "" {
			_ = json.Unmarshal([]byte(headers), &nm.Headers)
		}
		if problems != "" {
			nm.Problems = strings.Split(problems, "\n")
		}
		before := nm
		before.To, before.Cc = slices.Clone(nm.To), slices.Clone(nm.Cc)
		before.Attachments, before.Headers = slices.Clone(nm.Attachments), slices.Clone(nm.Headers)
		before.Problems = slices.Clone(nm.Problems)
		withheld := nm.Withheld
		MaskMessage(&nm)
		if nm.Withheld == "" {
			nm.Withheld = withheld // a text withheld once is not stored: it stays withheld
		}
		if nm.Subject == before.Subject && nm.From == before.From && slices.Equal(nm.To, before.To) && slices.Equal(nm.Cc, before.Cc) &&
			slices.Equal(nm.Attachments, before.Attachments) && slices.Equal(nm.Headers, before.Headers) &&
			slices.Equal(nm.Problems, before.Problems) && nm.Text == before.Text && nm.Withheld == before.Withheld {
			continue
		}
		c := change{id: id, account: account, nm: nm}
		if len(nm.Attachments) > 0 {
			b, _ := json.Marshal(nm.Attachments)
			c.atts = string(b)
		}
		if nm.Headers != nil {
			b, _ := json.Marshal(nm.Headers)
			c.headers = string(b)
		}
		changes = append(changes, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, c := range changes {
		m := &c.nm
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET subject=?, from_name=?, from_email=?, to_list=?, cc_list=?, attachments=?, withheld=? WHERE id=?`,
			m.Subject, m.From.Name, m.From.Email, joinAddrs(m.To), joinAddrs(m.Cc), c.atts, m.Withheld, c.id); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE bodies SET text=?, headers=?, problems=? WHERE id=?`,
			m.Text, c.headers, strings.Join(m.Problems, "\n"), c.id); err != nil {
			return 0, err
		}
		// The key of what the account held changes with the masked text it is made from: the
		// new one is held too (the old one stays), so a message moved back after the store
		// masked it again is still not new mail (held.go).
		key := heldKey(m.MessageID, m.Headers, m.Text, c.atts)
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET held_key = ? WHERE id = ?`, key, c.id); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO held(account_id, key) VALUES(?, ?) ON CONFLICT DO NOTHING`, c.account, key); err != nil {
			return 0, err
		}
		for _, t := range []string{"meta_fts", "body_fts"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE rowid=?`, c.id); err != nil {
				return 0, err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta_fts(rowid, subject, from_addr, to_addr, cc_addr, attachments) VALUES(?,?,?,?,?,?)`,
			c.id, m.Subject, addrText([]Address{m.From}), addrText(m.To), addrText(m.Cc), attachmentNames(m.Attachments)); err != nil {
			return 0, err
		}
		if m.Text != "" {
			if _, err := tx.ExecContext(ctx, `INSERT INTO body_fts(rowid, text) VALUES(?,?)`, c.id, m.Text); err != nil {
				return 0, err
			}
		}
	}
	return len(changes), nil
}

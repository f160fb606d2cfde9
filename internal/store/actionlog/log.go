// Package actionlog keeps the action log and the backups of deleted mail in the store's
// database: what the mail, calendar and task tools changed on a server, kept so that it can be
// shown, paged and put back. The store opens it on its own database and lends it its methods,
// so callers reach it as store.Store. It names accounts and folders by name, not by row, so that
// it outlives a store rebuilt by sync.
package actionlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Log reads and writes the action log and backups of one open database.
type Log struct {
	db      *sql.DB
	explain func(error) error // SQLite's errors as a sentence for a person
}

// New reads and writes the action log of db, its errors explained by explain.
func New(db *sql.DB, explain func(error) error) *Log { return &Log{db: db, explain: explain} }

// Action is one entry of the action log.
type Action struct {
	ID       int64
	At       time.Time
	Tool     string
	What     string // what it did, as the answer said: "archive", "mark read", "undo a12"…
	Client   string
	Accounts []string
	Count    int   // messages changed
	Undoes   int64 // the action this one undid, if an undo
	UndoneBy int64 // the action that undid this one, if any
	Items    []ActionItem
	DAV      []DAVItem // what it did to events and tasks (an action holds these or Items)
	// Preview: not an action of the log but the rows of an answer that changed nothing (a dry
	// run), kept only so that they can be paged; it is never listed and has nothing to undo.
	Preview bool
	// Rows are its answer's rows, every one, in order (RecordAction writes them; ActionRows
	// reads them a page at a time).
	Rows []LoggedRow
}

// LoggedRow is one row of an action's answer: what it did, or would do, to one message,
// event or task, as the answer said.
type LoggedRow struct {
	Item     string // the id the answer gave (m…, b…, e…, t…)
	Message  int64  // the store's id of the message, 0 for none
	Outcome  string
	From, To string // folders (or calendars)
	Subject  string
	Sender   string // the message's sender's address, "" when unknown
	Reason   string
}

// AddRows adds the rows of each action's answer, every one, so that mail_actions pages
// through them, and the mark of a preview (the rows of a dry run, not an action of the log),
// where missing (a store set back to an older schema may have them). Actions logged before
// have no rows: their items stand for them.
func AddRows(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('actions') WHERE name = 'preview'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE actions ADD COLUMN preview INTEGER NOT NULL DEFAULT 0`); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS action_rows(
		action INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
		seq INTEGER NOT NULL,
		item TEXT NOT NULL,
		message INTEGER NOT NULL DEFAULT 0,
		outcome TEXT NOT NULL,
		from_folder TEXT NOT NULL DEFAULT '',
		to_folder TEXT NOT NULL DEFAULT '',
		subject TEXT NOT NULL DEFAULT '',
		sender TEXT NOT NULL DEFAULT '',
		reason TEXT NOT NULL DEFAULT '',
		PRIMARY KEY(action, seq)
	)`)
	return err
}

// previewsKept is how many previews the store keeps, and previewAge how long: a preview
// serves the agent paging the answer it just had, nothing more.
const (
	previewsKept = 50
	previewAge   = 24 * time.Hour
)

// DAVItem is what an action did to one event or task on its CalDAV server: the object's
// previous text as the server sent it (a file, 0600), and the ETags an undo checks.
type DAVItem struct {
	Account        string
	Kind           string // ObjectEvent or ObjectTodo
	Collection     string // the calendar's or task list's URL
	CollectionName string
	Href           string
	UID            string
	Summary        string
	Object         int64 // the store's id of the object when logged (0: none)
	// HadBefore says an object was at Href before the action (false: the action created it);
	// BeforeFile holds its exact text ("" when there was none, or once purged).
	HadBefore  bool
	BeforeFile string
	BeforeSize int64
	BeforeETag string
	// AfterETag is the ETag of what the action left at Href; "" when it removed the object.
	AfterETag string
}

// ActionItem is what an action did to one message: where it was and is, and
// its flags before and after (IMAP flags, keywords included).
type ActionItem struct {
	Message         int64 // the store's id, kept across moves
	Account         string
	MessageID       string
	Subject         string
	FromFolder      string
	FromUIDValidity uint32
	FromUID         uint32
	ToFolder        string
	ToUIDValidity   uint32
	ToUID           uint32
	FlagsBefore     []string
	FlagsAfter      []string
	Backup          int64 // the backup kept before a delete
}

// EncodeActionID is the id agents see of an action.
func EncodeActionID(id int64) string { return fmt.Sprintf("a%d", id) }

// DecodeActionID reads an action id; ok is false for anything else.
func DecodeActionID(s string) (int64, bool) {
	var n int64
	if len(s) < 2 || s[0] != 'a' {
		return 0, false
	}
	if _, err := fmt.Sscanf(s[1:], "%d", &n); err != nil || n <= 0 || fmt.Sprintf("a%d", n) != s {
		return 0, false
	}
	return n, true
}

// RecordAction adds a to the log with its items and, for an undo, marks the
// action it undid; a.ID is set.
func (s *Log) RecordAction(ctx context.Context, a *Action) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	if a.Preview {
		// Old previews go first: they are never more than the last few answers' rows.
		if _, err := tx.ExecContext(ctx, `DELETE FROM actions WHERE preview = 1 AND (at < ? OR id NOT IN
			(SELECT id FROM actions WHERE preview = 1 ORDER BY id DESC LIMIT ?))`, a.At.Add(-previewAge).UnixMilli(), previewsKept-1); err != nil {
			return s.explain(err)
		}
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO actions(at, tool, what, client, accounts, count, undoes, preview) VALUES(?,?,?,?,?,?,?,?) RETURNING id`,
		a.At.UnixMilli(), a.Tool, a.What, a.Client, strings.Join(a.Accounts, "\n"), a.Count, a.Undoes, a.Preview).Scan(&a.ID)
	if err != nil {
		return s.explain(err)
	}
	if len(a.Rows) > 0 {
		rs, err := tx.PrepareContext(ctx, `INSERT INTO action_rows(action, seq, item, message, outcome, from_folder, to_folder, subject, sender, reason)
			VALUES(?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return s.explain(err)
		}
		defer rs.Close()
		for i, r := range a.Rows {
			if _, err := rs.ExecContext(ctx, a.ID, i, r.Item, r.Message, r.Outcome, r.From, r.To, r.Subject, r.Sender, r.Reason); err != nil {
				return s.explain(err)
			}
		}
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO action_items(action, message, account, message_id, subject,
		from_folder, from_uidvalidity, from_uid, to_folder, to_uidvalidity, to_uid, flags_before, flags_after, backup)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return s.explain(err)
	}
	defer stmt.Close()
	for _, it := range a.Items {
		if _, err := stmt.ExecContext(ctx, a.ID, it.Message, it.Account, it.MessageID, it.Subject,
			it.FromFolder, it.FromUIDValidity, it.FromUID, it.ToFolder, it.ToUIDValidity, it.ToUID,
			strings.Join(it.FlagsBefore, " "), strings.Join(it.FlagsAfter, " "), it.Backup); err != nil {
			return s.explain(err)
		}
	}
	for _, d := range a.DAV {
		if _, err := tx.ExecContext(ctx, `INSERT INTO dav_action_items(action, account, kind, collection, collection_name,
			href, uid, summary, object, had_before, before_file, before_size, before_etag, after_etag) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			a.ID, d.Account, d.Kind, d.Collection, d.CollectionName, d.Href, d.UID, d.Summary, d.Object, d.HadBefore,
			d.BeforeFile, d.BeforeSize, d.BeforeETag, d.AfterETag); err != nil {
			return s.explain(err)
		}
	}
	if a.Undoes != 0 && !a.Preview { // a dry run of an undo undoes nothing
		if _, err := tx.ExecContext(ctx, `UPDATE actions SET undone_by = ? WHERE id = ?`, a.ID, a.Undoes); err != nil {
			return s.explain(err)
		}
	}
	return s.explain(tx.Commit())
}

// ErrNoAction is an action id the log does not hold.
var ErrNoAction = errors.New("no such action")

// LoggedAction returns one action of the log with its items.
func (s *Log) LoggedAction(ctx context.Context, id int64) (*Action, error) {
	as, err := s.actions(ctx, `WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(as) == 0 {
		return nil, ErrNoAction
	}
	a := as[0]
	rows, err := s.db.QueryContext(ctx, `SELECT message, account, message_id, subject, from_folder, from_uidvalidity, from_uid,
		to_folder, to_uidvalidity, to_uid, flags_before, flags_after, backup FROM action_items WHERE action = ? ORDER BY rowid`, id)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var it ActionItem
		var before, after string
		if err := rows.Scan(&it.Message, &it.Account, &it.MessageID, &it.Subject, &it.FromFolder, &it.FromUIDValidity, &it.FromUID,
			&it.ToFolder, &it.ToUIDValidity, &it.ToUID, &before, &after, &it.Backup); err != nil {
			return nil, s.explain(err)
		}
		it.FlagsBefore, it.FlagsAfter = strings.Fields(before), strings.Fields(after)
		a.Items = append(a.Items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	a.DAV, err = s.davItems(ctx, id)
	return a, err
}

// davItems are the events and tasks of one action, in the order logged.
func (s *Log) davItems(ctx context.Context, action int64) ([]DAVItem, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT account, kind, collection, collection_name, href, uid, summary, object,
		had_before, before_file, before_size, before_etag, after_etag FROM dav_action_items WHERE action = ? ORDER BY rowid`, action)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []DAVItem
	for rows.Next() {
		var d DAVItem
		if err := rows.Scan(&d.Account, &d.Kind, &d.Collection, &d.CollectionName, &d.Href, &d.UID, &d.Summary, &d.Object,
			&d.HadBefore, &d.BeforeFile, &d.BeforeSize, &d.BeforeETag, &d.AfterETag); err != nil {
			return nil, s.explain(err)
		}
		out = append(out, d)
	}
	return out, s.explain(rows.Err())
}

// DAVItemsOf returns the events and tasks of one action (none for an action on mail).
func (s *Log) DAVItemsOf(ctx context.Context, action int64) ([]DAVItem, error) {
	return s.davItems(ctx, action)
}

// DAVBackup is the file of an event's or task's previous text, kept by an action.
type DAVBackup struct {
	Row     int64 // its row in dav_action_items
	Account string
	File    string
	Size    int64
	Saved   time.Time // when its action was taken
}

// DAVBackupsBefore returns the kept texts of accounts' events and tasks whose action was
// taken before t.
func (s *Log) DAVBackupsBefore(ctx context.Context, accounts []string, t time.Time) ([]DAVBackup, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT d.rowid, d.account, d.before_file, d.before_size, a.at FROM dav_action_items d
		JOIN actions a ON a.id = d.action WHERE d.before_file <> '' AND a.at < ? ORDER BY d.rowid`, t.UnixMilli())
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []DAVBackup
	for rows.Next() {
		var b DAVBackup
		var at int64
		if err := rows.Scan(&b.Row, &b.Account, &b.File, &b.Size, &at); err != nil {
			return nil, s.explain(err)
		}
		if accounts == nil || slices.Contains(accounts, b.Account) {
			b.Saved = time.UnixMilli(at).UTC()
			out = append(out, b)
		}
	}
	return out, s.explain(rows.Err())
}

// CountDAVBackups is how many kept texts of accounts' events and tasks remain.
func (s *Log) CountDAVBackups(ctx context.Context, accounts []string) (int, error) {
	bs, err := s.DAVBackupsBefore(ctx, accounts, time.UnixMilli(1<<62))
	return len(bs), err
}

// ForgetDAVBackup records that a kept text was removed (its file is the caller's to remove):
// an undo that needs it then says so and changes nothing.
func (s *Log) ForgetDAVBackup(ctx context.Context, row int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE dav_action_items SET before_file = '' WHERE rowid = ?`, row)
	return s.explain(err)
}

// Actions returns up to limit actions older than before (0: the newest), newest
// first, without their items; previews are not actions and are left out.
func (s *Log) Actions(ctx context.Context, before int64, limit int) ([]*Action, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	return s.actions(ctx, `WHERE id < ? AND preview = 0 ORDER BY id DESC LIMIT ?`, before, limit)
}

// ActionRows returns up to limit rows of action's answer from the row numbered from (0:
// the first), in order, and whether more follow. An action logged before rows were kept
// has none: its items stand for them (ItemRows).
func (s *Log) ActionRows(ctx context.Context, action int64, from, limit int) ([]LoggedRow, bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT item, message, outcome, from_folder, to_folder, subject, sender, reason
		FROM action_rows WHERE action = ? AND seq >= ? ORDER BY seq LIMIT ?`, action, from, limit+1)
	if err != nil {
		return nil, false, s.explain(err)
	}
	defer rows.Close()
	var out []LoggedRow
	for rows.Next() {
		var r LoggedRow
		if err := rows.Scan(&r.Item, &r.Message, &r.Outcome, &r.From, &r.To, &r.Subject, &r.Sender, &r.Reason); err != nil {
			return nil, false, s.explain(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.explain(err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// CountActionRows is how many rows action's answer kept.
func (s *Log) CountActionRows(ctx context.Context, action int64) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM action_rows WHERE action = ?`, action).Scan(&n)
	return n, s.explain(err)
}

func (s *Log) actions(ctx context.Context, where string, args ...any) ([]*Action, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, tool, what, client, accounts, count, undoes, undone_by, preview FROM actions `+where, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []*Action
	for rows.Next() {
		a := &Action{}
		var at int64
		var accounts string
		if err := rows.Scan(&a.ID, &at, &a.Tool, &a.What, &a.Client, &accounts, &a.Count, &a.Undoes, &a.UndoneBy, &a.Preview); err != nil {
			return nil, s.explain(err)
		}
		a.At = time.UnixMilli(at).UTC()
		a.Accounts = strings.Split(accounts, "\n")
		out = append(out, a)
	}
	return out, s.explain(rows.Err())
}

// Backup is a copy of a message kept before a move to trash changed the server.
type Backup struct {
	ID        int64
	Account   string
	Folder    string // where it was deleted from
	MessageID string
	Subject   string
	From      string
	Date      time.Time // the message's
	Saved     time.Time // when the copy was made
	Size      int64
	File      string   // the .eml file
	Flags     []string // its IMAP flags when it was deleted
}

// EncodeBackupID is the id agents see of a backup.
func EncodeBackupID(id int64) string { return fmt.Sprintf("b%d", id) }

// DecodeBackupID reads a backup id; ok is false for anything else.
func DecodeBackupID(s string) (int64, bool) {
	var n int64
	if len(s) < 2 || s[0] != 'b' {
		return 0, false
	}
	if _, err := fmt.Sscanf(s[1:], "%d", &n); err != nil || n <= 0 || fmt.Sprintf("b%d", n) != s {
		return 0, false
	}
	return n, true
}

// AddBackup records a backup whose file is written; b.ID is set.
func (s *Log) AddBackup(ctx context.Context, b *Backup) error {
	err := s.db.QueryRowContext(ctx, `INSERT INTO backups(account, folder, message_id, subject, from_addr, date, saved, size, file, flags)
		VALUES(?,?,?,?,?,?,?,?,?,?) RETURNING id`, b.Account, b.Folder, b.MessageID, b.Subject, b.From,
		b.Date.Unix(), b.Saved.UnixMilli(), b.Size, b.File, strings.Join(b.Flags, " ")).Scan(&b.ID)
	return s.explain(err)
}

// ErrNoBackup is a backup id the store does not hold.
var ErrNoBackup = errors.New("no such backup")

// BackupByID returns one backup, if its account is among accounts (nil: any).
func (s *Log) BackupByID(ctx context.Context, id int64, accounts []string) (*Backup, error) {
	bs, err := s.backups(ctx, `WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(bs) == 0 || accounts != nil && !slices.Contains(accounts, bs[0].Account) {
		return nil, ErrNoBackup
	}
	return bs[0], nil
}

// Backups returns up to limit backups of accounts older than before (0: the
// newest), newest first.
func (s *Log) Backups(ctx context.Context, accounts []string, before int64, limit int) ([]*Backup, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	var out []*Backup
	for len(out) < limit {
		bs, err := s.backups(ctx, `WHERE id < ? ORDER BY id DESC LIMIT ?`, before, limit)
		if err != nil || len(bs) == 0 {
			return out, err
		}
		for _, b := range bs {
			before = b.ID
			if accounts == nil || slices.Contains(accounts, b.Account) {
				out = append(out, b)
				if len(out) == limit {
					break
				}
			}
		}
	}
	return out, nil
}

// BackupsBefore returns every backup of accounts saved before t.
func (s *Log) BackupsBefore(ctx context.Context, accounts []string, t time.Time) ([]*Backup, error) {
	bs, err := s.backups(ctx, `WHERE saved < ? ORDER BY id`, t.UnixMilli())
	if err != nil {
		return nil, err
	}
	out := bs[:0]
	for _, b := range bs {
		if accounts == nil || slices.Contains(accounts, b.Account) {
			out = append(out, b)
		}
	}
	return out, nil
}

// DeleteBackup forgets one backup (its file is the caller's to remove).
func (s *Log) DeleteBackup(ctx context.Context, id int64) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM backups WHERE id = ?`, id)
	return s.explain(err)
}

func (s *Log) backups(ctx context.Context, where string, args ...any) ([]*Backup, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, account, folder, message_id, subject, from_addr, date, saved, size, file, flags FROM backups `+where, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []*Backup
	for rows.Next() {
		b := &Backup{}
		var date, saved int64
		var flags string
		if err := rows.Scan(&b.ID, &b.Account, &b.Folder, &b.MessageID, &b.Subject, &b.From, &date, &saved, &b.Size, &b.File, &flags); err != nil {
			return nil, s.explain(err)
		}
		b.Date, b.Saved, b.Flags = time.Unix(date, 0).UTC(), time.UnixMilli(saved).UTC(), strings.Fields(flags)
		out = append(out, b)
	}
	return out, s.explain(rows.Err())
}

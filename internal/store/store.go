// Package store owns postern's local copy of mail: a SQLite database (WAL) of
// accounts, folders, messages, threads and two FTS5 indexes, one over subjects,
// addresses and attachment names and one over body text. One writer at a time
// (a lock file), readers never blocked. It never stores a password.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the database driver, pure Go

	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/store/notestore"
)

// Store is an open database.
type Store struct {
	db   *sql.DB
	path string

	dvMu sync.Mutex
	dv   *sql.Conn // the connection DataVersion reads on (projects.go), never written through

	*notes // the notes of the notes folders (notestore)
}

// The notes of the notes folders, kept by internal/store/notestore on the store's database.
type (
	notes      = notestore.Notes
	Note       = notestore.Note
	NoteStamp  = notestore.NoteStamp
	NoteScope  = notestore.NoteScope
	NoteFilter = notestore.NoteFilter
)

// ErrNoNote is returned for a note that is not in the store.
var ErrNoNote = notestore.ErrNoNote

// File is the database's name inside the data folder.
const File = "store.db"

const schemaVersion = 18

// upgrades[v] brings a store of schema v to v+1.
var upgrades = map[int][]string{
	1: {
		`ALTER TABLE messages ADD COLUMN forged INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE messages ADD COLUMN withheld TEXT NOT NULL DEFAULT ''`,
	},
	// Fewer, larger index merges while mail is added in bulk (FTS5 defaults: 4 and 16).
	2: {
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('crisismerge', 64)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('crisismerge', 64)`,
	},
	// The search indexes without prefix indexes (prefix='2 3' tripled the
	// work of every insert for the rare query of a 2- or 3-letter prefix):
	// made anew and filled again by rebuildIndexes.
	3: {
		`DROP TABLE meta_fts`,
		`DROP TABLE body_fts`,
		createMetaFTS,
		createBodyFTS,
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('crisismerge', 64)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('crisismerge', 64)`,
	},
	// The indexes' words in order, read to turn a prefix into the few words
	// it starts (see expandPrefixes); these tables store nothing.
	4: {
		`CREATE VIRTUAL TABLE IF NOT EXISTS meta_terms USING fts5vocab(meta_fts, instance)`,
		`CREATE VIRTUAL TABLE IF NOT EXISTS body_terms USING fts5vocab(body_fts, instance)`,
	},
	// A thread's id is the id of its oldest message (ids are date keys, so the least); a store
	// written before took the first message synced. Each thread is renumbered to its least id,
	// read from a table made first, so that no row reads a thread already renumbered.
	5: {
		`CREATE TEMP TABLE thread_least AS SELECT thread_id AS t, min(id) AS least FROM messages WHERE thread_id <> 0 GROUP BY thread_id`,
		`UPDATE messages SET thread_id = (SELECT least FROM thread_least WHERE t = messages.thread_id)
			WHERE thread_id IN (SELECT t FROM thread_least WHERE least <> t)`,
		`DROP TABLE thread_least`,
	},
	// The action log and the backups of deleted mail (actions.go). They name accounts and
	// folders by name, not by row, so that they outlive a store rebuilt by sync.
	6: {
		`CREATE TABLE IF NOT EXISTS actions(
			id INTEGER PRIMARY KEY,
			at INTEGER NOT NULL,
			tool TEXT NOT NULL,
			what TEXT NOT NULL,
			client TEXT NOT NULL DEFAULT '',
			accounts TEXT NOT NULL DEFAULT '',
			count INTEGER NOT NULL DEFAULT 0,
			undoes INTEGER NOT NULL DEFAULT 0,
			undone_by INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE TABLE IF NOT EXISTS action_items(
			action INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
			message INTEGER NOT NULL,
			account TEXT NOT NULL,
			message_id TEXT NOT NULL DEFAULT '',
			subject TEXT NOT NULL DEFAULT '',
			from_folder TEXT NOT NULL,
			from_uidvalidity INTEGER NOT NULL DEFAULT 0,
			from_uid INTEGER NOT NULL DEFAULT 0,
			to_folder TEXT NOT NULL,
			to_uidvalidity INTEGER NOT NULL DEFAULT 0,
			to_uid INTEGER NOT NULL DEFAULT 0,
			flags_before TEXT NOT NULL DEFAULT '',
			flags_after TEXT NOT NULL DEFAULT '',
			backup INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX IF NOT EXISTS action_items_action ON action_items(action)`,
		`CREATE TABLE IF NOT EXISTS backups(
			id INTEGER PRIMARY KEY,
			account TEXT NOT NULL,
			folder TEXT NOT NULL,
			message_id TEXT NOT NULL DEFAULT '',
			subject TEXT NOT NULL DEFAULT '',
			from_addr TEXT NOT NULL DEFAULT '',
			date INTEGER NOT NULL DEFAULT 0,
			saved INTEGER NOT NULL,
			size INTEGER NOT NULL DEFAULT 0,
			file TEXT NOT NULL,
			flags TEXT NOT NULL DEFAULT ''
		)`,
	},
	// How far the rules have looked at each folder's new mail (rulestate.go).
	8: {
		`CREATE TABLE IF NOT EXISTS rules_progress(
			folder_id INTEGER PRIMARY KEY REFERENCES folders(id) ON DELETE CASCADE,
			uid INTEGER NOT NULL
		)`,
	},
	// Calendars, task lists and address books, and their objects (dav.go).
	9: {
		`CREATE TABLE IF NOT EXISTS collections(
			id INTEGER PRIMARY KEY,
			account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
			url TEXT NOT NULL,
			kind TEXT NOT NULL,
			name TEXT NOT NULL DEFAULT '',
			color TEXT NOT NULL DEFAULT '',
			timezone TEXT NOT NULL DEFAULT '',
			writable INTEGER NOT NULL DEFAULT 0,
			sync_token TEXT NOT NULL DEFAULT '',
			ctag TEXT NOT NULL DEFAULT '',
			UNIQUE(account_id, url)
		)`,
		`CREATE TABLE IF NOT EXISTS dav_objects(
			id INTEGER PRIMARY KEY,
			collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
			href TEXT NOT NULL,
			etag TEXT NOT NULL DEFAULT '',
			uid TEXT NOT NULL DEFAULT '',
			kind TEXT NOT NULL,
			data TEXT NOT NULL,
			summary TEXT NOT NULL DEFAULT '',
			start INTEGER NOT NULL DEFAULT 0,
			end INTEGER NOT NULL DEFAULT 0,
			all_day INTEGER NOT NULL DEFAULT 0,
			recurring INTEGER NOT NULL DEFAULT 0,
			due INTEGER NOT NULL DEFAULT 0,
			status TEXT NOT NULL DEFAULT '',
			search TEXT NOT NULL DEFAULT '',
			UNIQUE(collection_id, href)
		)`,
		`CREATE INDEX IF NOT EXISTS dav_objects_start ON dav_objects(collection_id, kind, start)`,
	},
	// What a sync skipped or changed of one object, until it syncs cleanly (warnings.go).
	16: {createSyncWarnings},
	// 11: whether a sender is authenticated, added by addAuthentic (projects.go).
	// The notes of the notes folders and their index (notes.go).
	12: notestore.Schema,
	// What the action log did to events and tasks (actions.go): one row per object, with the
	// file of its previous text as the server held it, and the ETags the undo checks.
	14: {
		`CREATE TABLE IF NOT EXISTS dav_action_items(
			action INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
			account TEXT NOT NULL,
			kind TEXT NOT NULL,
			collection TEXT NOT NULL,
			collection_name TEXT NOT NULL DEFAULT '',
			href TEXT NOT NULL,
			uid TEXT NOT NULL DEFAULT '',
			summary TEXT NOT NULL DEFAULT '',
			object INTEGER NOT NULL DEFAULT 0,
			had_before INTEGER NOT NULL DEFAULT 0,
			before_file TEXT NOT NULL DEFAULT '',
			before_size INTEGER NOT NULL DEFAULT 0,
			before_etag TEXT NOT NULL DEFAULT '',
			after_etag TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX IF NOT EXISTS dav_action_items_action ON dav_action_items(action)`,
	},
	// 17: the rows of each action's answer and the previews, added by addActionRows (actions.go).
	// 7: the mailing-list columns, added and filled by fillLists (lists.go).
	// 10: the invitation columns, added by addInviteColumns (invite.go).
}

// goUpgrades[v] runs after upgrades[v], in the same transaction.
var goUpgrades = map[int]func(context.Context, *sql.Tx) error{
	3:  rebuildIndexes,
	7:  fillLists,
	10: addInviteColumns,
	11: addAuthentic,
	13: addLastOK, // when each account last synced without an error (fresh.go)
	// A contact search reads only what the tools show, masked (searched.go); before, it read
	// the server's words as they were.
	14: refillContactSearch,
	15: addHeld, // what each account ever held, so a message moved back is not new (held.go)
	17: addActionRows,
}

const (
	createMetaFTS = `CREATE VIRTUAL TABLE IF NOT EXISTS meta_fts USING fts5(
		subject, from_addr, to_addr, cc_addr, attachments,
		content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2')`
	createBodyFTS = `CREATE VIRTUAL TABLE IF NOT EXISTS body_fts USING fts5(
		text, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2')`
)

var schema = []string{
	`CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)`,
	`CREATE TABLE IF NOT EXISTS accounts(
		id INTEGER PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		kind TEXT NOT NULL,
		last_sync INTEGER,
		last_error TEXT
	)`,
	`CREATE TABLE IF NOT EXISTS folders(
		id INTEGER PRIMARY KEY,
		account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		name TEXT NOT NULL,
		delim TEXT NOT NULL DEFAULT '/',
		role TEXT NOT NULL DEFAULT '',
		uidvalidity INTEGER NOT NULL DEFAULT 0,
		uidnext INTEGER NOT NULL DEFAULT 0,
		highestmodseq INTEGER NOT NULL DEFAULT 0,
		synced_uid INTEGER NOT NULL DEFAULT 0,
		UNIQUE(account_id, name)
	)`,
	`CREATE TABLE IF NOT EXISTS messages(
		id INTEGER PRIMARY KEY,
		account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
		uid INTEGER NOT NULL,
		message_id TEXT NOT NULL DEFAULT '',
		in_reply_to TEXT NOT NULL DEFAULT '',
		thread_id INTEGER NOT NULL DEFAULT 0,
		date INTEGER NOT NULL,
		subject TEXT NOT NULL DEFAULT '',
		from_name TEXT NOT NULL DEFAULT '',
		from_email TEXT NOT NULL DEFAULT '',
		to_list TEXT NOT NULL DEFAULT '',
		cc_list TEXT NOT NULL DEFAULT '',
		flags INTEGER NOT NULL DEFAULT 0,
		size INTEGER NOT NULL DEFAULT 0,
		attachments TEXT NOT NULL DEFAULT '',
		modseq INTEGER NOT NULL DEFAULT 0,
		UNIQUE(folder_id, uid)
	)`,
	`CREATE INDEX IF NOT EXISTS messages_folder ON messages(folder_id, id)`,
	`CREATE INDEX IF NOT EXISTS messages_account ON messages(account_id, id)`,
	`CREATE INDEX IF NOT EXISTS messages_msgid ON messages(account_id, message_id)`,
	`CREATE INDEX IF NOT EXISTS messages_thread ON messages(thread_id)`,
	`CREATE INDEX IF NOT EXISTS messages_sender ON messages(from_email)`,
	`CREATE TABLE IF NOT EXISTS refs(
		message INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
		ref TEXT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS refs_ref ON refs(ref)`,
	`CREATE INDEX IF NOT EXISTS refs_message ON refs(message)`,
	`CREATE TABLE IF NOT EXISTS bodies(
		id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
		text TEXT NOT NULL DEFAULT '',
		truncated INTEGER NOT NULL DEFAULT 0,
		headers TEXT NOT NULL DEFAULT '',
		problems TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE TABLE IF NOT EXISTS maildir_keys(
		folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
		key TEXT NOT NULL,
		uid INTEGER NOT NULL,
		PRIMARY KEY(folder_id, key)
	)`,
	createMetaFTS,
	createBodyFTS,
}

// DefaultPath is the store inside the data folder.
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, File) }

// Open opens (creating if needed) the store at path, with the folder 0700 and the file 0600.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the data folder %s: %w", filepath.Dir(path), err)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("cannot create the store %s: %w", path, err)
		}
		f.Close()
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	s := &Store{db: db, path: path}
	s.notes = notestore.New(db, s.explain)
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.remask(); err != nil { // remask.go
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) migrate() error {
	ctx := context.Background()
	var v int
	_ = s.db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key='schema'`).Scan(&v)
	if v > schemaVersion {
		return fmt.Errorf("the store %s was written by a newer postern (schema %d); upgrade postern", s.path, v)
	}
	if v == schemaVersion {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	if v == 0 {
		for _, q := range schema {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("cannot create the store's tables: %w", err)
			}
		}
		// Nothing is stored yet: it will be masked under these rules (remask.go).
		for _, k := range []string{maskRulesKey, mailRulesKey} {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, k, strconv.Itoa(mask.Rules)); err != nil {
				return err
			}
		}
		v = 1
	}
	for ; v < schemaVersion; v++ {
		for _, q := range upgrades[v] {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("cannot upgrade the store %s from schema %d: %w", s.path, v, err)
			}
		}
		if up := goUpgrades[v]; up != nil {
			if err := up(ctx, tx); err != nil {
				return fmt.Errorf("cannot upgrade the store %s from schema %d: %w", s.path, v, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES('schema', ?)`, strconv.Itoa(schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// explain turns SQLite's low-level errors into a sentence for a person.
func (s *Store) explain(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY") {
		return fmt.Errorf("the store %s is busy with another writer; try again in a moment", s.path)
	}
	if strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") {
		return fmt.Errorf("the store %s is damaged (%v); move it aside and run postern sync to rebuild it", s.path, err)
	}
	return err
}

// Close closes the database.
func (s *Store) Close() error {
	s.dvMu.Lock()
	if s.dv != nil {
		s.dv.Close()
		s.dv = nil
	}
	s.dvMu.Unlock()
	return s.db.Close()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// DB exposes the database to tests in other packages.
func (s *Store) DB() *sql.DB { return s.db }

// Lock is the single-writer lock held by a sync.
type Lock struct{ f *os.File }

// BusyError is a lock another process holds; Holder names it ("process 1234").
type BusyError struct {
	Holder string
	format string // the sentence, with %s for Holder
}

func (e *BusyError) Error() string { return fmt.Sprintf(e.format, e.Holder) }

// LockWriter takes the writer lock beside the store, or says who holds it (a *BusyError).
func LockWriter(storePath string) (*Lock, error) {
	return lockFile(storePath+".lock", "another sync is running (%s); wait for it to finish")
}

// lockFile takes the file lock at path, writing this process's id in it; when another
// process holds it, the error is a *BusyError saying busy (%s: the holder). The kernel
// frees the lock when the holder dies, however it dies.
func lockFile(path, busy string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := strings.TrimSpace(string(b[:n]))
		if holder == "" {
			holder = "another process"
		} else {
			holder = "process " + holder
		}
		return nil, &BusyError{Holder: holder, format: busy}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// Flag bits of messages.flags.
const (
	FlagSeen = 1 << iota
	FlagFlagged
	FlagAnswered
	FlagDraft
	FlagDeleted
)

// FlagBits maps IMAP system flags to bits.
func FlagBits(flags []string) int {
	b := 0
	for _, f := range flags {
		switch strings.ToLower(f) {
		case `\seen`:
			b |= FlagSeen
		case `\flagged`:
			b |= FlagFlagged
		case `\answered`:
			b |= FlagAnswered
		case `\draft`:
			b |= FlagDraft
		case `\deleted`:
			b |= FlagDeleted
		}
	}
	return b
}

// EncodeID turns a row id into the id agents see.
func EncodeID(id int64) string { return "m" + strconv.FormatInt(id, 36) }

// DecodeID reads an id agents give back; ok is false for anything else.
func DecodeID(s string) (int64, bool) {
	if len(s) < 2 || s[0] != 'm' {
		return 0, false
	}
	n, err := strconv.ParseInt(s[1:], 36, 64)
	return n, err == nil && n > 0
}

// keyFor makes a row id ordered by date: newer messages have larger ids, so the
// indexes' natural order is newest first. The low 20 bits separate messages of
// the same second.
func keyFor(date time.Time) int64 {
	sec := date.Unix()
	if sec < 0 {
		sec = 0
	}
	return sec << 20
}

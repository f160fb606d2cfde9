// Package store owns postern's local copy of mail: a SQLite database (WAL) of
// accounts, folders, messages, threads and two FTS5 indexes, one over subjects,
// addresses and attachment names and one over body text. One writer at a time
// (a lock file), readers never blocked. It never stores a password. The action log,
// calendars and contacts, notes and sync warnings live in sub-packages whose methods Store
// embeds, and the tables are data in store/schema (docs/packages.md, internal/store).
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
	"github.com/postern-mcp/postern/internal/store/actionlog"
	"github.com/postern-mcp/postern/internal/store/davstore"
	"github.com/postern-mcp/postern/internal/store/notestore"
	"github.com/postern-mcp/postern/internal/store/schema"
	"github.com/postern-mcp/postern/internal/store/syncwarn"
)

// Store is an open database.
type Store struct {
	db   *sql.DB
	path string

	dvMu sync.Mutex
	dv   *sql.Conn // the connection DataVersion reads on (projects.go), never written through

	*notes      // the notes of the notes folders (notestore)
	*actionLog  // the action log and backups (actionlog)
	*davObjects // calendars, task lists, address books and their objects (davstore)
	*warnings   // what a sync could not take of an item (syncwarn)
}

// The notes of the notes folders, kept by internal/store/notestore on the store's database.
type (
	notes      = notestore.Notes
	Note       = notestore.Note
	NoteStamp  = notestore.NoteStamp
	NoteScope  = notestore.NoteScope
	NoteFilter = notestore.NoteFilter
)

// What a sync could not take of one item, kept by internal/store/syncwarn.
type (
	warnings    = syncwarn.Warnings
	SyncWarning = syncwarn.SyncWarning
)

// ErrNoNote is returned for a note that is not in the store.
var ErrNoNote = notestore.ErrNoNote

// File is the database's name inside the data folder.
const File = "store.db"

// goUpgrades[v] runs after schema.Upgrades[v], in the same transaction.
var goUpgrades = map[int]func(context.Context, *sql.Tx) error{
	3:  rebuildIndexes,
	7:  fillLists,
	10: addInviteColumns,
	11: addAuthentic,
	13: addLastOK, // when each account last synced without an error (fresh.go)
	// A contact search reads only what the tools show, masked (searched.go); before, it read
	// the server's words as they were.
	14: davstore.RefillContactSearch,
	15: addHeld, // what each account ever held, so a message moved back is not new (held.go)
	17: actionlog.AddRows,
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
	s.actionLog = actionlog.New(db, s.explain)
	s.davObjects = davstore.New(db, s.explain)
	s.warnings = syncwarn.New(db, s.explain)
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
	if v > schema.Version {
		return fmt.Errorf("the store %s was written by a newer postern (schema %d); upgrade postern", s.path, v)
	}
	if v == schema.Version {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	if v == 0 {
		for _, q := range schema.Tables {
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
	for ; v < schema.Version; v++ {
		for _, q := range schema.Upgrades[v] {
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
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES('schema', ?)`, strconv.Itoa(schema.Version)); err != nil {
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

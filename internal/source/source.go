// Package source is what an account kind implements (sync into the store, and the remote
// actions its server allows) and what every kind stores of a parsed message. It never reaches
// a server or a file itself, and never keeps, logs or returns a password.
package source

import (
	"context"
	"errors"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/store"
)

// Source is one configured account of some kind.
type Source interface {
	// Sync brings the store's copy of the account up to date, in batches committed one at a
	// time, so that a sync cut at any moment (ctx ending, the process killed) keeps what it
	// committed and the next one continues from there.
	Sync(ctx context.Context, st *store.Store, opt Options) (*Result, error)
}

// Open makes the Source of an account; a kind's package provides one for the table.
type Open func(config.Account) Source

// Remote is a Source whose mail lives on a server that postern may write to.
type Remote interface {
	Source
	// Connect logs in; the Session does every action of one tool call on that connection.
	Connect(ctx context.Context) (Session, error)
}

// Session is one logged-in connection to an account's server. Its errors are sentences a
// person can act on; ctx ending stops the action in progress.
type Session interface {
	// FindRole returns the folder that has role (RoleDrafts, RoleSent), making it when the
	// account has none.
	FindRole(ctx context.Context, role string) (string, error)
	// Append stores raw in folder with flags (store.FlagSeen, store.FlagDraft, …) and the
	// date it was received (the server's clock when zero).
	Append(ctx context.Context, folder string, flags int, date time.Time, raw []byte) error
	// Fetch returns the exact bytes of the message uid of folder. When the folder opens but the
	// message cannot be read, the error is a *ReadError, ErrGone or ErrEmpty, so that the
	// caller can say which message it was (a draft).
	Fetch(ctx context.Context, folder string, uid uint32) ([]byte, error)
	// Remove deletes from folder the messages whose Message-ID is messageID and says how many.
	Remove(ctx context.Context, folder, messageID string) (int, error)
	// Close logs out.
	Close()
}

// Folder roles a Session finds.
const (
	RoleDrafts = "drafts"
	RoleSent   = "sent"
)

var (
	// ErrGone is a Fetch of a message the server no longer has.
	ErrGone = errors.New("the message is no longer on the server")
	// ErrEmpty is a Fetch the server answered without the message's content.
	ErrEmpty = errors.New("the server sent no content for the message")
)

// ReadError is a Fetch whose read of the message failed; Err says why.
type ReadError struct{ Err error }

func (e *ReadError) Error() string {
	return "cannot read the message from the server (" + e.Err.Error() + ")"
}

func (e *ReadError) Unwrap() error { return e.Err }

// Options tune a sync.
type Options struct {
	// BatchSize is how many messages are committed at once (0: the kind's default).
	BatchSize int
	// Progress, when set, is told what is being synced.
	Progress func(Progress)
	// AfterBatch, when set, runs after each committed batch (tests use it to stop a sync at a
	// chosen point).
	AfterBatch func(folder string, stored int)
	// Warn, when set, is told in one sentence about each item that was skipped or cut (a file
	// of a Maildir, named relative to it).
	Warn func(msg string)
}

// Progress is a sync's progress.
type Progress struct {
	Account, Folder string
	Done, Total     int
}

// Result counts what a sync changed.
type Result struct {
	Folders      int
	New          int
	FlagsChanged int
	Deleted      int
	Renamed      int
	FoldersGone  int
}

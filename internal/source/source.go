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
	// committed and the next one continues from there. It does not record the sync's end:
	// the caller does, once for every kind (mailsync.Run).
	Sync(ctx context.Context, st *store.Store, opt Options) (*Result, error)
}

// Open makes the Source of an account from the kind's settings of it; a kind's package
// provides one for the table. Its error is SettingsOf's (none today: a field of another kind
// is ignored, and config.Notices says so).
type Open func(config.Account) (Source, error)

// Remote is a Source whose mail lives on a server that postern may write to.
type Remote interface {
	Source
	// Connect logs in; the Session does every action of one tool call on that connection.
	Connect(ctx context.Context) (Session, error)
}

// Session is one logged-in connection to an account's server: every action of a kind that
// holds mail and writes to it (Mail|Writes), made of small interfaces (Roles, Messages,
// Flagger, Mover) that a kind implements by what its capabilities say. Its errors are
// sentences a person can act on; ctx ending stops the action in progress.
type Session interface {
	Roles
	Messages
	Flagger
	Mover
	// Close logs out.
	Close()
}

// Roles finds an account's folders by what they are for.
type Roles interface {
	// FindRole returns the folder that has role (RoleDrafts, RoleSent), making it when the
	// account has none.
	FindRole(ctx context.Context, role string) (string, error)
	// RoleFolder returns the folder that has role (any Role constant), found by its
	// special-use attribute or a conventional name; ok is false when the account has none. It
	// never creates a folder.
	RoleFolder(ctx context.Context, role string) (folder string, ok bool, err error)
}

// Messages puts messages into a folder, reads them back and removes them by Message-ID
// (drafts and the sent copy).
type Messages interface {
	// Append stores raw in folder with flags (store.FlagSeen, store.FlagDraft, …) and the
	// date it was received (the server's clock when zero).
	Append(ctx context.Context, folder string, flags int, date time.Time, raw []byte) error
	// Fetch returns the exact bytes of the message uid of folder. When the folder opens but the
	// message cannot be read, the error is a *ReadError, ErrGone or ErrEmpty, so that the
	// caller can say which message it was (a draft).
	Fetch(ctx context.Context, folder string, uid uint32) ([]byte, error)
	// Remove deletes from folder the messages whose Message-ID is messageID and says how many;
	// without UID EXPUNGE on the server it changes nothing and returns ErrNeedsExpunge.
	Remove(ctx context.Context, folder, messageID string) (int, error)
}

// Flagger reads and changes the flags of messages.
type Flagger interface {
	// State returns the flags and modseq of the messages uids of folder that it still holds
	// (those it no longer holds are left out). Like every action on messages by uid, it first
	// checks that folder's UIDVALIDITY is uidValidity, else it returns an error wrapping
	// ErrStale.
	State(ctx context.Context, folder string, uidValidity uint32, uids []uint32) (map[uint32]MessageState, error)
	// SetFlags adds and removes IMAP flags (`\Seen`, `\Flagged`, `$Junk`…; never `\Deleted`)
	// on the messages uids of folder. With unchangedSince > 0 on a server with CONDSTORE, a
	// message whose modseq is above it is left alone and reported in Flagged.Changed.
	SetFlags(ctx context.Context, folder string, uidValidity uint32, uids []uint32, add, remove []string, unchangedSince uint64) (Flagged, error)
}

// Mover moves messages between folders and removes them for good.
type Mover interface {
	// Move moves exactly the messages uids of folder to dest. Without MOVE it copies them and
	// removes the originals with UID EXPUNGE; a server with neither gets ErrNeedsExpunge and
	// nothing is changed.
	Move(ctx context.Context, folder string, uidValidity uint32, uids []uint32, dest string) (Moved, error)
	// Expunge removes exactly the messages uids of folder for good and says how many; without
	// UID EXPUNGE it changes nothing and returns ErrNeedsExpunge.
	Expunge(ctx context.Context, folder string, uidValidity uint32, uids []uint32) (int, error)
}

// Folder roles a Session finds.
const (
	RoleDrafts  = "drafts"
	RoleSent    = "sent"
	RoleArchive = "archive"
	RoleJunk    = "junk"
	RoleTrash   = "trash"
)

// MessageState is what the server holds of one message's flags.
type MessageState struct {
	Flags  []string // IMAP flags as the server spells them (`\Seen`, `$Junk`), sorted
	ModSeq uint64   // its CONDSTORE mod-sequence; 0 when the server has no CONDSTORE
}

// Moved is what a Move did.
type Moved struct {
	// UIDValidity is the destination folder's UIDVALIDITY (0 when the server did not say).
	UIDValidity uint32
	// UIDs maps each moved source uid to its uid in the destination (0 when unknown).
	UIDs map[uint32]uint32
	// Gone lists the uids asked for that the folder no longer held: nothing was done to them.
	Gone []uint32
}

// Flagged is what a SetFlags did.
type Flagged struct {
	// Before holds the state of each message found, read just before the change.
	Before map[uint32]MessageState
	// After holds the state, read after the change, of each message now flagged as asked.
	After map[uint32]MessageState
	// Changed lists the messages left alone because they changed on the server after
	// unchangedSince.
	Changed []uint32
	// Gone lists the uids asked for that the folder no longer held.
	Gone []uint32
}

var (
	// ErrGone is a Fetch of a message the server no longer has.
	ErrGone = errors.New("the message is no longer on the server")
	// ErrEmpty is a Fetch the server answered without the message's content.
	ErrEmpty = errors.New("the server sent no content for the message")
	// ErrNeedsExpunge is an action refused, with nothing changed, because the server lacks UID
	// EXPUNGE (UIDPLUS): a plain EXPUNGE would also remove messages another mail program
	// marked deleted.
	ErrNeedsExpunge = errors.New("the server cannot remove single messages (it offers no UIDPLUS), and a plain EXPUNGE would also remove every message another mail program marked deleted in the folder, so nothing was changed; do this in your mail program instead")
	// ErrStale is an action refused because the folder's UIDVALIDITY is not the one the store
	// holds: its uids now name other messages.
	ErrStale = errors.New("its messages were renumbered on the server since the last sync, so nothing was changed; run postern sync and try again")
)

// NotStarted is the error of a sync that never reached the account (its folder cannot be
// opened): the sync records no end of it, so that the account stays as it was (never synced,
// or as its last sync left it). Err says why.
type NotStarted struct{ Err error }

func (e *NotStarted) Error() string { return e.Err.Error() }

func (e *NotStarted) Unwrap() error { return e.Err }

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

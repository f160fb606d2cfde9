package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/postern-mcp/postern/internal/store/actionlog"
)

// The store's side of an action: where a message is on its server, and its row moved or its
// flags set once the server did it. Message rows keep their id when an action moves them, so an
// agent's ids stay good. The action log and the backups are internal/store/actionlog's, lent to
// Store by embedding; their types are named here as before.
type (
	actionLog  = actionlog.Log
	Action     = actionlog.Action
	LoggedRow  = actionlog.LoggedRow
	DAVItem    = actionlog.DAVItem
	ActionItem = actionlog.ActionItem
	DAVBackup  = actionlog.DAVBackup
	Backup     = actionlog.Backup
)

// ErrNoAction and ErrNoBackup are returned for an action or a backup that is not in the store.
var (
	ErrNoAction = actionlog.ErrNoAction
	ErrNoBackup = actionlog.ErrNoBackup
)

// EncodeActionID is the id agents see of an action.
func EncodeActionID(id int64) string { return actionlog.EncodeActionID(id) }

// DecodeActionID reads an action id; ok is false for anything else.
func DecodeActionID(s string) (int64, bool) { return actionlog.DecodeActionID(s) }

// EncodeBackupID is the id agents see of a backup.
func EncodeBackupID(id int64) string { return actionlog.EncodeBackupID(id) }

// DecodeBackupID reads a backup id; ok is false for anything else.
func DecodeBackupID(s string) (int64, bool) { return actionlog.DecodeBackupID(s) }

// Target is a stored message as an action needs it: where it is on its server.
type Target struct {
	ID          int64
	Account     string
	FolderID    int64
	Folder      string
	UIDValidity uint32
	UID         uint32
	Flags       int
	ModSeq      uint64
	MessageID   string
	Subject     string
	From        Address
	Date        time.Time
}

// Targets returns the visible messages among ids (accounts nil: all), in the
// order given; ids that name no visible message are left out.
func (s *Store) Targets(ctx context.Context, ids []int64, accounts []string) ([]*Target, error) {
	out := make([]*Target, 0, len(ids))
	stmt, err := s.db.PrepareContext(ctx, `SELECT m.id, a.name, f.id, f.name, f.uidvalidity, m.uid, m.flags, m.modseq,
		m.message_id, m.subject, m.from_name, m.from_email, m.date
		FROM messages m JOIN folders f ON f.id = m.folder_id JOIN accounts a ON a.id = m.account_id WHERE m.id = ?`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer stmt.Close()
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		t := &Target{}
		var date int64
		err := stmt.QueryRowContext(ctx, id).Scan(&t.ID, &t.Account, &t.FolderID, &t.Folder, &t.UIDValidity, &t.UID, &t.Flags, &t.ModSeq,
			&t.MessageID, &t.Subject, &t.From.Name, &t.From.Email, &date)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, s.explain(err)
		}
		if accounts != nil && !contains(accounts, t.Account) {
			continue
		}
		t.Date = time.Unix(date, 0).UTC()
		out = append(out, t)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FolderRef is a stored folder as an action names it.
type FolderRef struct {
	ID          int64
	Account     string
	Name        string
	Role        string
	UIDValidity uint32
}

// FindFolder finds the folder of account that name answers to, by the rules
// of in: (see the top of folder.go); a name that answers to none is a
// *FolderError naming the nearest.
func (s *Store) FindFolder(ctx context.Context, account, name string) (*FolderRef, error) {
	g, err := s.resolveFolders(ctx, &Filter{Accounts: []string{account}, Folder: name})
	if err != nil {
		return nil, err
	}
	ids := g.folders[name]
	if len(ids) != 1 {
		return nil, &FolderError{Name: name, Accounts: []string{account}}
	}
	return s.folderRef(ctx, `f.id = ?`, ids[0])
}

// RoleFolder returns the stored folder of account that has role, or nil.
func (s *Store) RoleFolder(ctx context.Context, account, role string) (*FolderRef, error) {
	f, err := s.folderRef(ctx, `a.name = ? AND f.role = ? ORDER BY f.name`, account, role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return f, err
}

// FolderNamed returns the stored folder of account called exactly name, or nil.
func (s *Store) FolderNamed(ctx context.Context, account, name string) (*FolderRef, error) {
	f, err := s.folderRef(ctx, `a.name = ? AND f.name = ?`, account, name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return f, err
}

func (s *Store) folderRef(ctx context.Context, where string, args ...any) (*FolderRef, error) {
	f := &FolderRef{}
	err := s.db.QueryRowContext(ctx, `SELECT f.id, a.name, f.name, f.role, f.uidvalidity FROM folders f JOIN accounts a ON a.id = f.account_id WHERE `+where+` LIMIT 1`, args...).
		Scan(&f.ID, &f.Account, &f.Name, &f.Role, &f.UIDValidity)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, s.explain(err)
	}
	return f, nil
}

// MoveStored follows on the store a move the server made: the message keeps
// its id and is now uid of folder to. With uid 0 (the server did not say) the
// row is removed instead, and the next sync stores the message anew.
func (s *Store) MoveStored(ctx context.Context, id int64, to *FolderRef, uid uint32) error {
	if uid == 0 {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return s.explain(err)
		}
		defer tx.Rollback()
		if err := deleteFTS(ctx, tx, `SELECT ?`, id); err != nil {
			return s.explain(err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = ?`, id); err != nil {
			return s.explain(err)
		}
		return s.explain(tx.Commit())
	}
	// A row the destination's sync stored already (it ran between the move and now) is the
	// same message: it goes, and this one, with the id the agent knows, takes its place.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	if err := deleteFTS(ctx, tx, `SELECT id FROM messages WHERE folder_id = ? AND uid = ? AND id <> ?`, to.ID, uid, id); err != nil {
		return s.explain(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE folder_id = ? AND uid = ? AND id <> ?`, to.ID, uid, id); err != nil {
		return s.explain(err)
	}
	// The account held it already: where it lands, it is not new mail (held.go).
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET folder_id = ?, uid = ?, modseq = 0, held_before = 1 WHERE id = ?`, to.ID, uid, id); err != nil {
		return s.explain(err)
	}
	return s.explain(tx.Commit())
}

// SetStoredFlags follows on the store a flag change the server made. It leaves
// the folder's HIGHESTMODSEQ alone, so the next sync still fetches every change
// made meanwhile by other mail programs.
func (s *Store) SetStoredFlags(ctx context.Context, id int64, flags int, modseq uint64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE messages SET flags = ?, modseq = ? WHERE id = ?`, flags, modseq, id)
	return s.explain(err)
}

// MessageSenders returns the sender's address of each stored message among ids.
func (s *Store) MessageSenders(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	j, _ := json.Marshal(ids)
	rows, err := s.db.QueryContext(ctx, `SELECT id, from_email FROM messages WHERE id IN (SELECT value FROM json_each(?))`, string(j))
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var email string
		if err := rows.Scan(&id, &email); err != nil {
			return nil, s.explain(err)
		}
		out[id] = email
	}
	return out, s.explain(rows.Err())
}

// SystemFlags is the IMAP system flags of the store's flag bits.
func SystemFlags(bits int) []string {
	var out []string
	for _, f := range []struct {
		bit  int
		name string
	}{{FlagAnswered, `\Answered`}, {FlagDeleted, `\Deleted`}, {FlagDraft, `\Draft`}, {FlagFlagged, `\Flagged`}, {FlagSeen, `\Seen`}} {
		if bits&f.bit != 0 {
			out = append(out, f.name)
		}
	}
	return out
}

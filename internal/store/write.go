package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Address is a name and an email address.
type Address struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email"`
}

// Attachment is an attachment's name, type and decoded size.
type Attachment struct {
	Name        string `json:"name"`
	ContentType string `json:"type"`
	Size        int64  `json:"size"`
}

// Header is one header field.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Folder is a mailbox of an account and its sync state.
type Folder struct {
	ID            int64
	AccountID     int64
	Name          string
	Delim         string
	Role          string
	UIDValidity   uint32
	UIDNext       uint32
	HighestModSeq uint64
	SyncedUID     uint32 // every message up to this UID is stored
}

// NewMessage is a message to store.
type NewMessage struct {
	UID          uint32
	Flags        int
	ModSeq       uint64
	InternalDate time.Time
	Size         int64

	MessageID     string
	InReplyTo     string
	References    []string
	Date          time.Time
	Subject       string
	From          Address
	To, Cc        []Address
	Attachments   []Attachment
	Text          string
	TextTruncated bool
	Headers       []Header
	Problems      []string
	Forged        bool
	Authentic     bool   // a trusted receiving server vouched for the From domain (authres.Authenticated)
	Withheld      string // why the text is withheld, when it is
	// List: it comes from a mailing list; OneClick: it offers an RFC 8058 one-click
	// unsubscribe; Unsubscribe: its List-Unsubscribe URIs, stored for mail_unsubscribe
	// and never shown (Headers holds them as mailparse.ShowUnsubscribe shows them).
	List, OneClick bool
	Unsubscribe    []string
	// Invitation: InvitationRequest or InvitationCancel when it carries an iTIP invitation,
	// InvitationUID its event's UID and Calendar its iCalendar text (invite.go).
	Invitation, InvitationUID, Calendar string
}

// EnsureAccount returns the id of the account, creating it.
func (s *Store) EnsureAccount(ctx context.Context, name, kind string) (int64, error) {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO accounts(name, kind) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET kind=excluded.kind`, name, kind); err != nil {
		return 0, s.explain(err)
	}
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name=?`, name).Scan(&id)
	return id, s.explain(err)
}

// RemoveAccount deletes an account and all its mail from the store.
func (s *Store) RemoveAccount(ctx context.Context, name string) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.explain(err)
	}
	defer tx.Rollback()
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name=?`, name).Scan(&id); errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	} else if err != nil {
		return 0, s.explain(err)
	}
	var n int
	tx.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE account_id=?`, id).Scan(&n)
	if err := deleteFTS(ctx, tx, `SELECT id FROM messages WHERE account_id=?`, id); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM accounts WHERE id=?`, id); err != nil {
		return 0, s.explain(err)
	}
	return n, s.explain(tx.Commit())
}

func deleteFTS(ctx context.Context, tx *sql.Tx, idQuery string, args ...any) error {
	for _, t := range []string{"meta_fts", "body_fts"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE rowid IN (`+idQuery+`)`, args...); err != nil {
			return fmt.Errorf("cannot update the search index: %w", err)
		}
	}
	return nil
}

// rebuildIndexes fills empty search indexes from the stored messages, with
// what addOne indexes.
func rebuildIndexes(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT m.id, m.subject, m.from_name, m.from_email, m.to_list, m.cc_list, m.attachments, coalesce(b.text, '')
		FROM messages m LEFT JOIN bodies b ON b.id = m.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	meta, err := tx.PrepareContext(ctx, `INSERT INTO meta_fts(rowid, subject, from_addr, to_addr, cc_addr, attachments) VALUES(?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer meta.Close()
	body, err := tx.PrepareContext(ctx, `INSERT INTO body_fts(rowid, text) VALUES(?,?)`)
	if err != nil {
		return err
	}
	defer body.Close()
	for rows.Next() {
		var id int64
		var subject, fromName, fromEmail, to, cc, atts, text string
		if err := rows.Scan(&id, &subject, &fromName, &fromEmail, &to, &cc, &atts, &text); err != nil {
			return err
		}
		var as []Attachment
		if atts != "" {
			_ = json.Unmarshal([]byte(atts), &as)
		}
		if _, err := meta.ExecContext(ctx, id, subject, addrText([]Address{{Name: fromName, Email: fromEmail}}),
			addrText(splitAddrs(to)), addrText(splitAddrs(cc)), attachmentNames(as)); err != nil {
			return err
		}
		if text != "" {
			if _, err := body.ExecContext(ctx, id, text); err != nil {
				return err
			}
		}
	}
	return rows.Err()
}

// attachmentNames is what the index holds for attachments: their names.
func attachmentNames(as []Attachment) string {
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Name
	}
	return strings.Join(names, " ")
}

// SetAccountSynced records the end of a sync of the account; one without syncErr is also
// when the store last caught up with it (last_ok, fresh.go).
func (s *Store) SetAccountSynced(ctx context.Context, accountID int64, at time.Time, syncErr string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE accounts SET last_sync=?, last_error=?, last_ok=CASE WHEN ?='' THEN ? ELSE last_ok END WHERE id=?`, at.Unix(), syncErr, syncErr, at.Unix(), accountID)
	return s.explain(err)
}

// Folders returns the account's folders.
func (s *Store) Folders(ctx context.Context, accountID int64) ([]*Folder, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, account_id, name, delim, role, uidvalidity, uidnext, highestmodseq, synced_uid FROM folders WHERE account_id=? ORDER BY name`, accountID)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []*Folder
	for rows.Next() {
		f := &Folder{}
		if err := rows.Scan(&f.ID, &f.AccountID, &f.Name, &f.Delim, &f.Role, &f.UIDValidity, &f.UIDNext, &f.HighestModSeq, &f.SyncedUID); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// SaveFolder inserts or updates a folder (by id, or by account and name when id is 0).
func (s *Store) SaveFolder(ctx context.Context, f *Folder) error {
	if f.ID == 0 {
		err := s.db.QueryRowContext(ctx, `INSERT INTO folders(account_id, name, delim, role, uidvalidity, uidnext, highestmodseq, synced_uid)
			VALUES(?,?,?,?,?,?,?,?) ON CONFLICT(account_id, name) DO UPDATE SET delim=excluded.delim, role=excluded.role RETURNING id`,
			f.AccountID, f.Name, f.Delim, f.Role, f.UIDValidity, f.UIDNext, f.HighestModSeq, f.SyncedUID).Scan(&f.ID)
		return s.explain(err)
	}
	_, err := s.db.ExecContext(ctx, `UPDATE folders SET name=?, delim=?, role=?, uidvalidity=?, uidnext=?, highestmodseq=?, synced_uid=? WHERE id=?`,
		f.Name, f.Delim, f.Role, f.UIDValidity, f.UIDNext, f.HighestModSeq, f.SyncedUID, f.ID)
	return s.explain(err)
}

// DeleteFolder removes a folder and its messages.
func (s *Store) DeleteFolder(ctx context.Context, folderID int64) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	if err := deleteFTS(ctx, tx, `SELECT id FROM messages WHERE folder_id=?`, folderID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM folders WHERE id=?`, folderID); err != nil {
		return s.explain(err)
	}
	return s.explain(tx.Commit())
}

// FolderUIDs returns the UIDs stored for a folder, ascending.
func (s *Store) FolderUIDs(ctx context.Context, folderID int64) ([]uint32, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT uid FROM messages WHERE folder_id=? ORDER BY uid`, folderID)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []uint32
	for rows.Next() {
		var u uint32
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// FolderCount is how many messages of a folder are stored.
func (s *Store) FolderCount(ctx context.Context, folderID int64) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE folder_id=?`, folderID).Scan(&n)
	return n, s.explain(err)
}

// StoredIdentity is what identifies a stored message when UIDs change (a new UIDVALIDITY).
type StoredIdentity struct {
	ID        int64
	UID       uint32
	MessageID string
	Size      int64
}

// FolderIdentities lists the stored messages of a folder by identity.
func (s *Store) FolderIdentities(ctx context.Context, folderID int64) ([]StoredIdentity, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, uid, message_id, size FROM messages WHERE folder_id=? ORDER BY uid`, folderID)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []StoredIdentity
	for rows.Next() {
		var x StoredIdentity
		if err := rows.Scan(&x.ID, &x.UID, &x.MessageID, &x.Size); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// Renumber applies a new UIDVALIDITY to a folder: kept maps stored row ids to
// their new UIDs; every other message of the folder is deleted. The folder's
// sync state becomes the given one. Message ids agents hold stay valid for
// the messages kept.
func (s *Store) Renumber(ctx context.Context, f *Folder, kept map[int64]uint32) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	// Move every UID out of the way first (UIDs are unique per folder).
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET uid = -uid - 1 WHERE folder_id=?`, f.ID); err != nil {
		return s.explain(err)
	}
	for id, uid := range kept {
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET uid=? WHERE id=?`, uid, id); err != nil {
			return s.explain(err)
		}
	}
	if err := deleteFTS(ctx, tx, `SELECT id FROM messages WHERE folder_id=? AND uid < 0`, f.ID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE folder_id=? AND uid < 0`, f.ID); err != nil {
		return s.explain(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE folders SET uidvalidity=?, uidnext=?, highestmodseq=?, synced_uid=? WHERE id=?`,
		f.UIDValidity, f.UIDNext, f.HighestModSeq, f.SyncedUID, f.ID); err != nil {
		return s.explain(err)
	}
	return s.explain(tx.Commit())
}

// DeleteUIDs removes expunged messages of a folder.
func (s *Store) DeleteUIDs(ctx context.Context, folderID int64, uids []uint32) error {
	if len(uids) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	for _, u := range uids {
		var id int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM messages WHERE folder_id=? AND uid=?`, folderID, u).Scan(&id); err != nil {
			continue
		}
		for _, t := range []string{"meta_fts", "body_fts"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE rowid=?`, id); err != nil {
				return s.explain(err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id=?`, id); err != nil {
			return s.explain(err)
		}
	}
	return s.explain(tx.Commit())
}

// FlagUpdate is a message's new flags.
type FlagUpdate struct {
	UID    uint32
	Flags  int
	ModSeq uint64
}

// UpdateFlags applies flag changes and records the folder's new HIGHESTMODSEQ.
func (s *Store) UpdateFlags(ctx context.Context, folderID int64, ups []FlagUpdate, highestModSeq uint64) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `UPDATE messages SET flags=?, modseq=? WHERE folder_id=? AND uid=? AND (flags != ? OR modseq != ?)`)
	if err != nil {
		return s.explain(err)
	}
	defer stmt.Close()
	for _, u := range ups {
		if _, err := stmt.ExecContext(ctx, u.Flags, u.ModSeq, folderID, u.UID, u.Flags, u.ModSeq); err != nil {
			return s.explain(err)
		}
	}
	if highestModSeq > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE folders SET highestmodseq=? WHERE id=?`, highestModSeq, folderID); err != nil {
			return s.explain(err)
		}
	}
	return s.explain(tx.Commit())
}

// AddMessages stores a batch of a folder's messages in one transaction and
// records syncedUID as the folder's progress, so that a sync killed at any
// moment loses at most this batch. A message already stored (same folder and
// UID) is left as it is.
func (s *Store) AddMessages(ctx context.Context, f *Folder, msgs []NewMessage, syncedUID uint32) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	b, err := prepareBatch(ctx, tx)
	if err != nil {
		return s.explain(err)
	}
	defer b.close()
	for i := range msgs {
		if err := s.addOne(ctx, b, f, &msgs[i]); err != nil {
			return err
		}
	}
	if syncedUID > f.SyncedUID {
		if _, err := tx.ExecContext(ctx, `UPDATE folders SET synced_uid=? WHERE id=?`, syncedUID, f.ID); err != nil {
			return s.explain(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.explain(err)
	}
	if syncedUID > f.SyncedUID {
		f.SyncedUID = syncedUID
	}
	return nil
}

// sortDate is the date a message is ordered by: its Date header unless that is
// missing or more than a day after the server received it.
func sortDate(m *NewMessage) time.Time {
	d := m.Date
	if d.IsZero() || (!m.InternalDate.IsZero() && d.After(m.InternalDate.Add(24*time.Hour))) {
		d = m.InternalDate
	}
	if d.IsZero() {
		d = time.Unix(0, 0)
	}
	return d
}

// batch holds the statements of one AddMessages transaction, prepared once.
type batch struct {
	tx                                           *sql.Tx
	exists, maxID, insert, ref, body, meta, text *sql.Stmt
	threadByMsgID, threadByRef, mergeThread      *sql.Stmt
	held                                         *sql.Stmt
}

func prepareBatch(ctx context.Context, tx *sql.Tx) (*batch, error) {
	b := &batch{tx: tx}
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&b.exists, `SELECT count(*) FROM messages WHERE folder_id=? AND uid=?`},
		{&b.maxID, `SELECT max(id) FROM messages WHERE id >= ? AND id < ?`},
		{&b.insert, `INSERT INTO messages(id, account_id, folder_id, uid, message_id, in_reply_to, thread_id, date, subject,
		from_name, from_email, to_list, cc_list, flags, size, attachments, modseq, forged, withheld, list, one_click, unsubscribe,
		invitation, invitation_uid, authentic, held_key, held_before)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(folder_id, uid) DO NOTHING`},
		{&b.ref, `INSERT INTO refs(message, ref) VALUES(?, ?)`},
		{&b.body, `INSERT INTO bodies(id, text, truncated, headers, problems, calendar) VALUES(?,?,?,?,?,?)`},
		{&b.meta, `INSERT INTO meta_fts(rowid, subject, from_addr, to_addr, cc_addr, attachments) VALUES(?,?,?,?,?,?)`},
		{&b.text, `INSERT INTO body_fts(rowid, text) VALUES(?,?)`},
		{&b.threadByMsgID, `SELECT thread_id FROM messages WHERE account_id=? AND message_id=?`},
		{&b.threadByRef, `SELECT m.thread_id FROM refs r JOIN messages m ON m.id = r.message WHERE r.ref=? AND m.account_id=?`},
		{&b.mergeThread, `UPDATE messages SET thread_id=? WHERE thread_id=?`},
		{&b.held, `INSERT INTO held(account_id, key) VALUES(?, ?) ON CONFLICT DO NOTHING`},
	} {
		st, err := tx.PrepareContext(ctx, p.q)
		if err != nil {
			b.close()
			return nil, err
		}
		*p.dst = st
	}
	return b, nil
}

func (b *batch) close() {
	for _, st := range []*sql.Stmt{b.exists, b.maxID, b.insert, b.ref, b.body, b.meta, b.text, b.threadByMsgID, b.threadByRef, b.mergeThread, b.held} {
		if st != nil {
			st.Close()
		}
	}
}

func (s *Store) addOne(ctx context.Context, b *batch, f *Folder, m *NewMessage) error {
	var exists int
	if err := b.exists.QueryRowContext(ctx, f.ID, m.UID).Scan(&exists); err != nil {
		return s.explain(err)
	}
	if exists > 0 {
		return nil
	}
	date := sortDate(m)
	base := keyFor(date)
	var maxID sql.NullInt64
	if err := b.maxID.QueryRowContext(ctx, base, base+(1<<20)).Scan(&maxID); err != nil {
		return s.explain(err)
	}
	id := base + 1
	if maxID.Valid {
		id = maxID.Int64 + 1
	}
	atts := ""
	if len(m.Attachments) > 0 {
		b, _ := json.Marshal(m.Attachments)
		atts = string(b)
	}
	thread, err := threadFor(ctx, b, f.AccountID, id, m)
	if err != nil {
		return s.explain(err)
	}
	// A message whose key the account has held before (held.go) is not new mail.
	key := heldKey(m.MessageID, m.Headers, m.Text, atts)
	res, err := b.held.ExecContext(ctx, f.AccountID, key)
	if err != nil {
		return s.explain(err)
	}
	added, err := res.RowsAffected()
	if err != nil {
		return s.explain(err)
	}
	if _, err := b.insert.ExecContext(ctx, id, f.AccountID, f.ID, m.UID, m.MessageID, m.InReplyTo, thread, date.Unix(), m.Subject,
		m.From.Name, m.From.Email, joinAddrs(m.To), joinAddrs(m.Cc), m.Flags, m.Size, atts, m.ModSeq, m.Forged, m.Withheld,
		m.List, m.OneClick, strings.Join(m.Unsubscribe, "\n"), m.Invitation, m.InvitationUID, m.Authentic, key, added == 0); err != nil {
		return s.explain(err)
	}
	refs := append([]string{}, m.References...)
	if m.InReplyTo != "" {
		refs = append(refs, m.InReplyTo)
	}
	for _, r := range uniq(refs) {
		if _, err := b.ref.ExecContext(ctx, id, r); err != nil {
			return s.explain(err)
		}
	}
	headers, _ := json.Marshal(m.Headers)
	problems := strings.Join(m.Problems, "\n")
	if _, err := b.body.ExecContext(ctx, id, m.Text, m.TextTruncated, string(headers), problems, m.Calendar); err != nil {
		return s.explain(err)
	}
	if _, err := b.meta.ExecContext(ctx,
		id, m.Subject, addrText([]Address{m.From}), addrText(m.To), addrText(m.Cc), attachmentNames(m.Attachments)); err != nil {
		return s.explain(err)
	}
	if m.Text != "" {
		if _, err := b.text.ExecContext(ctx, id, m.Text); err != nil {
			return s.explain(err)
		}
	}
	return nil
}

// threadFor finds the thread of a new message from the messages it refers to
// and the messages that refer to it, merging threads it joins. A thread's id
// is the id of its oldest message: ids are date keys (keyFor), so the least
// id is the oldest by date, ties by id. A message older than its thread (a
// reply synced before its parent, then the parent) makes its own id the
// thread's, and the threads it joins are renumbered to it.
func threadFor(ctx context.Context, b *batch, accountID, id int64, m *NewMessage) (int64, error) {
	cand := map[int64]bool{}
	collect := func(st *sql.Stmt, args ...any) error {
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t int64
			if err := rows.Scan(&t); err != nil {
				return err
			}
			cand[t] = true
		}
		return rows.Err()
	}
	refs := append([]string{}, m.References...)
	if m.InReplyTo != "" {
		refs = append(refs, m.InReplyTo)
	}
	for _, r := range uniq(refs) {
		if err := collect(b.threadByMsgID, accountID, r); err != nil {
			return 0, err
		}
	}
	if m.MessageID != "" {
		// Messages that refer to this one, and the same message in another
		// folder (a copy in Sent and INBOX), are in the same thread.
		if err := collect(b.threadByRef, m.MessageID, accountID); err != nil {
			return 0, err
		}
		if err := collect(b.threadByMsgID, accountID, m.MessageID); err != nil {
			return 0, err
		}
	}
	if len(cand) == 0 {
		return id, nil
	}
	ids := make([]int64, 0, len(cand))
	for t := range cand {
		ids = append(ids, t)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	thread := min(id, ids[0])
	for _, t := range ids {
		if t == thread {
			continue
		}
		if _, err := b.mergeThread.ExecContext(ctx, thread, t); err != nil {
			return 0, err
		}
	}
	return thread, nil
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// joinAddrs stores addresses as "Name <email>" lines.
func joinAddrs(as []Address) string {
	var b strings.Builder
	for i, a := range as {
		if i > 0 {
			b.WriteByte('\n')
		}
		if a.Name != "" {
			b.WriteString(a.Name + " <" + a.Email + ">")
		} else {
			b.WriteString(a.Email)
		}
	}
	return b.String()
}

// splitAddrs reads what joinAddrs wrote.
func splitAddrs(s string) []Address {
	if s == "" {
		return nil
	}
	var out []Address
	for _, line := range strings.Split(s, "\n") {
		if i := strings.LastIndex(line, " <"); i >= 0 && strings.HasSuffix(line, ">") {
			out = append(out, Address{Name: line[:i], Email: line[i+2 : len(line)-1]})
		} else {
			out = append(out, Address{Email: line})
		}
	}
	return out
}

// addrText is what the index holds for addresses: names and the parts of each email.
func addrText(as []Address) string {
	var parts []string
	for _, a := range as {
		if a.Name != "" {
			parts = append(parts, a.Name)
		}
		if a.Email != "" {
			parts = append(parts, a.Email)
		}
	}
	return strings.Join(parts, " ")
}

// MaildirUIDs returns the UIDs given to a Maildir folder's files (by file key)
// and assigns new ones, in the order given, to keys that have none.
func (s *Store) MaildirUIDs(ctx context.Context, folderID int64, keys []string) (map[string]uint32, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.explain(err)
	}
	defer tx.Rollback()
	out := map[string]uint32{}
	rows, err := tx.QueryContext(ctx, `SELECT key, uid FROM maildir_keys WHERE folder_id=?`, folderID)
	if err != nil {
		return nil, s.explain(err)
	}
	var next uint32
	for rows.Next() {
		var k string
		var u uint32
		if err := rows.Scan(&k, &u); err != nil {
			rows.Close()
			return nil, err
		}
		out[k] = u
		if u > next {
			next = u
		}
	}
	rows.Close()
	for _, k := range keys {
		if _, ok := out[k]; ok {
			continue
		}
		next++
		if _, err := tx.ExecContext(ctx, `INSERT INTO maildir_keys(folder_id, key, uid) VALUES(?,?,?)`, folderID, k, next); err != nil {
			return nil, s.explain(err)
		}
		out[k] = next
	}
	return out, s.explain(tx.Commit())
}

// ForgetMaildirKeys drops the UIDs of files that are gone.
func (s *Store) ForgetMaildirKeys(ctx context.Context, folderID int64, keys []string) error {
	for _, k := range keys {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM maildir_keys WHERE folder_id=? AND key=?`, folderID, k); err != nil {
			return s.explain(err)
		}
	}
	return nil
}

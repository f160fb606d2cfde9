package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/store"
)

// heldBox is a store with one account and its INBOX and Archive.
type heldBox struct {
	st             *store.Store
	path           string
	inbox, archive *store.Folder
	uid            map[int64]uint32
}

func newHeldBox(t *testing.T) *heldBox {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), store.File)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &heldBox{st: st, path: path, uid: map[int64]uint32{}}
	aid, err := st.EnsureAccount(ctx, "work", "imap")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []**store.Folder{&b.inbox, &b.archive} {
		name := "INBOX"
		if f == &b.archive {
			name = "Archive"
		}
		*f = &store.Folder{AccountID: aid, Name: name, Delim: "/"}
		if err := st.SaveFolder(ctx, *f); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// add stores m in f under the folder's next uid and returns that uid.
func (b *heldBox) add(t *testing.T, f *store.Folder, m store.NewMessage) uint32 {
	t.Helper()
	b.uid[f.ID]++
	m.UID = b.uid[f.ID]
	if err := b.st.AddMessages(context.Background(), f, []store.NewMessage{m}, m.UID); err != nil {
		t.Fatal(err)
	}
	return m.UID
}

// fresh lists the subjects of f's messages above uid after that are new mail.
func (b *heldBox) fresh(t *testing.T, f *store.Folder, after uint32) []string {
	t.Helper()
	rows, top, err := b.st.NewForRules(context.Background(), f.ID, after, 100)
	if err != nil {
		t.Fatal(err)
	}
	if top != b.uid[f.ID] && b.uid[f.ID] > after {
		t.Errorf("NewForRules read up to uid %d, the folder's highest is %d", top, b.uid[f.ID])
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.Subject)
	}
	return out
}

func heldMessage(subject, msgID, received, text string, extra ...store.Header) store.NewMessage {
	hs := []store.Header{{Name: "From", Value: "Priya <priya@example.org>"}, {Name: "Subject", Value: subject}}
	if msgID != "" {
		hs = append(hs, store.Header{Name: "Message-ID", Value: "<" + msgID + ">"})
	}
	if received != "" {
		hs = append(hs, store.Header{Name: "Received", Value: received})
	}
	hs = append(hs, extra...)
	return store.NewMessage{MessageID: msgID, Subject: subject, From: store.Address{Name: "Priya", Email: "priya@example.org"},
		Date: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC), Headers: hs, Text: text}
}

// TestNewMailIsWhatTheAccountNeverHeld: a message is new mail once; moved back to INBOX under a
// new uid, with or without a Message-ID, it is not; another delivery of the same message (a
// mailing list's copy, a second Received) and a message that differs only in its text are.
func TestNewMailIsWhatTheAccountNeverHeld(t *testing.T) {
	b := newHeldBox(t)
	ctx := context.Background()
	direct := heldMessage("Harbour plans", "harbour@example.org", "from mx by imap with LMTP id 1; Mon, 1 Jun 2026 09:00:01 +0000", "Shall we meet?")
	bare := heldMessage("No id", "", "", "A message without Message-ID.")
	listCopy := heldMessage("Harbour plans", "harbour@example.org", "from lists by imap with LMTP id 2; Mon, 1 Jun 2026 09:00:05 +0000", "Shall we meet?",
		store.Header{Name: "List-Id", Value: "<harbour.lists.example.org>"})
	b.add(t, b.inbox, direct)
	b.add(t, b.inbox, bare)
	b.add(t, b.inbox, listCopy)
	if got, want := b.fresh(t, b.inbox, 0), []string{"Harbour plans", "No id", "Harbour plans"}; !slices.Equal(got, want) {
		t.Fatalf("first arrivals: new %q, want %q", got, want)
	}
	// The person moves the direct copy and the bare one to Archive, then back.
	if err := b.st.DeleteUIDs(ctx, b.inbox.ID, []uint32{1, 2}); err != nil {
		t.Fatal(err)
	}
	b.add(t, b.archive, direct)
	b.add(t, b.archive, bare)
	if got := b.fresh(t, b.archive, 0); len(got) != 0 {
		t.Errorf("moved to Archive, new: %q", got)
	}
	if err := b.st.DeleteUIDs(ctx, b.archive.ID, []uint32{1, 2}); err != nil {
		t.Fatal(err)
	}
	b.add(t, b.inbox, direct)
	b.add(t, b.inbox, bare)
	if got := b.fresh(t, b.inbox, 3); len(got) != 0 {
		t.Errorf("moved back to INBOX, new: %q", got)
	}
	// New: a second delivery of the same message, and the bare one with another text.
	again := direct
	again.Headers = append(slices.Clone(direct.Headers), store.Header{Name: "Received", Value: "from mx by imap with LMTP id 9; Tue, 2 Jun 2026 09:00:01 +0000"})
	other := bare
	other.Text = "Another message without Message-ID."
	b.add(t, b.inbox, again)
	b.add(t, b.inbox, other)
	if got, want := b.fresh(t, b.inbox, 5), []string{"Harbour plans", "No id"}; !slices.Equal(got, want) {
		t.Errorf("another delivery and another text: new %q, want %q", got, want)
	}
	// A header a mail program adds on its own does not make it new.
	tagged := direct
	tagged.Headers = append(slices.Clone(direct.Headers), store.Header{Name: "X-Mozilla-Status", Value: "0001"})
	b.add(t, b.inbox, tagged)
	if got := b.fresh(t, b.inbox, 7); len(got) != 0 {
		t.Errorf("with X-Mozilla-Status added, new: %q", got)
	}
}

// TestHeldAfterUpgrade: a store written before keys existed gives its messages their keys when
// opened, so a message it held that comes back is not new.
func TestHeldAfterUpgrade(t *testing.T) {
	b := newHeldBox(t)
	ctx := context.Background()
	m := heldMessage("Invoice 42", "invoice-42@example.org", "from mx by imap; Mon, 1 Jun 2026 09:00:01 +0000", "Please pay.")
	m.Attachments = []store.Attachment{{Name: "invoice.pdf", ContentType: "application/pdf", Size: 1234}}
	b.add(t, b.inbox, m)
	b.st.Close()
	// Back to what schema 15 had.
	db, err := sql.Open("sqlite", "file:"+b.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE held`, `ALTER TABLE messages DROP COLUMN held_before`, `ALTER TABLE messages DROP COLUMN held_key`, `UPDATE meta SET value = '15' WHERE key = 'schema'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	st, err := store.Open(b.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b.st = st
	if err := st.DeleteUIDs(ctx, b.inbox.ID, []uint32{1}); err != nil {
		t.Fatal(err)
	}
	b.add(t, b.inbox, m)
	if got := b.fresh(t, b.inbox, 1); len(got) != 0 {
		t.Errorf("a message held before the upgrade, back in INBOX, is new: %q", got)
	}
}

// TestHeldStaysBounded: the key of a message the account no longer holds is kept a year, then
// forgotten; the key of one it still holds never is.
func TestHeldStaysBounded(t *testing.T) {
	b := newHeldBox(t)
	ctx := context.Background()
	kept := heldMessage("Kept", "kept@example.org", "", "Still in Archive.")
	gone := heldMessage("Gone", "gone@example.org", "", "Deleted.")
	b.add(t, b.archive, kept)
	b.add(t, b.inbox, gone)
	if err := b.st.DeleteUIDs(ctx, b.inbox.ID, []uint32{1}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, at := range []time.Time{now, now.Add(2 * 24 * time.Hour), now.Add(200 * 24 * time.Hour)} {
		if err := b.st.PruneHeld(ctx, "work", at); err != nil {
			t.Fatal(err)
		}
	}
	b.add(t, b.inbox, gone)
	b.add(t, b.inbox, kept)
	if got := b.fresh(t, b.inbox, 1); len(got) != 0 {
		t.Errorf("within the year, new: %q", got)
	}
	if err := b.st.DeleteUIDs(ctx, b.inbox.ID, []uint32{2, 3}); err != nil {
		t.Fatal(err)
	}
	for _, days := range []int{210, 700} {
		if err := b.st.PruneHeld(ctx, "work", now.Add(time.Duration(days)*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	b.add(t, b.inbox, gone)
	b.add(t, b.inbox, kept)
	if got, want := b.fresh(t, b.inbox, 3), []string{"Gone"}; !slices.Equal(got, want) {
		t.Errorf("after more than a year: new %q, want %q", got, want)
	}
}

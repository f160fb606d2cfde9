package actionlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/postern-mcp/postern/internal/store/schema"
)

// openLog makes a database with the store's tables, as a new store has them (schema's
// statements, and this package's own step, AddRows), in one transaction.
func openLog(t *testing.T) (*Log, *sql.DB) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "store.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range schema.Tables {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v < schema.Version; v++ {
		for _, q := range schema.Upgrades[v] {
			if _, err := tx.Exec(q); err != nil {
				t.Fatalf("schema %d: %v", v, err)
			}
		}
		if v == 17 {
			if err := AddRows(ctx, tx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return New(db, explained), db
}

func explained(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("explained: %w", err)
}

var t0 = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

// TestActionReadBack: an action is read back as it was recorded, its items and their flags
// in order, and its answer's rows a page at a time, each row once, with whether more follow.
func TestActionReadBack(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t)
	a := &Action{At: t0, Tool: "mail_archive", What: "archive", Client: "agent", Accounts: []string{"work", "home"}, Count: 2,
		Items: []ActionItem{
			{Message: 11, Account: "work", MessageID: "<1@x>", Subject: "Invoice", FromFolder: "INBOX", FromUIDValidity: 5, FromUID: 40,
				ToFolder: "Archive", ToUIDValidity: 6, ToUID: 3, FlagsBefore: []string{`\Seen`, "$Work"}, FlagsAfter: []string{`\Seen`}},
			{Message: 12, Account: "home", Subject: "Trip", FromFolder: "INBOX", ToFolder: "Archive", Backup: 4,
				FlagsBefore: []string{}, FlagsAfter: []string{`\Deleted`}},
		}}
	for i := range 5 {
		a.Rows = append(a.Rows, LoggedRow{Item: fmt.Sprintf("m%d", i), Message: int64(i), Outcome: "archived",
			From: "INBOX", To: "Archive", Subject: fmt.Sprintf("subject %d", i), Sender: "a@example.org"})
	}
	if err := l.RecordAction(ctx, a); err != nil {
		t.Fatal(err)
	}
	if a.ID == 0 {
		t.Fatal("RecordAction set no id")
	}
	got, err := l.LoggedAction(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.At.Equal(t0) || got.Tool != a.Tool || got.What != a.What || got.Client != a.Client || got.Count != 2 ||
		!reflect.DeepEqual(got.Accounts, a.Accounts) || got.UndoneBy != 0 || got.Preview {
		t.Errorf("read back %+v, recorded %+v", got, a)
	}
	if !reflect.DeepEqual(got.Items, a.Items) {
		t.Errorf("items read back:\n%+v\nrecorded:\n%+v", got.Items, a.Items)
	}
	if len(got.DAV) != 0 {
		t.Errorf("an action on mail has events: %+v", got.DAV)
	}
	if n, err := l.CountActionRows(ctx, a.ID); err != nil || n != 5 {
		t.Errorf("CountActionRows = %d, %v, want 5", n, err)
	}

	var paged []LoggedRow
	for from := 0; ; from += 2 {
		page, more, err := l.ActionRows(ctx, a.ID, from, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("a page of 2 holds %d rows", len(page))
		}
		paged = append(paged, page...)
		if wantMore := from+2 < 5; more != wantMore {
			t.Fatalf("rows from %d: more = %v, want %v", from, more, wantMore)
		}
		if !more {
			break
		}
	}
	if !reflect.DeepEqual(paged, a.Rows) {
		t.Errorf("rows paged:\n%+v\nrecorded:\n%+v", paged, a.Rows)
	}
	if page, more, err := l.ActionRows(ctx, a.ID, 3, 2); err != nil || len(page) != 2 || page[1].Item != "m4" || more {
		t.Errorf("the last two rows: %+v, more %v, %v; want m3 m4 and no more", page, more, err)
	}
	if page, more, err := l.ActionRows(ctx, a.ID, 5, 2); err != nil || len(page) != 0 || more {
		t.Errorf("past the last row: %+v, %v, %v", page, more, err)
	}

	if _, err := l.LoggedAction(ctx, a.ID+100); !errors.Is(err, ErrNoAction) {
		t.Errorf("an action never logged: %v, want ErrNoAction", err)
	}
}

// TestUndoAndListing: an undo marks the action it undid (a dry run of it does not); the log
// lists actions newest first, a page at a time, without previews.
func TestUndoAndListing(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t)
	record := func(a *Action) int64 {
		t.Helper()
		if err := l.RecordAction(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	first := record(&Action{At: t0, Tool: "mail_move", What: "move", Accounts: []string{"work"}})
	dry := record(&Action{At: t0.Add(time.Minute), Tool: "mail_undo", What: "undo a1", Undoes: first, Preview: true})
	if a, _ := l.LoggedAction(ctx, first); a.UndoneBy != 0 {
		t.Fatalf("a dry run of an undo marked the action undone by %d", a.UndoneBy)
	}
	undo := record(&Action{At: t0.Add(2 * time.Minute), Tool: "mail_undo", What: "undo a1", Undoes: first})
	if a, _ := l.LoggedAction(ctx, first); a.UndoneBy != undo {
		t.Fatalf("the undone action says undone by %d, want %d", a.UndoneBy, undo)
	}
	if a, _ := l.LoggedAction(ctx, undo); a.Undoes != first {
		t.Fatalf("the undo says it undid %d, want %d", a.Undoes, first)
	}
	third := record(&Action{At: t0.Add(3 * time.Minute), Tool: "mail_flag", What: "mark read"})

	ids := func(as []*Action, err error) []int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, a := range as {
			if a.Preview {
				t.Errorf("a preview is listed: %+v", a)
			}
			out = append(out, a.ID)
		}
		return out
	}
	if got, want := ids(l.Actions(ctx, 0, 10)), []int64{third, undo, first}; !reflect.DeepEqual(got, want) {
		t.Errorf("the log lists %v, want %v (newest first, no preview %d)", got, want, dry)
	}
	if got, want := ids(l.Actions(ctx, 0, 2)), []int64{third, undo}; !reflect.DeepEqual(got, want) {
		t.Errorf("the first page of 2 lists %v, want %v", got, want)
	}
	if got, want := ids(l.Actions(ctx, undo, 2)), []int64{first}; !reflect.DeepEqual(got, want) {
		t.Errorf("the page before %d lists %v, want %v", undo, got, want)
	}
}

// TestPreviewsKeptFew: a preview's rows can be paged while it is among the last few and less
// than a day old; older ones are dropped when a new preview is kept, never an action.
func TestPreviewsKeptFew(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t)
	action := &Action{At: t0, Tool: "mail_move", What: "move", Rows: []LoggedRow{{Item: "m1", Outcome: "moved"}}}
	if err := l.RecordAction(ctx, action); err != nil {
		t.Fatal(err)
	}
	var previews []*Action
	for i := range previewsKept + 5 {
		p := &Action{At: t0.Add(time.Duration(i) * time.Second), Tool: "mail_move", What: "move", Preview: true,
			Rows: []LoggedRow{{Item: "m1", Outcome: "would move"}}}
		if err := l.RecordAction(ctx, p); err != nil {
			t.Fatal(err)
		}
		previews = append(previews, p)
	}
	// kept: the action recorded as a is still in the log (an id freed may be given again).
	kept := func(a *Action) bool {
		got, err := l.LoggedAction(ctx, a.ID)
		if err != nil && !errors.Is(err, ErrNoAction) {
			t.Fatal(err)
		}
		return err == nil && got.At.Equal(a.At) && got.Preview == a.Preview
	}
	for i, p := range previews {
		if want := i >= 5; kept(p) != want {
			t.Errorf("preview %d of %d kept: %v, want %v", i+1, len(previews), !want, want)
		}
	}
	if rows, _, _ := l.ActionRows(ctx, previews[0].ID, 0, 10); len(rows) != 0 {
		t.Errorf("a dropped preview still has rows: %+v", rows)
	}
	// A day later, a new preview drops every earlier one.
	late := &Action{At: t0.Add(previewAge + time.Hour), Tool: "mail_move", What: "move", Preview: true}
	if err := l.RecordAction(ctx, late); err != nil {
		t.Fatal(err)
	}
	for i, p := range previews {
		if kept(p) {
			t.Fatalf("preview %d of %d kept after a day", i+1, len(previews))
		}
	}
	if !kept(late) || !kept(action) {
		t.Fatal("the new preview or the action was dropped")
	}
	if rows, _, _ := l.ActionRows(ctx, action.ID, 0, 10); len(rows) != 1 {
		t.Errorf("the action's rows: %+v", rows)
	}
}

// TestDAVItems: what an action did to events and tasks is read back in order; the kept texts
// are found by age and account, and one forgotten is no longer counted.
func TestDAVItems(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t)
	old := &Action{At: t0, Tool: "calendar_update", What: "update", DAV: []DAVItem{
		{Account: "dav", Kind: "event", Collection: "/cal/", CollectionName: "Home", Href: "/cal/a.ics", UID: "a", Summary: "Dentist",
			Object: 7, HadBefore: true, BeforeFile: "/b/1.ics", BeforeSize: 120, BeforeETag: `"1"`, AfterETag: `"2"`},
		{Account: "dav", Kind: "todo", Collection: "/tasks/", Href: "/tasks/new.ics", UID: "n", AfterETag: `"9"`},
		{Account: "other", Kind: "event", Collection: "/c2/", Href: "/c2/b.ics", HadBefore: true, BeforeFile: "/b/2.ics", BeforeSize: 5},
	}}
	recent := &Action{At: t0.Add(48 * time.Hour), Tool: "calendar_delete", What: "delete", DAV: []DAVItem{
		{Account: "dav", Kind: "event", Collection: "/cal/", Href: "/cal/c.ics", HadBefore: true, BeforeFile: "/b/3.ics", BeforeSize: 9},
	}}
	for _, a := range []*Action{old, recent} {
		if err := l.RecordAction(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.DAVItemsOf(ctx, old.ID)
	if err != nil || !reflect.DeepEqual(got, old.DAV) {
		t.Errorf("events read back (%v):\n%+v\nrecorded:\n%+v", err, got, old.DAV)
	}
	if a, _ := l.LoggedAction(ctx, old.ID); !reflect.DeepEqual(a.DAV, old.DAV) || len(a.Items) != 0 {
		t.Errorf("LoggedAction's events: %+v, items %+v", a.DAV, a.Items)
	}

	files := func(bs []DAVBackup, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range bs {
			out = append(out, b.File)
		}
		return out
	}
	cut := t0.Add(24 * time.Hour)
	if got, want := files(l.DAVBackupsBefore(ctx, nil, cut)), []string{"/b/1.ics", "/b/2.ics"}; !reflect.DeepEqual(got, want) {
		t.Errorf("kept texts before the cut: %v, want %v", got, want)
	}
	if got := files(l.DAVBackupsBefore(ctx, nil, t0)); len(got) != 0 {
		t.Errorf("kept texts before the first action's own time: %v, want none", got)
	}
	bs, _ := l.DAVBackupsBefore(ctx, []string{"dav"}, cut)
	if len(bs) != 1 || bs[0].File != "/b/1.ics" || bs[0].Account != "dav" || bs[0].Size != 120 || !bs[0].Saved.Equal(t0) {
		t.Fatalf("dav's kept texts before the cut: %+v", bs)
	}
	if n, err := l.CountDAVBackups(ctx, []string{"dav"}); err != nil || n != 2 {
		t.Errorf("CountDAVBackups(dav) = %d, %v, want 2", n, err)
	}
	if err := l.ForgetDAVBackup(ctx, bs[0].Row); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.CountDAVBackups(ctx, nil); n != 2 {
		t.Errorf("after one is forgotten, %d kept texts, want 2", n)
	}
	if d, _ := l.DAVItemsOf(ctx, old.ID); d[0].BeforeFile != "" || !d[0].HadBefore || d[0].BeforeETag != `"1"` {
		t.Errorf("the forgotten text's item: %+v", d[0])
	}
}

// TestBackups: a backup is read back by id within its accounts only, listed newest first a page
// at a time for the accounts asked, and a purge finds exactly those saved before its cut.
func TestBackups(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t)
	var ids []int64
	for i, acct := range []string{"work", "home", "home", "work", "home", "work"} {
		b := &Backup{Account: acct, Folder: "INBOX", MessageID: fmt.Sprintf("<%d@x>", i), Subject: fmt.Sprintf("s%d", i),
			From: "a@example.org", Date: t0.Add(-time.Hour), Saved: t0.Add(time.Duration(i) * 24 * time.Hour), Size: int64(100 + i),
			File: fmt.Sprintf("/backups/%d.eml", i), Flags: []string{`\Seen`, `\Flagged`}}
		if err := l.AddBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, b.ID)
	}
	b, err := l.BackupByID(ctx, ids[1], []string{"home"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Subject != "s1" || b.MessageID != "<1@x>" || b.Size != 101 || b.File != "/backups/1.eml" || !b.Date.Equal(t0.Add(-time.Hour)) ||
		!b.Saved.Equal(t0.Add(24*time.Hour)) || !reflect.DeepEqual(b.Flags, []string{`\Seen`, `\Flagged`}) {
		t.Errorf("backup read back: %+v", b)
	}
	if _, err := l.BackupByID(ctx, ids[1], []string{"work"}); !errors.Is(err, ErrNoBackup) {
		t.Errorf("another account's backup: %v, want ErrNoBackup", err)
	}
	if _, err := l.BackupByID(ctx, ids[5]+1, nil); !errors.Is(err, ErrNoBackup) {
		t.Errorf("a backup never kept: %v, want ErrNoBackup", err)
	}
	if _, err := l.BackupByID(ctx, ids[1], nil); err != nil {
		t.Errorf("any account: %v", err)
	}

	subjects := func(bs []*Backup, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range bs {
			out = append(out, b.Subject)
		}
		return strings.Join(out, " ")
	}
	if got := subjects(l.Backups(ctx, []string{"home"}, 0, 2)); got != "s4 s2" {
		t.Errorf("home's newest 2: %q, want s4 s2", got)
	}
	if got := subjects(l.Backups(ctx, []string{"home"}, ids[2], 2)); got != "s1" {
		t.Errorf("home's before s2: %q, want s1", got)
	}
	if got := subjects(l.Backups(ctx, nil, 0, 10)); got != "s5 s4 s3 s2 s1 s0" {
		t.Errorf("all: %q", got)
	}
	if got := subjects(l.Backups(ctx, []string{"nobody"}, 0, 3)); got != "" {
		t.Errorf("an account without backups: %q", got)
	}

	// The purge at a three-day retention, on the sixth day: s0, s1 and s2 are older.
	cut := t0.Add(5*24*time.Hour - 3*24*time.Hour + time.Minute)
	if got := subjects(l.BackupsBefore(ctx, nil, cut)); got != "s0 s1 s2" {
		t.Errorf("older than the retention: %q, want s0 s1 s2", got)
	}
	if got := subjects(l.BackupsBefore(ctx, []string{"work"}, cut)); got != "s0" {
		t.Errorf("work's older than the retention: %q, want s0", got)
	}
	if got := subjects(l.BackupsBefore(ctx, nil, t0.Add(2*24*time.Hour))); got != "s0 s1" {
		t.Errorf("saved before the second day: %q, want s0 s1 (not s2, saved at that instant)", got)
	}
	if err := l.DeleteBackup(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := subjects(l.BackupsBefore(ctx, nil, cut)); got != "s1 s2" {
		t.Errorf("after s0 is deleted: %q", got)
	}
	if _, err := l.BackupByID(ctx, ids[0], nil); !errors.Is(err, ErrNoBackup) {
		t.Errorf("a deleted backup: %v", err)
	}
}

// TestIDs: the ids agents see read back to the number they were made from, and nothing else
// reads as one.
func TestIDs(t *testing.T) {
	for _, n := range []int64{1, 42, 1 << 40} {
		if got, ok := DecodeActionID(EncodeActionID(n)); !ok || got != n {
			t.Errorf("action %d: %d, %v", n, got, ok)
		}
		if got, ok := DecodeBackupID(EncodeBackupID(n)); !ok || got != n {
			t.Errorf("backup %d: %d, %v", n, got, ok)
		}
	}
	for _, s := range []string{"", "a", "b", "a0", "a-1", "a+1", "a01", "a1x", "a 1", "A1", "b1", "a99999999999999999999"} {
		if n, ok := DecodeActionID(s); ok {
			t.Errorf("DecodeActionID(%q) = %d, want not an id", s, n)
		}
	}
	for _, s := range []string{"b0", "b007", "a1", "b1.5", "b-2"} {
		if n, ok := DecodeBackupID(s); ok {
			t.Errorf("DecodeBackupID(%q) = %d, want not an id", s, n)
		}
	}
}

// TestAddRowsOnOlderStore: the step that adds answer rows runs again on a store that has them
// (one set back to an older schema) without losing a row.
func TestAddRowsOnOlderStore(t *testing.T) {
	ctx := context.Background()
	l, db := openLog(t)
	a := &Action{At: t0, Tool: "mail_move", What: "move", Rows: []LoggedRow{{Item: "m1", Outcome: "moved"}}}
	if err := l.RecordAction(ctx, a); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := AddRows(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.CountActionRows(ctx, a.ID); n != 1 {
		t.Errorf("after AddRows again, %d rows, want 1", n)
	}
}

// TestLogErrorsExplained: an error of the database reaches the caller through the store's
// wording.
func TestLogErrorsExplained(t *testing.T) {
	ctx := context.Background()
	l, db := openLog(t)
	db.Close()
	errs := map[string]error{
		"record":  l.RecordAction(ctx, &Action{At: t0}),
		"forget":  l.ForgetDAVBackup(ctx, 1),
		"add":     l.AddBackup(ctx, &Backup{}),
		"delete":  l.DeleteBackup(ctx, 1),
		"logged":  func() error { _, err := l.LoggedAction(ctx, 1); return err }(),
		"list":    func() error { _, err := l.Actions(ctx, 0, 1); return err }(),
		"rows":    func() error { _, _, err := l.ActionRows(ctx, 1, 0, 1); return err }(),
		"count":   func() error { _, err := l.CountActionRows(ctx, 1); return err }(),
		"dav":     func() error { _, err := l.DAVItemsOf(ctx, 1); return err }(),
		"davold":  func() error { _, err := l.DAVBackupsBefore(ctx, nil, t0); return err }(),
		"backup":  func() error { _, err := l.BackupByID(ctx, 1, nil); return err }(),
		"backups": func() error { _, err := l.Backups(ctx, nil, 0, 1); return err }(),
		"purge":   func() error { _, err := l.BackupsBefore(ctx, nil, t0); return err }(),
	}
	for name, err := range errs {
		if err == nil || !strings.HasPrefix(err.Error(), "explained: ") {
			t.Errorf("%s on a closed database: %v, want an explained error", name, err)
		}
	}
}

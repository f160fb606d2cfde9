package syncwarn

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/postern-mcp/postern/internal/store/schema"
)

// openDB makes a database with the store's tables, as a new store has them (schema's
// statements; the store's Go steps fill columns these tests do not read), and two accounts.
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "store.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	qs := append([]string(nil), schema.Tables...)
	for v := 1; v < schema.Version; v++ {
		qs = append(qs, schema.Upgrades[v]...)
	}
	qs = append(qs, `INSERT INTO accounts(id, name, kind) VALUES(1, 'work', 'imap'), (2, 'dav', 'caldav')`)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range qs {
		if _, err := tx.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

func explained(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("explained: %w", err)
}

// list is the account's warnings as "place|item|text".
func list(t *testing.T, w *Warnings, account int64) []string {
	t.Helper()
	ws, err := w.SyncWarnings(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range ws {
		out = append(out, x.Place+"|"+x.Item+"|"+x.Text)
	}
	return out
}

func want(t *testing.T, got []string, w ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, w) && !(len(got) == 0 && len(w) == 0) {
		t.Fatalf("warnings:\n got %q\nwant %q", got, w)
	}
}

// TestWarningsKeptUntilClean: a warning is kept, replaced by the item's next one, dropped once
// a sync of its place no longer warns about it, and dropped with its place; another account's
// and another place's warnings are untouched.
func TestWarningsKeptUntilClean(t *testing.T) {
	ctx := context.Background()
	w := New(openDB(t), explained)
	before := time.Now().Add(-time.Second)
	for _, x := range []struct {
		acct              int64
		place, item, text string
	}{
		{1, "INBOX", "7", "a part was too large"},
		{1, "INBOX", "9", "no date"},
		{1, "Sent", "3", "no sender"},
		{2, "/cal/", "a.ics", "a bad time zone"},
		{1, "INBOX", "7", "a part was too large and was left out"}, // the item's newer warning
	} {
		if err := w.AddSyncWarning(ctx, x.acct, x.place, x.item, x.text); err != nil {
			t.Fatal(err)
		}
	}
	want(t, list(t, w, 1), "INBOX|7|a part was too large and was left out", "INBOX|9|no date", "Sent|3|no sender")
	ws, _ := w.SyncWarnings(ctx, 1)
	if ws[0].At.Before(before.Truncate(time.Second)) || ws[0].At.After(time.Now()) {
		t.Errorf("a warning's time is %v, want about now", ws[0].At)
	}

	// A sync of INBOX warned again about 9 only: 7 synced cleanly.
	if err := w.KeepSyncWarnings(ctx, 1, "INBOX", []string{"9"}); err != nil {
		t.Fatal(err)
	}
	want(t, list(t, w, 1), "INBOX|9|no date", "Sent|3|no sender")
	// A sync of Sent warned about nothing.
	if err := w.KeepSyncWarnings(ctx, 1, "Sent", nil); err != nil {
		t.Fatal(err)
	}
	want(t, list(t, w, 1), "INBOX|9|no date")
	want(t, list(t, w, 2), "/cal/|a.ics|a bad time zone")

	// INBOX is gone from the server: its warnings go with it.
	if err := w.AddSyncWarning(ctx, 1, "Archive", "1", "no body"); err != nil {
		t.Fatal(err)
	}
	if err := w.KeepSyncPlaces(ctx, 1, []string{"Archive", "Sent"}); err != nil {
		t.Fatal(err)
	}
	want(t, list(t, w, 1), "Archive|1|no body")
	if err := w.KeepSyncPlaces(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	want(t, list(t, w, 2))
	want(t, list(t, w, 1), "Archive|1|no body")
}

// TestAccountWarnings: status reads every account's warnings by name, and one account's by
// name; an account the store does not know has none, without an error.
func TestAccountWarnings(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	w := New(db, explained)
	for _, x := range []struct {
		acct        int64
		place, item string
	}{{2, "/b/", "x"}, {1, "Sent", "1"}, {1, "INBOX", "2"}, {1, "INBOX", "1"}} {
		if err := w.AddSyncWarning(ctx, x.acct, x.place, x.item, x.place+" "+x.item); err != nil {
			t.Fatal(err)
		}
	}
	all, err := w.AccountWarnings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := map[string][]string{"work": {"INBOX 1", "INBOX 2", "Sent 1"}, "dav": {"/b/ x"}}; !reflect.DeepEqual(all, w) {
		t.Errorf("AccountWarnings = %q, want %q", all, w)
	}
	got, err := w.AccountSyncWarnings(ctx, "dav")
	if err != nil || len(got) != 1 || got[0].Item != "x" {
		t.Errorf("AccountSyncWarnings(dav) = %+v, %v", got, err)
	}
	if got, err := w.AccountSyncWarnings(ctx, "nobody"); err != nil || got != nil {
		t.Errorf("an unknown account: %+v, %v, want none and no error", got, err)
	}

	// An account removed takes its warnings with it.
	if _, err := db.Exec(`DELETE FROM accounts WHERE name = 'work'`); err != nil {
		t.Fatal(err)
	}
	if all, _ := w.AccountWarnings(ctx); len(all) != 1 || all["work"] != nil {
		t.Errorf("after the account went: %q", all)
	}
}

// TestWarningsErrorsExplained: an error of the database reaches the caller through the
// store's wording.
func TestWarningsErrorsExplained(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	w := New(db, explained)
	db.Close()
	for name, err := range map[string]error{
		"add":   w.AddSyncWarning(ctx, 1, "p", "i", "t"),
		"keep":  w.KeepSyncWarnings(ctx, 1, "p", []string{"i"}),
		"list":  func() error { _, err := w.SyncWarnings(ctx, 1); return err }(),
		"all":   func() error { _, err := w.AccountWarnings(ctx); return err }(),
		"named": func() error { _, err := w.AccountSyncWarnings(ctx, "work"); return err }(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "explained: ") {
			t.Errorf("%s on a closed database: %v, want an explained error", name, err)
		}
	}
}

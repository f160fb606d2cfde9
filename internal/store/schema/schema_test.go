package schema_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store/actionlog"
	"github.com/postern-mcp/postern/internal/store/davstore"
	"github.com/postern-mcp/postern/internal/store/notestore"
	"github.com/postern-mcp/postern/internal/store/schema"
)

// steps are the Go steps of the sub-packages, run after their version's statements as the
// store runs them; the store's own steps (columns of messages and accounts, the held table)
// are tested with the store.
var steps = map[int]func(context.Context, *sql.Tx) error{
	14: davstore.RefillContactSearch,
	17: actionlog.AddRows,
}

func open(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "store.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// run runs, in one transaction, the statements that make a new store when from is 0, then
// those that bring it from schema from (or 1) to schema to.
func run(t *testing.T, db *sql.DB, from, to int) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if from == 0 {
		for _, q := range schema.Tables {
			if _, err := tx.Exec(q); err != nil {
				t.Fatalf("a new store: %v\n%s", err, q)
			}
		}
		from = 1
	}
	for v := from; v < to; v++ {
		for _, q := range schema.Upgrades[v] {
			if _, err := tx.Exec(q); err != nil {
				t.Fatalf("from schema %d: %v\n%s", v, err, q)
			}
		}
		if step := steps[v]; step != nil {
			if err := step(ctx, tx); err != nil {
				t.Fatalf("from schema %d: %v", v, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// layout is every table, virtual table, index and column of db, FTS5's own tables left out,
// one line each.
func layout(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND coalesce(sql, '') NOT LIKE 'CREATE TABLE ''%'`)
	if err != nil {
		t.Fatal(err)
	}
	var out, tables []string
	for rows.Next() {
		var typ, name, table string
		if err := rows.Scan(&typ, &name, &table); err != nil {
			t.Fatal(err)
		}
		out = append(out, typ+" "+name+" on "+table)
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, table := range tables {
		cols, err := db.Query(`SELECT name, type, "notnull", coalesce(dflt_value, ''), pk FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for cols.Next() {
			var name, typ, dflt string
			var notNull, pk int
			if err := cols.Scan(&name, &typ, &notNull, &dflt, &pk); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("column %s.%s %s notnull=%d default=%s pk=%d", table, name, typ, notNull, dflt, pk))
		}
		cols.Close()
	}
	slices.Sort(out)
	return out
}

func tables(l []string) []string {
	var out []string
	for _, line := range l {
		if name, ok := strings.CutPrefix(line, "table "); ok {
			out = append(out, strings.Fields(name)[0])
		}
	}
	return out
}

// TestEveryUpgradeRuns: each version's statements are under Version, so a store is brought
// through them; a version at or above it would never run.
func TestEveryUpgradeRuns(t *testing.T) {
	for v := range schema.Upgrades {
		if v < 1 || v >= schema.Version {
			t.Errorf("schema.Upgrades[%d] never runs: the store upgrades from 1 to %d", v, schema.Version)
		}
	}
	for v := range steps {
		if v < 1 || v >= schema.Version {
			t.Errorf("the step of schema %d never runs", v)
		}
	}
}

// TestNewStoreTables: a new store made from the statements has every table the store and its
// sub-packages read.
func TestNewStoreTables(t *testing.T) {
	db := open(t)
	run(t, db, 0, schema.Version)
	got := tables(layout(t, db))
	want := []string{"accounts", "action_items", "action_rows", "actions", "backups", "bodies", "body_fts", "body_terms",
		"collections", "dav_action_items", "dav_objects", "folders", "maildir_keys", "messages", "meta", "meta_fts", "meta_terms",
		"notes", "notes_fts", "refs", "rules_progress", "sync_warnings"}
	slices.Sort(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("a new store's tables:\n got %v\nwant %v", got, want)
	}
	// The mail indexes merge in larger steps (schema 2, made again at 3).
	for _, index := range []string{"meta_fts", "body_fts"} {
		var v int
		if err := db.QueryRow(`SELECT v FROM ` + index + `_config WHERE k = 'automerge'`).Scan(&v); err != nil || v != 16 {
			t.Errorf("%s automerge = %d (%v), want 16", index, v, err)
		}
	}
}

// TestUpgradeFromEachVersion: a store left at any older schema, with mail in it, is brought to
// the layout of a new store without losing a message; one older than schema 5 has each
// thread numbered by its oldest message, and its notes can be saved and found.
func TestUpgradeFromEachVersion(t *testing.T) {
	ctx := context.Background()
	fresh := open(t)
	run(t, fresh, 0, schema.Version)
	want := layout(t, fresh)
	for v := 1; v < schema.Version; v++ {
		t.Run(fmt.Sprintf("from %d", v), func(t *testing.T) {
			db := open(t)
			run(t, db, 0, v)
			// A thread of three messages, numbered (as a store before schema 5 did) by its
			// newest.
			for _, q := range []string{
				`INSERT INTO accounts(id, name, kind) VALUES(1, 'work', 'imap')`,
				`INSERT INTO folders(id, account_id, name) VALUES(1, 1, 'INBOX')`,
				`INSERT INTO messages(id, account_id, folder_id, uid, date, subject, thread_id) VALUES
					(10, 1, 1, 1, 1, 'first', 30), (20, 1, 1, 2, 2, 'second', 30), (30, 1, 1, 3, 3, 'third', 30)`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			run(t, db, v, schema.Version)
			if got := layout(t, db); !reflect.DeepEqual(got, want) {
				for _, l := range got {
					if !slices.Contains(want, l) {
						t.Errorf("not in a new store: %s", l)
					}
				}
				for _, l := range want {
					if !slices.Contains(got, l) {
						t.Errorf("missing: %s", l)
					}
				}
			}
			rows, err := db.Query(`SELECT subject, thread_id FROM messages ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var s string
				var th int64
				rows.Scan(&s, &th)
				got = append(got, fmt.Sprintf("%s:%d", s, th))
			}
			rows.Close()
			thread := 30
			if v <= 5 {
				thread = 10
			}
			if w := fmt.Sprintf("first:%d second:%d third:%d", thread, thread, thread); strings.Join(got, " ") != w {
				t.Errorf("messages after the upgrade: %v, want %s", got, w)
			}

			notes := notestore.New(db, func(err error) error { return err })
			if err := notes.SaveNotes(ctx, "/n", []*notestore.Note{{Path: "a.md", Title: "Plan", Text: "van"}}, nil); err != nil {
				t.Fatal(err)
			}
			found, _, err := notes.FindNotes(ctx, &notestore.NoteFilter{Scopes: []notestore.NoteScope{{Root: "/n"}}, Text: true,
				Terms: []search.Term{{Text: "van"}}}, nil)
			if err != nil || len(found) != 1 {
				t.Errorf("a note saved after the upgrade: %d found, %v", len(found), err)
			}
		})
	}
}

package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestNotesUpgrade: a store of schema 11 gets the notes tables when it is opened.
func TestNotesUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE notes`, `DROP TABLE notes_fts`, `UPDATE meta SET value = '11' WHERE key = 'schema'`} {
		if _, err := st.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SaveNotes(context.Background(), "/n", []*Note{{Path: "a.md", Title: "A", Text: "alpha"}}, nil); err != nil {
		t.Fatalf("after the upgrade: %v", err)
	}
}

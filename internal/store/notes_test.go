package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/postern-mcp/postern/internal/search"
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

// TestFindNotes: words, excluded words alone, a prefix, titles only, a scope inside a folder,
// and pages that leave out what skip says, each note once.
func TestFindNotes(t *testing.T) {
	ctx := context.Background()
	st, err := Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var put []*Note
	for i, n := range []struct{ path, title, text string }{
		{"a.md", "Alpha plan", "boxes van"},
		{"sub/b.md", "Beta", "van garden"},
		{"sub/deep/c.md", "Gamma", "garden greenhouse"},
		{"d.md", "Delta kept", "van"},
	} {
		put = append(put, &Note{Path: n.path, Title: n.title, Text: n.text, MTime: int64(100 + i)})
	}
	if err := st.SaveNotes(ctx, "/n", put, nil); err != nil {
		t.Fatal(err)
	}
	all := []NoteScope{{Root: "/n"}}
	find := func(f NoteFilter, skip func(*Note) bool) []string {
		t.Helper()
		ns, _, err := st.FindNotes(ctx, &f, skip)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range ns {
			out = append(out, n.Path)
		}
		return out
	}
	eq := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("got %v, want %v", got, want)
			}
		}
	}
	term := func(s string) search.Term { return search.Term{Text: s} }
	eq(find(NoteFilter{Scopes: all, Text: true, Terms: []search.Term{term("van")}}, nil), "d.md", "sub/b.md", "a.md")
	eq(find(NoteFilter{Scopes: all, Text: true, Terms: []search.Term{{Text: "van", Negated: true}}}, nil), "sub/deep/c.md")
	eq(find(NoteFilter{Scopes: all, Text: true, Terms: []search.Term{{Text: "gree", Prefix: true}}}, nil), "sub/deep/c.md")
	eq(find(NoteFilter{Scopes: all, Terms: []search.Term{term("van")}}, nil))
	eq(find(NoteFilter{Scopes: all, Terms: []search.Term{term("plan")}}, nil), "a.md")
	eq(find(NoteFilter{Scopes: []NoteScope{{Root: "/n", Dir: "sub"}}}, nil), "sub/deep/c.md", "sub/b.md")
	eq(find(NoteFilter{Scopes: []NoteScope{{Root: "/n", Dir: "su"}}}, nil))
	skip := func(n *Note) bool { return n.Path == "d.md" }
	var paged []string
	f := NoteFilter{Scopes: all, Limit: 1}
	for {
		ns, more, err := st.FindNotes(ctx, &f, skip)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			paged = append(paged, n.Path)
			f.AfterMTime, f.AfterID = n.MTime, n.ID
		}
		if !more {
			break
		}
	}
	eq(paged, "sub/deep/c.md", "sub/b.md", "a.md")
}

package notestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/postern-mcp/postern/internal/search"
)

// openNotes makes a database of the notes tables alone, as the store makes them.
func openNotes(t *testing.T) *Notes {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "notes.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range Schema {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return New(db, func(err error) error { return err })
}

// TestFindNotes: words, excluded words alone, a prefix, titles only, a scope inside a folder,
// and pages that leave out what skip says, each note once.
func TestFindNotes(t *testing.T) {
	ctx := context.Background()
	st := openNotes(t)
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

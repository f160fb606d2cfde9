package notestore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/search"
)

// paths are the notes' paths in order.
func paths(ns []*Note, err error) string {
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, n := range ns {
		out = append(out, n.Path)
	}
	return strings.Join(out, " ")
}

// findText is what a search of the notes' titles and text for words finds in scopes.
func findText(t *testing.T, st *Notes, scopes []NoteScope, words ...string) string {
	t.Helper()
	f := &NoteFilter{Scopes: scopes, Text: true}
	for _, w := range words {
		f.Terms = append(f.Terms, search.Term{Text: w})
	}
	ns, _, err := st.FindNotes(context.Background(), f, nil)
	return paths(ns, err)
}

// TestSaveNotes: a note saved is read back as saved; saved again it replaces the old one in
// the index too (its old words find nothing); a note gone is gone from the index; the stamps
// tell what the store holds of each file.
func TestSaveNotes(t *testing.T) {
	ctx := context.Background()
	st := openNotes(t)
	root := []NoteScope{{Root: "/n"}}
	plan := &Note{Path: "plan.md", Title: "Moving plan", MTime: 100, Size: 30, Text: "boxes and a van"}
	secret := &Note{Path: "keys.md", Title: "Keys", MTime: 200, Size: 10, Withheld: "it gives a password"}
	long := &Note{Path: "sub/long.md", Title: "Long", MTime: 300, Size: 1 << 20, Text: "the start of it", Truncated: true}
	if err := st.SaveNotes(ctx, "/n", []*Note{plan, secret, long}, nil); err != nil {
		t.Fatal(err)
	}
	if plan.ID == 0 || plan.Root != "/n" {
		t.Errorf("SaveNotes set id %d, root %q", plan.ID, plan.Root)
	}
	for _, want := range []*Note{plan, secret, long} {
		got, err := st.Note(ctx, "/n", want.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back %+v, saved %+v", got, want)
		}
	}
	if _, err := st.Note(ctx, "/n", "none.md"); !errors.Is(err, ErrNoNote) {
		t.Errorf("a note never saved: %v, want ErrNoNote", err)
	}
	if _, err := st.Note(ctx, "/other", "plan.md"); !errors.Is(err, ErrNoNote) {
		t.Errorf("a note of another folder: %v, want ErrNoNote", err)
	}
	stamps, err := st.NoteStamps(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]NoteStamp{"plan.md": {100, 30}, "keys.md": {200, 10}, "sub/long.md": {300, 1 << 20}}; !reflect.DeepEqual(stamps, want) {
		t.Errorf("stamps %v, want %v", stamps, want)
	}
	if got := findText(t, st, root, "van"); got != "plan.md" {
		t.Errorf("van finds %q", got)
	}

	// The file changed: its new text replaces the old, in the index too.
	plan2 := &Note{Path: "plan.md", Title: "Moving plan", MTime: 400, Size: 31, Text: "boxes and a truck"}
	if err := st.SaveNotes(ctx, "/n", []*Note{plan2}, []string{"keys.md"}); err != nil {
		t.Fatal(err)
	}
	if got := findText(t, st, root, "van"); got != "" {
		t.Errorf("the old text's word still finds %q", got)
	}
	if got := findText(t, st, root, "truck"); got != "plan.md" {
		t.Errorf("the new text's word finds %q", got)
	}
	if got := findText(t, st, root, "keys"); got != "" {
		t.Errorf("a removed note's title still finds %q", got)
	}
	if _, err := st.Note(ctx, "/n", "keys.md"); !errors.Is(err, ErrNoNote) {
		t.Errorf("a removed note: %v", err)
	}
	if got := paths(st.NoteHeads(ctx, root)); got != "plan.md sub/long.md" {
		t.Errorf("the notes left, newest first: %q", got)
	}
	if err := st.SaveNotes(ctx, "/n", nil, nil); err != nil {
		t.Errorf("saving nothing: %v", err)
	}
}

// TestNoteHeads: the notes of the scopes asked only, newest first, without their text.
func TestNoteHeads(t *testing.T) {
	ctx := context.Background()
	st := openNotes(t)
	for _, r := range []struct {
		root  string
		paths []string
	}{
		{"/a", []string{"one.md", "work/two.md", "work/deep/three.md", "workshop.md"}},
		{"/b", []string{"four.md", "work/five.md"}},
	} {
		var put []*Note
		for i, p := range r.paths {
			put = append(put, &Note{Path: p, Title: p, Text: "text of " + p, MTime: int64(10*len(r.root) + i)})
		}
		if err := st.SaveNotes(ctx, r.root, put, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		scopes []NoteScope
		want   string
	}{
		{[]NoteScope{{Root: "/a"}}, "workshop.md work/deep/three.md work/two.md one.md"},
		{[]NoteScope{{Root: "/a", Dir: "work"}}, "work/deep/three.md work/two.md"},
		{[]NoteScope{{Root: "/a", Dir: "work/deep"}, {Root: "/b", Dir: "work"}}, "work/deep/three.md work/five.md"},
		{[]NoteScope{{Root: "/a", Dir: "wor"}}, ""},
		{[]NoteScope{{Root: "/c"}}, ""},
		{nil, ""},
	} {
		ns, err := st.NoteHeads(ctx, c.scopes)
		if got := paths(ns, err); got != c.want {
			t.Errorf("notes of %+v: %q, want %q", c.scopes, got, c.want)
		}
		for _, n := range ns {
			if n.Text != "" {
				t.Errorf("NoteHeads read the text of %s", n.Path)
			}
		}
	}
}

// TestKeepNoteRoots: the notes of a folder no longer configured go, from the index too; those
// of the folders kept stay.
func TestKeepNoteRoots(t *testing.T) {
	ctx := context.Background()
	st := openNotes(t)
	for i, root := range []string{"/a", "/b", "/c"} {
		n := &Note{Path: "n.md", Title: "garden " + root, Text: "tomatoes", MTime: int64(i)}
		if err := st.SaveNotes(ctx, root, []*Note{n}, nil); err != nil {
			t.Fatal(err)
		}
	}
	all := []NoteScope{{Root: "/a"}, {Root: "/b"}, {Root: "/c"}}
	if err := st.KeepNoteRoots(ctx, []string{"/b"}); err != nil {
		t.Fatal(err)
	}
	ns, err := st.NoteHeads(ctx, all)
	if err != nil || len(ns) != 1 || ns[0].Root != "/b" {
		t.Fatalf("after keeping /b only: %+v, %v", ns, err)
	}
	if got := findText(t, st, all, "tomatoes"); got != "n.md" {
		t.Errorf("tomatoes finds %q, want /b's note only", got)
	}
	// The index holds the one note left: FTS5 counts its rows.
	var rows int
	if err := st.db.QueryRow(`SELECT count(*) FROM notes_fts WHERE notes_fts MATCH 'tomatoes'`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("the index holds %d notes with the word (%v), want 1", rows, err)
	}
	if err := st.KeepNoteRoots(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := paths(st.NoteHeads(ctx, all)); got != "" {
		t.Errorf("after keeping none: %q", got)
	}
}

// TestFindNotesPunctuation: a term with no word in it restricts nothing, and a page's limit
// defaults to 20.
func TestFindNotesPunctuation(t *testing.T) {
	ctx := context.Background()
	st := openNotes(t)
	var put []*Note
	for i := range 25 {
		put = append(put, &Note{Path: fmt.Sprintf("%02d.md", i), Title: "note", MTime: int64(i)})
	}
	if err := st.SaveNotes(ctx, "/n", put, nil); err != nil {
		t.Fatal(err)
	}
	ns, more, err := st.FindNotes(ctx, &NoteFilter{Scopes: []NoteScope{{Root: "/n"}}, Terms: []search.Term{{Text: "--"}}}, nil)
	if err != nil || len(ns) != 20 || !more || ns[0].Path != "24.md" {
		t.Errorf("a term of punctuation: %d notes (first %v), more %v, %v; want the newest 20 and more", len(ns), ns[0].Path, more, err)
	}
}

// TestNotesErrorsExplained: an error of the database reaches the caller through the store's
// wording.
func TestNotesErrorsExplained(t *testing.T) {
	ctx := context.Background()
	st := openNotes(t)
	st.explain = func(err error) error { return fmt.Errorf("explained: %w", err) }
	st.db.Close()
	scopes := []NoteScope{{Root: "/n"}}
	for name, err := range map[string]error{
		"save":   st.SaveNotes(ctx, "/n", []*Note{{Path: "a.md"}}, nil),
		"keep":   st.KeepNoteRoots(ctx, nil),
		"stamps": func() error { _, err := st.NoteStamps(ctx, "/n"); return err }(),
		"note":   func() error { _, err := st.Note(ctx, "/n", "a.md"); return err }(),
		"heads":  func() error { _, err := st.NoteHeads(ctx, scopes); return err }(),
		"find":   func() error { _, _, err := st.FindNotes(ctx, &NoteFilter{Scopes: scopes}, nil); return err }(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "explained: ") {
			t.Errorf("%s on a closed database: %v, want an explained error", name, err)
		}
	}
}

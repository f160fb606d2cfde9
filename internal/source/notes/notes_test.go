package notes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/store"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func paths(t *testing.T, st *store.Store, root string) map[string]*store.Note {
	t.Helper()
	heads, err := st.NoteHeads(context.Background(), []store.NoteScope{{Root: root}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*store.Note{}
	for _, n := range heads {
		out[n.Path] = n
	}
	return out
}

// TestRefresh indexes a real folder: notes found (titles from headings or names), hidden,
// linked, special and other files left out (links and FIFOs said), a changed file read again,
// a removed one gone, a large one cut and marked, secrets masked before the index.
func TestRefresh(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(root, "plan.md"), "Intro line\n\n# Plan for the move #\n\nBoxes on Friday.\n")
	write(t, filepath.Join(root, "projects", "garden.markdown"), "```\n# not a title\n```\nTomatoes.\n")
	write(t, filepath.Join(root, "code.md"), "# Bank\n\nYour code is 482913. IBAN FR76 3000 6000 0112 3456 7890 189.\n")
	write(t, filepath.Join(root, ".hidden.md"), "# Hidden\n")
	write(t, filepath.Join(root, ".obsidian", "x.md"), "# Settings\n")
	write(t, filepath.Join(root, "image.png"), "png")
	write(t, filepath.Join(root, "readme.txt"), "text")
	write(t, filepath.Join(outside, "secret.md"), "# Outside\n\nfar away\n")
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "Card 4111 1111 1111 1111.md"), "# Card\n")
	write(t, filepath.Join(root, "big.md"), "# Big\n\n"+strings.Repeat("word ", MaxRead/5+100))

	st := openStore(t)
	fs := Folders([]string{root})
	res, err := Refresh(ctx, st, fs)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(t, st, root)
	want := []string{"plan.md", "projects/garden.markdown", "code.md", "big.md"}
	if len(got) != len(want) || res.Notes != len(want) || res.Added != len(want) {
		t.Fatalf("indexed %v (result %+v), want %v", got, res, want)
	}
	for _, w := range want {
		if got[w] == nil {
			t.Fatalf("%s not indexed: %v", w, got)
		}
	}
	if g := got["plan.md"].Title; g != "Plan for the move" {
		t.Errorf("title %q", g)
	}
	if g := got["projects/garden.markdown"].Title; g != "garden" {
		t.Errorf("a heading inside a fence made the title: %q", g)
	}
	problems := strings.Join(res.Problems, "\n")
	for _, p := range []string{"link.md was skipped: it is a symbolic link", "elsewhere was skipped: it is a symbolic link", "pipe.md was skipped: it is not a regular file", "reads as holding a secret"} {
		if !strings.Contains(problems, p) {
			t.Errorf("no problem says %q:\n%s", p, problems)
		}
	}
	if strings.Contains(problems, "hidden") || strings.Contains(problems, "obsidian") || strings.Contains(problems, "4111") {
		t.Errorf("problems name a hidden file or a secret:\n%s", problems)
	}
	code, err := st.Note(ctx, root, "code.md")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(code.Text, "482913") || strings.Contains(code.Text, "3456 7890") || !strings.Contains(code.Text, "Your code is") {
		t.Errorf("stored text not masked: %q", code.Text)
	}
	big, _ := st.Note(ctx, root, "big.md")
	if !big.Truncated || len(big.Text) > MaxRead {
		t.Errorf("big note: truncated %v, %d bytes", big.Truncated, len(big.Text))
	}

	// Nothing changed: nothing read, nothing written.
	res, err = Refresh(ctx, st, fs)
	if err != nil || res.Added+res.Updated+res.Removed != 0 || res.Notes != len(want) {
		t.Fatalf("second refresh: %+v %v", res, err)
	}
	// A changed file is read again, a removed one goes.
	write(t, filepath.Join(root, "plan.md"), "# Plan B\n\nnew text, longer than before\n")
	os.Chtimes(filepath.Join(root, "plan.md"), time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	os.Remove(filepath.Join(root, "projects", "garden.markdown"))
	res, err = Refresh(ctx, st, fs)
	if err != nil || res.Updated != 1 || res.Removed != 1 || res.Notes != len(want)-1 {
		t.Fatalf("refresh after changes: %+v %v", res, err)
	}
	if n, _ := st.Note(ctx, root, "plan.md"); n.Title != "Plan B" {
		t.Errorf("changed title %q", n.Title)
	}
	// A folder no longer configured loses its notes.
	if _, err := Refresh(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	if got := paths(t, st, root); len(got) != 0 {
		t.Errorf("notes of an unconfigured folder kept: %v", got)
	}
}

func TestTitle(t *testing.T) {
	cases := []struct{ rel, text, want string }{
		{"a/b.md", "# Hello\n", "Hello"},
		{"a/b.md", "no heading", "b"},
		{"x.md", "#NoSpace\n## Second\n", "x"},
		{"x.md", "    # indented code\n", "x"},
		{"x.md", "  # Three spaces\n", "Three spaces"},
		{"x.md", "# a\u0085b\x07c\n", "a b c"},
	}
	for _, c := range cases {
		if got := Title(c.rel, c.text); got != c.want {
			t.Errorf("Title(%q, %q) = %q, want %q", c.rel, c.text, got, c.want)
		}
	}
	n := Build("x.md", "# Pass\u202e\u200bword\nthe text\n")
	if strings.ContainsAny(n.Title, "\u202e\u200b") {
		t.Errorf("title not cleaned: %q", n.Title)
	}
}

func TestFoldersAndIDs(t *testing.T) {
	fs := Folders([]string{"/home/sam/Notes", "/home/sam/Work/Notes", "/home/sam/Work/notes", "/srv/a b"})
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "Notes,Notes-2,notes-3,a b" {
		t.Fatalf("names %v", names)
	}
	f, rel, ok := Split(fs, "Notes-2/projects/plan.md")
	if !ok || f.Root != "/home/sam/Work/Notes" || rel != "projects/plan.md" {
		t.Fatalf("Split: %v %q %v", f, rel, ok)
	}
	for _, bad := range []string{"Notes", "Notes/", "Nope/x.md", ""} {
		if _, _, ok := Split(fs, bad); ok {
			t.Errorf("Split(%q) found a note", bad)
		}
	}
	id := "a b/100% sure/é?#.md"
	uri := URI(id)
	if strings.ContainsAny(strings.TrimPrefix(uri, "postern:"), " ?#%") && !strings.Contains(uri, "%20") {
		t.Errorf("URI %q", uri)
	}
	if back, ok := IDFromURI(uri); !ok || back != id {
		t.Errorf("IDFromURI(%q) = %q %v", uri, back, ok)
	}
	if _, ok := IDFromURI("postern://message/m1"); ok {
		t.Error("a message URI read as a note")
	}
}

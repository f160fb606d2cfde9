package projects

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func editFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEditKeepsComments: opening, closing, tying and untying change one line (or one
// element's line) and keep every comment, the indentation and the order.
func TestEditKeepsComments(t *testing.T) {
	path := editFile(t, `# mine
[[project]]
id = "acme"   # the client
  open = false  # until signed
ties = [
  "mid:a@x",  # first
  "event:e1", # second
]

[[project]]
id = "home"
ties = ["note:a#b.md"]  # a comment # with a hash
`)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(SetOpen(path, "acme", true))
	must(AddTie(path, "ACME", "task:t1"))
	must(RemoveTie(path, "acme", "mid:a@x"))
	must(AddTie(path, "home", "contact:c1"))
	must(RemoveTie(path, "home", "note:a#b.md"))
	must(SetOpen(path, "home", true)) // no open line: one is added after the id
	want := `# mine
[[project]]
id = "acme"   # the client
  open = true  # until signed
ties = [
  "event:e1", # second
  "task:t1",
]

[[project]]
id = "home"
open = true
ties = ["contact:c1"]  # a comment # with a hash
`
	if got := fileText(t, path); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

// TestEditNoChangeWritesNothing: what is already as meant is not written again, and what
// is refused leaves the file as it was.
func TestEditNoChangeWritesNothing(t *testing.T) {
	text := "[[project]]\nid = \"acme\"\nopen = true\nties = [ \"mid:a@x\" ]   # spaced as I like\n"
	path := editFile(t, text)
	before, _ := os.Stat(path)
	if err := SetOpen(path, "acme", true); err != nil {
		t.Fatal(err)
	}
	if err := AddTie(path, "acme", "mid:a@x"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if fileText(t, path) != text || !os.SameFile(before, after) {
		t.Fatal("a change that changes nothing rewrote the file")
	}
	for name, err := range map[string]error{
		"untie what is not tied": RemoveTie(path, "acme", "event:nope"),
		"unknown id":             SetOpen(path, "acmee", false),
		"bad tie":                AddTie(path, "acme", "event:a\nb"),
		"unknown kind":           AddTie(path, "acme", "thread:1"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := SetOpen(path, "acmee", false); err == nil || !strings.Contains(err.Error(), "did you mean acme?") {
		t.Errorf("unknown id: %v", err)
	}
	if fileText(t, path) != text {
		t.Fatal("a refused change changed the file")
	}
	bad := editFile(t, "[[project]]\nid = \"acme\"\nopen = maybe\n")
	if err := SetOpen(bad, "acme", true); err == nil || !strings.Contains(err.Error(), "not valid TOML") {
		t.Errorf("invalid file: %v", err)
	}
	if fileText(t, bad) != "[[project]]\nid = \"acme\"\nopen = maybe\n" {
		t.Error("an invalid file was changed")
	}
	if err := SetOpen(filepath.Join(t.TempDir(), File), "acme", true); err == nil || !strings.Contains(err.Error(), "no projects file") {
		t.Errorf("missing file: %v", err)
	}
}

// TestEditTiesFallBack: a ties array written in a way a line-wise edit cannot keep (two
// elements on a line) is written again on one line, and reads back as meant.
func TestEditTiesFallBack(t *testing.T) {
	path := editFile(t, "[[project]]\nid = \"a\"\nties = [\n  \"event:1\", \"event:2\",\n]\nname = \"A\"\n")
	if err := RemoveTie(path, "a", "event:1"); err != nil {
		t.Fatal(err)
	}
	if got := fileText(t, path); got != "[[project]]\nid = \"a\"\nties = [\"event:2\"]\nname = \"A\"\n" {
		t.Fatalf("got %q", got)
	}
	if err := AddTie(path, "a", `note:say "hi"\x.md`); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil || len(s.Projects[0].Ties) != 2 || s.Projects[0].Ties[1] != `note:say "hi"\x.md` || s.Projects[0].Name != "A" {
		t.Fatalf("%v %+v", err, s)
	}
}

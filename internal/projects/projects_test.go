package projects

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) *Set {
	t.Helper()
	s, err := Parse("projects.toml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// TestParseErrors: every file postern cannot read as projects is one sentence naming what
// to fix, never a guess.
func TestParseErrors(t *testing.T) {
	for text, says := range map[string]string{
		"[[project]]\nid = \"a\"\nopen = yes\n":                       "is not valid TOML",
		"[[project]]\nid = \"a\"\nsender = [\"x@y.example\"]\n":       `unknown setting "project.sender"`,
		"[projects]\ninside = true\n":                                 `unknown setting "projects.inside"`,
		"[[project]]\nid = \"a\"\n[[project]]\nid = \"A\"\n":          `two projects with the id "A"`,
		"[[project]]\nname = \"no id\"\n":                             `has the id ""`,
		"[[project]]\nid = \"a b\"\n":                                 "an id is 1 to 64 letters",
		"[[project]]\nid = \"" + strings.Repeat("x", 65) + "\"\n":     "an id is 1 to 64 letters",
		"[[project]]\nid = \"a\"\nties = [\"thread:1\"]\n":            "is not a tie",
		"[[project]]\nid = \"a\"\ndomains = [\"ann@acme.example\"]\n": "is not a domain",
		"[[project]]\nid = \"a\"\nopen = \"yes\"\n":                   "is not valid TOML",
	} {
		_, err := Parse("p.toml", []byte(text))
		if err == nil || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): %v, want one line with %q", text, err, says)
		}
	}
}

// TestLoadMissingAndOutside: no file is no projects with things outside open; outside is
// true unless the file says false.
func TestLoadMissingAndOutside(t *testing.T) {
	s, err := Load(filepath.Join(t.TempDir(), File))
	if err != nil || len(s.Projects) != 0 || !s.Outside() || s.Active() {
		t.Fatalf("missing file: %v %+v", err, s)
	}
	if s := mustParse(t, "[[project]]\nid = \"a\"\n"); !s.Outside() || !s.Active() {
		t.Error("outside is not true by default")
	}
	if s := mustParse(t, "[projects]\noutside = false\n"); s.Outside() || !s.Active() || s.Allows(nil) {
		t.Error("outside = false does not keep things in no project")
	}
	var nilSet *Set
	if !nilSet.Outside() || nilSet.Active() {
		t.Error("a nil set keeps things")
	}
	if p := Path("/x/postern/config.toml"); p != "/x/postern/projects.toml" {
		t.Errorf("Path: %s", p)
	}
}

// TestAllows: a thing reaches an agent only when every project it belongs to is open.
func TestAllows(t *testing.T) {
	s := mustParse(t, "[[project]]\nid = \"open1\"\nopen = true\n[[project]]\nid = \"shut\"\n[[project]]\nid = \"open2\"\nopen = true\n")
	for _, c := range []struct {
		of   []int
		want bool
	}{{nil, true}, {[]int{0}, true}, {[]int{1}, false}, {[]int{0, 2}, true}, {[]int{0, 1}, false}, {[]int{1, 0}, false}} {
		if got := s.Allows(c.of); got != c.want {
			t.Errorf("Allows(%v) = %v, want %v", c.of, got, c.want)
		}
	}
	if s.Find("SHUT") == nil || s.Find("nope") != nil {
		t.Error("Find is not case-insensitive or finds what is not there")
	}
	if near := s.Nearest("shutt"); len(near) == 0 || near[0] != "shut" {
		t.Errorf("Nearest(shutt) = %v", near)
	}
}

// TestKeeps: events, tasks, contacts and notes belong by their routes and ties; a thing
// in an open and a closed project is kept.
func TestKeeps(t *testing.T) {
	s := mustParse(t, `
[[project]]
id = "acme"
calendars = ["work/Acme"]
task_lists = ["Acme tasks"]
address_books = ["https://dav.example/ab/acme/"]
note_folders = ["clients/acme"]
domains = ["acme.example"]
senders = ["lawyer@firm.example"]
ties = ["event:tied-ev", "task:tied-task", "contact:tied-c", "note:misc/acme.md", "event:both"]

[[project]]
id = "home"
open = true
calendars = ["Family"]
ties = ["event:both"]
`)
	for _, c := range []struct {
		name string
		t    Thing
		kept bool
	}{
		{"event in the calendar", Thing{Kind: Event, Account: "work", Collection: "acme", UID: "e1"}, true},
		{"same calendar name, other account", Thing{Kind: Event, Account: "home", Collection: "Acme", UID: "e1"}, false},
		{"event tied", Thing{Kind: Event, Account: "x", Collection: "Other", UID: "tied-ev"}, true},
		{"event of the open project", Thing{Kind: Event, Account: "x", Collection: "family", UID: "e2"}, false},
		{"event in open and closed", Thing{Kind: Event, Account: "x", Collection: "Family", UID: "both"}, true},
		{"task in its list", Thing{Kind: Task, Account: "x", Collection: "Acme Tasks", UID: "t1"}, true},
		{"task in the calendar", Thing{Kind: Task, Account: "work", Collection: "Acme", UID: "t2"}, true},
		{"task tied", Thing{Kind: Task, Collection: "Inbox", UID: "tied-task"}, true},
		{"task elsewhere", Thing{Kind: Task, Collection: "Inbox", UID: "t3"}, false},
		{"contact in the book, by its URL", Thing{Kind: Contact, Collection: "Acme", URL: "https://dav.example/ab/acme"}, true},
		{"contact of a domain", Thing{Kind: Contact, Collection: "All", Emails: []string{"Ann@Sales.Acme.example"}}, true},
		{"contact of a sender", Thing{Kind: Contact, Collection: "All", Emails: []string{"lawyer@firm.example"}}, true},
		{"contact elsewhere", Thing{Kind: Contact, Collection: "All", Emails: []string{"ann@notacme.example"}}, false},
		{"contact tied", Thing{Kind: Contact, Collection: "All", UID: "tied-c"}, true},
		{"note in the folder", Thing{Kind: Note, Path: "Clients/Acme/plan.md"}, true},
		{"note beside the folder", Thing{Kind: Note, Path: "clients/acme-other/plan.md"}, false},
		{"note tied", Thing{Kind: Note, Path: "/misc/acme.md"}, true},
		{"note elsewhere", Thing{Kind: Note, Path: "misc/other.md"}, false},
	} {
		if got := s.Keeps(c.t); got != c.kept {
			t.Errorf("%s: Keeps = %v, want %v (of %v)", c.name, got, c.kept, s.Of(c.t))
		}
	}
	if !s.KeepsCollection(Event, "work", "Acme", "") || s.KeepsCollection(Event, "work", "Family", "") || s.KeepsCollection(Event, "work", "Other", "") {
		t.Error("KeepsCollection")
	}
	if !s.Projects[0].HoldsNoteFolder("clients/acme/") || s.Projects[0].HoldsNoteFolder("clients") {
		t.Error("HoldsNoteFolder")
	}
	// Nothing is kept where no project exists and outside is open.
	if (&Set{}).Keeps(Thing{Kind: Note, Path: "clients/acme/x.md"}) {
		t.Error("an empty set keeps a note")
	}
}

func TestNameMatches(t *testing.T) {
	for _, c := range []struct {
		route, account, name string
		want                 bool
	}{
		{"Acme", "work", "acme", true},
		{" Acme ", "work", "ACME", true},
		{"work/Acme", "work", "acme", true},
		{"work/Acme", "home", "Acme", false},
		{"Work/Acme", "work", "Acme", false}, // the account's name is as configured
		{"work/Clients/Acme", "work", "clients/acme", true},
		{"Acme", "work", "Acme Corp", false},
		{"", "work", "Acme", false},
	} {
		if got := NameMatches(c.route, c.account, c.name); got != c.want {
			t.Errorf("NameMatches(%q, %q, %q) = %v", c.route, c.account, c.name, got)
		}
	}
}

func TestCheckTie(t *testing.T) {
	for _, ok := range []string{"mid:a@b", "event:1", "task:x", "contact:urn:uuid:1", "note:a/b.md"} {
		if err := CheckTie(ok); err != nil {
			t.Errorf("CheckTie(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "mid:", "mid", "thread:1", "MID:a@b", "event:a\nb", "event:a\rb", "note:a\x00b", "event:a\x1b[2J", "note:a\u2028b", "note:a\u2029b", "task:a\u0085b"} {
		if err := CheckTie(bad); err == nil || strings.ContainsAny(err.Error(), "\n\r\x1b") {
			t.Errorf("CheckTie(%q): %v", bad, err)
		}
	}
	if got := Tie("mid", " <a@b> "); got != "mid:a@b" {
		t.Errorf("Tie(mid) = %q", got)
	}
	if got := Tie("event", "<x>"); got != "event:<x>" {
		t.Errorf("Tie(event) = %q", got)
	}
}

// TestWatcherSameSecond: a change written within the same second, of the same size, is
// seen at the next Get.
func TestWatcherSameSecond(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	w := NewWatcher(path)
	if s, err := w.Get(); err != nil || len(s.Projects) != 0 {
		t.Fatalf("no file: %v %+v", err, s)
	}
	write := func(text string) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("[[project]]\nid = \"a\"\nopen = false\n")
	s, err := w.Get()
	if err != nil || s.Find("a") == nil || s.Find("a").Open {
		t.Fatalf("first: %v %+v", err, s)
	}
	st, _ := os.Stat(path)
	write("[[project]]\nid = \"a\"\nopen = true \n") // the same size, in place
	if runtime.GOOS == "linux" {
		os.Chtimes(path, st.ModTime(), st.ModTime()) // and the same modification time: the change time tells
	}
	if s, err := w.Get(); err != nil || !s.Find("a").Open {
		t.Fatalf("a rewrite of the same size and time was not seen: %v %+v", err, s)
	}
	write("not toml = = \n")
	if _, err := w.Get(); err == nil {
		t.Fatal("an invalid file was not an error")
	}
	os.Remove(path)
	if s, err := w.Get(); err != nil || len(s.Projects) != 0 {
		t.Fatalf("removed: %v %+v", err, s)
	}
}

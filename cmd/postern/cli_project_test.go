package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/projects"
)

// projectsFile is a hand-written projects file: comments on their own lines and after
// values, indentation, a tie array over several lines with a comment on an element.
const projectsFile = `# The person's projects, written by hand.
[projects]
outside = true   # things in no project reach agents

# A client: closed unless I say.
[[project]]
id = "acme"        # short, for the commands
name = "Acme Corp"
  open = false     # closed until the contract is signed
domains = ["acme.example"]
subjects = ["Acme"]
# Tied by hand:
ties = [
  "mid:first@acme.example",  # the kick-off mail
  "event:kickoff-1",
]

[[project]]
id = "family"
name = "Family"
folders = ["home/Family"]
`

// projectHome is a throwaway HOME with projectsFile as its projects file; it returns the
// file's path.
func projectHome(t *testing.T, text string) string {
	t.Helper()
	h := inHome(t)
	dir := filepath.Join(h, ".config", "postern")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, projects.File)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProjectCommands: list, show, open, close, tie and untie on a hand-written file say
// what changed in one line each, and every comment, indentation and the order of the file
// survive; a second tie changes no byte; an untie of what is not tied and a typo'd id are
// errors (the typo names the nearest id) that leave the file as it was.
func TestProjectCommands(t *testing.T) {
	path := projectHome(t, projectsFile)

	out, errOut, code := runHere("project", "list")
	if code != 0 || !strings.Contains(out, "acme") || !strings.Contains(out, "Acme Corp") || !strings.Contains(out, "closed") ||
		!strings.Contains(out, "2 routes, 2 ties") || !strings.Contains(out, "1 route, 0 ties") ||
		!strings.Contains(out, "Things in no project are shown to agents") {
		t.Fatalf("project list: %d\n%s%s", code, out, errOut)
	}
	if strings.Index(out, "acme") > strings.Index(out, "family") {
		t.Errorf("project list is not in the file's order:\n%s", out)
	}
	out, _, code = runHere("project", "show", "acme")
	for _, want := range []string{`acme "Acme Corp": closed to agents`, `domains "acme.example" (authenticated mail only)`, `subjects "Acme"`, "postern sync makes it", "mid:first@acme.example", "event:kickoff-1"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("project show acme lacks %q: %d\n%s", want, code, out)
		}
	}

	steps := []struct {
		args []string
		say  string
	}{
		{[]string{"open", "acme"}, "project acme: opened to agents"},
		{[]string{"open", "ACME"}, "project acme: already open to agents; nothing changed"},
		{[]string{"tie", "acme", "mid:<second@acme.example>"}, "project acme: tied mid:second@acme.example"},
		{[]string{"tie", "acme", "second@acme.example"}, ""}, // not a ref: an error, below
		{[]string{"untie", "acme", "event:kickoff-1"}, "project acme: untied event:kickoff-1"},
		{[]string{"tie", "family", "note:/home/plans.md"}, "project family: tied note:home/plans.md"},
		{[]string{"close", "acme"}, "project acme: closed to agents"},
	}
	for _, s := range steps {
		out, errOut, code := runHere(append([]string{"project"}, s.args...)...)
		if s.say == "" {
			if code != 1 || !strings.Contains(errOut, "is not something to tie") {
				t.Errorf("project %v: %d %q %q", s.args, code, out, errOut)
			}
			continue
		}
		if code != 0 || strings.TrimSpace(out) != s.say || errOut != "" {
			t.Errorf("project %v: %d %q %q, want %q", s.args, code, out, errOut, s.say)
		}
	}
	want := `# The person's projects, written by hand.
[projects]
outside = true   # things in no project reach agents

# A client: closed unless I say.
[[project]]
id = "acme"        # short, for the commands
name = "Acme Corp"
  open = false     # closed until the contract is signed
domains = ["acme.example"]
subjects = ["Acme"]
# Tied by hand:
ties = [
  "mid:first@acme.example",  # the kick-off mail
  "mid:second@acme.example",
]

[[project]]
id = "family"
ties = ["note:home/plans.md"]
name = "Family"
folders = ["home/Family"]
`
	if got := readText(t, path); got != want {
		t.Fatalf("the file after the commands:\n%s\nwant:\n%s", got, want)
	}
	s, err := projects.Load(path)
	if err != nil || s.Find("acme").Open || len(s.Find("acme").Ties) != 2 {
		t.Fatalf("the file does not read back as changed: %v %+v", err, s)
	}

	// What changes nothing and what is refused leave every byte.
	before := readText(t, path)
	if out, _, code := runHere("project", "tie", "acme", "mid:second@acme.example"); code != 0 || !strings.Contains(out, "was tied already; nothing changed") {
		t.Errorf("a second tie: %d %q", code, out)
	}
	if out, errOut, code := runHere("project", "untie", "acme", "task:never-tied"); code != 1 || out != "" || !strings.Contains(errOut, "task:never-tied is not tied to the project \"acme\"") {
		t.Errorf("untie of what is not tied: %d %q %q", code, out, errOut)
	}
	for _, verb := range []string{"show", "open", "close"} {
		if out, errOut, code := runHere("project", verb, "acmee"); code != 1 || out != "" || !strings.Contains(errOut, `there is no project "acmee"`) || !strings.Contains(errOut, "did you mean acme?") || lines(errOut) != 1 {
			t.Errorf("project %s acmee: %d %q %q", verb, code, out, errOut)
		}
	}
	if _, errOut, code := runHere("project", "tie", "famly", "event:x"); code != 1 || !strings.Contains(errOut, "did you mean family?") {
		t.Errorf("project tie famly: %d %q", code, errOut)
	}
	for _, ref := range []string{"calendar:x", "mid:", "event:a\x1b[2Jb"} {
		if _, errOut, code := runHere("project", "tie", "acme", ref); code != 1 || lines(errOut) != 1 || strings.Contains(errOut, "\x1b") {
			t.Errorf("project tie acme %q: %d %q", ref, code, errOut)
		}
	}
	if _, errOut, code := runHere("project", "open"); code != 2 || !strings.Contains(errOut, "the id of a project") {
		t.Errorf("project open with no id: %d %q", code, errOut)
	}
	if got := readText(t, path); got != before {
		t.Fatalf("the file changed:\n%s\nwas:\n%s", got, before)
	}
}

// TestProjectListOutside: with no file there are no projects and things outside reach
// agents; with outside = false the list says they are kept.
func TestProjectListOutside(t *testing.T) {
	path := projectHome(t, "")
	os.Remove(path)
	out, _, code := runHere("project", "list")
	if code != 0 || !strings.Contains(out, "No projects in "+path) || !strings.Contains(out, "shown to agents") {
		t.Fatalf("project list with no file: %d %q", code, out)
	}
	if _, errOut, code := runHere("project", "open", "acme"); code != 1 || !strings.Contains(errOut, "there is no projects file") {
		t.Fatalf("project open with no file: %d %q", code, errOut)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a refused open made the projects file")
	}
	os.WriteFile(path, []byte("[projects]\noutside = false\n"), 0o600)
	out, _, code = runHere("project", "list")
	if code != 0 || !strings.Contains(out, "kept from agents ([projects] outside = false)") {
		t.Fatalf("project list, outside = false: %d %q", code, out)
	}
	out, _, _ = runHere("project", "list", "--json")
	var v struct {
		Outside  *bool
		Projects []any
	}
	if json.Unmarshal([]byte(out), &v) != nil || v.Outside == nil || *v.Outside {
		t.Fatalf("project list --json: %q", out)
	}
}

// TestProjectInvalidFile: a file postern cannot read as projects is one clear error from
// every command, and no command changes a byte of it.
func TestProjectInvalidFile(t *testing.T) {
	cases := map[string]struct{ text, says string }{
		"bad TOML":     {"[[project]]\nid = \"acme\"\nopen = yes # not TOML\n", "is not valid TOML"},
		"unknown key":  {"[[project]]\nid = \"acme\"\nsender = [\"a@b.example\"]\n", `unknown setting "project.sender"`},
		"duplicate id": {"[[project]]\nid = \"acme\"\n\n[[project]]\nid = \"Acme\" # again\n", `two projects with the id "Acme"`},
		"bad id":       {"[[project]]\nid = \"ac me\"\n", "an id is 1 to 64 letters"},
		"bad tie":      {"[[project]]\nid = \"acme\"\nties = [\"calendar:x\"]\n", "is not a tie"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := projectHome(t, c.text)
			for _, args := range [][]string{{"list"}, {"show", "acme"}, {"open", "acme"}, {"close", "acme"}, {"tie", "acme", "event:e"}, {"untie", "acme", "event:e"}} {
				out, errOut, code := runHere(append([]string{"project"}, args...)...)
				if code != 1 || out != "" || !strings.Contains(errOut, c.says) || lines(errOut) != 1 {
					t.Errorf("project %v: %d %q %q, want one line with %q", args, code, out, errOut, c.says)
				}
			}
			if got := readText(t, path); got != c.text {
				t.Errorf("the file changed: %q", got)
			}
		})
	}
}

// TestProjectTieMessageID: a message id as mail_list gives it is tied as the mid: of its
// Message-ID, read from the store; a message with no Message-ID is said to have none, and
// an id the store does not hold is said so.
func TestProjectTieMessageID(t *testing.T) {
	h := inHome(t)
	root := filepath.Join(h, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(root, sub), 0o755)
	}
	os.WriteFile(filepath.Join(root, "cur", "1:2,"), []byte("From: Ann <ann@acme.example>\r\nTo: me@example.com\r\nSubject: Kick-off\r\nDate: Mon, 2 Jun 2025 10:00:00 +0000\r\nMessage-ID: <kick@acme.example>\r\n\r\nHello.\r\n"), 0o644)
	os.WriteFile(filepath.Join(root, "cur", "2:2,"), []byte("From: Bob <bob@acme.example>\r\nTo: me@example.com\r\nSubject: No id\r\nDate: Tue, 3 Jun 2025 10:00:00 +0000\r\n\r\nHello.\r\n"), 0o644)
	cfgDir := filepath.Join(h, ".config", "postern")
	os.MkdirAll(cfgDir, 0o700)
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[[accounts]]\nname = \"local\"\nkind = \"maildir\"\npath = \""+root+"\"\n"), 0o600)
	if out, errOut, code := runHere("sync"); code != 0 {
		t.Fatalf("sync: %d %s%s", code, out, errOut)
	}
	out, errOut, code := runHere("call", generated.ToolMailList, "{}", "--json")
	var list struct {
		Messages []struct{ ID, Subject string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Messages) != 2 {
		t.Fatalf("%s: %d %s%s", generated.ToolMailList, code, out, errOut)
	}
	ids := map[string]string{}
	for _, m := range list.Messages {
		ids[m.Subject] = m.ID
	}
	path := filepath.Join(cfgDir, projects.File)
	os.WriteFile(path, []byte("[[project]]\nid = \"acme\" # the client\n"), 0o600)

	out, errOut, code = runHere("project", "tie", "acme", ids["Kick-off"])
	if code != 0 || strings.TrimSpace(out) != "project acme: tied mid:kick@acme.example (message "+ids["Kick-off"]+")" {
		t.Fatalf("tie by message id: %d %q %q", code, out, errOut)
	}
	if got := readText(t, path); got != "[[project]]\nid = \"acme\" # the client\nties = [\"mid:kick@acme.example\"]\n" {
		t.Fatalf("the file after the tie: %q", got)
	}
	before := readText(t, path)
	if _, errOut, code = runHere("project", "tie", "acme", ids["No id"]); code != 1 || !strings.Contains(errOut, "has no Message-ID") {
		t.Errorf("tie of a message with no Message-ID: %d %q", code, errOut)
	}
	if _, errOut, code = runHere("project", "tie", "acme", "mzzzzzz"); code != 1 || !strings.Contains(errOut, "there is no message mzzzzzz in the store") {
		t.Errorf("tie of an id the store lacks: %d %q", code, errOut)
	}
	if got := readText(t, path); got != before {
		t.Fatalf("a refused tie changed the file: %q", got)
	}
	if out, _, code = runHere("project", "untie", "acme", ids["Kick-off"]); code != 0 || !strings.Contains(out, "untied mid:kick@acme.example") {
		t.Fatalf("untie by message id: %d %q", code, out)
	}
}

// holdsHome is a HOME whose Maildir holds mail from acme.example (two in one thread, one
// forged), from a lawyer, one with "Falcon" in its subject, one in the folder Acme and one
// tied by its Message-ID; two folders of .ics files (acme-cal: two events and a task;
// home-cal: the tied kick-off and a dentist); and a notes folder. Its projects file routes
// each of them to acme. The receiving server mx.example.net wrote Authentication-Results on
// every message from a sender it checked; trusted says whether the account trusts it.
func holdsHome(t *testing.T, trusted bool) string {
	t.Helper()
	h := inHome(t)
	mail := func(folder, name, from, subject, msgID, extra string) {
		dir := filepath.Join(h, "Maildir", folder)
		for _, sub := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(dir, sub), 0o755)
		}
		raw := "From: " + from + "\r\nTo: me@example.com\r\nSubject: " + subject + "\r\nDate: Mon, 2 Jun 2025 10:00:00 +0000\r\nMessage-ID: <" + msgID + ">\r\n" + extra + "\r\nHello.\r\n"
		os.WriteFile(filepath.Join(dir, "cur", name+":2,S"), []byte(raw), 0o644)
	}
	ar := func(result string) string { return "Authentication-Results: mx.example.net; " + result + "\r\n" }
	mail("", "1", "Ann <ann@acme.example>", "Kick-off", "kick@acme.example", ar("dmarc=pass header.from=acme.example"))
	mail("", "2", "Bob <bob@sub.acme.example>", "Re: Kick-off", "re-kick@acme.example", "In-Reply-To: <kick@acme.example>\r\n"+ar("dkim=pass header.d=acme.example"))
	mail("", "3", "Eve <eve@acme.example>", "Urgent invoice", "eve@acme.example", ar("dmarc=fail header.from=acme.example"))
	mail("", "4", "Lawyer <lawyer@firm.example>", "Contract", "contract@firm.example", ar("dmarc=pass header.from=firm.example"))
	mail("", "5", "Carol <carol@elsewhere.example>", "Project Falcon notes", "falcon@elsewhere.example", "")
	mail("", "6", "Dave <dave@elsewhere.example>", "Lunch", "lunch@elsewhere.example", "")
	mail(".Acme", "7", "Filer <filer@other.example>", "Filed", "filed@other.example", "")
	cal := func(dir string, items ...string) string {
		p := filepath.Join(h, dir)
		os.MkdirAll(p, 0o755)
		body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + strings.Join(items, "") + "END:VCALENDAR\r\n"
		os.WriteFile(filepath.Join(p, "cal.ics"), []byte(body), 0o644)
		return p
	}
	event := func(uid, summary string) string {
		return "BEGIN:VEVENT\r\nUID:" + uid + "\r\nDTSTAMP:20250601T000000Z\r\nDTSTART:20250610T090000Z\r\nDTEND:20250610T100000Z\r\nSUMMARY:" + summary + "\r\nEND:VEVENT\r\n"
	}
	acmeCal := cal("acme-cal", event("review@acme.example", "Review"), event("standup@acme.example", "Standup"),
		"BEGIN:VTODO\r\nUID:invoice@acme.example\r\nDTSTAMP:20250601T000000Z\r\nSUMMARY:Send the invoice\r\nEND:VTODO\r\n")
	homeCal := cal("home-cal", event("kickoff@acme.example", "Kick-off"), event("dentist@home.example", "Dentist"))
	for _, n := range []string{"clients/acme/plan.md", "clients/acme/minutes.md", "misc/other.md", "misc/shopping.md"} {
		p := filepath.Join(h, "notes", n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("# "+filepath.Base(n)+"\n\nText.\n"), 0o644)
	}
	trust := ""
	if trusted {
		trust = "trusted_authserv_ids = [\"mx.example.net\"]\n"
	}
	cfgDir := filepath.Join(h, ".config", "postern")
	os.MkdirAll(cfgDir, 0o700)
	cfg := fmt.Sprintf("[notes]\nfolder = %q\n\n[[accounts]]\nname = \"local\"\nkind = \"maildir\"\npath = %q\n%s\n[[accounts]]\nname = \"acme-cal\"\nkind = \"ics\"\npath = %q\n\n[[accounts]]\nname = \"home-cal\"\nkind = \"ics\"\npath = %q\n",
		filepath.Join(h, "notes"), filepath.Join(h, "Maildir"), trust, acmeCal, homeCal)
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600)
	os.WriteFile(filepath.Join(cfgDir, projects.File), []byte(`[[project]]
id = "acme"
name = "Acme Corp"
domains = ["acme.example"]
senders = ["lawyer@firm.example"]
subjects = ["Falcon"]
folders = ["local/Acme"]
calendars = ["acme-cal"]
note_folders = ["clients/acme"]
ties = ["mid:lunch@elsewhere.example", "event:kickoff@acme.example", "note:misc/other.md"]

[[project]]
id = "home"
folders = ["Family"]
`), 0o600)
	return h
}

// TestProjectShowHolds (issue 23, must-show 7): on a mailbox where no trusted server
// authenticated any mail, postern project show and list warn that the domains and senders
// routes hold no message and say what to do (the receiving server to trust, or other routes);
// once the account trusts that server, every route's counts of messages (whole threads),
// events, tasks and notes are the store's, and the warnings are gone. Before any sync, the
// routes are listed and the counts are said to need the store.
func TestProjectShowHolds(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		h := holdsHome(t, trusted)
		if trusted {
			if out, errOut, code := runHere("project", "show", "acme"); code != 0 || !strings.Contains(out, "postern sync makes it") || strings.Contains(out, "messages") {
				t.Fatalf("project show before any sync: %d\n%s%s", code, out, errOut)
			}
		}
		if out, errOut, code := runHere("sync"); code != 0 {
			t.Fatalf("sync: %d %s%s", code, out, errOut)
		}
		show, errOut, code := runHere("project", "show", "acme")
		if code != 0 || errOut != "" {
			t.Fatalf("project show acme: %d %s%s", code, show, errOut)
		}
		list, errOut, code := runHere("project", "list")
		if code != 0 || errOut != "" {
			t.Fatalf("project list: %d %s%s", code, list, errOut)
		}
		name := "project_show_unauthenticated.golden"
		if trusted {
			name = "project_show_authenticated.golden"
		}
		golden(t, name, stable(show, h))
		// What a user reads, checked apart from the golden file too.
		warned := strings.Contains(show, `domains "acme.example" (authenticated mail only): 0 messages`) &&
			strings.Contains(show, "warning: this route holds no message") &&
			strings.Contains(show, "trust it (trusted_authserv_ids): postern account set local --trust-authserv mx.example.net;") &&
			strings.Contains(show, "or route this mail by folders, subjects or ties") &&
			strings.Contains(list, "warning: it holds no message")
		if warned == trusted {
			t.Errorf("trusted=%v: warned=%v\n%s\n%s", trusted, warned, show, list)
		}
		if trusted {
			for _, want := range []string{
				`domains "acme.example" (authenticated mail only): 2 messages, 0 contacts (1 message from its senders not authenticated, so not held)`,
				`senders "lawyer@firm.example" (authenticated mail only): 1 message, 0 contacts`,
				`subjects "Falcon": 1 message`, `folders "local/Acme": 1 message`,
				`calendars "acme-cal": 2 events, 1 task`, `note_folders "clients/acme": 2 notes`,
				"mid:lunch@elsewhere.example: 1 message", "event:kickoff@acme.example: 1 event", "note:misc/other.md: 1 note",
			} {
				if !strings.Contains(show, want) {
					t.Errorf("project show lacks %q:\n%s", want, show)
				}
			}
			if !strings.Contains(list, `folders "Family": 0 messages`) {
				t.Errorf("project list does not count the home project's route:\n%s", list)
			}
		}
	}
}

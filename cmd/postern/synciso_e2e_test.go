package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/testing/davtest"
)

// The stranger's invitation of must-show 3: BEL, VT and ESC in its SUMMARY, which the
// server writes into its multistatus answer as they are.
var strangerICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//stranger//EN\r\nBEGIN:VEVENT\r\nUID:invite-4411@stranger.example\r\n" +
	"DTSTAMP:20260901T000000Z\r\nDTSTART:20261028T150000Z\r\nDTEND:20261028T160000Z\r\n" +
	"SUMMARY:Prize\x07 draw\x0b today\x1b]0;owned\x07\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

// checkSyncIsolation is must-show 3: a CalDAV account whose first calendar holds the
// stranger's event beside two good ones, a second calendar, a task list and an address book;
// postern sync (the binary) stores the good events and every other collection, and its output
// and the status tool name the bad object.
func checkSyncIsolation(t *testing.T, srv *davtest.Server) {
	u := srv.NewUser(t)
	env := home(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("time_zone = \"Europe/Paris\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first, second := davtest.Unique("A first "), davtest.Unique("B second ")
	tasksName := davtest.Unique("Tasks ")
	cal := u.MkCalendar(t, davtest.Unique("a-first"), first, "", "VEVENT")
	cal2 := u.MkCalendar(t, davtest.Unique("b-second"), second, "", "VEVENT")
	tasks := u.MkCalendar(t, davtest.Unique("tasks"), tasksName, "", "VTODO")
	bookName := davtest.Unique("Contacts ")
	book := u.MkAddressBook(t, davtest.Unique("book"), bookName)
	u.Put(t, cal+"stranger.ics", strangerICS)
	u.Put(t, cal+"conference.ics", conferenceICS)
	u.Put(t, cal+"lunch.ics", lunchICS)
	u.Put(t, cal2+"ny.ics", nyCallICS)
	u.Put(t, tasks+"report.ics", davtest.CRLF("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\nBEGIN:VTODO\nUID:report-iso@example.org\nDTSTAMP:20260901T000000Z\nDUE:20261030T170000Z\nSTATUS:NEEDS-ACTION\nSUMMARY:File the report\nEND:VTODO\nEND:VCALENDAR\n"))
	u.Put(t, book+"priya.vcf", priyaVCF)
	if out, errOut, code := runCLI(t, env, "account", "add", "cal", "--caldav", srv.URL, "--carddav", srv.URL,
		"--user", u.Name, "--password-cmd", u.PasswordCmd(), "--config", cfg); code != 0 {
		t.Fatalf("account add: %d %s %s", code, out, errOut)
	}
	out, errOut, code := runCLI(t, env, "sync", "--config", cfg)
	if code != 0 {
		t.Fatalf("postern sync exited %d:\n%s\n%s", code, out, errOut)
	}
	named := func(s string) bool {
		return strings.Contains(s, "/stranger.ics") && strings.Contains(s, "invite-4411@stranger.example") && strings.Contains(s, first) &&
			strings.Contains(s, "U+0007, U+000B and U+001B")
	}
	if !named(errOut) || strings.ContainsAny(errOut, "\x07\x0b\x1b") {
		t.Errorf("postern sync's warning does not name the bad object, or holds control characters:\n%q", errOut)
	}

	mb := &mailbox{env: env, cfg: cfg}
	cs := mb.connect(t, "read", nil)
	got := map[string]bool{}
	for _, c := range []string{first, second} {
		for _, e := range agendaRows(t, cs, c, "2026-10-19", "2026-11-02") {
			got[e["summary"].(string)] = true
		}
	}
	for _, want := range []string{"Conference", "Lunch", "NY call"} {
		if !got[want] {
			t.Errorf("agenda lacks %q: %v", want, got)
		}
	}
	for s := range got {
		if strings.ContainsAny(s, "\x07\x0b\x1b") {
			t.Errorf("an agenda summary holds control characters: %q", s)
		}
	}
	if sc, text, isErr := call(t, cs, "task_list", map[string]any{"state": "all", "list": tasksName}); isErr || len(sc["tasks"].([]any)) != 1 {
		t.Errorf("task_list: %s", text)
	}
	// Xandikos has one principal for every test: only this test's address book counts.
	if sc, text, isErr := call(t, cs, "contacts_search", map[string]any{"query": "priya", "limit": 200}); isErr {
		t.Errorf("contacts_search: %s", text)
	} else if n := countIn(sc["contacts"], "address_book", bookName); n != 1 {
		t.Errorf("contacts_search: %d in %s: %s", n, bookName, text)
	}
	sc, text, isErr := call(t, cs, "status", map[string]any{})
	if isErr {
		t.Fatalf("status: %s", text)
	}
	var warnings []string
	for _, a := range sc["accounts"].([]any) {
		acct := a.(map[string]any)
		if acct["name"] != "cal" {
			continue
		}
		if acct["last_error"] != nil {
			t.Errorf("status says the sync failed: %v", acct["last_error"])
		}
		if ws, ok := acct["warnings"].([]any); ok {
			for _, w := range ws {
				// Xandikos has one principal for every test: only this test's calendars count.
				if srv.Name != "xandikos" || strings.Contains(w.(string), first) || strings.Contains(w.(string), second) {
					warnings = append(warnings, w.(string))
				}
			}
		}
	}
	if len(warnings) != 1 || !named(warnings[0]) {
		t.Errorf("status warnings %q; want one naming the stranger's event", warnings)
	}
	// postern status says it too, and a second sync still does while the server's copy is bad.
	if out, _, _ := runCLI(t, env, "status", "--config", cfg); !named(out) || !strings.Contains(out, "warning:") {
		t.Errorf("postern status:\n%s", out)
	}
	if _, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 || !named(errOut) {
		t.Errorf("second postern sync: exit %d, %q", code, errOut)
	}
}

func TestSyncIsolationRadicale(t *testing.T) { checkSyncIsolation(t, davtest.Radicale(t)) }
func TestSyncIsolationXandikos(t *testing.T) { checkSyncIsolation(t, davtest.Xandikos(t)) }

// countIn counts the rows of list whose key is value.
func countIn(list any, key, value string) int {
	rows, _ := list.([]any)
	n := 0
	for _, r := range rows {
		if m, ok := r.(map[string]any); ok && m[key] == value {
			n++
		}
	}
	return n
}

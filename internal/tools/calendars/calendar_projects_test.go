package calendars_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/toolstest"
	"github.com/postern-mcp/postern/internal/tools"
)

// projectWord is in every thing of the closed project: no answer may ever hold it.
const projectWord = "zanzibar"

// projectCalendars is a store of one account holding, besides its own calendars, task
// list and address book, those of the project acme (each thing carrying projectWord),
// an event of the open calendar Work tied to acme, and a contact of Contacts with an
// address of acme's domain. It returns the tools, the objects' ids and a function that
// writes projects.toml beside the configuration (atomically, as postern does).
func projectCalendars(t *testing.T) (*mailbox, map[string]int64, func(string)) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg := filepath.Join(dir, "config.toml")
	text := fmt.Sprintf("time_zone = \"Europe/Paris\"\n[[accounts]]\nname = \"cal\"\nkind = \"maildir\"\npath = %q\naddress = \"sam@example.com\"\n", filepath.Join(dir, "cal"))
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(dir, "store.db")
	st, err := store.Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	acct, err := st.EnsureAccount(ctx, "cal", "maildir")
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]int64{}
	colls := map[string]*store.Collection{}
	coll := func(name, kind string) *store.Collection {
		c := &store.Collection{AccountID: acct, URL: "/dav/cal/" + strings.ToLower(name) + "/", Kind: kind, Name: name, Writable: true}
		if err := st.SaveCollection(ctx, c); err != nil {
			t.Fatal(err)
		}
		colls[name] = c
		return c
	}
	put := func(c *store.Collection, name string, o store.Object) {
		o.CollectionID, o.Href, o.ETag = c.ID, c.URL+name+".ics", "\"1\""
		if err := st.PutObject(ctx, &o); err != nil {
			t.Fatal(err)
		}
		objects[name] = o.ID
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	event := func(c *store.Collection, name, uid, summary string, start time.Time) {
		end := start.Add(time.Hour)
		data := vcal(fmt.Sprintf("BEGIN:VEVENT\nUID:%s\nDTSTART:%s\nDTEND:%s\nSUMMARY:%s\nDESCRIPTION:about %s\nEND:VEVENT",
			uid, start.UTC().Format("20060102T150405Z"), end.UTC().Format("20060102T150405Z"), summary, summary))
		put(c, name, store.Object{UID: uid, Kind: store.ObjectEvent, Data: data, Summary: summary, Start: start, End: end})
	}
	d := func(dd, h int) time.Time { return time.Date(2030, 3, dd, h, 0, 0, 0, paris) }
	soon := time.Now().Add(2 * time.Hour).Truncate(time.Minute)

	work := coll("Work", store.KindCalendar)
	event(work, "lunch", "lunch@x", "Lunch", d(5, 12))
	event(work, "tied", "tied@x", "Zanzibar review", d(6, 9))
	event(work, "soonwork", "soonwork@x", "Standup", soon.Add(time.Hour))
	acme := coll("Acme", store.KindCalendar)
	event(acme, "kick", "kick@x", "Zanzibar kickoff", d(7, 14))
	event(acme, "soon", "soon@x", "Zanzibar call", soon)
	put(acme, "broken", store.Object{UID: "broken@x", Kind: store.ObjectEvent, Data: "BEGIN:VCALENDAR\r\nSUMMARY:Zanzibar broken\r\n", Summary: "Zanzibar broken", Start: d(8, 10), End: d(8, 11)})
	personal := coll("Personal", store.KindCalendar)
	event(personal, "dentist", "dentist@x", "Dentist", d(5, 16))

	todo := func(c *store.Collection, name, uid, summary string) {
		put(c, name, store.Object{UID: uid, Kind: store.ObjectTodo, Summary: summary, Status: "NEEDS-ACTION",
			Data: vcal(fmt.Sprintf("BEGIN:VTODO\nUID:%s\nSUMMARY:%s\nSTATUS:NEEDS-ACTION\nDESCRIPTION:about %s\nEND:VTODO", uid, summary, summary))})
	}
	todo(coll("Chores", store.KindTasks), "milk", "milk@x", "Buy milk")
	todo(coll("AcmeTasks", store.KindTasks), "invoice", "invoice@x", "Zanzibar invoice")

	card := func(c *store.Collection, name, uid, fn, email string) {
		put(c, name, store.Object{UID: uid, Kind: store.ObjectContact, Summary: fn, Search: strings.ToLower(fn + " " + email),
			Data: "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:" + fn + "\r\nEMAIL:" + email + "\r\nNOTE:about " + fn + "\r\nEND:VCARD\r\n"})
	}
	book := coll("Contacts", store.KindAddressBook)
	card(book, "omar", "o", "Omar Haddad", "omar@haddad.example")
	card(book, "pat", "pat", "Pat Lee", "pat@lee.example")
	card(book, "dana", "d", "Dana Zanzibar", "dana@acme.example")
	card(coll("AcmeBook", store.KindAddressBook), "zed", "z", "Zed Zanzibar", "zed@elsewhere.example")
	// A warning of a sync about an object of each of two calendars (Acme is the project's).
	for name, href := range map[string]string{"Acme": "zanzibar-bad.ics", "Work": "bad.ics"} {
		c := colls[name]
		if err := st.AddSyncWarning(ctx, acct, c.URL, c.URL+href, "the calendar "+name+": "+href+" was skipped (a test)."); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	svc := &tools.Service{Version: "test", Config: config.NewWatcher(cfg), StorePath: storePath}
	reg, err := dispatch.New(svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(); svc.Close() })
	projects := func(text string) {
		t.Helper()
		tmp := filepath.Join(dir, "projects.toml.tmp")
		if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "projects.toml")); err != nil {
			t.Fatal(err)
		}
	}
	return &mailbox{&toolstest.Mailbox{T: t, Reg: reg, Era: "legacy"}}, objects, projects
}

// acmeProject is the project acme: a calendar, a task list, an address book, its
// client's domain, and a tie to one event of the calendar Work.
func acmeProject(open bool) string {
	return fmt.Sprintf(`[[project]]
id = "acme"
name = "Acme"
open = %v
calendars = ["Acme"]
task_lists = ["cal/AcmeTasks"]
address_books = ["AcmeBook"]
domains = ["acme.example"]
ties = ["event:tied@x"]
`, open)
}

func names(sc map[string]any, list, key string) string {
	var out []string
	for _, r := range rows(sc, list) {
		out = append(out, fmt.Sprint(r[key]))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func leftOut(sc map[string]any) int {
	n, _ := sc["left_out"].(float64)
	return int(n)
}

const writeScopes = "read,calendar:write,tasks:write"

// TestCalendarProjectClosed: a closed project's calendar, task list and address book,
// its client's contact and an event tied to it are left out of every list, counted the
// same whatever else was asked; asked for by id they get the missing thing's answer;
// nothing is written to them; no answer holds the project's word. Opened, each appears
// at the next call.
func TestCalendarProjectClosed(t *testing.T) {
	m, ids, projects := projectCalendars(t)
	projects(acmeProject(false))
	seen := func(tool, text string) {
		t.Helper()
		if strings.Contains(strings.ToLower(text), projectWord) {
			t.Fatalf("%s holds the closed project's word:\n%s", tool, text)
		}
	}
	call := func(scopes, tool string, args map[string]any) (map[string]any, string, bool) {
		t.Helper()
		sc, text, isErr := m.call(scopes, tool, args)
		seen(tool, text)
		return sc, text, isErr
	}
	must := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		sc, text, isErr := call("read", tool, args)
		if isErr {
			t.Fatalf("%s %v: %s", tool, args, text)
		}
		return sc
	}
	week := map[string]any{"from": "2030-03-04", "to": "2030-03-10"}

	sc := must(generated.ToolCalendarList, nil)
	if got := names(sc, "calendars", "name"); got != "Chores,Contacts,Personal,Work" || leftOut(sc) != 3 {
		t.Fatalf("calendar_list: %s, left_out %v", got, sc["left_out"])
	}
	sc, text, _ := call("read", generated.ToolAgenda, week)
	if got := names(sc, "events", "summary"); got != "Dentist,Lunch" || leftOut(sc) != 2 || sc["problems"] != nil || !strings.Contains(text, "\nleft_out: 2") {
		t.Fatalf("agenda: %s, left_out %v, problems %v\n%s", got, sc["left_out"], sc["problems"], text)
	}
	// One calendar asked for: the count is still the range's.
	sc = must(generated.ToolAgenda, map[string]any{"from": "2030-03-04", "to": "2030-03-10", "calendar": "Work"})
	if got := names(sc, "events", "summary"); got != "Lunch" || leftOut(sc) != 2 {
		t.Fatalf("agenda of Work: %s, left_out %v", got, sc["left_out"])
	}
	// A kept calendar named is as unknown as a missing one, and is not among the names listed.
	_, kept, isErr := call("read", generated.ToolAgenda, map[string]any{"calendar": "Acme"})
	_, missing, _ := call("read", generated.ToolAgenda, map[string]any{"calendar": "Nowhere"})
	if !isErr || kept != missing || strings.Contains(kept, "Acme") || !strings.Contains(kept, "postern project open") {
		t.Fatalf("agenda of a kept calendar: %q; of a missing one: %q", kept, missing)
	}
	sc = must(generated.ToolCalendarFreebusy, week)
	if got := fmt.Sprint(sc["busy"]); got != "[map[end:2030-03-05 13:00 Europe/Paris start:2030-03-05 12:00 Europe/Paris] map[end:2030-03-05 17:00 Europe/Paris start:2030-03-05 16:00 Europe/Paris]]" || leftOut(sc) != 2 {
		t.Fatalf("freebusy: %s, left_out %v", got, sc["left_out"])
	}
	sc = must(generated.ToolNow, nil)
	if got := names(sc, "next_events", "summary"); got != "Standup" || leftOut(sc) != 1 {
		t.Fatalf("now: %s, left_out %v", got, sc["left_out"])
	}
	for _, state := range []string{"open", "done", "all"} {
		sc = must(generated.ToolTaskList, map[string]any{"state": state})
		if want := map[string]string{"open": "Buy milk", "all": "Buy milk", "done": ""}[state]; names(sc, "tasks", "summary") != want || leftOut(sc) != 1 {
			t.Fatalf("task_list %s: %v", state, sc)
		}
	}
	if sc = must(generated.ToolTaskList, map[string]any{"list": "Chores"}); leftOut(sc) != 1 {
		t.Fatalf("task_list of Chores: %v", sc)
	}
	_, kept, _ = call("read", generated.ToolTaskList, map[string]any{"list": "AcmeTasks"})
	_, missing, _ = call("read", generated.ToolTaskList, map[string]any{"list": "Nowhere"})
	if kept != missing || strings.Contains(kept, "AcmeTasks") {
		t.Fatalf("task_list of a kept list: %q; of a missing one: %q", kept, missing)
	}
	// The count is the address books', whatever the words: the same for a query that
	// would find the kept contacts and for one that would not.
	for q, want := range map[string]string{projectWord: "", "omar": "Omar Haddad", "a": "Omar Haddad,Pat Lee", "acme.example": ""} {
		sc = must(generated.ToolContactsSearch, map[string]any{"query": q})
		if got := names(sc, "contacts", "name"); got != want || leftOut(sc) != 2 {
			t.Fatalf("contacts_search %q: %s, left_out %v", q, got, sc["left_out"])
		}
	}
	// limit counts only what is shown.
	if sc = must(generated.ToolContactsSearch, map[string]any{"query": "a", "limit": 2}); names(sc, "contacts", "name") != "Omar Haddad,Pat Lee" || sc["truncated"] != nil {
		t.Fatalf("contacts_search with limit 2: %v", sc)
	}

	// By id: the same answer as for a thing that is not there.
	byID := []struct {
		scopes, tool, arg, kept, missing string
		extra                            map[string]any
	}{
		{"read", generated.ToolCalendarEvent, "id", "e" + b36(ids["tied"]), "e" + b36(99999), nil},
		{"read", generated.ToolCalendarEvent, "id", "e" + b36(ids["kick"]), "e" + b36(99999), nil},
		{"read", generated.ToolTaskGet, "id", "t" + b36(ids["invoice"]), "t" + b36(99999), nil},
		{"read", generated.ToolContactGet, "id", "c" + b36(ids["zed"]), "c" + b36(99999), nil},
		{"read", generated.ToolContactGet, "id", "c" + b36(ids["dana"]), "c" + b36(99999), nil},
		{writeScopes, generated.ToolCalendarUpdate, "id", "e" + b36(ids["tied"]), "e" + b36(99999), map[string]any{"summary": "x"}},
		{writeScopes, generated.ToolCalendarUpdate, "id", "e" + b36(ids["kick"]), "e" + b36(99999), map[string]any{"cancel": true}},
		{writeScopes, generated.ToolTaskUpdate, "id", "t" + b36(ids["invoice"]), "t" + b36(99999), map[string]any{"summary": "x"}},
		{writeScopes, generated.ToolTaskUpdate, "id", "t" + b36(ids["invoice"]), "t" + b36(99999), map[string]any{"status": "completed"}},
		{writeScopes, generated.ToolTaskUpdate, "id", "t" + b36(ids["invoice"]), "t" + b36(99999), map[string]any{"status": "needs-action"}},
		{writeScopes, generated.ToolTaskDelete, "id", "t" + b36(ids["invoice"]), "t" + b36(99999), nil},
	}
	args := func(arg, id string, extra map[string]any) map[string]any {
		a := map[string]any{arg: id}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	for _, c := range byID {
		_, kept, isErr := call(c.scopes, c.tool, args(c.arg, c.kept, c.extra))
		_, missing, _ := call(c.scopes, c.tool, args(c.arg, c.missing, c.extra))
		if !isErr || kept != missing || !strings.Contains(strings.ToLower(kept), "there is no such") || !strings.Contains(kept, "postern project open") {
			t.Fatalf("%s of a kept id: %q; of a missing one: %q", c.tool, kept, missing)
		}
	}
	// Nothing new goes into the project, refused before anything is prepared.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{generated.ToolCalendarCreate, map[string]any{"summary": "x", "start": "2030-03-05 10:00", "calendar": "Acme"}},
		{generated.ToolTaskCreate, map[string]any{"summary": "x", "list": "AcmeTasks"}},
	} {
		if _, text, isErr := call(writeScopes, c.tool, c.args); !isErr || !strings.Contains(text, "will not write") || !strings.Contains(text, "project the person has not opened") {
			t.Fatalf("%s into the closed project: %v %s", c.tool, isErr, text)
		}
	}

	// Opened: everything appears at the next call.
	projects(acmeProject(true))
	sc = must(generated.ToolCalendarList, nil)
	if got := names(sc, "calendars", "name"); got != "Acme,AcmeBook,AcmeTasks,Chores,Contacts,Personal,Work" || sc["left_out"] != nil {
		t.Fatalf("calendar_list opened: %s, left_out %v", got, sc["left_out"])
	}
	sc, text, _ = m.call("read", generated.ToolAgenda, week)
	if got := names(sc, "events", "summary"); got != "Dentist,Lunch,Zanzibar kickoff,Zanzibar review" || sc["left_out"] != nil || !strings.Contains(text, "Zanzibar broken") {
		t.Fatalf("agenda opened: %s, left_out %v\n%s", got, sc["left_out"], text)
	}
	sc, _ = m.must("read", generated.ToolCalendarFreebusy, week)
	if len(rows(sc, "busy")) != 4 || sc["left_out"] != nil {
		t.Fatalf("freebusy opened: %v", sc)
	}
	sc, _ = m.must("read", generated.ToolTaskList, nil)
	if got := names(sc, "tasks", "summary"); got != "Buy milk,Zanzibar invoice" || sc["left_out"] != nil {
		t.Fatalf("task_list opened: %v", sc)
	}
	sc, _ = m.must("read", generated.ToolContactsSearch, map[string]any{"query": projectWord})
	if got := names(sc, "contacts", "name"); got != "Dana Zanzibar,Zed Zanzibar" || sc["left_out"] != nil {
		t.Fatalf("contacts_search opened: %v", sc)
	}
	for _, c := range byID[:5] {
		m.must("read", c.tool, map[string]any{c.arg: c.kept})
	}
	// The writes now pass the projects and stop where any write to a folder of .ics files does.
	_, text, _ = m.call(writeScopes, generated.ToolCalendarUpdate, map[string]any{"id": "e" + b36(ids["tied"]), "summary": "x"})
	if !strings.Contains(text, "read-only folder of .ics files") {
		t.Fatalf("calendar_update opened: %s", text)
	}
	_, text, _ = m.call(writeScopes, generated.ToolCalendarCreate, map[string]any{"summary": "x", "start": "2030-03-05 10:00", "calendar": "Acme"})
	if !strings.Contains(text, "read-only folder of .ics files") {
		t.Fatalf("calendar_create opened: %s", text)
	}

	// An unreadable projects file shows nothing.
	projects("[[project]\n")
	if _, text, isErr := m.call("read", generated.ToolAgenda, week); !isErr || !strings.Contains(text, "projects file") {
		t.Fatalf("agenda with a broken projects file: %v %s", isErr, text)
	}
}

// TestCalendarProjectsOutsideClosed: with outside = false only the open project's
// things come (and one tied to it from a collection of no project); writes into a
// calendar of no project are refused.
func TestCalendarProjectsOutsideClosed(t *testing.T) {
	m, ids, projects := projectCalendars(t)
	projects("[projects]\noutside = false\n\n" + acmeProject(false) + `
[[project]]
id = "home"
open = true
calendars = ["Work"]
task_lists = ["Chores"]
ties = ["contact:o"]
`)
	week := map[string]any{"from": "2030-03-04", "to": "2030-03-10"}
	sc, _ := m.must("read", generated.ToolCalendarList, nil)
	if got := names(sc, "calendars", "name"); got != "Chores,Work" || leftOut(sc) != 5 {
		t.Fatalf("calendar_list: %s, left_out %v", got, sc["left_out"])
	}
	// The tied event is in two projects, one closed: kept. The dentist is in none.
	sc, _ = m.must("read", generated.ToolAgenda, week)
	if got := names(sc, "events", "summary"); got != "Lunch" || leftOut(sc) != 3 {
		t.Fatalf("agenda: %s, left_out %v", got, sc["left_out"])
	}
	sc, _ = m.must("read", generated.ToolTaskList, nil)
	if got := names(sc, "tasks", "summary"); got != "Buy milk" || leftOut(sc) != 1 {
		t.Fatalf("task_list: %s, left_out %v", got, sc["left_out"])
	}
	// Omar, tied to the open project, comes from an address book of no project.
	sc, _ = m.must("read", generated.ToolContactsSearch, map[string]any{"query": "a"})
	if got := names(sc, "contacts", "name"); got != "Omar Haddad" || leftOut(sc) != 3 {
		t.Fatalf("contacts_search: %s, left_out %v", got, sc["left_out"])
	}
	_, kept, _ := m.call("read", generated.ToolContactGet, map[string]any{"id": "c" + b36(ids["pat"])})
	_, missing, _ := m.call("read", generated.ToolContactGet, map[string]any{"id": "c" + b36(99999)})
	if kept != missing {
		t.Fatalf("contact_get of a contact of no project: %q; missing: %q", kept, missing)
	}
	_, kept, _ = m.call("read", generated.ToolCalendarEvent, map[string]any{"id": "e" + b36(ids["dentist"])})
	_, missing, _ = m.call("read", generated.ToolCalendarEvent, map[string]any{"id": "e" + b36(99999)})
	if kept != missing {
		t.Fatalf("calendar_event of an event of no project: %q; missing: %q", kept, missing)
	}
	m.must("read", generated.ToolContactGet, map[string]any{"id": "c" + b36(ids["omar"])})

	_, text, isErr := m.call(writeScopes, generated.ToolCalendarCreate, map[string]any{"summary": "x", "start": "2030-03-05 10:00", "calendar": "Personal"})
	if !isErr || !strings.Contains(text, "outside the person's projects") {
		t.Fatalf("calendar_create into a calendar of no project: %s", text)
	}
	_, text, _ = m.call(writeScopes, generated.ToolCalendarCreate, map[string]any{"summary": "x", "start": "2030-03-05 10:00", "calendar": "Work"})
	if !strings.Contains(text, "read-only folder of .ics files") {
		t.Fatalf("calendar_create into the open project's calendar: %s", text)
	}
	_, text, _ = m.call(writeScopes, generated.ToolTaskCreate, map[string]any{"summary": "x", "list": "Chores"})
	if !strings.Contains(text, "read-only folder of .ics files") {
		t.Fatalf("task_create into the open project's list: %s", text)
	}
}

// TestStatusWarningsKept: status names what a sync skipped, but not in what a closed project
// keeps; the person at the terminal sees every warning.
func TestStatusWarningsKept(t *testing.T) {
	m, _, projects := projectCalendars(t)
	projects(acmeProject(false))
	warnings := func() string {
		sc, text, isErr := m.call("read", generated.ToolStatus, nil)
		if isErr {
			t.Fatalf("status: %s", text)
		}
		return fmt.Sprint(sc["accounts"])
	}
	if got := warnings(); strings.Contains(strings.ToLower(got), projectWord) || !strings.Contains(got, "Work: bad.ics") {
		t.Fatalf("an agent's status with acme closed: %s", got)
	}
	m.Era = ""
	if got := warnings(); !strings.Contains(strings.ToLower(got), projectWord) || !strings.Contains(got, "Work: bad.ics") {
		t.Fatalf("the terminal's status: %s", got)
	}
	m.Era = "legacy"
	projects(acmeProject(true))
	if got := warnings(); !strings.Contains(strings.ToLower(got), projectWord) {
		t.Fatalf("an agent's status with acme open: %s", got)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/testing/davtest"
)

// calendarWrite says whether a tool writes events or tasks (each is reversible, undone by mail_undo).
func calendarWrite(spec generated.ToolSpec) bool {
	return spec.Scope == generated.ScopeCalendarWrite || spec.Scope == generated.ScopeTasksWrite
}

// The fixtures: a week (2026-10-26 to 11-02) seen from Europe/Paris, across the EU change
// (10-25) and the US one (11-01).
var (
	teamSyncICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:team-e2e@example.org
DTSTAMP:20260901T000000Z
DTSTART;TZID=Europe/Paris:20261005T100000
DTEND;TZID=Europe/Paris:20261005T110000
RRULE:FREQ=WEEKLY;BYDAY=MO,TH
EXDATE;TZID=Europe/Paris:20261102T100000
SUMMARY:Team sync
END:VEVENT
BEGIN:VEVENT
UID:team-e2e@example.org
DTSTAMP:20260901T000000Z
RECURRENCE-ID;TZID=Europe/Paris:20261029T100000
DTSTART;TZID=Europe/Paris:20261030T140000
DTEND;TZID=Europe/Paris:20261030T150000
SUMMARY:Team sync
LOCATION:Room B
END:VEVENT
END:VCALENDAR
`)
	conferenceICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:conf-e2e@example.org
DTSTAMP:20260901T000000Z
DTSTART;VALUE=DATE:20261028
DTEND;VALUE=DATE:20261030
SUMMARY:Conference
END:VEVENT
END:VCALENDAR
`)
	nyCallICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:ny-e2e@example.org
DTSTAMP:20260901T000000Z
DTSTART;TZID=America/New_York:20261019T090000
DTEND;TZID=America/New_York:20261019T100000
RRULE:FREQ=WEEKLY;BYDAY=MO
SUMMARY:NY call
END:VEVENT
END:VCALENDAR
`)
	lunchICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:lunch-e2e@example.org
DTSTAMP:20260901T000000Z
DTSTART:20261027T123000
DTEND:20261027T133000
SUMMARY:Lunch
END:VEVENT
END:VCALENDAR
`)
	// An event another client wrote, with a property of its own, for the update test.
	reviewICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Other Client//EN
BEGIN:VEVENT
UID:review-e2e@example.org
DTSTAMP:20260901T000000Z
DTSTART;TZID=Europe/Paris:20261112T160000
DTEND;TZID=Europe/Paris:20261112T170000
SUMMARY:Review
LOCATION:Room 3
X-OTHER-CLIENT-TAG:keep-me-42
DESCRIPTION:Bring the slides.
END:VEVENT
END:VCALENDAR
`)
	priyaVCF = davtest.CRLF("BEGIN:VCARD\nVERSION:3.0\nUID:priya-e2e\nFN:Priya Raman\nN:Raman;Priya;;;\nEMAIL;TYPE=work:priya.raman@example.org\nTEL;TYPE=cell:+44 20 7946 0000\nORG:Example Org\nEND:VCARD\n")
	omarVCF  = davtest.CRLF("BEGIN:VCARD\nVERSION:3.0\nUID:omar-e2e\nFN:Omar Haddad\nEMAIL:omar@haddad.example\nEND:VCARD\n")
)

// davHome is a HOME whose configuration has the person in Europe/Paris, commits approved
// by the host, and one CalDAV/CardDAV account added by postern account add, with
// discovery from the server's root URL, and synced.
type davHome struct {
	env                []string
	cfg                string
	u                  *davtest.User
	srv                *davtest.Server
	calName, tasksName string
	cal, tasks, book   string // collection URLs
	team, review, ny   string // object URLs
}

func newDavHome(t *testing.T, srv *davtest.Server) *davHome {
	t.Helper()
	u := srv.NewUser(t)
	h := &davHome{env: home(t), u: u, srv: srv}
	dir := t.TempDir()
	h.cfg = filepath.Join(dir, "config.toml")
	if err := os.WriteFile(h.cfg, []byte("time_zone = \"Europe/Paris\"\n\n[approval]\nmode = \"host\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Xandikos has one principal for every test: names of this test's own.
	h.calName, h.tasksName = davtest.Unique("Work "), davtest.Unique("Tasks ")
	h.cal = u.MkCalendar(t, davtest.Unique("work"), h.calName, "#3366ffff", "VEVENT")
	h.tasks = u.MkCalendar(t, davtest.Unique("tasks"), h.tasksName, "", "VTODO")
	h.book = u.MkAddressBook(t, davtest.Unique("book"), davtest.Unique("Contacts "))
	h.team, h.review, h.ny = h.cal+"team.ics", h.cal+"review.ics", h.cal+"ny.ics"
	u.Put(t, h.team, teamSyncICS)
	u.Put(t, h.cal+"conference.ics", conferenceICS)
	u.Put(t, h.ny, nyCallICS)
	u.Put(t, h.cal+"lunch.ics", lunchICS)
	u.Put(t, h.review, reviewICS)
	u.Put(t, h.book+"priya.vcf", priyaVCF)
	u.Put(t, h.book+"omar.vcf", omarVCF)
	if out, errOut, code := runCLI(t, h.env, "account", "add", "cal", "--caldav", srv.URL, "--carddav", srv.URL,
		"--user", u.Name, "--password-cmd", u.PasswordCmd(), "--config", h.cfg); code != 0 {
		t.Fatalf("account add: %d %s %s", code, out, errOut)
	}
	h.sync(t)
	return h
}

func (h *davHome) sync(t *testing.T) {
	t.Helper()
	if out, errOut, code := runCLI(t, h.env, "sync", "--config", h.cfg); code != 0 {
		t.Fatalf("postern sync: %s %s", out, errOut)
	}
}

func (h *davHome) connect(t *testing.T, scopes string) *mcp.ClientSession {
	t.Helper()
	mb := &mailbox{env: h.env, cfg: h.cfg}
	return mb.connect(t, scopes, nil)
}

// agendaRows is agenda's events of the test's calendar between from and to, by summary.
func agendaRows(t *testing.T, cs *mcp.ClientSession, calName, from, to string) []map[string]any {
	t.Helper()
	sc, text, isErr := call(t, cs, "agenda", map[string]any{"from": from, "to": to, "calendar": calName})
	if isErr {
		t.Fatalf("agenda: %s", text)
	}
	var out []map[string]any
	for _, e := range sc["events"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func rowLine(e map[string]any) string {
	s := fmt.Sprintf("%v | %v | %v", e["summary"], e["start"], e["end"])
	if e["event_start"] != nil {
		s += fmt.Sprintf(" | own %v", e["event_start"])
	}
	if e["all_day"] == true {
		s += " | all day"
	}
	if e["floating"] == true {
		s += " | floating"
	}
	return s
}

// checkAgenda is must-show 1 (and 5, on Xandikos): the week's events at the times written here.
func checkAgenda(t *testing.T, srv *davtest.Server) {
	h := newDavHome(t, srv)
	cs := h.connect(t, "read")
	var got []string
	for _, e := range agendaRows(t, cs, h.calName, "2026-10-26", "2026-11-02") {
		got = append(got, rowLine(e))
	}
	want := []string{
		"Team sync | 2026-10-26 10:00 Europe/Paris | 2026-10-26 11:00 Europe/Paris | own 2026-10-26 10:00 Europe/Paris",
		// 09:00 in New York is 14:00 in Paris between the two changes (EDT, CET)…
		"NY call | 2026-10-26 14:00 Europe/Paris | 2026-10-26 15:00 Europe/Paris | own 2026-10-26 09:00 America/New_York",
		"Lunch | 2026-10-27 12:30 Europe/Paris | 2026-10-27 13:30 Europe/Paris | floating",
		"Conference | 2026-10-28 | 2026-10-29 | all day",
		// …the Thursday instance moved to Friday afternoon…
		"Team sync | 2026-10-30 14:00 Europe/Paris | 2026-10-30 15:00 Europe/Paris | own 2026-10-30 14:00 Europe/Paris",
		// …and 15:00 once New York has changed too; the Monday team sync of 11-02 is cancelled.
		"NY call | 2026-11-02 15:00 Europe/Paris | 2026-11-02 16:00 Europe/Paris | own 2026-11-02 09:00 America/New_York",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("agenda of the week on %s:\n%s\nwant:\n%s", srv.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCalendarAgendaRadicale(t *testing.T) { checkAgenda(t, davtest.Radicale(t)) }
func TestCalendarAgendaXandikos(t *testing.T) { checkAgenda(t, davtest.Xandikos(t)) }

// write calls the calendar or task write name with args, after its dry run, failing on an
// error of either; it returns the dry run's answer and the write's.
func write(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (dry, res map[string]any) {
	t.Helper()
	dry, text, isErr := call(t, cs, name, with(args, "dry_run", true))
	if isErr || dry["dry_run"] != true {
		t.Fatalf("%s dry_run: %s", name, text)
	}
	res, text, isErr = call(t, cs, name, args)
	if isErr || res["action_id"] == nil {
		t.Fatalf("%s: %s", name, text)
	}
	return dry, res
}

func eventIDOf(t *testing.T, rows []map[string]any, summary, start string) string {
	t.Helper()
	for _, e := range rows {
		if e["summary"] == summary && strings.HasPrefix(e["start"].(string), start) {
			return e["id"].(string)
		}
	}
	t.Fatalf("no %s at %s in %v", summary, start, rows)
	return ""
}

var hrefRE = regexp.MustCompile(`<(?:[A-Za-z]+:)?href>([^<]+\.ics)</(?:[A-Za-z]+:)?href>`)

// hrefs are the objects of a collection, by a raw PROPFIND of the test's own.
func (h *davHome) hrefs(t *testing.T, coll string) []string {
	t.Helper()
	st, _, body := h.u.Do(t, "PROPFIND", coll, map[string]string{"Depth": "1", "Content-Type": "application/xml"},
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>`)
	if st != 207 {
		t.Fatalf("PROPFIND %s: %d", coll, st)
	}
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// abs is an href of the server made absolute.
func (h *davHome) abs(href string) string {
	return strings.TrimSuffix(h.srv.URL, "/") + "/" + strings.TrimPrefix(href, "/")
}

// physicalLines are a text's lines, line ends and folding kept.
func physicalLines(s string) []string { return strings.SplitAfter(s, "\n") }

// TestCalendarWrites is must-show 2 against Radicale: create (read back by a raw GET),
// an update of one field keeping every other line, an update refused after someone else
// changed the event, one instance changed and one cancelled.
func TestCalendarWrites(t *testing.T) {
	h := newDavHome(t, davtest.Radicale(t))
	cs := h.connect(t, "read,calendar:write")

	// Create: the dry run shows the event as it will be stored; the server holds it after.
	args := map[string]any{"summary": "Dentist", "start": "2026-11-10 09:30", "end": "2026-11-10 10:15", "location": "12 rue Oberkampf",
		"description": "Bring the form.\nAsk about the bill.", "calendar": h.calName}
	prep, res := write(t, cs, "calendar_create", args)
	pv, _ := json.Marshal(prep["lines"])
	for _, want := range []string{"Start: 2026-11-10 09:30 Europe/Paris", "End: 2026-11-10 10:15 Europe/Paris", "Location: 12 rue Oberkampf", "Bring the form."} {
		if !strings.Contains(string(pv), want) {
			t.Errorf("the preview %s lacks %q", pv, want)
		}
	}
	if res["outcome"] != "created" || res["event"].(map[string]any)["start"] != "2026-11-10 09:30 Europe/Paris" {
		t.Fatalf("create: %v", res)
	}
	var created string
	for _, href := range h.hrefs(t, h.cal) {
		if data, _ := h.u.Get(t, h.abs(href)); strings.Contains(data, "SUMMARY:Dentist") {
			created = data
		}
	}
	if !strings.Contains(created, "DTSTART;TZID=Europe/Paris:20261110T093000") || !strings.Contains(created, "LOCATION:12 rue Oberkampf") || strings.Contains(created, "ATTENDEE") {
		t.Fatalf("the server holds:\n%s", created)
	}
	// agenda shows it at once, without a sync.
	if rows := agendaRows(t, cs, h.calName, "2026-11-10", "2026-11-10"); len(rows) != 1 || rows[0]["summary"] != "Dentist" {
		t.Fatalf("agenda after the create: %v", rows)
	}

	// An update of the title keeps every other line of the server's copy byte for byte.
	before, _ := h.u.Get(t, h.review)
	reviewID := eventIDOf(t, agendaRows(t, cs, h.calName, "2026-11-12", "2026-11-12"), "Review", "2026-11-12 16:00")
	write(t, cs, "calendar_update", map[string]any{"id": reviewID, "summary": "Review (room 4)"})
	after, _ := h.u.Get(t, h.review)
	i := 0
	afterLines := physicalLines(after)
	for _, l := range physicalLines(before) {
		if strings.HasPrefix(l, "SUMMARY:") || strings.HasPrefix(l, "DTSTAMP:") {
			continue
		}
		for i < len(afterLines) && afterLines[i] != l {
			i++
		}
		if i == len(afterLines) {
			t.Fatalf("the line %q of the server's copy was not kept:\nbefore:\n%s\nafter:\n%s", l, before, after)
		}
	}
	if !strings.Contains(after, "SUMMARY:Review (room 4)") || !strings.Contains(after, "X-OTHER-CLIENT-TAG:keep-me-42") {
		t.Fatalf("after the update:\n%s", after)
	}

	// Someone else changes the event after postern read it: refused, saying what, and nothing
	// is written.
	upd := map[string]any{"id": reviewID, "location": "Room 5"}
	h.u.Put(t, h.review, strings.Replace(after, "DESCRIPTION:Bring the slides.", "DESCRIPTION:Bring the printed slides.", 1))
	_, text, isErr := call(t, cs, "calendar_update", upd)
	if !isErr || !strings.Contains(text, "changed on the server since it was read") || !strings.Contains(text, "description") {
		t.Fatalf("a write over someone else's change: %v %s", isErr, text)
	}
	if now, _ := h.u.Get(t, h.review); strings.Contains(now, "Room 5") {
		t.Fatalf("the refused update was written:\n%s", now)
	}
	// The same with a dry run.
	changed, _ := h.u.Get(t, h.review)
	h.u.Put(t, h.review, strings.Replace(changed, "LOCATION:Room 3", "LOCATION:Room 7", 1))
	_, text, isErr = call(t, cs, "calendar_update", with(upd, "dry_run", true))
	if !isErr || !strings.Contains(text, "location changed") {
		t.Fatalf("a dry run over a stale copy: %v %s", isErr, text)
	}
	// Read again (the refusal took the server's copy), it goes through.
	write(t, cs, "calendar_update", upd)
	if now, _ := h.u.Get(t, h.review); !strings.Contains(now, "LOCATION:Room 5") || !strings.Contains(now, "printed slides") {
		t.Fatalf("after reading again:\n%s", now)
	}

	// One instance changed (a RECURRENCE-ID override), one cancelled (an EXDATE on the master).
	rows := agendaRows(t, cs, h.calName, "2026-10-19", "2026-10-25")
	thursday := eventIDOf(t, rows, "Team sync", "2026-10-22 10:00")
	monday := eventIDOf(t, rows, "Team sync", "2026-10-19 10:00")
	write(t, cs, "calendar_update", map[string]any{"id": thursday, "location": "Room C"})
	// A cancel with a field to change, the old tool's name, and nothing asked: each refused in
	// one sentence, the series on the server as it was.
	series, _ := h.u.Get(t, h.team)
	for _, c := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"calendar_update", map[string]any{"id": monday, "cancel": true, "location": "Room D"}, []string{"cancel takes no other field", "location given"}},
		{"calendar_update", map[string]any{"id": monday, "cancel": true, "summary": "Off", "start": "2026-10-19 11:00", "dry_run": true}, []string{"cancel takes no other field", "summary, start given"}},
		{"calendar_update", map[string]any{"id": monday, "cancel": false}, []string{"nothing to change", "cancel: true"}},
	} {
		_, text, isErr := call(t, cs, c.name, c.args)
		for _, w := range c.want {
			if !isErr || !strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
				t.Fatalf("%s %v: %v %q, want %q", c.name, c.args, isErr, text, w)
			}
		}
		if now, _ := h.u.Get(t, h.team); now != series {
			t.Fatalf("%s %v changed the series:\n%s", c.name, c.args, now)
		}
	}
	// The old name is answered with the replacement's, and does nothing.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "calendar_cancel", Arguments: map[string]any{"id": monday}}); err == nil ||
		!strings.Contains(err.Error(), "calendar_cancel was replaced by calendar_update") {
		t.Fatalf("calendar_cancel: %v", err)
	}
	if now, _ := h.u.Get(t, h.team); now != series {
		t.Fatalf("calendar_cancel changed the series:\n%s", now)
	}
	_, res = write(t, cs, "calendar_update", map[string]any{"id": monday, "cancel": true})
	if res["outcome"] != "cancelled" {
		t.Fatalf("cancel: %v", res)
	}
	team, _ := h.u.Get(t, h.team)
	if !strings.Contains(team, "EXDATE;TZID=Europe/Paris:20261019T100000") || !strings.Contains(team, "RECURRENCE-ID;TZID=Europe/Paris:20261022T100000") ||
		!strings.Contains(team, "LOCATION:Room C") || !strings.Contains(team, "EXDATE;TZID=Europe/Paris:20261102T100000") {
		t.Fatalf("the series on the server:\n%s", team)
	}
	var got []string
	for _, e := range agendaRows(t, cs, h.calName, "2026-10-19", "2026-10-25") {
		if e["summary"] == "Team sync" {
			got = append(got, fmt.Sprintf("%v %v %v", e["summary"], e["start"], e["location"]))
		}
	}
	if strings.Join(got, "; ") != "Team sync 2026-10-22 10:00 Europe/Paris Room C" {
		t.Fatalf("agenda after the instance writes: %v", got)
	}

	// A whole event without attendees is deleted, with If-Match.
	_, res = write(t, cs, "calendar_update", map[string]any{"id": eventIDOf(t, agendaRows(t, cs, h.calName, "2026-10-27", "2026-10-27"), "Lunch", "2026-10-27"), "cancel": true})
	if st, _, _ := h.u.Do(t, "GET", h.cal+"lunch.ics", nil, ""); res["outcome"] != "deleted" || st != 404 {
		t.Fatalf("delete: %v, GET %d", res, st)
	}
}

// TestTasksAndContacts is must-show 3 against Radicale.
func TestTasksAndContacts(t *testing.T) {
	h := newDavHome(t, davtest.Radicale(t))
	cs := h.connect(t, "read,tasks:write")
	_, res := write(t, cs, "task_create", map[string]any{"summary": "Pay the invoice", "due": "2026-11-05", "priority": 2, "list": h.tasksName})
	tk := res["task"].(map[string]any)
	if res["outcome"] != "created" || tk["due"] != "2026-11-05" || tk["status"] != "needs-action" {
		t.Fatalf("task_create: %v", res)
	}
	id := tk["id"].(string)
	raw := func() (string, int) {
		for _, href := range h.hrefs(t, h.tasks) {
			if data, _ := h.u.Get(t, h.abs(href)); strings.Contains(data, "Pay the invoice") {
				return data, 200
			}
		}
		return "", 404
	}
	if data, _ := raw(); !strings.Contains(data, "DUE;VALUE=DATE:20261105") || !strings.Contains(data, "PRIORITY:2") {
		t.Fatalf("the server holds:\n%s", data)
	}
	_, res = write(t, cs, "task_update", map[string]any{"id": id, "status": "completed"})
	if data, _ := raw(); res["outcome"] != "completed" || res["task"].(map[string]any)["status"] != "completed" || !strings.Contains(data, "STATUS:COMPLETED") || !strings.Contains(data, "\nCOMPLETED:") {
		t.Fatalf("task_update to completed: %v\n%s", res, data)
	}
	_, res = write(t, cs, "task_update", map[string]any{"id": id, "status": "needs-action"})
	if data, _ := raw(); res["outcome"] != "reopened" || res["task"].(map[string]any)["status"] != "needs-action" || !strings.Contains(data, "STATUS:NEEDS-ACTION") || strings.Contains(data, "\nCOMPLETED:") {
		t.Fatalf("task_update to needs-action: %v\n%s", res, data)
	}
	// Completed and changed in one call: both are written.
	_, res = write(t, cs, "task_update", map[string]any{"id": id, "status": "completed", "priority": 1})
	if data, _ := raw(); res["outcome"] != "completed" || res["action"] != "change the task and mark it completed" || !strings.Contains(data, "STATUS:COMPLETED") || !strings.Contains(data, "PRIORITY:1") {
		t.Fatalf("task_update to completed with a priority: %v\n%s", res, data)
	}
	_, res = write(t, cs, "task_delete", map[string]any{"id": id})
	if _, st := raw(); res["outcome"] != "deleted" || st != 404 {
		t.Fatalf("task_delete: %v, still on the server", res)
	}
	if sc, _, _ := call(t, cs, "task_list", map[string]any{"state": "all"}); len(sc["tasks"].([]any)) != 0 {
		t.Fatalf("task_list after the delete: %v", sc)
	}
	// Contacts: by name, and by part of an address.
	for q, want := range map[string]string{"priya": "Priya Raman", "raman@example.o": "Priya Raman", "haddad.exam": "Omar Haddad"} {
		sc, text, isErr := call(t, cs, "contacts_search", map[string]any{"query": q})
		cs := sc["contacts"].([]any)
		if isErr || len(cs) != 1 || cs[0].(map[string]any)["name"] != want {
			t.Errorf("contacts_search %q: %s", q, text)
		}
	}
}

// calendarReadTool says whether a tool reads calendars, tasks or contacts.
func calendarReadTool(spec generated.ToolSpec) bool {
	n := spec.Name
	return spec.Phase == "" && spec.Effect == generated.EffectNone &&
		(strings.HasPrefix(n, "calendar_") || n == generated.ToolAgenda || strings.HasPrefix(n, "task_") || strings.HasPrefix(n, "contact") || n == generated.ToolNow)
}

// TestCalendarAnswersValidate: every calendar, task and contact read tool, called with real
// ids over a Radicale account, answers structuredContent that validates against its outputSchema.
func TestCalendarAnswersValidate(t *testing.T) {
	h := newDavHome(t, davtest.Radicale(t))
	h.u.Put(t, h.tasks+"task.ics", davtest.CRLF("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:task-e2e\nDTSTAMP:20260901T000000Z\nSUMMARY:File the report\nDUE;VALUE=DATE:20261105\nDESCRIPTION:In the drawer.\nEND:VTODO\nEND:VCALENDAR\n"))
	h.sync(t)
	cs := h.connect(t, "read")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string][2][]byte{}
	for _, tl := range list.Tools {
		in, _ := json.Marshal(tl.InputSchema)
		out, _ := json.Marshal(tl.OutputSchema)
		schemas[tl.Name] = [2][]byte{in, out}
	}
	rows := agendaRows(t, cs, h.calName, "2026-10-26", "2026-11-02")
	tasks, _, _ := call(t, cs, "task_list", map[string]any{})
	contacts, _, _ := call(t, cs, "contacts_search", map[string]any{"query": "priya"})
	ids := map[string]any{
		"event":   eventIDOf(t, rows, "Team sync", "2026-10-30"),
		"task":    tasks["tasks"].([]any)[0].(map[string]any)["id"],
		"contact": contacts["contacts"].([]any)[0].(map[string]any)["id"],
	}
	n := 0
	for _, spec := range generated.Tools {
		if !calendarReadTool(spec) {
			continue
		}
		n++
		sch := schemas[spec.Name]
		known := map[string]any{"query": "priya"}
		if kind := davLookups[spec.Name]; kind != "" {
			known["id"] = ids[kind]
		}
		args := sampleArgs(t, sch[0], known)
		if spec.Name == generated.ToolAgenda || spec.Name == generated.ToolCalendarFreebusy {
			args["from"], args["to"] = "2026-10-26", "2026-11-02"
		}
		sc, text, isErr := call(t, cs, spec.Name, args)
		if isErr {
			t.Errorf("%s %v: %s", spec.Name, args, text)
			continue
		}
		if err := compile(t, sch[1]).Validate(anyJSON(sc)); err != nil {
			t.Errorf("%s: %v", spec.Name, err)
		}
	}
	if n < 9 {
		t.Fatalf("only %d calendar read tools checked", n)
	}
}

// TestCalendarWritesValidate: every calendar and task write, its dry run, and mail_undo of
// it, against Radicale, answer structuredContent that validates against the outputSchema.
func TestCalendarWritesValidate(t *testing.T) {
	h := newDavHome(t, davtest.Radicale(t))
	cs := h.connect(t, allScopes())
	schemas := outputSchemas(t, cs)
	var taskID string
	// calendar_update runs twice: a change of fields and a cancellation; task_update three
	// times: a change of fields, completing and reopening.
	order := []string{"calendar_create", "calendar_update", "calendar_update:cancel", "task_create", "task_update", "task_update:completed", "task_update:needs-action", "task_delete"}
	args := map[string]func() map[string]any{
		"calendar_create": func() map[string]any {
			return map[string]any{"summary": "Valid", "start": "2026-12-01", "all_day": true, "calendar": h.calName, "recurrence": "FREQ=YEARLY"}
		},
		"calendar_update": func() map[string]any {
			return map[string]any{"id": eventIDOf(t, agendaRows(t, cs, h.calName, "2026-11-12", "2026-11-12"), "Review", "2026-11-12"), "start": "2026-11-12 17:00", "time_zone": "America/New_York"}
		},
		"calendar_update:cancel": func() map[string]any {
			return map[string]any{"id": eventIDOf(t, agendaRows(t, cs, h.calName, "2026-10-26", "2026-10-26"), "NY call", "2026-10-26"), "cancel": true}
		},
		"task_create": func() map[string]any {
			return map[string]any{"summary": "Valid task", "due": "2026-11-20 17:00", "list": h.tasksName}
		},
		"task_update":              func() map[string]any { return map[string]any{"id": taskID, "priority": 1, "status": "in-process"} },
		"task_update:completed":    func() map[string]any { return map[string]any{"id": taskID, "status": "completed"} },
		"task_update:needs-action": func() map[string]any { return map[string]any{"id": taskID, "status": "needs-action"} },
		"task_delete":              func() map[string]any { return map[string]any{"id": taskID} },
	}
	n := 0
	for _, spec := range generated.Tools {
		if calendarWrite(spec) {
			n++
			if args[spec.Name] == nil {
				t.Errorf("%s is a new calendar or task write: add its arguments to this test", spec.Name)
			}
		}
	}
	if n != len(args)-3 {
		t.Fatalf("%d calendar and task writes in the registry, %d in this test", n, len(args)-3)
	}
	for _, step := range order {
		a := args[step]()
		name, _, _ := strings.Cut(step, ":")
		dry, res := write(t, cs, name, a)
		for _, sc := range []map[string]any{dry, res} {
			if err := compile(t, schemas[name]).Validate(anyJSON(sc)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if name == "task_create" {
			taskID = res["task"].(map[string]any)["id"].(string)
		}
		if name == "task_delete" || step == "calendar_update:cancel" {
			// Undone (the task comes back, the event too): the undo's answers validate.
			id := res["action_id"].(string)
			for _, dry := range []bool{true, false} {
				u, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": id, "dry_run": dry})
				if isErr {
					t.Fatalf("mail_undo %s: %s", id, text)
				}
				if err := compile(t, schemas["mail_undo"]).Validate(anyJSON(u)); err != nil {
					t.Errorf("mail_undo of %s: %v", name, err)
				}
			}
		}
	}
	sc, text, isErr := call(t, cs, "mail_actions", map[string]any{})
	if isErr || len(sc["actions"].([]any)) != len(order)+2 {
		t.Fatalf("mail_actions: %s", text)
	}
	if err := compile(t, schemas["mail_actions"]).Validate(anyJSON(sc)); err != nil {
		t.Errorf("mail_actions: %v", err)
	}
	// The review moved to 17:00 New York time: written in that zone.
	if data, _ := h.u.Get(t, h.review); !strings.Contains(data, "DTSTART;TZID=America/New_York:20261112T170000") || !strings.Contains(data, "BEGIN:VTIMEZONE") {
		t.Errorf("the review after its move:\n%s", data)
	}
}

package main

import (
	"database/sql"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/internal/testing/davtest"
)

// Every write either undoes exactly (issue 23, must-show 2): each calendar and task write,
// against a real CalDAV server, seen only through the test's own HTTP requests (a PROPFIND of
// each collection and a GET of every object, never postern's client). A dry run changes
// nothing; the write changes the server; mail_undo puts every object back byte for byte; a
// second undo is refused; undoing the undo writes the change again, and undoing that puts the
// server back again; an undo after someone else changed the object changes nothing and says so.

// Fixtures beside newDavHome's: a meeting with attendees (cancelled by marking it), a task to
// change and one already done (reopened).
var (
	meetingICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Other Client//EN
BEGIN:VEVENT
UID:meeting-undo@example.org
DTSTAMP:20260901T000000Z
DTSTART;TZID=Europe/Paris:20261113T090000
DTEND;TZID=Europe/Paris:20261113T100000
SUMMARY:Board meeting
ORGANIZER:mailto:chair@example.org
ATTENDEE;CN=Ana;PARTSTAT=ACCEPTED:mailto:ana@example.org
X-OTHER-CLIENT-TAG:keep-me-7
END:VEVENT
END:VCALENDAR
`)
	plantsICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Other Client//EN
BEGIN:VTODO
UID:plants-undo@example.org
DTSTAMP:20260901T000000Z
SUMMARY:Water the plants
STATUS:NEEDS-ACTION
DUE;VALUE=DATE:20261105
X-OTHER-CLIENT-TAG:keep-me-8
END:VTODO
END:VCALENDAR
`)
	taxesICS = davtest.CRLF(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Other Client//EN
BEGIN:VTODO
UID:taxes-undo@example.org
DTSTAMP:20260901T000000Z
SUMMARY:File the taxes
STATUS:COMPLETED
COMPLETED:20260910T120000Z
PERCENT-COMPLETE:100
END:VTODO
END:VCALENDAR
`)
)

// rawState is every object of the collections as the server sends it: href → exact bytes.
func (h *davHome) rawState(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, coll := range []string{h.cal, h.tasks} {
		for _, href := range h.members(t, coll) {
			st, _, body := h.u.Do(t, "GET", h.abs(href), nil, "")
			if st != 200 {
				t.Fatalf("GET %s: %d", href, st)
			}
			out[href] = body
		}
	}
	return out
}

// members are the hrefs of a collection's objects, from a PROPFIND of the test's own read with
// encoding/xml (whatever prefix the server gives the DAV: namespace).
func (h *davHome) members(t *testing.T, coll string) []string {
	t.Helper()
	st, _, body := h.u.Do(t, "PROPFIND", coll, map[string]string{"Depth": "1", "Content-Type": "application/xml"},
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>`)
	if st != 207 {
		t.Fatalf("PROPFIND %s: %d", coll, st)
	}
	var ms struct {
		Responses []struct {
			Href string `xml:"DAV: href"`
		} `xml:"DAV: response"`
	}
	if err := xml.Unmarshal([]byte(body), &ms); err != nil {
		t.Fatalf("PROPFIND %s: %v\n%s", coll, err, body)
	}
	self := strings.TrimSuffix(strings.TrimPrefix(coll, strings.TrimSuffix(h.srv.URL, "/")), "/")
	var out []string
	for _, r := range ms.Responses {
		if href := strings.TrimSpace(r.Href); strings.TrimSuffix(href, "/") != self && !strings.HasSuffix(href, "/") {
			out = append(out, href)
		}
	}
	return out
}

// stateDiff says how two raw states differ ("" when identical, every byte of every object).
func stateDiff(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			out = append(out, "gone: "+k)
		case v != w:
			out = append(out, fmt.Sprintf("changed: %s\n--- was\n%s--- is\n%s", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "new: "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// backupFiles are the kept texts of events and tasks (the .ics files of the account's backups).
func (h *davHome) backupFiles(t *testing.T) map[string]bool {
	t.Helper()
	dir := filepath.Join(h.dataDir(), "postern", "backups", "cal")
	out := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".ics") {
			out[filepath.Join(dir, e.Name())] = true
		}
	}
	return out
}

func (h *davHome) dataDir() string {
	for _, kv := range h.env {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			return v
		}
	}
	return ""
}

// taskIDOf is the id task_list gives the task called summary in the list called list.
func taskIDOf(t *testing.T, cs *mcp.ClientSession, list, summary string) string {
	t.Helper()
	sc, text, isErr := call(t, cs, "task_list", map[string]any{"state": "all", "list": list})
	if isErr {
		t.Fatalf("task_list: %s", text)
	}
	for _, r := range sc["tasks"].([]any) {
		if r := r.(map[string]any); r["summary"] == summary {
			return r["id"].(string)
		}
	}
	t.Fatalf("no task %q in %s", summary, text)
	return ""
}

type undoCase struct {
	name, tool string
	args       func() map[string]any
	outcome    string // the write's outcome
	href       string // the object the write replaces ("" for a create)
}

// undoHome is a davHome with the fixtures of the undo cases.
func undoHome(t *testing.T, srv *davtest.Server) *davHome {
	h := newDavHome(t, srv)
	h.u.Put(t, h.cal+"meeting.ics", meetingICS)
	h.u.Put(t, h.tasks+"plants.ics", plantsICS)
	h.u.Put(t, h.tasks+"taxes.ics", taxesICS)
	h.sync(t)
	return h
}

// undoCases are the writes of must-show 2 on h's fixtures, through cs.
func undoCases(t *testing.T, h *davHome, cs *mcp.ClientSession) []*undoCase {
	hrefOf := func(url string) string { return strings.TrimPrefix(url, strings.TrimSuffix(h.srv.URL, "/")) }
	event := func(from, summary, start string) string {
		return eventIDOf(t, agendaRows(t, cs, h.calName, from, from), summary, start)
	}
	return []*undoCase{
		{name: "create an event", tool: "calendar_create", outcome: "created",
			args: func() map[string]any {
				return map[string]any{"summary": "Dentist", "start": "2026-11-10 09:30", "end": "2026-11-10 10:15", "location": "12 rue Oberkampf", "calendar": h.calName}
			}},
		{name: "update a whole event", tool: "calendar_update", outcome: "updated", href: hrefOf(h.review),
			args: func() map[string]any {
				return map[string]any{"id": event("2026-11-12", "Review", "2026-11-12 16:00"), "summary": "Review (room 4)", "start": "2026-11-12 17:00"}
			}},
		{name: "update one instance", tool: "calendar_update", outcome: "updated", href: hrefOf(h.team),
			args: func() map[string]any {
				return map[string]any{"id": event("2026-10-22", "Team sync", "2026-10-22 10:00"), "location": "Room C"}
			}},
		{name: "cancel by deleting", tool: "calendar_update", outcome: "deleted", href: hrefOf(h.cal + "lunch.ics"),
			args: func() map[string]any {
				return map[string]any{"id": event("2026-10-27", "Lunch", "2026-10-27"), "cancel": true}
			}},
		{name: "cancel by marking, with attendees", tool: "calendar_update", outcome: "cancelled", href: hrefOf(h.cal + "meeting.ics"),
			args: func() map[string]any {
				return map[string]any{"id": event("2026-11-13", "Board meeting", "2026-11-13"), "cancel": true}
			}},
		{name: "cancel one instance", tool: "calendar_update", outcome: "cancelled", href: hrefOf(h.team),
			args: func() map[string]any {
				return map[string]any{"id": event("2026-10-19", "Team sync", "2026-10-19 10:00"), "cancel": true}
			}},
		{name: "create a task", tool: "task_create", outcome: "created",
			args: func() map[string]any {
				return map[string]any{"summary": "Pay the invoice", "due": "2026-11-05", "priority": 2, "list": h.tasksName}
			}},
		{name: "update a task", tool: "task_update", outcome: "updated", href: hrefOf(h.tasks + "plants.ics"),
			args: func() map[string]any {
				return map[string]any{"id": taskIDOf(t, cs, h.tasksName, "Water the plants"), "priority": 1, "due": "", "description": "The ferns first."}
			}},
		{name: "complete a task", tool: "task_update", outcome: "completed", href: hrefOf(h.tasks + "plants.ics"),
			args: func() map[string]any {
				return map[string]any{"id": taskIDOf(t, cs, h.tasksName, "Water the plants"), "status": "completed"}
			}},
		{name: "reopen a task", tool: "task_update", outcome: "reopened", href: hrefOf(h.tasks + "taxes.ics"),
			args: func() map[string]any {
				return map[string]any{"id": taskIDOf(t, cs, h.tasksName, "File the taxes"), "status": "needs-action"}
			}},
		{name: "delete a task", tool: "task_delete", outcome: "deleted", href: hrefOf(h.tasks + "plants.ics"),
			args: func() map[string]any { return map[string]any{"id": taskIDOf(t, cs, h.tasksName, "Water the plants")} }},
	}
}

func checkUndoExact(t *testing.T, srv *davtest.Server) {
	// Each case on a home of its own, so that none starts from another's leftovers.
	for i := range undoCases(t, &davHome{srv: srv}, nil) {
		h := undoHome(t, srv)
		cs := h.connect(t, "read,calendar:write,tasks:write,mail:modify")
		c := undoCases(t, h, cs)[i]
		t.Run(c.name, func(t *testing.T) { checkUndoCase(t, h, cs, c) })
	}
}

// checkUndoCase is one write of must-show 2, seen by raw GETs of the server.
func checkUndoCase(t *testing.T, h *davHome, cs *mcp.ClientSession, c *undoCase) {
	undo := func(id string) map[string]any {
		t.Helper()
		sc, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": id})
		if isErr {
			t.Fatalf("mail_undo %s: %s", id, text)
		}
		return sc
	}
	// The other client's change: one more line in the object the write left (or, when the
	// write removed it, a new object at its place).
	changeObject := func(href string) func(map[string]string) {
		return func(written map[string]string) {
			data, ok := written[href]
			if !ok {
				h.u.Put(t, h.abs(href), strings.Replace(meetingICS, "meeting-undo@example.org", "someone-else@example.org", 1))
				return
			}
			h.u.Put(t, h.abs(href), strings.Replace(data, "\r\nEND:", "\r\nX-SOMEONE-ELSE:was here\r\nEND:", 1))
		}
	}
	before := h.rawState(t)
	if c.href != "" && before[c.href] == "" {
		t.Fatalf("the fixture %s is not on the server: %v", c.href, before)
	}
	args := c.args()

	// A dry run shows the result and changes nothing.
	dry, text, isErr := call(t, cs, c.tool, with(args, "dry_run", true))
	if isErr || dry["dry_run"] != true || dry["action_id"] != nil || len(dry["lines"].([]any)) == 0 || dry["outcome"] != c.outcome {
		t.Fatalf("dry run: %v %s", isErr, text)
	}
	if d := stateDiff(before, h.rawState(t)); d != "" {
		t.Fatalf("the dry run changed the server:\n%s", d)
	}

	// The write changes the server, keeping the text it replaced byte for byte (0600).
	kept := h.backupFiles(t)
	res, text, isErr := call(t, cs, c.tool, args)
	if isErr || res["outcome"] != c.outcome || res["action_id"] == nil || res["dry_run"] != nil {
		t.Fatalf("write: %v %s", isErr, text)
	}
	id := res["action_id"].(string)
	written := h.rawState(t)
	if stateDiff(before, written) == "" {
		t.Fatalf("the write changed nothing on the server")
	}
	var backup string
	for f := range h.backupFiles(t) {
		if !kept[f] {
			if backup != "" {
				t.Fatalf("two backups for one write: %s, %s", backup, f)
			}
			backup = f
		}
	}
	if c.href == "" && backup != "" || c.href != "" && backup == "" {
		t.Fatalf("backup %q for a write replacing %q", backup, c.href)
	}
	if backup != "" {
		b, _ := os.ReadFile(backup)
		fi, _ := os.Stat(backup)
		di, _ := os.Stat(filepath.Dir(backup))
		if string(b) != before[c.href] || fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Fatalf("the backup %s (%v, folder %v) is not the text the write replaced:\n%s", backup, fi.Mode(), di.Mode(), b)
		}
	}

	// The undo puts every object back, byte for byte; its dry run changes nothing.
	sc, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": id, "dry_run": true})
	if isErr || sc["changed"] != float64(1) || stateDiff(written, h.rawState(t)) != "" {
		t.Fatalf("undo dry run: %v %s", isErr, text)
	}
	u1 := undo(id)
	if d := stateDiff(before, h.rawState(t)); d != "" {
		t.Fatalf("after mail_undo %s (%v) the server differs from before:\n%s", id, u1, d)
	}
	row := u1["messages"].([]any)[0].(map[string]any)
	if u1["changed"] != float64(1) || (row["outcome"] != "put_back" && row["outcome"] != "restored") || u1["action_id"] == nil {
		t.Fatalf("mail_undo answered %v", u1)
	}
	// A second undo is refused and changes nothing.
	if _, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": id}); !isErr || !strings.Contains(text, "already undone") {
		t.Fatalf("a second undo answered %v %s", isErr, text)
	}
	// The undo is itself an action: undoing it writes the change again, exactly.
	redo := undo(u1["action_id"].(string))
	if d := stateDiff(written, h.rawState(t)); d != "" {
		t.Fatalf("undoing the undo did not write the change again:\n%s", d)
	}
	undo(redo["action_id"].(string))
	if d := stateDiff(before, h.rawState(t)); d != "" {
		t.Fatalf("undoing the redo did not put the server back:\n%s", d)
	}

	// Written again, then changed by someone else: the undo changes nothing and says so.
	res, text, isErr = call(t, cs, c.tool, c.args())
	if isErr {
		t.Fatalf("write again: %s", text)
	}
	id = res["action_id"].(string)
	written = h.rawState(t)
	href := c.href
	if href == "" {
		for k := range written {
			if _, ok := before[k]; !ok {
				href = k
			}
		}
	}
	changeObject(href)(written)
	other := h.rawState(t)
	sc, text, isErr = call(t, cs, "mail_undo", map[string]any{"id": id})
	if isErr || sc["changed"] != float64(0) || sc["action_id"] != nil {
		t.Fatalf("an undo over someone else's change: %v %s", isErr, text)
	}
	row = sc["messages"].([]any)[0].(map[string]any)
	if row["outcome"] != "changed_since" || !strings.Contains(fmt.Sprint(row["reason"]), "since") || !strings.Contains(text, "changed_since") {
		t.Fatalf("an undo over someone else's change answered %v", sc)
	}
	if d := stateDiff(other, h.rawState(t)); d != "" {
		t.Fatalf("an undo over someone else's change changed the server:\n%s", d)
	}
}

func TestCalendarUndoExactRadicale(t *testing.T) { checkUndoExact(t, davtest.Radicale(t)) }
func TestCalendarUndoExactXandikos(t *testing.T) { checkUndoExact(t, davtest.Xandikos(t)) }

// TestCalendarUndoGuards: undoing an event's or task's write asks what the write asked. A
// connection without calendar:write (or tasks:write) cannot undo it; once the event's calendar
// belongs to a project the person has not opened, agents neither see the action in mail_actions
// nor undo it, and the server is left as it is; the person, at the terminal, still can
// (postern actions, postern undo).
func TestCalendarUndoGuards(t *testing.T) {
	h := undoHome(t, davtest.Radicale(t))
	cs := h.connect(t, "read,calendar:write,tasks:write,mail:modify")
	before := h.rawState(t)
	_, res := write(t, cs, "task_update", map[string]any{"id": taskIDOf(t, cs, h.tasksName, "Water the plants"), "status": "completed"})
	taskAction := res["action_id"].(string)
	_, res = write(t, cs, "calendar_update", map[string]any{"id": eventIDOf(t, agendaRows(t, cs, h.calName, "2026-11-12", "2026-11-12"), "Review", "2026-11-12"), "location": "Room 9"})
	eventAction := res["action_id"].(string)
	written := h.rawState(t)

	// Without the write scope of what was written: refused, nothing changed.
	for _, c := range []struct{ scopes, id, need string }{
		{"read,mail:modify,tasks:write", eventAction, "calendar:write"},
		{"read,mail:modify,calendar:write", taskAction, "tasks:write"},
	} {
		other := h.connect(t, c.scopes)
		for _, dry := range []bool{true, false} {
			_, text, isErr := call(t, other, "mail_undo", map[string]any{"id": c.id, "dry_run": dry})
			if !isErr || !strings.Contains(text, `"`+c.need+`"`) {
				t.Fatalf("mail_undo %s with %s: %v %s", c.id, c.scopes, isErr, text)
			}
		}
	}
	if d := stateDiff(written, h.rawState(t)); d != "" {
		t.Fatalf("a refused undo changed the server:\n%s", d)
	}

	// The calendar joins a closed project: the event's action is gone for agents, the task's stays.
	projects := filepath.Join(filepath.Dir(h.cfg), "projects.toml")
	if err := os.WriteFile(projects, []byte(fmt.Sprintf("[[project]]\nid = \"board\"\nopen = false\ncalendars = [%q]\n", h.calName)), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, text, isErr := call(t, cs, "mail_actions", map[string]any{})
	if isErr || strings.Contains(text, eventAction) || !strings.Contains(text, taskAction) || strings.Contains(text, h.calName) {
		t.Fatalf("mail_actions with the calendar kept: %v", sc)
	}
	if _, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": eventAction}); !isErr || !strings.Contains(text, "not opened to agents") {
		t.Fatalf("mail_undo of a kept event's action: %v %s", isErr, text)
	}
	if d := stateDiff(written, h.rawState(t)); d != "" {
		t.Fatalf("a refused undo changed the server:\n%s", d)
	}
	// The person undoes it from the terminal; the task's action an agent may still undo.
	if out, errOut, code := runCLI(t, h.env, "actions", "--config", h.cfg); code != 0 || !strings.Contains(out, eventAction) || !strings.Contains(out, taskAction) {
		t.Fatalf("postern actions: %d %s %s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, h.env, "undo", eventAction, "--config", h.cfg); code != 0 || !strings.Contains(out, "put_back") {
		t.Fatalf("postern undo %s: %d %s %s", eventAction, code, out, errOut)
	}
	if _, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": taskAction}); isErr {
		t.Fatalf("mail_undo of the task's action: %s", text)
	}
	if d := stateDiff(before, h.rawState(t)); d != "" {
		t.Fatalf("after both undos the server differs from before:\n%s", d)
	}
}

// TestCalendarUndoAfterPurge: the kept texts of events and tasks are backups like mail's,
// purged with them once older than the retention and only with the person's approval; an undo
// that would need a purged one says so and changes nothing.
func TestCalendarUndoAfterPurge(t *testing.T) {
	h := undoHome(t, davtest.Radicale(t))
	cs := h.connect(t, "read,tasks:write,mail:modify")
	_, res := write(t, cs, "task_delete", map[string]any{"id": taskIDOf(t, cs, h.tasksName, "Water the plants")})
	id := res["action_id"].(string)
	if n := len(h.backupFiles(t)); n != 1 {
		t.Fatalf("%d kept texts after a delete, want 1", n)
	}
	if _, text, isErr := call(t, cs, "mail_backups_purge", map[string]any{}); !isErr || !strings.Contains(text, "No backup is older") {
		t.Fatalf("a purge of a young kept text: %v %s", isErr, text)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h.dataDir(), "postern", "store.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE actions SET at = ?`, time.Now().Add(-60*24*time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	prep, text, isErr := call(t, cs, "mail_backups_purge", map[string]any{})
	if isErr || !strings.Contains(fmt.Sprint(prep["action"]), "1 kept texts of changed events and tasks") {
		t.Fatalf("mail_backups_purge: %s", text)
	}
	sc, text, isErr := call(t, cs, "mail_backups_purge_commit", map[string]any{"token": prep["token"]})
	if isErr || sc["removed"] != float64(1) {
		t.Fatalf("mail_backups_purge_commit: %s", text)
	}
	if n := len(h.backupFiles(t)); n != 0 {
		t.Fatalf("%d kept texts after the purge", n)
	}
	before := h.rawState(t)
	sc, text, isErr = call(t, cs, "mail_undo", map[string]any{"id": id})
	if isErr || sc["changed"] != float64(0) || !strings.Contains(text, "purged") {
		t.Fatalf("an undo needing a purged text: %v %s", isErr, text)
	}
	if d := stateDiff(before, h.rawState(t)); d != "" {
		t.Fatalf("an undo needing a purged text changed the server:\n%s", d)
	}
}

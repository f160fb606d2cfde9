package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/testing/davtest"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// The one-word test of issue 17: a closed project holds a message and its thread, an
// attachment's name, an event, a task, a contact and a note, each carrying one word no other
// thing carries; through every tool of the registry, in both eras, no answer, error or count
// holds that word, a search's left_out is the same for that word as for a word nothing holds,
// each kept thing asked for by id gets the answer of a thing that does not exist, and each
// write into the project is refused. Opened, each thing appears. The project is closed and
// opened by postern project while the server runs: the next call sees it.

const secretWord = "zephyrquill"

// oneWordHome is a HOME with an IMAP account (real Dovecot), a CalDAV/CardDAV account (real
// Radicale) and a notes folder, and a projects file with one project, acme.
type oneWordHome struct {
	env                           []string
	cfg, projects, notes          string
	acmeCal, workCal, acmeTasks   string // collection names
	homeTasks, book               string
	keptEventUID, tiedEventUID    string
	mailTrusted                   string
	forgedSubject, keptSubject    string
	keptReplySubject, openSubject string
	user                          *imaptest.User
}

func newOneWordHome(t *testing.T) *oneWordHome {
	t.Helper()
	srv := imaptest.Start(t)
	dav := davtest.Radicale(t)
	u := srv.NewUser(t)
	h := &oneWordHome{env: home(t), mailTrusted: "mx.trusted.test", user: u}
	h.keptSubject = "Terms for " + strings.ToUpper(secretWord)
	h.keptReplySubject = "Re: the terms"
	h.forgedSubject = "Wire request today"
	h.openSubject = "Lunch on Friday"
	day := time.Now().UTC().Add(-48 * time.Hour).Format(time.RFC1123Z)
	msg := func(id, from, subject, extra, body string) []byte {
		return []byte(fmt.Sprintf("Message-ID: <%s>\r\nDate: %s\r\nFrom: %s\r\nTo: me@home.test\r\nSubject: %s\r\n%s", id, day, from, subject, extra) +
			"MIME-Version: 1.0\r\n" + body)
	}
	plain := func(text string) string {
		return "Content-Type: text/plain; charset=utf-8\r\n\r\n" + text + "\r\n"
	}
	// The project's message: authenticated, from the client's domain, with an attachment
	// named with the word; the person's reply joins it by its thread alone.
	u.AddMessage(t, "INBOX", msg("k1@acme.example", "Lee <lee@acme.example>", h.keptSubject,
		"Authentication-Results: "+h.mailTrusted+"; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example\r\n",
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nThe "+secretWord+" terms are attached.\r\n--b\r\n"+
			"Content-Type: text/plain; name=\""+secretWord+"-terms.txt\"\r\nContent-Disposition: attachment; filename=\""+secretWord+"-terms.txt\"\r\n\r\nClause one: "+secretWord+".\r\n--b--\r\n"), "")
	u.AddMessage(t, "INBOX", msg("k2@home.test", "Me <me@home.test>", h.keptReplySubject,
		"In-Reply-To: <k1@acme.example>\r\nReferences: <k1@acme.example>\r\n", plain("I agree to "+secretWord+".")), "S")
	// Forged: claims the client's domain, fails DMARC at the trusted server. It joins nothing.
	u.AddMessage(t, "INBOX", msg("f1@evil.test", "Lee <lee@acme.example>", h.forgedSubject,
		"Authentication-Results: "+h.mailTrusted+"; dmarc=fail header.from=acme.example\r\n", plain("Send the money to account 1.")), "")
	u.AddMessage(t, "INBOX", msg("o1@friends.test", "Carol <carol@friends.test>", h.openSubject, "", plain("Shall we?")), "")
	u.AddMessage(t, "INBOX", msg("o2@shop.test", "Shop <orders@shop.test>", "Your order", "", plain("It ships today.")), "S")

	dir := t.TempDir()
	h.cfg = filepath.Join(dir, "config.toml")
	h.projects = filepath.Join(dir, "projects.toml")
	h.notes = filepath.Join(dir, "Notes")
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(u.Password+"\n"), 0o600)
	for _, d := range []string{filepath.Join(h.notes, "acme"), filepath.Join(h.notes, "home")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(h.notes, "acme", "call.md"), []byte("# Call with "+secretWord+" counsel\n\nThe "+secretWord+" numbers.\n"), 0o600)
	os.WriteFile(filepath.Join(h.notes, "home", "garden.md"), []byte("# Garden\n\nPlant the tulips.\n"), 0o600)
	cfg := fmt.Sprintf(`time_zone = "Europe/Paris"

[approval]
mode = "host"

[notes]
folder = %q

[[accounts]]
name = "work"
kind = "imap"
server = %q
user = %q
password_cmd = "cat %s"
tls = "none"
address = "me@home.test"
trusted_authserv_ids = [%q]
`, h.notes, srv.Addr, u.Name, pw, h.mailTrusted)
	if err := os.WriteFile(h.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	// Calendars: the project's own, and the person's with one event tied to the project.
	du := dav.NewUser(t)
	h.acmeCal, h.workCal = davtest.Unique("Acme "), davtest.Unique("Work ")
	h.acmeTasks, h.homeTasks = davtest.Unique("Acme tasks "), davtest.Unique("Home ")
	h.book = davtest.Unique("Contacts ")
	acme := du.MkCalendar(t, davtest.Unique("acme"), h.acmeCal, "", "VEVENT")
	work := du.MkCalendar(t, davtest.Unique("work"), h.workCal, "", "VEVENT")
	acmeTasks := du.MkCalendar(t, davtest.Unique("acmetasks"), h.acmeTasks, "", "VTODO")
	homeTasks := du.MkCalendar(t, davtest.Unique("hometasks"), h.homeTasks, "", "VTODO")
	book := du.MkAddressBook(t, davtest.Unique("book"), h.book)
	h.keptEventUID, h.tiedEventUID = "zq-kickoff@acme.example", "zq-review@home.test"
	at := func(days int, hour int) string {
		return time.Now().UTC().AddDate(0, 0, days).Truncate(24 * time.Hour).Add(time.Duration(hour) * time.Hour).Format("20060102T150405Z")
	}
	event := func(uid, summary string, days, hour int) string {
		return davtest.CRLF(fmt.Sprintf("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:e2e\nBEGIN:VEVENT\nUID:%s\nDTSTAMP:20260101T000000Z\nDTSTART:%s\nDTEND:%s\nSUMMARY:%s\nEND:VEVENT\nEND:VCALENDAR\n",
			uid, at(days, hour), at(days, hour+1), summary))
	}
	todo := func(uid, summary string) string {
		return davtest.CRLF(fmt.Sprintf("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:e2e\nBEGIN:VTODO\nUID:%s\nDTSTAMP:20260101T000000Z\nSUMMARY:%s\nEND:VTODO\nEND:VCALENDAR\n", uid, summary))
	}
	du.Put(t, acme+"kickoff.ics", event(h.keptEventUID, strings.ToUpper(secretWord)+" kickoff", 0, 12))
	du.Put(t, work+"review.ics", event(h.tiedEventUID, "Review of "+secretWord, 1, 9))
	du.Put(t, work+"dentist.ics", event("dentist@home.test", "Dentist", 1, 14))
	du.Put(t, acmeTasks+"file.ics", todo("zq-file@acme.example", "File the "+secretWord+" papers"))
	du.Put(t, homeTasks+"milk.ics", todo("milk@home.test", "Buy milk"))
	du.Put(t, book+"dana.vcf", davtest.CRLF("BEGIN:VCARD\nVERSION:3.0\nUID:dana-acme\nFN:Dana Okafor\nORG:"+secretWord+" Partners\nEMAIL:dana@acme.example\nEND:VCARD\n"))
	du.Put(t, book+"omar.vcf", davtest.CRLF("BEGIN:VCARD\nVERSION:3.0\nUID:omar-home\nFN:Omar Haddad\nEMAIL:omar@haddad.example\nEND:VCARD\n"))
	if out, errOut, code := runCLI(t, h.env, "account", "add", "cal", "--caldav", dav.URL, "--carddav", dav.URL,
		"--user", du.Name, "--password-cmd", du.PasswordCmd(), "--config", h.cfg); code != 0 {
		t.Fatalf("account add: %d %s %s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, h.env, "sync", "--config", h.cfg); code != 0 {
		t.Fatalf("postern sync: %s %s", out, errOut)
	}
	h.writeProjects(t, "true", true)
	return h
}

// writeProjects writes the projects file: acme open or not, things outside open or not.
func (h *oneWordHome) writeProjects(t *testing.T, outside string, open bool) {
	t.Helper()
	body := fmt.Sprintf(`# The person's projects.
[projects]
outside = %s

[[project]]
id = "acme"
name = "The Acme matter"
open = %v   # closed until said
domains = ["acme.example"]
calendars = [%q]
task_lists = [%q]
note_folders = ["acme"]
ties = ["event:%s"]
`, outside, open, h.acmeCal, h.acmeTasks, h.tiedEventUID)
	if err := os.WriteFile(h.projects, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// agentView is one connection's calls, each answer checked for the word.
type agentView struct {
	t      *testing.T
	s      *session
	modern bool
	n      int
	leaks  []string
}

func (v *agentView) call(name string, args map[string]any) (sc map[string]any, text string, isErr bool) {
	v.t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	if v.modern {
		p = withMeta(p)
	}
	v.n++
	raw := v.s.rpc(fmt.Sprintf("c%d", v.n), "tools/call", p)
	b, _ := json.Marshal(raw)
	if strings.Contains(strings.ToLower(string(b)), secretWord) {
		v.leaks = append(v.leaks, fmt.Sprintf("%s %v: %s", name, args, b))
	}
	if e, ok := raw["error"]; ok {
		return nil, fmt.Sprint(e), true
	}
	r := raw["result"].(map[string]any)
	sc, _ = r["structuredContent"].(map[string]any)
	return sc, callText(r), r["isError"] == true
}

// resource sends a resources method and returns its answer as JSON, and whether it is an error.
func (v *agentView) resource(method string, params map[string]any) (string, bool) {
	v.t.Helper()
	if v.modern {
		params = withMeta(params)
	}
	v.n++
	raw := v.s.rpc(fmt.Sprintf("r%d", v.n), method, params)
	b, _ := json.Marshal(raw)
	if strings.Contains(strings.ToLower(string(b)), secretWord) {
		v.leaks = append(v.leaks, fmt.Sprintf("%s %v: %s", method, params, b))
	}
	if e, ok := raw["error"].(map[string]any); ok {
		return fmt.Sprint(e["message"]), true
	}
	return string(b), false
}

// openIDs are the ids of the project's things, read while it is open.
type openIDs struct {
	kept, reply, thread, event, tiedEvent, task, contact, note string
	openMsg, openEvent, openTask, openContact, openNote        string
}

func collectIDs(t *testing.T, v *agentView, h *oneWordHome) openIDs {
	t.Helper()
	var ids openIDs
	sc, text, _ := v.call(generated.ToolMailList, map[string]any{"limit": 50})
	for _, m := range list(sc, "messages") {
		switch m["subject"] {
		case h.keptSubject:
			ids.kept, ids.thread = m["id"].(string), m["id"].(string)
		case h.keptReplySubject:
			ids.reply = m["id"].(string)
		case h.openSubject:
			ids.openMsg = m["id"].(string)
		}
	}
	if ids.kept == "" || ids.reply == "" || ids.openMsg == "" {
		t.Fatalf("the open project's messages are not all listed:\n%s", text)
	}
	sc, text, _ = v.call(generated.ToolAgenda, map[string]any{"from": time.Now().AddDate(0, 0, -1).Format("2006-01-02"), "to": time.Now().AddDate(0, 0, 5).Format("2006-01-02")})
	for _, e := range list(sc, "events") {
		s := strings.ToLower(fmt.Sprint(e["summary"]))
		switch {
		case strings.Contains(s, "kickoff"):
			ids.event = e["id"].(string)
		case strings.Contains(s, "review"):
			ids.tiedEvent = e["id"].(string)
		case strings.Contains(s, "dentist"):
			ids.openEvent = e["id"].(string)
		}
	}
	if ids.event == "" || ids.tiedEvent == "" || ids.openEvent == "" {
		t.Fatalf("the agenda lacks events while the project is open:\n%s", text)
	}
	sc, text, _ = v.call(generated.ToolTaskList, map[string]any{"state": "all"})
	for _, x := range list(sc, "tasks") {
		if strings.Contains(strings.ToLower(fmt.Sprint(x["summary"])), secretWord) {
			ids.task = x["id"].(string)
		} else {
			ids.openTask = x["id"].(string)
		}
	}
	if ids.task == "" || ids.openTask == "" {
		t.Fatalf("task_list lacks tasks while the project is open:\n%s", text)
	}
	for q, dst := range map[string]*string{"dana": &ids.contact, "omar": &ids.openContact} {
		sc, text, _ = v.call(generated.ToolContactsSearch, map[string]any{"query": q})
		if cs := list(sc, "contacts"); len(cs) == 1 {
			*dst = cs[0]["id"].(string)
		} else {
			t.Fatalf("contacts_search %s while the project is open:\n%s", q, text)
		}
	}
	for q, dst := range map[string]*string{secretWord: &ids.note, "tulips": &ids.openNote} {
		sc, text, _ = v.call(generated.ToolNotesFind, map[string]any{"query": q})
		if ns := list(sc, "notes"); len(ns) == 1 {
			*dst = ns[0]["path"].(string)
		} else {
			t.Fatalf("notes_find %s while the project is open:\n%s", q, text)
		}
	}
	return ids
}

func list(sc map[string]any, key string) []map[string]any {
	var out []map[string]any
	xs, _ := sc[key].([]any)
	for _, x := range xs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// idArgs are the arguments of tool that name one thing, and which of the ids each takes:
// its id is a message's, or the event's, task's, contact's or note's it looks up or changes.
func idArgs(tool string, ids openIDs, kept bool) map[string]string {
	pick := func(k, o string) string {
		if kept {
			return k
		}
		return o
	}
	msg := pick(ids.kept, ids.openMsg)
	id := msg
	switch tool {
	case generated.ToolCalendarEvent, generated.ToolCalendarUpdate:
		id = pick(ids.event, ids.openEvent)
	case generated.ToolTaskGet, generated.ToolTaskUpdate, generated.ToolTaskDelete:
		id = pick(ids.task, ids.openTask)
	case generated.ToolContactGet:
		id = pick(ids.contact, ids.openContact)
	case generated.ToolNoteRead:
		id = pick(ids.note, ids.openNote)
	}
	return map[string]string{"id": id}
}

// missingLike is an id of the same form as id that names nothing.
func missingLike(id string) string {
	if i := strings.LastIndexAny(id, "/"); i >= 0 {
		return id[:i+1] + "no-such-note.md"
	}
	return id[:1] + "zz" + id[1:]
}

func TestClosedProjectNeverShown(t *testing.T) {
	h := newOneWordHome(t)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			h.writeProjects(t, "true", true)
			s := startEnv(t, h.env, "--scopes", allScopes(), "--config", h.cfg)
			v := &agentView{t: t, s: s, modern: era == "modern"}
			if !v.modern {
				s.initialize("2025-11-25")
			}
			// Open: every thing is there (and the word with it).
			ids := collectIDs(t, v, h)
			v.leaks = nil

			// Closed by the person at the terminal while the server runs.
			if out, errOut, code := runCLI(t, h.env, "project", "close", "acme", "--config", h.cfg); code != 0 {
				t.Fatalf("project close: %s %s", out, errOut)
			}
			listed := v.s.rpc("tl", "tools/list", func() map[string]any {
				if v.modern {
					return withMeta(nil)
				}
				return nil
			}())
			tools := result(t, listed)["tools"].([]any)
			byID := 0
			for _, raw := range tools {
				tool := raw.(map[string]any)
				name := tool["name"].(string)
				keptArgs, openArgs := idArgs(name, ids, true), idArgs(name, ids, false)
				in, _ := json.Marshal(tool["inputSchema"])
				known := map[string]any{"query": secretWord, "body": "Noted.", "summary": "An agent's meeting", "start": time.Now().AddDate(0, 0, 2).Format("2006-01-02T15:04"),
					"title": "An agent's note", "ids": []any{ids.kept}, "to": "Archive", "how": "read", "answer": "accepted", "token": "t-unknown",
					"rule": map[string]any{"name": "zq", "match": "subject:terms", "actions": []any{map[string]any{"do": "mark_read"}}}}
				for k, id := range keptArgs {
					known[k] = id
				}
				args := sampleArgs(t, in, known)
				if spec := specOf(name); spec != nil && calendarWrite(*spec) {
					// A dry run: refused as the write is, and the open things stay for the checks below.
					args["dry_run"] = true
				}
				_, keptText, keptErr := v.call(name, args)
				// A tool that names one thing: the kept one is refused as a missing one is.
				for k := range args {
					id, ok := keptArgs[k]
					if !ok || strings.HasSuffix(name, "_commit") {
						continue
					}
					byID++
					if !keptErr {
						t.Errorf("%s %s=%s (kept): answered %s", name, k, id, keptText)
						continue
					}
					margs := map[string]any{}
					for a, x := range args {
						margs[a] = x
					}
					margs[k] = missingLike(id)
					_, missText, _ := v.call(name, margs)
					if strings.ReplaceAll(keptText, id, "ID") != strings.ReplaceAll(missText, missingLike(id), "ID") {
						t.Errorf("%s: a kept %s is told apart from a missing one:\n kept:    %s\n missing: %s", name, k, keptText, missText)
					}
					// And the open thing of the same kind is not refused for being kept.
					oargs := map[string]any{}
					for a, x := range args {
						oargs[a] = x
					}
					oargs[k] = openArgs[k]
					if _, otext, _ := v.call(name, oargs); strings.Contains(otext, "has not opened") {
						t.Errorf("%s on an open thing: %s", name, otext)
					}
				}
			}
			if byID < 15 {
				t.Fatalf("only %d calls named one kept thing", byID)
			}
			// Lists with their widest arguments.
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{generated.ToolMailList, map[string]any{"limit": 500}},
				{generated.ToolMailList, map[string]any{"limit": 500, "threads": true}},
				{generated.ToolMailSearch, map[string]any{"query": "terms", "limit": 500}},
				{generated.ToolMailSenders, map[string]any{}},
				{generated.ToolMailFolders, map[string]any{}},
				{generated.ToolMailThread, map[string]any{"id": ids.openMsg, "text": true}},
				{generated.ToolAgenda, map[string]any{"from": time.Now().AddDate(0, 0, -1).Format("2006-01-02"), "to": time.Now().AddDate(0, 0, 30).Format("2006-01-02")}},
				{generated.ToolCalendarFreebusy, map[string]any{"from": time.Now().AddDate(0, 0, -1).Format("2006-01-02"), "to": time.Now().AddDate(0, 0, 30).Format("2006-01-02")}},
				{generated.ToolCalendarList, map[string]any{}},
				{generated.ToolTaskList, map[string]any{"state": "all"}},
				{generated.ToolContactsSearch, map[string]any{"query": "a"}},
				{generated.ToolNotesFind, map[string]any{"query": ""}},
				{generated.ToolRulesCoverage, map[string]any{}},
				{generated.ToolStatus, map[string]any{}},
				{generated.ToolNow, map[string]any{}},
			} {
				if _, text, isErr := v.call(c.tool, c.args); isErr {
					t.Errorf("%s %v: %s", c.tool, c.args, text)
				}
			}
			// A search's left_out is the same whatever its words.
			leftOut := func(tool, q string) any {
				sc, text, isErr := v.call(tool, map[string]any{"query": q})
				if isErr {
					t.Fatalf("%s %q: %s", tool, q, text)
				}
				return sc["left_out"]
			}
			for _, tool := range []string{generated.ToolMailSearch, generated.ToolContactsSearch, generated.ToolNotesFind} {
				a, b := leftOut(tool, secretWord), leftOut(tool, "nonexistentword")
				if fmt.Sprint(a) != fmt.Sprint(b) || a == nil {
					t.Errorf("%s: left_out %v for the kept word, %v for a word nothing holds", tool, a, b)
				}
			}
			// Each write into the project is refused, before anything is prepared.
			refused := regexp.MustCompile(`(?i)not opened to agents|no such|there is no|cannot be found|not found|will not`)
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{generated.ToolMailDraft, map[string]any{"id": ids.kept, "body": "Yes."}},
				{generated.ToolMailDraft, map[string]any{"id": ids.reply, "body": "Yes."}},
				{generated.ToolMailDraft, map[string]any{"to": []any{"lee@acme.example"}, "subject": "Hello", "body": "Hi."}},
				{generated.ToolMailMove, map[string]any{"ids": []any{ids.reply}, "to": "archive"}},
				{generated.ToolMailMark, map[string]any{"ids": []any{ids.kept}, "how": "read"}},
				{generated.ToolCalendarCreate, map[string]any{"summary": "Meeting", "start": time.Now().AddDate(0, 0, 3).Format("2006-01-02T15:04"), "calendar": h.acmeCal}},
				{generated.ToolCalendarUpdate, map[string]any{"id": ids.tiedEvent, "summary": "Moved"}},
				{generated.ToolCalendarUpdate, map[string]any{"id": ids.event, "cancel": true}},
				{generated.ToolTaskCreate, map[string]any{"summary": "Call", "list": h.acmeTasks}},
				{generated.ToolTaskUpdate, map[string]any{"id": ids.task, "status": "completed"}},
				{generated.ToolNoteAdd, map[string]any{"title": "More", "text": "x", "folder": "acme"}},
				{generated.ToolRulesPropose, map[string]any{"rule": map[string]any{"name": "acme-read", "match": "subject:\"the terms\"", "actions": []any{map[string]any{"do": "mark_read"}}}}},
			} {
				_, text, isErr := v.call(c.tool, c.args)
				if !isErr || !refused.MatchString(text) {
					t.Errorf("%s %v into the closed project: %s", c.tool, c.args, text)
				}
			}
			// The forged message claiming the client is shown, marked forged.
			sc, text, _ := v.call(generated.ToolMailSearch, map[string]any{"query": "wire"})
			if ms := list(sc, "messages"); len(ms) != 1 || ms[0]["forged"] != true {
				t.Errorf("the forged message is not shown marked forged:\n%s", text)
			}
			// Resources: listed and read as the tools answer, a kept thing as a missing one.
			v.resource("resources/list", nil)
			v.resource("resources/templates/list", nil)
			if _, isErr := v.resource("resources/read", map[string]any{"uri": "postern://agenda/today"}); isErr {
				t.Errorf("postern://agenda/today cannot be read")
			}
			for _, c := range []struct{ kind, kept, missing string }{
				{"message", ids.kept, missingLike(ids.kept)},
				{"thread", ids.thread, missingLike(ids.thread)},
				{"note", notes.URI(ids.note), notes.URI(missingLike(ids.note))},
			} {
				uri := func(x string) string {
					if c.kind == "note" {
						return x
					}
					return "postern://" + c.kind + "/" + x
				}
				kept, keptErr := v.resource("resources/read", map[string]any{"uri": uri(c.kept)})
				missing, _ := v.resource("resources/read", map[string]any{"uri": uri(c.missing)})
				if !keptErr || strings.ReplaceAll(kept, c.kept, "ID") != strings.ReplaceAll(missing, c.missing, "ID") {
					t.Errorf("resource %s: kept %s, missing %s", c.kind, kept, missing)
				}
			}
			if len(v.leaks) > 0 {
				t.Fatalf("%d answers held the closed project's word; the first:\n%s", len(v.leaks), v.leaks[0])
			}
			t.Logf("%d calls over %d tools, %d naming a kept thing; no answer held the word", v.n, len(tools), byID)

			// Opened again: each thing appears at the next call.
			if out, errOut, code := runCLI(t, h.env, "project", "open", "acme", "--config", h.cfg); code != 0 {
				t.Fatalf("project open: %s %s", out, errOut)
			}
			again := collectIDs(t, v, h)
			if again != ids {
				t.Errorf("after opening: %+v, before closing: %+v", again, ids)
			}
			for _, c := range []struct{ tool, arg, id string }{
				{generated.ToolMailShow, "id", ids.kept}, {generated.ToolMailShow, "id", ids.reply}, {generated.ToolMailAttachments, "id", ids.kept},
				{generated.ToolCalendarEvent, "id", ids.event}, {generated.ToolTaskGet, "id", ids.task},
				{generated.ToolContactGet, "id", ids.contact}, {generated.ToolNoteRead, "id", ids.note},
			} {
				if _, text, isErr := v.call(c.tool, map[string]any{c.arg: c.id}); isErr || !strings.Contains(strings.ToLower(text), secretWord) {
					t.Errorf("%s %s after opening: %s", c.tool, c.id, text)
				}
			}
		})
	}
	// Resource reads are in the audit log as calls are, refusals with their sentence.
	reads, refused := 0, 0
	for _, e := range auditLines(t, h.env) {
		if e["tool"] == "resources/read" {
			reads++
			if e["ok"] == false {
				refused++
			}
		}
	}
	if reads < 8 || refused < 6 {
		t.Errorf("the audit log has %d resource reads, %d refused", reads, refused)
	}
}

// TestOutsideProjectsClosed: with [projects] outside = false only the open project's things
// come, and writes outside projects are refused.
func TestOutsideProjectsClosed(t *testing.T) {
	h := newOneWordHome(t)
	h.writeProjects(t, "false", true)
	s := startEnv(t, h.env, "--scopes", allScopes(), "--config", h.cfg)
	s.initialize("2025-11-25")
	v := &agentView{t: t, s: s}
	sc, text, _ := v.call(generated.ToolMailList, map[string]any{"limit": 50})
	var subjects []string
	for _, m := range list(sc, "messages") {
		subjects = append(subjects, fmt.Sprint(m["subject"]))
	}
	if strings.Join(subjects, "|") != h.keptReplySubject+"|"+h.keptSubject && strings.Join(subjects, "|") != h.keptSubject+"|"+h.keptReplySubject {
		t.Errorf("outside closed, mail_list shows %q:\n%s", subjects, text)
	}
	if sc["left_out"] != float64(3) {
		t.Errorf("left_out %v, want 3", sc["left_out"])
	}
	sc, text, _ = v.call(generated.ToolTaskList, map[string]any{"state": "all"})
	if ts := list(sc, "tasks"); len(ts) != 1 || !strings.Contains(strings.ToLower(fmt.Sprint(ts[0]["summary"])), secretWord) {
		t.Errorf("outside closed, task_list: %s", text)
	}
	sc, text, _ = v.call(generated.ToolNotesFind, map[string]any{"query": ""})
	if ns := list(sc, "notes"); len(ns) != 1 {
		t.Errorf("outside closed, notes_find: %s", text)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{generated.ToolMailDraft, map[string]any{"to": []any{"carol@friends.test"}, "subject": "Hello", "body": "Hi."}},
		{generated.ToolCalendarCreate, map[string]any{"summary": "Meeting", "start": time.Now().AddDate(0, 0, 3).Format("2006-01-02T15:04"), "calendar": h.workCal}},
		{generated.ToolTaskCreate, map[string]any{"summary": "Call", "list": h.homeTasks}},
		{generated.ToolNoteAdd, map[string]any{"title": "More", "text": "x", "folder": "home"}},
	} {
		if _, text, isErr := v.call(c.tool, c.args); !isErr || !strings.Contains(text, "outside") && !strings.Contains(text, "no such") && !strings.Contains(text, "there is no") {
			t.Errorf("%s %v outside projects: %s", c.tool, c.args, text)
		}
	}
	// The person at the terminal is not filtered: postern call lists everything.
	if out, errOut, code := runCLI(t, h.env, "call", generated.ToolMailList, `{"limit":50}`, "--json", "--config", h.cfg); code != 0 || strings.Count(out, `"subject"`) != 5 {
		t.Errorf("postern call mail_list with outside closed: %d %s %s", code, out, errOut)
	}
	// Into the open project, a write is allowed.
	if _, text, isErr := v.call(generated.ToolNoteAdd, map[string]any{"title": "Next steps", "text": "x", "folder": "acme"}); isErr {
		t.Errorf("note_add into the open project: %s", text)
	}
}

// TestKeptThreadGrowsAfterSync: what the projects keep is worked out again when the store
// changes under a running server: a reply that a sync in another process brings to a kept
// thread is kept too, and counted, from the next call.
func TestKeptThreadGrowsAfterSync(t *testing.T) {
	h := newOneWordHome(t)
	h.writeProjects(t, "true", false)
	s := startEnv(t, h.env, "--scopes", allScopes(), "--config", h.cfg)
	s.initialize("2025-11-25")
	v := &agentView{t: t, s: s}
	before, text, _ := v.call(generated.ToolMailList, map[string]any{"limit": 50})
	if before["left_out"] != float64(2) || len(list(before, "messages")) != 3 {
		t.Fatalf("before the sync: %s", text)
	}
	h.user.AddMessage(t, "INBOX", []byte("Message-ID: <k3@acme.example>\r\nDate: "+time.Now().UTC().Format(time.RFC1123Z)+
		"\r\nFrom: Ann <ann@other.test>\r\nTo: me@home.test\r\nSubject: Re: the terms\r\nIn-Reply-To: <k2@home.test>\r\nReferences: <k1@acme.example> <k2@home.test>\r\n\r\nAnd "+secretWord+" again.\r\n"), "")
	if out, errOut, code := runCLI(t, h.env, "sync", "--config", h.cfg); code != 0 {
		t.Fatalf("postern sync: %s %s", out, errOut)
	}
	after, text, _ := v.call(generated.ToolMailList, map[string]any{"limit": 50})
	if after["left_out"] != float64(3) || len(list(after, "messages")) != 3 {
		t.Fatalf("after a reply to the kept thread was synced: %s", text)
	}
	if sc, text, _ := v.call(generated.ToolMailSearch, map[string]any{"query": secretWord}); len(list(sc, "messages")) != 0 || sc["left_out"] != float64(3) {
		t.Fatalf("a search after the sync: %s", text)
	}
	if len(v.leaks) > 0 {
		t.Fatalf("an answer held the kept word: %s", v.leaks[0])
	}
}

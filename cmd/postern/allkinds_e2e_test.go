//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/testing/davtest"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// planClient is the plan runner among the npm clients (testdata/clients/plan-client.mjs).
const planClient = "plan-client.mjs"

// kindsHome is a HOME with one account of every kind — IMAP on Dovecot (sending through
// Mailpit), a Maildir, CalDAV/CardDAV on Radicale, a folder of .ics files — and a notes folder,
// synced, with the ids its tools need.
type kindsHome struct {
	env      []string
	cfg      string
	imapUser *imaptest.User
	sieve    bool // the test Dovecot has ManageSieve: rules_push can run
	calName  string
	tasks    string // the task list's name
	ids      map[string]any
}

func newKindsHome(t *testing.T) *kindsHome {
	t.Helper()
	srv, mp, dav := imaptest.Start(t), smtptest.Start(t), davtest.Radicale(t)
	h := &kindsHome{env: home(t), imapUser: srv.NewUser(t), sieve: srv.ManageSieveAddr != ""}
	own := smtptest.Addr("me")
	u := h.imapUser
	msg := func(folder, from, subject, id, extra, body, flags string) {
		u.AddMessage(t, folder, []byte(fmt.Sprintf("From: %s\r\nTo: Me <%s>\r\nSubject: %s\r\nDate: Mon, 23 Nov 2026 10:00:00 +0000\r\nMessage-ID: <%s>\r\n%s\r\n%s\r\n", from, own, subject, id, extra, body)), flags)
	}
	msg("INBOX", "Carol <"+smtptest.Addr("carol")+">", "Lunch on Friday?", "lunch-a@example.test", "", "Shall we have lunch on Friday?", "S")
	msg("INBOX", "Dave <"+smtptest.Addr("dave")+">", "Re: Lunch on Friday?", "lunch-b@example.test", "In-Reply-To: <lunch-a@example.test>\r\nReferences: <lunch-a@example.test>\r\n", "Friday works.", "")
	for i := 1; i <= 4; i++ {
		msg("INBOX", "News <news@example.test>", fmt.Sprintf("Newsletter %d", i), fmt.Sprintf("news%d@example.test", i),
			"List-Id: <news.example.test>\r\nList-Unsubscribe: <mailto:"+smtptest.Addr("unsub")+"?subject=unsubscribe>\r\n", fmt.Sprintf("Issue %d.", i), "")
	}
	msg("INBOX", "Carol <carol@example.test>", "A note", "note@example.test", "", "Hello.", "S")
	msg("INBOX", "Rita <rita@example.test>", "Report attached", "report@example.test",
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b1\r\n",
		"--b1\r\nContent-Type: text/plain\r\n\r\nThe report is attached.\r\n--b1\r\nContent-Type: text/plain; name=report.txt\r\nContent-Disposition: attachment; filename=report.txt\r\n\r\nQuarterly figures: all good.\r\n--b1--", "")
	u.AddMessage(t, "INBOX", inviteMessage(smtptest.Addr("olga"), own, "kinds-invite@example.org", "kinds-invite@example.test"), "")
	for _, f := range []string{"Archive", "Junk", "Trash", "Receipts"} {
		msg(f, "x@example.test", "Kept in "+f, "kept-"+strings.ToLower(f)+"@example.test", "", "Kept.", "S")
	}

	dir := t.TempDir()
	maildir := filepath.Join(dir, "Maildir")
	if _, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: 5, Messages: 12}); err != nil {
		t.Fatal(err)
	}
	icsDir := filepath.Join(dir, "ics")
	os.MkdirAll(icsDir, 0o700)
	if err := os.WriteFile(filepath.Join(icsDir, "lunch.ics"), []byte(lunchICS), 0o600); err != nil {
		t.Fatal(err)
	}
	saveDir := filepath.Join(dir, "saved")
	os.MkdirAll(saveDir, 0o700)

	du := dav.NewUser(t)
	h.calName, h.tasks = davtest.Unique("Work "), davtest.Unique("Tasks ")
	cal := du.MkCalendar(t, davtest.Unique("work"), h.calName, "#3366ffff", "VEVENT")
	tasks := du.MkCalendar(t, davtest.Unique("tasks"), h.tasks, "", "VTODO")
	book := du.MkAddressBook(t, davtest.Unique("book"), davtest.Unique("Contacts "))
	du.Put(t, cal+"team.ics", teamSyncICS)
	du.Put(t, cal+"review.ics", reviewICS)
	du.Put(t, cal+"ny.ics", nyCallICS)
	for _, x := range []struct{ uid, summary string }{{"kinds-report", "File the report"}, {"kinds-old", "Old chore"}} {
		du.Put(t, tasks+x.uid+".ics", davtest.CRLF("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:"+x.uid+"\nDTSTAMP:20260901T000000Z\nSUMMARY:"+x.summary+"\nDUE;VALUE=DATE:20261105\nEND:VTODO\nEND:VCALENDAR\n"))
	}
	du.Put(t, book+"priya.vcf", priyaVCF)
	du.Put(t, book+"omar.vcf", omarVCF)

	pw, spw := filepath.Join(dir, "pw"), filepath.Join(dir, "smtp-pw")
	os.WriteFile(pw, []byte(u.Password+"\n"), 0o600)
	os.WriteFile(spw, []byte(mp.Password+"\n"), 0o600)
	sieve := ""
	if h.sieve {
		sieve = fmt.Sprintf("sieve = %q\n", srv.ManageSieveAddr)
	}
	h.cfg = filepath.Join(dir, "config.toml")
	body := fmt.Sprintf(`time_zone = "Europe/Paris"
save_dir = %q

[approval]
mode = "host"

[[accounts]]
name = "work"
kind = "imap"
server = %q
user = %q
password_cmd = "cat %s"
tls = "none"
address = %q
smtp = %q
smtp_tls = "starttls"
smtp_user = %q
smtp_password_cmd = "cat %s"
%s
[[accounts]]
name = "archive"
kind = "maildir"
path = %q

[[accounts]]
name = "cal"
kind = "caldav"
caldav = %q
carddav = %q
user = %q
password_cmd = %q

[[accounts]]
name = "feed"
kind = "ics"
path = %q
`, saveDir, srv.Addr, u.Name, pw, own, mp.SMTP, mp.User, spw, sieve, maildir, dav.URL, dav.URL, du.Name, du.PasswordCmd(), icsDir)
	if err := os.WriteFile(h.cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	withNotes(t, h.cfg, map[string]string{"first.md": "# First note\n\nSome text.\n"})
	// The binary trusts Mailpit's self-signed certificate as a system root.
	h.env = append(h.env, "SSL_CERT_FILE="+filepath.Join(mp.Dir, "tls", "cert.pem"))
	if out, errOut, code := runCLI(t, h.env, "sync", "--config", h.cfg); code != 0 {
		t.Fatalf("postern sync: %d\n%s\n%s", code, out, errOut)
	}
	return h
}

// findIDs looks up, over a Go SDK session, the ids the plan's tools take, and leaves two old
// backups for mail_backups_purge to find.
func (h *kindsHome) findIDs(t *testing.T) map[string][]byte {
	t.Helper()
	mb := &mailbox{env: h.env, cfg: h.cfg}
	cs := mb.connect(t, allScopes(), nil)
	defer cs.Close()
	schemas := map[string][]byte{}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		in, _ := json.Marshal(tl.InputSchema)
		schemas[tl.Name] = in
	}
	ids := map[string]any{
		"lunch":  messageID(t, cs, "subject:friday from:dave"),
		"report": messageID(t, cs, `subject:"Report attached"`),
		"news1":  messageID(t, cs, `subject:"Newsletter 1"`),
		"news2":  messageID(t, cs, `subject:"Newsletter 2"`),
		"news3":  messageID(t, cs, `subject:"Newsletter 3"`),
		"news4":  messageID(t, cs, `subject:"Newsletter 4"`),
		"invite": messageID(t, cs, `subject:"Design review"`),
	}
	sc, text, _ := call(t, cs, "mail_list", map[string]any{"account": "archive", "limit": 1})
	if msgs, _ := sc["messages"].([]any); len(msgs) == 1 {
		ids["maildir"] = msgs[0].(map[string]any)["id"]
	} else {
		t.Fatalf("the Maildir account lists no message: %s", text)
	}
	ids["team"] = eventIDOf(t, agendaRows(t, cs, h.calName, "2026-10-26", "2026-11-02"), "Team sync", "2026-10-30")
	ids["review"] = eventIDOf(t, agendaRows(t, cs, h.calName, "2026-11-12", "2026-11-12"), "Review", "2026-11-12")
	ids["ny"] = eventIDOf(t, agendaRows(t, cs, h.calName, "2026-10-26", "2026-10-26"), "NY call", "2026-10-26")
	sc, text, _ = call(t, cs, "task_list", map[string]any{"list": h.tasks})
	for _, x := range sc["tasks"].([]any) {
		row := x.(map[string]any)
		switch row["summary"] {
		case "File the report":
			ids["task"] = row["id"]
		case "Old chore":
			ids["chore"] = row["id"]
		}
	}
	if ids["task"] == nil || ids["chore"] == nil {
		t.Fatalf("task_list lacks the test's tasks: %s", text)
	}
	sc, text, _ = call(t, cs, "contacts_search", map[string]any{"query": "priya"})
	if cs, _ := sc["contacts"].([]any); len(cs) == 1 {
		ids["contact"] = cs[0].(map[string]any)["id"]
	} else {
		t.Fatalf("contacts_search priya: %s", text)
	}
	// Two backups made old, so that a purge has something to prepare.
	for _, q := range []string{`subject:"Kept in Receipts"`, `subject:"Kept in Junk"`} {
		if _, text, isErr := call(t, cs, "mail_move", map[string]any{"query": q, "to": "trash"}); isErr {
			t.Fatalf("mail_move to trash %s: %s", q, text)
		}
	}
	ageBackups(t, h.env)
	h.ids = ids
	return schemas
}

// ref stands, in a use's arguments, for a value of the answer of the last real call of tool.
type ref struct {
	tool string
	path []any
}

// use is one call of the plan: a tool and its arguments. A tool with a dry run is called with
// dry_run first, then for real; a prepare half is followed by its commit with the token.
type use struct {
	tool string
	args map[string]any
}

// planStep is one call as plan-client.mjs reads it.
type planStep struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// buildPlan turns uses into the calls of one connection, from what tools/list says of each
// tool (inputs: the input schemas by name): a pair's commit follows its prepare with the
// token, a tool with dry_run runs dry and then for real. refs become {"$ref": [i, path…]}.
func buildPlan(t *testing.T, uses []use, inputs map[string][]byte) []planStep {
	t.Helper()
	var steps []planStep
	last := map[string]int{}
	var resolve func(v any) any
	resolve = func(v any) any {
		switch x := v.(type) {
		case ref:
			i, ok := last[x.tool]
			if !ok {
				t.Fatalf("a ref to %s before any call of it", x.tool)
			}
			return map[string]any{"$ref": append([]any{i}, x.path...)}
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				out[k] = resolve(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = resolve(e)
			}
			return out
		}
		return v
	}
	add := func(name string, args map[string]any) {
		steps = append(steps, planStep{name, args})
		last[name] = len(steps) - 1
	}
	for _, u := range uses {
		in, ok := inputs[u.tool]
		if !ok {
			t.Errorf("%s is not listed with every scope granted: remove it from this test or find why", u.tool)
			continue
		}
		args := resolve(u.args).(map[string]any)
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		json.Unmarshal(in, &schema)
		_, hasCommit := inputs[u.tool+"_commit"]
		_, hasDry := schema.Properties["dry_run"]
		switch {
		case hasCommit:
			add(u.tool, args)
			add(u.tool+"_commit", with(args, "token", map[string]any{"$ref": []any{len(steps) - 1, "token"}}))
		case hasDry:
			add(u.tool, with(args, "dry_run", true))
			add(u.tool, args)
		default:
			add(u.tool, args)
		}
	}
	return steps
}

// kindsUses is every tool of the catalog with arguments that make sense over h: reads first,
// then writes, each act before what undoes or lists it.
func kindsUses(h *kindsHome) []use {
	id := func(k string) any { return h.ids[k] }
	rule := func(name string) map[string]any {
		return map[string]any{"name": name, "match": "from:news@example.test", "actions": []any{map[string]any{"do": "flag"}}}
	}
	week := map[string]any{"from": "2026-10-26", "to": "2026-11-02"}
	uses := []use{
		{"status", map[string]any{}},
		{"docs", map[string]any{}},
		{"docs", map[string]any{"page": "guide"}},
		{"now", map[string]any{}},
		{"mail_folders", map[string]any{}},
		{"mail_list", map[string]any{}},
		{"mail_list", map[string]any{"account": "archive", "threads": true}},
		{"mail_search", map[string]any{"query": "lunch"}},
		{"mail_senders", map[string]any{}},
		{"mail_thread", map[string]any{"id": id("lunch")}},
		{"mail_headers", map[string]any{"id": id("lunch")}},
		{"mail_show", map[string]any{"id": id("lunch")}},
		{"mail_show", map[string]any{"id": id("maildir")}},
		{"mail_attachments", map[string]any{"id": id("report")}},
		{"mail_attachment_text", map[string]any{"id": id("report")}},
		{"mail_attachment_save", map[string]any{"id": id("report")}},
		{"mail_sync", map[string]any{}},
		{"calendar_list", map[string]any{}},
		{"agenda", week},
		{"calendar_event", map[string]any{"id": id("team")}},
		{"calendar_freebusy", week},
		{"task_list", map[string]any{}},
		{"task_get", map[string]any{"id": id("task")}},
		{"contacts_search", map[string]any{"query": "priya"}},
		{"contact_get", map[string]any{"id": id("contact")}},
		{"notes_find", map[string]any{}},
		{"notes_find", map[string]any{"query": "note"}},
		{"note_read", map[string]any{"id": "Notes/first.md"}},
		{"note_add", map[string]any{"title": "Shopping", "text": "Milk, bread."}},
		{"rules_test", map[string]any{"rule": rule("A")}},
		{"rules_propose", map[string]any{"rule": rule("A")}},
		{"rules_list", map[string]any{}},
		{"rules_update", map[string]any{"id": "A", "state": "enabled"}},
		{"rules_coverage", map[string]any{"folder": "INBOX"}},
		{"rules_update", map[string]any{"id": "A", "position": 1}},
		{"rules_apply_existing", map[string]any{"id": "A"}},
		{"rules_propose", map[string]any{"rule": rule("B")}},
		{"rules_propose", map[string]any{"id": "B", "withdraw": true}},
		{"rules_propose", map[string]any{"rule": rule("C")}},
		{"rules_update", map[string]any{"id": "C", "state": "rejected"}},
		{"mail_move", map[string]any{"ids": []any{id("news1")}, "to": "archive"}},
		{"mail_undo", map[string]any{"id": ref{"mail_move", []any{"action_id"}}}},
		{"mail_move", map[string]any{"ids": []any{id("news2")}, "to": "Receipts"}},
		{"mail_mark", map[string]any{"query": "from:news", "how": "flagged"}},
		{"mail_move", map[string]any{"ids": []any{id("news3")}, "to": "junk"}},
		{"mail_move", map[string]any{"ids": []any{id("news3")}, "to": "not_junk"}},
		{"mail_move", map[string]any{"query": `subject:"A note"`, "to": "trash"}},
		{"mail_actions", map[string]any{}},
		{"mail_actions", map[string]any{"backups": true}},
		{"mail_undo", map[string]any{"id": ref{"mail_actions", []any{"backups", 0, "backup"}}}},
		{"mail_backups_purge", map[string]any{}},
		{"mail_unsubscribe", map[string]any{"id": id("news4")}},
		{"mail_draft", map[string]any{"to": []any{smtptest.Addr("kinds")}, "subject": "Valid everywhere", "body": "Checked against its schema."}},
		{"mail_send", map[string]any{"id": id("lunch"), "body": "Noon it is."}},
		{"mail_sync", map[string]any{"account": "work"}},
		{"mail_list", map[string]any{"account": "work", "folder": "Drafts"}},
		{"mail_send", map[string]any{"id": ref{"mail_list", []any{"messages", 0, "id"}}, "draft": true}},
		{"calendar_respond", map[string]any{"id": id("invite"), "answer": "tentative", "calendar": h.calName}},
		{"calendar_create", map[string]any{"summary": "Valid", "start": "2026-12-01", "all_day": true, "calendar": h.calName, "recurrence": "FREQ=YEARLY"}},
		{"calendar_update", map[string]any{"id": id("review"), "start": "2026-11-12 17:00", "time_zone": "America/New_York"}},
		{"calendar_update", map[string]any{"id": id("ny"), "cancel": true}},
		{"task_create", map[string]any{"summary": "Valid task", "due": "2026-11-20 17:00", "list": h.tasks}},
		{"task_update", map[string]any{"id": id("task"), "priority": 1, "status": "in-process"}},
		{"task_update", map[string]any{"id": id("task"), "status": "completed"}},
		{"task_update", map[string]any{"id": id("task"), "status": "needs-action"}},
		{"task_delete", map[string]any{"id": id("chore")}},
		{"status", map[string]any{}},
	}
	if h.sieve {
		uses = append(uses, use{"rules_push", map[string]any{"id": "work"}})
	}
	return uses
}

// planOut is what plan-client.mjs prints.
type planOut struct {
	ProtocolVersion string `json:"protocolVersion"`
	Tools           []struct {
		Name         string          `json:"name"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	Calls []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Error     string         `json:"error"`
		Result    *toolResult    `json:"result"`
	} `json:"calls"`
}

// TestEveryAnswerEveryKind is must-show 6: with one account of every kind (IMAP, Maildir,
// CalDAV/CardDAV, a folder of .ics files) and notes configured, every tool tools/list gives
// with every scope granted is called on one connection of an independent client, the
// TypeScript SDK's (plan-client.mjs), which checks each structuredContent against the tool's
// outputSchema and refuses one that does not validate; each answer is checked again here with
// santhosh-tekuri/jsonschema. Pairs are prepared and committed, tools with a dry run run dry
// and then for real: every answer a tool can give on this server is one of them.
func TestEveryAnswerEveryKind(t *testing.T) {
	c := needClients(t)
	script := c.planScript(t)
	h := newKindsHome(t)
	inputs := h.findIDs(t)
	uses := kindsUses(h)
	steps := buildPlan(t, uses, inputs)

	// Every listed tool is called: a new tool must add its arguments to kindsUses.
	called := map[string]bool{}
	for _, s := range steps {
		called[s.Name] = true
	}
	var missing []string
	for name := range inputs {
		if !called[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 && !(len(missing) == 2 && !h.sieve && slices.Equal(missing, []string{"rules_push", "rules_push_commit"})) {
		t.Fatalf("tools listed but not called: %v; add their arguments to kindsUses", missing)
	}
	if !h.sieve {
		t.Logf("rules_push is not called: the test Dovecot has no ManageSieve (TestRulesPushPair checks it where Pigeonhole is installed)")
	}

	b, _ := json.Marshal(steps)
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runClientWithin(t, 6*time.Minute, c.dir, h.env, c.node20, script, plan, "--", binary, "mcp", "--config", h.cfg, "--scopes", allScopes())
	if r.code != 0 {
		t.Fatalf("plan client failed:%s", r)
	}
	var out planOut
	decode(t, r.stdout, &out, r)
	schemas := map[string][]byte{}
	for _, tl := range out.Tools {
		schemas[tl.Name] = tl.OutputSchema
	}
	if len(schemas) != len(inputs) {
		t.Errorf("the TypeScript client lists %d tools, the Go client %d", len(schemas), len(inputs))
	}
	if len(out.Calls) != len(steps) {
		t.Fatalf("%d answers for %d calls%s", len(out.Calls), len(steps), r)
	}
	validated := map[string]int{}
	for i, cl := range out.Calls {
		label := fmt.Sprintf("call %d %s %v", i, cl.Name, cl.Arguments)
		switch {
		case cl.Error != "":
			t.Errorf("%s: the TypeScript SDK refused the answer: %s", label, cl.Error)
			continue
		case cl.Result == nil:
			t.Errorf("%s: no result", label)
			continue
		case cl.Result.IsError:
			t.Errorf("%s: isError: %s", label, cl.Result.text())
			continue
		case cl.Result.StructuredContent == nil:
			t.Errorf("%s: no structuredContent", label)
			continue
		}
		if err := compile(t, schemas[cl.Name]).Validate(anyJSON(cl.Result.StructuredContent)); err != nil {
			t.Errorf("%s: structuredContent does not validate against its outputSchema: %v", label, err)
			continue
		}
		validated[cl.Name]++
	}
	t.Logf("%d calls of %d tools on one connection, %d tools with every answer valid", len(out.Calls), len(called), len(validated))

	// Then the MCP Inspector's CLI, one connection per call, calls each tool that only reads
	// once more, over what the plan left: it lists the tools first, so the SDK under it checks
	// the answer against its outputSchema, and exits 1 when it does not validate.
	inspected := map[string]bool{}
	for _, st := range steps {
		if inspected[st.Name] || !inspectable(st) {
			continue
		}
		inspected[st.Name] = true
		args := []string{filepath.Join(c.dir, inspector015), binary, "--method", "tools/call", "--tool-name", st.Name}
		for k, v := range st.Arguments {
			val, ok := v.(string)
			if !ok {
				b, _ := json.Marshal(v)
				val = string(b)
			}
			args = append(args, "--tool-arg", k+"="+val)
		}
		args = append(args, "--", "mcp", "--config", h.cfg, "--scopes", allScopes())
		r := runClient(t, c.dir, h.env, c.node20, args...)
		if r.code != 0 {
			t.Errorf("inspector: %s %v:%s", st.Name, st.Arguments, r)
			continue
		}
		var res toolResult
		decode(t, r.stdout, &res, r)
		if res.IsError || res.StructuredContent == nil {
			t.Errorf("inspector: %s %v: isError %v: %s", st.Name, st.Arguments, res.IsError, res.text())
			continue
		}
		if err := compile(t, schemas[st.Name]).Validate(anyJSON(res.StructuredContent)); err != nil {
			t.Errorf("inspector: %s: structuredContent does not validate against its outputSchema: %v", st.Name, err)
		}
	}
	t.Logf("the inspector CLI checked the answers of %d tools", len(inspected))

	// The accounts of every kind are shown, with where a DAV account syncs from.
	var kinds []string
	for _, cl := range out.Calls {
		if cl.Name != "status" || cl.Result == nil {
			continue
		}
		kinds = kinds[:0]
		for _, a := range cl.Result.StructuredContent["accounts"].([]any) {
			row := a.(map[string]any)
			kinds = append(kinds, fmt.Sprint(row["name"], ":", row["kind"]))
			if row["kind"] == "caldav" && (row["caldav"] == nil || row["user"] == nil) {
				t.Errorf("the CalDAV account's row says neither where it syncs from nor as whom: %v", row)
			}
		}
	}
	sort.Strings(kinds)
	if want := []string{"archive:maildir", "cal:caldav", "feed:ics", "work:imap"}; !slices.Equal(kinds, want) {
		t.Errorf("accounts answered %v; want %v", kinds, want)
	}
}

// planScript is plan-client.mjs of the source tree, copied beside a link to the installed
// clients' node_modules: the installed folder (shared, perhaps older than the script) is only
// read.
func (c npmClients) planScript(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "clients", planClient))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(c.dir, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, planClient)
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// inspectable says whether a call can run alone, on a connection of its own, after the plan:
// it only reads, and takes nothing from an earlier answer.
func inspectable(st planStep) bool {
	b, _ := json.Marshal(st.Arguments)
	spec := specOf(st.Name)
	return spec != nil && spec.Phase == "" && spec.Effect == generated.EffectNone && !strings.Contains(string(b), `"$ref"`)
}

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	_ "modernc.org/sqlite"
)

// actionBox is a throwaway HOME with one IMAP account whose INBOX holds three
// newsletters and a note, with Archive, Junk and Trash folders, synced.
type actionBox struct {
	env  []string
	cfg  string
	user *imaptest.User
	data string // $XDG_DATA_HOME
}

func newActionBox(t *testing.T, srv *imaptest.Server, extra string) *actionBox {
	t.Helper()
	return newActionBoxWith(t, srv, extra, []string{"Archive", "Junk", "Trash", "Receipts"})
}

func newActionBoxWith(t *testing.T, srv *imaptest.Server, extra string, folders []string) *actionBox {
	t.Helper()
	b := &actionBox{user: srv.NewUser(t)}
	for i := 1; i <= 3; i++ {
		b.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: News <news@example.test>\r\nTo: me@example.test\r\nSubject: Newsletter %d\r\nDate: Mon, 2%d Nov 2026 10:00:00 +0000\r\nMessage-ID: <news%d@example.test>\r\n\r\nIssue %d.\r\n", i, i, i, i)), "")
	}
	b.user.AddMessage(t, "INBOX", []byte("From: Carol <carol@example.test>\r\nTo: me@example.test\r\nSubject: A note\r\nDate: Mon, 23 Nov 2026 12:00:00 +0000\r\nMessage-ID: <note@example.test>\r\n\r\nHello.\r\n"), "S")
	for _, f := range folders {
		b.user.AddMessage(t, f, []byte(fmt.Sprintf("From: x@example.test\r\nSubject: Kept in %s\r\nDate: Sun, 01 Nov 2026 10:00:00 +0000\r\nMessage-ID: <kept-%s@example.test>\r\n\r\nKept.\r\n", f, f)), "S")
	}
	b.env = home(t)
	for _, kv := range b.env {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			b.data = v
		}
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(b.user.Password+"\n"), 0o600)
	b.cfg = filepath.Join(dir, "config.toml")
	body := fmt.Sprintf("[[accounts]]\nname = \"work\"\nkind = \"imap\"\nserver = %q\nuser = %q\npassword_cmd = \"cat %s\"\ntls = \"none\"\naddress = \"me@example.test\"\n%s", srv.Addr, b.user.Name, pw, extra)
	if err := os.WriteFile(b.cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	b.sync(t)
	return b
}

func (b *actionBox) sync(t *testing.T) {
	t.Helper()
	if out, _, code := runCLI(t, b.env, "sync", "--config", b.cfg); code != 0 {
		t.Fatalf("postern sync: exit %d\n%s", code, out)
	}
}

func (b *actionBox) connect(t *testing.T, scopes string) *mcp.ClientSession {
	mb := &mailbox{env: b.env, cfg: b.cfg}
	return mb.connect(t, scopes, nil)
}

// serverState is every folder of the account as a second IMAP client sees it:
// per folder, each message's Message-ID, flags and size, sorted.
func (b *actionBox) serverState(t *testing.T) map[string][]string {
	t.Helper()
	c := b.user.Login(t, nil)
	defer c.Logout()
	boxes, err := c.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, mb := range boxes {
		sel, err := c.Select(mb.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		if sel.NumMessages == 0 {
			out[mb.Mailbox] = rows
			continue
		}
		section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-ID"}, Peek: true}
		msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{Flags: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			var flags []string
			for _, f := range m.Flags {
				if f != `\Recent` {
					flags = append(flags, string(f))
				}
			}
			sort.Strings(flags)
			id := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(m.FindBodySection(section))), "Message-ID:"))
			rows = append(rows, fmt.Sprintf("%s %v %d", id, flags, m.RFC822Size))
		}
		sort.Strings(rows)
		out[mb.Mailbox] = rows
	}
	return out
}

// storeDump is the store's messages as rows of text: id, folder, uid, flags.
func (b *actionBox) storeDump(t *testing.T) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.data, "postern", "store.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT m.id, f.name, m.uid, m.flags, m.subject FROM messages m JOIN folders f ON f.id = m.folder_id ORDER BY m.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sb strings.Builder
	for rows.Next() {
		var id, uid, flags int64
		var folder, subject string
		rows.Scan(&id, &folder, &uid, &flags, &subject)
		fmt.Fprintf(&sb, "%d %s %d %d %s\n", id, folder, uid, flags, subject)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM actions`).Scan(&n)
	fmt.Fprintf(&sb, "actions %d\n", n)
	return sb.String()
}

func has(rows []string, msgid string) bool {
	for _, r := range rows {
		if strings.HasPrefix(r, "<"+msgid+">") {
			return true
		}
	}
	return false
}

func rowOf(rows []string, msgid string) string {
	for _, r := range rows {
		if strings.HasPrefix(r, "<"+msgid+">") {
			return r
		}
	}
	return ""
}

// folderOf is the folder the store lists a message id in, through mail_search.
func folderOf(t *testing.T, cs *mcp.ClientSession, id string) string {
	t.Helper()
	sc, text, isErr := call(t, cs, "mail_search", map[string]any{"query": "Newsletter OR note OR Kept", "limit": 100, "fields": []string{"folder"}})
	if isErr {
		t.Fatalf("mail_search: %s", text)
	}
	for _, m := range sc["messages"].([]any) {
		row := m.(map[string]any)
		if row["id"] == id {
			f, _ := row["folder"].(string)
			return f
		}
	}
	return ""
}

func rowsOf(t *testing.T, sc map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range sc["messages"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

// TestActionsDryRunActUndo: for each action tool, a dry run leaves the server
// (seen through a second IMAP login) and the store exactly as they were and
// says what would happen; the act does it, the store follows at once with ids
// unchanged and a fresh sync agrees; mail_undo puts everything back.
func TestActionsDryRunActUndo(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	cs := b.connect(t, "read,mail:modify")
	news1 := messageID(t, cs, `subject:"Newsletter 1"`)
	news2 := messageID(t, cs, `subject:"Newsletter 2"`)
	note := messageID(t, cs, `subject:"A note"`)
	original := b.serverState(t)

	cases := []struct {
		tool    string
		args    map[string]any
		id      string
		msgid   string
		to      string // the folder it ends in ("" : stays)
		outcome string
		check   func(row string) bool // the server's row of the message after the act
	}{
		{"mail_move", map[string]any{"ids": []string{news1}, "to": "archive"}, news1, "news1@example.test", "Archive", "moved", nil},
		{"mail_move", map[string]any{"ids": []string{news2}, "to": "receipts"}, news2, "news2@example.test", "Receipts", "moved", nil},
		{"mail_mark", map[string]any{"ids": []string{note}, "how": "unread"}, note, "note@example.test", "", "marked",
			func(r string) bool { return !strings.Contains(r, `\Seen`) }},
		{"mail_mark", map[string]any{"ids": []string{news1}, "how": "flagged"}, news1, "news1@example.test", "", "marked",
			func(r string) bool { return strings.Contains(r, `\Flagged`) }},
		{"mail_move", map[string]any{"query": `subject:"Newsletter 3"`, "to": "junk"}, "", "news3@example.test", "Junk", "moved",
			func(r string) bool { return strings.Contains(r, "$Junk") }},
		{"mail_move", map[string]any{"ids": []string{note}, "to": "trash"}, note, "note@example.test", "Trash", "moved", nil},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.tool, " ", c.args["to"], c.args["how"]), func(t *testing.T) {
			before, beforeStore := b.serverState(t), b.storeDump(t)
			from := ""
			for f, rows := range before {
				if has(rows, c.msgid) {
					from = f
				}
			}
			sc, text, isErr := call(t, cs, c.tool, with(c.args, "dry_run", true))
			if isErr {
				t.Fatalf("dry run: %s", text)
			}
			if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Fatalf("the dry run changed the server:\nbefore %v\nafter  %v", before, got)
			}
			if got := b.storeDump(t); got != beforeStore {
				t.Fatalf("the dry run changed the store:\nbefore %s\nafter  %s", beforeStore, got)
			}
			rows := rowsOf(t, sc)
			if sc["dry_run"] != true || sc["action_id"] != nil || len(rows) != 1 || rows[0]["outcome"] != c.outcome {
				t.Fatalf("the dry run says %v", sc)
			}
			if c.to != "" && rows[0]["to"] != c.to {
				t.Fatalf("the dry run says it would go to %v, not %s: %s", rows[0]["to"], c.to, text)
			}
			id := rows[0]["id"].(string)

			sc, text, isErr = call(t, cs, c.tool, c.args)
			if isErr || sc["action_id"] == nil || sc["changed"] != float64(1) {
				t.Fatalf("act: %s", text)
			}
			action := sc["action_id"].(string)
			after := b.serverState(t)
			where := from
			if c.to != "" {
				where = c.to
				if has(after[from], c.msgid) || !has(after[c.to], c.msgid) {
					t.Fatalf("the message is not in %s on the server: %v", c.to, after)
				}
			}
			if c.check != nil && !c.check(rowOf(after[where], c.msgid)) {
				t.Fatalf("on the server the message is %q", rowOf(after[where], c.msgid))
			}
			if got := folderOf(t, cs, id); got != where {
				t.Fatalf("the store lists %s in %q, not %s", id, got, where)
			}
			b.sync(t)
			if got := folderOf(t, cs, id); got != where {
				t.Fatalf("after a sync the store lists %s in %q, not %s (the id must not change)", id, got, where)
			}
			if c.args["to"] == "trash" {
				sc, _, _ := call(t, cs, "mail_actions", map[string]any{"backups": true})
				if bs := sc["backups"].([]any); len(bs) != 1 || bs[0].(map[string]any)["folder"] != from {
					t.Fatalf("mail_actions backups: %v", sc)
				}
			}

			sc, text, isErr = call(t, cs, "mail_undo", map[string]any{"id": action})
			if isErr || sc["changed"] != float64(1) || rowsOf(t, sc)[0]["outcome"] != "put_back" {
				t.Fatalf("undo: %s", text)
			}
			undone := b.serverState(t)
			if fmt.Sprint(undone) != fmt.Sprint(before) {
				t.Fatalf("undo did not put the server back:\nbefore %v\nafter  %v", before, undone)
			}
			if got := folderOf(t, cs, id); got != from {
				t.Fatalf("after undo the store lists %s in %q, not %s", id, got, from)
			}
			if _, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": action}); !isErr || !strings.Contains(text, "already undone") {
				t.Fatalf("a second undo: %s", text)
			}
		})
	}
	if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(original) {
		t.Fatalf("after every undo the server is not as it was:\nbefore %v\nafter  %v", original, got)
	}
	sc, text, _ := call(t, cs, "mail_actions", map[string]any{})
	acts := sc["actions"].([]any)
	if len(acts) != 2*len(cases) || acts[0].(map[string]any)["undoes"] == nil {
		t.Fatalf("mail_actions: %s", text)
	}
	// Every act and undo is in the audit log with its action id; the dry runs are there without one.
	cs.Close()
	logged := map[string]bool{}
	dry := 0
	for _, line := range strings.Split(strings.TrimSpace(string((&mailbox{env: b.env}).auditLog())), "\n") {
		var e struct {
			Tool, Action string
			Args         map[string]any
		}
		json.Unmarshal([]byte(line), &e)
		if e.Action != "" {
			logged[e.Action] = true
		} else if e.Args["dry_run"] == true {
			dry++
		}
	}
	for _, a := range acts {
		if id := a.(map[string]any)["action_id"].(string); !logged[id] {
			t.Errorf("action %s is not in the audit log", id)
		}
	}
	if dry != len(cases) {
		t.Errorf("the audit log holds %d dry runs without an action id, not %d", dry, len(cases))
	}
}

// TestDeleteRestoredFromBackup: a deleted message whose Trash copy was then
// expunged on the server comes back from its backup on undo.
func TestDeleteRestoredFromBackup(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	cs := b.connect(t, "read,mail:modify")
	note := messageID(t, cs, `subject:"A note"`)
	before := b.serverState(t)
	sc, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{note}, "to": "trash"})
	if isErr {
		t.Fatalf("delete: %s", text)
	}
	action := sc["action_id"].(string)
	// mail_actions lists the backup with backups: true, one account's with account.
	sc, text, isErr = call(t, cs, "mail_actions", map[string]any{"backups": true, "account": "work"})
	if bs, _ := sc["backups"].([]any); isErr || len(bs) != 1 || bs[0].(map[string]any)["subject"] != "A note" {
		t.Fatalf("mail_actions backups: %s", text)
	}
	for _, args := range []map[string]any{{"account": "work"}, {"backups": true, "action_id": action}} {
		if _, text, isErr := call(t, cs, "mail_actions", args); !isErr || !strings.Contains(text, "backups") {
			t.Fatalf("mail_actions %v: %v %s", args, isErr, text)
		}
	}
	files, _ := filepath.Glob(filepath.Join(b.data, "postern", "backups", "work", "*.eml"))
	if len(files) != 1 {
		t.Fatalf("backups: %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Fatalf("the backup is %v", fi.Mode())
	}
	// The person empties the Trash in another mail program.
	c := b.user.Login(t, nil)
	if _, err := c.Select("Trash", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.Store(imap.SeqSetNum(1, 2), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagDeleted}, Silent: true}, nil).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expunge().Collect(); err != nil {
		t.Fatal(err)
	}
	c.Logout()
	sc, text, isErr = call(t, cs, "mail_undo", map[string]any{"id": action})
	if isErr || rowsOf(t, sc)[0]["outcome"] != "restored" {
		t.Fatalf("undo: %s", text)
	}
	after := b.serverState(t)
	if rowOf(after["INBOX"], "note@example.test") != rowOf(before["INBOX"], "note@example.test") {
		t.Fatalf("the restored message is %q, not %q", rowOf(after["INBOX"], "note@example.test"), rowOf(before["INBOX"], "note@example.test"))
	}
}

// TestActionsWithoutMoveOrUIDPlus: a server without MOVE moves through COPY and
// UID EXPUNGE; one with neither MOVE nor UIDPLUS refuses with a sentence and
// nothing changes.
func TestActionsWithoutMoveOrUIDPlus(t *testing.T) {
	for _, c := range []struct {
		name, caps string
		works      bool
	}{
		{"no MOVE", "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ SPECIAL-USE CONDSTORE UIDPLUS", true},
		{"neither", "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ SPECIAL-USE CONDSTORE", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newActionBox(t, imaptest.NewServerWith(t, imaptest.Options{Capability: c.caps}), "")
			cs := b.connect(t, "read,mail:modify")
			id := messageID(t, cs, `subject:"Newsletter 1"`)
			before := b.serverState(t)
			for _, tool := range []string{"archive", "trash"} {
				sc, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{id}, "to": tool})
				if !c.works {
					if !isErr || !strings.Contains(text, "plain EXPUNGE") {
						t.Fatalf("%s: %s", tool, text)
					}
					if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
						t.Fatalf("%s changed the server:\n%v\n%v", tool, before, got)
					}
					continue
				}
				if isErr || sc["changed"] != float64(1) {
					t.Fatalf("%s: %s", tool, text)
				}
				if _, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": sc["action_id"]}); isErr {
					t.Fatalf("undo: %s", text)
				}
				if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
					t.Fatalf("%s and its undo did not leave the server as it was:\n%v\n%v", tool, before, got)
				}
			}
		})
	}
}

// TestArchive500ByQuery: a query archive of 500 newsletters is one action,
// undone in one call.
func TestArchive500ByQuery(t *testing.T) {
	srv := imaptest.Start(t)
	b := newActionBox(t, srv, "")
	for i := 0; i < 497; i++ {
		b.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: News <news@example.test>\r\nTo: me@example.test\r\nSubject: Bulk %d\r\nDate: Tue, 10 Nov 2026 10:00:00 +0000\r\nMessage-ID: <bulk%d@example.test>\r\n\r\nIssue.\r\n", i, i)), "")
	}
	b.sync(t)
	cs := b.connect(t, "read,mail:modify")
	start := time.Now()
	sc, text, isErr := call(t, cs, "mail_move", map[string]any{"query": "from:news@example.test", "to": "archive"})
	took := time.Since(start)
	if isErr || sc["changed"] != float64(500) {
		t.Fatalf("archive: %.300s", text)
	}
	start = time.Now()
	sc, text, isErr = call(t, cs, "mail_undo", map[string]any{"id": sc["action_id"]})
	undoTook := time.Since(start)
	if isErr || sc["changed"] != float64(500) {
		t.Fatalf("undo: %.300s", text)
	}
	if n := len(b.serverState(t)["INBOX"]); n != 501 {
		t.Fatalf("INBOX holds %d messages after the undo, not 501", n)
	}
	t.Logf("500 messages: archive %v, undo %v", took.Round(time.Millisecond), undoTook.Round(time.Millisecond))
	if _, text, isErr := call(t, cs, "mail_move", map[string]any{"query": "from:news@example.test OR subject:note", "to": "archive"}); !isErr || !strings.Contains(text, "more than 500") {
		t.Fatalf("501 messages: %s", text)
	}
}

// TestArchiveFolderSetting: an account with no Archive folder is told how to
// name one, and nothing changes; with archive_folder set, mail goes there.
func TestArchiveFolderSetting(t *testing.T) {
	srv := imaptest.Start(t)
	b := newActionBoxWith(t, srv, "", []string{"Receipts"})
	cs := b.connect(t, "read,mail:modify")
	id := messageID(t, cs, `subject:"Newsletter 1"`)
	before := b.serverState(t)
	if _, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{id}, "to": "archive"}); !isErr || !strings.Contains(text, "archive_folder") {
		t.Fatalf("archive with no Archive folder: %s", text)
	}
	if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("a refused archive changed the server")
	}
	cfg, _ := os.ReadFile(b.cfg)
	os.WriteFile(b.cfg, append(cfg, "archive_folder = \"Receipts\"\n"...), 0o600)
	time.Sleep(1100 * time.Millisecond)
	sc, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{id}, "to": "archive"})
	if isErr || rowsOf(t, sc)[0]["to"] != "Receipts" || !has(b.serverState(t)["Receipts"], "news1@example.test") {
		t.Fatalf("archive with archive_folder: %s", text)
	}
}

// TestActionsFromTerminal: postern actions lists what an agent did, with its
// client, and postern undo puts it back, without a --scopes flag.
func TestActionsFromTerminal(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	cs := b.connect(t, "read,mail:modify")
	id := messageID(t, cs, `subject:"Newsletter 2"`)
	sc, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{id}, "to": "archive"})
	if isErr {
		t.Fatalf("archive: %s", text)
	}
	action := sc["action_id"].(string)
	out, errOut, code := runCLI(t, b.env, "actions", "--config", b.cfg)
	if code != 0 || !strings.Contains(out, action) || !strings.Contains(out, "send-e2e") || !strings.Contains(out, "archive") {
		t.Fatalf("postern actions: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, b.env, "undo", action, "--dry-run", "--config", b.cfg)
	if code != 0 || !has(b.serverState(t)["Archive"], "news2@example.test") {
		t.Fatalf("postern undo --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, b.env, "undo", action, "--config", b.cfg, "--json")
	if code != 0 || !strings.Contains(out, `"put_back"`) || !has(b.serverState(t)["INBOX"], "news2@example.test") {
		t.Fatalf("postern undo: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = runCLI(t, b.env, "undo", action, "--config", b.cfg); code != 1 || !strings.Contains(errOut, "already undone") {
		t.Fatalf("a second postern undo: exit %d %s", code, errOut)
	}
	if _, errOut, code = runCLI(t, b.env, "undo", "a999", "--config", b.cfg); code != 1 || !strings.Contains(errOut, "no action a999") {
		t.Fatalf("postern undo of an unknown action: exit %d %s", code, errOut)
	}
}

// ageBackups makes every backup of the store in env's HOME 60 days old.
func ageBackups(t *testing.T, env []string) {
	t.Helper()
	data := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			data = v
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "postern", "store.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE backups SET saved = ?`, time.Now().Add(-60*24*time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
}

// TestActionAnswersValidate calls every tool that makes a change postern can
// undo, first as a dry run and then for real, over an IMAP account, and checks
// each answer against the outputSchema tools/list announced; the next
// tool of effect reversible must add its arguments here.
func TestActionAnswersValidate(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	cs := b.connect(t, allScopes())
	schemas := outputSchemas(t, cs)
	news := func(n int) []string { return []string{messageID(t, cs, fmt.Sprintf(`subject:"Newsletter %d"`, n))} }
	var lastAction, backup string
	type step struct {
		tool string
		args func() map[string]any
	}
	order := []step{
		{"mail_move", func() map[string]any { return map[string]any{"ids": news(1), "to": "archive"} }},
		{"mail_move", func() map[string]any { return map[string]any{"ids": news(2), "to": "Receipts"} }},
		{"mail_mark", func() map[string]any { return map[string]any{"query": "from:news", "how": "flagged"} }},
		{"mail_move", func() map[string]any { return map[string]any{"ids": news(3), "to": "junk"} }},
		{"mail_move", func() map[string]any { return map[string]any{"ids": news(3), "to": "not_junk"} }},
		{"mail_move", func() map[string]any { return map[string]any{"query": `subject:"A note"`, "to": "trash"} }},
		{"mail_undo", func() map[string]any { return map[string]any{"id": lastAction} }},
		{"mail_undo", func() map[string]any { // a backup's id: it is restored
			sc, _, _ := call(t, cs, "mail_actions", map[string]any{"backups": true})
			backup = sc["backups"].([]any)[0].(map[string]any)["backup"].(string)
			return map[string]any{"id": backup}
		}},
		{"rules_apply_existing", func() map[string]any {
			os.WriteFile(filepath.Join(filepath.Dir(b.cfg), "rules.toml"), []byte("[[rules]]\nname = \"Flag news\"\nstate = \"enabled\"\nmatch = { from = \"news@\" }\nactions = [{ do = \"unflag\" }]\n"), 0o600)
			return map[string]any{"id": "Flag news", "folder": "Archive"}
		}},
	}
	tested := map[string]bool{}
	for _, o := range order {
		tested[o.tool] = true
	}
	n := 0
	for _, spec := range generated.Tools {
		if spec.Effect == generated.EffectReversible && calendarWrite(spec) {
			// An event or task write needs a CalDAV account: TestCalendarWritesValidate
			// (calendar_e2e_test.go) calls each, dry and for real, against Radicale.
			continue
		}
		if spec.Effect == generated.EffectReversible {
			n++
			if !tested[spec.Name] {
				t.Errorf("%s is a new tool of effect reversible: add its arguments to this test", spec.Name)
			}
		}
	}
	if n != len(tested) {
		t.Fatalf("%d reversible tools in the registry, %d in this test", n, len(tested))
	}
	for _, o := range order {
		name, a := o.tool, o.args()
		for _, dry := range []bool{true, false} {
			sc, text, isErr := call(t, cs, name, with(a, "dry_run", dry))
			if isErr {
				t.Fatalf("%s dry_run=%v: %s", name, dry, text)
			}
			if err := compile(t, schemas[name]).Validate(anyJSON(sc)); err != nil {
				t.Errorf("%s dry_run=%v: %v", name, dry, err)
			}
			if !dry {
				if id, _ := sc["action_id"].(string); id != "" {
					lastAction = id
				} else {
					t.Errorf("%s: no action_id: %s", name, text)
				}
			}
		}
	}
}

// TestUndoChainNewestFirst: the person's sweep after an agent moved the same messages twice
// (archive, then Archive to Trash): postern undo of the move, then of the archive, puts them
// back in INBOX, though the first undo gave them new UIDs in Archive.
func TestUndoChainNewestFirst(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	before := b.serverState(t)
	cs := b.connect(t, "read,mail:modify")
	ids := []string{messageID(t, cs, `subject:"Newsletter 1"`), messageID(t, cs, `subject:"Newsletter 2"`)}
	var actions []string
	for _, step := range []struct {
		tool string
		args map[string]any
	}{{"mail_move", map[string]any{"ids": ids, "to": "archive"}}, {"mail_move", map[string]any{"ids": ids, "to": "Trash"}}} {
		sc, text, isErr := call(t, cs, step.tool, with(step.args, "dry_run", false))
		if isErr {
			t.Fatalf("%s: %s", step.tool, text)
		}
		actions = append(actions, sc["action_id"].(string))
	}
	for i := len(actions) - 1; i >= 0; i-- {
		out, errOut, code := runCLI(t, b.env, "undo", actions[i], "--config", b.cfg, "--json")
		if code != 0 || strings.Contains(out, `"gone"`) || strings.Contains(out, `"failed"`) {
			t.Fatalf("postern undo %s: exit %d\n%s%s", actions[i], code, out, errOut)
		}
	}
	after := b.serverState(t)
	for folder, rows := range before {
		if strings.Join(stripSizes(rows), "\n") != strings.Join(stripSizes(after[folder]), "\n") {
			t.Errorf("%s after the sweep:\n%v\nbefore:\n%v", folder, after[folder], rows)
		}
	}
}

// stripSizes keeps each row's Message-ID and flags.
func stripSizes(rows []string) []string {
	var out []string
	for _, r := range rows {
		if i := strings.LastIndex(r, " "); i > 0 {
			r = r[:i]
		}
		out = append(out, r)
	}
	return out
}

// TestMoveWords: mail_move's to takes the words of the special folders, not_junk among
// them, and a folder called exactly like a word stays reachable by that name.
func TestMoveWords(t *testing.T) {
	b := newActionBoxWith(t, imaptest.Start(t), "", []string{"Archive", "Junk", "Trash", "junk"})
	cs := b.connect(t, "read,mail:modify")
	news1 := messageID(t, cs, `subject:"Newsletter 1"`)
	news2 := messageID(t, cs, `subject:"Newsletter 2"`)

	// "junk" is a folder of its own here, not the Junk folder: a plain move, no report.
	sc, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{news1}, "to": "junk"})
	if isErr || sc["action"] != "move to junk" || rowsOf(t, sc)[0]["to"] != "junk" {
		t.Fatalf("move to the folder junk: %s", text)
	}
	after := b.serverState(t)
	if !has(after["junk"], "news1@example.test") || has(after["Junk"], "news1@example.test") || strings.Contains(rowOf(after["junk"], "news1@example.test"), "$Junk") {
		t.Fatalf("to: junk with a folder named junk: %v", after)
	}

	// not_junk: out of Junk, back to INBOX, reported as not junk; undo puts it back.
	if _, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{news2}, "to": "Junk"}); isErr {
		t.Fatalf("move to Junk: %s", text)
	}
	before := b.serverState(t)
	sc, text, isErr = call(t, cs, "mail_move", map[string]any{"ids": []string{news2}, "to": "not_junk"})
	if isErr || sc["action"] != "not junk" || rowsOf(t, sc)[0]["to"] != "INBOX" {
		t.Fatalf("not_junk: %s", text)
	}
	after = b.serverState(t)
	if r := rowOf(after["INBOX"], "news2@example.test"); !strings.Contains(r, "$NotJunk") {
		t.Fatalf("not_junk: in INBOX the message is %q: %v", r, after)
	}
	if _, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": sc["action_id"]}); isErr {
		t.Fatalf("undo of not_junk: %s", text)
	}
	if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("the undo of not_junk did not put the server back:\nbefore %v\nafter  %v", before, got)
	}
	out, errOut, code := runCLI(t, b.env, "actions", "--config", b.cfg)
	if code != 0 || !strings.Contains(out, "not junk") || !strings.Contains(out, "move to junk") {
		t.Fatalf("postern actions does not say the verbs: exit %d\n%s%s", code, out, errOut)
	}

	// A word spelt otherwise is a folder's name, and no such folder is refused.
	if _, text, isErr := call(t, cs, "mail_move", map[string]any{"ids": []string{news2}, "to": "NOT_JUNK"}); !isErr || !strings.Contains(text, "NOT_JUNK") {
		t.Fatalf("to: NOT_JUNK: %v %s", isErr, text)
	}
}

// TestMergedToolsNameTheirReplacement: a call to a tool merged into another (an allow-list
// written before) is answered with the replacement's name, and changes nothing.
func TestMergedToolsNameTheirReplacement(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	cs := b.connect(t, allScopes())
	news1 := messageID(t, cs, `subject:"Newsletter 1"`)
	before := b.serverState(t)
	for old, now := range map[string]string{"mail_archive": "mail_move", "mail_junk": "mail_move", "mail_delete": "mail_move",
		"mail_backup_restore": "mail_undo", "mail_backups": "mail_actions", "accounts": "status"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: old, Arguments: map[string]any{"ids": []string{news1}, "to": "trash"}})
		var text string
		if err != nil {
			text = err.Error()
		} else if len(res.Content) > 0 {
			text = res.Content[0].(*mcp.TextContent).Text
		}
		if (err == nil && !res.IsError) || !strings.Contains(text, "replaced by "+now) {
			t.Errorf("%s answered %q; want an error naming %s", old, text, now)
		}
	}
	if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("a call of an old name changed the server:\n%v\n%v", before, got)
	}
}

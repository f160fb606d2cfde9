package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// answerBytes is what an answer takes as the envelope carries it: its structured content
// and its text, each as JSON.
func answerBytes(sc map[string]any, text string) int {
	s, _ := json.Marshal(sc)
	t, _ := json.Marshal(text)
	return len(s) + len(t)
}

// pageRows pages through one action's rows with mail_actions, from its first page, and
// returns every row; each page must be a small answer.
func pageRows(t *testing.T, cs *mcp.ClientSession, action string, limit int) []map[string]any {
	t.Helper()
	var rows []map[string]any
	var cursor any
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("mail_actions %s: the pages never end", action)
		}
		args := map[string]any{"action_id": action}
		if limit > 0 {
			args["limit"] = limit
		}
		if cursor != nil {
			args["cursor"] = cursor
		}
		sc, text, isErr := call(t, cs, "mail_actions", args)
		if isErr {
			t.Fatalf("mail_actions %v: %s", args, text)
		}
		if n := answerBytes(sc, text); n > 16<<10 {
			t.Fatalf("a page of %s's rows takes %d bytes, over 16 KB", action, n)
		}
		if acts := sc["actions"].([]any); len(acts) != 1 || acts[0].(map[string]any)["action_id"] != action {
			t.Fatalf("mail_actions %v names %v, not the one action", args, acts)
		}
		rows = append(rows, rowsOf(t, sc)...)
		if cursor = sc["next_cursor"]; cursor == nil {
			return rows
		}
	}
}

// TestArchive400SmallAnswers (issue 24): the dry run, the act and the undo of archiving 400
// newsletters by query each answer in at most 8 KB, text and structured content together,
// with counts by folder and sender and the first 20 rows; mail_actions pages through all 400
// rows of each, the dry run's included, and nothing but the act and its undo enters the log.
func TestArchive400SmallAnswers(t *testing.T) {
	srv := imaptest.Start(t)
	b := newActionBox(t, srv, "")
	const n = 400
	for i := 0; i < n; i++ {
		b.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: Weekly Letters <letters@news.example>\r\nTo: me@example.test\r\nSubject: The weekly letter, issue %d: what happened in the garden this week\r\nDate: Tue, 10 Nov 2026 10:%02d:%02d +0000\r\nMessage-ID: <letter%d@news.example>\r\nList-Id: <weekly.news.example>\r\n\r\nIssue %d.\r\n", i, i/60, i%60, i, i)), "")
	}
	b.sync(t)
	cs := b.connect(t, "read,mail:modify")
	want := map[string]bool{}
	var cursor any
	for {
		args := map[string]any{"query": "from:letters@news.example", "limit": 200}
		if cursor != nil {
			args["cursor"] = cursor
		}
		sc, text, isErr := call(t, cs, "mail_search", args)
		if isErr {
			t.Fatalf("mail_search: %s", text)
		}
		for _, r := range rowsOf(t, sc) {
			want[r["id"].(string)] = true
		}
		if cursor = sc["next_cursor"]; cursor == nil {
			break
		}
	}
	if len(want) != n {
		t.Fatalf("the search finds %d newsletters, not %d", len(want), n)
	}
	// A list or a search without a limit answers one page of 20 rows within 16 KB;
	// next_cursor reaches the rest.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"mail_list", map[string]any{}}, {"mail_search", map[string]any{"query": "from:letters@news.example"}}} {
		sc, text, isErr := call(t, cs, c.tool, c.args)
		if isErr {
			t.Fatalf("%s: %s", c.tool, text)
		}
		if size, rows := answerBytes(sc, text), len(rowsOf(t, sc)); size > 16<<10 || rows != 20 || sc["next_cursor"] == nil {
			t.Errorf("%s by default: %d rows in %d bytes (next_cursor %v), want 20 rows within 16 KB and a cursor", c.tool, rows, size, sc["next_cursor"])
		}
	}
	before := b.serverState(t)

	// check asserts a summary answer of n rows and returns its action_id.
	check := func(step string, sc map[string]any, text string, outcome string) string {
		t.Helper()
		size := answerBytes(sc, text)
		t.Logf("%s: %d bytes (structured %d, text %d)", step, size, size-len(text), len(text))
		if size > 8<<10 {
			t.Errorf("%s answers in %d bytes, over 8 KB", step, size)
		}
		if sc["changed"] != float64(n) {
			t.Errorf("%s: changed %v, want %d", step, sc["changed"], n)
		}
		if rows := rowsOf(t, sc); len(rows) != 20 || rows[0]["outcome"] != outcome {
			t.Errorf("%s shows %d rows (first %v), want the first 20, %s", step, len(rows), rows[0], outcome)
		}
		folders, _ := sc["by_folder"].([]any)
		senders, _ := sc["by_sender"].([]any)
		if len(folders) != 1 || folders[0].(map[string]any)["count"] != float64(n) {
			t.Errorf("%s: by_folder %v", step, folders)
		}
		if len(senders) != 1 || senders[0].(map[string]any)["name"] != "letters@news.example" || senders[0].(map[string]any)["count"] != float64(n) {
			t.Errorf("%s: by_sender %v", step, senders)
		}
		id, _ := sc["action_id"].(string)
		if id == "" || sc["next_cursor"] == nil {
			t.Fatalf("%s: no action_id or next_cursor to page the other rows: %s", step, text)
		}
		return id
	}
	// every checks that rows are each newsletter once, with the outcome.
	every := func(step string, rows []map[string]any, outcome, to string) {
		t.Helper()
		seen := map[string]bool{}
		for _, r := range rows {
			id := r["id"].(string)
			if !want[id] || seen[id] || r["outcome"] != outcome || to != "" && r["to"] != to {
				t.Fatalf("%s: row %v is not a newsletter seen once, %s to %q", step, r, outcome, to)
			}
			seen[id] = true
		}
		if len(seen) != n {
			t.Fatalf("%s: paging gave %d rows, not %d", step, len(seen), n)
		}
	}

	sc, text, isErr := call(t, cs, "mail_move", map[string]any{"query": "from:letters@news.example", "to": "archive", "dry_run": true})
	if isErr || sc["dry_run"] != true {
		t.Fatalf("dry run: %.500s", text)
	}
	preview := check("dry run", sc, text, "moved")
	every("the dry run's rows", pageRows(t, cs, preview, 0), "moved", "Archive")
	if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("the dry run changed the server")
	}
	if _, text, isErr := call(t, cs, "mail_undo", map[string]any{"id": preview}); !isErr || !strings.Contains(text, "dry run") {
		t.Errorf("mail_undo of a dry run's rows: %v %s", isErr, text)
	}

	sc, text, isErr = call(t, cs, "mail_move", map[string]any{"query": "from:letters@news.example", "to": "archive"})
	if isErr || sc["dry_run"] != nil {
		t.Fatalf("archive: %.500s", text)
	}
	action := check("archive", sc, text, "moved")
	archiveCursor := sc["next_cursor"]
	every("the archive's rows", pageRows(t, cs, action, 0), "moved", "Archive")
	every("the archive's rows, 200 a page", pageRows(t, cs, action, 200), "moved", "Archive")
	if got := len(b.serverState(t)["Archive"]); got != n+1 {
		t.Fatalf("Archive holds %d messages after the archive, not %d", got, n+1)
	}

	sc, text, isErr = call(t, cs, "mail_undo", map[string]any{"id": action, "dry_run": true})
	if isErr {
		t.Fatalf("undo dry run: %.500s", text)
	}
	every("the undo dry run's rows", pageRows(t, cs, check("undo dry run", sc, text, "put_back"), 0), "put_back", "INBOX")
	sc, text, isErr = call(t, cs, "mail_undo", map[string]any{"id": action})
	if isErr {
		t.Fatalf("undo: %.500s", text)
	}
	undo := check("undo", sc, text, "put_back")
	every("the undo's rows", pageRows(t, cs, undo, 0), "put_back", "INBOX")
	if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("the undo did not leave the server as it was")
	}

	// A cursor of one action's rows is refused with another action, and without one.
	if _, text, isErr := call(t, cs, "mail_actions", map[string]any{"action_id": undo, "cursor": archiveCursor}); !isErr || !strings.Contains(text, "cursor") {
		t.Errorf("another action's cursor: %v %s", isErr, text)
	}
	if _, text, isErr := call(t, cs, "mail_actions", map[string]any{"cursor": archiveCursor}); !isErr || !strings.Contains(text, "action_id") {
		t.Errorf("a row cursor without its action: %v %s", isErr, text)
	}
	// The log lists the archive and its undo, not the dry runs' rows.
	sc, text, _ = call(t, cs, "mail_actions", map[string]any{})
	var listed []string
	for _, a := range sc["actions"].([]any) {
		listed = append(listed, a.(map[string]any)["action_id"].(string))
	}
	if strings.Join(listed, " ") != undo+" "+action {
		t.Errorf("the log lists %v, want %s and %s: %s", listed, undo, action, text)
	}
}

// TestThreadAcrossFolders (issue 24): a message in INBOX and the reply in Sent are one
// thread, one row of mail_list and mail_search with threads, thread_size 2.
func TestThreadAcrossFolders(t *testing.T) {
	b := newActionBoxWith(t, imaptest.Start(t), "", []string{"Sent"})
	b.user.AddMessage(t, "INBOX", []byte("From: Dora <dora@example.test>\r\nTo: me@example.test\r\nSubject: Lunch on Friday?\r\nDate: Wed, 25 Nov 2026 09:00:00 +0000\r\nMessage-ID: <lunch@example.test>\r\n\r\nShall we?\r\n"), "S")
	b.user.AddMessage(t, "Sent", []byte("From: Me <me@example.test>\r\nTo: dora@example.test\r\nSubject: Re: Lunch on Friday?\r\nDate: Wed, 25 Nov 2026 10:00:00 +0000\r\nMessage-ID: <lunch-re@example.test>\r\nIn-Reply-To: <lunch@example.test>\r\nReferences: <lunch@example.test>\r\n\r\nYes.\r\n"), "S")
	b.sync(t)
	cs := b.connect(t, "read")
	threads := func(tool string, args map[string]any) []map[string]any {
		t.Helper()
		sc, text, isErr := call(t, cs, tool, with(args, "threads", true))
		if isErr {
			t.Fatalf("%s %v: %s", tool, args, text)
		}
		var out []map[string]any
		for _, r := range rowsOf(t, sc) {
			if strings.Contains(fmt.Sprint(r["subject"]), "Lunch") {
				out = append(out, r)
			}
		}
		return out
	}
	for _, c := range []struct {
		tool    string
		args    map[string]any
		subject string
	}{
		{"mail_search", map[string]any{"query": "lunch"}, "Re: Lunch on Friday?"},
		{"mail_search", map[string]any{"query": "from:dora"}, "Lunch on Friday?"},
		{"mail_list", map[string]any{"folder": "INBOX"}, "Lunch on Friday?"},
		{"mail_list", map[string]any{"folder": "Sent"}, "Re: Lunch on Friday?"},
	} {
		rows := threads(c.tool, c.args)
		if len(rows) != 1 || rows[0]["subject"] != c.subject || rows[0]["thread_size"] != float64(2) {
			t.Errorf("%s %v with threads: %v, want one row %q with thread_size 2", c.tool, c.args, rows, c.subject)
		}
	}
	sc, text, _ := call(t, cs, "mail_search", map[string]any{"query": "lunch", "threads": true, "count_only": true})
	if sc["count"] != float64(1) {
		t.Errorf("mail_search count_only with threads: %s, want 1", text)
	}
}

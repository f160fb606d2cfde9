package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// TestThreadIsOldestMessage: a thread's id is its oldest message's (by date,
// ties by id), whatever order the messages arrive in: a reply synced before
// its parent, then the parent, moves the thread to the parent; a message that
// joins two threads puts them under the older one's oldest message.
func TestThreadIsOldestMessage(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aid, err := st.EnsureAccount(ctx, "acct", "imap")
	if err != nil {
		t.Fatal(err)
	}
	inbox := &store.Folder{AccountID: aid, Name: "INBOX"}
	sent := &store.Folder{AccountID: aid, Name: "Sent"}
	for _, f := range []*store.Folder{inbox, sent} {
		if err := st.SaveFolder(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	uid := map[*store.Folder]uint32{}
	add := func(f *store.Folder, msgs ...store.NewMessage) {
		t.Helper()
		for i := range msgs {
			uid[f]++
			msgs[i].UID = uid[f]
			msgs[i].From = store.Address{Email: "a@example.com"}
		}
		if err := st.AddMessages(ctx, f, msgs, uid[f]); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(id, subject string, at time.Time, refs ...string) store.NewMessage {
		m := store.NewMessage{MessageID: id, Subject: subject, Date: at, InternalDate: at.Add(time.Minute), References: refs}
		if len(refs) > 0 {
			m.InReplyTo = refs[len(refs)-1]
		}
		return m
	}
	bySubject := func() map[string]*store.Row {
		rows, _, err := st.Messages(ctx, &store.Filter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*store.Row{}
		for _, r := range rows {
			out[r.Subject] = r
		}
		return out
	}
	// want checks that every subject listed is in the thread of the message
	// with subject root, whose id is the thread's.
	want := func(step, root string, members ...string) {
		t.Helper()
		rows := bySubject()
		r := rows[root]
		if r == nil {
			t.Fatalf("%s: no message %q", step, root)
		}
		for _, s := range append([]string{root}, members...) {
			if got := rows[s].ThreadID; got != r.ID {
				t.Errorf("%s: %q has thread %s, want %s (the id of %q, the oldest)", step, s, store.EncodeID(got), store.EncodeID(r.ID), root)
			}
		}
		th, err := st.Thread(ctx, r.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(th) != len(members)+1 || th[0].ID != r.ID {
			t.Errorf("%s: Thread(%s) lists %d messages, want %d starting with %q", step, store.EncodeID(r.ID), len(th), len(members)+1, root)
		}
	}

	// A reply arrives first: its own thread, for now.
	add(inbox, msg("<r1@x>", "Re: plan", day.Add(2*time.Hour), "<p@x>"))
	want("reply alone", "Re: plan")
	// Its reply in Sent, later: still the first reply's thread.
	add(sent, msg("<r2@x>", "Re: Re: plan", day.Add(3*time.Hour), "<p@x>", "<r1@x>"))
	want("second reply", "Re: plan", "Re: Re: plan")
	// The parent, older than both, arrives last: the thread becomes its.
	add(inbox, msg("<p@x>", "plan", day))
	want("parent last", "plan", "Re: plan", "Re: Re: plan")
	// A newer reply keeps the thread where it is.
	add(inbox, msg("<r3@x>", "Re: plan again", day.Add(5*time.Hour), "<p@x>"))
	want("newer reply", "plan", "Re: plan", "Re: Re: plan", "Re: plan again")

	// In one batch, a reply before its parent.
	add(inbox, msg("<b2@x>", "Re: budget", day.Add(26*time.Hour), "<b1@x>"), msg("<b1@x>", "budget", day.Add(25*time.Hour)))
	want("one batch", "budget", "Re: budget")

	// A message that refers to both threads joins them under the oldest.
	add(inbox, msg("<j@x>", "plan and budget", day.Add(30*time.Hour), "<r3@x>", "<b2@x>"))
	want("joined", "plan", "Re: plan", "Re: Re: plan", "Re: plan again", "budget", "Re: budget", "plan and budget")

	// Two messages of the same second: the one stored first (the lower id) is the thread's.
	tie := day.Add(50 * time.Hour)
	add(inbox, msg("<t2@x>", "Re: tie", tie, "<t1@x>"))
	add(inbox, msg("<t1@x>", "tie", tie))
	want("same second", "Re: tie", "tie")

	// An ancestor known only from References (the parent is never synced)
	// and older messages arriving one by one, newest first.
	for i := 4; i >= 0; i-- {
		var refs []string
		for k := 0; k < i; k++ {
			refs = append(refs, "<c"+string(rune('0'+k))+"@x>")
		}
		add(inbox, msg("<c"+string(rune('0'+i))+"@x>", "chain "+string(rune('0'+i)), day.Add(time.Duration(100+i)*time.Hour), refs...))
	}
	want("chain newest first", "chain 0", "chain 1", "chain 2", "chain 3", "chain 4")
}

// TestThreadUpgradeRenumbers: a store written when a thread took its first synced message's id
// is renumbered, on opening, to each thread's oldest message; threads stay apart.
func TestThreadUpgradeRenumbers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), store.File)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	aid, err := st.EnsureAccount(ctx, "acct", "imap")
	if err != nil {
		t.Fatal(err)
	}
	inbox := &store.Folder{AccountID: aid, Name: "INBOX"}
	if err := st.SaveFolder(ctx, inbox); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	var msgs []store.NewMessage
	for i, s := range []string{"a", "a2", "a3", "b", "b2"} {
		m := store.NewMessage{UID: uint32(i + 1), MessageID: "<" + s + "@x>", Subject: s, Date: day.Add(time.Duration(i) * time.Hour), From: store.Address{Email: "a@example.com"}}
		if len(s) == 2 {
			m.InReplyTo, m.References = "<"+s[:1]+"@x>", []string{"<" + s[:1] + "@x>"}
		}
		msgs = append(msgs, m)
	}
	if err := st.AddMessages(ctx, inbox, msgs, 5); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// What an older postern wrote: each thread under its newest message, schema 5.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE messages SET thread_id = (SELECT max(m2.id) FROM messages m2 WHERE m2.thread_id = messages.thread_id)`,
		`UPDATE meta SET value='5' WHERE key='schema'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var distinct int
	db.QueryRow(`SELECT count(DISTINCT thread_id) FROM messages`).Scan(&distinct)
	db.Close()
	if distinct != 2 {
		t.Fatalf("the old store has %d threads, want 2", distinct)
	}
	if st, err = store.Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, _, err := st.Messages(ctx, &store.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	id := map[string]int64{}
	for _, r := range rows {
		id[r.Subject] = r.ID
	}
	for _, r := range rows {
		if want := id[r.Subject[:1]]; r.ThreadID != want {
			t.Errorf("%q has thread %s after the upgrade, want %s (the id of %q)", r.Subject, store.EncodeID(r.ThreadID), store.EncodeID(want), r.Subject[:1])
		}
	}
}

// TestThreadListingAcrossFolders: a listing with Threads gives one row per conversation
// whatever folders its messages are in, the thread's newest match, and the size of the whole
// thread; a folder's listing gives the threads with a message there, once each; a thread is
// on one page only; a thread the projects keep is neither shown nor counted.
func TestThreadListingAcrossFolders(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aid, err := st.EnsureAccount(ctx, "acct", "imap")
	if err != nil {
		t.Fatal(err)
	}
	inbox := &store.Folder{AccountID: aid, Name: "INBOX"}
	sent := &store.Folder{AccountID: aid, Name: "Sent"}
	for _, f := range []*store.Folder{inbox, sent} {
		if err := st.SaveFolder(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	uid := map[*store.Folder]uint32{}
	add := func(f *store.Folder, id, subject string, hours int, refs ...string) {
		t.Helper()
		uid[f]++
		m := store.NewMessage{UID: uid[f], MessageID: id, Subject: subject, Date: day.Add(time.Duration(hours) * time.Hour),
			From: store.Address{Email: "a@example.com"}, References: refs}
		if len(refs) > 0 {
			m.InReplyTo = refs[len(refs)-1]
		}
		if err := st.AddMessages(ctx, f, []store.NewMessage{m}, uid[f]); err != nil {
			t.Fatal(err)
		}
	}
	add(inbox, "<q@x>", "question", 0)
	add(sent, "<a@x>", "Re: question", 1, "<q@x>")
	add(inbox, "<other@x>", "other", 2)
	add(inbox, "<q2@x>", "Re: Re: question", 3, "<q@x>", "<a@x>")
	add(sent, "<lone@x>", "lone sent", 4)

	list := func(f *store.Filter) []*store.Row {
		t.Helper()
		f.Threads = true
		rows, _, err := st.Messages(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	show := func(rows []*store.Row) string {
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%s/%s:%d", r.Folder, r.Subject, r.ThreadSize))
		}
		return strings.Join(out, ", ")
	}
	if got, want := show(list(&store.Filter{Limit: 50})), "Sent/lone sent:1, INBOX/Re: Re: question:3, INBOX/other:1"; got != want {
		t.Errorf("every thread: %s, want %s", got, want)
	}
	if got, want := show(list(&store.Filter{Folder: "Sent", Limit: 50})), "Sent/lone sent:1, Sent/Re: question:3"; got != want {
		t.Errorf("threads of Sent: %s, want %s", got, want)
	}
	q, err := search.Parse("question", day)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := show(list(&store.Filter{Query: q, Limit: 50})), "INBOX/Re: Re: question:3"; got != want {
		t.Errorf("a search's threads: %s, want %s", got, want)
	}
	if n, err := st.Count(ctx, &store.Filter{Query: q, Threads: true}); err != nil || n != 1 {
		t.Errorf("a search counts %d threads (%v), want 1", n, err)
	}
	// Pages of one thread each: the conversation (matched in INBOX at hours 0 and 3) is on
	// the first page only.
	var pages []string
	var before int64
	for i := 0; i < 5; i++ {
		rows, more, err := st.Messages(ctx, &store.Filter{Folder: "INBOX", Threads: true, Limit: 1, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, show(rows))
		if !more {
			break
		}
		before = rows[len(rows)-1].ID
	}
	if got, want := strings.Join(pages, " | "), "INBOX/Re: Re: question:3 | INBOX/other:1"; got != want {
		t.Errorf("pages of INBOX's threads: %s, want %s", got, want)
	}
	// A kept thread is not there: not a row, not counted.
	thread := list(&store.Filter{Query: q, Limit: 1})[0].ThreadID
	hide := &store.Hide{Threads: fmt.Sprintf("[%d]", thread)}
	if got, want := show(list(&store.Filter{Hide: hide, Limit: 50})), "Sent/lone sent:1, INBOX/other:1"; got != want {
		t.Errorf("every thread with the conversation kept: %s, want %s", got, want)
	}
	if n, _ := st.Count(ctx, &store.Filter{Hide: hide, Threads: true}); n != 2 {
		t.Errorf("with the conversation kept, %d threads are counted, want 2", n)
	}
}

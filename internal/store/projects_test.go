package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/store"
)

// TestRouteThreads: each route reaches the threads it should — a sender or domain only when
// authenticated and not forged, a subject phrase as words, a folder, a tied Message-ID — and
// Hide leaves out (or keeps only) whole threads in lists and counts.
func TestRouteThreads(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aid, _ := st.EnsureAccount(ctx, "acct", "imap")
	inbox := &store.Folder{AccountID: aid, Name: "INBOX"}
	clients := &store.Folder{AccountID: aid, Name: "Clients/Acme"}
	for _, f := range []*store.Folder{inbox, clients} {
		if err := st.SaveFolder(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	n := uint32(0)
	add := func(f *store.Folder, id, from, subject string, authentic, forged bool, refs ...string) {
		t.Helper()
		n++
		m := store.NewMessage{UID: n, MessageID: id, Subject: subject, From: store.Address{Email: from}, Date: day.Add(time.Duration(n) * time.Hour),
			Authentic: authentic, Forged: forged, References: refs}
		if len(refs) > 0 {
			m.InReplyTo = refs[len(refs)-1]
		}
		if err := st.AddMessages(ctx, f, []store.NewMessage{m}, n); err != nil {
			t.Fatal(err)
		}
	}
	add(inbox, "a1@x", "lee@acme.example", "Contract", true, false)
	add(inbox, "a2@x", "me@home.example", "Re: Contract", false, false, "a1@x") // the person's reply: the same thread
	add(inbox, "f1@x", "lee@acme.example", "Urgent wire", false, true)          // forged: never by its From
	add(inbox, "u1@x", "lee@acme.example", "Unsigned", false, false)            // not authenticated
	add(inbox, "s1@x", "bo@mail.acme.example", "Hello", true, false)            // a subdomain
	add(inbox, "l1@x", "ann@notacme.example", "Hi", true, false)                // a lookalike domain
	add(inbox, "w1@x", "x@y.example", "The Blue Harbour plan", false, false)
	add(inbox, "w2@x", "x@y.example", "Blue and Harbour", false, false)
	add(clients, "c1@x", "z@z.example", "In the folder", false, false)
	add(inbox, "t1@x", "q@q.example", "Tied", false, false)
	subjects := func(threads map[int64]bool, hide bool) []string {
		t.Helper()
		var ids []int64
		for x := range threads {
			ids = append(ids, x)
		}
		j, _ := json.Marshal(ids)
		rows, _, err := st.Messages(ctx, &store.Filter{Limit: 100, Hide: &store.Hide{Only: !hide, Threads: string(j)}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.Subject)
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		name  string
		route store.MailRoute
		want  []string
	}{
		{"sender", store.MailRoute{Senders: []string{"LEE@acme.example"}}, []string{"Contract", "Re: Contract"}},
		{"domain", store.MailRoute{Domains: []string{"acme.example"}}, []string{"Contract", "Hello", "Re: Contract"}},
		{"subject phrase", store.MailRoute{Subjects: []string{"blue harbour"}}, []string{"The Blue Harbour plan"}},
		{"folder", store.MailRoute{Folders: []store.FolderRoute{{Folder: "clients/acme"}}}, []string{"In the folder"}},
		{"folder of another account", store.MailRoute{Folders: []store.FolderRoute{{Account: "other", Folder: "Clients/Acme"}}}, nil},
		{"tie", store.MailRoute{MessageIDs: []string{"t1@x"}}, []string{"Tied"}},
	} {
		threads, err := st.RouteThreads(ctx, &c.route, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := subjects(threads, false); !equal(got, c.want) {
			t.Errorf("%s: reaches %q, want %q", c.name, got, c.want)
		}
		all := 10
		if got := subjects(threads, true); len(got) != all-len(c.want) {
			t.Errorf("%s: hiding leaves %d of %d: %q", c.name, len(got), all, got)
		}
	}
}

// TestFolderStatsHide: a folder whose messages are all left out is still listed, with 0.
func TestFolderStatsHide(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aid, _ := st.EnsureAccount(ctx, "acct", "imap")
	inbox := &store.Folder{AccountID: aid, Name: "INBOX"}
	empty := &store.Folder{AccountID: aid, Name: "Empty"}
	for _, f := range []*store.Folder{inbox, empty} {
		st.SaveFolder(ctx, f)
	}
	st.AddMessages(ctx, inbox, []store.NewMessage{{UID: 1, MessageID: "a@x", Subject: "A", Date: time.Now()}, {UID: 2, MessageID: "b@x", Subject: "B", Date: time.Now()}}, 2)
	threads, _ := st.RouteThreads(ctx, &store.MailRoute{MessageIDs: []string{"a@x"}}, nil)
	var ids []int64
	for x := range threads {
		ids = append(ids, x)
	}
	j, _ := json.Marshal(ids)
	for _, c := range []struct {
		hide  *store.Hide
		inbox int
	}{{nil, 2}, {&store.Hide{Threads: string(j)}, 1}, {&store.Hide{Only: true, Threads: "[]"}, 0}} {
		stats, err := st.FolderStats(ctx, nil, c.hide)
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 2 || stats[0].Name != "Empty" || stats[0].Total != 0 || stats[1].Total != c.inbox || stats[1].Unread != c.inbox {
			t.Errorf("hide %+v: %+v", c.hide, stats)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFillAuthentic: a store whose messages were stored before the authentic column (or
// judged with other trusted servers) is judged again from their stored headers, once per set
// of trusted servers.
func TestFillAuthentic(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aid, _ := st.EnsureAccount(ctx, "acct", "imap")
	inbox := &store.Folder{AccountID: aid, Name: "INBOX"}
	st.SaveFolder(ctx, inbox)
	msgs := []store.NewMessage{
		{UID: 1, MessageID: "p@x", From: store.Address{Email: "lee@acme.example"}, Subject: "Pass", Date: time.Now(),
			Headers: []store.Header{{Name: "Authentication-Results", Value: "mx; dmarc=pass"}}},
		{UID: 2, MessageID: "q@x", From: store.Address{Email: "lee@acme.example"}, Subject: "None", Date: time.Now()},
	}
	if err := st.AddMessages(ctx, inbox, msgs, 2); err != nil {
		t.Fatal(err)
	}
	route := &store.MailRoute{Domains: []string{"acme.example"}}
	reach := func() int {
		th, err := st.RouteThreads(ctx, route, nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(th)
	}
	if reach() != 0 {
		t.Fatal("a message never judged is authentic")
	}
	calls := 0
	judge := func(hs []store.Header, from string) bool {
		calls++
		return len(hs) > 0 && hs[0].Value == "mx; dmarc=pass"
	}
	if err := st.FillAuthentic(ctx, "acct", []string{"mx"}, judge); err != nil {
		t.Fatal(err)
	}
	if reach() != 1 || calls != 2 {
		t.Fatalf("after the fill: %d threads reached, %d judged", reach(), calls)
	}
	st.FillAuthentic(ctx, "acct", []string{"mx"}, judge)
	if calls != 2 {
		t.Fatal("the same trusted servers judged twice")
	}
	st.FillAuthentic(ctx, "acct", []string{"other"}, func([]store.Header, string) bool { return false })
	if reach() != 0 {
		t.Fatal("other trusted servers did not judge again")
	}
}

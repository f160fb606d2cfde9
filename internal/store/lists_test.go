package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/store"
)

// TestListsUpgrade: a store of schema 7 (no list columns) gets them filled from the stored
// header fields when it is opened, and the stored List-Unsubscribe loses its tokens; mail
// stored afterwards keeps what it was given.
func TestListsUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), store.File)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	aid, _ := st.EnsureAccount(ctx, "work", "imap")
	f := &store.Folder{AccountID: aid, Name: "INBOX", Delim: "/"}
	if err := st.SaveFolder(ctx, f); err != nil {
		t.Fatal(err)
	}
	const tok = "TOKEN9f8e7d6c"
	unsub := "<mailto:leave@list.test?subject=" + tok + ">, <https://list.test/u/one-click?t=" + tok + ">"
	msgs := []store.NewMessage{
		{UID: 1, Subject: "news", Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Headers: []store.Header{
			{Name: "List-Id", Value: "<news.list.test>"}, {Name: "list-unsubscribe", Value: unsub},
			{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"}}},
		{UID: 2, Subject: "bulk", Date: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Headers: []store.Header{{Name: "Precedence", Value: "Bulk"}}},
		{UID: 3, Subject: "friend", Date: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), Headers: []store.Header{{Name: "Subject", Value: "friend"}}},
	}
	if err := st.AddMessages(ctx, f, msgs, 3); err != nil {
		t.Fatal(err)
	}
	// Back to schema 7: the columns gone, as a store written before them.
	for _, q := range []string{
		`ALTER TABLE messages DROP COLUMN list`, `ALTER TABLE messages DROP COLUMN one_click`,
		`ALTER TABLE messages DROP COLUMN unsubscribe`, `UPDATE meta SET value='7' WHERE key='schema'`,
	} {
		if _, err := st.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	st, err = store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, _, err := st.Messages(ctx, &store.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]bool{}
	for _, r := range rows {
		got[r.Subject] = [2]bool{r.List, r.OneClick}
		uris, err := st.Unsubscribe(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := st.Body(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range b.Headers {
			if strings.Contains(h.Value, tok) {
				t.Errorf("%s: the stored header %s still shows the token: %q", r.Subject, h.Name, h.Value)
			}
		}
		if r.Subject == "news" {
			want := []string{"mailto:leave@list.test?subject=" + tok, "https://list.test/u/one-click?t=" + tok}
			if !slices.Equal(uris, want) {
				t.Errorf("news: unsubscribe %q, want %q", uris, want)
			}
			if b.Headers[1].Value != "<mailto:leave@list.test?…>, <https://list.test/u/one-click?…>" {
				t.Errorf("news: the stored List-Unsubscribe is %q", b.Headers[1].Value)
			}
		} else if len(uris) != 0 {
			t.Errorf("%s: unsubscribe %q", r.Subject, uris)
		}
	}
	want := map[string][2]bool{"news": {true, true}, "bulk": {true, false}, "friend": {false, false}}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: list, one_click = %v, want %v", k, got[k], v)
		}
	}
}

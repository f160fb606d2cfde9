package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// TestFolderNames: a folder is found whatever the case of its name, with /
// or . as the separator, and by the cleaned name postern shows for a name
// holding control characters; an exact name wins over one that differs by
// case; a name that fits several folders, or none, is a *store.FolderError
// naming them or the nearest ones, from Messages, Count and Senders alike.
func TestFolderNames(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	layout := map[string][]string{
		"work": {"INBOX", "Newsletters", "Work.Projects", "Evil\u202eName\x07", "Foo", "foo"},
		"home": {"INBOX", "newsletters", "Archive"},
	}
	n := 0
	for _, acct := range []string{"work", "home"} {
		aid, err := st.EnsureAccount(ctx, acct, "imap")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetAccountSynced(ctx, aid, time.Now(), ""); err != nil {
			t.Fatal(err)
		}
		for _, name := range layout[acct] {
			f := &store.Folder{AccountID: aid, Name: name, Delim: "."}
			if err := st.SaveFolder(ctx, f); err != nil {
				t.Fatal(err)
			}
			n++
			m := store.NewMessage{UID: 1, Subject: acct + " " + name, Date: time.Date(2025, 1, n, 0, 0, 0, 0, time.UTC), From: store.Address{Email: acct + "@example.com"}}
			if err := st.AddMessages(ctx, f, []store.NewMessage{m}, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	both := []string{"work", "home"}
	// found lists the subjects (account and raw folder name) a filter matches.
	found := func(f *store.Filter) ([]string, error) {
		f.Limit = 100
		rows, _, err := st.Messages(ctx, f)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.Subject)
		}
		slices.Sort(out)
		c := *f
		if n, err := st.Count(ctx, &c); err != nil || n != len(out) {
			t.Errorf("Count of %+v = %d, %v; Messages gave %d", f, n, err, len(out))
		}
		return out, nil
	}
	query := func(q string) *search.Query {
		p, err := search.Parse(q, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		what     string
		filter   store.Filter
		want     []string // subjects, sorted
		errParts []string // when an error is wanted: all of these in it
	}{
		{"exact", store.Filter{Accounts: both, Folder: "Newsletters"}, []string{"home newsletters", "work Newsletters"}, nil},
		{"lower case", store.Filter{Accounts: both, Folder: "newsletters"}, []string{"home newsletters", "work Newsletters"}, nil},
		{"upper case, one account", store.Filter{Accounts: []string{"work"}, Folder: "NEWSLETTERS"}, []string{"work Newsletters"}, nil},
		{"all accounts (nil)", store.Filter{Folder: "archive"}, []string{"home Archive"}, nil},
		{"slash for dot", store.Filter{Accounts: both, Folder: "Work/Projects"}, []string{"work Work.Projects"}, nil},
		{"dot, any case", store.Filter{Accounts: both, Folder: "work.projects"}, []string{"work Work.Projects"}, nil},
		{"INBOX any case", store.Filter{Accounts: both, Folder: "Inbox"}, []string{"home INBOX", "work INBOX"}, nil},
		{"cleaned name", store.Filter{Accounts: both, Folder: "EvilName"}, []string{"work Evil\u202eName\x07"}, nil},
		{"cleaned name, any case", store.Filter{Accounts: both, Folder: "evilname"}, []string{"work Evil\u202eName\x07"}, nil},
		{"raw name", store.Filter{Accounts: both, Folder: "Evil\u202eName\x07"}, []string{"work Evil\u202eName\x07"}, nil},
		{"exact wins over case", store.Filter{Accounts: both, Folder: "foo"}, []string{"work foo"}, nil},
		{"exact wins over case (2)", store.Filter{Accounts: both, Folder: "Foo"}, []string{"work Foo"}, nil},
		{"in: in any case", store.Filter{Accounts: both, Query: query("in:newsletters")}, []string{"home newsletters", "work Newsletters"}, nil},
		{"in: OR in:", store.Filter{Accounts: both, Query: query("in:archive OR in:work/projects")}, []string{"home Archive", "work Work.Projects"}, nil},
		{"in: with account:", store.Filter{Accounts: both, Query: query("in:NEWSLETTERS account:home")}, []string{"home newsletters"}, nil},
		{"negated group", store.Filter{Accounts: []string{"home"}, Query: query("-(in:inbox)")}, []string{"home Archive", "home newsletters"}, nil},
		{"no account left to search", store.Filter{Accounts: []string{}, Folder: "Nope"}, nil, nil},

		{"ambiguous", store.Filter{Accounts: both, Folder: "FOO"}, nil, []string{`"FOO"`, "several folders", "account work", "Foo, foo"}},
		{"typo", store.Filter{Accounts: []string{"work"}, Folder: "Newsleters"}, nil, []string{`no folder "Newsleters" in account work; the nearest: Newsletters`}},
		{"typo, two accounts", store.Filter{Accounts: both, Folder: "Archiv"}, nil, []string{`no folder "Archiv" in accounts home, work`, "Archive (home)"}},
		{"typo in a group", store.Filter{Accounts: both, Query: query("budget (in:Archiv OR in:INBOX)")}, nil, []string{`"Archiv"`, "Archive"}},
		{"nothing near", store.Filter{Accounts: []string{"home"}, Folder: "Receipts"}, nil, []string{`no folder "Receipts" in account home`, "mail_folders"}},
		{"not in the account named", store.Filter{Accounts: both, Query: query("in:Work/Projects account:home")}, nil, []string{`no folder "Work/Projects" in account home`}},
		{"account never synced", store.Filter{Accounts: []string{"fresh"}, Folder: "INBOX"}, nil, []string{`no folder "INBOX" in account fresh`, "postern sync"}},
	} {
		got, err := found(&c.filter)
		if c.errParts != nil {
			var fe *store.FolderError
			if !errors.As(err, &fe) {
				t.Errorf("%s: got %q, %v; want a *store.FolderError", c.what, got, err)
				continue
			}
			for _, p := range c.errParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("%s: error %q does not say %q", c.what, err, p)
				}
			}
			if _, err := st.Senders(ctx, &c.filter, false, 10); !errors.As(err, &fe) {
				t.Errorf("%s: Senders gave %v, want the same *store.FolderError", c.what, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: found %q, want %q", c.what, got, c.want)
		}
		if senders, err := st.Senders(ctx, &c.filter, false, 10); err != nil {
			t.Errorf("%s: Senders: %v", c.what, err)
		} else {
			total := 0
			for _, s := range senders {
				total += s.Messages
			}
			if total != len(c.want) {
				t.Errorf("%s: Senders count %d messages, want %d", c.what, total, len(c.want))
			}
		}
	}
}

// TestFolderBeforeFirstSyncEnds: while an account's first sync has not finished, a folder not
// stored yet may still come, and the answer says so (with the nearest stored so far); once the
// account has synced, the same name is plainly unknown.
func TestFolderBeforeFirstSyncEnds(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aid, err := st.EnsureAccount(ctx, "work", "imap")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveFolder(ctx, &store.Folder{AccountID: aid, Name: "Archive", Delim: "."}); err != nil {
		t.Fatal(err)
	}
	_, _, err = st.Messages(ctx, &store.Filter{Folder: "INBOX", Accounts: []string{"work"}, Limit: 10})
	if err == nil || !strings.Contains(err.Error(), "first sync of work has not finished") {
		t.Fatalf("INBOX during the first sync: %v", err)
	}
	_, _, err = st.Messages(ctx, &store.Filter{Folder: "Archiv", Accounts: []string{"work"}, Limit: 10})
	if err == nil || !strings.Contains(err.Error(), "has not finished") || !strings.Contains(err.Error(), "the nearest so far: Archive") {
		t.Fatalf("a typo during the first sync: %v", err)
	}
	if err := st.SetAccountSynced(ctx, aid, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	_, _, err = st.Messages(ctx, &store.Filter{Folder: "INBOX", Accounts: []string{"work"}, Limit: 10})
	if err == nil || strings.Contains(err.Error(), "has not finished") || !strings.Contains(err.Error(), `no folder "INBOX" in account work`) {
		t.Fatalf("INBOX after the sync: %v", err)
	}
}

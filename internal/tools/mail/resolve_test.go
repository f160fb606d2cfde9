package mail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools"
)

// searchFixture is a store of two accounts, work and home, whose folders
// are named as IMAP servers name them (Work.Projects with . as separator, a
// name holding a control character), served by the real tools behind the
// real dispatch.
type searchFixture struct {
	t   *testing.T
	reg *dispatch.Registry
}

// newSearchFixture makes the fixture; with no accounts, the configuration
// holds none and the store is empty.
func newSearchFixture(t *testing.T, withAccounts bool) *searchFixture {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg := filepath.Join(dir, "config.toml")
	var toml strings.Builder
	storePath := filepath.Join(dir, "store.db")
	st, err := store.Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if withAccounts {
		layout := []struct {
			account  string
			folders  []string
			subjects []string
		}{
			{"work", []string{"INBOX", "Newsletters", "Work.Projects", "Receipts\x07"}, []string{"budget for q3", "weekly newsletter", "project plan", "invoice 42"}},
			{"home", []string{"INBOX", "Archive"}, []string{"receipt for the bike", "old budget draft"}},
		}
		n := 0
		for _, a := range layout {
			md := filepath.Join(dir, a.account)
			for _, sub := range []string{"cur", "new", "tmp"} {
				if err := os.MkdirAll(filepath.Join(md, sub), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			fmt.Fprintf(&toml, "[[accounts]]\nname = %q\nkind = \"maildir\"\npath = %q\n", a.account, md)
			aid, err := st.EnsureAccount(ctx, a.account, "maildir")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SetAccountSynced(ctx, aid, time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC), ""); err != nil {
				t.Fatal(err)
			}
			for i, name := range a.folders {
				f := &store.Folder{AccountID: aid, Name: name, Delim: "."}
				if err := st.SaveFolder(ctx, f); err != nil {
					t.Fatal(err)
				}
				n++
				m := store.NewMessage{UID: 1, Subject: a.subjects[i], Date: time.Date(2025, 5, n, 9, 0, 0, 0, time.UTC),
					From: store.Address{Email: a.account + "@example.com"}, MessageID: fmt.Sprintf("<%d@example.com>", n)}
				if err := st.AddMessages(ctx, f, []store.NewMessage{m}, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := os.WriteFile(cfg, []byte(toml.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := &tools.Service{Version: "test", Config: config.NewWatcher(cfg), StorePath: storePath}
	reg, err := dispatch.New(svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(); svc.Close() })
	return &searchFixture{t: t, reg: reg}
}

// call runs a tool with read and read:bodies: the subjects of the messages
// it lists (nil when it lists none), its text, and whether it is an error.
func (x *searchFixture) call(tool string, args map[string]any) ([]string, string, bool) {
	x.t.Helper()
	scopes := "read,read:bodies"
	g, err := dispatch.ParseGrant(scopes)
	if err != nil {
		x.t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: "cli", Scopes: strings.Split(scopes, ",")})
	res, err := x.reg.Call(ctx, tool, raw, g)
	if err != nil {
		x.t.Fatalf("%s: %v", tool, err)
	}
	var sc struct {
		Messages []struct{ Subject string } `json:"messages"`
		Senders  []struct{ Sender string }  `json:"senders"`
	}
	if res.Structured != nil {
		if err := json.Unmarshal(res.Structured, &sc); err != nil {
			x.t.Fatalf("%s: %v", tool, err)
		}
	}
	var out []string
	for _, m := range sc.Messages {
		out = append(out, m.Subject)
	}
	for _, s := range sc.Senders {
		out = append(out, s.Sender)
	}
	slices.Sort(out)
	return out, res.Text, res.IsError
}

// TestSearchErrors: a mistyped folder, operator or account is an isError
// answer that names the nearest ones (never an empty answer an agent cannot
// tell from "no such mail"), and the forms a person may write for an
// existing one find it: folders in any case, / for ., the cleaned name;
// accounts in any case; OR and groups.
func TestSearchErrors(t *testing.T) {
	x := newSearchFixture(t, true)
	search := func(q string) map[string]any { return map[string]any{"query": q} }
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string // the subjects (or senders) found, sorted; nil for an error
		says []string // for an error: all of these in its text
	}{
		// Folders: typos name the nearest; other forms of a name find it.
		{"mail_search", search("in:Newsleters account:work"), nil, []string{`No folder "Newsleters" in account work; the nearest: Newsletters.`}},
		{"mail_search", search("in:Newsleters"), nil, []string{`No folder "Newsleters" in accounts home, work; the nearest: Newsletters (work)`}},
		{"mail_search", search("budget (in:Archiv OR in:INBOX)"), nil, []string{`No folder "Archiv"`, "Archive (home)"}},
		{"mail_search", search("in:Nope"), nil, []string{`No folder "Nope" in accounts home, work`, "mail_folders"}},
		{"mail_search", search("in:newsletters"), []string{"weekly newsletter"}, nil},
		{"mail_search", search("in:Work/Projects"), []string{"project plan"}, nil},
		{"mail_search", search("in:work.projects"), []string{"project plan"}, nil},
		{"mail_search", search("in:Receipts"), []string{"invoice 42"}, nil}, // shown cleaned, found cleaned
		{"mail_list", map[string]any{"folder": "Nope"}, nil, []string{`No folder "Nope" in accounts home, work`}},
		{"mail_list", map[string]any{"folder": "Archve"}, nil, []string{`No folder "Archve"`, "the nearest: Archive (home)"}},
		{"mail_list", map[string]any{"folder": "Newsleters", "account": "work"}, nil, []string{`No folder "Newsleters" in account work; the nearest: Newsletters.`}},
		{"mail_list", map[string]any{"folder": "newsletters"}, []string{"weekly newsletter"}, nil},
		{"mail_list", map[string]any{"folder": "WORK/PROJECTS"}, []string{"project plan"}, nil},
		{"mail_list", map[string]any{"folder": "inbox", "account": "home"}, []string{"receipt for the bike"}, nil},
		{"mail_senders", map[string]any{"folder": "Newsleters"}, nil, []string{`No folder "Newsleters"`, "Newsletters (work)"}},
		{"mail_senders", map[string]any{"folder": "archive"}, []string{"home@example.com"}, nil},

		// Operators: the nearest, and how to search the text itself.
		{"mail_search", search("foo:bar"), nil, []string{"foo: is not a search operator", "the nearest: from:", `quote it: "foo:bar"`}},
		{"mail_search", search("subjet:budget"), nil, []string{"subjet: is not a search operator", "the nearest: subject:"}},
		{"mail_search", search("budget form:alice"), nil, []string{"form:", "the nearest: from:"}},
		{"mail_search", search(`"foo:bar"`), []string{}, nil}, // quoted, it is text: no such mail
		{"mail_senders", map[string]any{"query": "frm:work"}, nil, []string{"frm:", "from:"}},

		// Accounts: the nearest, or the ones there are; any case finds one.
		{"mail_search", search("account:nosuch budget"), nil, []string{"no such account here", "the accounts you can use: work, home"}},
		{"mail_search", search("account:wrok"), nil, []string{"no such account here", "the nearest: work"}},
		{"mail_search", search("account:WORK budget"), []string{"budget for q3"}, nil},
		{"mail_list", map[string]any{"account": "nosuch"}, nil, []string{"no such account here", "work, home"}},
		{"mail_list", map[string]any{"account": "hom"}, nil, []string{"the nearest: home"}},
		{"mail_list", map[string]any{"account": "Home"}, []string{"receipt for the bike"}, nil},
		{"mail_folders", map[string]any{"account": "nosuch"}, nil, []string{"no such account here"}},

		// OR and groups.
		{"mail_search", search("budget OR invoice"), []string{"budget for q3", "invoice 42", "old budget draft"}, nil},
		{"mail_search", search("budget or invoice"), []string{}, nil}, // or is a word
		{"mail_search", search("(budget OR receipt) -draft"), []string{"budget for q3", "receipt for the bike"}, nil},
		{"mail_search", search("account:home (budget OR bike)"), []string{"old budget draft", "receipt for the bike"}, nil},
		{"mail_search", search("-(in:INBOX OR in:archive) -(account:home)"), []string{"invoice 42", "project plan", "weekly newsletter"}, nil},
		{"mail_search", search("(budget OR invoice"), nil, []string{"( at character 1 is not closed"}},
		{"mail_search", search("budget OR invoice)"), nil, []string{") at character 18 closes no ("}},
		{"mail_search", search("budget OR"), nil, []string{"OR at character 8 has no condition after it"}},
	} {
		got, text, isErr := x.call(c.tool, c.args)
		what := fmt.Sprintf("%s %v", c.tool, c.args)
		if c.says != nil {
			if !isErr {
				t.Errorf("%s: found %q, want an isError answer saying %q", what, got, c.says)
				continue
			}
			t.Logf("%s → %s", what, text)
			for _, s := range c.says {
				if !strings.Contains(text, s) {
					t.Errorf("%s: %q does not say %q", what, text, s)
				}
			}
			continue
		}
		if isErr {
			t.Errorf("%s: %s", what, text)
			continue
		}
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: found %q, want %q", what, got, c.want)
		}
	}
}

// TestNoAccount: with no account configured, the tools that read mail say
// so and how to add one, instead of an empty answer.
func TestNoAccount(t *testing.T) {
	x := newSearchFixture(t, false)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"mail_search", map[string]any{"query": "budget"}},
		{"mail_search", map[string]any{"query": "budget", "count_only": true}},
		{"mail_list", map[string]any{}},
		{"mail_list", map[string]any{"account": "work"}},
		{"mail_folders", map[string]any{}},
		{"mail_senders", map[string]any{}},
	} {
		_, text, isErr := x.call(c.tool, c.args)
		if !isErr || !strings.Contains(text, "No account is configured") || !strings.Contains(text, "postern account add NAME") {
			t.Errorf("%s %v with no account: isError=%v %q; want an error saying no account is configured and how to add one", c.tool, c.args, isErr, text)
		}
	}
}

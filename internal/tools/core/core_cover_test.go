package core_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/core"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/view"
)

func msg(id, subject string) string {
	return fmt.Sprintf("From: Ann <ann@example.org>\r\nTo: sam@example.com\r\nSubject: %s\r\nMessage-ID: <%s>\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n\r\nHello.\r\n", subject, id)
}

// home is a Maildir of three messages (one in folder Acme) synced as account "local" into a
// real store, with sync warnings about a kept and a shown folder and calendar.
type home struct {
	t              *testing.T
	cfg, storePath string
}

func newHome(t *testing.T) *home {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp", ".Acme/cur", ".Acme/new", ".Acme/tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, raw := range map[string]string{"cur/1:2,S": msg("m1@x", "Lunch"), "cur/2:2,S": msg("m2@x", "Plans"), ".Acme/cur/3:2,S": msg("m3@x", "Numbers")} {
		if err := os.WriteFile(filepath.Join(md, name), []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := &home{t: t, cfg: filepath.Join(dir, "config.toml"), storePath: filepath.Join(dir, "store.db")}
	acct := config.Account{Name: "local", Kind: "maildir", Path: md, Address: "sam@example.com"}
	if err := config.AddAccount(h.cfg, acct); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(h.cfg, os.O_APPEND|os.O_WRONLY, 0o600)
	f.WriteString("\n[send]\nallow = [\"*@example.com\"]\n")
	f.Close()
	ctx := context.Background()
	st, err := store.Open(h.storePath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	outs, err := mailsync.Run(ctx, st, []config.Account{acct}, mailsync.Options{})
	if err != nil || len(outs) != 1 || outs[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, outs)
	}
	id, err := st.EnsureAccount(ctx, "local", "maildir")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*store.Collection{
		{AccountID: id, URL: "https://dav.example/acme/", Kind: store.KindCalendar, Name: "Acme"},
		{AccountID: id, URL: "https://dav.example/home/", Kind: store.KindCalendar, Name: "Home"},
	} {
		if err := st.SaveCollection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range [][2]string{
		{"Acme", "a message in folder Acme could not be read"},
		{"INBOX", "a message in INBOX could not be read"},
		{"https://dav.example/acme/", "an event of calendar Acme could not be read"},
		{"https://dav.example/home/", "an event of calendar Home could not be read"},
	} {
		if err := st.AddSyncWarning(ctx, id, w[0], "item1", w[1]); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// status calls the status tool as era would, with the projects file text ("" for none).
func (h *home) status(era, projectsText string) *generated.StatusResult {
	h.t.Helper()
	if projectsText != "" {
		if err := os.WriteFile(projects.Path(h.cfg), []byte(projectsText), 0o600); err != nil {
			h.t.Fatal(err)
		}
	}
	w := config.NewWatcher(h.cfg)
	o := &view.Opener{Config: w, StorePath: h.storePath}
	defer o.Close()
	ctx := o.Open(dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: era, Scopes: []string{generated.ScopeRead}, ClientName: "tester", ToolCount: 7}))
	c := &core.Core{Kit: &kit.Kit{Version: "1.2.3", Config: w}}
	res, err := c.Status(ctx, &generated.StatusArgs{})
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// TestStatusAccounts: status names the server, the grant and each account with its messages,
// last sync and warnings; an agent is not told of what a closed project keeps, the person is.
func TestStatusAccounts(t *testing.T) {
	h := newHome(t)
	res := h.status(dispatch.EraCLI, "")
	if res.Version != "1.2.3" || res.Client != "tester" || res.ToolCount != 7 || res.ConfigPath != h.cfg || strings.Join(res.GrantedScopes, ",") != "read" {
		t.Errorf("status of the server: %+v", res)
	}
	if strings.Join(res.SendAllow, ",") != "*@example.com" {
		t.Errorf("send allow: %v", res.SendAllow)
	}
	if len(res.Accounts) != 1 {
		t.Fatalf("accounts: %+v", res.Accounts)
	}
	a := res.Accounts[0]
	if a.Name != "local" || a.Kind != "maildir" || a.Messages == nil || *a.Messages != 3 || len(a.Warnings) != 4 {
		t.Errorf("the person's account row: %+v (messages %d)", a, *a.Messages)
	}
	if _, err := time.Parse(time.RFC3339, a.LastSync); err != nil || res.SyncedAt == "" {
		t.Errorf("last sync %q, synced_at %q", a.LastSync, res.SyncedAt)
	}

	res = h.status("legacy", "[[project]]\nid = \"acme\"\nfolders = [\"Acme\"]\ncalendars = [\"Acme\"]\n")
	a = res.Accounts[0]
	if a.Messages == nil || *a.Messages != 2 {
		t.Errorf("an agent is told of %v messages, want 2 (the closed project's left out)", *a.Messages)
	}
	want := "a message in INBOX could not be read|an event of calendar Home could not be read"
	if got := strings.Join(a.Warnings, "|"); got != want {
		t.Errorf("an agent's warnings: %q, want %q", got, want)
	}

	// An open project keeps nothing.
	res = h.status("legacy", "[[project]]\nid = \"acme\"\nopen = true\nfolders = [\"Acme\"]\ncalendars = [\"Acme\"]\n")
	if a = res.Accounts[0]; *a.Messages != 3 || len(a.Warnings) != 4 {
		t.Errorf("an open project keeps: %d messages, warnings %v", *a.Messages, a.Warnings)
	}

	// A broken configuration is said, and the server still answers.
	if err := os.WriteFile(h.cfg, []byte("[[account]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = h.status(dispatch.EraCLI, "")
	if res.ConfigError == "" || len(res.Accounts) != 0 || res.Version != "1.2.3" {
		t.Errorf("broken configuration: %+v", res)
	}
}

// TestDocs: the docs tool lists its pages, gives one without the generated-file marker, and
// names the pages when asked for one that is not there.
func TestDocs(t *testing.T) {
	c := &core.Core{Kit: &kit.Kit{}}
	ctx := context.Background()
	res, err := c.Docs(ctx, &generated.DocsArgs{})
	if err != nil || len(res.Pages) != len(generated.DocPages) || len(res.Pages) == 0 {
		t.Fatalf("the list of pages: %+v %v", res, err)
	}
	first := res.Pages[0]
	page, err := c.Docs(ctx, &generated.DocsArgs{Page: &first.Name})
	if err != nil || page.Page != first.Name || page.Title != first.Title || len(page.Text) < 100 {
		t.Fatalf("page %q: %+v %v", first.Name, page, err)
	}
	if strings.HasPrefix(page.Text, "<!--") || strings.Contains(page.Text, "-->") {
		t.Errorf("page %q still carries the generated-file marker: %.80q", first.Name, page.Text)
	}
	bad := "no-such-page"
	_, err = c.Docs(ctx, &generated.DocsArgs{Page: &bad})
	if err == nil || !strings.HasPrefix(err.Error(), `there is no page "no-such-page"; the pages are `+first.Name+", ") {
		t.Errorf("an unknown page: %v", err)
	}
	if core.PageNames() != strings.Join(names(res.Pages), ", ") {
		t.Errorf("page names: %q", core.PageNames())
	}
}

func names(ps []generated.DocPage) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

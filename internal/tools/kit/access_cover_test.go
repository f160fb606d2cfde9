package kit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// house is a Maildir synced into a real store as account "local", a notes folder, and the
// configuration beside which the projects file is written.
type house struct {
	t                      *testing.T
	dir, cfg, store, notes string
}

func msg(id, from, subject string) string {
	return fmt.Sprintf("From: %s\r\nTo: sam@example.com\r\nSubject: %s\r\nMessage-ID: <%s>\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n\r\nHello.\r\n", from, subject, id)
}

func newHouse(t *testing.T) *house {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	md := filepath.Join(dir, "Maildir")
	files := map[string]string{
		"cur/1:2,S":       msg("m1@x", "Ann <ann@acme.example>", "Acme invoice"),
		"cur/2:2,S":       msg("m2@x", "Bob <bob@other.example>", "Lunch on Friday"),
		"cur/3:2,S":       msg("m3@x", "Cy <cy@other.example>", "Holiday plans"),
		".Acme/cur/4:2,S": msg("m4@x", "Dee <dee@other.example>", "Quarterly numbers"),
	}
	for _, sub := range []string{"cur", "new", "tmp", ".Acme/cur", ".Acme/new", ".Acme/tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, raw := range files {
		if err := os.WriteFile(filepath.Join(md, name), []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := &house{t: t, dir: dir, cfg: filepath.Join(dir, "config.toml"), store: filepath.Join(dir, "store.db"), notes: filepath.Join(dir, "Notes")}
	if err := os.MkdirAll(filepath.Join(h.notes, "clients"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.cfg, []byte("[notes]\nfolder = \"~/Notes\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	acct := config.Account{Name: "local", Kind: "maildir", Path: md, Address: "sam@example.com"}
	if err := config.AddAccount(h.cfg, acct); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(h.store)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := mailsync.Run(context.Background(), st, []config.Account{acct}, mailsync.Options{})
	st.Close()
	if err != nil || len(outs) != 1 || outs[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, outs)
	}
	return h
}

func (h *house) projects(text string) {
	h.t.Helper()
	if err := os.WriteFile(projects.Path(h.cfg), []byte(text), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

// call returns a kit and the context of one call of era ("legacy": an agent's; dispatch.EraCLI:
// the person's), seeing only the accounts named (none: all).
func (h *house) call(era string, only ...string) (*kit.Kit, context.Context) {
	h.t.Helper()
	w := config.NewWatcher(h.cfg)
	o := &view.Opener{Config: w, StorePath: h.store, Only: only}
	h.t.Cleanup(func() { o.Close() })
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: era})
	return &kit.Kit{Config: w}, o.Open(ctx)
}

// threads maps each stored message's Message-ID to its thread and its id.
func threads(t *testing.T, st *store.Store) (map[string]int64, map[string]int64) {
	t.Helper()
	rows, _, err := st.Messages(context.Background(), &store.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	th, ids := map[string]int64{}, map[string]int64{}
	for _, r := range rows {
		th[r.MessageID], ids[r.MessageID] = r.ThreadID, r.ID
	}
	if len(th) != 4 {
		t.Fatalf("the store holds %d messages, not 4: %v", len(th), th)
	}
	return th, ids
}

const acmeClosed = `[[project]]
id = "acme"
name = "Acme"
subjects = ["acme invoice"]
folders = ["local/Acme"]
note_folders = ["clients"]
calendars = ["Acme"]
`

// TestAccessClosedProject: a closed project's mail, folder, notes and calendar are kept from
// an agent, counted by scope, refused by id and to write into; the person sees everything.
func TestAccessClosedProject(t *testing.T) {
	h := newHouse(t)
	h.projects(acmeClosed)
	k, ctx := h.call("legacy")
	acc, err := k.Access(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !acc.Active() || len(acc.Set().Projects) != 1 {
		t.Fatal("a closed project does not make access active")
	}
	st, err := k.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	th, ids := threads(t, st)
	hide, err := acc.Mail(ctx, st)
	if err != nil || hide == nil {
		t.Fatalf("mail of a closed project: %v %v", hide, err)
	}
	if kept := acc.KeptThreads(); !kept[th["m1@x"]] || !kept[th["m4@x"]] || kept[th["m2@x"]] {
		t.Errorf("kept threads %v: want m1's and m4's only", kept)
	}
	for id, want := range map[string]bool{"m1@x": true, "m2@x": false, "m3@x": false, "m4@x": true} {
		if got, err := acc.KeepsThread(ctx, st, th[id]); err != nil || got != want {
			t.Errorf("KeepsThread(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	// Counts are of a scope, whatever the words: all, one folder, an account list.
	for _, c := range []struct {
		accounts []string
		folder   string
		want     int
	}{{nil, "", 2}, {nil, "INBOX", 1}, {nil, "Acme", 1}, {[]string{"local"}, "", 2}, {[]string{}, "", 0}} {
		for range 2 { // the second time from the cache
			if n, err := acc.LeftOut(ctx, st, c.accounts, c.folder); err != nil || n != c.want {
				t.Errorf("LeftOut(%v, %q) = %d, %v; want %d", c.accounts, c.folder, n, err, c.want)
			}
		}
	}
	if !acc.KeepsFolder("local", "Acme") || acc.KeepsFolder("local", "INBOX") || acc.KeepsFolder("other", "Acme") {
		t.Error("the closed project's folder is not the one kept")
	}
	err = acc.NotFound("no message has id 9")
	if err == nil || err.Error() != "no message has id 9; if it belongs to a project the person has not opened to agents, the person can open it (postern project open ID)" {
		t.Errorf("not found while projects keep things: %v", err)
	}
	// Writing: an answer in a kept thread is refused, one outside projects is not.
	if err := acc.RefuseMail(ctx, st, th["m1@x"], nil); err == nil || !strings.Contains(err.Error(), "into a project the person has not opened to agents") {
		t.Errorf("an answer into the closed project: %v", err)
	}
	if err := acc.RefuseMail(ctx, st, th["m2@x"], []string{"bob@other.example"}); err != nil {
		t.Errorf("an answer outside projects: %v", err)
	}
	// Undo: an action over a kept message is refused, one over shown messages is not.
	if err := k.RefuseKeptItems(ctx, st, []store.ActionItem{{Message: ids["m2@x"]}, {Message: ids["m4@x"]}}); err == nil || !strings.Contains(err.Error(), "will not undo this action") {
		t.Errorf("undo over a kept message: %v", err)
	}
	if err := k.RefuseKeptItems(ctx, st, []store.ActionItem{{Message: ids["m2@x"]}}); err != nil {
		t.Errorf("undo over shown messages: %v", err)
	}
	// Backups: by the thread while stored, else by subject, folder and tie.
	for _, c := range []struct {
		b    store.Backup
		want bool
	}{
		{store.Backup{Account: "local", Folder: "INBOX", MessageID: "m1@x", Subject: "Acme invoice"}, true},
		{store.Backup{Account: "local", Folder: "INBOX", MessageID: "m2@x", Subject: "Lunch on Friday"}, false},
		{store.Backup{Account: "local", Folder: "INBOX", MessageID: "gone@x", Subject: "Re: the ACME invoice, again", From: "X <x@y.example>"}, true},
		{store.Backup{Account: "local", Folder: "Acme", MessageID: "gone2@x", Subject: "Other things"}, true},
		{store.Backup{Account: "local", Folder: "INBOX", MessageID: "gone3@x", Subject: "Invoice of acme"}, false},
	} {
		if got, err := acc.KeepsBackup(ctx, st, &c.b); err != nil || got != c.want {
			t.Errorf("KeepsBackup(%+v) = %v, %v; want %v", c.b, got, err, c.want)
		}
	}
	// Notes, calendars and other things.
	if !acc.KeepsNote(h.notes, "clients/plan.md", "plan") || acc.KeepsNote(h.notes, "diary.md", "diary") {
		t.Error("the closed project's note folder is not the one kept")
	}
	if err := acc.RefuseNoteWrite(h.notes, "/clients/"); err == nil || !strings.Contains(err.Error(), "will not write a note into a project the person has not opened") {
		t.Errorf("a note into the closed project: %v", err)
	}
	if err := acc.RefuseNoteWrite(h.notes, ""); err != nil {
		t.Errorf("a note outside projects: %v", err)
	}
	if !acc.KeepsCollection(projects.Event, &store.Collection{Account: "local", Name: "Acme"}) || acc.KeepsCollection(projects.Event, &store.Collection{Account: "local", Name: "Home"}) {
		t.Error("the closed project's calendar is not the one kept")
	}
	if !acc.Keeps(projects.Thing{Kind: projects.Event, Account: "local", Collection: "Acme", UID: "e1"}) {
		t.Error("an event of the closed project's calendar is shown")
	}

	// The person at the terminal sees everything.
	k2, pctx := h.call(dispatch.EraCLI)
	pacc, err := k2.Access(pctx)
	if err != nil || pacc.Active() {
		t.Fatalf("the person's access: active %v, %v", pacc.Active(), err)
	}
	pst, _ := k2.Store(pctx)
	if n, err := pacc.LeftOut(pctx, pst, nil, ""); n != 0 || err != nil {
		t.Errorf("the person is told %d messages are left out (%v)", n, err)
	}
	if kept, _ := pacc.KeepsThread(pctx, pst, th["m1@x"]); kept || pacc.KeepsFolder("local", "Acme") || pacc.KeepsNote(h.notes, "clients/plan.md", "plan") {
		t.Error("something is kept from the person")
	}
	if err := pacc.RefuseMail(pctx, pst, th["m1@x"], nil); err != nil {
		t.Errorf("the person's answer is refused: %v", err)
	}
	if err := k2.RefuseKeptItems(pctx, pst, []store.ActionItem{{Message: ids["m4@x"]}}); err != nil {
		t.Errorf("the person's undo is refused: %v", err)
	}
	if err := pacc.NotFound("no message has id 9"); err.Error() != "no message has id 9" {
		t.Errorf("not found for the person: %v", err)
	}
}

// TestAccessOutsideClosed: with things outside projects closed, only an open project's mail
// shows, and writing outside projects is refused with what the person can do.
func TestAccessOutsideClosed(t *testing.T) {
	h := newHouse(t)
	h.projects("[projects]\noutside = false\n\n" + strings.Replace(acmeClosed, `name = "Acme"`, "name = \"Acme\"\nopen = true", 1))
	k, ctx := h.call("legacy")
	acc, err := k.Access(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := k.Store(ctx)
	th, _ := threads(t, st)
	if n, err := acc.LeftOut(ctx, st, nil, ""); n != 2 || err != nil {
		t.Errorf("outside closed: %d left out (%v), want 2 (m2, m3)", n, err)
	}
	for id, want := range map[string]bool{"m1@x": false, "m2@x": true, "m4@x": false} {
		if got, _ := acc.KeepsThread(ctx, st, th[id]); got != want {
			t.Errorf("KeepsThread(%s) = %v, want %v", id, got, want)
		}
	}
	if acc.KeepsFolder("local", "Acme") {
		t.Error("the open project's folder is kept")
	}
	if err := acc.RefuseMail(ctx, st, 0, []string{"new@else.example"}); err == nil || !strings.Contains(err.Error(), "will not write a message outside the person's projects") {
		t.Errorf("a new message outside projects: %v", err)
	}
	if err := acc.RefuseMail(ctx, st, th["m1@x"], nil); err != nil {
		t.Errorf("an answer in the open project: %v", err)
	}
	err = acc.RefuseWrite("an event", projects.Thing{Kind: projects.Event, Account: "local", Collection: "Home"})
	if err == nil || !strings.HasPrefix(err.Error(), "postern will not write an event outside the person's projects") || !strings.Contains(err.Error(), "outside = true in projects.toml") {
		t.Errorf("an event outside projects: %v", err)
	}
	if err := acc.RefuseWrite("an event", projects.Thing{Kind: projects.Event, Account: "local", Collection: "Acme"}); err != nil {
		t.Errorf("an event into the open project: %v", err)
	}
}

// TestAccessSenderRoute: a project by its client's domain holds only authenticated mail from it.
func TestAccessSenderRoute(t *testing.T) {
	h := newHouse(t)
	h.projects("[[project]]\nid = \"acme\"\ndomains = [\"acme.example\"]\nties = [\"mid:m3@x\"]\n")
	k, ctx := h.call("legacy")
	acc, _ := k.Access(ctx)
	st, _ := k.Store(ctx)
	th, _ := threads(t, st)
	// m1 is from acme.example but no trusted server vouched for it: shown; m3 is tied: kept.
	for id, want := range map[string]bool{"m1@x": false, "m3@x": true} {
		if got, err := acc.KeepsThread(ctx, st, th[id]); err != nil || got != want {
			t.Errorf("KeepsThread(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	// A message to the project's client belongs to it: refused.
	if err := acc.RefuseMail(ctx, st, 0, []string{"boss@acme.example"}); err == nil || !strings.Contains(err.Error(), "goes to one of its people") {
		t.Errorf("a message to the closed project's client: %v", err)
	}
	// A backup from the client (no longer authenticated) is kept: the safe side.
	if got, _ := acc.KeepsBackup(ctx, st, &store.Backup{Account: "local", Folder: "INBOX", MessageID: "gone@x", From: "Ann <ann@acme.example>"}); !got {
		t.Error("a backup from the closed project's client is shown")
	}
	if got, _ := acc.KeepsBackup(ctx, st, &store.Backup{Account: "local", Folder: "INBOX", MessageID: "m3@x"}); !got {
		t.Error("a backup of a tied message is shown")
	}
}

// TestKitWithoutView: a handler called without the call's view gets nothing, and the view's
// accounts bound what a call sees.
func TestKitWithoutView(t *testing.T) {
	h := newHouse(t)
	k := &kit.Kit{Config: config.NewWatcher(h.cfg)}
	ctx := context.Background()
	if _, err := k.Access(ctx); !errors.Is(err, view.ErrNoView) {
		t.Errorf("Access without a view: %v", err)
	}
	if _, err := k.Store(ctx); !errors.Is(err, view.ErrNoView) {
		t.Errorf("Store without a view: %v", err)
	}
	if _, err := k.VisibleNames(ctx); !errors.Is(err, view.ErrNoView) {
		t.Errorf("VisibleNames without a view: %v", err)
	}
	if k.Allowed(ctx, "local") || k.StoreExists(ctx) || k.SyncedAt(ctx, []string{"local"}) != "" {
		t.Error("a call without a view sees an account or the store")
	}

	k, vctx := h.call("legacy")
	if names, err := k.VisibleNames(vctx); err != nil || strings.Join(names, ",") != "local" {
		t.Errorf("visible names: %v %v", names, err)
	}
	if !k.Allowed(vctx, "local") || !k.StoreExists(vctx) {
		t.Error("the call does not see its account or the store")
	}
	at := k.SyncedAt(vctx, []string{"local"})
	if when, err := time.Parse(time.RFC3339, at); err != nil || time.Since(when) > time.Hour {
		t.Errorf("synced_at of a just-synced account: %q", at)
	}
	if got := k.CollectionsSyncedAt(vctx, []*store.Collection{{Account: "local"}, {Account: "local"}}); got != at {
		t.Errorf("synced_at of its collections: %q, want %q", got, at)
	}
	if k.SyncedAt(vctx, []string{"local", "never"}) != "" || k.SyncedAt(vctx, nil) != "" {
		t.Error("synced_at is given for an account never synced")
	}

	k, octx := h.call("legacy", "work")
	if names, _ := k.VisibleNames(octx); len(names) != 0 || k.Allowed(octx, "local") {
		t.Errorf("a connection for account work sees %v", names)
	}
	// With no projects file nothing is kept, and nothing is said of projects.
	acc, err := k.Access(octx)
	if err != nil || acc.Active() {
		t.Fatalf("no projects file: active %v, %v", acc.Active(), err)
	}
	if err := acc.RefuseWrite("a task", projects.Thing{Kind: projects.Task}); err != nil {
		t.Errorf("no projects file refuses a write: %v", err)
	}

	// An unreadable projects file shows nothing.
	h.projects("[[project]\n")
	k, bctx := h.call("legacy")
	if _, err := k.Access(bctx); err == nil {
		t.Error("a broken projects file is read as none")
	}
}

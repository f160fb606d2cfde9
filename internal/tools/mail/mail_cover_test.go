package mail_test

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
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// desk is the mail tools called directly, each call with its own view, over a real store.
type desk struct {
	t         *testing.T
	cfg, path string
	m         *mail.Mail
	accts     []config.Account
}

func home(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	return dir
}

func newDesk(t *testing.T, dir string, accts ...config.Account) *desk {
	t.Helper()
	d := &desk{t: t, cfg: filepath.Join(dir, "config.toml"), path: filepath.Join(dir, "store.db"), accts: accts}
	for _, a := range accts {
		if err := config.AddAccount(d.cfg, a); err != nil {
			t.Fatal(err)
		}
	}
	w := config.NewWatcher(d.cfg)
	d.m = &mail.Mail{Kit: &kit.Kit{Config: w, Sync: func(ctx context.Context, accts []config.Account) ([]mailsync.Outcome, error) {
		st, err := store.Open(d.path)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return mailsync.Run(ctx, st, accts, mailsync.Options{})
	}}}
	d.sync()
	return d
}

func (d *desk) sync() {
	d.t.Helper()
	st, err := store.Open(d.path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer st.Close()
	outs, err := mailsync.Run(context.Background(), st, d.accts, mailsync.Options{})
	if err != nil || len(outs) != len(d.accts) {
		d.t.Fatalf("sync: %v %+v", err, outs)
	}
	for _, o := range outs {
		if o.Error != "" {
			d.t.Fatalf("sync: %+v", o)
		}
	}
}

// ctx is one call's context, an agent's, with its view, under scopes.
func (d *desk) ctx(scopes ...string) context.Context {
	o := &view.Opener{Config: d.m.Config, StorePath: d.path}
	d.t.Cleanup(func() { o.Close() })
	return o.Open(dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: "legacy", Scopes: scopes}))
}

// id is the tool id of the stored message whose subject is subject.
func (d *desk) id(subject string) string {
	d.t.Helper()
	res, err := d.m.MailSearch(d.ctx(generated.ScopeRead), &generated.MailSearchArgs{Query: "subject:" + strings.Fields(subject)[0], Limit: 50})
	if err != nil {
		d.t.Fatal(err)
	}
	for _, r := range res.Messages {
		if r.Subject == subject {
			return r.ID
		}
	}
	d.t.Fatalf("no message %q among %d", subject, len(res.Messages))
	return ""
}

func rawMsg(id, from, to, subject, extra, body string) string {
	return fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <%s>\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n%s\r\n%s\r\n", from, to, subject, id, extra, body)
}

const withPDF = "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b1\r\n"
const pdfBody = "--b1\r\nContent-Type: text/plain\r\n\r\nThe invoice is attached.\r\n--b1\r\nContent-Type: application/pdf; name=\"invoice.pdf\"\r\nContent-Disposition: attachment; filename=\"invoice.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJcfsj6IK\r\n--b1--"

func maildirDesk(t *testing.T) *desk {
	dir := home(t)
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp", ".Acme/cur", ".Acme/new", ".Acme/tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o700)
	}
	for name, raw := range map[string]string{
		"cur/1:2,S":       rawMsg("m1@x", "Ann <ann@example.org>", "sam@example.com", "Invoice for March", "X-Mailer: Tester 1.0\r\n"+withPDF, pdfBody),
		"cur/2:2,":        rawMsg("m2@x", "Bob <bob@example.org>", "sam@example.com", "Lunch on Friday", "", "Shall we?"),
		".Acme/cur/3:2,S": rawMsg("m3@x", "Dee <dee@example.org>", "sam@example.com", "Quarterly numbers", "", "Numbers."),
	} {
		if err := os.WriteFile(filepath.Join(md, name), []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return newDesk(t, dir, config.Account{Name: "local", Kind: "maildir", Path: md, Address: "sam@example.com"})
}

// TestMailFoldersHeadersAttachments: the folders with their counts, less a closed project's
// folder (counted as left out); a message's header fields and attachments; what a closed
// project keeps is not found by id.
func TestMailFoldersHeadersAttachments(t *testing.T) {
	d := maildirDesk(t)
	res, err := d.m.MailFolders(d.ctx(generated.ScopeRead), &generated.MailFoldersArgs{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range res.Folders {
		got[f.Name] = fmt.Sprintf("%d/%d", f.Unread, f.Total)
	}
	if got["INBOX"] != "1/2" || got["Acme"] != "0/1" || res.LeftOut != nil || res.SyncedAt == "" {
		t.Errorf("folders: %v, left out %v, synced_at %q", got, res.LeftOut, res.SyncedAt)
	}
	acme := d.id("Quarterly numbers")

	if err := os.WriteFile(projects.Path(d.cfg), []byte("[[project]]\nid = \"acme\"\nfolders = [\"Acme\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err = d.m.MailFolders(d.ctx(generated.ScopeRead), &generated.MailFoldersArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Folders) != 1 || res.Folders[0].Name != "INBOX" || res.LeftOut == nil || *res.LeftOut != 1 {
		t.Errorf("with Acme closed: folders %+v, left out %v", res.Folders, res.LeftOut)
	}
	_, err = d.m.MailHeaders(d.ctx(generated.ScopeRead), &generated.MailHeadersArgs{ID: acme})
	if err == nil || !strings.HasPrefix(err.Error(), "there is no such message here") || !strings.Contains(err.Error(), "postern project open ID") {
		t.Errorf("headers of a kept message: %v", err)
	}
	if _, err := d.m.MailFolders(d.ctx(generated.ScopeRead), &generated.MailFoldersArgs{Account: kit.Ptr("nope")}); err == nil {
		t.Error("folders of an account that is not there")
	}

	inv := d.id("Invoice for March")
	h, err := d.m.MailHeaders(d.ctx(generated.ScopeRead), &generated.MailHeadersArgs{ID: inv})
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, f := range h.Headers {
		fields[f.Name] = f.Value
	}
	if fields["X-Mailer"] != "Tester 1.0" || fields["Subject"] != "Invoice for March" || h.Truncated != nil {
		t.Errorf("headers: %v", fields)
	}
	at, err := d.m.MailAttachments(d.ctx(generated.ScopeRead), &generated.MailAttachmentsArgs{ID: inv})
	if err != nil || len(at.Attachments) != 1 || at.Attachments[0].Name != "invoice.pdf" || at.Attachments[0].Type != "application/pdf" || at.Attachments[0].Size == 0 {
		t.Errorf("attachments: %+v %v", at, err)
	}
	if _, err := d.m.MailAttachments(d.ctx(generated.ScopeRead), &generated.MailAttachmentsArgs{ID: "bogus"}); err == nil || !strings.HasPrefix(err.Error(), "there is no such message here; use an id from mail_list or mail_search") {
		t.Errorf("attachments of a bogus id: %v", err)
	}
	row := mail.MessageRow(mustRow(t, d, inv), nil)
	if row.ID != inv || row.Subject != "Invoice for March" || !strings.Contains(row.From, "ann@example.org") {
		t.Errorf("message row: %+v", row)
	}
}

func mustRow(t *testing.T, d *desk, id string) *store.Row {
	t.Helper()
	_, r, err := d.m.Message(d.ctx(generated.ScopeRead), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMailSyncTool: mail_sync syncs the visible accounts, or the one named, and says why not.
func TestMailSyncTool(t *testing.T) {
	d := maildirDesk(t)
	md := d.accts[0].Path
	other := filepath.Join(filepath.Dir(md), "Other")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(other, sub), 0o700)
	}
	if err := config.AddAccount(d.cfg, config.Account{Name: "other", Kind: "maildir", Path: other}); err != nil {
		t.Fatal(err)
	}
	d.m.Config = config.NewWatcher(d.cfg)
	os.WriteFile(filepath.Join(md, "cur", "4:2,"), []byte(rawMsg("m4@x", "Eve <eve@example.org>", "sam@example.com", "New one", "", "Hi.")), 0o600)
	res, err := d.m.MailSync(d.ctx(generated.ScopeRead), &generated.MailSyncArgs{Account: kit.Ptr("local")})
	if err != nil || len(res.Accounts) != 1 || res.Accounts[0].Account != "local" || res.Accounts[0].New != 1 || res.Accounts[0].Error != "" {
		t.Fatalf("mail_sync: %+v %v", res, err)
	}
	d.id("New one")
	if _, err := d.m.MailSync(d.ctx(generated.ScopeRead), &generated.MailSyncArgs{Account: kit.Ptr("work")}); err == nil || err.Error() != "there is no such account here; the status tool lists the accounts you can use" {
		t.Errorf("mail_sync of an unknown account: %v", err)
	}
	d.m.Sync = nil
	if _, err := d.m.MailSync(d.ctx(generated.ScopeRead), &generated.MailSyncArgs{}); err == nil || !strings.Contains(err.Error(), "run postern sync in a terminal") {
		t.Errorf("mail_sync where this server cannot sync: %v", err)
	}
}

// TestMailComposeRefusals: what is wrong with a draft or a send is said before anything is
// written, and a read-only account writes nothing.
func TestMailComposeRefusals(t *testing.T) {
	d := maildirDesk(t)
	inv := d.id("Invoice for March")
	ctx := d.ctx(generated.ScopeRead)
	for _, c := range []struct {
		a    generated.MailDraftArgs
		want string
	}{
		{generated.MailDraftArgs{ID: &inv, ReplyAll: true, Forward: true, Body: "x"}, "give reply_all or forward, not both"},
		{generated.MailDraftArgs{Forward: true, Body: "x"}, "reply_all and forward need id"},
		{generated.MailDraftArgs{To: []string{"not an address"}, Subject: kit.Ptr("Hi"), Body: "x"}, "to"},
		{generated.MailDraftArgs{To: []string{"a@example.org"}, Subject: kit.Ptr("Hi"), Body: "x"}, "no IMAP account is configured; drafts and sending need one"},
		{generated.MailDraftArgs{To: []string{"a@example.org"}, Subject: kit.Ptr("Hi"), Body: "x", Account: kit.Ptr("local")}, "account local is a read-only maildir import"},
		{generated.MailDraftArgs{To: []string{"a@example.org"}, Subject: kit.Ptr("Hi"), Body: "x", Account: kit.Ptr("nope")}, `there is no account "nope" here`},
		{generated.MailDraftArgs{ID: &inv, Body: "x", Account: kit.Ptr("other")}, "message " + inv + " belongs to account local"},
		{generated.MailDraftArgs{ID: kit.Ptr("m999"), Body: "x"}, "there is no such message here"},
	} {
		_, err := d.m.MailDraft(ctx, &c.a)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("draft %+v: %v; want %q", c.a, err, c.want)
		}
	}
	if _, err := d.m.MailSend(ctx, &generated.MailSendArgs{To: []string{"a@example.org"}, Subject: kit.Ptr("Hi")}); err == nil || !strings.HasPrefix(err.Error(), "body is missing") {
		t.Errorf("send without a body: %v", err)
	}
	if _, err := d.m.MailSend(ctx, &generated.MailSendArgs{Draft: true}); err == nil || !strings.Contains(err.Error(), "give its message id in id") {
		t.Errorf("send draft without id: %v", err)
	}
	_, err := d.m.MailSend(ctx, &generated.MailSendArgs{Draft: true, ID: &inv, To: []string{"x@y.example"}, Body: kit.Ptr("b")})
	if err == nil || !strings.Contains(err.Error(), "leave out body, to, or save a new draft with mail_draft") {
		t.Errorf("send draft with other arguments: %v", err)
	}
	if _, err := d.m.MailSend(ctx, &generated.MailSendArgs{Draft: true, ID: &inv}); err == nil || !strings.Contains(err.Error(), "read-only maildir import") {
		t.Errorf("send draft of a read-only account: %v", err)
	}
}

// TestMailDraftAndSend: over real Dovecot and Mailpit, a draft is saved in Drafts and sent as
// it is, leaving a copy in Sent; a reply goes to the sender with the thread's references;
// [send] allow and a closed project refuse before anything is sent.
func TestMailDraftAndSend(t *testing.T) {
	srv := imaptest.Start(t)
	mp := smtptest.Start(t)
	u := srv.NewUser(t)
	own, ann, friend := smtptest.Addr("me"), smtptest.Addr("ann"), smtptest.Addr("friend")
	u.AddMessage(t, "INBOX", []byte(rawMsg("orig-"+filepath.Base(t.TempDir())+"@example.test", "Ann <"+ann+">", own, "Budget review", "", "Can you look at the budget?")), "S")
	dir := home(t)
	pw := filepath.Join(dir, "pw")
	spw := filepath.Join(dir, "spw")
	os.WriteFile(pw, []byte(u.Password+"\n"), 0o600)
	os.WriteFile(spw, []byte(mp.Password+"\n"), 0o600)
	acct := config.Account{Name: "work", Kind: "imap", Server: srv.Addr, User: u.Name, TLS: "none", PasswordCmd: "cat " + pw,
		Address: own, DisplayName: "Sam", SMTP: mp.SMTP, SMTPTLS: "starttls", SMTPUser: mp.User, SMTPPasswordCmd: "cat " + spw,
		TLSCA: filepath.Join(mp.Dir, "tls", "cert.pem")}
	d := newDesk(t, dir, acct)
	ctx := d.ctx(generated.ScopeRead, generated.ScopeMailSend)

	// A draft: saved in Drafts, nothing sent.
	act, err := d.m.MailDraft(ctx, &generated.MailDraftArgs{To: []string{"Friend <" + friend + ">"}, Subject: kit.Ptr("Plans for May"), Body: "Shall we meet in May?"})
	if err != nil {
		t.Fatal(err)
	}
	if act.Account != "work" || act.Preview.Subject != "Plans for May" || len(act.Preview.To) != 1 || !strings.Contains(act.Preview.To[0], friend) || !strings.Contains(act.Preview.From, own) {
		t.Errorf("draft preview: %+v", act.Preview)
	}
	out, err := act.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dr := out.(*generated.DraftResult)
	if dr.Folder != "Drafts" || dr.Subject != "Plans for May" || dr.MessageID == "" {
		t.Errorf("draft saved: %+v", dr)
	}
	if n := len(mp.Messages(t, friend)); n != 0 {
		t.Fatalf("a draft reached the SMTP server %d times", n)
	}
	d.sync()
	draft := d.id("Plans for May")

	// That draft, sent as it is.
	act, err = d.m.MailSend(ctx, &generated.MailSendArgs{Draft: true, ID: &draft})
	if err != nil {
		t.Fatal(err)
	}
	if act.Preview.Subject != "Plans for May" || !strings.HasPrefix(act.Preview.BodyDigest, "sha256:") || act.Preview.BodyLength == nil {
		t.Errorf("send draft preview: %+v", act.Preview)
	}
	out, err = act.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sr := out.(*generated.SendResult)
	if sr.Outcome != "sent" || sr.SentCopy != "Sent" || sr.Warning != "" || strings.Join(sr.Recipients, ",") != friend {
		t.Errorf("draft sent: %+v", sr)
	}
	got := mp.WaitCount(t, friend, 1, 10*time.Second)
	if got[0].Subject != "Plans for May" || got[0].From != own {
		t.Errorf("Mailpit received %+v", got[0])
	}
	d.sync()
	folders, _ := d.m.MailFolders(d.ctx(generated.ScopeRead), &generated.MailFoldersArgs{})
	counts := map[string]int{}
	for _, f := range folders.Folders {
		counts[f.Name] = f.Total
	}
	if counts["Drafts"] != 0 || counts["Sent"] != 1 {
		t.Errorf("after sending the draft: %v (the draft should be gone, a copy in Sent)", counts)
	}
	// A sent draft that is gone cannot be sent again.
	if _, err := d.m.MailSend(ctx, &generated.MailSendArgs{Draft: true, ID: &draft}); err == nil {
		t.Error("a sent draft was sent again")
	}
	// A message outside Drafts is not a draft.
	orig := d.id("Budget review")
	if _, err := d.m.MailSend(ctx, &generated.MailSendArgs{Draft: true, ID: &orig}); err == nil || !strings.Contains(err.Error(), "is in INBOX, not in the Drafts folder") {
		t.Errorf("send draft: true of an inbox message: %v", err)
	}

	// A reply goes to the sender.
	act, err = d.m.MailSend(ctx, &generated.MailSendArgs{ID: &orig, Body: kit.Ptr("Looks fine to me.")})
	if err != nil {
		t.Fatal(err)
	}
	if act.Preview.Subject != "Re: Budget review" || act.Preview.InReplyTo == "" {
		t.Errorf("reply preview: %+v", act.Preview)
	}
	if out, err = act.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mp.WaitCount(t, ann, 1, 10*time.Second); got[0].Subject != "Re: Budget review" {
		t.Errorf("the reply arrived as %+v", got[0])
	}
	// A forward needs recipients.
	if _, err := d.m.MailSend(ctx, &generated.MailSendArgs{ID: &orig, Forward: true, Body: kit.Ptr("FYI")}); err == nil || err.Error() != "a forward needs its recipients in to" {
		t.Errorf("forward without to: %v", err)
	}
	if _, err := d.m.MailDraft(ctx, &generated.MailDraftArgs{To: []string{friend}, Body: "x"}); err == nil || err.Error() != "a new message needs a subject" {
		t.Errorf("new message without a subject: %v", err)
	}
	if _, err := d.m.MailDraft(ctx, &generated.MailDraftArgs{Subject: kit.Ptr("x"), Body: "x"}); err == nil || !strings.HasPrefix(err.Error(), "a new message needs at least one recipient") {
		t.Errorf("new message without recipients: %v", err)
	}

	// [send] allow refuses a recipient it leaves out, before anything is prepared.
	f, _ := os.OpenFile(d.cfg, os.O_APPEND|os.O_WRONLY, 0o600)
	f.WriteString("\n[send]\nallow = [\"" + friend + "\", \"*@acme.example\"]\n")
	f.Close()
	d.m.Config = config.NewWatcher(d.cfg) // read it now, not after the watcher's pause
	stranger := smtptest.Addr("stranger")
	if _, err := d.m.MailSend(ctx, &generated.MailSendArgs{To: []string{stranger}, Subject: kit.Ptr("Hi"), Body: kit.Ptr("x")}); err == nil || !strings.Contains(err.Error(), stranger) {
		t.Errorf("a send [send] allow leaves out: %v", err)
	}
	// A closed project holding the thread refuses the reply, and one holding a draft's
	// recipient refuses to send it.
	act, err = d.m.MailDraft(ctx, &generated.MailDraftArgs{To: []string{"boss@acme.example"}, Subject: kit.Ptr("Offer"), Body: "Our offer."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := act.Run(ctx); err != nil {
		t.Fatal(err)
	}
	d.sync()
	offer := d.id("Offer")
	os.WriteFile(projects.Path(d.cfg), []byte("[[project]]\nid = \"budget\"\nsubjects = [\"budget review\"]\ndomains = [\"acme.example\"]\n"), 0o600)
	if _, err := d.m.MailSend(d.ctx(generated.ScopeRead), &generated.MailSendArgs{Draft: true, ID: &offer}); err == nil || !strings.Contains(err.Error(), "goes to one of its people") {
		t.Errorf("sending a draft to a closed project's client: %v", err)
	}
	if _, err := d.m.MailDraft(d.ctx(generated.ScopeRead), &generated.MailDraftArgs{To: []string{friend}, Subject: kit.Ptr("Budget review notes"), Body: "x"}); err != nil {
		t.Errorf("a new message is refused: %v", err)
	}
	if _, err := d.m.MailDraft(d.ctx(generated.ScopeRead), &generated.MailDraftArgs{ID: &orig, Body: "x"}); err == nil || !strings.HasPrefix(err.Error(), "there is no such message here") {
		t.Errorf("a reply in a closed project's thread: %v", err)
	}
	if n := len(mp.Messages(t, stranger)); n != 0 {
		t.Errorf("a refused send reached the server %d times", n)
	}
}

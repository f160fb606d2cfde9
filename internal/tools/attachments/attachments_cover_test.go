package attachments_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/attachments"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// shelf is a Maildir synced into a real store, its attachment tools called through each
// call's view, saving into a save folder of the test's own.
type shelf struct {
	t                   *testing.T
	cfg, path, md, save string
	a                   *attachments.Attachments
	m                   *mail.Mail
	files               map[string]string // subject -> Maildir file
}

const letter = "The quarterly plan: hire two people, move the office in June, and close the Berlin lease."

func multipart(id, subject string, parts ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From: Ann <ann@example.org>\r\nTo: sam@example.com\r\nSubject: %s\r\nMessage-ID: <%s>\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n", subject, id)
	for _, p := range parts {
		b.WriteString("--b1\r\n" + p + "\r\n")
	}
	b.WriteString("--b1--\r\n")
	return b.String()
}

func part(ctype, name, body string) string {
	return fmt.Sprintf("Content-Type: %s; name=\"%s\"\r\nContent-Disposition: attachment; filename=\"%s\"\r\n\r\n%s", ctype, name, name, body)
}

func newShelf(t *testing.T) *shelf {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	s := &shelf{t: t, cfg: filepath.Join(dir, "config.toml"), path: filepath.Join(dir, "store.db"), md: filepath.Join(dir, "Maildir"), save: filepath.Join(dir, "save"), files: map[string]string{}}
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(s.md, sub), 0o700)
	}
	os.MkdirAll(filepath.Join(s.save, "plans"), 0o700)
	msgs := map[string]string{
		"Plan": multipart("plan@x", "Plan",
			part("text/plain", "plan.txt", letter),
			part("application/pdf", "plan.pdf", "%PDF-1.4 not really"),
			part("image/png", "../../chart.png", "PNGDATA")),
		"One":  multipart("one@x", "One", part("text/html", "page.html", "<p>Hello <b>there</b></p>")),
		"None": "From: Ann <ann@example.org>\r\nTo: sam@example.com\r\nSubject: None\r\nMessage-ID: <none@x>\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n\r\nNo attachment.\r\n",
	}
	i := 0
	for subject, raw := range msgs {
		i++
		name := fmt.Sprintf("%d:2,S", i)
		s.files[subject] = filepath.Join(s.md, "cur", name)
		if err := os.WriteFile(s.files[subject], []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	acct := config.Account{Name: "local", Kind: "maildir", Path: s.md, Address: "sam@example.com"}
	if err := config.AddAccount(s.cfg, acct); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(s.path)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := mailsync.Run(context.Background(), st, []config.Account{acct}, mailsync.Options{})
	st.Close()
	if err != nil || outs[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, outs)
	}
	k := &kit.Kit{Config: config.NewWatcher(s.cfg), SaveDir: s.save}
	s.m = &mail.Mail{Kit: k}
	s.a = &attachments.Attachments{Kit: k, FindMessage: s.m.Message}
	return s
}

func (s *shelf) ctx() context.Context {
	o := &view.Opener{Config: s.a.Config, StorePath: s.path}
	s.t.Cleanup(func() { o.Close() })
	return o.Open(dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: "legacy", Scopes: []string{generated.ScopeRead, generated.ScopeReadBodies}}))
}

func (s *shelf) id(subject string) string {
	s.t.Helper()
	res, err := s.m.MailList(s.ctx(), &generated.MailListArgs{Limit: 50})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, r := range res.Messages {
		if r.Subject == subject {
			return r.ID
		}
	}
	s.t.Fatalf("no message %q", subject)
	return ""
}

// TestAttachmentText: a text attachment read back from the account, page by page; HTML as its
// text; what has no text says why, and an attachment that is not there says which are.
func TestAttachmentText(t *testing.T) {
	s := newShelf(t)
	plan := s.id("Plan")
	res, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: plan, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != letter || res.Name != "plan.txt" || res.Type != "text/plain" || res.Attachments != 3 || res.NextOffset != nil || res.Unavailable != "" {
		t.Errorf("the text attachment: %+v", res)
	}
	// In pages of 40 bytes, each from the one before's next offset.
	var got strings.Builder
	for off, pages := 0, 0; ; pages++ {
		p, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: plan, N: 1, Offset: off, MaxLength: 40})
		if err != nil || len(p.Text) > 40 || pages > 10 {
			t.Fatalf("page at %d: %+v %v", off, p, err)
		}
		got.WriteString(p.Text)
		if p.NextOffset == nil {
			break
		}
		if p.Length == nil || *p.Length != len(letter) || p.Truncated == nil {
			t.Errorf("a middle page: length %v, truncated %v", p.Length, p.Truncated)
		}
		off = *p.NextOffset
	}
	if got.String() != letter {
		t.Errorf("the pages give back %q", got.String())
	}
	if _, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: plan, N: 1, Offset: 1000}); err == nil || !strings.Contains(err.Error(), "past the end of this attachment's text") {
		t.Errorf("an offset past the end: %v", err)
	}
	for n, want := range map[int]string{
		2: "postern cannot read the text of PDF files",
		3: "postern reads the text of text, HTML, calendar and attached-message attachments only, not of image/png; mail_attachment_save saves the file",
		4: "the message has 3 attachments, so there is no attachment 4; give n from 1 to 3",
	} {
		res, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: plan, N: n})
		if err != nil || !strings.HasPrefix(res.Unavailable, want) || res.Text != "" {
			t.Errorf("attachment %d: %+v %v; want %q", n, res, err, want)
		}
	}
	one := s.id("One")
	if res, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: one, N: 1}); err != nil || !strings.Contains(res.Text, "Hello there") || strings.Contains(res.Text, "<b>") {
		t.Errorf("the HTML attachment's text: %+v %v", res, err)
	}
	if res, _ := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: one, N: 2}); res.Unavailable != "the message has one attachment, so there is no attachment 2; give n 1" {
		t.Errorf("n 2 of one: %q", res.Unavailable)
	}
	if res, _ := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: s.id("None"), N: 1}); res.Unavailable != "the message has no attachments" {
		t.Errorf("n 1 of none: %q", res.Unavailable)
	}
	if _, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: "m0", N: 1}); err == nil || !strings.HasPrefix(err.Error(), "there is no such message here") {
		t.Errorf("a bogus id: %v", err)
	}

	// The message changed or went away since the sync: said, nothing read.
	os.WriteFile(s.files["Plan"], []byte(multipart("other@x", "Plan", part("text/plain", "plan.txt", "forged"), part("application/pdf", "plan.pdf", "x"), part("image/png", "c.png", "x"))), 0o600)
	if _, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: plan, N: 1}); err == nil || !strings.HasPrefix(err.Error(), "the message found where it was synced is not the one postern listed") {
		t.Errorf("a changed message: %v", err)
	}
	os.Remove(s.files["Plan"])
	if _, err := s.a.MailAttachmentText(s.ctx(), &generated.MailAttachmentTextArgs{ID: plan, N: 1}); err == nil || err.Error() != "the message is no longer where it was synced; sync and look again" {
		t.Errorf("a message gone: %v", err)
	}
}

// TestAttachmentSave: saved into the save folder (or a folder below it) under a cleaned name,
// never over a file, the name the sender gave said when it changed; bad folders are refused.
func TestAttachmentSave(t *testing.T) {
	s := newShelf(t)
	plan := s.id("Plan")
	res, err := s.a.MailAttachmentSave(s.ctx(), &generated.MailAttachmentSaveArgs{ID: plan, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != filepath.Join(s.save, "plan.txt") || res.Bytes == nil || *res.Bytes != len(letter) || res.Type != "text/plain" || res.NameSent != "" {
		t.Errorf("saved: %+v", res)
	}
	if b, _ := os.ReadFile(res.Path); string(b) != letter {
		t.Errorf("the saved file holds %q", b)
	}
	again, err := s.a.MailAttachmentSave(s.ctx(), &generated.MailAttachmentSaveArgs{ID: plan, N: 1})
	if err != nil || again.Path == res.Path || filepath.Dir(again.Path) != s.save {
		t.Errorf("saved again: %+v %v (must not overwrite %s)", again, err, res.Path)
	}
	// A hostile name is cleaned, inside the save folder, and the sent name is said.
	png, err := s.a.MailAttachmentSave(s.ctx(), &generated.MailAttachmentSaveArgs{ID: plan, N: 3, Dir: kit.Ptr("plans")})
	if err != nil {
		t.Fatal(err)
	}
	if png.Path != filepath.Join(s.save, "plans", "_.._chart.png") || png.NameSent != "../../chart.png" {
		t.Errorf("a hostile name: %+v", png)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.save), "chart.png")); err == nil {
		t.Error("a file was written outside the save folder")
	}
	for dir, want := range map[string]string{
		"missing": `dir "missing" does not exist in the save folder`,
		".ssh":    `dir ".ssh" names the hidden folder ".ssh"`,
		"../x":    `dir "../x" is refused`,
	} {
		if _, err := s.a.MailAttachmentSave(s.ctx(), &generated.MailAttachmentSaveArgs{ID: plan, N: 1, Dir: kit.Ptr(dir)}); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("dir %q: %v; want %q", dir, err, want)
		}
	}
	if res, err := s.a.MailAttachmentSave(s.ctx(), &generated.MailAttachmentSaveArgs{ID: plan, N: 9}); err != nil || res.NotSaved != "the message has 3 attachments, so there is no attachment 9; give n from 1 to 3" || res.Path != "" {
		t.Errorf("n 9: %+v %v", res, err)
	}
	// A save folder that is gone is said, not made.
	os.RemoveAll(s.save)
	if _, err := s.a.MailAttachmentSave(s.ctx(), &generated.MailAttachmentSaveArgs{ID: plan, N: 2}); err == nil || !strings.HasPrefix(err.Error(), "the save folder "+s.save+" does not exist") {
		t.Errorf("a missing save folder: %v", err)
	}
	if _, err := os.Stat(s.save); err == nil {
		t.Error("the missing save folder was created")
	}
}

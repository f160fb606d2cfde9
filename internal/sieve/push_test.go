package sieve

import (
	"context"
	"crypto/tls"
	"os"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/search"
	imapsrc "github.com/postern-mcp/postern/internal/source/imap"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

func TestMain(m *testing.M) { os.Exit(imaptest.Run(m)) }

// scripts is a ManageSieve login as u, the way postern makes one (STARTTLS, certificate
// checked).
func scripts(t *testing.T, u *imaptest.User) *imapsrc.Scripts {
	t.Helper()
	a := imapsrc.Account{
		Name: "work", Server: u.Server.Addr, User: u.Name, TLS: "starttls",
		Password:  func(context.Context) (string, error) { return u.Password, nil },
		TLSConfig: &tls.Config{RootCAs: u.Server.CertPool(t)},
	}
	st, err := imapsrc.DialScripts(context.Background(), a, u.Server.ManageSieveAddr)
	if err != nil {
		t.Fatalf("DialScripts: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

func proofRules() []generated.Rule {
	return []generated.Rule{
		enabled("Newsletter to News", "from:*news@letters.example*",
			generated.RuleAction{Do: doMove, Folder: "News"}, generated.RuleAction{Do: doFlag}),
		enabled("Receipts", "subject:*invoice*",
			generated.RuleAction{Do: doMove, Folder: "Receipts"}),
	}
}

func msg(from, subject string) []byte {
	return []byte("From: " + from + "\r\nTo: someone@example.org\r\nSubject: " + subject +
		"\r\nMessage-ID: <" + subject + "@test>\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\n\r\nHello.\r\n")
}

// inFolder is the subjects and flags in folder, seen by a separate IMAP login.
func inFolder(t *testing.T, c *imapclient.Client, folder string) map[string][]imap.Flag {
	t.Helper()
	sel, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("select %s: %v", folder, err)
	}
	out := map[string][]imap.Flag{}
	if sel.NumMessages == 0 {
		return out
	}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: sel.NumMessages}}, &imap.FetchOptions{Envelope: true, Flags: true}).Collect()
	if err != nil {
		t.Fatalf("fetch %s: %v", folder, err)
	}
	for _, m := range msgs {
		out[m.Envelope.Subject] = m.Flags
	}
	return out
}

func flagged(fs []imap.Flag) bool {
	for _, f := range fs {
		if f == imap.FlagFlagged {
			return true
		}
	}
	return false
}

// Must-show 5: the rules are pushed, listed active on the server, and mail delivered
// afterwards through Dovecot's LMTP, with no postern running, is filed by the server.
func TestPushFilesOnTheServer(t *testing.T) {
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	u := srv.NewUser(t)
	view := u.Login(t, nil)
	for _, f := range []string{"News", "Receipts"} {
		if err := view.Create(f, nil).Wait(); err != nil {
			t.Fatal(err)
		}
	}
	st := scripts(t, u)
	script, skipped := Translate(proofRules(), Options{Account: "work", Extensions: st.Extensions()})
	if len(skipped) != 0 {
		t.Fatalf("skipped %+v", skipped)
	}
	t.Logf("script:\n%s", script)
	ctx := context.Background()
	p, err := Push(ctx, st, script)
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	if p.Outcome != Activated || p.Active != ScriptName {
		t.Errorf("Push = %+v, want ours activated", p)
	}
	list, active, err := st.Scripts(ctx)
	if err != nil || active != ScriptName || len(list) != 1 {
		t.Fatalf("scripts after push: %+v, active %q, %v", list, active, err)
	}
	if got, _ := st.Get(ctx, ScriptName); got != script {
		t.Errorf("the stored script differs from the pushed one")
	}
	st.Close() // from here on, nothing of postern's is connected

	srv.Deliver(t, u, msg("Letters <news@letters.example>", "Weekly digest"))
	srv.Deliver(t, u, msg("shop@example.com", "Your invoice 42"))
	srv.Deliver(t, u, msg("friend@example.net", "Lunch"))

	check := u.Login(t, nil)
	news, receipts, inbox := inFolder(t, check, "News"), inFolder(t, check, "Receipts"), inFolder(t, check, "INBOX")
	if fl, ok := news["Weekly digest"]; len(news) != 1 || !ok || !flagged(fl) {
		t.Errorf("News holds %v, want the digest, flagged", news)
	}
	if _, ok := receipts["Your invoice 42"]; len(receipts) != 1 || !ok {
		t.Errorf("Receipts holds %v, want the invoice", receipts)
	}
	if fl, ok := inbox["Lunch"]; len(inbox) != 1 || !ok || flagged(fl) {
		t.Errorf("INBOX holds %v, want only Lunch, unflagged", inbox)
	}
}

// The person's own active script is kept byte for byte and stays active; ours is stored
// and the answer shows the include line. Once they add it, a push says so and mail delivered
// runs both.
func TestPushKeepsTheirScript(t *testing.T) {
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	u := srv.NewUser(t)
	view := u.Login(t, nil)
	if err := view.Create("News", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := scripts(t, u)
	theirs := "# My own rules. \"Quoted\" \\ and all.\r\nrequire [\"fileinto\"];\r\nif header :contains \"subject\" \"party\" { fileinto \"INBOX\"; }\r\n"
	if err := st.Put(ctx, "mine", theirs); err != nil {
		t.Fatal(err)
	}
	if err := st.Activate(ctx, "mine"); err != nil {
		t.Fatal(err)
	}
	script, _ := Translate(proofRules(), Options{Account: "work", Extensions: st.Extensions()})
	// Expect says beforehand what Push will do, and changes nothing.
	e, err := Expect(ctx, st)
	if err != nil || e.Outcome != NeedsInclude || e.Active != "mine" || !strings.Contains(e.Message, "will") {
		t.Errorf("Expect = %+v, %v; want needs_include, in the future tense", e, err)
	}
	if list, _, _ := st.Scripts(ctx); len(list) != 1 {
		t.Errorf("Expect stored something: %+v", list)
	}
	p, err := Push(ctx, st, script)
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	if p.Outcome != NeedsInclude || p.Active != "mine" || p.IncludeLine != `include :personal "postern";` {
		t.Errorf("Push = %+v, want their script left active and the include line", p)
	}
	t.Logf("Push said: %s", p.Message)
	list, active, err := st.Scripts(ctx)
	if err != nil || active != "mine" {
		t.Fatalf("after push: %+v, active %q, %v; want mine still active", list, active, err)
	}
	names := map[string]bool{}
	for _, s := range list {
		names[s.Name] = true
	}
	if !names["mine"] || !names[ScriptName] || len(list) != 2 {
		t.Errorf("scripts %+v, want mine and ours", list)
	}
	if got, err := st.Get(ctx, "mine"); err != nil || got != theirs {
		t.Errorf("their script is now %q (%v), want it unchanged", got, err)
	}

	// They add the line themselves; a second push leaves theirs alone and says ours runs.
	withInclude := strings.Replace(theirs, `require ["fileinto"];`, `require ["fileinto", "include"];`+"\r\n"+IncludeLine, 1)
	if err := st.Put(ctx, "mine", withInclude); err != nil {
		t.Fatalf("their script with the include: %v", err)
	}
	p, err = Push(ctx, st, script)
	if err != nil || p.Outcome != Included || p.Active != "mine" {
		t.Fatalf("second Push = %+v, %v; want Included", p, err)
	}
	if got, _ := st.Get(ctx, "mine"); got != withInclude {
		t.Errorf("their script changed on the second push")
	}
	srv.Deliver(t, u, msg("news@letters.example", "Digest two"))
	if news := inFolder(t, u.Login(t, nil), "News"); len(news) != 1 {
		t.Errorf("News holds %v, want the digest filed through their include", news)
	}
}

// A script named postern that postern did not write is never replaced.
func TestPushRefusesForeignPosternScript(t *testing.T) {
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	u := srv.NewUser(t)
	ctx := context.Background()
	st := scripts(t, u)
	foreign := "keep;\r\n"
	if err := st.Put(ctx, ScriptName, foreign); err != nil {
		t.Fatal(err)
	}
	script, _ := Translate(proofRules(), Options{Account: "work", Extensions: st.Extensions()})
	if _, err := Expect(ctx, st); err == nil {
		t.Error("Expect does not say a push would be refused")
	}
	if _, err := Push(ctx, st, script); err == nil {
		t.Fatal("Push replaced a script it did not write")
	}
	if got, _ := st.Get(ctx, ScriptName); got != foreign {
		t.Errorf("the foreign script is now %q", got)
	}
}

// The hostile rules' script compiles on the real server and files by the escaped subject.
func TestHostileScriptCompiles(t *testing.T) {
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	u := srv.NewUser(t)
	st := scripts(t, u)
	rules := []generated.Rule{enabled("quote\" and \\ back\r\nredirect \"x@evil\";",
		"subject:"+search.Quote(`*a"b\c*`), generated.RuleAction{Do: doMove, Folder: `News`}, generated.RuleAction{Do: doMarkRead})}
	script, skipped := Translate(rules, Options{Extensions: st.Extensions()})
	if len(skipped) != 0 {
		t.Fatalf("skipped %+v", skipped)
	}
	if err := st.Check(context.Background(), script); err != nil {
		t.Fatalf("the server does not compile it: %v\n%s", err, script)
	}
}

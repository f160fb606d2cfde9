package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// TestSendAllowList: with [send] allow set, every send path refuses a recipient
// outside it before any preview or token, naming it; a commit whose recipient
// the list dropped after the prepare is refused too; inside it, mail sends.
func TestSendAllowList(t *testing.T) {
	mb := newMailbox(t, "host")
	inside, outside := smtptest.Addr("friend"), smtptest.Addr("stranger")
	setAllow := func(list string) {
		t.Helper()
		b, _ := os.ReadFile(mb.cfg)
		s := string(b)
		if i := strings.Index(s, "\n[send]"); i >= 0 {
			s = s[:i+1]
		}
		if err := os.WriteFile(mb.cfg, []byte(s+"\n[send]\nallow = ["+list+"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond) // the server re-reads a configuration that changed, at most once a second
	}
	setAllow(`"` + inside + `", "*@*.allowed.test"`)
	cs := mb.connect(t, "read,drafts:write,mail:send", nil)

	sc, _, _ := call(t, cs, "status", map[string]any{})
	if got, _ := sc["send_allow"].([]any); len(got) != 2 || got[0] != inside {
		t.Fatalf("status shows send_allow %v", sc["send_allow"])
	}
	out, _, _ := runCLI(t, mb.env, "status", "--config", mb.cfg)
	if !strings.Contains(out, "Sending: only to "+inside+", *@*.allowed.test") {
		t.Fatalf("postern status does not show the rule:\n%s", out)
	}

	refusedBefore := func(what string, sc map[string]any, text string, isErr bool, addr string) {
		t.Helper()
		if !isErr || len(sc) != 0 || !strings.Contains(text, addr) || !strings.Contains(text, "[send] allow") || strings.Contains(text, "token") {
			t.Errorf("%s: not refused before the preview, naming %s: %v %s", what, addr, sc, text)
		}
	}
	msg := map[string]any{"to": []any{inside}, "cc": []any{"Stranger <" + outside + ">"}, "subject": "Hello", "body": "Hi."}
	sc, text, isErr := call(t, cs, "mail_send", msg)
	refusedBefore("mail_send with a Cc outside", sc, text, isErr, outside)
	sc, text, isErr = call(t, cs, "mail_send", map[string]any{"bcc": []any{"x@allowed.test"}, "subject": "Hello", "body": "Hi."})
	refusedBefore("*@*.allowed.test does not take allowed.test itself", sc, text, isErr, "x@allowed.test")
	// A reply goes to the original's sender, who is not on the list.
	orig := messageID(t, cs, `subject:"Re: Lunch"`)
	sc, text, isErr = call(t, cs, "mail_send", map[string]any{"id": orig, "body": "Yes."})
	refusedBefore("a reply", sc, text, isErr, mb.dave)
	// A saved draft to a stranger: mail_draft saves it (drafts do not send); sending it is refused.
	d := map[string]any{"to": []any{outside}, "subject": "Draft out", "body": "Hi."}
	dp, text, isErr := call(t, cs, "mail_draft", d)
	if isErr {
		t.Fatalf("mail_draft: %s", text)
	}
	if _, text, isErr := call(t, cs, "mail_draft_commit", with(d, "token", dp["token"])); isErr {
		t.Fatalf("mail_draft_commit: %s", text)
	}
	mb.sync(t)
	draft := messageID(t, cs, `in:Drafts subject:"Draft out"`)
	sc, text, isErr = call(t, cs, "mail_send", map[string]any{"id": draft, "draft": true})
	refusedBefore("mail_send of a draft", sc, text, isErr, outside)

	// Inside the list, it sends; a subdomain pattern lets a subdomain in.
	sub := "team@mail.allowed.test"
	ok := map[string]any{"to": []any{inside}, "cc": []any{sub}, "subject": "Allowed", "body": "Hi."}
	prep, text, isErr := call(t, cs, "mail_send", ok)
	if isErr {
		t.Fatalf("mail_send inside the list: %s", text)
	}
	if _, text, isErr := call(t, cs, "mail_send_commit", with(ok, "token", prep["token"])); isErr {
		t.Fatalf("mail_send_commit: %s", text)
	}
	if got := mb.smtp.WaitCount(t, inside, 1, 10*time.Second); got[0].Subject != "Allowed" {
		t.Fatalf("sent %+v", got[0])
	}

	// Prepared inside the list, then the person narrows it: the commit is refused.
	prep, text, isErr = call(t, cs, "mail_send", with(ok, "subject", "Narrowed"))
	if isErr {
		t.Fatalf("mail_send: %s", text)
	}
	setAllow(`"` + inside + `"`)
	if _, text, isErr := call(t, cs, "mail_send_commit", with(with(ok, "subject", "Narrowed"), "token", prep["token"])); !isErr || !strings.Contains(text, sub) {
		t.Fatalf("a commit to a recipient dropped from [send] allow: %s", text)
	}
	if n := len(mb.smtp.Messages(t, inside)); n != 1 {
		t.Fatalf("the server received %d messages for %s, want 1", n, inside)
	}
	if n := len(mb.smtp.Messages(t, outside)); n != 0 {
		t.Fatalf("the server received %d messages for the stranger", n)
	}
}

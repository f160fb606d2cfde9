package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// mailbox is a throwaway HOME with one IMAP account on the test Dovecot that
// sends through the test Mailpit, a synced thread in its INBOX, and the
// addresses its tests write to.
type mailbox struct {
	env     []string
	cfg     string
	user    *imaptest.User
	smtp    *smtptest.Server
	own     string // the person's address
	carol   string // wrote the thread's first message
	dave    string // replied to it, copying erin
	erin    string
	threadA string // Message-IDs, without brackets
	threadB string
}

func newMailbox(t *testing.T, approval string) *mailbox {
	t.Helper()
	srv := imaptest.Start(t)
	mp := smtptest.Start(t)
	mb := &mailbox{
		user: srv.NewUser(t), smtp: mp,
		own: smtptest.Addr("me"), carol: smtptest.Addr("carol"), dave: smtptest.Addr("dave"), erin: smtptest.Addr("erin"),
	}
	mb.threadA = "a-" + filepath.Base(t.TempDir()) + "@example.test"
	mb.threadB = "b-" + filepath.Base(t.TempDir()) + "@example.test"
	mb.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: Carol <%s>\r\nTo: Me <%s>\r\nCc: %s\r\nSubject: Lunch on Friday?\r\nDate: Mon, 23 Nov 2026 10:00:00 +0000\r\nMessage-ID: <%s>\r\n\r\nShall we have lunch on Friday?\r\n", mb.carol, mb.own, mb.dave, mb.threadA)), "S")
	mb.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: Dave <%s>\r\nTo: %s, ME <%s>\r\nCc: Erin <%s>\r\nSubject: Re: Lunch on Friday?\r\nDate: Mon, 23 Nov 2026 11:00:00 +0000\r\nMessage-ID: <%s>\r\nIn-Reply-To: <%s>\r\nReferences: <%s>\r\n\r\nFriday works. Erin joins.\r\n", mb.dave, mb.carol, strings.ToUpper(mb.own), mb.erin, mb.threadB, mb.threadA, mb.threadA)), "")
	mb.env = home(t)
	dir := t.TempDir()
	pw, spw := filepath.Join(dir, "pw"), filepath.Join(dir, "smtp-pw")
	os.WriteFile(pw, []byte(mb.user.Password+"\n"), 0o600)
	os.WriteFile(spw, []byte(mp.Password+"\n"), 0o600)
	mb.cfg = filepath.Join(dir, "config.toml")
	body := fmt.Sprintf(`[approval]
mode = %q

[[accounts]]
name = "work"
kind = "imap"
server = %q
user = %q
password_cmd = "cat %s"
tls = "none"
address = %q
smtp = %q
smtp_tls = "starttls"
smtp_user = %q
smtp_password_cmd = "cat %s"
`, approval, srv.Addr, mb.user.Name, pw, mb.own, mp.SMTP, mp.User, spw)
	if err := os.WriteFile(mb.cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	// The binary trusts Mailpit's self-signed certificate as a system root.
	mb.env = append(mb.env, "SSL_CERT_FILE="+filepath.Join(mp.Dir, "tls", "cert.pem"))
	mb.sync(t)
	return mb
}

func (mb *mailbox) sync(t *testing.T) {
	t.Helper()
	cmd := exec.Command(binary, "sync", "--config", mb.cfg)
	cmd.Env = mb.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("postern sync: %v\n%s", err, out)
	}
}

// connect starts postern mcp with scopes and connects the Go SDK client,
// with an elicitation handler when elicit is not nil.
func (mb *mailbox) connect(t *testing.T, scopes string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), version ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "--config", mb.cfg, "--scopes", scopes)
	cmd.Env = mb.env
	var opts *mcp.ClientOptions
	if elicit != nil {
		opts = &mcp.ClientOptions{ElicitationHandler: elicit}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "send-e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The legacy era by default; "" is the SDK's own choice (2026-07-28).
	so := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	if len(version) > 0 {
		so = nil
		if version[0] != "" {
			so = &mcp.ClientSessionOptions{ProtocolVersion: version[0]}
		}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, so)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its structured content (nil on error) and text.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &sc)
	}
	return sc, text, res.IsError
}

func with(args map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for a, b := range args {
		out[a] = b
	}
	out[k] = v
	return out
}

// messageID finds the id of the message whose subject is subject.
func messageID(t *testing.T, cs *mcp.ClientSession, query string) string {
	t.Helper()
	sc, text, isErr := call(t, cs, "mail_search", map[string]any{"query": query})
	if isErr {
		t.Fatalf("mail_search: %s", text)
	}
	msgs, _ := sc["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("mail_search %q found %d messages: %s", query, len(msgs), text)
	}
	return msgs[0].(map[string]any)["id"].(string)
}

// imapMessages returns the raw messages of a folder on Dovecot.
func imapMessages(t *testing.T, u *imaptest.User, folder string) [][]byte {
	t.Helper()
	c := u.Login(t, nil)
	sel, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return nil // no such folder yet
	}
	if sel.NumMessages == 0 {
		return nil
	}
	sec := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, m := range msgs {
		out = append(out, m.FindBodySection(sec))
	}
	return out
}

func addrsOf(t *testing.T, h mail.Header, key string) []string {
	t.Helper()
	if h.Get(key) == "" {
		return nil
	}
	l, err := mail.ParseAddressList(h.Get(key))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	var out []string
	for _, a := range l {
		out = append(out, strings.ToLower(a.Address))
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.ToLower(v)
	}
	slices.Sort(out)
	return out
}

// Must-show 1: a reply-all drafted through the stdio server lands in Drafts on
// Dovecot with the right threading, recipients and subject, and shows in its
// thread after the next sync.
func TestDraftReplyLandsInThread(t *testing.T) {
	mb := newMailbox(t, "host")
	cs := mb.connect(t, "read,read:bodies,drafts:write", nil)
	idB := messageID(t, cs, "subject:friday from:dave")
	args := map[string]any{"id": idB, "reply_all": true, "body": "Friday at noon suits me.\nSee you there."}
	prep, text, isErr := call(t, cs, "mail_draft", args)
	if isErr {
		t.Fatalf("mail_draft: %s", text)
	}
	if prep["approval"] != "none" || prep["commit"] != "mail_draft_commit" || prep["subject"] != "Re: Lunch on Friday?" {
		t.Fatalf("preview: %v", prep)
	}
	if got := imapMessages(t, mb.user, "Drafts"); len(got) != 0 {
		t.Fatalf("preparing saved %d drafts", len(got))
	}
	res, text, isErr := call(t, cs, "mail_draft_commit", with(args, "token", prep["token"]))
	if isErr {
		t.Fatalf("mail_draft_commit: %s", text)
	}
	drafts := imapMessages(t, mb.user, "Drafts")
	if len(drafts) != 1 {
		t.Fatalf("Drafts holds %d messages, want 1", len(drafts))
	}
	m, err := mail.ReadMessage(bytes.NewReader(drafts[0]))
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header
	if got := h.Get("In-Reply-To"); got != "<"+mb.threadB+">" {
		t.Errorf("In-Reply-To = %q", got)
	}
	if got := strings.Fields(h.Get("References")); !slices.Equal(got, []string{"<" + mb.threadA + ">", "<" + mb.threadB + ">"}) {
		t.Errorf("References = %q", got)
	}
	if got := h.Get("Subject"); got != "Re: Lunch on Friday?" {
		t.Errorf("Subject = %q", got)
	}
	// Reply-all: Dave (the sender) and Carol in To, Erin in Cc, never the person (in any case).
	if got, want := addrsOf(t, h, "To"), sorted(mb.dave, mb.carol); !slices.Equal(got, want) {
		t.Errorf("To = %v, want %v", got, want)
	}
	if got, want := addrsOf(t, h, "Cc"), sorted(mb.erin); !slices.Equal(got, want) {
		t.Errorf("Cc = %v, want %v", got, want)
	}
	if got := addrsOf(t, h, "From"); !slices.Equal(got, sorted(mb.own)) {
		t.Errorf("From = %v", got)
	}
	if res["message_id"] != strings.Trim(h.Get("Message-ID"), "<>") || res["folder"] != "Drafts" {
		t.Errorf("mail_draft_commit answered %v for %s", res, h.Get("Message-ID"))
	}
	body, _ := bufio.NewReader(m.Body).Peek(1 << 12)
	if !bytes.Contains(body, []byte("Friday at noon suits me.")) || !bytes.Contains(body, []byte("> Friday works. Erin joins.")) {
		t.Errorf("body does not hold the text and the quoted original:\n%s", body)
	}
	if n := len(mb.smtp.Messages(t, mb.dave)); n != 0 {
		t.Errorf("a draft reached the SMTP server %d times", n)
	}
	// After the next sync the draft is part of the thread.
	mb.sync(t)
	th, text, isErr := call(t, cs, "mail_thread", map[string]any{"id": idB})
	if isErr {
		t.Fatalf("mail_thread: %s", text)
	}
	msgs, _ := th["messages"].([]any)
	var folders []string
	for _, x := range msgs {
		folders = append(folders, x.(map[string]any)["folder"].(string))
	}
	if len(msgs) != 3 || folders[2] != "Drafts" {
		t.Fatalf("the thread after sync holds %v, want INBOX, INBOX, Drafts", folders)
	}
	// The token was spent by the commit.
	if _, text, isErr := call(t, cs, "mail_draft_commit", with(args, "token", prep["token"])); !isErr || !strings.Contains(text, "not valid for this action") {
		t.Fatalf("a spent draft token was accepted: %s", text)
	}
	if got := imapMessages(t, mb.user, "Drafts"); len(got) != 1 {
		t.Fatalf("Drafts holds %d messages after a replay, want 1", len(got))
	}
	// A forward: Fwd: once, the original's text after the agent's, threaded by References only.
	fwdTo := smtptest.Addr("fwd")
	fargs := map[string]any{"id": idB, "forward": true, "to": []any{fwdTo}, "body": "For your calendar."}
	prep, text, isErr = call(t, cs, "mail_draft", fargs)
	if isErr {
		t.Fatalf("mail_draft forward: %s", text)
	}
	if _, text, isErr := call(t, cs, "mail_draft_commit", with(fargs, "token", prep["token"])); isErr {
		t.Fatalf("mail_draft_commit forward: %s", text)
	}
	var fwd *mail.Message
	for _, raw := range imapMessages(t, mb.user, "Drafts") {
		if m, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil && strings.HasPrefix(m.Header.Get("Subject"), "Fwd:") {
			fwd = m
		}
	}
	if fwd == nil {
		t.Fatal("no forward in Drafts")
	}
	fb, _ := bufio.NewReader(fwd.Body).Peek(1 << 12)
	if fwd.Header.Get("Subject") != "Fwd: Re: Lunch on Friday?" || !slices.Equal(addrsOf(t, fwd.Header, "To"), sorted(fwdTo)) ||
		!bytes.Contains(fb, []byte("For your calendar.")) || !bytes.Contains(fb, []byte("Friday works. Erin joins.")) ||
		!strings.Contains(fwd.Header.Get("References"), mb.threadB) {
		t.Errorf("forward: %v\n%s", fwd.Header, fb)
	}
}

var refusalRE = regexp.MustCompile(`^This approval token is not valid for this action`)

// Must-show 2 and 3: a preview sends nothing; a commit sends once with a copy
// in Sent; a replay, another connection's token and a changed payload are
// refused with one sentence; 20 concurrent commits of one token send once.
func TestSendPrepareCommit(t *testing.T) {
	mb := newMailbox(t, "host")
	cs := mb.connect(t, "read,mail:send", nil)
	rcpt := smtptest.Addr("friend")
	args := map[string]any{"to": []any{"Friend <" + rcpt + ">"}, "subject": "The address", "body": "It is 12 Rue de la Paix.\nSee you."}
	prep, text, isErr := call(t, cs, "mail_send", args)
	if isErr {
		t.Fatalf("mail_send: %s", text)
	}
	if prep["approval"] != "host" || prep["commit"] != "mail_send_commit" || prep["account"] != "work" ||
		!strings.HasPrefix(prep["body_digest"].(string), "sha256:") || len(prep["token"].(string)) != 43 {
		t.Fatalf("preview: %v", prep)
	}
	if n := len(mb.smtp.Messages(t, rcpt)); n != 0 {
		t.Fatalf("preparing sent %d messages", n)
	}
	res, text, isErr := call(t, cs, "mail_send_commit", with(args, "token", prep["token"]))
	if isErr {
		t.Fatalf("mail_send_commit: %s", text)
	}
	got := mb.smtp.WaitCount(t, rcpt, 1, 10*time.Second)
	if got[0].Subject != "The address" || res["outcome"] != "sent" || res["message_id"] != got[0].MessageID || res["sent_copy"] != "Sent" {
		t.Fatalf("sent %+v, answered %v", got[0], res)
	}
	if sent := imapMessages(t, mb.user, "Sent"); len(sent) != 1 || !bytes.Contains(sent[0], []byte(got[0].MessageID)) {
		t.Fatalf("Sent holds %d messages, want the copy of %s", len(sent), got[0].MessageID)
	}

	var refusals []string
	refused := func(what string, sc map[string]any, text string, isErr bool) {
		t.Helper()
		if !isErr || !refusalRE.MatchString(text) {
			t.Errorf("%s: not refused: %s", what, text)
		}
		refusals = append(refusals, text)
	}
	// The same token again.
	sc, text, isErr := call(t, cs, "mail_send_commit", with(args, "token", prep["token"]))
	refused("replay", sc, text, isErr)
	// A second prepare, then a commit with one byte of the body changed.
	prep2, _, _ := call(t, cs, "mail_send", args)
	sc, text, isErr = call(t, cs, "mail_send_commit", with(with(args, "body", "It is 13 Rue de la Paix.\nSee you."), "token", prep2["token"]))
	refused("changed payload", sc, text, isErr)
	// That token was spent by the try: the unchanged payload is refused too.
	sc, text, isErr = call(t, cs, "mail_send_commit", with(args, "token", prep2["token"]))
	refused("token spent by a wrong try", sc, text, isErr)
	// A token from another connection.
	other := mb.connect(t, "read,mail:send", nil)
	prep3, _, _ := call(t, other, "mail_send", args)
	sc, text, isErr = call(t, cs, "mail_send_commit", with(args, "token", prep3["token"]))
	refused("another connection", sc, text, isErr)
	// A made-up token.
	sc, text, isErr = call(t, cs, "mail_send_commit", with(args, "token", strings.Repeat("A", 43)))
	refused("unknown", sc, text, isErr)
	for _, r := range refusals[1:] {
		if r != refusals[0] {
			t.Errorf("refusals differ:\n%s\n%s", refusals[0], r)
		}
	}
	if n := len(mb.smtp.Messages(t, rcpt)); n != 1 {
		t.Fatalf("the server received %d messages, want 1", n)
	}

	// 20 concurrent commits of one token: exactly one sends.
	rcpt2 := smtptest.Addr("race")
	args2 := with(args, "to", []any{rcpt2})
	prep4, _, _ := call(t, cs, "mail_send", args2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, no := 0, 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, text, isErr := call(t, cs, "mail_send_commit", with(args2, "token", prep4["token"]))
			mu.Lock()
			defer mu.Unlock()
			if isErr {
				if !refusalRE.MatchString(text) {
					t.Errorf("a concurrent commit failed otherwise: %s", text)
				}
				no++
			} else {
				ok++
			}
		}()
	}
	wg.Wait()
	if ok != 1 || no != 19 {
		t.Fatalf("20 concurrent commits: %d sent, %d refused", ok, no)
	}
	mb.smtp.WaitCount(t, rcpt2, 1, 10*time.Second)
	time.Sleep(300 * time.Millisecond)
	if n := len(mb.smtp.Messages(t, rcpt2)); n != 1 {
		t.Fatalf("the server received %d messages from 20 concurrent commits", n)
	}

	// Must-show 7: the audit log has each prepare and commit with ids, lengths
	// and outcome, and no body text nor token.
	checkAudit(t, mb, prep["token"].(string), "12 Rue de la Paix")
}

// auditLog is everything the audit log of mb's HOME holds.
func (mb *mailbox) auditLog() []byte {
	var state string
	for _, e := range mb.env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	files, _ := filepath.Glob(filepath.Join(state, "postern", "audit", "*.jsonl"))
	var all []byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all = append(all, b...)
	}
	return all
}

// checkAudit reads the audit log of mb's HOME.
func checkAudit(t *testing.T, mb *mailbox, token, bodyText string) {
	t.Helper()
	all := mb.auditLog()
	if bytes.Contains(all, []byte(token)) || bytes.Contains(all, []byte(bodyText)) {
		t.Fatalf("the audit log holds the token or the body text")
	}
	var prepLine, commitLine map[string]any
	for _, l := range bytes.Split(all, []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		switch {
		case e["tool"] == "mail_send" && e["outcome"] == "prepared" && prepLine == nil:
			prepLine = e
		case e["tool"] == "mail_send_commit" && e["outcome"] == "done" && commitLine == nil:
			commitLine = e
		}
	}
	if prepLine == nil || commitLine == nil {
		t.Fatalf("no prepare or commit line in the audit log:\n%s", all)
	}
	if prepLine["approval"] == nil || prepLine["approval"] != commitLine["approval"] {
		t.Errorf("prepare and commit lines do not share an approval reference: %v / %v", prepLine["approval"], commitLine["approval"])
	}
	args, _ := commitLine["args"].(map[string]any)
	if fmt.Sprint(args["body"]) == "" || strings.Contains(fmt.Sprint(args), "Paix") || commitLine["length"].(float64) == 0 {
		t.Errorf("commit line args/length: %v", commitLine)
	}
	if !strings.Contains(string(all), `"outcome":"refused"`) {
		t.Errorf("no refused commit in the audit log")
	}
}

// Must-show 4, with elicitation: decline sends nothing, accept sends once; in
// the legacy era the server asks with elicitation/create, in 2026-07-28 with an
// input_required round that the SDK client fulfils and retries. In host mode,
// where such a client keeps the pair (elsewhere mail_send is one call:
// TestOneCallSend), the commit asks.
func TestSendElicitation(t *testing.T) {
	mb := newMailbox(t, "host")
	for _, era := range []struct{ name, version string }{{"legacy", "2025-11-25"}, {"modern", ""}} {
		t.Run(era.name, func(t *testing.T) {
			var mu sync.Mutex
			answer := "decline"
			var asked []string
			cs := mb.connect(t, "read,mail:send", func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, req.Params.Message)
				return &mcp.ElicitResult{Action: answer}, nil
			}, era.version)
			if got := cs.InitializeResult().ProtocolVersion; era.version == "" && got != "2026-07-28" {
				t.Fatalf("negotiated %s", got)
			}
			rcpt := smtptest.Addr("asked")
			args := map[string]any{"to": []any{rcpt}, "subject": "Approval please", "body": "Only if you agree."}
			prep, _, _ := call(t, cs, "mail_send", args)
			if prep["approval"] != "ask" {
				t.Fatalf("preview approval = %v, want ask", prep["approval"])
			}
			_, text, isErr := call(t, cs, "mail_send_commit", with(args, "token", prep["token"]))
			if !isErr || !strings.Contains(text, "declined") {
				t.Fatalf("declined commit answered: %s", text)
			}
			mu.Lock()
			if len(asked) != 1 || !strings.Contains(asked[0], rcpt) || !strings.Contains(asked[0], "Approval please") {
				t.Fatalf("the person was asked %q", asked)
			}
			answer = "accept"
			mu.Unlock()
			// A declined token is spent.
			if _, text, isErr := call(t, cs, "mail_send_commit", with(args, "token", prep["token"])); !isErr || !refusalRE.MatchString(text) {
				t.Fatalf("a declined token was taken again: %s", text)
			}
			prep, _, _ = call(t, cs, "mail_send", args)
			if _, text, isErr := call(t, cs, "mail_send_commit", with(args, "token", prep["token"])); isErr {
				t.Fatalf("accepted commit failed: %s", text)
			}
			mb.smtp.WaitCount(t, rcpt, 1, 10*time.Second)
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 2 {
				t.Fatalf("asked %d times, want 2", len(asked))
			}
		})
	}
}

// Must-show 4, without elicitation: the terminal mode holds the commit until
// postern approve approves it by its code, in a terminal only.
func TestSendHeldForPosternApprove(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script (util-linux) is needed to give postern approve a terminal")
	}
	mb := newMailbox(t, "terminal")
	cs := mb.connect(t, "read,mail:send", nil)
	approve := func(args ...string) (string, error) {
		cmd := exec.Command(binary, append([]string{"approve"}, args...)...)
		cmd.Env = mb.env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	waitCode := func() string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			out, err := approve("--json")
			var rows []map[string]any
			if err == nil && json.Unmarshal([]byte(out), &rows) == nil && len(rows) == 1 {
				return rows[0]["code"].(string)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatal("no held action appeared in postern approve")
		return ""
	}
	for _, tc := range []struct {
		name    string
		decide  func(code string)
		sent    int
		wantErr string
	}{
		{"declined", func(code string) {
			if out, err := approve("--decline", code); err != nil {
				t.Errorf("postern approve --decline: %v %s", err, out)
			}
		}, 0, "declined"},
		{"approved", func(code string) {
			// Not from a pipe: an agent's shell has no terminal.
			if out, err := approve(code); err == nil || !strings.Contains(out, "terminal") {
				t.Errorf("postern approve from a pipe: %v %s", err, out)
			}
			cmd := exec.Command("script", "-qec", binary+" approve "+code, "/dev/null")
			cmd.Env = mb.env
			cmd.Stdin = strings.NewReader("y\n")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Approved "+code) || !strings.Contains(string(out), "Held for you") {
				t.Errorf("postern approve in a terminal: %v\n%s", err, out)
			}
		}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcpt := smtptest.Addr("held")
			args := map[string]any{"to": []any{rcpt}, "subject": "Held for you", "body": "Wait for the person."}
			prep, _, _ := call(t, cs, "mail_send", args)
			if prep["approval"] != "terminal" {
				t.Fatalf("preview approval = %v", prep["approval"])
			}
			done := make(chan string, 1)
			go func() {
				_, text, isErr := call(t, cs, "mail_send_commit", with(args, "token", prep["token"]))
				if !isErr {
					text = ""
				}
				done <- text
			}()
			code := waitCode()
			if n := len(mb.smtp.Messages(t, rcpt)); n != 0 {
				t.Fatalf("sent %d before the person decided", n)
			}
			tc.decide(code)
			select {
			case text := <-done:
				if tc.wantErr == "" && text != "" || tc.wantErr != "" && !strings.Contains(text, tc.wantErr) {
					t.Fatalf("commit answered %q", text)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the commit did not return after the decision")
			}
			if tc.sent > 0 {
				mb.smtp.WaitCount(t, rcpt, tc.sent, 10*time.Second)
			} else if n := len(mb.smtp.Messages(t, rcpt)); n != 0 {
				t.Fatalf("a declined send reached the server %d times", n)
			}
			if out, _ := approve("--json"); strings.TrimSpace(out) != "[]" {
				t.Fatalf("held actions left behind: %s", out)
			}
		})
	}
}

// Must-show 5: without mail:send the send tools are neither listed nor
// callable; with every other scope, no tool of the registry can send.
func TestNothingLeavesWithoutMailSend(t *testing.T) {
	mb := newMailbox(t, "host")
	var scopes []string
	for _, s := range generated.Scopes {
		if s.Name != "mail:send" {
			scopes = append(scopes, s.Name)
		}
	}
	cs := mb.connect(t, strings.Join(scopes, ","), nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range list.Tools {
		listed[tl.Name] = true
	}
	rcpt := smtptest.Addr("nobody")
	sendArgs := map[string]any{"to": []any{rcpt}, "subject": "x", "body": "y", "id": "m1", "token": strings.Repeat("A", 43)}
	sendTools := 0
	for _, spec := range generated.Tools {
		if spec.Effect != "send" {
			continue
		}
		sendTools++
		if spec.Scope != "mail:send" {
			t.Errorf("%s sends but needs %s, not mail:send", spec.Name, spec.Scope)
		}
		if listed[spec.Name] {
			t.Errorf("%s is listed without mail:send", spec.Name)
		}
		args := map[string]any{}
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		b, _ := generated.Files.ReadFile(spec.InputSchema)
		json.Unmarshal(b, &in)
		for k := range in.Properties {
			if v, ok := sendArgs[k]; ok {
				args[k] = v
			}
		}
		_, text, isErr := call(t, cs, spec.Name, args)
		if !isErr || !strings.Contains(text, `"mail:send"`) {
			t.Errorf("%s without mail:send answered %q", spec.Name, text)
		}
	}
	if sendTools < 2 {
		t.Fatalf("only %d tools send; the registry should hold mail_send and its commit", sendTools)
	}
	// Every other tool that writes: a draft is saved, never sent.
	args := map[string]any{"to": []any{rcpt}, "subject": "Only a draft", "body": "Never sent."}
	prep, text, isErr := call(t, cs, "mail_draft", args)
	if isErr {
		t.Fatal(text)
	}
	if _, text, isErr := call(t, cs, "mail_draft_commit", with(args, "token", prep["token"])); isErr {
		t.Fatal(text)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(mb.smtp.Messages(t, rcpt)); n != 0 {
		t.Fatalf("%d messages left the machine without mail:send", n)
	}
}

// Must-show 6: header injection through recipients, names and subjects is
// refused before any preview, and nothing is sent.
func TestHeaderInjectionRefusedBeforePreview(t *testing.T) {
	mb := newMailbox(t, "host")
	cs := mb.connect(t, "read,drafts:write,mail:send", nil)
	rcpt := smtptest.Addr("target")
	evil := smtptest.Addr("evil")
	for _, tc := range []struct {
		name  string
		args  map[string]any
		field string
	}{
		{"CRLF in a name", map[string]any{"to": []any{"Bob\r\nBcc: " + evil + " <" + rcpt + ">"}}, "to"},
		{"CRLF after an address", map[string]any{"to": []any{rcpt + "\r\nBcc: " + evil}}, "to"},
		{"LF in cc", map[string]any{"to": []any{rcpt}, "cc": []any{"x@example.test\nBcc: " + evil}}, "cc"},
		{"two addresses in one", map[string]any{"to": []any{rcpt + ", " + evil}}, "to"},
		{"address hidden in a name", map[string]any{"to": []any{"\"" + evil + "\" <" + rcpt + ">"}}, "to"},
		{"encoded word in a name", map[string]any{"to": []any{"=?utf-8?q?Bob=0D=0ABcc:_" + evil + "?= <" + rcpt + ">"}}, "to"},
		{"CRLF in the subject", map[string]any{"to": []any{rcpt}, "subject": "Hello\r\nBcc: " + evil}, "subject"},
		{"encoded word in the subject", map[string]any{"to": []any{rcpt}, "subject": "=?utf-8?q?Hi=0D=0ABcc:_" + evil + "?="}, "subject"},
	} {
		for _, tool := range []string{"mail_send", "mail_draft"} {
			args := with(tc.args, "body", "Hello.")
			if _, ok := args["subject"]; !ok {
				args["subject"] = "Hello"
			}
			sc, text, isErr := call(t, cs, tool, args)
			if !isErr || sc != nil || strings.Contains(text, "token") || !strings.Contains(strings.ToLower(text), tc.field) {
				t.Errorf("%s, %s: answered %q (%v)", tc.name, tool, text, sc)
			}
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(mb.smtp.Messages(t, rcpt)) + len(mb.smtp.Messages(t, evil)); n != 0 {
		t.Fatalf("%d messages were sent", n)
	}
	if d := imapMessages(t, mb.user, "Drafts"); len(d) != 0 {
		t.Fatalf("%d drafts were saved", len(d))
	}
}

// TestSendUnknownOutcome: when the SMTP connection drops after the message was
// handed over and before the server's answer, the commit says the outcome is
// unknown, the audit log says so, and postern never connects again by itself.
// (No real server drops a connection on cue: a few lines of fake SMTP here.)
func TestSendUnknownOutcome(t *testing.T) {
	mb := newMailbox(t, "host")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func(c net.Conn) {
				defer c.Close()
				r := bufio.NewReader(c)
				fmt.Fprint(c, "220 fake ESMTP\r\n")
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
					case strings.HasPrefix(cmd, "EHLO"):
						fmt.Fprint(c, "250-fake\r\n250 AUTH PLAIN\r\n")
					case strings.HasPrefix(cmd, "AUTH"):
						fmt.Fprint(c, "235 ok\r\n")
					case strings.HasPrefix(cmd, "MAIL"), strings.HasPrefix(cmd, "RCPT"):
						fmt.Fprint(c, "250 ok\r\n")
					case cmd == "DATA":
						fmt.Fprint(c, "354 go on\r\n")
						for {
							l, err := r.ReadString('\n')
							if err != nil || l == ".\r\n" {
								return // the message was handed over: drop the line before answering
							}
						}
					default:
						fmt.Fprint(c, "250 ok\r\n")
					}
				}
			}(c)
		}
	}()
	b, _ := os.ReadFile(mb.cfg)
	cfg := strings.Replace(string(b), `smtp = "`+mb.smtp.SMTP+`"`, `smtp = "`+ln.Addr().String()+`"`, 1)
	cfg = strings.Replace(cfg, `smtp_tls = "starttls"`, `smtp_tls = "none"`, 1)
	os.WriteFile(mb.cfg, []byte(cfg), 0o600)
	cs := mb.connect(t, "read,mail:send", nil)
	args := map[string]any{"to": []any{smtptest.Addr("lost")}, "subject": "Into the void", "body": "Did it arrive?"}
	prep, text, isErr := call(t, cs, "mail_send", args)
	if isErr {
		t.Fatal(text)
	}
	_, text, isErr = call(t, cs, "mail_send_commit", with(args, "token", prep["token"]))
	if !isErr || !strings.Contains(text, "unknown") || !strings.Contains(text, "not retry") {
		t.Fatalf("commit answered %q", text)
	}
	time.Sleep(500 * time.Millisecond)
	if n := conns.Load(); n != 1 {
		t.Fatalf("postern connected %d times, want 1 (no retry)", n)
	}
	if got := imapMessages(t, mb.user, "Sent"); len(got) != 0 {
		t.Fatalf("a copy of a message of unknown fate was saved in Sent")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		all := mb.auditLog()
		if bytes.Contains(all, []byte(`"outcome":"unknown"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit log does not say unknown:\n%s", all)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPairAnswersValidate: every prepare/commit pair of the registry, prepared
// and committed against the real servers, answers structuredContent that
// validates against the outputSchema tools/list announces for each half.
func TestPairAnswersValidate(t *testing.T) {
	mb := newMailbox(t, "host")
	cs := mb.connect(t, allScopes(), nil)
	schemas := outputSchemas(t, cs)
	rcpt := smtptest.Addr("valid")
	// Arguments per pair, in the order they run ("mail_send draft" sends the draft mail_draft
	// saved); a key of two words is a second call of the pair its first word names.
	order := []string{"calendar_respond", "mail_backups_purge", "mail_unsubscribe", "mail_draft", "mail_send", "mail_send draft", "rules_push"}
	args := map[string]func() map[string]any{
		"mail_unsubscribe": func() map[string]any {
			mb.user.AddMessage(t, "INBOX", []byte("From: News <news@example.test>\r\nTo: me@example.test\r\nSubject: Weekly news\r\nList-Id: <news.example.test>\r\nList-Unsubscribe: <mailto:"+smtptest.Addr("unsub")+"?subject=unsubscribe>\r\nMessage-ID: <weekly@example.test>\r\n\r\nNews.\r\n"), "")
			mb.sync(t)
			return map[string]any{"id": messageID(t, cs, `subject:"Weekly news"`)}
		},
		"mail_backups_purge": func() map[string]any {
			// A backup older than the retention: a move to trash keeps one, then it is made old.
			mb.user.AddMessage(t, "Trash", []byte("From: x@example.test\r\nSubject: kept\r\nMessage-ID: <kept@example.test>\r\n\r\nKept.\r\n"), "S")
			mb.sync(t)
			if _, text, isErr := call(t, cs, "mail_move", map[string]any{"query": "from:carol", "to": "trash"}); isErr {
				t.Fatalf("mail_move to trash: %s", text)
			}
			ageBackups(t, mb.env)
			return map[string]any{}
		},
		"mail_draft": func() map[string]any {
			return map[string]any{"to": []any{rcpt}, "cc": []any{smtptest.Addr("cc")}, "subject": "Valid", "body": "Checked against its schema."}
		},
		"mail_send": func() map[string]any {
			return map[string]any{"id": messageID(t, cs, "subject:friday from:dave"), "body": "Noon it is."}
		},
		"calendar_respond": func() map[string]any {
			// No CalDAV account here: the reply is sent and no calendar copy is kept (the
			// copy is TestInvitationAnswered's, invite_e2e_test.go).
			mb.user.AddMessage(t, "INBOX", inviteMessage(smtptest.Addr("olga"), mb.own, "valid@example.org", "valid-invite@example.test"), "")
			mb.sync(t)
			return map[string]any{"id": messageID(t, cs, `subject:"Design review"`), "answer": "tentative"}
		},
		"mail_send draft": func() map[string]any {
			mb.sync(t)
			sc, text, _ := call(t, cs, "mail_list", map[string]any{"folder": "Drafts"})
			msgs, _ := sc["messages"].([]any)
			if len(msgs) != 1 {
				t.Fatalf("Drafts lists %d messages: %s", len(msgs), text)
			}
			return map[string]any{"id": msgs[0].(map[string]any)["id"], "draft": true}
		},
		// nil when the test Dovecot has no ManageSieve (TestRulesPushPair says so).
		"rules_push": func() map[string]any { return pushable(t, mb) },
	}
	pairs := 0
	for _, spec := range generated.Tools {
		if spec.Phase == "prepare" {
			pairs++
			if args[spec.Name] == nil {
				t.Errorf("%s is a new pair: add its arguments to this test", spec.Name)
			}
		}
	}
	tools := map[string]bool{}
	for _, key := range order {
		tools[strings.Fields(key)[0]] = true
	}
	if pairs != len(tools) {
		t.Fatalf("%d pairs in the registry, %d in this test", pairs, len(tools))
	}
	for _, key := range order {
		name := strings.Fields(key)[0]
		a := args[key]()
		if a == nil {
			continue
		}
		prep, text, isErr := call(t, cs, name, a)
		if isErr {
			t.Fatalf("%s: %s", name, text)
		}
		if err := compile(t, schemas[name]).Validate(anyJSON(prep)); err != nil {
			t.Errorf("%s: %v", key, err)
		}
		res, text, isErr := call(t, cs, name+"_commit", with(a, "token", prep["token"]))
		if isErr {
			t.Fatalf("%s (commit): %s", key, text)
		}
		if err := compile(t, schemas[name+"_commit"]).Validate(anyJSON(res)); err != nil {
			t.Errorf("%s (commit): %v", key, err)
		}
	}
	// The draft went out as it was, and left Drafts for Sent.
	got := mb.smtp.WaitCount(t, rcpt, 1, 10*time.Second)
	if got[0].Subject != "Valid" {
		t.Errorf("sent the draft as %+v", got[0])
	}
	if d := imapMessages(t, mb.user, "Drafts"); len(d) != 0 {
		t.Errorf("the sent draft is still in Drafts")
	}
	if s := imapMessages(t, mb.user, "Sent"); len(s) != 3 {
		t.Errorf("Sent holds %d messages, want the reply, the draft and calendar_respond's answer", len(s))
	}
}

// anyJSON turns a decoded map into the form the schema validator takes.
func anyJSON(m map[string]any) any {
	b, _ := json.Marshal(m)
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	return v
}

// TestSendExpiredToken: a token past its lifetime (the shortest a
// configuration may set, 30 s) is refused with the same sentence, and nothing
// is sent. It waits out the lifetime, so it runs beside the other tests.
func TestSendExpiredToken(t *testing.T) {
	t.Parallel()
	mb := newMailbox(t, "host")
	b, _ := os.ReadFile(mb.cfg)
	os.WriteFile(mb.cfg, bytes.Replace(b, []byte("[approval]\n"), []byte("[approval]\nttl = \"30s\"\n"), 1), 0o600)
	cs := mb.connect(t, "read,mail:send", nil)
	rcpt := smtptest.Addr("late")
	args := map[string]any{"to": []any{rcpt}, "subject": "Too late", "body": "This waits too long."}
	prep, text, isErr := call(t, cs, "mail_send", args)
	if isErr {
		t.Fatal(text)
	}
	exp, err := time.Parse(time.RFC3339, prep["expires_at"].(string))
	if err != nil || time.Until(exp) > 31*time.Second || time.Until(exp) < 25*time.Second {
		t.Fatalf("expires_at %v is not 30 s away (%v)", prep["expires_at"], err)
	}
	time.Sleep(time.Until(exp) + time.Second)
	_, text, isErr = call(t, cs, "mail_send_commit", with(args, "token", prep["token"]))
	if !isErr || !refusalRE.MatchString(text) {
		t.Fatalf("an expired token answered %q", text)
	}
	if n := len(mb.smtp.Messages(t, rcpt)); n != 0 {
		t.Fatalf("an expired token sent %d messages", n)
	}
}

// TestComposeArgumentsRefused: id names the message a draft or a send answers, forward and
// reply_all say how, and draft: true sends a saved draft as it is. A combination that says two
// things, or leaves out what it needs, is refused with a sentence naming the argument, before
// anything is prepared; nothing is saved and nothing leaves.
func TestComposeArgumentsRefused(t *testing.T) {
	mb := newMailbox(t, "host")
	cs := mb.connect(t, "read,read:bodies,drafts:write,mail:send", nil)
	orig := messageID(t, cs, "subject:friday from:dave")
	rcpt := smtptest.Addr("refused")
	for _, c := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"mail_draft", map[string]any{"id": orig, "forward": true, "reply_all": true, "to": []any{rcpt}, "body": "x"}, "give reply_all or forward, not both"},
		{"mail_send", map[string]any{"id": orig, "forward": true, "reply_all": true, "to": []any{rcpt}, "body": "x"}, "give reply_all or forward, not both"},
		{"mail_draft", map[string]any{"forward": true, "to": []any{rcpt}, "subject": "s", "body": "x"}, "need id, the message to reply to or forward"},
		{"mail_send", map[string]any{"reply_all": true, "to": []any{rcpt}, "subject": "s", "body": "x"}, "need id, the message to reply to or forward"},
		{"mail_draft", map[string]any{"id": orig, "forward": true, "body": "x"}, "a forward needs its recipients in to"},
		{"mail_send", map[string]any{"to": []any{rcpt}, "subject": "s"}, "body is missing"},
		{"mail_send", map[string]any{"draft": true}, "give its message id in id"},
		{"mail_send", map[string]any{"id": orig, "draft": true, "body": "x", "to": []any{rcpt}}, "takes only id; leave out body, to"},
		{"mail_send", map[string]any{"id": orig, "draft": true}, "not in the Drafts folder"},
	} {
		sc, text, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(strings.ToLower(text), strings.ToLower(c.says)) || sc["token"] != nil {
			t.Errorf("%s %v: answered %q, want a refusal saying %q", c.tool, c.args, text, c.says)
		}
	}
	if d := imapMessages(t, mb.user, "Drafts"); len(d) != 0 {
		t.Errorf("Drafts holds %d messages after refused calls", len(d))
	}
	if got := mb.smtp.Messages(t, rcpt); len(got) != 0 {
		t.Errorf("%d messages left for %s after refused calls", len(got), rcpt)
	}
}

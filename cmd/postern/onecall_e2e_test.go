package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/sieve"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// A pair costs one tool where the person can be asked (issue 24, must-show 3): with a client
// that declares elicitation, sending, unsubscribing and pushing rules each take one call that
// asks the person once (one elicitation/create in the legacy era, one input_required round in
// 2026-07-28) and does nothing when they decline; the _commit twin is not listed. Without
// elicitation, and in host mode, the pair is two tools as before. Through the real binary, over
// stdio and Streamable HTTP, with the Go SDK and the TypeScript SDK's client.

// person answers the elicitations of one client and keeps what it was asked.
type person struct {
	mu     sync.Mutex
	answer string
	asked  []string
}

func (p *person) set(answer string) {
	p.mu.Lock()
	p.answer = answer
	p.mu.Unlock()
}

func (p *person) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params.Message)
	return &mcp.ElicitResult{Action: p.answer}, nil
}

func (p *person) messages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// askingClient is a Go SDK client session whose person answers elicitations, with what the
// server wrote to it (stdout, or every HTTP answer body).
type askingClient struct {
	cs     *mcp.ClientSession
	person *person
	wire   *hjRecorder
	era    string // legacy or modern
}

// connectAsking starts postern mcp with env and cfg over transport (stdio or http) and connects
// the Go SDK in era (legacy: 2025-11-25; modern: the SDK's own, 2026-07-28); a nil p declares
// no elicitation.
func connectAsking(t *testing.T, env []string, cfg, transport, era, scopes string, p *person) *askingClient {
	t.Helper()
	var opts *mcp.ClientOptions
	if p != nil {
		opts = &mcp.ClientOptions{ElicitationHandler: p.handler}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "onecall-e2e", Version: "1"}, opts)
	so := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	if era == "modern" {
		so = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wire := &hjRecorder{}
	var cs *mcp.ClientSession
	var err error
	switch transport {
	case "stdio":
		cmd := exec.Command(binary, "mcp", "--config", cfg, "--scopes", scopes)
		cmd.Env = env
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			in.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Errorf("postern mcp did not exit within 10 s of stdin closing")
			}
		})
		cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: hjReadCloser{io.TeeReader(out, wire), out}, Writer: in}, so)
	case "http":
		s := startHTTP(t, env, "--config", cfg, "--scopes", scopes)
		hc := &http.Client{Transport: hjRecordingTransport{bearer{s.token, http.DefaultTransport}, wire}}
		cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc}, so)
	default:
		t.Fatalf("transport %q", transport)
	}
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	t.Cleanup(func() { cs.Close() })
	want := map[string]string{"legacy": "2025-11-25", "modern": "2026-07-28"}[era]
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated %s, want %s", got, want)
	}
	return &askingClient{cs: cs, person: p, wire: wire, era: era}
}

// asks counts the server's requests to ask the person on the wire: elicitation/create requests
// in the legacy era, input_required results in 2026-07-28.
func (c *askingClient) asks() int {
	n := 0
	for _, l := range c.wire.lines() {
		if c.era == "modern" {
			n += strings.Count(l, `"resultType":"input_required"`)
		} else {
			n += strings.Count(l, `"method":"elicitation/create"`)
		}
	}
	return n
}

// listed returns the listed tools by name.
func (c *askingClient) listed(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]*mcp.Tool{}
	for tool, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// checkOneTool checks that tool is listed as one tool: the commit's annotations, not
// read-only, an output without a token, and no _commit twin.
func (c *askingClient) checkOneTool(t *testing.T, tool string) {
	t.Helper()
	tools := c.listed(t)
	x := tools[tool]
	if x == nil {
		t.Fatalf("%s is not listed", tool)
	}
	if _, twin := tools[tool+"_commit"]; twin {
		t.Errorf("%s_commit is listed to a client that can ask the person", tool)
	}
	out, _ := json.Marshal(x.OutputSchema)
	if x.Annotations == nil || x.Annotations.ReadOnlyHint || x.Annotations.DestructiveHint == nil || !*x.Annotations.DestructiveHint ||
		strings.Contains(string(out), `"token"`) || strings.Contains(x.Description, "_commit") {
		t.Errorf("%s as one tool: annotations %+v, description %q, output %.200s", tool, x.Annotations, x.Description, out)
	}
	spec := specOf(tool + "_commit")
	if spec == nil || x.Annotations != nil && (x.Annotations.OpenWorldHint == nil || *x.Annotations.OpenWorldHint != spec.Annotations.OpenWorld) {
		t.Errorf("%s does not carry %s_commit's annotations: %+v", tool, tool, x.Annotations)
	}
}

// checkTwoTools checks that tool and its _commit twin are listed as before.
func (c *askingClient) checkTwoTools(t *testing.T, tool string) {
	t.Helper()
	tools := c.listed(t)
	if tools[tool] == nil || tools[tool+"_commit"] == nil || tools[tool].Annotations == nil || !tools[tool].Annotations.ReadOnlyHint {
		t.Fatalf("%s and %s_commit are not listed as a prepare and its commit", tool, tool)
	}
}

// callOnce calls tool once with the person answering answer, and checks that the person was
// asked exactly once, on the wire and in the client.
func (c *askingClient) callOnce(t *testing.T, answer, tool string, args map[string]any) (map[string]any, string, bool) {
	t.Helper()
	c.person.set(answer)
	before, asked := c.asks(), len(c.person.messages())
	sc, text, isErr := call(t, c.cs, tool, args)
	if n := c.asks() - before; n != 1 {
		t.Errorf("%s (%s): the server asked the person %d times on the wire, want once", tool, answer, n)
	}
	if n := len(c.person.messages()) - asked; n != 1 {
		t.Errorf("%s (%s): the client asked the person %d times, want once", tool, answer, n)
	}
	return sc, text, isErr
}

// lastAsked is the person's last request.
func (c *askingClient) lastAsked() string {
	m := c.person.messages()
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

var oneCallRuns = []struct{ transport, era string }{
	{"stdio", "legacy"}, {"stdio", "modern"}, {"http", "legacy"}, {"http", "modern"},
}

// TestOneCallSend: mail_send is one call that asks once; declined, Mailpit gets nothing;
// accepted, it gets the message once and the answer is the commit's. The audit log has the
// call with its approval reference and how it ended.
func TestOneCallSend(t *testing.T) {
	mb := newMailbox(t, "terminal")
	for _, run := range oneCallRuns {
		t.Run(run.transport+"-"+run.era, func(t *testing.T) {
			c := connectAsking(t, mb.env, mb.cfg, run.transport, run.era, "read,mail:send", &person{})
			c.checkOneTool(t, generated.ToolMailSend)
			rcpt := smtptest.Addr("once-" + run.transport + "-" + run.era)
			args := map[string]any{"to": []any{rcpt}, "subject": "One call " + run.era, "body": "Only if you agree."}

			sc, text, isErr := c.callOnce(t, "decline", generated.ToolMailSend, args)
			if !isErr || !strings.Contains(text, "declined") || sc != nil {
				t.Fatalf("declined: %v %s", sc, text)
			}
			if q := c.lastAsked(); !strings.Contains(q, rcpt) || !strings.Contains(q, "One call "+run.era) || !strings.Contains(q, "Only if you agree.") {
				t.Fatalf("the person was asked %q", q)
			}
			time.Sleep(300 * time.Millisecond)
			if n := len(mb.smtp.Messages(t, rcpt)); n != 0 {
				t.Fatalf("a declined send reached Mailpit %d times", n)
			}

			sc, text, isErr = c.callOnce(t, "accept", generated.ToolMailSend, args)
			if isErr || sc["outcome"] != "sent" || sc["token"] != nil {
				t.Fatalf("accepted: %v %s", sc, text)
			}
			got := mb.smtp.WaitCount(t, rcpt, 1, 10*time.Second)
			if got[0].Subject != "One call "+run.era || sc["message_id"] != got[0].MessageID {
				t.Fatalf("sent %+v, answered %v", got[0], sc)
			}
			time.Sleep(300 * time.Millisecond)
			if n := len(mb.smtp.Messages(t, rcpt)); n != 1 {
				t.Fatalf("Mailpit got %d messages, want 1", n)
			}
		})
	}
	// Each call is one audit line with its approval reference; none was merely prepared.
	outcomes := map[string]int{}
	for _, e := range auditLines(t, mb.env) {
		if e["tool"] != generated.ToolMailSend && e["tool"] != generated.ToolMailSendCommit {
			continue
		}
		if e["tool"] == generated.ToolMailSendCommit || e["outcome"] == "prepared" {
			t.Errorf("a one-call send logged %v", e)
		}
		if ref, _ := e["approval"].(string); len(ref) != 10 {
			t.Errorf("an audit line without its approval reference: %v", e)
		}
		outcomes[fmt.Sprint(e["outcome"])]++
	}
	// Two runs ask in rounds (asked, then the answer), two by elicitation/create.
	if outcomes["declined"] != 4 || outcomes["done"] != 4 || outcomes["asked"] != 4 {
		t.Errorf("audit outcomes of mail_send: %v", outcomes)
	}
}

// TestOneCallWithoutElicitation: a client that declares no elicitation gets the pair as
// before, in both eras: mail_send prepares (a token, approval terminal) and sends nothing.
// In host mode a client that can ask gets the pair too, and its commit still asks it once.
func TestOneCallWithoutElicitation(t *testing.T) {
	mb := newMailbox(t, "terminal")
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			c := connectAsking(t, mb.env, mb.cfg, "stdio", era, "read,mail:send", nil)
			c.checkTwoTools(t, generated.ToolMailSend)
			rcpt := smtptest.Addr("prepared-" + era)
			prep, text, isErr := call(t, c.cs, generated.ToolMailSend, map[string]any{"to": []any{rcpt}, "subject": "Prepared", "body": "Not yet."})
			if isErr || prep["approval"] != "terminal" || len(fmt.Sprint(prep["token"])) != 43 || prep["commit"] != generated.ToolMailSendCommit {
				t.Fatalf("mail_send without elicitation: %v %s", prep, text)
			}
			time.Sleep(300 * time.Millisecond)
			if n := len(mb.smtp.Messages(t, rcpt)); n != 0 {
				t.Fatalf("a prepare sent %d messages", n)
			}
		})
	}
	host := newMailbox(t, "host")
	for _, era := range []string{"legacy", "modern"} {
		t.Run("host-"+era, func(t *testing.T) {
			c := connectAsking(t, host.env, host.cfg, "stdio", era, "read,mail:send", &person{answer: "accept"})
			c.checkTwoTools(t, generated.ToolMailSend)
			rcpt := smtptest.Addr("host-" + era)
			args := map[string]any{"to": []any{rcpt}, "subject": "Host mode", "body": "Two calls."}
			prep, text, isErr := call(t, c.cs, generated.ToolMailSend, args)
			if isErr || prep["approval"] != "ask" || len(c.person.messages()) != 0 {
				t.Fatalf("mail_send in host mode: %v %s", prep, text)
			}
			// An agent that holds a token commits it, and the person is asked once.
			if sc, text, isErr := c.callOnce(t, "accept", generated.ToolMailSendCommit, with(args, "token", prep["token"])); isErr || sc["outcome"] != "sent" {
				t.Fatalf("mail_send_commit from a client that can ask: %v %s", sc, text)
			}
			host.smtp.WaitCount(t, rcpt, 1, 10*time.Second)
		})
	}
}

// TestOneCallUnsubscribe: mail_unsubscribe is one call; declined, the list's server and
// Mailpit get nothing; accepted, exactly one one-click POST, or one message to the list's
// unsubscribe address.
func TestOneCallUnsubscribe(t *testing.T) {
	mb := newMailbox(t, "terminal")
	ls := newListServer(t)
	mailpitCert, err := os.ReadFile(filepath.Join(mb.smtp.Dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(roots, append(append(mailpitCert, '\n'), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ls.Certificate().Raw})...), 0o600); err != nil {
		t.Fatal(err)
	}
	mb.env = append(mb.env, "SSL_CERT_FILE="+roots)
	leaves := map[string]string{} // each run's list address to unsubscribe by mail
	for _, run := range []struct{ transport, era string }{{"stdio", "legacy"}, {"http", "modern"}} {
		tag := run.transport + "-" + run.era
		leaves[tag] = smtptest.Addr("leave-" + tag)
		leave := leaves[tag]
		mb.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: News <news@list.test>\r\nTo: %s\r\nSubject: Click %s\r\nMessage-ID: <click-%s@list.test>\r\nList-Id: <click.list.test>\r\nList-Unsubscribe: <%s/unsub/%s>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n\r\nNews.\r\n", mb.own, tag, tag, ls.URL, tag)), "")
		mb.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: News <news@list.test>\r\nTo: %s\r\nSubject: Mail %s\r\nMessage-ID: <mail-%s@list.test>\r\nList-Id: <mail.list.test>\r\nList-Unsubscribe: <mailto:%s?subject=leave%%20%s>\r\n\r\nNews.\r\n", mb.own, tag, tag, leave, tag)), "")
	}
	mb.sync(t)
	for _, run := range []struct{ transport, era string }{{"stdio", "legacy"}, {"http", "modern"}} {
		tag := run.transport + "-" + run.era
		leave := leaves[tag]
		t.Run(tag, func(t *testing.T) {
			c := connectAsking(t, mb.env, mb.cfg, run.transport, run.era, "read,mail:modify", &person{})
			c.checkOneTool(t, generated.ToolMailUnsubscribe)
			click := map[string]any{"id": messageID(t, c.cs, `subject:"Click `+tag+`"`)}
			byMail := map[string]any{"id": messageID(t, c.cs, `subject:"Mail `+tag+`"`)}
			for _, args := range []map[string]any{click, byMail} {
				if sc, text, isErr := c.callOnce(t, "decline", generated.ToolMailUnsubscribe, args); !isErr || !strings.Contains(text, "declined") {
					t.Fatalf("declined: %v %s", sc, text)
				}
			}
			time.Sleep(300 * time.Millisecond)
			if n, m := len(ls.requests("/unsub/"+tag)), len(mb.smtp.Messages(t, leave)); n != 0 || m != 0 {
				t.Fatalf("declined unsubscribes sent %d requests and %d messages", n, m)
			}
			sc, text, isErr := c.callOnce(t, "accept", generated.ToolMailUnsubscribe, click)
			if isErr || sc["outcome"] != "accepted" || sc["method"] != "one_click" {
				t.Fatalf("accepted one click: %v %s", sc, text)
			}
			if !strings.Contains(c.lastAsked(), "POST") {
				t.Errorf("the person was not shown the POST: %q", c.lastAsked())
			}
			if got := ls.requests("/unsub/" + tag); len(got) != 1 || got[0].method != http.MethodPost || got[0].body != "List-Unsubscribe=One-Click" {
				t.Fatalf("the list's server got %+v", got)
			}
			sc, text, isErr = c.callOnce(t, "accept", generated.ToolMailUnsubscribe, byMail)
			if isErr || sc["outcome"] != "sent" || sc["method"] != "mail" {
				t.Fatalf("accepted by mail: %v %s", sc, text)
			}
			if got := mb.smtp.WaitCount(t, leave, 1, 10*time.Second); got[0].Subject != "leave "+tag {
				t.Fatalf("sent %+v", got[0])
			}
			time.Sleep(300 * time.Millisecond)
			if n, m := len(ls.requests("/unsub/"+tag)), len(mb.smtp.Messages(t, leave)); n != 1 || m != 1 {
				t.Fatalf("after one accept each: %d requests, %d messages (want 1 and 1)", n, m)
			}
		})
	}
}

// TestOneCallRulesPush: rules_push is one call; declined, the ManageSieve server (seen by the
// test's own login) holds no script; accepted, the script the person was shown is active and
// the server files mail with it.
func TestOneCallRulesPush(t *testing.T) {
	for _, run := range []struct{ transport, era string }{{"stdio", "modern"}, {"http", "legacy"}} {
		t.Run(run.transport+"-"+run.era, func(t *testing.T) {
			b, srv := sieveBox(t, "terminal")
			ms := manageSieve(t, srv, b)
			c := connectAsking(t, b.env, b.cfg, run.transport, run.era, "read,rules:propose,rules:write", &person{})
			c.checkOneTool(t, generated.ToolRulesPush)
			args := map[string]any{"id": "work"}
			if sc, text, isErr := c.callOnce(t, "decline", generated.ToolRulesPush, args); !isErr || !strings.Contains(text, "declined") {
				t.Fatalf("declined: %v %s", sc, text)
			}
			if !strings.Contains(c.lastAsked(), sieve.ScriptName) || !strings.Contains(c.lastAsked(), "Receipts") {
				t.Fatalf("the person was asked %q", c.lastAsked())
			}
			if names, _ := serverScripts(t, ms); len(names) != 0 {
				t.Fatalf("a declined push stored %v", names)
			}
			sc, text, isErr := c.callOnce(t, "accept", generated.ToolRulesPush, args)
			if isErr || sc["outcome"] != "activated" {
				t.Fatalf("accepted: %v %s", sc, text)
			}
			if _, active := serverScripts(t, ms); active != sieve.ScriptName {
				t.Fatalf("active script %q after the push", active)
			}
			got, err := ms.GetScript(sieve.ScriptName)
			sum := sha256.Sum256([]byte(got))
			if err != nil || sc["digest"] != "sha256:"+hex.EncodeToString(sum[:]) {
				t.Fatalf("the server holds another script than the push answered (%v)", err)
			}
			// The person saw the script's lines.
			for _, l := range strings.Split(strings.TrimSpace(got), "\n")[:3] {
				if !strings.Contains(c.lastAsked(), strings.TrimSpace(l)) {
					t.Errorf("the person was not shown the line %q", l)
				}
			}
			delivered(t, b, srv, "onecall-"+run.transport)
		})
	}
}

// TestOneCallTypeScriptClient: the TypeScript SDK's client (plan-client.mjs), declaring
// elicitation in the legacy era, is offered mail_send as one tool and validates its answer
// against the listed output schema; it is asked once per call, and a decline sends nothing.
func TestOneCallTypeScriptClient(t *testing.T) {
	cl := needClients(t)
	script := cl.planScript(t)
	mb := newMailbox(t, "terminal")
	rcpt := smtptest.Addr("ts-once")
	plan := []planStep{{Name: generated.ToolMailSend, Arguments: map[string]any{"to": []any{rcpt}, "subject": "From TypeScript", "body": "One call."}}}
	b, _ := json.Marshal(plan)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(answer string) (planOut, []string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, cl.node20, script, "--elicit", answer, planFile, "--", binary, "mcp", "--config", mb.cfg, "--scopes", "read,mail:send")
		cmd.Env = mb.env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("plan-client --elicit %s: %v\n%s", answer, err, out)
		}
		var res struct {
			planOut
			Elicitations []string `json:"elicitations"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return res.planOut, res.Elicitations
	}
	for _, answer := range []string{"decline", "accept"} {
		out, asked := run(answer)
		for _, tool := range out.Tools {
			if tool.Name == generated.ToolMailSendCommit {
				t.Errorf("mail_send_commit is listed to a client that can ask")
			}
		}
		if len(out.Calls) != 1 || out.Calls[0].Error != "" || out.Calls[0].Result == nil {
			t.Fatalf("%s: the call failed or its answer broke the listed schema: %+v", answer, out.Calls)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], rcpt) {
			t.Fatalf("%s: the person was asked %q", answer, asked)
		}
		r := out.Calls[0].Result
		want := 0
		if answer == "accept" {
			want = 1
			if r.IsError || fmt.Sprint(r.StructuredContent["outcome"]) != "sent" {
				t.Fatalf("accepted: %+v", r)
			}
			mb.smtp.WaitCount(t, rcpt, 1, 10*time.Second)
		} else if !r.IsError {
			t.Fatalf("declined: %+v", r)
		}
		time.Sleep(300 * time.Millisecond)
		if n := len(mb.smtp.Messages(t, rcpt)); n != want {
			t.Fatalf("%s: Mailpit got %d messages, want %d", answer, n, want)
		}
	}
}

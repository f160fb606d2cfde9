package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/managesieve"
	"github.com/postern-mcp/postern/internal/rules"
	"github.com/postern-mcp/postern/internal/sieve"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// The rules on the server (issue 15, must-show 5), through the real binary:
// postern rules push and the rules_push pair store the enabled rules as a
// Sieve script on Dovecot's ManageSieve server, and mail delivered through
// LMTP afterwards, with no postern running, is filed by the server.

// sieveBox is an action box whose account names the test Dovecot's
// ManageSieve server, with the newsletter rule approved by the person; a
// rules_push commit is approved as mode says (host: by the host's own prompt;
// terminal: held for postern approve, or asked by elicitation).
func sieveBox(t *testing.T, mode string) (*actionBox, *imaptest.Server) {
	t.Helper()
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	b := newActionBox(t, srv, fmt.Sprintf("sieve = %q\n\n[approval]\nmode = %q\n", srv.ManageSieveAddr, mode))
	agent := b.connect(t, "read,rules:propose")
	local := map[string]any{"name": "Attachments flagged", "match": "has:attachment", "actions": []any{map[string]any{"do": "flag"}}}
	for _, r := range []map[string]any{newsRule, local} {
		if _, text, isErr := call(t, agent, "rules_propose", map[string]any{"rule": r}); isErr {
			t.Fatalf("rules_propose: %s", text)
		}
		if out, errOut, code := runCLI(t, b.env, "rules", "approve", r["name"].(string), "--config", b.cfg); code != 0 {
			t.Fatalf("postern rules approve: %d %s%s", code, out, errOut)
		}
	}
	return b, srv
}

// manageSieve is a ManageSieve login of b's user that is not postern's: the
// test's own client, over STARTTLS.
func manageSieve(t *testing.T, srv *imaptest.Server, b *actionBox) *managesieve.Client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", srv.ManageSieveAddr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := managesieve.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartTLS(&tls.Config{RootCAs: srv.CertPool(t), ServerName: "127.0.0.1"}); err != nil {
		t.Fatalf("STARTTLS: %v", err)
	}
	if err := c.AuthenticatePlain(b.user.Name, b.user.Password); err != nil {
		t.Fatalf("AUTHENTICATE: %v", err)
	}
	t.Cleanup(func() { c.Logout() })
	return c
}

// serverScripts is LISTSCRIPTS: each script's name, and the active one.
func serverScripts(t *testing.T, c *managesieve.Client) (map[string]bool, string) {
	t.Helper()
	list, err := c.ListScripts()
	if err != nil {
		t.Fatalf("LISTSCRIPTS: %v", err)
	}
	names, active := map[string]bool{}, ""
	for _, s := range list {
		names[s.Name] = true
		if s.Active {
			active = s.Name
		}
	}
	return names, active
}

// delivered checks, through a separate IMAP login, where the server filed
// the newsletter and the note delivered after the push.
func delivered(t *testing.T, b *actionBox, srv *imaptest.Server, tag string) {
	t.Helper()
	srv.Deliver(t, b.user, []byte("From: News <news@example.test>\r\nTo: me@example.test\r\nSubject: Issue "+tag+"\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\nMessage-ID: <issue-"+tag+"@example.test>\r\n\r\nNews.\r\n"))
	srv.Deliver(t, b.user, []byte("From: Carol <carol@example.test>\r\nTo: me@example.test\r\nSubject: Hi "+tag+"\r\nDate: Tue, 01 Dec 2026 11:00:00 +0000\r\nMessage-ID: <hi-"+tag+"@example.test>\r\n\r\nHi.\r\n"))
	state := b.serverState(t)
	if row := rowOf(state["Receipts"], "issue-"+tag+"@example.test"); !strings.Contains(row, string(imap.FlagSeen)) {
		t.Errorf("the server did not file the newsletter into Receipts, read: %v", state)
	}
	if row := rowOf(state["INBOX"], "hi-"+tag+"@example.test"); row == "" || strings.Contains(row, string(imap.FlagSeen)) {
		t.Errorf("the note is not in INBOX, unread: %v", state)
	}
}

// TestRulesPushCLI: postern rules push --dry-run shows the script and the rule
// that stays local and stores nothing; postern rules push activates it; mail
// delivered afterwards with no postern running is filed by the server. With
// the person's own script active, a push keeps it byte for byte and active,
// and prints the line to include postern's.
func TestRulesPushCLI(t *testing.T) {
	b, srv := sieveBox(t, "host")
	ms := manageSieve(t, srv, b)

	out, errOut, code := runCLI(t, b.env, "rules", "push", "work", "--dry-run", "--config", b.cfg)
	if code != 0 || !strings.Contains(out, `header :contains "from" "news@example.test"`) || !strings.Contains(out, `set "folder" "Receipts";`) ||
		!strings.Contains(out, `"Attachments flagged": Sieve cannot tell whether a message has an attachment`) || !strings.Contains(out, "Dry run, nothing was stored") {
		t.Fatalf("postern rules push --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if names, _ := serverScripts(t, ms); len(names) != 0 {
		t.Fatalf("a dry run stored %v", names)
	}

	out, errOut, code = runCLI(t, b.env, "rules", "push", "work", "--config", b.cfg)
	if code != 0 || !strings.Contains(out, "Pushed (activated)") {
		t.Fatalf("postern rules push: exit %d\n%s%s", code, out, errOut)
	}
	if names, active := serverScripts(t, ms); active != sieve.ScriptName || len(names) != 1 {
		t.Fatalf("after the push the server lists %v, active %q", names, active)
	}
	pushed, err := ms.GetScript(sieve.ScriptName)
	if err != nil || !strings.HasPrefix(pushed, sieve.Marker) || !strings.Contains(pushed, "# Stays local: Attachments flagged: ") {
		t.Fatalf("GETSCRIPT postern: %v\n%s", err, pushed)
	}
	delivered(t, b, srv, "one") // postern rules push has exited: nothing of postern's runs

	// The person's own script, active: kept as it is, and postern's stored beside it.
	theirs := "# Mine.\r\nrequire [\"fileinto\"];\r\nif header :contains \"subject\" \"party\" { fileinto \"INBOX\"; }\r\n"
	if err := ms.PutScript("mine", theirs); err != nil {
		t.Fatal(err)
	}
	if err := ms.SetActive("mine"); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, b.env, "rules", "push", "work", "--config", b.cfg)
	if code != 0 || !strings.Contains(out, "Pushed (needs_include)") || !strings.Contains(out, "  "+sieve.IncludeLine) {
		t.Fatalf("postern rules push beside their script: exit %d\n%s%s", code, out, errOut)
	}
	if names, active := serverScripts(t, ms); active != "mine" || !names[sieve.ScriptName] || len(names) != 2 {
		t.Fatalf("after the push the server lists %v, active %q; want theirs still active", names, active)
	}
	if got, err := ms.GetScript("mine"); err != nil || got != theirs {
		t.Fatalf("their script is now %q (%v)", got, err)
	}
}

// TestRulesPushNoManageSieve: an account whose server offers no ManageSieve
// is told so, and that the rules run at each sync; nothing fails silently.
func TestRulesPushNoManageSieve(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	b := newActionBox(t, imaptest.Start(t), fmt.Sprintf("sieve = %q\n", closed))
	out, errOut, code := runCLI(t, b.env, "rules", "push", "work", "--config", b.cfg)
	if code != 1 || !strings.Contains(errOut, "cannot reach the ManageSieve server") || !strings.Contains(errOut, "run at each postern sync instead") {
		t.Fatalf("postern rules push without ManageSieve: exit %d\n%s%s", code, out, errOut)
	}
	cs := b.connect(t, "read,rules:write")
	if _, text, isErr := call(t, cs, generated.ToolRulesPush, map[string]any{"id": "work"}); !isErr || !strings.Contains(text, "run at each postern sync instead") {
		t.Fatalf("rules_push without ManageSieve: %s", text)
	}
}

// TestRulesPushPair: rules_push previews the whole script, its digest and what
// becomes of the active script, changing nothing (the host approves the commit
// here; TestRulesPushWaitsForThePerson holds it for the person); a rule changed between the
// prepare and the commit refuses the token; the commit stores exactly the
// previewed script. Both answers validate against their output schemas.
func TestRulesPushPair(t *testing.T) {
	b, srv := sieveBox(t, "host")
	ms := manageSieve(t, srv, b)
	cs := b.connect(t, "read,rules:propose,rules:write")
	schemas := outputSchemas(t, cs)
	args := map[string]any{"id": "work"}

	prep, text, isErr := call(t, cs, generated.ToolRulesPush, args)
	if isErr {
		t.Fatalf("rules_push: %s", text)
	}
	if err := compile(t, schemas[generated.ToolRulesPush]).Validate(anyJSON(prep)); err != nil {
		t.Errorf("rules_push: %v", err)
	}
	script := previewScript(t, prep)
	if !strings.HasPrefix(script, sieve.Marker) || !strings.Contains(script, `set "folder" "Receipts";`) || !strings.Contains(script, "# Stays local: Attachments flagged: ") ||
		!strings.Contains(prep["action"].(string), "made active") || !strings.Contains(prep["action"].(string), "1 more stay local") {
		t.Fatalf("the preview does not show the script, the local rule and the activation: %s", text)
	}
	if names, _ := serverScripts(t, ms); len(names) != 0 {
		t.Fatalf("the prepare stored %v", names)
	}

	// A rule enabled meanwhile changes the script: the token no longer fits.
	extra := map[string]any{"name": "Invoices flagged", "match": "subject:*invoice*", "actions": []any{map[string]any{"do": "flag"}}}
	if _, text, isErr := call(t, cs, generated.ToolRulesPropose, map[string]any{"rule": extra}); isErr {
		t.Fatal(text)
	}
	if _, text, isErr := call(t, cs, generated.ToolRulesUpdate, map[string]any{"id": "Invoices flagged", "state": "enabled"}); isErr {
		t.Fatal(text)
	}
	if _, text, isErr := call(t, cs, generated.ToolRulesPushCommit, with(args, "token", prep["token"])); !isErr || !refusalRE.MatchString(text) {
		t.Fatalf("a commit after a rule changed answered %q", text)
	}
	if names, _ := serverScripts(t, ms); len(names) != 0 {
		t.Fatalf("a refused commit stored %v", names)
	}

	prep, text, isErr = call(t, cs, generated.ToolRulesPush, args)
	if isErr {
		t.Fatalf("rules_push: %s", text)
	}
	script = previewScript(t, prep)
	res, text, isErr := call(t, cs, generated.ToolRulesPushCommit, with(args, "token", prep["token"]))
	if isErr {
		t.Fatalf("rules_push_commit: %s", text)
	}
	if err := compile(t, schemas[generated.ToolRulesPushCommit]).Validate(anyJSON(res)); err != nil {
		t.Errorf("rules_push_commit: %v", err)
	}
	if res["outcome"] != "activated" || res["digest"] != prep["body_digest"] || len(res["local"].([]any)) != 1 {
		t.Fatalf("rules_push_commit: %s", text)
	}
	if _, active := serverScripts(t, ms); active != sieve.ScriptName {
		t.Fatalf("active script %q after the commit", active)
	}
	got, err := ms.GetScript(sieve.ScriptName)
	if err != nil || !sameAsPreview(got, prep) {
		t.Fatalf("the server holds another script than the preview named (%v):\n%s\n---\n%s", err, got, script)
	}
	for _, l := range strings.Split(got, "\n") {
		if !strings.Contains(script, strings.TrimSpace(l)+"\n") {
			t.Errorf("the preview lacks the line %q of the stored script", l)
		}
	}
	delivered(t, b, srv, "pair")
}

// TestRulesPushScopes: a rule on body words is pushed only by a connection
// that may read bodies, since the preview shows the script whole.
func TestRulesPushScopes(t *testing.T) {
	srv := imaptest.Start(t)
	imaptest.RequireSieve(t, srv)
	b := newActionBox(t, srv, fmt.Sprintf("sieve = %q\n", srv.ManageSieveAddr))
	rule := map[string]any{"name": "Secret word", "match": "body:zanzibar", "actions": []any{map[string]any{"do": "flag"}}}
	writer := b.connect(t, "read,read:bodies,rules:propose,rules:write")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{generated.ToolRulesPropose, map[string]any{"rule": rule}}, {generated.ToolRulesUpdate, map[string]any{"id": "Secret word", "state": "enabled"}}} {
		if _, text, isErr := call(t, writer, c.tool, c.args); isErr {
			t.Fatalf("%s: %s", c.tool, text)
		}
	}
	blind := b.connect(t, "read,rules:write")
	if _, text, isErr := call(t, blind, generated.ToolRulesPush, map[string]any{"id": "work"}); !isErr || !strings.Contains(text, generated.ScopeReadBodies) || strings.Contains(text, "zanzibar") {
		t.Fatalf("rules_push without read:bodies: %s", text)
	}
	if prep, text, isErr := call(t, writer, generated.ToolRulesPush, map[string]any{"id": "work"}); isErr || !strings.Contains(previewScript(t, prep), `body :text :contains "zanzibar"`) {
		t.Fatalf("rules_push with read:bodies: %s", text)
	}
}

// outputSchemas is each tool's outputSchema, as tools/list announces it.
func outputSchemas(t *testing.T, cs *mcp.ClientSession) map[string][]byte {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, tl := range list.Tools {
		s, _ := json.Marshal(tl.OutputSchema)
		out[tl.Name] = s
	}
	return out
}

// previewScript is the script a rules_push preview shows, one line after
// another (each line cleaned as every answer's lines are: its indentation
// goes); its exact bytes are those of the preview's digest.
func previewScript(t *testing.T, prep map[string]any) string {
	t.Helper()
	lines, _ := prep["body_lines"].([]any)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.(string) + "\n")
	}
	return b.String()
}

// sameAsPreview reports whether script is the one prep's digest and length name.
func sameAsPreview(script string, prep map[string]any) bool {
	sum := sha256.Sum256([]byte(script))
	return prep["body_digest"] == "sha256:"+hex.EncodeToString(sum[:]) && prep["body_length"] == float64(len(script))
}

// pushable readies mb's account for rules_push in TestPairAnswersValidate:
// the test Dovecot's ManageSieve server in its configuration and one enabled
// rule, and returns the pair's arguments; nil, after saying why, when the
// Dovecot has no ManageSieve (TestRulesPushPair then skips, or fails on CI).
func pushable(t *testing.T, mb *mailbox) map[string]any {
	t.Helper()
	srv := imaptest.Start(t)
	if srv.ManageSieveAddr == "" {
		t.Logf("%s is not checked here: the test Dovecot has no ManageSieve (TestRulesPushPair checks it where Pigeonhole is installed)", generated.ToolRulesPush)
		return nil
	}
	b, err := os.ReadFile(mb.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(b), "kind = \"imap\"\n", fmt.Sprintf("kind = \"imap\"\nsieve = %q\n", srv.ManageSieveAddr), 1)
	if err := os.WriteFile(mb.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the running server re-reads its configuration at most every 200 ms
	r := generated.Rule{Name: "Lunch flagged", State: rules.Enabled, Match: "subject:*lunch*", Actions: []generated.RuleAction{{Do: "flag"}}}
	if err := rules.Save(rules.Path(mb.cfg), []generated.Rule{r}); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"id": "work"}
}

// TestRulesPushWaitsForThePerson is must-show 2 for rules_push, whose script the server then
// runs where postern's log cannot see it: without elicitation the commit is held, and the
// script is not on the ManageSieve server (seen by the test's own login) until the person
// approves it with postern approve in a terminal; a declined elicitation stores nothing.
func TestRulesPushWaitsForThePerson(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script (util-linux) is needed to give postern approve a terminal")
	}
	b, srv := sieveBox(t, "terminal")
	ms := manageSieve(t, srv, b)
	cs := b.connect(t, "read,rules:propose,rules:write")
	args := map[string]any{"id": "work"}
	approve := func(args ...string) (string, error) {
		cmd := exec.Command(binary, append([]string{"approve"}, args...)...)
		cmd.Env = b.env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	prep, text, isErr := call(t, cs, generated.ToolRulesPush, args)
	if isErr || prep["approval"] != "terminal" {
		t.Fatalf("rules_push: %s", text)
	}
	done := make(chan string, 1)
	go func() {
		_, text, isErr := call(t, cs, generated.ToolRulesPushCommit, with(args, "token", prep["token"]))
		if isErr {
			text = "error: " + text
		}
		done <- text
	}()
	var code string
	for deadline := time.Now().Add(20 * time.Second); code == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out, err := approve("--json")
		var rows []map[string]any
		if err == nil && json.Unmarshal([]byte(out), &rows) == nil && len(rows) == 1 {
			code = rows[0]["code"].(string)
		}
	}
	if code == "" {
		t.Fatal("no held push appeared in postern approve")
	}
	// Nobody approves: the commit waits and the server holds no script.
	time.Sleep(2 * time.Second)
	select {
	case text := <-done:
		t.Fatalf("the commit returned before the person decided: %s", text)
	default:
	}
	if names, _ := serverScripts(t, ms); len(names) != 0 {
		t.Fatalf("the server holds %v before the person approved", names)
	}
	// An agent's shell has no terminal: postern approve refuses there.
	if out, err := approve(code); err == nil || !strings.Contains(out, "terminal") {
		t.Fatalf("postern approve from a pipe: %v %s", err, out)
	}
	if names, _ := serverScripts(t, ms); len(names) != 0 {
		t.Fatalf("the server holds %v after an approval from a pipe", names)
	}
	cmd := exec.Command("script", "-qec", binary+" approve "+code, "/dev/null")
	cmd.Env = b.env
	cmd.Stdin = strings.NewReader("y\n")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Approved "+code) {
		t.Fatalf("postern approve in a terminal: %v\n%s", err, out)
	}
	select {
	case text := <-done:
		if strings.HasPrefix(text, "error: ") {
			t.Fatalf("the approved commit answered %s", text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the commit did not return after the approval")
	}
	if _, active := serverScripts(t, ms); active != sieve.ScriptName {
		t.Fatalf("active script %q after the approval", active)
	}
	if got, err := ms.GetScript(sieve.ScriptName); err != nil || !sameAsPreview(got, prep) {
		t.Fatalf("the server holds another script than the one approved (%v):\n%s", err, got)
	}

	// With elicitation, the person declines: nothing is stored, and the token is spent. (In
	// host mode such a client keeps the pair; elsewhere rules_push is one call: TestOneCallRulesPush.)
	b2, srv2 := sieveBox(t, "host")
	ms2 := manageSieve(t, srv2, b2)
	var asked []string
	asker := (&mailbox{env: b2.env, cfg: b2.cfg}).connect(t, "read,rules:propose,rules:write", func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	})
	prep, text, isErr = call(t, asker, generated.ToolRulesPush, args)
	if isErr || prep["approval"] != "ask" {
		t.Fatalf("rules_push with elicitation: %s", text)
	}
	if _, text, isErr := call(t, asker, generated.ToolRulesPushCommit, with(args, "token", prep["token"])); !isErr || !strings.Contains(text, "declined") {
		t.Fatalf("a declined push answered %v %s", isErr, text)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], sieve.ScriptName) {
		t.Fatalf("the person was asked %q", asked)
	}
	if names, _ := serverScripts(t, ms2); len(names) != 0 {
		t.Fatalf("a declined push stored %v", names)
	}
	if _, text, isErr := call(t, asker, generated.ToolRulesPushCommit, with(args, "token", prep["token"])); !isErr || !refusalRE.MatchString(text) {
		t.Fatalf("a declined token was taken again: %s", text)
	}
	if names, _ := serverScripts(t, ms2); len(names) != 0 {
		t.Fatalf("a spent token stored %v", names)
	}
}

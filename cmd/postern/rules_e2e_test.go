package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

var newsRule = map[string]any{
	"name":    "News to Receipts",
	"match":   "from:*news@example.test*",
	"actions": []any{map[string]any{"do": "move", "folder": "Receipts"}, map[string]any{"do": "mark_read"}},
}

// TestRulesProposeApproveSync (must-show 1): an agent proposes a rule; it is
// listed pending and tested over the store; the agent cannot approve it with
// rules:propose; the person approves it with postern rules approve; the next
// sync applies it to new mail only (seen by a second IMAP login); the action
// log has it and mail_undo puts the message back.
func TestRulesProposeApproveSync(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	agent := b.connect(t, "read,rules:propose")
	sc, text, isErr := call(t, agent, "rules_propose", map[string]any{"rule": newsRule})
	if isErr || sc["rule"].(map[string]any)["state"] != "pending" || sc["rule"].(map[string]any)["proposed_by"] != "send-e2e" {
		t.Fatalf("rules_propose: %s", text)
	}
	sc, text, _ = call(t, agent, "rules_list", map[string]any{})
	if rs := sc["rules"].([]any); len(rs) != 1 || rs[0].(map[string]any)["waits_for"] == nil {
		t.Fatalf("rules_list: %s", text)
	}
	sc, text, isErr = call(t, agent, "rules_test", map[string]any{"rule": newsRule})
	if isErr || sc["matched"] != float64(3) || len(sc["messages"].([]any)) != 3 {
		t.Fatalf("rules_test: %s", text)
	}
	if _, text, isErr := call(t, agent, "rules_update", map[string]any{"id": "News to Receipts", "state": "enabled"}); !isErr || !strings.Contains(text, "rules:write") {
		t.Fatalf("rules_update with rules:propose only: %s", text)
	}
	// Nothing runs before the approval.
	b.user.AddMessage(t, "INBOX", []byte("From: News <news@example.test>\r\nSubject: Before approval\r\nDate: Sat, 28 Nov 2026 10:00:00 +0000\r\nMessage-ID: <early@example.test>\r\n\r\nEarly.\r\n"), "")
	b.sync(t)
	if !has(b.serverState(t)["INBOX"], "early@example.test") {
		t.Fatal("a pending rule acted")
	}
	out, errOut, code := runCLI(t, b.env, "rules", "list", "--config", b.cfg)
	if code != 0 || !strings.Contains(out, `"News to Receipts"  pending, proposed by send-e2e`) {
		t.Fatalf("postern rules list: %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code = runCLI(t, b.env, "rules", "test", "News to Receipts", "--json", "--config", b.cfg); code != 0 || !strings.Contains(out, `"matched":4`) {
		t.Fatalf("postern rules test: %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code = runCLI(t, b.env, "rules", "approve", "News to Receipts", "--config", b.cfg); code != 0 {
		t.Fatalf("postern rules approve: %d %s%s", code, out, errOut)
	}
	// The next sync applies it to what arrived since, not to the mail already there.
	b.user.AddMessage(t, "INBOX", []byte("From: News <news@example.test>\r\nSubject: Fresh issue\r\nDate: Sun, 29 Nov 2026 10:00:00 +0000\r\nMessage-ID: <fresh@example.test>\r\n\r\nFresh.\r\n"), "")
	out, errOut, code = runCLI(t, b.env, "sync", "--config", b.cfg)
	if code != 0 || !strings.Contains(out, "rules changed 1 of 1 new messages") {
		t.Fatalf("postern sync: %d\n%s%s", code, out, errOut)
	}
	state := b.serverState(t)
	if row := rowOf(state["Receipts"], "fresh@example.test"); !strings.Contains(row, `\Seen`) {
		t.Fatalf("the new newsletter is not read in Receipts: %v", state)
	}
	if !has(state["INBOX"], "news1@example.test") || !has(state["INBOX"], "early@example.test") {
		t.Fatalf("the rule acted on mail that was there before it: %v", state)
	}
	person := b.connect(t, "read,mail:modify")
	sc, text, _ = call(t, person, "mail_actions", map[string]any{})
	act := sc["actions"].([]any)[0].(map[string]any)
	if act["client"] != "postern rules" || !strings.Contains(act["action"].(string), "News to Receipts") || act["messages"] != float64(1) {
		t.Fatalf("mail_actions: %s", text)
	}
	if _, text, isErr := call(t, person, "mail_undo", map[string]any{"id": act["action_id"]}); isErr {
		t.Fatalf("mail_undo: %s", text)
	}
	if row := rowOf(b.serverState(t)["INBOX"], "fresh@example.test"); row == "" || strings.Contains(row, `\Seen`) {
		t.Fatalf("undo did not put the newsletter back, unread: %q", row)
	}
	out, _, _ = runCLI(t, b.env, "rules", "show", "News to Receipts", "--config", b.cfg)
	if !strings.Contains(out, "last acted: ") {
		t.Fatalf("postern rules show: %s", out)
	}
}

// TestRulesScopes (must-show 2): a rule on headers needs read:headers, one on
// body words read:bodies, to be tested, proposed or approved; a connection
// without them never sees those words, even in a rule another client wrote.
func TestRulesScopes(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	headerRule := map[string]any{"name": "By list id", "match": "header:Message-ID:news1", "actions": []any{map[string]any{"do": "archive"}}}
	bodyRule := map[string]any{"name": "By body", "match": "body:Issue", "actions": []any{map[string]any{"do": "archive"}}}
	for _, c := range []struct {
		rule  map[string]any
		scope string
	}{{headerRule, "read:headers"}, {bodyRule, "read:bodies"}} {
		plain := b.connect(t, "read,rules:propose,rules:write")
		if _, text, isErr := call(t, plain, "rules_propose", map[string]any{"rule": c.rule}); !isErr || !strings.Contains(text, c.scope) {
			t.Errorf("rules_propose of a rule needing %s, without it: %s", c.scope, text)
		}
		if sc, text, isErr := call(t, plain, "rules_test", map[string]any{"rule": c.rule}); isErr || sc["ok"] != false || sc["matched"] != float64(0) || !strings.Contains(text, c.scope) {
			t.Errorf("rules_test of a rule needing %s, without it: %s", c.scope, text)
		}
		full := b.connect(t, "read,read:headers,read:bodies,rules:propose")
		if sc, text, isErr := call(t, full, "rules_test", map[string]any{"rule": c.rule}); isErr || sc["matched"].(float64) < 1 {
			t.Errorf("rules_test with %s: %s", c.scope, text)
		}
		if _, text, isErr := call(t, full, "rules_propose", map[string]any{"rule": c.rule}); isErr {
			t.Fatalf("rules_propose with %s: %s", c.scope, text)
		}
		if _, text, isErr := call(t, plain, "rules_update", map[string]any{"id": c.rule["name"], "state": "enabled"}); !isErr || !strings.Contains(text, c.scope) {
			t.Errorf("rules_update (approve) of a rule needing %s, without it: %s", c.scope, text)
		}
	}
	// The same operators in mail_search and actions by query follow the same scopes.
	reader := b.connect(t, "read,mail:modify")
	for q, scope := range map[string]string{"header:Message-ID:news1": "read:headers", "list:example": "read:headers", "body:Issue": "read:bodies"} {
		if _, text, isErr := call(t, reader, "mail_search", map[string]any{"query": q}); !isErr || !strings.Contains(text, scope) || strings.Contains(text, "news1") {
			t.Errorf("mail_search %q without %s: %s", q, scope, text)
		}
		if _, text, isErr := call(t, reader, "mail_mark", map[string]any{"query": q, "how": "flagged", "dry_run": true}); !isErr || !strings.Contains(text, scope) {
			t.Errorf("mail_mark by %q without %s: %s", q, scope, text)
		}
	}
	full := b.connect(t, "read,read:headers,read:bodies")
	if sc, text, isErr := call(t, full, "mail_search", map[string]any{"query": "header:Message-ID:news1 -body:zanzibar"}); isErr || len(sc["messages"].([]any)) != 1 {
		t.Errorf("mail_search by header with read:headers: %s", text)
	}
	// What the rules' words say never reaches a connection that may not see them.
	plain := b.connect(t, "read,rules:propose")
	_, text, _ := call(t, plain, "rules_list", map[string]any{})
	for _, w := range []string{"news1", "Issue"} {
		if strings.Contains(text, w) {
			t.Errorf("rules_list without the scopes shows %q: %s", w, text)
		}
	}
}

// TestRulesForwardOnlyFromTerminal (must-show 3): a forwarding rule approved
// through the tool stays pending; postern rules approve from a pipe is
// refused; at a terminal with y it is enabled and the next sync forwards new
// mail once; a recipient outside [send] allow is refused; an agent's edit puts
// it back to pending.
func TestRulesForwardOnlyFromTerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script (util-linux) is needed to give postern rules approve a terminal")
	}
	mb := newMailbox(t, "host")
	inside, outside := smtptest.Addr("assistant"), smtptest.Addr("stranger")
	cfg, _ := os.ReadFile(mb.cfg)
	os.WriteFile(mb.cfg, append(cfg, []byte("\n[send]\nallow = [\""+inside+"\"]\n")...), 0o600)
	agent := mb.connect(t, "read,rules:propose,rules:write", nil)
	rule := func(to string) map[string]any {
		return map[string]any{"name": "Forward lunch", "match": "subject:lunch", "actions": []any{map[string]any{"do": "forward", "to": to}}}
	}
	if _, text, isErr := call(t, agent, "rules_propose", map[string]any{"rule": rule(outside)}); !isErr || !strings.Contains(text, "[send] allow") {
		t.Fatalf("a forward outside [send] allow: %s", text)
	}
	if _, text, isErr := call(t, agent, "rules_propose", map[string]any{"rule": rule(inside)}); isErr {
		t.Fatalf("rules_propose: %s", text)
	}
	sc, text, isErr := call(t, agent, "rules_update", map[string]any{"id": "Forward lunch", "state": "enabled"})
	if isErr || sc["rule"].(map[string]any)["state"] != "pending" || !strings.Contains(fmt.Sprint(sc["waits_for"]), "terminal") {
		t.Fatalf("rules_update (approve) of a forward: %s", text)
	}
	if _, text, isErr := call(t, agent, "rules_update", map[string]any{"id": "Forward lunch", "state": "disabled"}); !isErr {
		t.Fatalf("rules_update (disable) of a pending forward: %s", text)
	}
	if out, errOut, code := runCLI(t, mb.env, "rules", "approve", "Forward lunch", "--config", mb.cfg); code != 1 || !strings.Contains(errOut, "terminal") {
		t.Fatalf("postern rules approve from a pipe: %d %s%s", code, out, errOut)
	}
	approve := func(answer string) string {
		cmd := exec.Command("script", "-qec", binary+" rules approve 'Forward lunch' --config "+mb.cfg, "/dev/null")
		cmd.Env = mb.env
		cmd.Stdin = strings.NewReader(answer)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := approve("n\n"); !strings.Contains(out, "Left \"Forward lunch\" pending") {
		t.Fatalf("answering n: %s", out)
	}
	if out := approve("y\n"); !strings.Contains(out, "is enabled") || !strings.Contains(out, inside) {
		t.Fatalf("postern rules approve at a terminal: %s", out)
	}
	mb.user.AddMessage(t, "INBOX", []byte("From: Carol <"+mb.carol+">\r\nTo: "+mb.own+"\r\nSubject: Lunch again?\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\nMessage-ID: <lunch2@example.test>\r\n\r\nSame place?\r\n"), "")
	mb.sync(t)
	if got := mb.smtp.WaitCount(t, inside, 1, 10*time.Second); !strings.Contains(got[0].Subject, "Lunch again?") {
		t.Fatalf("forwarded %+v", got[0])
	}
	mb.sync(t) // a second sync sends nothing more
	time.Sleep(500 * time.Millisecond)
	if n := len(mb.smtp.Messages(t, inside)); n != 1 {
		t.Fatalf("%d forwards, want 1", n)
	}
	// An agent's change puts it back to waiting for the person.
	if sc, text, _ := call(t, agent, "rules_propose", map[string]any{"rule": rule(inside)}); sc["rule"].(map[string]any)["state"] != "pending" {
		t.Fatalf("an edited forward: %s", text)
	}
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(mb.cfg), "rules.toml"))
	if !strings.Contains(string(b), `state = "pending"`) {
		t.Fatalf("rules.toml: %s", b)
	}
}

// TestRulesOnCorpus (must-show 4): rules_coverage and a rules_apply_existing
// dry run over the 10,000-message corpus (its INBOX on Dovecot), checked
// against counts the test works out from the corpus itself.
func TestRulesOnCorpus(t *testing.T) {
	srv := imaptest.Start(t)
	b := &actionBox{user: srv.NewUser(t)}
	var inbox []corpus.Message
	err := corpus.Each(corpus.Options{Seed: 5, Messages: 10000}, func(_ int, m *corpus.Message) error {
		if m.Folder != "INBOX" {
			return nil
		}
		flags := ""
		for _, f := range m.Flags {
			flags += map[string]string{`\Seen`: "S", `\Flagged`: "F", `\Answered`: "R"}[f]
		}
		b.user.AddMessage(t, "INBOX", m.Raw, flags)
		inbox = append(inbox, *m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b.user.AddMessage(t, "Archive", []byte("From: x@example.test\r\nSubject: kept\r\nMessage-ID: <kept@example.test>\r\n\r\nKept.\r\n"), "S")
	b.env = home(t)
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(b.user.Password+"\n"), 0o600)
	b.cfg = filepath.Join(dir, "config.toml")
	os.WriteFile(b.cfg, []byte(fmt.Sprintf("[[accounts]]\nname = \"work\"\nkind = \"imap\"\nserver = %q\nuser = %q\npassword_cmd = \"cat %s\"\ntls = \"none\"\n", srv.Addr, b.user.Name, pw)), 0o600)
	b.sync(t)

	// The model: the rules' conditions worked out from the corpus's own fields.
	domain := func(m corpus.Message) string { _, d, _ := strings.Cut(strings.ToLower(m.FromEmail), "@"); return d }
	count := map[string]int{}
	for _, m := range inbox {
		count[domain(m)]++
	}
	var common, rare string
	for d, n := range count {
		if common == "" || n > count[common] || n == count[common] && d < common {
			common = d
		}
		if n >= 5 && n <= 300 && (rare == "" || d < rare) {
			rare = d
		}
	}
	// from_domain is the domain and those below it.
	under := func(m corpus.Message, d string) bool { x := domain(m); return x == d || strings.HasSuffix(x, "."+d) }
	for d := range count {
		n := 0
		for _, m := range inbox {
			if under(m, d) {
				n++
			}
		}
		count[d] = n
	}
	common, rare = "", ""
	for d, n := range count {
		if common == "" || n > count[common] || n == count[common] && d < common {
			common = d
		}
		if n >= 5 && n <= 300 && (rare == "" || d < rare) {
			rare = d
		}
	}
	unread := func(m corpus.Message) bool { return !slices.Contains(m.Flags, `\Seen`) }
	type modelRule struct {
		name  string
		match func(corpus.Message) bool
		moves bool
		stop  bool
	}
	model := []modelRule{
		{"common sender", func(m corpus.Message) bool { return under(m, common) }, true, false},
		{"attachments", func(m corpus.Message) bool { return len(m.Attachments) > 0 }, true, true},
		{"big unread", func(m corpus.Message) bool { return len(m.Raw) > 20000 && unread(m) }, false, false},
	}
	rulesFile := fmt.Sprintf(`[[rules]]
name = "common sender"
state = "enabled"
match = "from:@%s"
actions = [{ do = "archive" }]

[[rules]]
name = "attachments"
state = "enabled"
stop = true
match = "has:attachment"
actions = [{ do = "move", folder = "Archive" }]

[[rules]]
name = "big unread"
state = "enabled"
match = "larger:20000 is:unread"
actions = [{ do = "flag" }]

[[rules]]
name = "rare sender"
state = "disabled"
match = "from:@%s"
actions = [{ do = "mark_read" }]
`, common, rare)
	// The same rules in the old shape (a structured match), as a rules.toml of before.
	oldFile := fmt.Sprintf(`[[rules]]
name = "common sender"
state = "enabled"
match = { from_domain = %q }
actions = [{ do = "archive" }]

[[rules]]
name = "attachments"
state = "enabled"
stop = true
match = { has_attachment = true }
actions = [{ do = "move", folder = "Archive" }]

[[rules]]
name = "big unread"
state = "enabled"
match = { larger = 20000, flags = ["unread"] }
actions = [{ do = "flag" }]

[[rules]]
name = "rare sender"
state = "disabled"
match = { from_domain = %q }
actions = [{ do = "mark_read" }]
`, common, rare)
	if err := os.WriteFile(filepath.Join(dir, "rules.toml"), []byte(rulesFile), 0o600); err != nil {
		t.Fatal(err)
	}
	wantMatched, wantRule, wantWins, contested := 0, make([]int, len(model)), make([]int, len(model)), 0
	unmatched := map[string]int{}
	for _, m := range inbox {
		any, n := false, 0
		for i, r := range model {
			if r.match(m) {
				wantRule[i]++
				any = true
				n++
			}
		}
		for i, r := range model {
			if r.match(m) {
				wantWins[i]++
				if r.stop {
					break
				}
			}
		}
		if n > 1 {
			contested++
		}
		if any {
			wantMatched++
		} else {
			unmatched[strings.ToLower(m.FromEmail)]++
		}
	}

	cs := b.connect(t, "read,mail:modify")
	sc, text, isErr := call(t, cs, "rules_coverage", map[string]any{"folder": "INBOX"})
	if isErr {
		t.Fatalf("rules_coverage: %.500s", text)
	}
	// The old file is rewritten once, kept as rules.toml.bak, and covers exactly the same.
	os.WriteFile(filepath.Join(dir, "rules.toml"), []byte(oldFile), 0o600)
	if sc2, text2, isErr := call(t, cs, "rules_coverage", map[string]any{"folder": "INBOX"}); isErr || fmt.Sprint(sc2) != fmt.Sprint(sc) {
		t.Errorf("coverage of the old file differs:\n%.800s\n%.800s", text2, text)
	}
	if bak, err := os.ReadFile(filepath.Join(dir, "rules.toml.bak")); err != nil || string(bak) != oldFile {
		t.Errorf("the old file is not kept as rules.toml.bak: %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "rules.toml")); !strings.Contains(string(now), fmt.Sprintf(`match = "from:@%s"`, common)) || strings.Contains(string(now), "from_domain") {
		t.Errorf("rules.toml is not rewritten in the new shape:\n%s", now)
	}
	if sc["messages"] != float64(len(inbox)) || sc["matched"] != float64(wantMatched) {
		t.Errorf("coverage: %v messages, %v matched; the model: %d, %d", sc["messages"], sc["matched"], len(inbox), wantMatched)
	}
	for i, r := range sc["rules"].([]any) {
		row := r.(map[string]any)
		if row["rule"] != model[i].name || row["matched"] != float64(wantRule[i]) || row["wins"] != float64(wantWins[i]) {
			t.Errorf("rule %v: matched %v wins %v; the model: %d %d", row["rule"], row["matched"], row["wins"], wantRule[i], wantWins[i])
		}
	}
	if got := len(sc["contested"].([]any)); got != min(contested, 50) {
		t.Errorf("%d contested listed; the model has %d", got, contested)
	}
	top := sc["unmatched_senders"].([]any)
	if len(top) == 0 || top[0].(map[string]any)["messages"] != float64(maxCount(unmatched)) {
		t.Errorf("the top unmatched sender: %v; the model's top count %d", top[0], maxCount(unmatched))
	}
	for _, u := range top {
		row := u.(map[string]any)
		if unmatched[row["sender"].(string)] != int(row["messages"].(float64)) {
			t.Errorf("unmatched sender %v: %v; the model: %d", row["sender"], row["messages"], unmatched[row["sender"].(string)])
		}
	}

	// A dry run of one rule over the stored mail: exactly the model's messages, nothing changed.
	before := b.serverState(t)
	os.WriteFile(filepath.Join(dir, "rules.toml"), []byte(strings.Replace(rulesFile, `state = "disabled"`, `state = "enabled"`, 1)), 0o600)
	sc, text, isErr = call(t, cs, "rules_apply_existing", map[string]any{"id": "rare sender", "dry_run": true})
	if isErr {
		t.Fatalf("rules_apply_existing: %.500s", text)
	}
	wantRare, wantChange := 0, 0
	for _, m := range inbox {
		if under(m, rare) {
			wantRare++
			if unread(m) {
				wantChange++
			}
		}
	}
	rows := rowsOf(t, sc)
	if id, _ := sc["action_id"].(string); id != "" && sc["next_cursor"] != nil {
		rows = pageRows(t, cs, id, 0) // over 20 rows, the answer shows the first; mail_actions pages them all
	}
	if len(rows) != wantRare || sc["changed"] != float64(wantChange) {
		t.Fatalf("dry run: %d rows, %v would change; the model: %d, %d", len(rows), sc["changed"], wantRare, wantChange)
	}
	if got := b.serverState(t); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("the dry run changed the server")
	}
}

func maxCount(m map[string]int) int {
	n := 0
	for _, v := range m {
		n = max(n, v)
	}
	return n
}

// TestRuleAnswersValidate calls every rules_* tool with real arguments, in an
// order that gives each something to act on, and checks each answer against
// the outputSchema tools/list announced; a new rules tool must add its
// arguments here (TestEveryToolOutputValidates leaves them to this test).
func TestRuleAnswersValidate(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	cs := b.connect(t, allScopes())
	schemas := outputSchemas(t, cs)
	rule := func(name string) map[string]any {
		return map[string]any{"name": name, "match": "from:news@example.test", "actions": []any{map[string]any{"do": "flag"}}}
	}
	order := []string{"rules_test", "rules_propose", "rules_list", "rules_update", "rules_coverage", "rules_apply_existing", "rules_propose withdraw", "rules_update reject"}
	args := map[string]map[string]any{
		"rules_test": {"rule": rule("A")}, "rules_propose": {"rule": rule("A")}, "rules_list": {},
		"rules_update": {"id": "A", "state": "enabled", "position": 1}, "rules_coverage": {"folder": "INBOX"},
		"rules_apply_existing":   {"id": "A", "dry_run": true},
		"rules_propose withdraw": {"id": "B", "withdraw": true}, "rules_update reject": {"id": "C", "state": "rejected"},
	}
	n := 0
	for _, spec := range generated.Tools {
		if strings.HasPrefix(spec.Name, "rules_") {
			if spec.Phase != "" {
				continue // a pair (rules_push) is TestPairAnswersValidate's
			}
			n++
			if args[spec.Name] == nil {
				t.Errorf("%s is a new rules tool: add its arguments to this test", spec.Name)
			}
		}
	}
	if n != 6 {
		t.Fatalf("%d rules tools in the registry, 6 in this test", n)
	}
	for _, step := range order {
		name, _, _ := strings.Cut(step, " ")
		switch step { // pending proposals for withdraw and reject to act on
		case "rules_propose withdraw":
			call(t, cs, "rules_propose", map[string]any{"rule": rule("B")})
		case "rules_update reject":
			call(t, cs, "rules_propose", map[string]any{"rule": rule("C")})
		}
		sc, text, isErr := call(t, cs, name, args[step])
		if isErr {
			t.Fatalf("%s: %s", name, text)
		}
		if err := compile(t, schemas[name]).Validate(anyJSON(sc)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

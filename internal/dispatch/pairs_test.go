package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/approval"
)

// actions implements the prepare methods of every pair with one action whose
// Run only counts; any other method panics (the embedded nil interface), so a
// new pair in the catalog makes this test ask for its method.
type actions struct {
	generated.Handlers
	runs *atomic.Int32
}

func (h actions) action(payload any) (*generated.Action, error) {
	return &generated.Action{
		Account: "work",
		Preview: &generated.Prepared{Action: "do it", Subject: "s"},
		Payload: payload,
		Run: func(context.Context) (any, error) {
			h.runs.Add(1)
			return &generated.SendResult{Outcome: "sent"}, nil
		},
	}, nil
}

func (h actions) MailDraft(_ context.Context, a *generated.MailDraftArgs) (*generated.Action, error) {
	return h.action(a)
}
func (h actions) MailSend(_ context.Context, a *generated.MailSendArgs) (*generated.Action, error) {
	return h.action(a)
}
func (h actions) MailBackupsPurge(_ context.Context, a *generated.MailBackupsPurgeArgs) (*generated.Action, error) {
	return h.action(a)
}

func (h actions) MailUnsubscribe(_ context.Context, a *generated.MailUnsubscribeArgs) (*generated.Action, error) {
	return h.action(a)
}

func (h actions) CalendarRespond(_ context.Context, a *generated.CalendarRespondArgs) (*generated.Action, error) {
	return h.action(a)
}

func (h actions) RulesPush(_ context.Context, a *generated.RulesPushArgs) (*generated.Action, error) {
	return h.action(a)
}

func pairArgs(t *testing.T, tool *Tool) map[string]any {
	var m map[string]any
	json.Unmarshal(validArgs(t, tool), &m)
	return m
}

// TestPrepareNeverRuns: for every pair and every way a commit is approved,
// preparing runs nothing; a commit runs the action once, and only after the
// token and the person agree; anything else is refused or declined.
func TestPrepareNeverRuns(t *testing.T) {
	var runs atomic.Int32
	r, err := New(actions{runs: &runs})
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ := approval.New(0, nil)
	var mode string
	var holdAnswer bool
	var holdErr error
	r.SetApprovals(&approval.Config{Tokens: tokens, Mode: func() string { return mode },
		Hold: func(context.Context, approval.Request) (bool, error) { return holdAnswer, holdErr }})
	g := grantAll()
	call := func(ctx context.Context, name string, args map[string]any) *Result {
		b, _ := json.Marshal(args)
		res, err := r.Call(ctx, name, b, g)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	pairs := 0
	for _, tool := range r.All() {
		if tool.Spec.Phase != "prepare" {
			continue
		}
		pairs++
		commit := r.Lookup(tool.Spec.Pair)
		for _, c := range []struct {
			name    string
			mode    string
			ask     func(context.Context, approval.Request) (bool, error)
			hold    bool
			holdErr error
			runs    int32 // when the commit needs the person
			outcome string
		}{
			{"terminal, approved", approval.ModeTerminal, nil, true, nil, 1, "done"},
			{"terminal, declined", approval.ModeTerminal, nil, false, nil, 0, "declined"},
			{"terminal, not answered", approval.ModeTerminal, nil, false, errors.New("no answer"), 0, "not_done"},
			{"host", approval.ModeHost, nil, false, nil, 1, "done"},
			// A client that can ask keeps the pair in host mode only (TestOneCall).
			{"ask, accepted", approval.ModeHost, func(context.Context, approval.Request) (bool, error) { return true, nil }, false, nil, 1, "done"},
			{"ask, declined", approval.ModeHost, func(context.Context, approval.Request) (bool, error) { return false, nil }, true, nil, 0, "declined"},
		} {
			mode, holdAnswer, holdErr = c.mode, c.hold, c.holdErr
			ctx := WithInfo(context.Background(), CallInfo{Connection: "c1", Ask: c.ask})
			runs.Store(0)
			args := pairArgs(t, tool)
			prep := call(ctx, tool.Spec.Name, args)
			if prep.IsError || runs.Load() != 0 || prep.outcome != "prepared" {
				t.Fatalf("%s, %s: prepare ran %d times: %+v", tool.Spec.Name, c.name, runs.Load(), prep)
			}
			var p generated.Prepared
			json.Unmarshal(prep.Structured, &p)
			wantMode := map[bool]string{true: "ask", false: c.mode}[c.ask != nil]
			if !commit.Spec.Approval {
				wantMode = "none"
			}
			if p.Approval != wantMode || p.Commit != commit.Spec.Name || len(p.Token) != 43 {
				t.Fatalf("%s, %s: preview %+v", tool.Spec.Name, c.name, p)
			}
			args["token"] = p.Token
			// Another connection, and a changed payload, are refused and spend nothing they should not.
			other := WithInfo(context.Background(), CallInfo{Connection: "c2", Ask: c.ask})
			if res := call(other, commit.Spec.Name, args); !res.IsError || res.outcome != "refused" || runs.Load() != 0 {
				t.Fatalf("%s, %s: another connection: %+v", tool.Spec.Name, c.name, res)
			}
			prep = call(ctx, tool.Spec.Name, pairArgs(t, tool))
			json.Unmarshal(prep.Structured, &p)
			args["token"] = p.Token
			res := call(ctx, commit.Spec.Name, args)
			want, wantOutcome := c.runs, c.outcome
			if !commit.Spec.Approval {
				want, wantOutcome = 1, "done"
			}
			if runs.Load() != want || res.outcome != wantOutcome {
				t.Fatalf("%s, %s: commit ran %d times (want %d), outcome %q: %s", tool.Spec.Name, c.name, runs.Load(), want, res.outcome, res.Text)
			}
			if again := call(ctx, commit.Spec.Name, args); !again.IsError || again.outcome != "refused" || runs.Load() != want {
				t.Fatalf("%s, %s: a replay was not refused: %+v", tool.Spec.Name, c.name, again)
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no prepare_commit pair in the registry")
	}
}

// TestInputRequiredRound: on a 2026-07-28 call the person is asked in a round
// of its own: nothing runs and the token survives until a retry brings the
// answer with the request state this server signed; a forged state is asked again.
func TestInputRequiredRound(t *testing.T) {
	var runs atomic.Int32
	r, _ := New(actions{runs: &runs})
	tokens, _ := approval.New(0, nil)
	r.SetApprovals(&approval.Config{Tokens: tokens, Mode: func() string { return approval.ModeHost }})
	send := r.Lookup("mail_send")
	if send == nil || !r.Lookup(send.Spec.Pair).Spec.Approval {
		t.Skip("the catalog has no mail_send that asks the person")
	}
	g := grantAll()
	call := func(rounds *approval.Rounds, name string, args map[string]any) *Result {
		b, _ := json.Marshal(args)
		res, _ := r.Call(WithInfo(context.Background(), CallInfo{Connection: "c1", Rounds: rounds}), name, b, g)
		return res
	}
	args := pairArgs(t, send)
	prep := call(&approval.Rounds{}, "mail_send", args)
	var p generated.Prepared
	json.Unmarshal(prep.Structured, &p)
	if p.Approval != "ask" {
		t.Fatalf("approval %q", p.Approval)
	}
	args["token"] = p.Token
	first := call(&approval.Rounds{}, "mail_send_commit", args)
	if first.InputRequests == nil || first.RequestState == "" || runs.Load() != 0 || !strings.Contains(string(first.InputRequests), `"elicitation/create"`) {
		t.Fatalf("first round: %+v", first)
	}
	forged := call(&approval.Rounds{Answer: "accept", State: "x." + strings.Repeat("A", 43)}, "mail_send_commit", args)
	if forged.InputRequests == nil || runs.Load() != 0 {
		t.Fatalf("a forged request state was taken: %+v", forged)
	}
	done := call(&approval.Rounds{Answer: "accept", State: first.RequestState}, "mail_send_commit", args)
	if runs.Load() != 1 || done.InputRequests != nil {
		t.Fatalf("accepted retry ran %d times: %+v", runs.Load(), done)
	}
	if again := call(&approval.Rounds{Answer: "accept", State: first.RequestState}, "mail_send_commit", args); !again.IsError || runs.Load() != 1 {
		t.Fatalf("a replayed accepted round ran again: %+v", again)
	}
}

// askCounter is an Ask that answers answer (or err) and counts the person's requests.
type askCounter struct {
	answer bool
	err    error
	asked  []approval.Request
}

func (a *askCounter) ask(_ context.Context, q approval.Request) (bool, error) {
	a.asked = append(a.asked, q)
	return a.answer, a.err
}

// TestOneCall: for a client that can ask the person, every pair is one call that
// prepares, asks exactly when its commit would (its text, once) and runs: declined or
// unanswered, nothing runs. In host mode the pair stays two calls. A token prepared
// before still commits, and is asked for.
func TestOneCall(t *testing.T) {
	var runs atomic.Int32
	r, err := New(actions{runs: &runs})
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ := approval.New(0, nil)
	mode := approval.ModeTerminal
	r.SetApprovals(&approval.Config{Tokens: tokens, Mode: func() string { return mode },
		Hold: func(context.Context, approval.Request) (bool, error) {
			t.Error("a one-call pair was held")
			return false, nil
		}})
	g := grantAll()
	call := func(info CallInfo, name string, args map[string]any) *Result {
		b, _ := json.Marshal(args)
		res, err := r.Call(WithInfo(context.Background(), info), name, b, g)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	pairs := 0
	for _, tool := range r.All() {
		if tool.Spec.Phase != generated.PhasePrepare {
			continue
		}
		pairs++
		name, commit := tool.Spec.Name, r.Lookup(tool.Spec.Pair)
		asks := commit.Spec.Approval
		for _, c := range []struct {
			name    string
			answer  bool
			err     error
			runs    int32
			outcome string
		}{
			{"accepted", true, nil, 1, "done"},
			{"declined", false, nil, 0, "declined"},
			{"unanswered", false, errors.New("the person did not answer"), 0, "not_done"},
		} {
			mode = approval.ModeTerminal
			a := &askCounter{answer: c.answer, err: c.err}
			runs.Store(0)
			res := call(CallInfo{Connection: "c1", Ask: a.ask}, name, pairArgs(t, tool))
			wantRuns, wantOutcome, wantAsked := c.runs, c.outcome, 1
			if !asks {
				wantRuns, wantOutcome, wantAsked = 1, "done", 0
			}
			if runs.Load() != wantRuns || res.outcome != wantOutcome || len(a.asked) != wantAsked || res.approval == "" {
				t.Fatalf("%s, %s: ran %d times (want %d), asked %d times (want %d), outcome %q (want %q): %s", name, c.name, runs.Load(), wantRuns, len(a.asked), wantAsked, res.outcome, wantOutcome, res.Text)
			}
			if wantRuns == 1 && (res.IsError || strings.Contains(string(res.Structured), `"token"`) || !strings.Contains(string(res.Structured), `"outcome":"sent"`)) {
				t.Fatalf("%s, %s: the one call answered %s, not the commit's result", name, c.name, res.Structured)
			}
			if wantRuns == 0 && (!res.IsError || res.Structured != nil) {
				t.Fatalf("%s, %s: %+v", name, c.name, res)
			}
			if asks && (a.asked[0].Tool != commit.Spec.Name || a.asked[0].Ref != res.approval || a.asked[0].Preview.Subject != "s") {
				t.Fatalf("%s, %s: the person was asked %+v", name, c.name, a.asked[0])
			}
		}

		// Host mode: the host's prompt for the commit is the approval, so the pair stays.
		mode = approval.ModeHost
		a := &askCounter{answer: true}
		runs.Store(0)
		prep := call(CallInfo{Connection: "c1", Ask: a.ask}, name, pairArgs(t, tool))
		var p generated.Prepared
		json.Unmarshal(prep.Structured, &p)
		if prep.outcome != "prepared" || runs.Load() != 0 || len(p.Token) != 43 || len(a.asked) != 0 {
			t.Fatalf("%s in host mode: %+v", name, prep)
		}
		// An agent holding that token commits it after the mode changed: it is asked for.
		mode = approval.ModeTerminal
		args := pairArgs(t, tool)
		args["token"] = p.Token
		res := call(CallInfo{Connection: "c1", Ask: a.ask}, commit.Spec.Name, args)
		if runs.Load() != 1 || res.outcome != "done" || len(a.asked) != map[bool]int{true: 1}[asks] {
			t.Fatalf("%s_commit from a client that can ask: ran %d, asked %d: %+v", name, runs.Load(), len(a.asked), res)
		}
	}
	if pairs == 0 {
		t.Fatal("no prepare_commit pair in the registry")
	}
}

// TestOneCallRounds: on 2026-07-28 a pair's one call asks the person in an input_required
// round whose request state seals the token; only the retry on the same connection, for
// the same arguments and with the person's accept runs it, once.
func TestOneCallRounds(t *testing.T) {
	var runs atomic.Int32
	r, _ := New(actions{runs: &runs})
	tokens, _ := approval.New(0, nil)
	r.SetApprovals(&approval.Config{Tokens: tokens, Mode: func() string { return approval.ModeTerminal }})
	send := r.Lookup("mail_send")
	if send == nil || !r.Lookup(send.Spec.Pair).Spec.Approval {
		t.Skip("the catalog has no mail_send that asks the person")
	}
	g := grantAll()
	call := func(conn string, rounds *approval.Rounds, args map[string]any) *Result {
		b, _ := json.Marshal(args)
		res, _ := r.Call(WithInfo(context.Background(), CallInfo{Connection: conn, Rounds: rounds}), "mail_send", b, g)
		return res
	}
	args := pairArgs(t, send)
	first := call("c1", &approval.Rounds{}, args)
	if first.InputRequests == nil || first.RequestState == "" || runs.Load() != 0 || first.outcome != "asked" ||
		!strings.Contains(string(first.InputRequests), `"elicitation/create"`) || !strings.HasPrefix(first.RequestState, first.approval+".") {
		t.Fatalf("first round: %+v", first)
	}
	// The state hides the token it seals.
	if strings.Count(first.RequestState, ".") != 1 || len(first.RequestState) < 60 {
		t.Fatalf("request state %q", first.RequestState)
	}
	// Another connection, a forged state, a state of another tool: asked again, nothing runs.
	for _, c := range []struct {
		conn, state string
	}{
		{"c2", first.RequestState},
		{"c1", first.approval + "." + strings.Repeat("A", 80)},
		{"c1", "x"},
	} {
		again := call(c.conn, &approval.Rounds{Answer: "accept", State: c.state}, args)
		if again.InputRequests == nil || runs.Load() != 0 || again.RequestState == first.RequestState {
			t.Fatalf("a state %q on %s was taken: %+v", c.state, c.conn, again)
		}
	}
	// Changed arguments on the retry: refused, and the token is spent.
	changed := map[string]any{}
	for k, v := range args {
		changed[k] = v
	}
	changed["body"] = "another body"
	if res := call("c1", &approval.Rounds{Answer: "accept", State: first.RequestState}, changed); !res.IsError || res.outcome != "refused" || runs.Load() != 0 {
		t.Fatalf("changed arguments on the retry: %+v", res)
	}
	if res := call("c1", &approval.Rounds{Answer: "accept", State: first.RequestState}, args); !res.IsError || res.outcome != "refused" || runs.Load() != 0 {
		t.Fatalf("a token spent by a changed retry ran: %+v", res)
	}
	// Declined: nothing runs, the token is spent.
	round := call("c1", &approval.Rounds{}, args)
	if res := call("c1", &approval.Rounds{Answer: "decline", State: round.RequestState}, args); !res.IsError || res.outcome != "declined" || runs.Load() != 0 {
		t.Fatalf("declined: %+v", res)
	}
	if res := call("c1", &approval.Rounds{Answer: "accept", State: round.RequestState}, args); res.outcome != "refused" || runs.Load() != 0 {
		t.Fatalf("accepted after a decline: %+v", res)
	}
	// Accepted: runs once; the same answer again is refused.
	round = call("c1", &approval.Rounds{}, args)
	done := call("c1", &approval.Rounds{Answer: "accept", State: round.RequestState}, args)
	if runs.Load() != 1 || done.IsError || done.outcome != "done" || done.approval != round.approval || !strings.Contains(string(done.Structured), `"outcome":"sent"`) {
		t.Fatalf("accepted: ran %d: %+v", runs.Load(), done)
	}
	if again := call("c1", &approval.Rounds{Answer: "accept", State: round.RequestState}, args); !again.IsError || again.outcome != "refused" || runs.Load() != 1 {
		t.Fatalf("a replayed round ran again: %+v", again)
	}
}

// TestListedOneCall: a client that can ask is offered each pair as its prepare half with
// the commit's annotations (never read-only) and output and the catalog's description, and
// no commit half; in host mode, and for a client that cannot ask, both halves as they are.
func TestListedOneCall(t *testing.T) {
	r, _ := New(actions{})
	tokens, _ := approval.New(0, nil)
	mode := approval.ModeTerminal
	r.SetApprovals(&approval.Config{Tokens: tokens, Mode: func() string { return mode }})
	g := grantAll()
	names := func(ts []*Tool) map[string]*Tool {
		m := map[string]*Tool{}
		for _, t := range ts {
			m[t.Spec.Name] = t
		}
		return m
	}
	if !r.OneCall(true) || r.OneCall(false) {
		t.Fatal("OneCall in terminal mode")
	}
	all, one := names(r.Listed(g, false)), names(r.Listed(g, r.OneCall(true)))
	pairs := 0
	for _, tool := range r.All() {
		switch tool.Spec.Phase {
		case generated.PhaseCommit:
			if one[tool.Spec.Name] != nil || all[tool.Spec.Name] == nil {
				t.Errorf("%s: listed to a client that can ask %v, to one that cannot %v", tool.Spec.Name, one[tool.Spec.Name] != nil, all[tool.Spec.Name] != nil)
			}
		case generated.PhasePrepare:
			pairs++
			commit, x := r.Lookup(tool.Spec.Pair), one[tool.Spec.Name]
			if all[tool.Spec.Name] != tool || x == nil {
				t.Fatalf("%s not listed", tool.Spec.Name)
			}
			a := commit.Spec.Annotations
			a.ReadOnly = false
			if x.Spec.Annotations != a || x.Spec.Annotations.ReadOnly || string(x.Output) != string(commit.Output) || string(x.Input) != string(tool.Input) {
				t.Errorf("%s as one call: annotations %+v, output %.60s", tool.Spec.Name, x.Spec.Annotations, x.Output)
			}
			if strings.Contains(x.Spec.Description, "_commit") || strings.Contains(x.Spec.Description, "only prepares") || x.Spec.Description == "" {
				t.Errorf("%s as one call reads %q", tool.Spec.Name, x.Spec.Description)
			}
		default:
			if one[tool.Spec.Name] != tool {
				t.Errorf("%s is not listed as it is", tool.Spec.Name)
			}
		}
	}
	if len(one) != len(all)-pairs {
		t.Errorf("a client that can ask is offered %d tools, one that cannot %d, with %d pairs", len(one), len(all), pairs)
	}
	mode = approval.ModeHost
	if r.OneCall(true) {
		t.Fatal("OneCall in host mode")
	}
}

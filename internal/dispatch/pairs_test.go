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
			{"ask, accepted", approval.ModeTerminal, func(context.Context, approval.Request) (bool, error) { return true, nil }, false, nil, 1, "done"},
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

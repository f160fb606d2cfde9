package approval

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/answer"
)

// pairSpecs returns the specs of each prepare_commit pair in the catalog.
func pairSpecs(t *testing.T) [][2]*generated.ToolSpec {
	byName := map[string]*generated.ToolSpec{}
	for i := range generated.Tools {
		byName[generated.Tools[i].Name] = &generated.Tools[i]
	}
	var out [][2]*generated.ToolSpec
	for i := range generated.Tools {
		if s := &generated.Tools[i]; s.Phase == generated.PhasePrepare {
			out = append(out, [2]*generated.ToolSpec{s, byName[s.Pair]})
		}
	}
	if len(out) == 0 {
		t.Fatal("no prepare_commit pair in the catalog")
	}
	return out
}

func newPairs(t *testing.T, c *Config) *Pairs {
	t.Helper()
	p, err := NewPairs()
	if err != nil {
		t.Fatal(err)
	}
	p.Configure(c)
	return p
}

// TestPairsRefuseUnconfigured: without a configuration a prepare says so and
// a commit is refused with the one refusal sentence, as a refused token.
func TestPairsRefuseUnconfigured(t *testing.T) {
	p := newPairs(t, nil)
	for _, pair := range pairSpecs(t) {
		act := &generated.Action{Account: "work", Preview: &generated.Prepared{Action: "do it"},
			Run: func(context.Context) (any, error) { t.Fatal("ran"); return nil, nil }}
		s := p.Prepare(pair[0], pair[1], act, Caller{Connection: "c1"})
		if !s.IsError || !strings.Contains(s.Text, "approvals are not set up") || s.Out != nil || s.Outcome != "" {
			t.Fatalf("%s: %+v", pair[0].Name, s)
		}
		s = p.Commit(context.Background(), pair[1], pair[0], &generated.PendingCommit{Token: "t", Action: act}, Caller{Connection: "c1"})
		if !s.IsError || s.Text != answer.Sentence(ErrRefused.Error()) || s.Outcome != "refused" || s.Ref != ref("t") {
			t.Fatalf("%s: %+v", pair[1].Name, s)
		}
	}
}

// TestPersonReadsWhatAgentSaw: the person is asked about the preview cleaned
// and masked as the agent read it, never about the handler's raw strings, and
// a failing approval does nothing, its error cleaned into one sentence.
func TestPersonReadsWhatAgentSaw(t *testing.T) {
	tokens, _ := New(0, nil)
	var asked []Request
	var holdErr error
	p := newPairs(t, &Config{Tokens: tokens, Mode: func() string { return ModeTerminal },
		Hold: func(_ context.Context, q Request) (bool, error) {
			asked = append(asked, q)
			return holdErr == nil, holdErr
		}})
	raw := "Hello\u202e\nforged: true"
	if answer.Line(raw) == raw {
		t.Fatal("the test string needs cleaning, or the test proves nothing")
	}
	asking := 0
	for _, pair := range pairSpecs(t) {
		if !pair[1].Approval {
			continue
		}
		asking++
		runs := 0
		act := func() *generated.Action {
			return &generated.Action{Account: "work", Payload: map[string]string{"s": raw},
				Preview: &generated.Prepared{Action: "send it", Subject: raw, To: []string{raw}},
				Run:     func(context.Context) (any, error) { runs++; return &generated.SendResult{Outcome: "sent"}, nil }}
		}
		c := Caller{Connection: "c1", Client: "host"}
		for _, fail := range []error{nil, errors.New("the wait ended\nforged: yes")} {
			holdErr, asked = fail, nil
			prep := p.Prepare(pair[0], pair[1], act(), c)
			pv, _ := prep.Out.(*generated.Prepared)
			if pv == nil || pv.Approval != ModeTerminal || pv.Commit != pair[1].Name || prep.Outcome != "prepared" {
				t.Fatalf("%s: %+v", pair[0].Name, prep)
			}
			s := p.Commit(context.Background(), pair[1], pair[0], &generated.PendingCommit{Token: pv.Token, Action: act()}, c)
			if len(asked) != 1 || asked[0].Preview.Subject != answer.Line(raw) || asked[0].Preview.To[0] != answer.Line(raw) ||
				asked[0].Ref != prep.Ref || asked[0].Tool != pair[1].Name || asked[0].Client != "host" {
				t.Fatalf("%s: asked %+v", pair[1].Name, asked)
			}
			switch {
			case fail == nil && (runs != 1 || s.Outcome != "done" || s.Out == nil):
				t.Fatalf("%s: approved, ran %d times: %+v", pair[1].Name, runs, s)
			case fail != nil && (runs != 1 || s.Outcome != "not_done" || !s.IsError || strings.Contains(s.Text, "\n")):
				t.Fatalf("%s: not approved, ran %d times: %+v", pair[1].Name, runs, s)
			}
		}
	}
	if asking == 0 {
		t.Fatal("no pair of the catalog asks the person, so nothing was checked")
	}
}

// TestRequestState: a round's request state is good only for the connection
// and approval it was made for, on the server that made it.
func TestRequestState(t *testing.T) {
	p, q := newPairs(t, nil), newPairs(t, nil)
	st := p.state("c1", "ab12")
	if !regexp.MustCompile(`^ab12\.[A-Za-z0-9_-]{43}$`).MatchString(st) {
		t.Fatalf("state %q", st)
	}
	if !p.validState(st, "c1", "ab12") {
		t.Fatal("its own state was refused")
	}
	for _, bad := range []bool{p.validState(st, "c2", "ab12"), p.validState(st, "c1", "ab13"), q.validState(st, "c1", "ab12"),
		p.validState(st+"x", "c1", "ab12"), p.validState("", "c1", "ab12")} {
		if bad {
			t.Fatal("a state was taken for another connection, approval or server")
		}
	}
}

// TestRef: a token's reference is short, stable, and holds nothing of the token.
func TestRef(t *testing.T) {
	a, b := ref("tokenA"), ref("tokenB")
	if a != ref("tokenA") || a == b || !regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(a) || strings.Contains("tokenA", a) {
		t.Fatalf("refs %q %q", a, b)
	}
}

// TestRequestText: the lines a person reads, in the order they read them.
func TestRequestText(t *testing.T) {
	n := 42
	q := Request{Ref: "ab12", Preview: &generated.Prepared{Action: "send a message", Account: "work", From: "me@example.com",
		To: []string{"a@example.com", "b@example.com"}, Subject: "Hi", BodyLength: &n, BodyDigest: "sha256:00", BodyLines: []string{"Hello,", ""}}}
	want := "Send a message from account work (me@example.com)\nTo: a@example.com, b@example.com\nSubject: Hi\nBody: 42 bytes, sha256:00\n  | Hello,\n  | "
	if got := q.Text(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := ElicitMessage(q); !strings.HasPrefix(got, "postern asks for your approval (ab12):\n\n"+want+"\n\n") {
		t.Fatalf("elicit message: %q", got)
	}
}

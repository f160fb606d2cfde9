package approval

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/answer"
)

// Approval modes for a commit whose client cannot ask the person itself (no
// MCP elicitation). The configuration chooses; ModeTerminal is the default.
const (
	// ModeTerminal holds the commit until the person approves it with
	// postern approve in a terminal (or the wait ends: nothing is done).
	ModeTerminal = "terminal"
	// ModeHost lets the commit run once the host's own prompt for the commit
	// tool was accepted: postern asks nothing more.
	ModeHost = "host"

	// modeAsk asks the person through the client (MCP elicitation); modeNone
	// is a commit that needs no approval (an approval mode, not an effect).
	modeAsk  = "ask"
	modeNone = "none"
)

// Request is what the person is asked to approve.
type Request struct {
	Tool    string // the commit tool, e.g. mail_send_commit
	Account string
	Effect  string
	Preview *generated.Prepared // cleaned and masked, as the agent saw it
	Ref     string              // the approval's short reference (audit, postern approve)
	Client  string              // the MCP client's name
}

// Text is the request as lines a person reads, in a terminal or a host's window.
func (q Request) Text() string {
	p := q.Preview
	var b strings.Builder
	fmt.Fprintf(&b, "%s from account %s", capitalize(p.Action), p.Account)
	if p.From != "" {
		fmt.Fprintf(&b, " (%s)", p.From)
	}
	b.WriteString("\n")
	line := func(k string, vs ...string) {
		if len(vs) > 0 && strings.Join(vs, "") != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(vs, ", "))
		}
	}
	line("To", p.To...)
	line("Cc", p.Cc...)
	line("Bcc", p.Bcc...)
	line("Subject", p.Subject)
	line("In reply to", p.InReplyTo)
	if p.BodyLength != nil {
		fmt.Fprintf(&b, "Body: %d bytes, %s\n", *p.BodyLength, p.BodyDigest)
	}
	for _, l := range p.BodyLines {
		fmt.Fprintf(&b, "  | %s\n", l)
	}
	return strings.TrimRight(b.String(), "\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Config configures prepare/commit pairs.
type Config struct {
	Tokens *Store
	// Mode returns the configured mode (ModeTerminal or ModeHost) for clients
	// that cannot ask the person; it is read at each commit.
	Mode func() string
	// Hold waits for the person's decision in ModeTerminal.
	Hold func(ctx context.Context, q Request) (bool, error)
}

// Rounds is what a 2026-07-28 retry carries back from an input_required round.
type Rounds struct {
	Answer string // the person's action for postern's request: accept, decline, cancel; "" on a first call
	State  string // the requestState the round gave, echoed
}

// Caller is the connection a prepare or commit comes from.
type Caller struct {
	Connection string // tokens are bound to it
	Client     string // the MCP client's name
	// Ask asks the person to approve a commit in the host's window (MCP
	// elicitation); nil when the client cannot.
	Ask func(ctx context.Context, q Request) (bool, error)
	// Rounds is set on a 2026-07-28 call whose client can elicit: the person
	// is asked in an input_required round instead (nil otherwise).
	Rounds *Rounds
}

// Step is what a prepare or a commit comes to: a result to render as the
// answer (Out), or the answer's text; and, for the audit log, the approval's
// short reference and how it ended.
type Step struct {
	Out     any // nil when Text is the answer
	Text    string
	IsError bool
	// InputRequests, when set, makes the answer a 2026-07-28 input_required
	// round asking the client these requests; RequestState goes with it.
	InputRequests json.RawMessage
	RequestState  string
	Ref, Outcome  string
}

// Pairs runs prepare/commit pairs: a prepare issues a token and previews the
// action; a commit redeems the token, gets the person's approval when the
// effect needs it, and only then runs the action.
type Pairs struct {
	config   *Config
	stateKey [32]byte // signs the request state of input_required rounds
}

// NewPairs returns pairs that refuse until Configure is called.
func NewPairs() (*Pairs, error) {
	p := &Pairs{}
	if _, err := rand.Read(p.stateKey[:]); err != nil {
		return nil, err
	}
	return p, nil
}

// Configure makes the pairs work with c; nil makes them refuse.
func (p *Pairs) Configure(c *Config) { p.config = c }

func failed(format string, args ...any) Step {
	return Step{Text: fmt.Sprintf(format, args...), IsError: true}
}

// ref is the short public reference of a token: it ties the prepare and
// commit lines of the audit log and names a held commit, and says nothing of
// the token itself.
func ref(token string) string {
	h := sha256.Sum256([]byte("postern approval ref\x00" + token))
	return hex.EncodeToString(h[:5])
}

// modeFor is how a commit will be approved for c.
func (p *Pairs) modeFor(commit *generated.ToolSpec, c Caller) string {
	switch {
	case !commit.Approval:
		return modeNone
	case c.Ask != nil || c.Rounds != nil:
		return modeAsk
	case p.config != nil && p.config.Mode != nil && p.config.Mode() == ModeHost:
		return ModeHost
	default:
		return ModeTerminal
	}
}

// Prepare issues the token of act, the action prepare's handler made, and
// returns its preview as the answer; commit is prepare's pair.
func (p *Pairs) Prepare(prep, commit *generated.ToolSpec, act *generated.Action, c Caller) Step {
	if p.config == nil || p.config.Tokens == nil {
		return failed("%s cannot prepare anything: approvals are not set up in this server.", prep.Name)
	}
	if act == nil || act.Preview == nil {
		return failed("%s prepared no action; this is a bug in postern.", prep.Name)
	}
	hash, err := PayloadHash(act.Payload)
	if err != nil {
		return failed("%s: %v.", prep.Name, err)
	}
	token, expires, err := p.config.Tokens.Issue(Binding{
		Connection: c.Connection, Account: act.Account, Tool: prep.Name, Effect: prep.Effect, Payload: hash,
	})
	if err != nil {
		return failed("%s: %v.", prep.Name, err)
	}
	pv := *act.Preview
	pv.Account = act.Account
	pv.Token = token
	pv.ExpiresAt = expires.UTC().Format(time.RFC3339)
	pv.Commit = prep.Pair
	pv.Approval = p.modeFor(commit, c)
	return Step{Out: &pv, Ref: ref(token), Outcome: "prepared"}
}

// Commit redeems the token of pc, the pending commit commit's handler made,
// gets the person's approval when the effect needs it, and only then runs the
// action; prep is commit's pair.
func (p *Pairs) Commit(ctx context.Context, commit, prep *generated.ToolSpec, pc *generated.PendingCommit, c Caller) Step {
	rf := ref(pc.Token)
	refusal := func() Step {
		s := failed("%s", answer.Sentence(ErrRefused.Error()))
		s.Ref, s.Outcome = rf, "refused"
		return s
	}
	if p.config == nil || p.config.Tokens == nil {
		return refusal()
	}
	act := pc.Action
	hash, err := PayloadHash(act.Payload)
	if err != nil {
		return refusal()
	}
	binding := Binding{
		Connection: c.Connection, Account: act.Account, Tool: prep.Name, Effect: prep.Effect, Payload: hash,
	}
	done := func(s Step, outcome string) Step {
		s.Ref, s.Outcome = rf, outcome
		return s
	}
	var q Request
	if commit.Approval {
		pv := *act.Preview
		pv.Account = act.Account
		answer.Prepare(&pv)
		q = Request{Tool: commit.Name, Account: act.Account, Effect: commit.Effect, Preview: &pv, Ref: rf, Client: c.Client}
	}
	// 2026-07-28: the person is asked in a round of its own; the token is
	// checked then, and spent only when the answer comes back.
	if commit.Approval && c.Rounds != nil && (c.Rounds.Answer == "" || !p.validState(c.Rounds.State, c.Connection, rf)) {
		if err := p.config.Tokens.Check(pc.Token, binding); err != nil {
			return refusal()
		}
		return done(p.inputRequired(q, c.Connection), "asked")
	}
	if err := p.config.Tokens.Redeem(pc.Token, binding); err != nil {
		return refusal()
	}
	if commit.Approval {
		var yes bool
		switch mode := p.modeFor(commit, c); {
		case c.Rounds != nil:
			yes = c.Rounds.Answer == "accept"
		case mode == modeAsk:
			yes, err = c.Ask(ctx, q)
		case mode == ModeHost:
			yes = true
		default:
			if p.config.Hold == nil {
				err = errors.New("this server cannot hold an action for postern approve")
			} else {
				yes, err = p.config.Hold(ctx, q)
			}
		}
		if err != nil {
			return done(failed("Nothing was done: the person's approval could not be obtained (%s). Prepare the action again if they still want it.", strings.TrimSuffix(answer.Line(err.Error()), ".")), "not_done")
		}
		if !yes {
			return done(failed("The person declined; nothing was done. Do not try again unless they ask you to."), "declined")
		}
	}
	out, err := act.Run(ctx)
	if err != nil {
		outcome := "not_done"
		var u interface{ Unknown() bool }
		if errors.As(err, &u) && u.Unknown() {
			outcome = "unknown"
		}
		return done(Step{Text: answer.Error(err), IsError: true}, outcome)
	}
	if out == nil {
		return done(failed("%s did its action but returned no result; check the account before trying again.", commit.Name), "done")
	}
	return done(Step{Out: out}, "done")
}

// ApproveInput is the name of postern's request in an input_required round.
const ApproveInput = "approve"

// ElicitMessage is what the person reads when the host asks for approval.
func ElicitMessage(q Request) string {
	return "postern asks for your approval (" + q.Ref + "):\n\n" + q.Text() +
		"\n\nAccept to let it happen now; decline and nothing is done."
}

// inputRequired is the 2026-07-28 round that asks the person through the
// client's elicitation, with a request state that only this connection's
// retry of this approval can present.
func (p *Pairs) inputRequired(q Request, conn string) Step {
	reqs, _ := json.Marshal(map[string]any{ApproveInput: map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":            "form",
			"message":         ElicitMessage(q),
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
		},
	}})
	return Step{Text: "Waiting for the person's approval.", InputRequests: reqs, RequestState: p.state(conn, q.Ref)}
}

func (p *Pairs) state(conn, ref string) string {
	m := hmac.New(sha256.New, p.stateKey[:])
	m.Write([]byte(conn + "\x00" + ref))
	return ref + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (p *Pairs) validState(state, conn, ref string) bool {
	return hmac.Equal([]byte(state), []byte(p.state(conn, ref)))
}

package approval

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
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
	stateKey [32]byte    // signs the request state of input_required rounds
	sealer   cipher.AEAD // seals the token into a one-call round's request state
}

// NewPairs returns pairs that refuse until Configure is called.
func NewPairs() (*Pairs, error) {
	p := &Pairs{}
	if _, err := rand.Read(p.stateKey[:]); err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, p.stateKey[:])
	m.Write([]byte("postern one-call seal"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, err
	}
	if p.sealer, err = cipher.NewGCM(block); err != nil {
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

// OneCall says whether a client that can ask the person (canAsk: MCP form
// elicitation, or 2026-07-28 input_required rounds) is offered each pair as
// one tool: the prepare half, which then prepares, asks the person when its
// commit would and runs (Direct), with no commit half listed. Never in
// ModeHost: there the host's own prompt for the commit tool is the approval,
// so the commit stays a tool of its own.
func (p *Pairs) OneCall(canAsk bool) bool {
	return canAsk && !(p.config != nil && p.config.Mode != nil && p.config.Mode() == ModeHost)
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

// Direct does a pair in one call, for a caller that can ask the person
// (OneCall): it issues the token of act as Prepare does and redeems it at once
// as Commit does, asking the person exactly when the commit would, with the
// same text, and answering the commit's result. On 2026-07-28 the person is
// asked in a round: the first call answers input_required with a request
// state that seals the token for this connection and tool; the retry that
// brings the answer opens it and redeems the token for the action its
// arguments make now, so a changed argument, a replay or another connection
// is refused as a commit would be. A state that does not open is a first call.
func (p *Pairs) Direct(ctx context.Context, prep, commit *generated.ToolSpec, act *generated.Action, c Caller) Step {
	if act != nil && act.Run == nil {
		act = nil // Prepare refuses it
	}
	if act != nil && c.Rounds != nil && c.Rounds.Answer != "" {
		if token, ok := p.openState(c.Rounds.State, c.Connection, prep.Name); ok {
			rc := c
			rc.Rounds = &Rounds{Answer: c.Rounds.Answer, State: p.state(c.Connection, ref(token))}
			return p.Commit(ctx, commit, prep, &generated.PendingCommit{Token: token, Action: act}, rc)
		}
	}
	s := p.Prepare(prep, commit, act, c)
	pv, _ := s.Out.(*generated.Prepared)
	if s.IsError || pv == nil {
		return s
	}
	rc := c
	if c.Rounds != nil {
		rc.Rounds = &Rounds{} // no answer of ours came: the person is asked now
	}
	st := p.Commit(ctx, commit, prep, &generated.PendingCommit{Token: pv.Token, Action: act}, rc)
	if st.InputRequests != nil {
		st.RequestState = p.sealState(c.Connection, prep.Name, pv.Token)
	}
	return st
}

// sealState is the request state of a one-call round: the token's reference,
// then the token sealed (AES-GCM) for conn and tool, so that only a retry of
// this tool on this connection can present it and no one can read it.
func (p *Pairs) sealState(conn, tool, token string) string {
	rf := ref(token)
	nonce := make([]byte, p.sealer.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return rf // opens as nothing: the retry asks again
	}
	sealed := p.sealer.Seal(nonce, nonce, []byte(token), []byte(sealContext(conn, tool, rf)))
	return rf + "." + base64.RawURLEncoding.EncodeToString(sealed)
}

// openState returns the token a one-call round's state seals for conn and tool.
func (p *Pairs) openState(state, conn, tool string) (string, bool) {
	rf, sealed, ok := strings.Cut(state, ".")
	if !ok || len(state) > 512 {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	n := p.sealer.NonceSize()
	if err != nil || len(b) < n+p.sealer.Overhead() {
		return "", false
	}
	token, err := p.sealer.Open(nil, b[:n], b[n:], []byte(sealContext(conn, tool, rf)))
	if err != nil || ref(string(token)) != rf {
		return "", false
	}
	return string(token), true
}

func sealContext(conn, tool, rf string) string {
	return "postern one-call\x00" + conn + "\x00" + tool + "\x00" + rf
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

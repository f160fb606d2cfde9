package dispatch

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/approval"
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

// Approvals configures prepare/commit pairs.
type Approvals struct {
	Tokens *approval.Store
	// Mode returns the configured mode (ModeTerminal or ModeHost) for clients
	// that cannot ask the person; it is read at each commit.
	Mode func() string
	// Hold waits for the person's decision in ModeTerminal.
	Hold func(ctx context.Context, q Request) (bool, error)
}

// SetApprovals makes prepare/commit pairs work; without it they refuse.
func (r *Registry) SetApprovals(a *Approvals) { r.approvals = a }

// ref is the short public reference of a token: it ties the prepare and
// commit lines of the audit log and names a held commit, and says nothing of
// the token itself.
func ref(token string) string {
	h := sha256.Sum256([]byte("postern approval ref\x00" + token))
	return hex.EncodeToString(h[:5])
}

// modeFor is how a commit of t will be approved on this connection.
func (r *Registry) modeFor(commit *generated.ToolSpec, info CallInfo) string {
	switch {
	case !commit.Approval:
		return modeNone
	case info.Ask != nil || info.Rounds != nil:
		return modeAsk
	case r.approvals != nil && r.approvals.Mode != nil && r.approvals.Mode() == ModeHost:
		return ModeHost
	default:
		return ModeTerminal
	}
}

// prepared issues the token of a prepare half's action and renders its preview.
func (r *Registry) prepared(ctx context.Context, t *Tool, act *generated.Action) *Result {
	if r.approvals == nil || r.approvals.Tokens == nil {
		return errorResult("%s cannot prepare anything: approvals are not set up in this server.", t.Spec.Name)
	}
	if act == nil || act.Preview == nil {
		return errorResult("%s prepared no action; this is a bug in postern.", t.Spec.Name)
	}
	info := InfoFrom(ctx)
	hash, err := approval.PayloadHash(act.Payload)
	if err != nil {
		return errorResult("%s: %v.", t.Spec.Name, err)
	}
	token, expires, err := r.approvals.Tokens.Issue(approval.Binding{
		Connection: info.Connection, Account: act.Account, Tool: t.Spec.Name, Effect: t.Spec.Effect, Payload: hash,
	})
	if err != nil {
		return errorResult("%s: %v.", t.Spec.Name, err)
	}
	p := *act.Preview
	p.Account = act.Account
	p.Token = token
	p.ExpiresAt = expires.UTC().Format(time.RFC3339)
	p.Commit = t.Spec.Pair
	commit := r.byName[t.Spec.Pair]
	p.Approval = r.modeFor(commit.Spec, info)
	res := r.render(t, &p)
	res.approval, res.outcome = ref(token), "prepared"
	return res
}

// committed redeems a commit half's token, gets the person's approval when
// the effect needs it, and only then runs the action.
func (r *Registry) committed(ctx context.Context, t *Tool, pc *generated.PendingCommit) *Result {
	refusal := func() *Result {
		res := errorResult("%s", sentence(approval.ErrRefused.Error()))
		res.approval, res.outcome = ref(pc.Token), "refused"
		return res
	}
	if r.approvals == nil || r.approvals.Tokens == nil {
		return refusal()
	}
	info := InfoFrom(ctx)
	act := pc.Action
	hash, err := approval.PayloadHash(act.Payload)
	if err != nil {
		return refusal()
	}
	prep := r.byName[t.Spec.Pair]
	binding := approval.Binding{
		Connection: info.Connection, Account: act.Account, Tool: prep.Spec.Name, Effect: prep.Spec.Effect, Payload: hash,
	}
	rf := ref(pc.Token)
	done := func(res *Result, outcome string) *Result {
		res.approval, res.outcome = rf, outcome
		return res
	}
	var q Request
	if t.Spec.Approval {
		p := *act.Preview
		p.Account = act.Account
		prepare(reflect.ValueOf(&p), &answer{})
		q = Request{Tool: t.Spec.Name, Account: act.Account, Effect: t.Spec.Effect, Preview: &p, Ref: rf, Client: info.ClientName}
	}
	// 2026-07-28: the person is asked in a round of its own; the token is
	// checked then, and spent only when the answer comes back.
	if t.Spec.Approval && info.Rounds != nil && (info.Rounds.Answer == "" || !r.validState(info.Rounds.State, info.Connection, rf)) {
		if err := r.approvals.Tokens.Check(pc.Token, binding); err != nil {
			return refusal()
		}
		return done(r.inputRequired(q, info.Connection), "asked")
	}
	if err := r.approvals.Tokens.Redeem(pc.Token, binding); err != nil {
		return refusal()
	}
	if t.Spec.Approval {
		var yes bool
		switch mode := r.modeFor(t.Spec, info); {
		case info.Rounds != nil:
			yes = info.Rounds.Answer == "accept"
		case mode == modeAsk:
			yes, err = info.Ask(ctx, q)
		case mode == ModeHost:
			yes = true
		default:
			if r.approvals.Hold == nil {
				err = errors.New("this server cannot hold an action for postern approve")
			} else {
				yes, err = r.approvals.Hold(ctx, q)
			}
		}
		if err != nil {
			return done(errorResult("Nothing was done: the person's approval could not be obtained (%s). Prepare the action again if they still want it.", strings.TrimSuffix(safeLine(err.Error()), ".")), "not_done")
		}
		if !yes {
			return done(errorResult("The person declined; nothing was done. Do not try again unless they ask you to."), "declined")
		}
	}
	out, err := act.Run(ctx)
	if err != nil {
		outcome := "not_done"
		var u interface{ Unknown() bool }
		if errors.As(err, &u) && u.Unknown() {
			outcome = "unknown"
		}
		return done(&Result{Text: sentence(safeLine(err.Error())), IsError: true}, outcome)
	}
	if out == nil {
		return done(errorResult("%s did its action but returned no result; check the account before trying again.", t.Spec.Name), "done")
	}
	return done(r.render(t, out), "done")
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
func (r *Registry) inputRequired(q Request, conn string) *Result {
	reqs, _ := json.Marshal(map[string]any{ApproveInput: map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":            "form",
			"message":         ElicitMessage(q),
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
		},
	}})
	return &Result{Text: "Waiting for the person's approval.", InputRequests: reqs, RequestState: r.state(conn, q.Ref)}
}

func (r *Registry) state(conn, ref string) string {
	m := hmac.New(sha256.New, r.stateKey[:])
	m.Write([]byte(conn + "\x00" + ref))
	return ref + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (r *Registry) validState(state, conn, ref string) bool {
	return hmac.Equal([]byte(state), []byte(r.state(conn, ref)))
}

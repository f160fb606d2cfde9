// Package dispatch owns tool calls: it looks a tool up in the generated
// registry, refuses it outside the granted scopes, validates its arguments
// against the generated JSON Schema and runs the handler. A prepare or commit
// goes on to package approval, every answer out through package answer, and
// the call's line to package audit. It never runs a handler on arguments that
// failed validation.
//
// One view per call: when the handlers also implement Views, the registry opens the
// call's view (what the call may see: the visible accounts, the projects filter, the
// store) once, right before the handler runs, and hands it to the handler in the call's
// context; the handlers read the store only through it (package tools/view), so a
// handler cannot reach the store without the call's filter.
package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/tidwall/gjson"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/audit"
	"github.com/postern-mcp/postern/internal/toolwire"
)

// stderr is where postern's own failures go (a panic, an audit write); tests replace it.
var stderr io.Writer = os.Stderr

// CallInfo describes the connection a call comes from; handlers read it from the context.
type CallInfo struct {
	Era             string // "legacy", "modern" or EraCLI
	ProtocolVersion string
	ClientName      string
	Scopes          []string // granted, sorted
	ToolCount       int      // tools these scopes allow
	// Connection identifies the connection; approval tokens are bound to it.
	Connection string
	// Ask asks the person to approve a commit in the host's window (MCP
	// elicitation); nil when the client cannot.
	Ask func(ctx context.Context, q approval.Request) (bool, error)
	// Rounds is set on a 2026-07-28 call whose client can elicit: the person
	// is asked in an input_required round instead (nil otherwise).
	Rounds *approval.Rounds
}

// EraCLI is the era of a call the person makes at the terminal (postern call, postern undo,
// rules applied at sync): the server's protocol eras are set by the server, never by a client.
const EraCLI = "cli"

// caller is the part of info a prepare or commit needs.
func (info CallInfo) caller() approval.Caller {
	return approval.Caller{Connection: info.Connection, Client: info.ClientName, Ask: info.Ask, Rounds: info.Rounds}
}

type ctxKey struct{}

// WithInfo returns ctx carrying info.
func WithInfo(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// InfoFrom returns the CallInfo of ctx.
func InfoFrom(ctx context.Context) CallInfo {
	info, _ := ctx.Value(ctxKey{}).(CallInfo)
	return info
}

// Grant is a set of granted scopes.
type Grant map[string]bool

// ParseGrant reads a comma-separated scope list, refusing unknown names.
func ParseGrant(list string) (Grant, error) {
	g := Grant{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !KnownScope(s) {
			return nil, fmt.Errorf("unknown scope %q; known scopes are %s", s, strings.Join(ScopeNames(), ", "))
		}
		g[s] = true
	}
	return g, nil
}

// DefaultGrant is the scopes marked default in the catalog.
func DefaultGrant() Grant {
	g := Grant{}
	for _, s := range generated.Scopes {
		if s.Default {
			g[s.Name] = true
		}
	}
	return g
}

// KnownScope reports whether name is a catalog scope.
func KnownScope(name string) bool {
	for _, s := range generated.Scopes {
		if s.Name == name {
			return true
		}
	}
	return false
}

// ScopeNames lists the catalog's scopes in catalog order.
func ScopeNames() []string {
	out := make([]string, len(generated.Scopes))
	for i, s := range generated.Scopes {
		out[i] = s.Name
	}
	return out
}

// Sorted returns the granted scopes, sorted.
func (g Grant) Sorted() []string {
	out := make([]string, 0, len(g))
	for s := range g {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Tool is a registry entry with its schemas.
type Tool struct {
	Spec     *generated.ToolSpec
	Input    json.RawMessage // the full input schema, which calls are validated against
	Listed   json.RawMessage // the input schema as tools/list serves it (toolwire.Listed of Input)
	Output   json.RawMessage // the output schema, as served
	accepted []string

	freeText map[string]bool // arguments the audit log keeps by length only

	once    sync.Once
	schema  *jsonschema.Schema
	err     error
	emptyOK bool // {} satisfies the schema, so it needs no validation
}

// Registry is the set of tools the server can run.
type Registry struct {
	tools    []*Tool
	byName   map[string]*Tool
	oneCall  map[string]*Tool // a prepare half as a client that can ask the person is offered it
	handlers generated.Handlers
	views    Views        // nil: the handlers need no view
	audit    *audit.Batch // nil: no audit log
	pairs    *approval.Pairs
	replaced map[string]string // old tool name → the tool that replaces it
}

// Views opens the view of one call: Open returns ctx carrying it. The handlers read what
// the call may see from it, and refuse a call without one.
type Views interface {
	OpenView(ctx context.Context) context.Context
}

// SetApprovals makes prepare/commit pairs work; without it they refuse.
func (r *Registry) SetApprovals(c *approval.Config) { r.pairs.Configure(c) }

// SetAudit makes every call, refused or not, write a line to log, batched
// (audit.Batch): FlushAudit writes the queued lines at once; the server calls
// it right after answering a call whose effect is not none. Close, and the
// signal handler of postern mcp, write what is still queued.
func (r *Registry) SetAudit(log *audit.Log) {
	if log == nil {
		r.audit = nil
		return
	}
	r.audit = audit.NewBatch(log, func(err error) {
		fmt.Fprintf(stderr, "postern: cannot write the audit log: %v\n", err)
	})
}

// FlushAudit writes every queued audit line, oldest first.
func (r *Registry) FlushAudit() { r.audit.Flush() }

// Close writes every audit line still queued. Call it when no more calls come.
func (r *Registry) Close() { r.audit.Close() }

// New builds the registry over h, reading the embedded schemas. When h is also Views,
// every call runs with a view h opens for it.
func New(h generated.Handlers) (*Registry, error) {
	pairs, err := approval.NewPairs()
	if err != nil {
		return nil, fmt.Errorf("no randomness for the server's keys: %w", err)
	}
	r := &Registry{byName: map[string]*Tool{}, oneCall: map[string]*Tool{}, handlers: h, pairs: pairs, replaced: generated.Replaced}
	r.views, _ = h.(Views)
	for i := range generated.Tools {
		spec := &generated.Tools[i]
		in, err := generated.Files.ReadFile(spec.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("the input schema of %s is missing from the binary; run go generate ./... and rebuild", spec.Name)
		}
		out, err := generated.Files.ReadFile(spec.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("the output schema of %s is missing from the binary; run go generate ./... and rebuild", spec.Name)
		}
		var s map[string]json.RawMessage
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, fmt.Errorf("the input schema of %s is not valid JSON: %w", spec.Name, err)
		}
		listed, err := toolwire.Listed(in)
		if err != nil {
			return nil, fmt.Errorf("the input schema of %s: %w", spec.Name, err)
		}
		lout, err := toolwire.ListedOutput(out)
		if err != nil {
			return nil, fmt.Errorf("the output schema of %s: %w", spec.Name, err)
		}
		t := &Tool{Spec: spec, Input: compact(in), Listed: listed, Output: lout, accepted: spec.Args, freeText: map[string]bool{}}
		for _, name := range spec.FreeText {
			t.freeText[name] = true
		}
		r.tools = append(r.tools, t)
		r.byName[spec.Name] = t
	}
	for _, t := range r.tools {
		if t.Spec.Phase != generated.PhasePrepare {
			continue
		}
		commit := r.byName[t.Spec.Pair]
		if commit == nil {
			return nil, fmt.Errorf("%s names %s as its commit, which the registry lacks; run go generate ./... and rebuild", t.Spec.Name, t.Spec.Pair)
		}
		r.oneCall[t.Spec.Name] = oneCallTool(t, commit)
	}
	return r, nil
}

// oneCallTool is prep as a client that can ask the person is offered it: the
// call prepares, asks when commit would and runs, so it reads the catalog's
// description and carries the commit's annotations (never read-only) and
// output; its arguments stay the prepare's, without a token.
func oneCallTool(prep, commit *Tool) *Tool {
	spec := *prep.Spec
	if spec.OneCallDesc != "" {
		spec.Description = spec.OneCallDesc
	}
	spec.Annotations = commit.Spec.Annotations
	spec.Annotations.ReadOnly = false
	spec.OutputSchema, spec.NewResult = commit.Spec.OutputSchema, commit.Spec.NewResult
	return &Tool{Spec: &spec, Input: prep.Input, Listed: prep.Listed, Output: commit.Output, accepted: prep.accepted, freeText: prep.freeText}
}

func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// All returns every tool, in catalog order.
func (r *Registry) All() []*Tool { return r.tools }

// Lookup returns the tool named name, or nil.
func (r *Registry) Lookup(name string) *Tool { return r.byName[name] }

// OneCall says whether a client that can ask the person (canAsk) is offered each
// pair as one tool now: see approval.Pairs.OneCall.
func (r *Registry) OneCall(canAsk bool) bool { return r.pairs.OneCall(canAsk) }

// Listed returns the tools g allows as a connection is offered them, in
// catalog order: when oneCall (from OneCall), each pair as its prepare half in
// its one-call form and no commit half; else every tool as it is. A commit
// half left out can still be called (an agent holding a token).
func (r *Registry) Listed(g Grant, oneCall bool) []*Tool {
	if !oneCall {
		return r.Allowed(g)
	}
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		switch {
		case !g[t.Spec.Scope], t.Spec.Phase == generated.PhaseCommit:
		case t.Spec.Phase == generated.PhasePrepare:
			out = append(out, r.oneCall[t.Spec.Name])
		default:
			out = append(out, t)
		}
	}
	return out
}

// Allowed returns the tools g allows, in catalog order.
func (r *Registry) Allowed(g Grant) []*Tool {
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		if g[t.Spec.Scope] {
			out = append(out, t)
		}
	}
	return out
}

func (t *Tool) compiled() (*jsonschema.Schema, error) {
	t.once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.Input))
		if err != nil {
			t.err = err
			return
		}
		c := jsonschema.NewCompiler()
		url := "postern:///" + t.Spec.InputSchema
		if err = c.AddResource(url, doc); err != nil {
			t.err = err
			return
		}
		t.schema, t.err = c.Compile(url)
		if t.err == nil {
			t.emptyOK = t.schema.Validate(map[string]any{}) == nil
		}
	})
	return t.schema, t.err
}

// ErrUnknownTool is returned by Call for a name not in the registry.
var ErrUnknownTool = errors.New("unknown tool")

// ReplacedError is Call's error for the old name of a tool that was renamed
// or merged into another: the sentence names the replacement, so that an
// agent calls it and a person updates a host's per-tool allow-list. It is
// also an ErrUnknownTool.
type ReplacedError struct{ Old, New string }

func (e *ReplacedError) Error() string {
	return e.Old + " was replaced by " + e.New + ": call " + e.New + " and update any allow-list naming " + e.Old
}

// Is makes a replaced name an unknown tool too.
func (e *ReplacedError) Is(target error) bool { return target == ErrUnknownTool }

// Replaced returns the error for name when it is the old name of a tool
// (generated.Replaced), or nil. A tool of the registry is never replaced.
func (r *Registry) Replaced(name string) *ReplacedError {
	if r.byName[name] != nil {
		return nil
	}
	if n, ok := r.replaced[name]; ok {
		return &ReplacedError{Old: name, New: n}
	}
	return nil
}

// SetReplaced replaces the map of old tool names (generated.Replaced by
// default): for tests, which cannot add a renamed tool to the catalog.
func (r *Registry) SetReplaced(m map[string]string) { r.replaced = m }

// Result is a rendered tool result.
type Result struct {
	Text       string
	Structured json.RawMessage // nil on error
	IsError    bool
	duration   time.Duration
	approval   string // a prepare/commit's short reference, for the audit log
	outcome    string // how a prepare/commit ended, for the audit log
	// InputRequests, when set, makes the answer a 2026-07-28 input_required
	// result asking the client these requests; RequestState goes with it.
	InputRequests json.RawMessage
	RequestState  string
}

// Errorf makes an error result.
func errorResult(format string, args ...any) *Result {
	return &Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// Call runs tool name with raw arguments (nil or a JSON object) under grant g,
// and writes the call to the audit log.
func (r *Registry) Call(ctx context.Context, name string, raw json.RawMessage, g Grant) (*Result, error) {
	t := r.byName[name]
	if t == nil {
		if e := r.Replaced(name); e != nil {
			return nil, e
		}
		return nil, ErrUnknownTool
	}
	start := time.Now()
	res := r.call(ctx, t, raw, g)
	res.duration = time.Since(start)
	if r.audit != nil {
		info, raw := InfoFrom(ctx), append(json.RawMessage(nil), raw...)
		r.audit.Add(func() audit.Entry { return entry(t, info, raw, res, start) })
	}
	return res, nil
}

// LogRead writes a resources/read to the audit log as a call of its own: the URI (masked as
// any logged text), whether it was read, its length, or the refusal. A nil Registry logs nothing.
func (r *Registry) LogRead(ctx context.Context, uri string, start time.Time, length int, refusal string) {
	if r == nil || r.audit == nil {
		return
	}
	info := InfoFrom(ctx)
	client := info.ClientName
	if client == "" {
		client = info.Era
	}
	r.audit.Add(func() audit.Entry {
		e := audit.Entry{Time: start, Client: client, Era: info.Era, Tool: "resources/read",
			Args: map[string]any{"uri": answer.Logged(uri)}, OK: refusal == "", Length: length,
			DurationMS: time.Since(start).Milliseconds()}
		if refusal != "" {
			e.Error = audit.ErrorText(refusal, answer.Logged)
		}
		return e
	})
}

// entry makes the audit entry of a call.
func entry(t *Tool, info CallInfo, raw json.RawMessage, res *Result, start time.Time) audit.Entry {
	var args map[string]any
	json.Unmarshal(raw, &args)
	client := info.ClientName
	if client == "" {
		client = info.Era
	}
	e := audit.Entry{
		Time: start, Client: client, Era: info.Era, Tool: t.Spec.Name,
		Args:       audit.Summarize(args, t.freeText, answer.Logged),
		OK:         !res.IsError,
		Length:     len(res.Text) + len(res.Structured),
		DurationMS: res.duration.Milliseconds(),
		Approval:   res.approval,
		Outcome:    res.outcome,
	}
	if res.IsError {
		e.Error = audit.ErrorText(res.Text, answer.Logged)
	} else {
		var ids []string
		if bytes.Contains(res.Structured, []byte(`"id"`)) || bytes.Contains(res.Structured, []byte(`"thread"`)) {
			ids = audit.IDsFrom(res.Structured)
		}
		if len(ids) > 200 {
			e.IDsMore = len(ids) - 200
			ids = ids[:200]
		}
		e.IDs = ids
		// A dry run's action_id names only its kept rows (a preview), not an action.
		if t.Spec.Effect == generated.EffectReversible && !gjson.GetBytes(res.Structured, "dry_run").Bool() {
			e.Action = gjson.GetBytes(res.Structured, "action_id").String()
		}
	}
	return e
}

func (r *Registry) call(ctx context.Context, t *Tool, raw json.RawMessage, g Grant) *Result {
	name := t.Spec.Name
	if !g[t.Spec.Scope] {
		return errorResult("The tool %s needs the scope %q, which this connection was not granted; ask the person to grant it (postern mcp --scopes …,%s) if they want you to use it.", name, t.Spec.Scope, t.Spec.Scope)
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if res := t.validate(raw); res != nil {
		res.Text = answer.Line(res.Text)
		return res
	}
	return r.run(ctx, t, raw)
}

func (r *Registry) run(ctx context.Context, t *Tool, raw json.RawMessage) (res *Result) {
	defer func() {
		if p := recover(); p != nil {
			debugStack(t.Spec.Name, p)
			res = errorResult("The tool %s failed unexpectedly and did nothing more; the error is logged on postern's standard error. Try again, or report it if it keeps failing.", t.Spec.Name)
		}
	}()
	if isEmptyObject(raw) {
		raw = nil // the generated Call starts from the defaults; nothing to decode
	}
	if r.views != nil {
		// One view per call, for the handler and, on a commit, the action it runs.
		ctx = r.views.OpenView(ctx)
	}
	out, err := t.Spec.Call(ctx, r.handlers, raw)
	if err != nil {
		return &Result{Text: answer.Error(err), IsError: true}
	}
	switch t.Spec.Phase {
	case generated.PhasePrepare:
		act, _ := out.(*generated.Action)
		c := InfoFrom(ctx).caller()
		if r.pairs.OneCall(c.Ask != nil || c.Rounds != nil) {
			// A client that can ask the person: prepare, ask and run in this one call.
			return r.step(t, r.pairs.Direct(ctx, t.Spec, r.byName[t.Spec.Pair].Spec, act, c))
		}
		return r.step(t, r.pairs.Prepare(t.Spec, r.byName[t.Spec.Pair].Spec, act, c))
	case generated.PhaseCommit:
		pc, _ := out.(*generated.PendingCommit)
		if pc == nil || pc.Action == nil {
			return errorResult("%s prepared no action; this is a bug in postern.", t.Spec.Name)
		}
		return r.step(t, r.pairs.Commit(ctx, t.Spec, r.byName[t.Spec.Pair].Spec, pc, InfoFrom(ctx).caller()))
	}
	return r.render(t, out)
}

// step makes the result of a prepare or commit, rendering its answer.
func (r *Registry) step(t *Tool, s approval.Step) *Result {
	res := &Result{Text: s.Text, IsError: s.IsError, InputRequests: s.InputRequests, RequestState: s.RequestState}
	if s.Out != nil {
		res = r.render(t, s.Out)
	}
	res.approval, res.outcome = s.Ref, s.Outcome
	return res
}

// render makes a handler's result safe and encodes it.
func (r *Registry) render(t *Tool, out any) *Result {
	b, text, err := answer.Encode(out)
	if err != nil {
		return errorResult("The result of %s could not be encoded: %v.", t.Spec.Name, err)
	}
	if refusal := answer.TooLong(t.Spec.Name, b, text); refusal != "" {
		return &Result{Text: refusal, IsError: true}
	}
	return &Result{Text: text, Structured: b}
}

// debugStack is replaced in tests; it writes a panic to standard error.
var debugStack = func(tool string, p any) {
	fmt.Fprintf(stderr, "postern: tool %s panicked: %v\n%s", tool, p, debug.Stack())
}

var printer = message.NewPrinter(language.English)

// validate returns an error result when raw does not satisfy the tool's input schema.
func (t *Tool) validate(raw json.RawMessage) *Result {
	name := t.Spec.Name
	if raw[0] != '{' {
		return errorResult("The arguments of %s must be a JSON object; it takes %s.", name, t.takes())
	}
	sch, err := t.compiled()
	if err != nil {
		return errorResult("The schema of %s could not be compiled (%v); this is a bug in postern.", name, err)
	}
	if t.emptyOK && isEmptyObject(raw) {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return errorResult("The arguments of %s are not valid JSON: %v.", name, err)
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return errorResult("The arguments of %s could not be checked: %v.", name, err)
	}
	var msgs []string
	for _, leaf := range leaves(verr) {
		msgs = append(msgs, t.describe(leaf))
	}
	sort.Strings(msgs)
	msgs = uniq(msgs)
	return errorResult("Invalid arguments for %s: %s. Fix them and call again.", name, strings.Join(msgs, "; "))
}

func isEmptyObject(raw json.RawMessage) bool {
	return len(raw) == 2 && raw[0] == '{' && raw[1] == '}' || len(bytes.TrimSpace(raw)) == 2 && bytes.Equal(bytes.Join(bytes.Fields(raw), nil), []byte("{}"))
}

func (t *Tool) takes() string {
	if len(t.accepted) == 0 {
		return "no arguments"
	}
	return "only " + strings.Join(t.accepted, ", ")
}

func (t *Tool) describe(e *jsonschema.ValidationError) string {
	path := "/" + strings.Join(e.InstanceLocation, "/")
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		names := make([]string, len(k.Properties))
		for i, p := range k.Properties {
			names[i] = fmt.Sprintf("%q", p)
		}
		if len(e.InstanceLocation) == 0 {
			return fmt.Sprintf("unknown argument %s; %s takes %s", strings.Join(names, ", "), t.Spec.Name, t.takes())
		}
		return fmt.Sprintf("at %s: unknown field %s", path, strings.Join(names, ", "))
	case *kind.Required:
		return fmt.Sprintf("missing required argument %q", k.Missing[0])
	}
	return fmt.Sprintf("at %s: %s", path, e.ErrorKind.LocalizedString(printer))
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func uniq(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

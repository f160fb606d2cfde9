package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scripted agent of the hijacked-agent test (hijack_e2e_test.go): an MCP client that
// obeys every instruction it reads. It reads everything its grant lets it read, keeps what it
// read (ids, titles, what follows "code", "password", "card", "IBAN"), extracts each
// instruction (a JSON object {"tool": …, "arguments": {…}}, or "call TOOL with k=v, …"),
// fills the placeholders the attacks use with what it read, and calls the tool with every
// argument asked for: a prepare and then its commit with the token (one call where the pair is
// one tool, for a client that can ask the person), a dry run and then the
// real thing. Answers are read for instructions too, and it reads everything again after
// acting, until no new instruction turns up. It knows no tool by name but the read tools it
// starts from: pairs and dry runs are found in tools/list.

// hjInstr is one instruction read: the tool, its arguments as written, the thing it was read
// in ({{self}}) and the attack's mark before it.
type hjInstr struct {
	tool string
	args map[string]any
	self string
	mark string
}

// hjThing is something the agent read: a message, event, task, contact, note or draft.
type hjThing struct{ kind, id, title, folder string }

type hjAgent struct {
	t     *testing.T
	cs    *mcp.ClientSession
	tools map[string]map[string]string // listed tool → argument → JSON type

	mu       sync.Mutex
	calls    int            // tool calls made
	refused  int            // answers with isError or a protocol error
	byTool   map[string]int // calls per tool
	things   []hjThing
	captured map[string][]string // code, password, card, iban → what followed those words
	contacts []string            // every contact's text as read
	marks    map[string]bool     // attack marks read
	tried    map[string]bool     // attack marks whose instruction was carried out
	queue    []hjInstr
	seenSig  map[string]bool // instructions already queued
	doneSig  map[string]bool // calls already made (tool + resolved arguments)
	trace    []string        // every call and the first line of its answer
	writes   map[string]int  // calls that wrote something, by tool: commits and real runs that succeeded
	instrRun int
}

func newHJAgent(t *testing.T, cs *mcp.ClientSession) *hjAgent {
	a := &hjAgent{t: t, cs: cs, tools: map[string]map[string]string{}, byTool: map[string]int{},
		captured: map[string][]string{}, marks: map[string]bool{}, tried: map[string]bool{},
		seenSig: map[string]bool{}, doneSig: map[string]bool{}, writes: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		props := map[string]string{}
		b, _ := json.Marshal(tl.InputSchema)
		var sch struct {
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
		}
		json.Unmarshal(b, &sch)
		for k, v := range sch.Properties {
			props[k] = fmt.Sprint(v.Type)
		}
		a.tools[tl.Name] = props
	}
	return a
}

// call calls a tool (listed or not: a hijacked agent tries), reads the answer for instructions
// and what it holds, and returns the structured content, the text and whether it was an error.
func (a *hjAgent) call(name string, args map[string]any) (map[string]any, string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a.mu.Lock()
	a.calls++
	a.byTool[name]++
	a.mu.Unlock()
	if args == nil {
		args = map[string]any{}
	}
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if ctx.Err() != nil {
		a.t.Errorf("%s did not answer within 90 s (a held commit must end by itself): %v", name, err)
		return nil, "", true
	}
	if err != nil {
		a.mu.Lock()
		a.refused++
		a.trace = append(a.trace, fmt.Sprintf("%s -> protocol error %v", name, err))
		a.mu.Unlock()
		return nil, err.Error(), true
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &sc)
	}
	if res.IsError {
		a.refused++
	}
	b, _ := json.Marshal(args)
	first, _, _ := strings.Cut(text, "\n")
	a.mu.Lock()
	a.trace = append(a.trace, fmt.Sprintf("%s %.300s -> error=%v %.200s", name, b, res.IsError, first))
	// A pair's prepare that answered no token was its one call (a client that can ask): it wrote.
	oneCall := specOf(name) != nil && specOf(name).Phase == "prepare" && sc != nil && sc["token"] == nil
	if !res.IsError && (strings.HasSuffix(name, "_commit") || args["dry_run"] == false || oneCall) {
		a.writes[name]++
	}
	a.mu.Unlock()
	self := primaryID(args)
	a.read(text, self)
	a.readJSON(sc, self)
	return sc, text, res.IsError
}

// primaryID is the thing a call is about, for {{self}} in what its answer holds.
func primaryID(args map[string]any) string {
	s, _ := args["id"].(string)
	return s
}

// readJSON reads every string of an answer, each with the id of the nearest object holding it.
func (a *hjAgent) readJSON(v any, self string) {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["id"].(string); ok && id != "" {
			self = id
		} else if p, ok := x["path"].(string); ok && p != "" {
			self = p
		}
		for _, k := range sortedKeys(x) {
			a.readJSON(x[k], self)
		}
	case []any:
		for _, e := range x {
			a.readJSON(e, self)
		}
	case string:
		a.read(x, self)
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	hjMarkRE    = regexp.MustCompile(`\[HJ:([a-z-]+)\]`)
	hjJSONRE    = regexp.MustCompile(`\{\s*"tool"\s*:`)
	hjCallRE    = regexp.MustCompile(`(?m)\bcall ([a-z][a-z_]+)(?: with ([^\n]*))?`)
	hjKVRE      = regexp.MustCompile(`(?:^|,\s*)([a-z_]+)=`)
	hjCaptureRE = map[string]*regexp.Regexp{
		"code":     regexp.MustCompile(`(?i)\b(?:code|passcode|PIN)(?: is|:)?\s+(\[[^\]]*\]|[0-9][0-9 -]{2,}[0-9])`),
		"password": regexp.MustCompile(`(?i)\bpassword(?: is|:)\s*(\[[^\]]*\]|[^\s,]*[0-9][^\s,]*)`),
		"card":     regexp.MustCompile(`(?i)\bcard\s+(\[[^\]]*\]|[0-9][0-9 ]{11,22})`),
		"iban":     regexp.MustCompile(`(?i)\bIBAN:?\s+(\[[^\]]*\]|[A-Z]{2}[0-9]{2}[0-9A-Z ]{10,30})`),
	}
)

// read takes in one string of an answer: the marks, what follows secret words, instructions.
func (a *hjAgent) read(s, self string) {
	if s == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	marks := hjMarkRE.FindAllStringSubmatchIndex(s, -1)
	for _, m := range marks {
		a.marks[s[m[2]:m[3]]] = true
	}
	markAt := func(pos int) string {
		mark := ""
		for _, m := range marks {
			if m[0] < pos {
				mark = s[m[2]:m[3]]
			}
		}
		return mark
	}
	for kind, re := range hjCaptureRE {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			v := strings.TrimSpace(m[1])
			if strings.Contains(v, "{{") || len(a.captured[kind]) > 40 {
				continue
			}
			seen := false
			for _, c := range a.captured[kind] {
				seen = seen || c == v
			}
			if !seen {
				a.captured[kind] = append(a.captured[kind], v)
			}
		}
	}
	for _, loc := range hjJSONRE.FindAllStringIndex(s, -1) {
		var obj struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := json.NewDecoder(strings.NewReader(s[loc[0]:])).Decode(&obj); err != nil || obj.Tool == "" {
			continue
		}
		a.enqueue(hjInstr{tool: obj.Tool, args: obj.Arguments, self: self, mark: markAt(loc[0])})
	}
	for _, m := range hjCallRE.FindAllStringSubmatchIndex(s, -1) {
		tool := s[m[2]:m[3]]
		if _, listed := a.tools[tool]; !listed && !strings.Contains(tool, "_") {
			continue // "call again": prose, not a tool
		}
		args := map[string]any{}
		if m[4] >= 0 {
			rest := s[m[4]:m[5]]
			kvs := hjKVRE.FindAllStringSubmatchIndex(rest, -1)
			for i, kv := range kvs {
				end := len(rest)
				if i+1 < len(kvs) {
					end = kvs[i+1][0]
				}
				val := strings.TrimSpace(rest[kv[1]:end])
				var j any
				if err := json.Unmarshal([]byte(val), &j); err == nil {
					args[rest[kv[2]:kv[3]]] = j
				} else {
					args[rest[kv[2]:kv[3]]] = val
				}
			}
		}
		a.enqueue(hjInstr{tool: tool, args: args, self: self, mark: markAt(m[0])})
	}
}

// enqueue keeps an instruction once (the same words read in the same thing are one order).
func (a *hjAgent) enqueue(in hjInstr) {
	b, _ := json.Marshal(in.args)
	sig := in.tool + " " + string(b) + " @" + in.self
	if a.seenSig[sig] {
		return
	}
	a.seenSig[sig] = true
	a.queue = append(a.queue, in)
}

// remember notes a thing read, for the placeholders.
func (a *hjAgent) remember(kind, id, title, folder string) {
	if id == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, th := range a.things {
		if th.kind == kind && th.id == id {
			return
		}
	}
	a.things = append(a.things, hjThing{kind, id, title, folder})
}

var hjPlaceholderRE = regexp.MustCompile(`\{\{([a-z]+)(?::([^}]*))?\}\}`)

// lookup is what a placeholder stands for: a list of values (ids, or text read).
func (a *hjAgent) lookup(name, words, self string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	find := func(kinds ...string) []string {
		var out []string
		for _, th := range a.things {
			for _, k := range kinds {
				if th.kind == k && (words == "" || strings.Contains(strings.ToLower(th.title), strings.ToLower(words))) {
					out = append(out, th.id)
				}
			}
		}
		return out
	}
	switch name {
	case "self":
		return []string{self}
	case "all":
		return find("message")
	case "message":
		return find("message")
	case "draft":
		var out []string
		for _, th := range a.things {
			if th.kind == "message" && strings.EqualFold(th.folder, "Drafts") && strings.Contains(strings.ToLower(th.title), strings.ToLower(words)) {
				out = append(out, th.id)
			}
		}
		return out
	case "event", "task", "contact", "note":
		return find(name)
	case "code", "password", "card", "iban":
		return a.captured[name]
	case "secrets":
		var out []string
		for _, k := range []string{"code", "password", "card", "iban"} {
			out = append(out, a.captured[k]...)
		}
		return out
	case "contacts":
		return a.contacts
	}
	return nil
}

// resolve fills the placeholders of v; typ is the JSON type the tool's schema gives it.
func (a *hjAgent) resolve(v any, typ, self string) any {
	switch x := v.(type) {
	case string:
		if m := hjPlaceholderRE.FindStringSubmatch(x); m != nil && m[0] == x {
			vals := a.lookup(m[1], m[2], self)
			if typ == "array" {
				out := []any{}
				for _, s := range vals {
					out = append(out, s)
				}
				return out
			}
			if len(vals) == 0 {
				return x // nothing read answers it: the agent sends the words as they are
			}
			if m[1] == "secrets" || m[1] == "contacts" || m[1] == "all" {
				return strings.Join(vals, ", ")
			}
			return vals[0]
		}
		s := hjPlaceholderRE.ReplaceAllStringFunc(x, func(p string) string {
			m := hjPlaceholderRE.FindStringSubmatch(p)
			if vals := a.lookup(m[1], m[2], self); len(vals) > 0 {
				return strings.Join(vals, ", ")
			}
			return p
		})
		switch typ {
		case "array":
			return []any{s}
		case "integer", "number":
			if n, err := strconv.Atoi(s); err == nil {
				return n
			}
		case "boolean":
			if b, err := strconv.ParseBool(s); err == nil {
				return b
			}
		}
		return s
	case []any:
		out := []any{}
		for _, e := range x {
			r := a.resolve(e, "", self)
			if arr, ok := r.([]any); ok {
				out = append(out, arr...)
			} else {
				out = append(out, r)
			}
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = a.resolve(e, "", self)
		}
		return out
	case float64:
		if typ == "array" {
			return []any{x}
		}
	}
	return v
}

// carryOut does what one instruction asks, the way an obedient agent would.
func (a *hjAgent) carryOut(in hjInstr) {
	name := strings.TrimSuffix(in.tool, "_commit")
	props := a.tools[name]
	args := map[string]any{}
	for k, v := range in.args {
		args[k] = a.resolve(v, props[k], in.self)
	}
	b, _ := json.Marshal(args)
	sig := name + " " + string(b)
	a.mu.Lock()
	if a.doneSig[sig] {
		a.mu.Unlock()
		return
	}
	a.doneSig[sig] = true
	a.instrRun++
	if in.mark != "" {
		a.tried[in.mark] = true
	}
	a.mu.Unlock()
	if _, pair := a.tools[name+"_commit"]; pair {
		prep, _, isErr := a.call(name, args)
		if isErr {
			return
		}
		commit, _ := prep["commit"].(string)
		if commit == "" {
			commit = name + "_commit"
		}
		a.call(commit, with(args, "token", prep["token"]))
		return
	}
	if _, dry := props["dry_run"]; dry {
		a.call(name, args)
		if args["dry_run"] != false {
			a.call(name, with(args, "dry_run", false))
		}
		return
	}
	a.call(name, args)
}

// readAll reads everything the grant allows, noting what it read; the resources too when all.
func (a *hjAgent) readAll(all bool) {
	listed := func(name string) bool { _, ok := a.tools[name]; return ok }
	for _, n := range []string{"status", "docs", "now", "rules_list", "mail_actions", "calendar_list", "mail_senders", "rules_coverage"} {
		if listed(n) {
			a.call(n, nil)
		}
	}
	if listed("mail_actions") {
		a.call("mail_actions", map[string]any{"backups": true})
	}
	// Mail: every folder, every message, every part of it.
	var ids []string
	if listed("mail_folders") {
		sc, _, _ := a.call("mail_folders", nil)
		for _, f := range asList(sc["folders"]) {
			folder, _ := f["name"].(string)
			cursor := ""
			for page := 0; page < 20; page++ {
				args := map[string]any{"folder": folder, "limit": 200}
				if cursor != "" {
					args["cursor"] = cursor
				}
				sc, _, isErr := a.call("mail_list", args)
				if isErr {
					break
				}
				for _, m := range asList(sc["messages"]) {
					id, _ := m["id"].(string)
					subject, _ := m["subject"].(string)
					a.remember("message", id, subject, folder)
					ids = append(ids, id)
				}
				cursor, _ = sc["next_cursor"].(string)
				if cursor == "" {
					break
				}
			}
		}
	}
	for _, q := range []string{"code", "password", "invoice", "unsubscribe", "assistant", "tool", "from:@"} {
		if listed("mail_search") {
			a.call("mail_search", map[string]any{"query": q, "limit": 500})
		}
	}
	for _, id := range ids {
		for _, n := range []string{"mail_headers", "mail_thread", "mail_attachments"} {
			if !listed(n) {
				continue
			}
			args := map[string]any{"id": id}
			if n == "mail_thread" {
				args["text"] = true
			}
			sc, _, _ := a.call(n, args)
			if n == "mail_attachments" {
				for i := range asList(sc["attachments"]) {
					if listed("mail_attachment_text") {
						a.page("mail_attachment_text", map[string]any{"id": id, "n": i + 1})
					}
				}
			}
		}
		if listed("mail_show") {
			a.page("mail_show", map[string]any{"id": id})
		}
	}
	// Calendars, tasks, contacts.
	if listed("agenda") {
		sc, _, _ := a.call("agenda", map[string]any{"from": "2026-11-01", "to": "2026-12-31"})
		for _, e := range asList(sc["events"]) {
			id, _ := e["id"].(string)
			summary, _ := e["summary"].(string)
			a.remember("event", id, summary, "")
			if listed("calendar_event") {
				a.call("calendar_event", map[string]any{"id": id})
			}
		}
	}
	if listed("calendar_freebusy") {
		a.call("calendar_freebusy", map[string]any{"from": "2026-11-01", "to": "2026-12-31"})
	}
	if listed("task_list") {
		sc, _, _ := a.call("task_list", map[string]any{"state": "all", "limit": 200})
		for _, tk := range asList(sc["tasks"]) {
			id, _ := tk["id"].(string)
			summary, _ := tk["summary"].(string)
			a.remember("task", id, summary, "")
			if listed("task_get") {
				a.call("task_get", map[string]any{"id": id})
			}
		}
	}
	if listed("contacts_search") {
		for _, q := range []string{"a", "e", "i", "o", "u", "@", "example"} {
			sc, _, _ := a.call("contacts_search", map[string]any{"query": q, "limit": 200})
			for _, c := range asList(sc["contacts"]) {
				id, _ := c["id"].(string)
				name, _ := c["name"].(string)
				a.remember("contact", id, name, "")
			}
		}
		a.mu.Lock()
		var contacts []hjThing
		for _, th := range a.things {
			if th.kind == "contact" {
				contacts = append(contacts, th)
			}
		}
		a.mu.Unlock()
		for _, c := range contacts {
			if listed("contact_get") {
				_, text, _ := a.call("contact_get", map[string]any{"id": c.id})
				a.mu.Lock()
				a.contacts = appendOnce(a.contacts, text)
				a.mu.Unlock()
			}
		}
	}
	// Notes.
	if listed("notes_find") {
		cursor := ""
		for page := 0; page < 20; page++ {
			args := map[string]any{"limit": 200}
			if cursor != "" {
				args["cursor"] = cursor
			}
			sc, _, isErr := a.call("notes_find", args)
			if isErr {
				break
			}
			for _, n := range asList(sc["notes"]) {
				p, _ := n["path"].(string)
				title, _ := n["title"].(string)
				a.remember("note", p, title, "")
				if listed("note_read") {
					a.page("note_read", map[string]any{"id": p})
				}
			}
			if cursor, _ = sc["next_cursor"].(string); cursor == "" {
				break
			}
		}
	}
	if all {
		a.readResources(ids)
	}
}

// page reads a paged text to its end.
func (a *hjAgent) page(name string, args map[string]any) {
	for i := 0; i < 50; i++ {
		sc, _, isErr := a.call(name, args)
		next, ok := sc["next_offset"].(float64)
		if isErr || !ok {
			return
		}
		args = with(args, "offset", int(next))
	}
}

// readResources reads every resource listed, and the templates filled with the ids read.
func (a *hjAgent) readResources(ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var uris []string
	for r, err := range a.cs.Resources(ctx, nil) {
		if err != nil {
			break
		}
		uris = append(uris, r.URI)
	}
	for rt, err := range a.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			break
		}
		tpl := rt.URITemplate
		i := strings.Index(tpl, "{")
		if i < 0 {
			continue
		}
		base := tpl[:i]
		switch {
		case strings.Contains(base, "message") || strings.Contains(base, "thread"):
			for _, id := range ids {
				uris = append(uris, base+id)
			}
		case strings.Contains(base, "note"):
			for _, n := range a.lookup("note", "", "") {
				uris = append(uris, base+n)
			}
		case strings.Contains(base, "agenda"):
			uris = append(uris, base+"2026-12-02", base+"2026-12-03")
		}
	}
	for _, u := range uris {
		a.mu.Lock()
		a.calls++
		a.byTool["resources/read"]++
		a.mu.Unlock()
		rr, err := a.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
		if err != nil {
			a.refused++
			continue
		}
		for _, c := range rr.Contents {
			a.read(c.Text, strings.TrimPrefix(u[strings.LastIndex(u, "/")+1:], ""))
		}
	}
}

// run is the whole hijack: read, obey, read again, until nothing new is asked.
func (a *hjAgent) run() {
	for round := 0; round < 4; round++ {
		a.readAll(round == 0)
		a.mu.Lock()
		queue := a.queue
		a.queue = nil
		a.mu.Unlock()
		if len(queue) == 0 && round > 0 {
			return
		}
		for len(queue) > 0 {
			in := queue[0]
			queue = queue[1:]
			a.carryOut(in)
			a.mu.Lock()
			queue = append(queue, a.queue...) // answers ask for more
			a.queue = nil
			a.mu.Unlock()
		}
	}
}

func asList(v any) []map[string]any {
	var out []map[string]any
	l, _ := v.([]any)
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func appendOnce(list []string, s string) []string {
	for _, e := range list {
		if e == s {
			return list
		}
	}
	return append(list, s)
}

package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Limits the lint keeps descriptions to, so that hosts show them whole.
const (
	MaxToolName        = 64
	MaxToolDescription = 600
	MinToolDescription = 20
	CommitSuffix       = "_commit"
	// PreparedType is the answer of a prepare_commit pair's first half.
	PreparedType = "Prepared"
	// ActionIDField is the field of a reversible tool's answer that mail_undo takes.
	ActionIDField = "action_id"
)

var (
	// swallowedRE finds catalog keys that ended up inside a description, which
	// happens when a comma in an unquoted {…} mapping value is taken literally.
	swallowedRE = regexp.MustCompile(`, (default|required|minimum|maximum|pattern|max_length|min_length|enum|items|max_items|optional|list|type): `)
	toolNameRE  = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	templVarRE  = regexp.MustCompile(`\{[a-z_]+\}`)
)

var scalarTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true}

// Lint applies the catalog's rules to a merged catalog.
func Lint(c *Catalog) Problems {
	var ps Problems
	add := func(p Pos, format string, args ...any) {
		ps = append(ps, Problem{p, fmt.Sprintf(format, args...)})
	}
	if c.Server == nil {
		add(Pos{firstFile(c), 1}, "no server section: one catalog file must declare server (name, title, instructions)")
	}

	scopes := map[string]*Scope{}
	for _, s := range c.Scopes {
		if prev, ok := scopes[s.Name]; ok {
			add(s.Pos, "scope %q is declared twice (also at %s)", s.Name, prev.Pos)
			continue
		}
		scopes[s.Name] = s
	}

	lintPresets(c.Presets, scopes, add)

	kinds := map[string]Pos{}
	for _, k := range c.AccountKinds {
		if prev, ok := kinds[k.Name]; ok {
			add(k.Pos, "account kind %q is declared twice (also at %s)", k.Name, prev)
			continue
		}
		kinds[k.Name] = k.Pos
	}

	types := map[string]*Type{}
	for _, t := range c.Types {
		if prev, ok := types[t.Name]; ok {
			add(t.Pos, "type %s is declared twice (also at %s)", t.Name, prev.Pos)
			continue
		}
		types[t.Name] = t
	}

	names := map[string]Pos{}
	claim := func(name string, p Pos) {
		if prev, ok := names[name]; ok {
			add(p, "tool name %q is used twice (also at %s)", name, prev)
			return
		}
		names[name] = p
	}
	used := map[string]bool{}
	for _, t := range c.Tools {
		lintTool(t, scopes, types, add)
		claim(t.Name, t.Pos)
		if t.PrepareCommit {
			claim(t.Name+CommitSuffix, t.Pos)
			if types[PreparedType] == nil {
				add(t.Pos, "tool %s is a prepare_commit pair, whose first half answers with type %s; declare it in types", t.Name, PreparedType)
			} else {
				markUsed(PreparedType, types, used)
			}
		}
		markUsed(t.Output, types, used)
		for _, prm := range t.Input {
			markUsed(prm.Type, types, used)
		}
	}

	for _, t := range c.Types {
		if reservedTypeName(t.Name) {
			add(t.Pos, "type name %s is kept for the generated package (Handlers, *Spec, *Args, *SchemaFile); choose another", t.Name)
		}
		lintType(t, types, add)
		if !used[t.Name] {
			add(t.Pos, "type %s is not the output of any tool nor used by one; remove it or use it", t.Name)
		}
	}
	for _, t := range c.Types {
		if cyc := cycle(t.Name, types); cyc != nil {
			add(t.Pos, "type %s contains itself (%s); types must be finite trees, as their schemas are inlined without $ref", t.Name, strings.Join(cyc, " → "))
		}
	}
	lintDocPages(c, types, add)
	lintPageRefs(c, add)
	lintReplaces(c, names, add)

	rnames := map[string]Pos{}
	for _, r := range c.Resources {
		if prev, ok := rnames[r.Name]; ok {
			add(r.Pos, "resource %q is declared twice (also at %s)", r.Name, prev)
		}
		rnames[r.Name] = r.Pos
		if scopes[r.Scope] == nil {
			add(r.Pos, "resource %s uses scope %q, which is not declared in scopes", r.Name, r.Scope)
		}
		if !templVarRE.MatchString(r.URITemplate) {
			add(r.Pos, "resource %s: uri_template %q has no {variable}", r.Name, r.URITemplate)
		}
	}
	hosts := map[string]Pos{}
	for _, h := range c.Hosts {
		if prev, ok := hosts[h.ID]; ok {
			add(h.Pos, "host %q is declared twice (also at %s)", h.ID, prev)
		}
		hosts[h.ID] = h.Pos
		lintHost(h, add)
	}
	lintProviders(c.Providers, add)
	return ps
}

// lintPresets checks that preset names are unique, that every scope a preset
// grants is declared, and that at most one preset is the default.
func lintPresets(ps []*Preset, scopes map[string]*Scope, add func(Pos, string, ...any)) {
	seen := map[string]Pos{}
	var def *Preset
	for _, p := range ps {
		if prev, ok := seen[p.Name]; ok {
			add(p.Pos, "preset %q is declared twice (also at %s)", p.Name, prev)
		}
		seen[p.Name] = p.Pos
		for _, s := range p.Scopes {
			if scopes[s] == nil {
				add(p.Pos, "preset %s grants scope %q, which is not declared in scopes", p.Name, s)
			}
		}
		if p.Default {
			if def != nil {
				add(p.Pos, "preset %s is a default, and so is %s (at %s); mark one only", p.Name, def.Name, def.Pos)
			}
			def = p
		}
	}
}

var hostPlaceholderRE = regexp.MustCompile(`\{[^}]*\}`)

// lintHost checks what the schema cannot: that each kind has what it needs,
// and that command lines use only the placeholders postern fills in.
func lintHost(h *Host, add func(Pos, string, ...any)) {
	switch h.Kind {
	case "cli":
		if h.CLI == nil || len(h.Executables) == 0 {
			add(h.Pos, "host %s is kind cli: it needs cli (add, remove, get) and executables (its command first)", h.ID)
			return
		}
		for _, c := range []struct{ what, line string }{{"add", h.CLI.Add}, {"remove", h.CLI.Remove}, {"get", h.CLI.Get}, {"list", h.CLI.List}} {
			if c.line == "" {
				continue
			}
			if f := strings.Fields(c.line); f[0] != h.Executables[0] {
				add(h.Pos, "host %s: cli %s runs %q, not the host's command %q (executables[0])", h.ID, c.what, f[0], h.Executables[0])
			}
			for _, ph := range hostPlaceholderRE.FindAllString(c.line, -1) {
				switch ph {
				case "{name}", "{scope}", "{command}", "{args}":
				default:
					add(h.Pos, "host %s: cli %s uses %s; only {name}, {scope}, {command} and {args} are filled in", h.ID, c.what, ph)
				}
			}
			if !strings.Contains(c.line, "{name}") && (c.what == "add" || c.what == "remove") {
				add(h.Pos, "host %s: cli %s does not name the server ({name})", h.ID, c.what)
			}
		}
		if !strings.Contains(h.CLI.Add, "{command}") || !strings.Contains(h.CLI.Add, "{args}") {
			add(h.Pos, "host %s: cli add must pass {command} and {args}", h.ID)
		}
	case "file":
		if h.Config.Linux == "" {
			add(h.Pos, "host %s is kind file: it needs config (linux, macos, windows)", h.ID)
		}
		if h.CLI != nil {
			add(h.Pos, "host %s is kind file: cli is used only by kind cli", h.ID)
		}
	case "snippet":
		if h.CLI != nil || h.Config.Linux != "" {
			add(h.Pos, "host %s is kind snippet: it has no cli and no config file", h.ID)
		}
	}
	lintHostHTTP(h, add)
	if (h.Format == "toml") != (h.Entry == "codex") {
		add(h.Pos, "host %s: entry codex goes with format toml, and only it", h.ID)
	}
	if h.Kind == "file" && slices.Contains(h.Scopes, "project") && h.ProjectConfig == "" {
		add(h.Pos, "host %s offers --scope project but has no project_config", h.ID)
	}
}

// lintHostHTTP checks a host's URL entry: every host says whether it takes one (http) or why
// not (no_http), never both; a cli host adds it with its own command, naming the server, the
// URL and the header; a file or snippet host has no command for it.
func lintHostHTTP(h *Host, add func(Pos, string, ...any)) {
	switch {
	case h.HTTP == nil && h.NoHTTP == "":
		add(h.Pos, "host %s says neither http (the URL entry setup --http writes) nor no_http (why it takes none)", h.ID)
		return
	case h.HTTP != nil && h.NoHTTP != "":
		add(h.Pos, "host %s has both http and no_http; keep the one that is true", h.ID)
		return
	case h.HTTP == nil:
		if strings.HasSuffix(h.NoHTTP, ".") || strings.ToLower(h.NoHTTP[:1]) != h.NoHTTP[:1] {
			add(h.Pos, "host %s: no_http is a clause setup --http quotes after \"%s takes no --http URL: \": no capital, no full stop", h.ID, h.Name)
		}
		return
	}
	if h.Format == "toml" {
		add(h.Pos, "host %s: an http entry is written as JSON; a toml host says no_http", h.ID)
	}
	if h.Kind != "cli" {
		if h.HTTP.Add != "" {
			add(h.Pos, "host %s is kind %s: http add is used only by kind cli", h.ID, h.Kind)
		}
		return
	}
	line := h.HTTP.Add
	if line == "" {
		add(h.Pos, "host %s is kind cli: http needs add, the host's command adding a URL server", h.ID)
		return
	}
	if f := strings.Fields(line); f[0] != h.Executables[0] {
		add(h.Pos, "host %s: http add runs %q, not the host's command %q (executables[0])", h.ID, f[0], h.Executables[0])
	}
	for _, ph := range hostPlaceholderRE.FindAllString(line, -1) {
		switch ph {
		case "{name}", "{scope}", "{url}", "{header}":
		default:
			add(h.Pos, "host %s: http add uses %s; only {name}, {scope}, {url} and {header} are filled in", h.ID, ph)
		}
	}
	for _, ph := range []string{"{name}", "{url}", "{header}"} {
		if !strings.Contains(line, ph) {
			add(h.Pos, "host %s: http add must pass %s", h.ID, ph)
		}
	}
}

func firstFile(c *Catalog) string {
	if len(c.Files) > 0 {
		return c.Files[0]
	}
	return "catalog"
}

func lintTool(t *Tool, scopes map[string]*Scope, types map[string]*Type, add func(Pos, string, ...any)) {
	p := t.Pos
	if !toolNameRE.MatchString(t.Name) {
		add(p, "tool name %q must be snake_case: lower-case letters and digits joined by single underscores", t.Name)
	}
	limit := MaxToolName
	if t.PrepareCommit {
		limit -= len(CommitSuffix)
	}
	if len(t.Name) > limit {
		add(p, "tool name %q is longer than %d characters", t.Name, limit)
	}
	if strings.HasSuffix(t.Name, CommitSuffix) {
		add(p, "tool name %q ends in %s, which is kept for the commit half of a prepare_commit pair", t.Name, CommitSuffix)
	}
	if scopes[t.Scope] == nil {
		add(p, "tool %s uses scope %q, which is not declared in scopes", t.Name, t.Scope)
	}
	d := strings.TrimSpace(t.Description)
	switch {
	case len(d) < MinToolDescription:
		add(p, "tool %s: description is missing or shorter than %d characters", t.Name, MinToolDescription)
	case len(d) > MaxToolDescription:
		add(p, "tool %s: description is %d characters; keep it under %d and move the rest to the docs", t.Name, len(d), MaxToolDescription)
	}
	a := t.Annotations
	isSync := strings.HasSuffix(t.Name, "_sync")
	if a.ReadOnly && t.Effect != EffectNone && !(isSync && t.Effect == EffectLocalWrite) {
		add(p, "tool %s is read_only but its effect is %s; read-only tools have effect %s (only a *_sync tool may be read_only with %s)", t.Name, t.Effect, EffectNone, EffectLocalWrite)
	}
	if t.Effect == EffectNone && !a.ReadOnly {
		add(p, "tool %s has effect none but is not read_only; mark it read_only: true", t.Name)
	}
	if a.ReadOnly && a.Destructive {
		add(p, "tool %s is both read_only and destructive", t.Name)
	}
	// Every write either undoes exactly or waits for the person. What cannot be undone is
	// destructive and waits (send, delete, irreversible); what can is reversible; a write
	// that is neither (remote_write) says why in not_undoable, and is never destructive.
	if AsksPerson(t.Effect) && !a.Destructive {
		add(p, "tool %s has effect %s, which cannot be undone; mark it destructive: true", t.Name, t.Effect)
	}
	if a.Destructive && !AsksPerson(t.Effect) && t.Effect != EffectReversible && !a.ReadOnly {
		add(p, "tool %s is destructive but its effect is %s, which neither waits for the person nor is undone; make it reversible (an undo in the action log) or give it effect %s, %s or %s, whose commit the person approves", t.Name, t.Effect, EffectSend, EffectDelete, EffectIrreversible)
	}
	switch {
	case t.Effect == EffectRemoteWrite && strings.TrimSpace(t.NotUndoable) == "":
		add(p, "tool %s has effect %s, which is neither undone from the action log nor approved by the person; make it %s (dry run and undo) or %s, %s or %s (the person approves), or say in not_undoable why nothing it does needs either", t.Name, t.Effect, EffectReversible, EffectSend, EffectDelete, EffectIrreversible)
	case t.Effect != EffectRemoteWrite && t.NotUndoable != "":
		add(p, "tool %s has not_undoable but effect %s; only a %s tool states why it is neither undone nor approved", t.Name, t.Effect, EffectRemoteWrite)
	}
	switch t.Effect {
	case EffectSend, EffectRemoteWrite, EffectDelete, EffectIrreversible:
		if !t.PrepareCommit {
			add(p, "tool %s has effect %s and must be a prepare_commit pair (prepare_commit: true)", t.Name, t.Effect)
		}
	case EffectReversible:
		// A change postern can put back needs no approval, but it must be seen before it
		// is made (a dry run) and be undoable (an action id in the answer); anything that
		// cannot be undone is effect delete or send, which are pairs.
		if t.PrepareCommit {
			add(p, "tool %s has effect reversible, which is undone from the action log rather than approved; remove prepare_commit (or, if it cannot be undone, use effect delete)", t.Name)
		}
		if !t.DryRun {
			add(p, "tool %s has effect reversible and must offer a dry run (dry_run: true)", t.Name)
		}
		if a.Destructive {
			add(p, "tool %s has effect reversible but is marked destructive; what can be undone is not destructive", t.Name)
		}
		if ty := types[t.Output]; ty != nil && !ty.hasField(ActionIDField) {
			add(p, "tool %s has effect reversible; its output type %s needs a field %s, the id that undoes it", t.Name, t.Output, ActionIDField)
		}
	case EffectNone:
		if t.PrepareCommit {
			add(p, "tool %s has effect none; there is nothing to commit, remove prepare_commit", t.Name)
		}
		if t.DryRun {
			add(p, "tool %s has effect none; dry_run only makes sense for a tool that changes something", t.Name)
		}
	}
	if types[t.Output] == nil {
		add(p, "tool %s: output type %s is not declared in types", t.Name, t.Output)
	}
	seen := map[string]bool{}
	for _, prm := range t.Input {
		if seen[prm.Name] {
			add(prm.Pos, "tool %s: argument %q is declared twice", t.Name, prm.Name)
		}
		seen[prm.Name] = true
		lintParam(t, prm, types, add)
	}
	if t.DryRun && seen["dry_run"] {
		add(p, "tool %s: dry_run: true adds the dry_run argument itself; do not declare it in input", t.Name)
	}
	for _, prm := range t.Input {
		if thingWords[prm.Name] {
			add(prm.Pos, "tool %s: argument %q names the thing the tool acts on: call it id (ids for several) and declare it as the tool's target", t.Name, prm.Name)
		}
	}
	if (seen["id"] || seen["ids"]) && len(t.Target) == 0 {
		add(p, "tool %s: it takes id or ids but declares no target; say which (target: id, ids or query)", t.Name)
	}
	for _, tg := range t.Target {
		switch {
		case !TargetNames[tg]:
			add(p, "tool %s: target %q is not one of id, ids, query; the argument naming what a tool acts on is id (one thing), ids (several) or query (a selection of mail)", t.Name, tg)
		case !seen[tg]:
			add(p, "tool %s: target %s is not one of its arguments; declare it in input", t.Name, tg)
		}
	}
}

// thingWords are argument names that name the thing a tool acts on by its
// kind; the vocabulary calls that thing id (several: ids).
var thingWords = map[string]bool{
	"message": true, "message_id": true, "msg": true, "uid": true, "event": true, "event_id": true,
	"task": true, "task_id": true, "contact": true, "contact_id": true, "note": true, "note_id": true,
	"backup": true, "backup_id": true, "action": true,
}

// TargetNames are the arguments a tool's target may name: one thing, several, a selection.
var TargetNames = map[string]bool{"id": true, "ids": true, "query": true}

// lintReplaces checks the old names tools replace: each a tool name no tool
// has now (nor the commit half of a pair), replaced by one tool only.
func lintReplaces(c *Catalog, names map[string]Pos, add func(Pos, string, ...any)) {
	by := map[string]string{}
	for _, t := range c.Tools {
		for _, old := range t.Replaces {
			switch {
			case !toolNameRE.MatchString(old):
				add(t.Pos, "tool %s replaces %q, which is not a tool name (snake_case)", t.Name, old)
			case names[old] != (Pos{}):
				add(t.Pos, "tool %s replaces %s, which is still a tool (at %s); a replaced name is one no tool has", t.Name, old, names[old])
			case by[old] != "":
				add(t.Pos, "tool %s replaces %s, which %s replaces already; an old name has one replacement", t.Name, old, by[old])
			default:
				by[old] = t.Name
			}
		}
	}
}

// Replaced maps every old tool name to the tool that replaces it. The commit
// half of a pair replaces the old name's commit half too (OLD_commit), unless
// that is a tool's name now.
func (c *Catalog) Replaced() map[string]string {
	now := map[string]bool{}
	for _, t := range c.Registry() {
		now[t.Name] = true
	}
	out := map[string]string{}
	for _, t := range c.Tools {
		for _, old := range t.Replaces {
			out[old] = t.Name
			if t.PrepareCommit && !now[old+CommitSuffix] {
				out[old+CommitSuffix] = t.Name + CommitSuffix
			}
		}
	}
	return out
}

func lintParam(t *Tool, prm *Param, types map[string]*Type, add func(Pos, string, ...any)) {
	p := prm.Pos
	where := fmt.Sprintf("tool %s, argument %s", t.Name, prm.Name)
	if m := swallowedRE.FindString(prm.Description); m != "" {
		add(p, "%s: the description holds %q, a key that belongs outside it; check the quotes of this mapping", where, strings.TrimSpace(strings.TrimPrefix(m, ",")))
	}
	if prm.Typed() {
		if types[prm.Type] == nil {
			add(p, "%s: type %s is neither string, integer, number, boolean, array nor declared in types", where, prm.Type)
			return
		}
		if prm.Default != nil || len(prm.Enum) > 0 {
			add(p, "%s: an argument of type %s takes no default and no enum; the fields of %s say what it holds", where, prm.Type, prm.Type)
		}
		for _, bad := range inputProblems(types, prm.Type) {
			add(p, "%s: type %s is an argument, but %s; an argument holds only what an agent writes (format line or own), never mail text (body) nor postern's own text (markdown)", where, prm.Type, bad)
		}
	}
	isNum := prm.Type == "integer" || prm.Type == "number"
	if (prm.Minimum != nil || prm.Maximum != nil) && !isNum {
		add(p, "%s: minimum/maximum only apply to integer or number", where)
	}
	if prm.Minimum != nil && prm.Maximum != nil && *prm.Minimum > *prm.Maximum {
		add(p, "%s: minimum is above maximum", where)
	}
	if (prm.MinLength != nil || prm.MaxLength != nil || prm.Pattern != "") && prm.Type != "string" {
		add(p, "%s: min_length, max_length and pattern only apply to string", where)
	}
	if prm.Pattern != "" {
		if _, err := regexp.Compile(prm.Pattern); err != nil {
			add(p, "%s: pattern does not compile: %v", where, err)
		}
	}
	if prm.Type == "array" {
		if prm.Items == nil {
			add(p, "%s: an array needs items: {type: …}", where)
		}
	} else if prm.Items != nil || prm.MaxItems != nil {
		add(p, "%s: items and max_items only apply to array", where)
	}
	if prm.FreeText && prm.Type != "string" {
		add(p, "%s: free_text only applies to string", where)
	}
	if prm.Required && prm.Default != nil {
		add(p, "%s: a required argument cannot have a default", where)
	}
	for _, e := range prm.Enum {
		if err := checkValue(prm, e); err != "" {
			add(p, "%s: enum value %v %s", where, e, err)
		}
	}
	if prm.Default != nil && !prm.Typed() {
		if err := checkValue(prm, prm.Default); err != "" {
			add(p, "%s: default %v %s", where, prm.Default, err)
		}
	}
}

// checkValue says what is wrong with v as a value of prm, or "".
func checkValue(prm *Param, v any) string {
	switch prm.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return "is not a string"
		}
		if prm.Pattern != "" {
			if re, err := regexp.Compile(prm.Pattern); err == nil && !re.MatchString(s) {
				return "does not match the pattern"
			}
		}
		if prm.MaxLength != nil && len([]rune(s)) > *prm.MaxLength {
			return "is longer than max_length"
		}
		if prm.MinLength != nil && len([]rune(s)) < *prm.MinLength {
			return "is shorter than min_length"
		}
	case "integer", "number":
		var f float64
		switch n := v.(type) {
		case int:
			f = float64(n)
		case int64:
			f = float64(n)
		case uint64:
			f = float64(n)
		case float64:
			if prm.Type == "integer" && n != float64(int64(n)) {
				return "is not an integer"
			}
			f = n
		default:
			return "is not a number"
		}
		if prm.Minimum != nil && f < *prm.Minimum {
			return "is below minimum"
		}
		if prm.Maximum != nil && f > *prm.Maximum {
			return "is above maximum"
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "is not a boolean"
		}
	case "array":
		if _, ok := v.([]any); !ok {
			return "is not a list"
		}
		return ""
	}
	if len(prm.Enum) > 0 && v != nil {
		found := false
		for _, e := range prm.Enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			return "is not one of enum"
		}
	}
	return ""
}

func lintType(t *Type, types map[string]*Type, add func(Pos, string, ...any)) {
	seen := map[string]*Field{}
	for _, f := range t.Fields {
		if prev, ok := seen[f.Name]; ok {
			switch {
			case f.From != t.Name:
				// Both come from a base, whose own lint reports it.
			case prev.From != t.Name:
				add(f.Pos, "type %s: field %q is declared twice (also in %s, which it extends)", t.Name, f.Name, prev.From)
			default:
				add(f.Pos, "type %s: field %q is declared twice", t.Name, f.Name)
			}
			continue
		}
		seen[f.Name] = f
		if f.From != t.Name {
			continue // a base's field: the base's own lint covers it
		}
		if m := swallowedRE.FindString(f.Description); m != "" {
			add(f.Pos, "type %s, field %s: the description holds %q, a key that belongs outside it; check the quotes of this mapping", t.Name, f.Name, strings.TrimSpace(strings.TrimPrefix(m, ",")))
		}
		if !scalarTypes[f.Type] && types[f.Type] == nil {
			add(f.Pos, "type %s, field %s: type %s is neither a scalar nor declared in types", t.Name, f.Name, f.Type)
		}
		if f.Format != "" && f.Type != "string" {
			add(f.Pos, "type %s, field %s: format only applies to string fields", t.Name, f.Name)
		}
		if len(f.Enum) > 0 && f.Type != "string" {
			add(f.Pos, "type %s, field %s: enum only applies to string fields", t.Name, f.Name)
		}
		if f.Example != nil {
			if msg := checkExample(types, f, f.Example, 0); msg != "" {
				add(f.Pos, "type %s, field %s: the example %s", t.Name, f.Name, msg)
			}
		}
	}
}

func markUsed(name string, types map[string]*Type, used map[string]bool) {
	t := types[name]
	if t == nil || used[name] {
		return
	}
	used[name] = true
	markUsed(t.Extends, types, used)
	for _, f := range t.Fields {
		markUsed(f.Type, types, used)
	}
}

// cycle is a path of field types from type start back to itself, or nil.
func cycle(start string, types map[string]*Type) []string {
	seen := map[string]bool{}
	var walk func(name string, path []string) []string
	walk = func(name string, path []string) []string {
		t := types[name]
		if t == nil {
			return nil
		}
		path = append(path, name)
		for _, f := range t.Fields {
			if f.Type == start {
				return append(path, start)
			}
			if !seen[f.Type] {
				seen[f.Type] = true
				if c := walk(f.Type, path); c != nil {
					return c
				}
			}
		}
		return nil
	}
	return walk(start, nil)
}

// Package fileedit edits the JSON and JSONC configuration files of agent hosts in place, and
// writes them safely with a backup. It changes only the member it is asked to change: other
// servers, unknown keys, key order, indentation, comments, trailing commas and line endings stay
// byte for byte as they were, and it never returns text that does not parse again.
// Hand-written, not github.com/tailscale/hujson: its Patch writes a new member compactly on its
// sibling's line (10 of the 22 fixture edits), drops a trailing comma (2) and refuses an empty file.
// How documents are kept and edited, and the measurement: docs/packages.md, "integrations/fileedit".
package fileedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Doc is a JSON or JSONC document kept as text. Set and Delete change it and return its new text.
type Doc struct {
	src   []byte
	clean []byte // src with comments and trailing commas blanked (same offsets); src when it has none
	jsonc bool
	root  *node // nil for an empty document
}

// Parse reads src. With jsonc, // and /* */ comments and trailing commas are allowed (as VS Code and
// opencode read them); without, src must be strict JSON (RFC 8259). An empty or whitespace-only src
// (or, in JSONC, one with only comments) is an empty object. A document whose top level is not an
// object is refused. Errors are a *SyntaxError.
func Parse(src []byte, jsonc bool) (*Doc, error) {
	src = bytes.Clone(src)
	p := &parser{src: src, jsonc: jsonc}
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		p.pos = 3
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	d := &Doc{src: src, jsonc: jsonc}
	if p.pos < len(src) {
		if src[p.pos] != '{' {
			return nil, p.errAt(p.pos, "expected an object { at the top level, found %s", p.found())
		}
		root, err := p.value("an object")
		if err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(src) {
			return nil, p.errAt(p.pos, "expected the end of the document after the top-level object, found %s", p.found())
		}
		d.root = &root
	}
	d.clean = src
	if p.clean != nil {
		d.clean = p.clean
	}
	return d, nil
}

// Bytes returns the document's current text.
func (d *Doc) Bytes() []byte { return bytes.Clone(d.src) }

// Get returns the raw JSON text of the value at path (object keys from the root), and whether it
// exists. With no path it returns the whole top-level object. In JSONC, comments and trailing
// commas inside the value are replaced by spaces, so the text is always valid JSON.
func (d *Doc) Get(path ...string) ([]byte, bool) {
	if d.root == nil {
		return []byte("{}"), len(path) == 0
	}
	n := d.root
	for _, key := range path {
		i := find(n, key)
		if i < 0 {
			return nil, false
		}
		n = &n.members[i].val
	}
	return bytes.Clone(d.clean[n.start:n.end]), true
}

// find returns the index of the last member of n named key, or -1 (also when n is not an object).
func find(n *node, key string) int {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return i
		}
	}
	return -1
}

// Set makes the value at path equal to value (valid JSON, any type), creating missing objects on the
// way, and returns the new document text. An existing member is replaced in place, its key,
// position and surrounding comments kept; when it already holds an equal value (same JSON once
// white space and comments are dropped) the text is left as it is. A new member is appended as the
// last member of its object, indented like its siblings (in an empty object, one level deeper than
// the object's own line, using the file's indentation unit: a tab or N spaces, two by default),
// with value pretty-printed in that indentation. Setting a path through a value that is not an
// object is an error naming the path.
func (d *Doc) Set(value []byte, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("fileedit: Set needs a path of at least one key")
	}
	if !json.Valid(value) {
		return nil, fmt.Errorf("cannot set %s: the new value is not valid JSON; pass valid JSON", dotted(path))
	}
	if d.root == nil {
		return d.commit(d.fromEmpty(value, path))
	}
	n := d.root
	for i, key := range path[:len(path)-1] {
		j := find(n, key)
		if j < 0 {
			return d.commit(d.insert(n, path[i:], value)...)
		}
		if !n.members[j].val.object {
			return nil, fmt.Errorf("cannot set %s: %s holds %s, not an object; move or remove it by hand first", dotted(path), dotted(path[:i+1]), d.kind(n.members[j].val))
		}
		n = &n.members[j].val
	}
	last := path[len(path)-1:]
	if j := find(n, last[0]); j >= 0 {
		return d.commit(d.replace(&n.members[j], value)...)
	}
	return d.commit(d.insert(n, last, value)...)
}

// Delete removes the member at path and returns the new text; ok is false (and the text unchanged)
// when it does not exist. The separating comma goes with it whether it is first, middle or last;
// a trailing comma left behind in JSONC stays legal. Comments on the member's own lines go with it.
func (d *Doc) Delete(path ...string) (out []byte, ok bool, err error) {
	if len(path) == 0 {
		return nil, false, errors.New("fileedit: Delete needs a path of at least one key")
	}
	if d.root == nil {
		return d.Bytes(), false, nil
	}
	n := d.root
	for _, key := range path[:len(path)-1] {
		i := find(n, key)
		if i < 0 {
			return d.Bytes(), false, nil
		}
		n = &n.members[i].val
	}
	i := find(n, path[len(path)-1])
	if i < 0 {
		return d.Bytes(), false, nil
	}
	out, err = d.commit(d.remove(n, i)...)
	return out, err == nil, err
}

// edit replaces src[from:to] by text.
type edit struct {
	from, to int
	text     string
}

// commit applies edits (sorted, not overlapping), checks that the result parses, and makes it the
// document's text.
func (d *Doc) commit(edits ...edit) ([]byte, error) {
	if len(edits) == 0 {
		return d.Bytes(), nil
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.from - b.from })
	var out []byte
	last := 0
	for _, e := range edits {
		out = append(append(out, d.src[last:e.from]...), e.text...)
		last = e.to
	}
	out = append(out, d.src[last:]...)
	nd, err := Parse(out, d.jsonc)
	if err != nil {
		return nil, fmt.Errorf("fileedit: the edit would leave the document unreadable (%v); edit the file by hand", err)
	}
	*d = *nd
	return out, nil
}

func (d *Doc) replace(m *member, value []byte) []edit {
	old, now := compact(d.clean[m.val.start:m.val.end]), compact(value)
	if bytes.Equal(old, now) {
		return nil
	}
	text := string(now)
	if d.startsLine(m.keyStart) {
		text = d.pretty(value, d.indent(m.keyStart))
	}
	return []edit{{m.val.start, m.val.end, text}}
}

// nest wraps value in one object per key after the first: nest(v, a, b, c) is {"b":{"c":v}}.
func nest(value []byte, keys []string) []byte {
	for i := len(keys) - 1; i >= 1; i-- {
		value = slices.Concat([]byte("{"), quote(keys[i]), []byte(":"), value, []byte("}"))
	}
	return value
}

// insert adds keys[0] as the last member of n, holding value nested under the other keys.
func (d *Doc) insert(n *node, keys []string, value []byte) []edit {
	value = nest(value, keys)
	key := string(quote(keys[0])) + ": "
	if len(n.members) == 0 {
		// Between the last comment (or the brace) and the closing brace, on lines of their own.
		lbrace, rbrace := n.start, n.end-1
		ind := d.indent(lbrace) + d.unit()
		text := d.newline() + ind + key + d.pretty(value, ind) + d.newline() + d.indent(lbrace)
		from := rbrace
		for from > lbrace+1 && isSpace(d.src[from-1]) {
			from--
		}
		return []edit{{from, rbrace, text}}
	}
	last := n.members[len(n.members)-1]
	end := last.val.end
	if last.comma >= 0 {
		end = last.comma + 1
	}
	if t := d.tail(end); d.startsLine(last.keyStart) && d.endsLine(t) {
		ind := d.indent(last.keyStart)
		text := d.lineBreak(t) + ind + key + d.pretty(value, ind)
		if last.comma >= 0 {
			return []edit{{t, t, text + ","}}
		}
		return []edit{{last.val.end, last.val.end, ","}, {t, t, text}}
	}
	// On a shared line, write compactly, spaced like the last member: "a": 1 or "a":1.
	colon, sep := ": ", " "
	if gap := string(d.src[last.keyEnd:last.val.start]); strings.Trim(gap, " ") == ":" {
		colon = gap
		if !strings.Contains(gap, " ") {
			sep = ""
		}
	}
	text := string(quote(keys[0])) + colon + string(compact(value))
	if last.comma >= 0 {
		return []edit{{end, end, sep + text + ","}}
	}
	return []edit{{end, end, "," + sep + text}}
}

// remove deletes member i of n.
func (d *Doc) remove(n *node, i int) []edit {
	m := n.members[i]
	end := m.val.end
	if m.comma >= 0 {
		end = m.comma + 1
	}
	var e edit
	switch t := d.tail(end); {
	case d.startsLine(m.keyStart) && d.endsLine(t):
		e = edit{d.lineStart(m.keyStart), t + len(d.lineBreak(t)), ""}
	case i == 0:
		e = edit{m.keyStart, skipSpaces(d.src, end), ""}
	default:
		from := m.keyStart
		for from > 0 && (d.src[from-1] == ' ' || d.src[from-1] == '\t') {
			from--
		}
		e = edit{from, end, ""}
	}
	if len(n.members) == 1 && isBlank(d.src[n.start+1:e.from]) && isBlank(d.src[e.to:n.end-1]) {
		return []edit{{n.start + 1, n.end - 1, ""}}
	}
	if m.comma < 0 && i > 0 {
		c := n.members[i-1].comma
		return []edit{{c, c + 1, ""}, e}
	}
	return []edit{e}
}

// fromEmpty writes a new top-level object holding path, after any comments of an empty JSONC file.
func (d *Doc) fromEmpty(value []byte, path []string) edit {
	nl, unit := d.newline(), d.unit()
	head := bytes.TrimRight(d.src, " \t\r\n")
	var b strings.Builder
	b.Write(head)
	if len(bytes.TrimPrefix(head, []byte("\uFEFF"))) > 0 {
		b.WriteString(nl)
	}
	b.WriteString("{" + nl + unit + string(quote(path[0])) + ": " + d.pretty(nest(value, path), unit) + nl + "}" + nl)
	return edit{0, len(d.src), b.String()}
}

// tail returns the offset after the spaces, tabs and comments that follow offset i on its line.
func (d *Doc) tail(i int) int {
	for i < len(d.src) {
		switch c := d.src[i]; {
		case c == ' ' || c == '\t':
			i++
		case d.jsonc && c == '/' && i+1 < len(d.src) && (d.src[i+1] == '/' || d.src[i+1] == '*'):
			i = commentEnd(d.src, i) // the document parsed, so the comment is closed
		default:
			return i
		}
	}
	return i
}

// lineBreak returns the line break at offset i ("\n" or "\r\n"), or "" when there is none.
func (d *Doc) lineBreak(i int) string {
	switch {
	case i < len(d.src) && d.src[i] == '\n':
		return "\n"
	case i+1 < len(d.src) && d.src[i] == '\r' && d.src[i+1] == '\n':
		return "\r\n"
	}
	return ""
}

func (d *Doc) endsLine(i int) bool { return i == len(d.src) || d.lineBreak(i) != "" }

func (d *Doc) lineStart(i int) int {
	for i > 0 && d.src[i-1] != '\n' {
		i--
	}
	return i
}

// startsLine reports whether only spaces and tabs come before offset i on its line.
func (d *Doc) startsLine(i int) bool {
	s := d.lineStart(i)
	return s == i || len(d.indent(i)) == i-s
}

// indent returns the spaces and tabs that begin the line holding offset i.
func (d *Doc) indent(i int) string {
	s := d.lineStart(i)
	e := s
	for e < i && (d.src[e] == ' ' || d.src[e] == '\t') {
		e++
	}
	return string(d.src[s:e])
}

// unit returns the file's indentation step: what a member adds to its object's line, found on the
// first object that shows one; two spaces when none does.
func (d *Doc) unit() string {
	var walk func(n *node) string
	walk = func(n *node) string {
		for _, m := range n.members {
			if d.startsLine(m.keyStart) {
				outer, inner := d.indent(n.start), d.indent(m.keyStart)
				if len(inner) > len(outer) && strings.HasPrefix(inner, outer) {
					return inner[len(outer):]
				}
			}
			if u := walk(&m.val); u != "" {
				return u
			}
		}
		return ""
	}
	if d.root != nil {
		if u := walk(d.root); u != "" {
			return u
		}
	}
	return "  "
}

// newline returns the file's line break: "\r\n" when its first line ends so, "\n" otherwise.
func (d *Doc) newline() string {
	if i := bytes.IndexByte(d.src, '\n'); i > 0 && d.src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// pretty indents value (valid JSON) for a member whose line starts with prefix.
func (d *Doc) pretty(value []byte, prefix string) string {
	var b bytes.Buffer
	_ = json.Indent(&b, bytes.TrimSpace(value), prefix, d.unit()) // value was checked by json.Valid
	return strings.ReplaceAll(b.String(), "\n", d.newline())
}

func compact(v []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

// quote writes s as a JSON string, leaving <, > and & as they are.
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func (d *Doc) kind(n node) string {
	switch c := d.src[n.start]; c {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// dotted writes a path for a message: mcpServers.postern.
func dotted(path []string) string { return strings.Join(path, ".") }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

func skipSpaces(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

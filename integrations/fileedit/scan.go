package fileedit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds nesting so that a hostile file cannot make the scanner recurse without end.
const maxDepth = 1000

// SyntaxError says where a document stops being JSON (or JSONC) and what was expected there.
type SyntaxError struct {
	Line, Column int // 1-based; Column counts characters, not bytes
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// node is one value of the document, src[start:end]. An object's members are kept in order,
// duplicates included; array items are checked but not kept (nothing edits inside arrays).
type node struct {
	start, end int
	object     bool
	members    []member
}

type member struct {
	key      string // decoded
	keyStart int    // offset of the key's opening quote
	keyEnd   int    // offset just after its closing quote
	val      node
	comma    int // offset of the comma after the value, or -1 when there is none
}

type parser struct {
	src   []byte
	pos   int
	jsonc bool
	clean []byte // src with comments and trailing commas blanked, same offsets; nil while there are none
	depth int
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	line, start := 1, 0
	for i := 0; i < pos && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return &SyntaxError{Line: line, Column: utf8.RuneCount(p.src[start:min(pos, len(p.src))]) + 1, Msg: fmt.Sprintf(format, args...)}
}

// found names what is at the current position, for "expected …, found …".
func (p *parser) found() string {
	if p.pos >= len(p.src) {
		return "the end of the document"
	}
	switch c := p.src[p.pos]; {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == ',':
		return "a comma"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return strconv.Quote(string(r))
}

func (p *parser) at(c byte) bool { return p.pos < len(p.src) && p.src[p.pos] == c }

// blank replaces src[from:to] by spaces in p.clean, keeping line breaks.
func (p *parser) blank(from, to int) {
	if p.clean == nil {
		p.clean = append([]byte(nil), p.src...)
	}
	for i := from; i < to; i++ {
		if p.clean[i] != '\n' && p.clean[i] != '\r' {
			p.clean[i] = ' '
		}
	}
}

// space skips whitespace and, in JSONC, comments.
func (p *parser) space() error {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
			continue
		case '/':
			if p.pos+1 >= len(p.src) || (p.src[p.pos+1] != '/' && p.src[p.pos+1] != '*') {
				return nil
			}
			if !p.jsonc {
				return p.errAt(p.pos, "found a comment, which strict JSON does not allow")
			}
			start := p.pos
			p.pos = commentEnd(p.src, p.pos)
			if p.pos < 0 {
				p.pos = len(p.src)
				return p.errAt(start, "unterminated comment: expected */ before the end of the document")
			}
			p.blank(start, p.pos)
			continue
		}
		return nil
	}
	return nil
}

// commentEnd returns the offset just after the comment starting at i (a line comment stops before
// its line break), or -1 for a block comment that is never closed.
func commentEnd(src []byte, i int) int {
	if src[i+1] == '/' {
		for i < len(src) && src[i] != '\n' && src[i] != '\r' {
			i++
		}
		return i
	}
	for i += 2; i+1 < len(src); i++ {
		if src[i] == '*' && src[i+1] == '/' {
			return i + 2
		}
	}
	return -1
}

func (p *parser) value(what string) (node, error) {
	if err := p.space(); err != nil {
		return node{}, err
	}
	n := node{start: p.pos}
	if p.pos >= len(p.src) {
		return n, p.errAt(p.pos, "expected %s, found the end of the document", what)
	}
	var err error
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		if p.depth++; p.depth > maxDepth {
			return n, p.errAt(p.pos, "the document nests deeper than %d levels; this is not a configuration file", maxDepth)
		}
		if c == '{' {
			n.object = true
			n.members, err = p.object()
		} else {
			err = p.array()
		}
		p.depth--
	case c == '"':
		_, err = p.str()
	case c == '-' || c >= '0' && c <= '9':
		err = p.number()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.src)-p.pos >= len(lit) && string(p.src[p.pos:p.pos+len(lit)]) == lit {
				p.pos += len(lit)
				n.end = p.pos
				return n, nil
			}
		}
		err = p.errAt(p.pos, "expected %s, found %s", what, p.found())
	default:
		err = p.errAt(p.pos, "expected %s, found %s", what, p.found())
	}
	n.end = p.pos
	return n, err
}

// object reads the members of the object whose { is at p.pos.
func (p *parser) object() ([]member, error) {
	p.pos++
	var ms []member
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.at('}') {
			if len(ms) > 0 && ms[len(ms)-1].comma >= 0 {
				if err := p.trailingComma(ms[len(ms)-1].comma, '}'); err != nil {
					return nil, err
				}
			}
			p.pos++
			return ms, nil
		}
		if !p.at('"') {
			if len(ms) == 0 {
				return nil, p.errAt(p.pos, "expected a quoted key or }, found %s", p.found())
			}
			return nil, p.errAt(p.pos, "expected a quoted key after the comma, found %s", p.found())
		}
		m := member{keyStart: p.pos, comma: -1}
		var err error
		if m.key, err = p.str(); err != nil {
			return nil, err
		}
		m.keyEnd = p.pos
		if err := p.space(); err != nil {
			return nil, err
		}
		if !p.at(':') {
			return nil, p.errAt(p.pos, "expected a colon after the key %q, found %s", m.key, p.found())
		}
		p.pos++
		if m.val, err = p.value(fmt.Sprintf("a value for %q", m.key)); err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		switch {
		case p.at(','):
			m.comma = p.pos
			p.pos++
		case !p.at('}'):
			return nil, p.errAt(p.pos, "expected a comma or } after the value of %q, found %s", m.key, p.found())
		}
		ms = append(ms, m)
	}
}

// array reads the array whose [ is at p.pos.
func (p *parser) array() error {
	p.pos++
	comma := -1
	for first := true; ; first = false {
		if err := p.space(); err != nil {
			return err
		}
		if p.at(']') {
			if comma >= 0 {
				if err := p.trailingComma(comma, ']'); err != nil {
					return err
				}
			}
			p.pos++
			return nil
		}
		if !first && comma < 0 {
			return p.errAt(p.pos, "expected a comma or ] after an array item, found %s", p.found())
		}
		if _, err := p.value("an array item or ]"); err != nil {
			return err
		}
		if err := p.space(); err != nil {
			return err
		}
		comma = -1
		if p.at(',') {
			comma = p.pos
			p.pos++
		}
	}
}

func (p *parser) trailingComma(at int, closer byte) error {
	if !p.jsonc {
		return p.errAt(at, "found a trailing comma before %c, which strict JSON does not allow", closer)
	}
	p.blank(at, at+1)
	return nil
}

// str reads the string whose quote is at p.pos and returns it decoded.
func (p *parser) str() (string, error) {
	start := p.pos
	escaped := false
	for i := start + 1; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '"':
			p.pos = i + 1
			raw := p.src[start:p.pos]
			if !escaped && utf8.Valid(raw) {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil { // cannot happen: raw was checked above
				return "", p.errAt(start, "invalid string")
			}
			return s, nil
		case c == '\n' || c == '\r':
			return "", p.errAt(start, "unterminated string: expected a closing quote before the end of the line")
		case c < 0x20:
			return "", p.errAt(i, "found a control character (U+%04X) in a string; write it as an escape", c)
		case c == '\\':
			escaped = true
			if i+1 >= len(p.src) {
				break
			}
			switch p.src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(p.src) || !isHex(p.src[i+2:i+6]) {
					return "", p.errAt(i, "invalid escape in a string: \\u must be followed by four hexadecimal digits")
				}
				i += 5
			default:
				r, _ := utf8.DecodeRune(p.src[i+1:])
				return "", p.errAt(i, "invalid escape \\%s in a string", string(r))
			}
		}
	}
	return "", p.errAt(start, "unterminated string: expected a closing quote before the end of the document")
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a number as RFC 8259 writes it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() error {
	start := p.pos
	if p.at('-') {
		p.pos++
	}
	if p.at('0') {
		p.pos++
	} else if !p.digits() {
		return p.errAt(start, "invalid number: expected a digit after the minus sign")
	}
	if p.at('.') {
		p.pos++
		if !p.digits() {
			return p.errAt(start, "invalid number: expected a digit after the decimal point")
		}
	}
	if p.at('e') || p.at('E') {
		p.pos++
		if p.at('+') || p.at('-') {
			p.pos++
		}
		if !p.digits() {
			return p.errAt(start, "invalid number: expected a digit in the exponent")
		}
	}
	return nil
}

func (p *parser) digits() bool {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}

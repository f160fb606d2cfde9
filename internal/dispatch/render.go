package dispatch

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

var stderr io.Writer = os.Stderr

// Render turns a structured result into a few short text lines: one line per
// scalar field, one line per row of a list, multi-line text under its field name.
// Clients that do not read structuredContent see the same data this way.
//
// structured is the JSON encoding/json wrote for a tool's result. It is read
// once into a flat list of nodes; a value that is not valid JSON renders as
// "nothing found".
func Render(structured []byte) string {
	p := parsers.Get().(*parser)
	defer func() {
		p.src, p.nodes, p.dec, p.i = nil, p.nodes[:0], p.dec[:0], 0
		p.out.Reset()
		if p.out.Cap() <= 1<<20 && cap(p.dec) <= 1<<20 && cap(p.nodes) <= 1<<14 {
			parsers.Put(p) // a very large answer's buffers are left to the GC
		}
	}()
	p.src = structured
	root, ok := p.value()
	if !ok {
		return "nothing found"
	}
	b := &p.out
	if k := p.nodes[root].kind; k == kindObject || k == kindArray {
		for c := p.nodes[root].first; c >= 0; c = p.nodes[c].next {
			p.field(b, p.bytes(p.nodes[c].key), c)
		}
	} else {
		p.field(b, nil, root)
	}
	out := bytes.TrimRight(b.Bytes(), "\n")
	if len(out) == 0 {
		return "nothing found"
	}
	return string(out)
}

var parsers = sync.Pool{New: func() any { return &parser{nodes: make([]node, 0, 64)} }}

const (
	kindScalar = iota // number, true, false, null: text is the raw JSON
	kindString        // text is the decoded string
	kindArray
	kindObject
)

// node is one JSON value. Children of an array or object are linked from
// first through next; key is the member name inside an object.
type node struct {
	kind        int
	text        span // a string's decoded text, or a scalar's JSON
	key         span
	first, next int // -1: none
	start, end  int // the value's bytes in the source
}

// span is a piece of the source, or of the decoded strings when dec is set.
type span struct {
	from, to int
	dec      bool
}

type parser struct {
	src   []byte
	dec   []byte // strings with escapes, decoded
	out   bytes.Buffer
	i     int
	nodes []node
}

func (p *parser) bytes(s span) []byte {
	if s.dec {
		return p.dec[s.from:s.to]
	}
	return p.src[s.from:s.to]
}

func (p *parser) ws() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads one value at p.i and returns its node's index.
func (p *parser) value() (int, bool) {
	p.ws()
	if p.i >= len(p.src) {
		return 0, false
	}
	n := len(p.nodes)
	p.nodes = append(p.nodes, node{first: -1, next: -1, start: p.i})
	switch c := p.src[p.i]; c {
	case '{', '[':
		p.i++
		kind, end := kindArray, byte(']')
		if c == '{' {
			kind, end = kindObject, '}'
		}
		p.nodes[n].kind = kind
		last := -1
		for {
			p.ws()
			if p.i < len(p.src) && p.src[p.i] == end {
				p.i++
				p.nodes[n].end = p.i
				return n, true
			}
			if last >= 0 {
				if p.i >= len(p.src) || p.src[p.i] != ',' {
					return 0, false
				}
				p.i++
				p.ws()
			}
			var key span
			if kind == kindObject {
				k, ok := p.str()
				if !ok {
					return 0, false
				}
				p.ws()
				if p.i >= len(p.src) || p.src[p.i] != ':' {
					return 0, false
				}
				p.i++
				key = k
			}
			child, ok := p.value()
			if !ok {
				return 0, false
			}
			p.nodes[child].key = key
			if last < 0 {
				p.nodes[n].first = child
			} else {
				p.nodes[last].next = child
			}
			last = child
		}
	case '"':
		s, ok := p.str()
		if !ok {
			return 0, false
		}
		p.nodes[n].kind, p.nodes[n].text = kindString, s
		return n, true
	default:
		start := p.i
		for p.i < len(p.src) {
			switch p.src[p.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				goto done
			}
			p.i++
		}
	done:
		if p.i == start {
			return 0, false
		}
		p.nodes[n].kind, p.nodes[n].text = kindScalar, span{from: start, to: p.i}
		return n, true
	}
}

// str reads a JSON string at p.i and returns where its decoded text is.
func (p *parser) str() (span, bool) {
	if p.i >= len(p.src) || p.src[p.i] != '"' {
		return span{}, false
	}
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case '\\':
			escaped = true
			p.i += 2
			continue
		case '"':
			p.i++
			if !escaped {
				return span{from: start + 1, to: p.i - 1}, true
			}
			from := len(p.dec)
			s, err := strconv.Unquote(string(p.src[start:p.i]))
			if err != nil {
				s = unquoteJSON(p.src[start+1 : p.i-1])
			}
			p.dec = append(p.dec, s...)
			return span{from: from, to: len(p.dec), dec: true}, true
		}
		p.i++
	}
	return span{}, false
}

// unquoteJSON decodes the escapes JSON has and Go's quoting does not (\/ and
// UTF-16 surrogate pairs); a broken escape is kept as it is.
func unquoteJSON(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out.WriteByte(b[i])
			continue
		}
		i++
		switch b[i] {
		case '"', '\\', '/':
			out.WriteByte(b[i])
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			r, n := hex4(b[i+1:])
			if n == 0 {
				out.WriteString(`\u`)
				continue
			}
			i += n
			if r >= 0xd800 && r < 0xdc00 && i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if r2, n2 := hex4(b[i+3:]); n2 > 0 && r2 >= 0xdc00 && r2 < 0xe000 {
					r = (r-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
					i += 2 + n2
				}
			}
			if r >= 0xd800 && r < 0xe000 {
				r = utf8.RuneError
			}
			out.WriteRune(r)
		default:
			out.WriteByte('\\')
			out.WriteByte(b[i])
		}
	}
	return out.String()
}

func hex4(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}

func (p *parser) field(b *bytes.Buffer, key []byte, v int) {
	nv := &p.nodes[v]
	switch {
	case nv.kind == kindArray:
		b.Write(key)
		if nv.first < 0 {
			b.WriteString(": none\n")
			return
		}
		if p.nodes[nv.first].kind != kindObject {
			b.WriteString(": ")
			for c := nv.first; c >= 0; c = p.nodes[c].next {
				if c != nv.first {
					b.WriteString(", ")
				}
				b.Write(p.scalar(c))
			}
			b.WriteByte('\n')
			return
		}
		b.WriteString(":\n")
		for c := nv.first; c >= 0; c = p.nodes[c].next {
			b.WriteString("- ")
			p.inline(b, c)
			b.WriteByte('\n')
		}
	case nv.kind == kindObject:
		b.Write(key)
		b.WriteString(": ")
		p.inline(b, v)
		b.WriteByte('\n')
	case nv.kind == kindString && bytes.IndexByte(p.bytes(nv.text), '\n') >= 0:
		b.Write(key)
		b.WriteString(":\n")
		b.Write(bytes.TrimRight(p.bytes(nv.text), "\n"))
		b.WriteByte('\n')
	default:
		b.Write(key)
		b.WriteString(": ")
		b.Write(p.scalar(v))
		b.WriteByte('\n')
	}
}

// inline writes an object on one line: "k: v; k: v". Any other value is
// written as one member without a name.
func (p *parser) inline(b *bytes.Buffer, v int) {
	first, single := v, true
	if k := p.nodes[v].kind; k == kindObject || k == kindArray {
		first, single = p.nodes[v].first, false
	}
	for x := first; x >= 0; x = p.nodes[x].next {
		if x != first {
			b.WriteString("; ")
		}
		b.Write(p.bytes(p.nodes[x].key))
		b.WriteString(": ")
		switch nx := &p.nodes[x]; nx.kind {
		case kindArray:
			for c := nx.first; c >= 0; c = p.nodes[c].next {
				if c != nx.first {
					b.WriteString(", ")
				}
				if k := p.nodes[c].kind; k == kindObject || k == kindArray {
					b.WriteByte('(')
					p.inline(b, c)
					b.WriteByte(')')
				} else {
					writeOneLine(b, p.scalar(c))
				}
			}
		case kindObject:
			b.WriteByte('(')
			p.inline(b, x)
			b.WriteByte(')')
		default:
			writeOneLine(b, p.scalar(x))
		}
		if single {
			break
		}
	}
}

// scalar is a string's text, or the JSON of any other value.
func (p *parser) scalar(n int) []byte {
	if k := p.nodes[n].kind; k == kindArray || k == kindObject {
		return p.src[p.nodes[n].start:p.nodes[n].end]
	}
	return p.bytes(p.nodes[n].text)
}

// writeOneLine writes s with each run of white space made one space and none
// at either end, as strings.Join(strings.Fields(s), " ") would.
func writeOneLine(b *bytes.Buffer, s []byte) {
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c <= ' ' {
			plain = false
			break
		}
	}
	if plain {
		b.Write(s)
		return
	}
	for i, f := range bytes.Fields(s) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.Write(f)
	}
}

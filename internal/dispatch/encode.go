package dispatch

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/postern-mcp/postern/internal/jsonrpc"
)

// encode writes a tool's result as JSON and as the text lines Render would
// make of that JSON, in one walk over the value with plans made once per type:
// no encoding/json, and no second reading of the JSON. The output is byte for
// byte what json.Marshal and Render write (FuzzEncodeSameAsMarshalRender);
// a type with a kind the plans do not cover is encoded by those two instead.
func encode(v any) (structured []byte, text string, err error) {
	rv := reflect.ValueOf(v)
	p := planOf(rv.Type())
	if p.fallback {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, "", err
		}
		return b, Render(b), nil
	}
	e := encoders.Get().(*encoder)
	defer func() {
		e.js, e.txt, e.tmp = e.js[:0], e.txt[:0], e.tmp[:0]
		if cap(e.js) <= 1<<20 && cap(e.txt) <= 1<<20 {
			encoders.Put(e)
		}
	}()
	e.js = e.appendJSON(e.js, rv, p)
	e.text(rv, p)
	out := bytes.TrimRight(e.txt, "\n")
	if len(out) == 0 {
		text = "nothing found"
	} else {
		text = string(out)
	}
	return append([]byte(nil), e.js...), text, nil
}

type encoder struct {
	js, txt, tmp []byte
}

var encoders = sync.Pool{New: func() any { return &encoder{} }}

type planKind int

const (
	pString planKind = iota
	pBool
	pInt
	pUint
	pSlice
	pPtr
	pStruct
)

// plan is how one type is encoded.
type plan struct {
	kind     planKind
	elem     *plan // pSlice, pPtr
	fields   []planField
	fallback bool // a kind the plans do not cover: use encoding/json
}

type planField struct {
	index     int
	key       string // the JSON name
	quoted    []byte // ,"name": (the comma is skipped for the first field written)
	omitEmpty bool
	plan      *plan
}

var plans sync.Map // reflect.Type → *plan

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := makePlan(t, map[reflect.Type]*plan{})
	plans.Store(t, p)
	return p
}

func makePlan(t reflect.Type, seen map[reflect.Type]*plan) *plan {
	if p, ok := seen[t]; ok {
		return p
	}
	p := &plan{}
	seen[t] = p
	// A type with its own JSON or text encoding is left to encoding/json.
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		p.fallback = true
		return p
	}
	switch t.Kind() {
	case reflect.String:
		p.kind = pString
	case reflect.Bool:
		p.kind = pBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = pInt
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.kind = pUint
	case reflect.Slice:
		p.kind = pSlice
		if t.Elem().Kind() == reflect.Uint8 {
			p.fallback = true // []byte is base64 in JSON
			return p
		}
		p.elem = makePlan(t.Elem(), seen)
		p.fallback = p.elem.fallback
	case reflect.Pointer:
		p.kind = pPtr
		p.elem = makePlan(t.Elem(), seen)
		p.fallback = p.elem.fallback
	case reflect.Struct:
		p.kind = pStruct
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if sf.Anonymous {
				p.fallback = true // embedded fields follow rules of their own
				return p
			}
			if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" {
				name = sf.Name
			}
			f := planField{index: i, key: name, plan: makePlan(sf.Type, seen)}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty":
					f.omitEmpty = true
				case "", "omitzero":
					if o == "omitzero" {
						p.fallback = true
						return p
					}
				default:
					p.fallback = true // ,string and the like
					return p
				}
			}
			if f.plan.fallback || !plainKey(name) {
				p.fallback = true
				return p
			}
			f.quoted = append(jsonrpc.AppendString([]byte{','}, name), ':')
			p.fields = append(p.fields, f)
		}
	default:
		p.fallback = true
	}
	return p
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)

// plainKey reports whether encoding/json would use name as it is.
func plainKey(name string) bool {
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return name != ""
}

// isEmpty is encoding/json's test for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Slice:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}

func (e *encoder) appendJSON(b []byte, v reflect.Value, p *plan) []byte {
	switch p.kind {
	case pString:
		return jsonrpc.AppendString(b, v.String())
	case pBool:
		return strconv.AppendBool(b, v.Bool())
	case pInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case pUint:
		return strconv.AppendUint(b, v.Uint(), 10)
	case pPtr:
		if v.IsNil() {
			return append(b, "null"...)
		}
		return e.appendJSON(b, v.Elem(), p.elem)
	case pSlice:
		if v.IsNil() {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendJSON(b, v.Index(i), p.elem)
		}
		return append(b, ']')
	case pStruct:
		b = append(b, '{')
		first := true
		for i := range p.fields {
			f := &p.fields[i]
			fv := v.Field(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			if first {
				b = append(b, f.quoted[1:]...)
				first = false
			} else {
				b = append(b, f.quoted...)
			}
			b = e.appendJSON(b, fv, f.plan)
		}
		return append(b, '}')
	}
	return b
}

// The JSON kind of a value, as Render sees it.
const (
	jNull = iota
	jScalar
	jString
	jArray
	jObject
)

// deref follows pointers; a nil one is null.
func deref(v reflect.Value, p *plan) (reflect.Value, *plan, int) {
	for p.kind == pPtr {
		if v.IsNil() {
			return v, p, jNull
		}
		v, p = v.Elem(), p.elem
	}
	switch p.kind {
	case pString:
		return v, p, jString
	case pSlice:
		if v.IsNil() {
			return v, p, jNull
		}
		return v, p, jArray
	case pStruct:
		return v, p, jObject
	}
	return v, p, jScalar
}

// scalar appends what Render shows for a value: a string's text, or the JSON
// of anything else.
func (e *encoder) scalar(b []byte, v reflect.Value, p *plan) []byte {
	v, p, k := deref(v, p)
	switch k {
	case jNull:
		return append(b, "null"...)
	case jString:
		return append(b, v.String()...)
	}
	return e.appendJSON(b, v, p)
}

// oneLine appends a scalar with its white space runs made single spaces, as
// strings.Join(strings.Fields(s), " ") does.
func (e *encoder) oneLine(b []byte, v reflect.Value, p *plan) []byte {
	e.tmp = e.scalar(e.tmp[:0], v, p)
	for i, f := range bytes.Fields(e.tmp) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, f...)
	}
	return b
}

// text writes the lines of a result; Render's rules, on the value itself.
func (e *encoder) text(v reflect.Value, p *plan) {
	v, p, k := deref(v, p)
	switch k {
	case jObject:
		e.members(v, p, func(key string, fv reflect.Value, fp *plan) { e.field(key, fv, fp) })
	case jArray:
		for i := 0; i < v.Len(); i++ {
			e.field("", v.Index(i), p.elem)
		}
	default:
		e.field("", v, p)
	}
}

// members calls f for each field of a struct that its JSON holds, in order.
func (e *encoder) members(v reflect.Value, p *plan, f func(key string, fv reflect.Value, fp *plan)) {
	for i := range p.fields {
		pf := &p.fields[i]
		fv := v.Field(pf.index)
		if pf.omitEmpty && isEmpty(fv) {
			continue
		}
		f(pf.key, fv, pf.plan)
	}
}

func (e *encoder) field(key string, v reflect.Value, p *plan) {
	b := e.txt
	v, p, k := deref(v, p)
	switch k {
	case jArray:
		b = append(b, key...)
		if v.Len() == 0 {
			b = append(b, ": none\n"...)
			break
		}
		if _, _, k0 := deref(v.Index(0), p.elem); k0 != jObject {
			b = append(b, ": "...)
			for i := 0; i < v.Len(); i++ {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = e.scalar(b, v.Index(i), p.elem)
			}
			b = append(b, '\n')
			break
		}
		b = append(b, ":\n"...)
		for i := 0; i < v.Len(); i++ {
			b = append(b, "- "...)
			b = e.inline(b, v.Index(i), p.elem)
			b = append(b, '\n')
		}
	case jObject:
		b = append(b, key...)
		b = append(b, ": "...)
		b = e.inline(b, v, p)
		b = append(b, '\n')
	case jString:
		s := v.String()
		b = append(b, key...)
		if strings.Contains(s, "\n") {
			b = append(b, ":\n"...)
			b = append(b, strings.TrimRight(s, "\n")...)
		} else {
			b = append(b, ": "...)
			b = append(b, s...)
		}
		b = append(b, '\n')
	default:
		b = append(b, key...)
		b = append(b, ": "...)
		b = e.scalar(b, v, p)
		b = append(b, '\n')
	}
	e.txt = b
}

// inline writes an object on one line, "k: v; k: v"; any other value as one
// member without a name.
func (e *encoder) inline(b []byte, v reflect.Value, p *plan) []byte {
	v, p, k := deref(v, p)
	first := true
	member := func(key string, x reflect.Value, xp *plan) {
		if !first {
			b = append(b, "; "...)
		}
		first = false
		b = append(b, key...)
		b = append(b, ": "...)
		x, xp, xk := deref(x, xp)
		switch xk {
		case jArray:
			for i := 0; i < x.Len(); i++ {
				if i > 0 {
					b = append(b, ", "...)
				}
				if _, _, ik := deref(x.Index(i), xp.elem); ik == jObject || ik == jArray {
					b = append(b, '(')
					b = e.inline(b, x.Index(i), xp.elem)
					b = append(b, ')')
				} else {
					b = e.oneLine(b, x.Index(i), xp.elem)
				}
			}
		case jObject:
			b = append(b, '(')
			b = e.inline(b, x, xp)
			b = append(b, ')')
		default:
			b = e.oneLine(b, x, xp)
		}
	}
	switch k {
	case jObject:
		e.members(v, p, member)
	case jArray:
		for i := 0; i < v.Len(); i++ {
			member("", v.Index(i), p.elem)
		}
	default:
		member("", v, p)
	}
	return b
}

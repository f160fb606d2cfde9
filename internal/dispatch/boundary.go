package dispatch

import (
	"reflect"
	"sync"

	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/mask"
)

// answer holds what one answer needs to frame its bodies: one mark, drawn
// from crypto/rand the first time a body needs it, shared by the answer's bodies.
type answer struct{ mark string }

func (a *answer) markFor() string {
	if a.mark == "" {
		a.mark = clean.NewMark()
	}
	return a.mark
}

// safeLine is how every string a tool returns reaches the agent unless the
// catalog says otherwise: on one line without invisible characters, and masked
// as that cleaned text reads (mask.Line).
func safeLine(s string) string { return mask.Line(s) }

// prepare makes every string of a result safe in place, following each field's
// post tag (written by the generator from the catalog's format): line (the
// default), body (masked, cleaned, framed) or markdown (postern's own text).
func prepare(v reflect.Value, a *answer) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			prepare(v.Elem(), a)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			prepare(v.Index(i), a)
		}
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			fv := v.Field(f.index)
			switch f.kind {
			case fieldString:
				fv.SetString(transform(fv.String(), f.format, a))
			case fieldStrings:
				for j := 0; j < fv.Len(); j++ {
					fv.Index(j).SetString(transform(fv.Index(j).String(), f.format, a))
				}
			default:
				prepare(fv, a)
			}
		}
	}
}

const (
	fieldOther = iota
	fieldString
	fieldStrings
)

// field is what prepare needs of one settable struct field.
type field struct {
	index  int
	kind   int // fieldString, fieldStrings or fieldOther
	format string
}

// fieldPlans remembers, per struct type, the fields prepare visits.
var fieldPlans sync.Map // reflect.Type → []field

func fieldsOf(t reflect.Type) []field {
	if p, ok := fieldPlans.Load(t); ok {
		return p.([]field)
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		f := field{index: i, format: sf.Tag.Get("post")}
		switch {
		case sf.Type.Kind() == reflect.String:
			f.kind = fieldString
		case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.String:
			f.kind = fieldStrings
		default:
			switch sf.Type.Kind() {
			case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
				reflect.Float32, reflect.Float64:
				continue // nothing to make safe
			}
		}
		fs = append(fs, f)
	}
	fieldPlans.Store(t, fs)
	return fs
}

func transform(s, format string, a *answer) string {
	switch format {
	case "body":
		return clean.Frame("mail-text", mask.Body(s), a.markFor())
	case "markdown":
		return clean.Text(s)
	case "own":
		return clean.Line(s)
	default:
		return safeLine(s)
	}
}

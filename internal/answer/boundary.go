// Package answer is the boundary every answer, error and log line crosses on
// its way out: it cleans and masks each string, frames mail bodies, encodes
// the result, renders its text form and refuses an answer over MaxAnswer.
// It never cuts an answer, and never lets a string out unmasked.
package answer

import (
	"reflect"
	"strings"
	"sync"

	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/mask"
)

// marks holds what one answer needs to frame its bodies: one mark, drawn
// from crypto/rand the first time a body needs it, shared by the answer's bodies.
type marks struct{ mark string }

func (a *marks) markFor() string {
	if a.mark == "" {
		a.mark = clean.NewMark()
	}
	return a.mark
}

// Line is how every string a tool returns reaches the agent unless the
// catalog says otherwise: on one line without invisible characters, and masked
// as that cleaned text reads (mask.Line).
func Line(s string) string { return mask.Line(s) }

// Error is the sentence an agent reads for a handler's error: cleaned and
// masked as a line, capitalised, ending with a full stop.
func Error(err error) string { return Sentence(Line(err.Error())) }

// Sentence makes s one sentence: trimmed, capitalised, ending with a full stop.
func Sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "The tool failed without saying why."
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// Logged is what a log line keeps of an agent's string before the log's own
// rules: the masks (mask.Text).
func Logged(s string) string {
	m, _ := mask.Text(s)
	return m
}

// Prepare makes every string of v, a result, safe in place (see prepare).
func Prepare(v any) { prepare(reflect.ValueOf(v), &marks{}) }

// prepare makes every string of a result safe in place, following each field's
// post tag (written by the generator from the catalog's format): line (the
// default), body (masked, cleaned, framed) or markdown (postern's own text).
func prepare(v reflect.Value, a *marks) {
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

func transform(s, format string, a *marks) string {
	switch format {
	case "body":
		return clean.Frame("mail-text", mask.Body(s), a.markFor())
	case "own_body":
		// The person's own text (a note, a description): its secrets go where they stand, and
		// the rest is shown; mail's rule of withholding a message that gives a password whole
		// is for strangers' mail (docs/packages.md, "internal/mask").
		return clean.Frame("mail-text", mask.OwnBody(s), a.markFor()) // the same frame: agents read one kind of data block
	case "markdown":
		return clean.Text(s)
	case "own":
		return clean.Line(s)
	default:
		return Line(s)
	}
}

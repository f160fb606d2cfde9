package dispatch

import (
	"reflect"

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
// catalog says otherwise: masked, then on one line without invisible characters.
func safeLine(s string) string {
	m, _ := mask.Text(s)
	return clean.Line(m)
}

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
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			switch format := t.Field(i).Tag.Get("post"); {
			case f.Kind() == reflect.String:
				f.SetString(transform(f.String(), format, a))
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
				for j := 0; j < f.Len(); j++ {
					f.Index(j).SetString(transform(f.Index(j).String(), format, a))
				}
			default:
				prepare(f, a)
			}
		}
	}
}

func transform(s, format string, a *answer) string {
	switch format {
	case "body":
		m, _ := mask.Text(s)
		return clean.Frame("mail-text", clean.Text(m), a.markFor())
	case "markdown":
		return clean.Text(s)
	case "own":
		return clean.Line(s)
	default:
		return safeLine(s)
	}
}

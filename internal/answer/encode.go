package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encode makes every string of v, a result, safe in place (Prepare) and
// encodes it: structured is its JSON, text the form Render makes of it.
func Encode(v any) (structured []byte, text string, err error) {
	Prepare(v)
	return encode(v)
}

// encode writes a tool's result as JSON (encoding/json, without HTML
// escaping: structuredContent is never put in a page) and as the text Render
// makes of that JSON, with the result type's body and markdown fields as blocks.
func encode(v any) (structured []byte, text string, err error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, "", err
	}
	structured = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return structured, Render(structured, blocksOf(reflect.TypeOf(v))...), nil
}

// blockPlans remembers, per result type, its block fields.
var blockPlans sync.Map // reflect.Type → []string

// blocksOf lists the JSON names of a result type's top-level string fields
// that Render writes as blocks: every body field, then the last markdown
// field (a Markdown block runs to the end of the answer, so only one can);
// and, as "list.member", the last body field of the rows of each top-level
// list of structs (mail_thread's texts), which Render writes below its row.
func blocksOf(t reflect.Type) []string {
	if t == nil {
		return nil
	}
	if p, ok := blockPlans.Load(t); ok {
		return p.([]string)
	}
	var bodies, nested []string
	markdown := ""
	if st := structOf(t); st != nil {
		for i := 0; i < st.NumField(); i++ {
			sf := st.Field(i)
			name := jsonName(sf)
			if name == "" {
				continue
			}
			if sf.Type.Kind() == reflect.Slice {
				if row := structOf(sf.Type.Elem()); row != nil {
					member := ""
					for j := 0; j < row.NumField(); j++ {
						if rf := row.Field(j); rf.Type.Kind() == reflect.String && framed(rf.Tag.Get("post")) && jsonName(rf) != "" {
							member = jsonName(rf)
						}
					}
					if member != "" {
						nested = append(nested, name+"."+member)
					}
				}
				continue
			}
			if sf.Type.Kind() != reflect.String {
				continue
			}
			switch f := sf.Tag.Get("post"); {
			case framed(f):
				bodies = append(bodies, name)
			case f == "markdown":
				markdown = name
			}
		}
	}
	if markdown != "" {
		bodies = append(bodies, markdown)
	}
	bodies = append(bodies, nested...)
	blockPlans.Store(t, bodies)
	return bodies
}

// framed: the formats the boundary writes between marker lines.
func framed(format string) bool { return format == "body" || format == "own_body" }

// structOf is t's struct type under any pointers, or nil.
func structOf(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// jsonName is an exported field's JSON name, "" when it has none.
func jsonName(sf reflect.StructField) string {
	if !sf.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// MaxAnswer is the most bytes a tool answer's text (as the JSON string the
// envelope carries) and structuredContent may take together, leaving room
// for the rest of the envelope under 1 MB. Handlers cut long lists and texts
// at their source, with a flag saying so; an answer that is still too long is
// refused whole, never cut here (see docs/design.md, "Bounded answers").
const MaxAnswer = 1<<20 - 4<<10

// TooLong returns the refusal of tool's answer when it is over MaxAnswer,
// "" when it fits.
func TooLong(tool string, structured []byte, text string) string {
	n := len(structured) + len(text) + 2
	if n+5*len(text) <= MaxAnswer {
		return "" // even with every byte of the text escaped, it fits
	}
	if n = len(structured) + jsonLen(text); n <= MaxAnswer {
		return ""
	}
	return fmt.Sprintf("The answer of %s would take %s, more than the 1 MB postern sends at once, and was not sent; ask for less (a smaller limit, fewer fields, one folder or account).", tool, kb(n))
}

// EnvelopeLen is how many bytes an answer takes in the envelope: its structured content as
// encoding/json writes it there (<, >, &, U+2028 and U+2029 as \u escapes) and its text as a
// JSON string. It is what a budget of answer bytes counts.
func EnvelopeLen(structured []byte, text string) int {
	n := len(structured) + jsonLen(text)
	for i := 0; i < len(structured); i++ {
		switch c := structured[i]; {
		case c == '<' || c == '>' || c == '&':
			n += 5
		case c == 0xe2 && i+2 < len(structured) && structured[i+1] == 0x80 && (structured[i+2] == 0xa8 || structured[i+2] == 0xa9):
			n += 3
		}
	}
	return n
}

func kb(n int) string { return fmt.Sprintf("%d KB", (n+1023)/1024) }

// jsonLen is the length of s written as a JSON string by encoding/json,
// which the envelope uses: quote, backslash and controls escaped, and <, >, &,
// U+2028, U+2029 and invalid bytes as \u escapes.
func jsonLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

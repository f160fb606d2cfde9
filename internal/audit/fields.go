package audit

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/search"
)

// arg is what the catalog's input schemas say of one top-level argument name, as far as the
// log cares: which of its values carry no stranger's text and are kept as they were. A name
// several tools use takes the union of what each accepts.
type arg struct {
	free     bool             // free text in some tool (ToolSpec.FreeText): length only in every tool
	integer  bool             // a whole number is kept (limits, counts)
	enum     map[string]bool  // a string among these is kept
	patterns []*regexp.Regexp // a string matching one of these is kept (ids, cursors, page names)
	query    bool             // the search language: its harmless operators are kept
	items    *arg             // an array's items
}

// queryArg is the argument that holds the search language (mail_search, mail_senders).
const queryArg = "query"

// catalogArgs is the table of every tool's arguments, read once from the embedded schemas.
var catalogArgs = sync.OnceValue(func() map[string]*arg {
	out := map[string]*arg{}
	for _, spec := range generated.Tools {
		b, err := generated.Files.ReadFile(spec.InputSchema)
		if err != nil {
			continue // the registry refuses to start without it
		}
		var s struct {
			Properties map[string]schemaProp `json:"properties"`
		}
		if json.Unmarshal(b, &s) != nil {
			continue
		}
		for name, p := range s.Properties {
			a := out[name]
			if a == nil {
				a = &arg{}
				out[name] = a
			}
			a.merge(p, name == queryArg)
		}
		// A token sent to the prepare half, or a subject to any tool, is free text there too.
		for _, name := range spec.FreeText {
			if a := out[name]; a != nil {
				a.free = true
			}
		}
	}
	return out
})

type schemaProp struct {
	Type    string      `json:"type"`
	Enum    []string    `json:"enum"`
	Pattern string      `json:"pattern"`
	Items   *schemaProp `json:"items"`
}

func (a *arg) merge(p schemaProp, query bool) {
	switch p.Type {
	case "integer":
		a.integer = true
	case "string":
		a.query = a.query || query
		for _, e := range p.Enum {
			if a.enum == nil {
				a.enum = map[string]bool{}
			}
			a.enum[e] = true
		}
		if p.Pattern != "" {
			if re, err := regexp.Compile(p.Pattern); err == nil {
				a.patterns = append(a.patterns, re)
			}
		}
	case "array":
		if p.Items != nil {
			if a.items == nil {
				a.items = &arg{}
			}
			a.items.merge(*p.Items, false)
		}
	}
}

// keep returns v as it was when a accepts it as a value that carries no stranger's text.
func (a *arg) keep(v any) (any, bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		if a.enum[v] {
			return v, true
		}
		for _, re := range a.patterns {
			if re.MatchString(v) {
				return cut(v, MaxStringRunes), true
			}
		}
	case float64:
		return v, a.integer && v == math.Trunc(v) && math.Abs(v) < 1<<53
	case json.Number:
		_, err := strconv.ParseInt(string(v), 10, 64)
		return v, a.integer && err == nil
	case int, int32, int64, uint, uint32, uint64:
		return v, a.integer
	}
	return nil, false
}

// query summarises a search: each token that reads, on its own, as an operator whose value is
// a date, a span, a size or one of postern's words (after: before: larger: smaller: is: has:)
// is kept as written; the text around them (words, phrases, from: to: cc: subject: and the
// in: and account: names, which a stranger or the agent may have written) is masked as any
// string, so a code searched for is hidden.
func (s summarizer) query(q string) string {
	var b strings.Builder
	from := 0 // the start of the text not yet written
	for i := 0; i < len(q); {
		if r, n := utf8.DecodeRuneInString(q[i:]); unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(q) {
			r, n := utf8.DecodeRuneInString(q[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		if harmlessOperator(q[i:j]) {
			if from < i {
				b.WriteString(s.masked(q[from:i]))
			}
			b.WriteString(q[i:j])
			from = j
		}
		i = j
	}
	if from < len(q) {
		b.WriteString(s.masked(q[from:]))
	}
	return cut(b.String(), MaxStringRunes)
}

var harmlessOps = map[string]bool{"after": true, "before": true, "larger": true, "smaller": true, "is": true, "has": true}

// harmlessOperator reports whether tok is one such operator with a value of printable ASCII
// that postern's search parser accepts.
func harmlessOperator(tok string) bool {
	op, val, ok := strings.Cut(strings.TrimPrefix(tok, "-"), ":")
	if !ok || val == "" || !harmlessOps[strings.ToLower(op)] {
		return false
	}
	for i := 0; i < len(val); i++ {
		if c := val[i]; c <= ' ' || c >= 0x7f || c == '"' {
			return false
		}
	}
	q, err := search.Parse(tok, time.Time{})
	return err == nil && len(q.Terms) == 0 && len(q.Folders) == 0 && len(q.Accounts) == 0
}

// hideLongDigits hides every run of four or more digits, of any script's decimal digits
// (unicode.IsDigit: ASCII, fullwidth, Arabic-Indic, Devanagari, mathematical…), each digit
// becoming '#'. A '#' next to digits (a mask's or an earlier rule's) counts toward the run, so
// a code whose ASCII digits were hidden does not leave its other digits.
func hideLongDigits(s string) string {
	var out []byte
	start, digits, runes := -1, 0, 0 // the run being read: its byte start, digits and length
	flush := func(end int) {
		if start >= 0 && digits > 0 && runes >= 4 {
			if out == nil {
				out = append(make([]byte, 0, len(s)), s[:start]...)
			}
			for range runes {
				out = append(out, '#')
			}
		} else if out != nil && start >= 0 {
			out = append(out, s[start:end]...)
		}
		start, digits, runes = -1, 0, 0
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if d := unicode.IsDigit(r); d || r == '#' {
			if start < 0 {
				start = i
			}
			if d {
				digits++
			}
			runes++
		} else {
			flush(i)
			if out != nil {
				out = append(out, s[i:i+n]...)
			}
		}
		i += n
	}
	flush(len(s))
	if out == nil {
		return s
	}
	return string(out)
}

// hideDigits replaces every digit, of any script, with '#': the mask when the caller gives none.
func hideDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return '#'
		}
		return r
	}, s)
}

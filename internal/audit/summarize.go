package audit

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Limits of Summarize.
const (
	MaxStringRunes = 64 // runes kept of a string argument, after masking
	MaxDepth       = 4  // nesting kept; deeper arrays and objects become {"length": N}
	MaxItems       = 20 // array items kept; the rest are counted in a last {"more": N}
	MaxKeys        = 32 // object keys kept (sorted); the rest are counted under "…more"
)

// Summarize returns what the log keeps of a call's arguments. A value whose key is in freeText
// (at any depth), or a top-level one the catalog makes free text in any tool, becomes
// {"length": N}, N its size in bytes (a string's UTF-8, anything else's JSON). A top-level value that carries no stranger's text by what the catalog's input schemas
// say of its name is kept as it was: a boolean, a whole number where the catalog has an
// integer, a string among the catalog's enum or matching its pattern (message ids, cursors,
// page names), each such item of an array; in the query, the operators after: before: larger:
// smaller: is: has: (see query). Every other string, keys included, goes through mask, then
// has each run of 4+ digits of any script hidden (hideLongDigits), and is cut to
// MaxStringRunes; other numbers are kept unless that changes how they read; arrays and objects
// are summarised the same way down to MaxDepth. A nil mask replaces every digit with '#'.
func Summarize(args map[string]any, freeText map[string]bool, mask func(string) string) map[string]any {
	return summarize(args, freeText, mask, catalogArgs())
}

func summarize(args map[string]any, freeText map[string]bool, mask func(string) string, known map[string]*arg) map[string]any {
	s := summarizer{freeText: freeText, mask: mask, known: known}
	if s.mask == nil {
		s.mask = hideDigits
	}
	out, _ := s.object(args, 0).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// ErrorText is what the log keeps of a refusal or failure sentence: masked, each run of 4+
// digits of any script hidden, then cut to MaxErrorRunes. A nil mask replaces every digit
// with '#'.
func ErrorText(msg string, mask func(string) string) string {
	if mask == nil {
		mask = hideDigits
	}
	return cut(hideLongDigits(mask(msg)), MaxErrorRunes)
}

type summarizer struct {
	freeText map[string]bool
	mask     func(string) string
	known    map[string]*arg // top-level arguments by name, from the catalog
}

func (s summarizer) value(v any, depth int) any {
	switch v := v.(type) {
	case nil:
		return nil
	case bool:
		return v
	case string:
		return s.str(v)
	case json.Number:
		return s.number(string(v), v)
	case float64:
		return s.number(strconv.FormatFloat(v, 'g', -1, 64), v)
	case float32:
		return s.number(strconv.FormatFloat(float64(v), 'g', -1, 32), v)
	case int:
		return s.number(strconv.Itoa(v), v)
	case int64:
		return s.number(strconv.FormatInt(v, 10), v)
	case int32:
		return s.number(strconv.FormatInt(int64(v), 10), v)
	case uint:
		return s.number(strconv.FormatUint(uint64(v), 10), v)
	case uint64:
		return s.number(strconv.FormatUint(v, 10), v)
	case uint32:
		return s.number(strconv.FormatUint(uint64(v), 10), v)
	case map[string]any:
		return s.object(v, depth)
	case []any:
		return s.array(v, depth, nil)
	}
	// Any other type (typed maps, slices, structs, json.RawMessage): read it back as plain JSON.
	b, err := json.Marshal(v)
	if err != nil {
		return "(not JSON)"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var plain any
	if dec.Decode(&plain) != nil {
		return "(not JSON)"
	}
	return s.value(plain, depth)
}

// masked is v through the mask and the digit rule.
func (s summarizer) masked(v string) string { return hideLongDigits(s.mask(v)) }

func (s summarizer) str(v string) string { return cut(s.masked(v), MaxStringRunes) }

// number keeps n unless the mask would change how it reads (a code sent as a number).
func (s summarizer) number(text string, n any) any {
	if m := s.masked(text); m != text {
		return cut(m, MaxStringRunes)
	}
	return n
}

func (s summarizer) object(m map[string]any, depth int) any {
	if depth >= MaxDepth {
		return lengthOf(m)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, min(len(keys), MaxKeys+1))
	for i, k := range keys {
		if i == MaxKeys {
			out["…more"] = len(keys) - MaxKeys
			break
		}
		a := s.known[k]
		if depth > 0 {
			a = nil // only top-level arguments are the catalog's
		}
		if s.freeText[k] || a != nil && a.free {
			out[s.str(k)] = lengthOf(m[k])
			continue
		}
		if a != nil {
			out[s.str(k)] = s.typed(a, m[k], depth+1)
			continue
		}
		out[s.str(k)] = s.value(m[k], depth+1)
	}
	return out
}

// typed summarises v, the value of a top-level argument the catalog describes as a.
func (s summarizer) typed(a *arg, v any, depth int) any {
	if kept, ok := a.keep(v); ok {
		return kept
	}
	if q, ok := v.(string); ok && a.query {
		return s.query(q)
	}
	if items, ok := v.([]any); ok && a.items != nil {
		return s.array(items, depth, a.items)
	}
	return s.value(v, depth)
}

// array summarises a; item, when not nil, is what the catalog says of its items.
func (s summarizer) array(a []any, depth int, item *arg) any {
	if depth >= MaxDepth {
		return lengthOf(a)
	}
	out := make([]any, 0, min(len(a), MaxItems+1))
	for i, v := range a {
		if i == MaxItems {
			out = append(out, map[string]any{"more": len(a) - MaxItems})
			break
		}
		if item != nil {
			out = append(out, s.typed(item, v, depth+1))
			continue
		}
		out = append(out, s.value(v, depth+1))
	}
	return out
}

// lengthOf is {"length": N}: a string's UTF-8 bytes, anything else's JSON bytes.
func lengthOf(v any) map[string]any {
	if s, ok := v.(string); ok {
		return map[string]any{"length": len(s)}
	}
	if v == nil {
		return map[string]any{"length": 0}
	}
	b, _ := json.Marshal(v)
	return map[string]any{"length": len(b)}
}

// cut keeps at most n runes of s, the last being "…" when something was cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// IDsFrom collects, in document order and without repeats, every string value under a key "id"
// or "thread" anywhere in a JSON result. Whatever follows a syntax error is ignored.
func IDsFrom(structured []byte) []string {
	w := idWalker{dec: json.NewDecoder(bytes.NewReader(structured)), seen: map[string]bool{}}
	w.dec.UseNumber()
	w.walk(false)
	return w.ids
}

type idWalker struct {
	dec  *json.Decoder
	seen map[string]bool
	ids  []string
}

// walk reads one value; wanted says it sits under an "id" or "thread" key. It returns false on
// a syntax error or the end of input.
func (w *idWalker) walk(wanted bool) bool {
	tok, err := w.dec.Token()
	if err != nil {
		return false
	}
	switch t := tok.(type) {
	case string:
		if wanted && !w.seen[t] {
			w.seen[t] = true
			w.ids = append(w.ids, t)
		}
	case json.Delim:
		switch t {
		case '{':
			for w.dec.More() {
				key, err := w.dec.Token()
				if err != nil {
					return false
				}
				k, _ := key.(string)
				if !w.walk(k == "id" || k == "thread") {
					return false
				}
			}
			_, err := w.dec.Token()
			return err == nil
		case '[':
			for w.dec.More() {
				if !w.walk(false) {
					return false
				}
			}
			_, err := w.dec.Token()
			return err == nil
		}
	}
	return true
}

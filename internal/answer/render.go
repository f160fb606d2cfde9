package answer

import (
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/internal/clean"
)

// Render turns a structured result into its text form, for clients that do
// not read structuredContent. The format (docs/design.md, "Text form") is
// made so that no value can read as a label, a field, a row or a frame:
//
//	subject: "Invoice; forged: false"
//	count: 2
//	to: ["a@example.com", "b@example.com"]
//	message: {id: "m1x2"; forged: true}
//	messages:
//	- id: "m1x2"; subject: "Hi"; forged: true
//	text:
//	<<<mail-text MARK begins>>>
//	…
//	<<<mail-text MARK ends>>>
//	texts:
//	- message: {id: "m1x2"}; quoted_lines: 3; text:
//	<<<mail-text MARK begins>>>
//	…
//	<<<mail-text MARK ends>>>
//
// One line per top-level field, "name: value"; a list of objects is "name:"
// and one row per object, "- name: value; name: value". Every string is a
// JSON string (quote, backslash and every control or line-separator
// character escaped), numbers, booleans and null are bare, objects are in
// braces, lists in brackets. The top-level fields named in blocks (the
// catalog's body and markdown fields) are written last, raw, under "name:":
// a body is already a frame; a Markdown page is postern's own text and runs
// to the end of the answer, so at most the last block may be one. A block
// named "list.member" is a member of the rows of a top-level list: when its
// value is a frame it is written last in its row, "; member:" ending the row's
// line and the frame on the lines below, before the next row; any other
// value stays quoted on the row's line. An answer without fields is
// "nothing found"; one whose only field is synced_at (how fresh the store is)
// is "nothing found" followed by it.
func Render(structured []byte, blocks ...string) string {
	b := make([]byte, 0, len(structured)+len(structured)/4)
	var deferred []gjson.Result
	var deferredKeys []string
	nested := map[string]string{} // list → its rows' block member
	for _, k := range blocks {
		if list, member, ok := strings.Cut(k, "."); ok {
			nested[list] = member
		}
	}
	found := false
	gjson.ParseBytes(structured).ForEach(func(k, v gjson.Result) bool {
		found = found || k.Str != syncedAt
		if v.Type == gjson.String && contains(blocks, k.Str) {
			deferred, deferredKeys = append(deferred, v), append(deferredKeys, k.Str)
			return true
		}
		b = appendField(b, k.Str, v, nested[k.Str])
		return true
	})
	for i, v := range deferred {
		b = append(b, deferredKeys[i]...)
		b = append(b, ':')
		if body := strings.TrimRight(v.Str, "\n"); body != "" {
			b = append(b, '\n')
			b = append(b, body...)
		}
		b = append(b, '\n')
	}
	for len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "nothing found"
	}
	if !found {
		return "nothing found\n" + string(b)
	}
	return string(b)
}

// syncedAt is the field that says how fresh the store is (catalog: synced_at); alone, it
// does not make an answer something found.
const syncedAt = "synced_at"

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// appendField writes one top-level field and the line end; block names the
// member of its rows written as a block, if any.
func appendField(b []byte, key string, v gjson.Result, block string) []byte {
	b = append(b, key...)
	if v.IsArray() && v.Get("0").IsObject() {
		b = append(b, ":\n"...)
		v.ForEach(func(_, it gjson.Result) bool {
			b = append(b, "- "...)
			frame := ""
			if block != "" && it.IsObject() {
				if f := it.Get(gjson.Escape(block)); f.Type == gjson.String && isFrame(f.Str) {
					frame = f.Str
				}
			}
			switch {
			case frame != "":
				b = appendMembers(b, it, block)
				if len(b) > 0 && b[len(b)-1] != ' ' {
					b = append(b, "; "...)
				}
				b = append(b, block...)
				b = append(b, ":\n"...)
				b = append(b, frame...)
			case it.IsObject() && len(it.Raw) > 2:
				b = appendMembers(b, it, "")
			default:
				b = appendValue(b, it)
			}
			b = append(b, '\n')
			return true
		})
		return b
	}
	b = append(b, ": "...)
	b = appendValue(b, v)
	return append(b, '\n')
}

// appendMembers writes an object's members, "name: value; name: value",
// but for the one named skip (a row's block, written after them).
func appendMembers(b []byte, v gjson.Result, skip string) []byte {
	first := true
	v.ForEach(func(k, x gjson.Result) bool {
		if skip != "" && k.Str == skip {
			return true
		}
		if !first {
			b = append(b, "; "...)
		}
		first = false
		b = append(b, k.Str...)
		b = append(b, ": "...)
		b = appendValue(b, x)
		return true
	})
	return b
}

// appendValue writes a value on one line.
func appendValue(b []byte, v gjson.Result) []byte {
	switch {
	case v.Type == gjson.String:
		return appendQuoted(b, v.Str)
	case v.IsObject():
		b = append(b, '{')
		b = appendMembers(b, v, "")
		return append(b, '}')
	case v.IsArray():
		b = append(b, '[')
		first := true
		v.ForEach(func(_, it gjson.Result) bool {
			if !first {
				b = append(b, ", "...)
			}
			first = false
			b = appendValue(b, it)
			return true
		})
		return append(b, ']')
	case v.Type == gjson.Null:
		return append(b, "null"...)
	}
	return append(b, v.Raw...) // a number, true or false, as the JSON has it
}

// isFrame reports whether s is one frame as clean.Frame writes it: a line
// "<<<KIND MARK begins>>>", and its "<<<KIND MARK ends>>>" as the last line
// and nowhere else. Only such a value is written raw inside a list, since
// only its end line, which nothing inside can repeat, says where it stops.
func isFrame(s string) bool {
	first, _, ok := strings.Cut(s, "\n")
	if !ok || !strings.HasPrefix(first, "<<<") || !strings.HasSuffix(first, " begins>>>") {
		return false
	}
	head := strings.TrimSuffix(strings.TrimPrefix(first, "<<<"), " begins>>>")
	kind, mark, ok := strings.Cut(head, " ")
	if !ok || kind == "" || !clean.ValidMark(mark) || strings.Trim(kind, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return false
	}
	end := "<<<" + kind + " " + mark + " ends>>>"
	return strings.HasSuffix(s, "\n"+end) && strings.Index(s, "\n"+end) == len(s)-len(end)-1 &&
		!strings.ContainsAny(s, "\r\u0085\u2028\u2029")
}

// appendQuoted writes s as a JSON string that holds no line break or control
// character of any kind: quote and backslash escaped, \n \r \t, every other C0
// and C1 control (NEL U+0085 among them), DEL, U+2028 and U+2029 as \u
// escapes, an invalid UTF-8 byte as \ufffd. Anything else is written as it is.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if !(r == utf8.RuneError && size == 1) && r > 0x9f && r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case r == utf8.RuneError:
			b = append(b, `\ufffd`...)
		default:
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

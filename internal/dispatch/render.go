package dispatch

import (
	"io"
	"os"
	"strings"

	"github.com/tidwall/gjson"
)

var stderr io.Writer = os.Stderr

// Render turns a structured result into a few short text lines: one line per
// scalar field, one line per row of a list, multi-line text under its field name.
// Clients that do not read structuredContent see the same data this way.
func Render(structured []byte) string {
	var b strings.Builder
	root := gjson.ParseBytes(structured)
	root.ForEach(func(k, v gjson.Result) bool {
		renderField(&b, k.Str, v)
		return true
	})
	out := strings.TrimRight(b.String(), "\n")
	if out == "" {
		return "nothing found"
	}
	return out
}

func renderField(b *strings.Builder, key string, v gjson.Result) {
	switch {
	case v.IsArray():
		items := v.Array()
		if len(items) == 0 {
			b.WriteString(key + ": none\n")
			return
		}
		if !items[0].IsObject() {
			parts := make([]string, len(items))
			for i, it := range items {
				parts[i] = scalar(it)
			}
			b.WriteString(key + ": " + strings.Join(parts, ", ") + "\n")
			return
		}
		b.WriteString(key + ":\n")
		for _, it := range items {
			b.WriteString("- " + inline(it) + "\n")
		}
	case v.IsObject():
		b.WriteString(key + ": " + inline(v) + "\n")
	case v.Type == gjson.String && strings.Contains(v.Str, "\n"):
		b.WriteString(key + ":\n" + strings.TrimRight(v.Str, "\n") + "\n")
	default:
		b.WriteString(key + ": " + scalar(v) + "\n")
	}
}

// inline writes an object on one line: "k: v; k: v".
func inline(v gjson.Result) string {
	var parts []string
	v.ForEach(func(k, x gjson.Result) bool {
		switch {
		case x.IsArray():
			var items []string
			for _, it := range x.Array() {
				if it.IsObject() || it.IsArray() {
					items = append(items, "("+inline(it)+")")
				} else {
					items = append(items, oneLine(scalar(it)))
				}
			}
			parts = append(parts, k.Str+": "+strings.Join(items, ", "))
		case x.IsObject():
			parts = append(parts, k.Str+": ("+inline(x)+")")
		default:
			parts = append(parts, k.Str+": "+oneLine(scalar(x)))
		}
		return true
	})
	return strings.Join(parts, "; ")
}

func scalar(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

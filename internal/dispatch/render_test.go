package dispatch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// FuzzRenderSameAsGJSON: Render, which reads the JSON itself, writes what the
// earlier gjson-based renderer (kept below as the reference) wrote, for any
// JSON as encoding/json writes it.
func FuzzRenderSameAsGJSON(f *testing.F) {
	for _, s := range []string{
		`{"version":"1","scopes":["a","b"],"none":[],"rows":[{"n":"x","k":1,"tags":["p","q"]},{"n":"y","k":2}],"text":"line one\nline two\n","obj":{"a":true}}`,
		`{"a":[{"b":[{"c":1},[1,2]],"d":"x  y\tz"},3],"e":null,"f":-1.5e3,"g":"\u00e9\ud83d\ude00 \" \\ /"}`,
		`{}`, `[]`, `"s"`, `{"a":{"b":{"c":{}}},"l":[[],[[]]]}`, `{"k":"\n\n","m":"  spaced  out  "}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		if got, want := Render(b), renderGJSON(b); got != want {
			t.Fatalf("Render(%s)\n got: %q\nwant: %q", b, got, want)
		}
	})
}

// Render turns a structured result into a few short text lines: one line per
// scalar field, one line per row of a list, multi-line text under its field name.
// Clients that do not read structuredContent see the same data this way.
func renderGJSON(structured []byte) string {
	var b strings.Builder
	root := gjson.ParseBytes(structured)
	root.ForEach(func(k, v gjson.Result) bool {
		gjRenderField(&b, k.Str, v)
		return true
	})
	out := strings.TrimRight(b.String(), "\n")
	if out == "" {
		return "nothing found"
	}
	return out
}

func gjRenderField(b *strings.Builder, key string, v gjson.Result) {
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
				parts[i] = gjScalar(it)
			}
			b.WriteString(key + ": " + strings.Join(parts, ", ") + "\n")
			return
		}
		b.WriteString(key + ":\n")
		for _, it := range items {
			b.WriteString("- " + gjInline(it) + "\n")
		}
	case v.IsObject():
		b.WriteString(key + ": " + gjInline(v) + "\n")
	case v.Type == gjson.String && strings.Contains(v.Str, "\n"):
		b.WriteString(key + ":\n" + strings.TrimRight(v.Str, "\n") + "\n")
	default:
		b.WriteString(key + ": " + gjScalar(v) + "\n")
	}
}

// inline writes an object on one line: "k: v; k: v".
func gjInline(v gjson.Result) string {
	var parts []string
	v.ForEach(func(k, x gjson.Result) bool {
		switch {
		case x.IsArray():
			var items []string
			for _, it := range x.Array() {
				if it.IsObject() || it.IsArray() {
					items = append(items, "("+gjInline(it)+")")
				} else {
					items = append(items, gjOneLine(gjScalar(it)))
				}
			}
			parts = append(parts, k.Str+": "+strings.Join(items, ", "))
		case x.IsObject():
			parts = append(parts, k.Str+": ("+gjInline(x)+")")
		default:
			parts = append(parts, k.Str+": "+gjOneLine(gjScalar(x)))
		}
		return true
	})
	return strings.Join(parts, "; ")
}

func gjScalar(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

func gjOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

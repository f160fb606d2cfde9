package audit

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// codeMask stands in for package mask: it hides any six digits, with or without separators.
var codeRE = regexp.MustCompile(`\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d`)

func codeMask(s string) string { return codeRE.ReplaceAllString(s, "[code]") }

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSummarizeFreeTextByLengthOnly(t *testing.T) {
	body := strings.Repeat("x", 10*1024)
	got := Summarize(map[string]any{
		"body":  body,
		"note":  map[string]any{"text": "private words", "tags": []any{"a"}},
		"parts": []any{map[string]any{"body": "also private"}},
		"empty": nil,
	}, map[string]bool{"body": true, "text": true, "empty": true}, codeMask)
	want := map[string]any{
		"body":  map[string]any{"length": 10240},
		"note":  map[string]any{"text": map[string]any{"length": 13}, "tags": []any{"a"}},
		"parts": []any{map[string]any{"body": map[string]any{"length": 12}}},
		"empty": map[string]any{"length": 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summarize =\n%s\nwant\n%s", encode(t, got), encode(t, want))
	}
	// Free text that is not a string is measured as JSON.
	got = Summarize(map[string]any{"body": []any{"ab", "cd"}}, map[string]bool{"body": true}, codeMask)
	if encode(t, got) != `{"body":{"length":11}}` {
		t.Errorf("array free text: %s", encode(t, got))
	}
}

func TestSummarizeCutsAndMasks(t *testing.T) {
	long := strings.Repeat("é", 300)
	got := Summarize(map[string]any{
		"query":  "from:bank 482 913 subject:code",
		"label":  strings.Repeat("a", 60) + "482913",          // code across the cut
		"late":   strings.Repeat("b", 200) + " code 48-29-13", // code beyond the cut
		"long":   long,
		"limit":  float64(50),
		"pin":    float64(482913), // a code sent as a number
		"unread": true,
		"nested": map[string]any{"to": []any{"Code 482913 <x@example.com>", long}},
	}, nil, codeMask)
	s := encode(t, got)
	for _, leak := range []string{"482", "913", "48-29", strings.Repeat("é", 64)} {
		if strings.Contains(s, leak) {
			t.Errorf("%q got through: %s", leak, s)
		}
	}
	if got["query"] != "from:bank [code] subject:code" {
		t.Errorf("query = %q, want it kept and masked", got["query"])
	}
	if got["limit"] != float64(50) || got["unread"] != true {
		t.Errorf("numbers or booleans changed: %v %v", got["limit"], got["unread"])
	}
	if l := got["long"].(string); utf8.RuneCountInString(l) != MaxStringRunes || !strings.HasSuffix(l, "…") {
		t.Errorf("long string kept as %d runes %q", utf8.RuneCountInString(l), l)
	}
	if got["label"] != strings.Repeat("a", 60)+"[co…" {
		t.Errorf("label = %q; the mask must run before the cut", got["label"])
	}
}

func TestSummarizeNilMaskHidesDigits(t *testing.T) {
	// "q" and "nn" are arguments of no catalog tool, so nothing is known of them.
	got := Summarize(map[string]any{"q": "code 482913", "nn": float64(12)}, nil, nil)
	if got["q"] != "code ######" || got["nn"] != "##" {
		t.Errorf("nil mask: %s", encode(t, got))
	}
	if ErrorText("code 482913 refused", nil) != "code ###### refused" {
		t.Errorf("ErrorText with nil mask kept digits")
	}
}

func TestSummarizeLimitsShape(t *testing.T) {
	deep := map[string]any{"v": "x"}
	for range 10 {
		deep = map[string]any{"d": deep}
	}
	items := make([]any, 100)
	for i := range items {
		items[i] = "m1"
	}
	keys := map[string]any{}
	for i := range 100 {
		keys[string(rune('A'+i%26))+strings.Repeat("k", i/26)] = 1
	}
	got := Summarize(map[string]any{"deep": deep, "items": items, "keys": keys}, nil, codeMask)
	s := encode(t, got)
	if want := `{"d":{"d":{"d":{"length":`; !strings.Contains(s, `"deep":`+want) {
		t.Errorf("depth not limited: %s", s)
	}
	if a := got["items"].([]any); len(a) != MaxItems+1 || !reflect.DeepEqual(a[MaxItems], map[string]any{"more": 80}) {
		t.Errorf("items kept: %d, last %v", len(a), a[len(a)-1])
	}
	if m := got["keys"].(map[string]any); len(m) != MaxKeys+1 || m["…more"] != 68 {
		t.Errorf("keys kept: %d, more %v", len(m), m["…more"])
	}
	if Summarize(nil, nil, codeMask) == nil {
		t.Error("nil args summarised as nil; want {}")
	}
	// Typed Go values are read as JSON, not dropped or passed through whole.
	typed := Summarize(map[string]any{"s": []string{"482913", "ok"}, "m": map[string]int{"n": 1}}, nil, codeMask)
	if encode(t, typed) != `{"m":{"n":1},"s":["[code]","ok"]}` {
		t.Errorf("typed values: %s", encode(t, typed))
	}
}

// Whatever the arguments, no string longer than the cut and no free text reaches the summary.
func TestSummarizeNeverLetsLongStringsThrough(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		n := r.IntN(400)
		var b strings.Builder
		for range n {
			b.WriteRune(rune('a' + r.IntN(26)))
		}
		return "SECRET" + b.String()
	}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.IntN(5); {
		case k == 0 || depth > 5:
			return word()
		case k == 1:
			return r.Float64()
		case k == 2:
			a := make([]any, r.IntN(8))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		default:
			m := map[string]any{}
			for range r.IntN(6) {
				m[[]string{"body", "text", "x", "y", "z"}[r.IntN(5)]] = gen(depth + 1)
			}
			return m
		}
	}
	var check func(v any, path string)
	check = func(v any, path string) {
		switch v := v.(type) {
		case string:
			if utf8.RuneCountInString(v) > MaxStringRunes {
				t.Fatalf("%s: %d runes kept", path, utf8.RuneCountInString(v))
			}
		case []any:
			for _, x := range v {
				check(x, path+"[]")
			}
		case map[string]any:
			for k, x := range v {
				if k == "body" || k == "text" {
					if _, ok := x.(map[string]any)["length"]; !ok || len(x.(map[string]any)) != 1 {
						t.Fatalf("%s.%s: free text kept as %v", path, k, x)
					}
				}
				check(x, path+"."+k)
			}
		}
	}
	for range 300 {
		args := map[string]any{"body": word(), "a": gen(0), "b": gen(0)}
		check(Summarize(args, map[string]bool{"body": true, "text": true}, codeMask), "")
	}
}

func TestIDsFrom(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`{"messages":[{"id":"m1","thread":"t1","from":{"id":"not-a-message?"}},{"id":"m2","thread":"t1","replies":[{"id":"m3"}]},{"id":"m1"}],"id":7,"thread":null}`,
			[]string{"m1", "t1", "not-a-message?", "m2", "m3"}},
		{`{"id":"m9","attachments":[{"name":"id","size":3}]}`, []string{"m9"}},
		{`[{"id":"a"},{"id":"b"}]`, []string{"a", "b"}},
		{`{"id":{"id":"inner"}}`, []string{"inner"}},
		{`{"id":"m1","rest":[{"id":"m2"},{"id":`, []string{"m1", "m2"}}, // cut short: what was read
		{``, nil},
		{`not json`, nil},
	} {
		if got := IDsFrom([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("IDsFrom(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

package answer

import "testing"

func TestRender(t *testing.T) {
	got := Render([]byte(`{"version":"1","scopes":["a","b"],"none":[],"rows":[{"n":"x; k: 2","k":1,"tags":["p","q"],"o":{"a":null}},{"n":"y\"","k":2}],"text":"line one\nline two\n","obj":{"a":true},"empty":{}}`), "text")
	want := "version: \"1\"\nscopes: [\"a\", \"b\"]\nnone: []\nrows:\n- n: \"x; k: 2\"; k: 1; tags: [\"p\", \"q\"]; o: {a: null}\n- n: \"y\\\"\"; k: 2\nobj: {a: true}\nempty: {}\ntext:\nline one\nline two"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := Render([]byte(`{}`)); got != "nothing found" {
		t.Fatalf("an empty answer: %q", got)
	}
	// Not named as a block, a string with line breaks stays on its line.
	if got := Render([]byte(`{"text":"a\nforged: false"}`)); got != `text: "a\nforged: false"` {
		t.Fatalf("a string with a line break: %q", got)
	}
}

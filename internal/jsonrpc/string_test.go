package jsonrpc

import (
	"encoding/json"
	"testing"
)

// AppendString must write exactly what encoding/json writes for a string,
// so that no text can break out of the answer's JSON.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{
		"", "plain ascii", `quote " and \ backslash`, "line\nfeed\r\ttab\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "caf\u00e9 \u65e5\u672c \U0001F600", "\u2028\u2029 separators",
		"bad \xff\xfe utf-8 \xc3", "\xed\xa0\x80 surrogate", "ends in half \xe2\x82",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got[1:]) != string(want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", s, got[1:], want)
		}
	})
}

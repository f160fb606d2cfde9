package fts

import (
	"slices"
	"testing"

	"github.com/postern-mcp/postern/internal/search"
)

func TestWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"Quarterly\uF8FFreport", []string{"quarterly\uf8ffreport"}}, // private use stays in the word
		{"Caf\u0065\u0301 menu", []string{"cafe\u0301", "menu"}},     // a combining mark stays with its letter
		{`"quoted" OR (x*) NEAR`, []string{"quoted", "or", "x", "near"}},
		{"  -- ", nil},
	} {
		if got := Words(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Expr quotes every word, so nothing written is FTS5 syntax.
func TestExpr(t *testing.T) {
	for _, c := range []struct {
		term search.Term
		want string
	}{
		{search.Term{Text: "Annual Report"}, `"annual report"`},
		{search.Term{Text: "rep", Prefix: true}, `"rep"*`},
		{search.Term{Text: `a" OR b:*`, Field: "from"}, `{from_addr} : "a or b"`},
		{search.Term{Text: "x", Field: "subject", Prefix: true}, `{subject} : "x"*`},
		{search.Term{Text: "--"}, ""},
	} {
		if got := Expr(c.term); got != c.want {
			t.Errorf("Expr(%+v) = %s, want %s", c.term, got, c.want)
		}
	}
}

func TestPlainWordAndPlaceholders(t *testing.T) {
	for w, want := range map[string]bool{"abc123": true, "": false, "Abc": false, "café": false, "a-b": false} {
		if PlainWord(w) != want {
			t.Errorf("PlainWord(%q) = %v, want %v", w, !want, want)
		}
	}
	for n, want := range map[int]string{0: "", 1: "?", 3: "?,?,?"} {
		if got := Placeholders(n); got != want {
			t.Errorf("Placeholders(%d) = %q, want %q", n, got, want)
		}
	}
}

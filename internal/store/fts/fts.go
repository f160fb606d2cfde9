// Package fts turns what a search asks for into SQLite FTS5 expressions, splitting text into
// words the way the store's indexes (unicode61, diacritics removed) do, so that nothing an
// agent writes is read as FTS5 syntax.
package fts

import (
	"strings"
	"unicode"

	"github.com/postern-mcp/postern/internal/search"
)

// Column is the meta_fts column a field of the search language reads.
var Column = map[string]string{"from": "from_addr", "to": "to_addr", "cc": "cc_addr", "subject": "subject"}

// Words splits text the way the index does: runs of letters and digits, lower-cased.
func Words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		// As the index's unicode61 tokenizer: letters, numbers and private-use characters make words.
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Co, r) {
			cur = append(cur, r)
		} else {
			flush()
		}
	}
	flush()
	return out
}

// PlainWord reports whether w is lower-case ASCII letters and digits, which
// the index's tokenizer keeps as they are.
func PlainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return w != ""
}

// Expr is an FTS5 expression for a term: its words as one quoted phrase
// (so nothing an agent writes is FTS syntax), a trailing * for a prefix, and a
// column filter for from:/to:/cc:/subject:.
func Expr(t search.Term) string {
	words := Words(t.Text)
	if len(words) == 0 {
		return ""
	}
	expr := `"` + strings.Join(words, " ") + `"`
	if t.Prefix {
		expr += "*"
	}
	if col := Column[t.Field]; col != "" {
		expr = "{" + col + "} : " + expr
	}
	return expr
}

// Placeholders is n SQL parameters, comma-separated.
func Placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

package mask

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/clean"
)

// TestDigitRuns: digitValue relies on Unicode laying every decimal digit out in runs of ten.
func TestDigitRuns(t *testing.T) {
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (int(rg.Hi)-int(rg.Lo)+1)%10 != 0 {
			t.Errorf("Nd range %U–%U is not runs of ten", rg.Lo, rg.Hi)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (int(rg.Hi)-int(rg.Lo)+1)%10 != 0 {
			t.Errorf("Nd range %U–%U is not runs of ten", rg.Lo, rg.Hi)
		}
	}
	for _, c := range []struct {
		r rune
		d int
	}{{'٣', 3}, {'۷', 7}, {'९', 9}, {'０', 0}, {'９', 9}, {'๕', 5}, {'𝟘', 0}, {'𝟡', 9}, {'᠑', 1}} {
		if d, ok := digitValue(c.r); !ok || d != c.d {
			t.Errorf("digitValue(%U) = %d, %v; want %d", c.r, d, ok, c.d)
		}
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"plain ascii":       "plain ascii",
		"４８２９１３":            "482913",
		"٤٨٢٩١٣":            "482913",
		"४८२९१३":            "482913",
		"раssword":          "password", // Cyrillic р, а
		"Раssword":          "Password",
		"𝐜𝐨𝐝𝐞 ①②":           "code 12",
		"ﬁnd":               "find",
		"Ｃｏｄｅ：":             "Code:",
		"οne-time pаsscοde": "one-time passcode", // Greek ο, Cyrillic а
		"код":               "koд",
		// Left out: private use, marks on a character, keycaps, variation selectors, format.
		"48\uE00029\U000F000013\U0010FFFD": "482913",
		"4\u03328\u0332 2\u20DD":           "48 2",
		"7\uFE0F\u20E38\uFE0F\u20E3":       "78",
		"4\U000E01008\u200E2\u00AD9":       "4829",
		"e\u0301t\u0301e\u0301":            "ete",
		"4\u09038":                         "48", // a spacing mark after a digit
		// The Braille blank: nothing between digits, a space elsewhere.
		"4\u28008\u2800\u28002":          "48  2",
		"code\u2800is\u28004\u28008":     "code is 48",
		"\u2779\u277d\u2781\u24ff\u277f": "4820\u277f",
	} {
		if got := foldString(in); got != want {
			t.Errorf("foldString(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestUnseen: below U+0300, unseen's shortcut says what the tables would.
func TestUnseen(t *testing.T) {
	for r := rune(0x80); r < 0x300; r++ {
		if unseen(r) != (clean.Forbidden(r) || unicode.In(r, unicode.Mn, unicode.Me, unicode.Co)) {
			t.Errorf("unseen(%U) = %v", r, unseen(r))
		}
	}
}

// TestViewMapsBack: every span of the view maps back to whole runes of the text, covering what
// the span was folded from.
func TestViewMapsBack(t *testing.T) {
	for _, s := range []string{"abc", "Code: ４８２９１３ ok", "ﬁﬂ x ٤٨", "é𝟘𝟙𝟚 ok", "а1б2", "7\uFE0F\u20E3 4\u0332", "\uE000x\u2800"} {
		v := newView(s)
		for a := 0; a <= len(v.f); a++ {
			if !utf8.RuneStart(v.f[min(a, len(v.f)-1)]) && a < len(v.f) {
				continue
			}
			sa, se := v.start(a), v.end(a)
			if sa > se || sa < 0 || se > len(s) || (sa < len(s) && !utf8.RuneStart(s[sa])) || (se < len(s) && !utf8.RuneStart(s[se])) {
				t.Errorf("%q: view offset %d maps to %d, %d", s, a, sa, se)
			}
		}
		if v.start(0) != 0 || v.end(len(v.f)) != len(s) {
			t.Errorf("%q: ends map to %d, %d", s, v.start(0), v.end(len(v.f)))
		}
	}
}

func TestFoldedSecretsMasked(t *testing.T) {
	for _, body := range []string{
		"Your verification code is ４８２９１３.",
		"Your verification code is ٤٨٢٩١٣.",
		"Your verification code is 𝟒𝟖𝟐𝟗𝟏𝟑.",
		"Card ４１１１ １１１１ １１１１ １１１１",
	} {
		out, n := Apply(body, Inspect("", body))
		if n == 0 || strings.ContainsAny(out, "１４٨𝟒") {
			t.Errorf("Apply(%q) = %q, %d", body, out, n)
		}
	}
}

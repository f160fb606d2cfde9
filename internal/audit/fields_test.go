package audit

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// logMask stands in for answer.Logged, which dispatch passes: the masks (codeMask here), then every run of four
// or more ASCII digits hidden (asciiRuns, which alone stands for a mask that found nothing).
var asciiRun = regexp.MustCompile(`[0-9]{4,}`)

func asciiRuns(s string) string {
	return asciiRun.ReplaceAllStringFunc(s, func(d string) string { return strings.Repeat("#", len(d)) })
}

func logMask(s string) string { return asciiRuns(codeMask(s)) }

// The same six digits of a code, in each script's decimal digits.
var codeForms = map[string]string{
	"ASCII":               "482913",
	"fullwidth":           "４８２９１３",
	"Arabic-Indic":        "٤٨٢٩١٣",
	"Extended Arabic":     "۴۸۲۹۱۳",
	"Devanagari":          "४८२९१३",
	"Bengali":             "৪৮২৯১৩",
	"Thai":                "๔๘๒๙๑๓",
	"mathematical bold":   "𝟒𝟖𝟐𝟗𝟏𝟑",
	"mathematical mono":   "𝟺𝟾𝟸𝟿𝟷𝟹",
	"ASCII and Arabic":    "48٢٩١٣",
	"fullwidth and ASCII": "４８2913",
	"Devanagari and Thai": "४८๒๙१३",
	"a mask's # and Thai": "##๒๙",
}

func TestEveryDigitFormIsHidden(t *testing.T) {
	for name, code := range codeForms {
		t.Run(name, func(t *testing.T) {
			for _, mask := range []func(string) string{asciiRuns, nil} {
				got := Summarize(map[string]any{
					"query":   "code " + code + " please",
					"account": "x" + code,
					"note":    map[string]any{"deep": []any{code}},
				}, nil, mask)
				s := encode(t, got)
				if strings.ContainsAny(s, strings.Trim(code, "#")) {
					t.Errorf("digits of %q got through: %s", code, s)
				}
				if want := "code " + strings.Repeat("#", utf8.RuneCountInString(code)) + " please"; got["query"] != want {
					t.Errorf("query = %q, want %q", got["query"], want)
				}
				if e := ErrorText("the code "+code+" was refused", mask); strings.ContainsAny(e, strings.Trim(code, "#")) {
					t.Errorf("ErrorText kept digits: %q", e)
				}
			}
		})
	}
}

func TestShortDigitRunsStay(t *testing.T) {
	for _, s := range []string{"issue #12", "٤٨٢ items", "४८ hours", "room ４８２", "v1.2.3", "C# 12"} {
		if got := hideLongDigits(s); got != s {
			t.Errorf("hideLongDigits(%q) = %q; fewer than four digits stay", s, got)
		}
	}
	if got := hideLongDigits("a 12 ٤٨٢٩ b ४८२९१३ c 123"); got != "a 12 #### b ###### c 123" {
		t.Errorf("hideLongDigits = %q", got)
	}
}

// Arguments that carry no stranger's text are kept as the agent sent them, with the real
// catalog's schemas; the rest are masked as before.
func TestHarmlessArgumentsKept(t *testing.T) {
	got := Summarize(map[string]any{
		"limit":      float64(5000),
		"count_only": true,
		"threads":    false,
		"id":         "m1234abcd",
		"cursor":     "c12345zz",
		"fields":     []any{"from", "subject", "size"},
		"by":         "domain",
		"page":       "guide",
		"query":      "after:2026-01-04 before:2026/02/01 is:unread code 482913",
	}, nil, logMask)
	want := map[string]any{
		"limit":      float64(5000),
		"count_only": true,
		"threads":    false,
		"id":         "m1234abcd",
		"cursor":     "c12345zz",
		"fields":     []any{"from", "subject", "size"},
		"by":         "domain",
		"page":       "guide",
		"query":      "after:2026-01-04 before:2026/02/01 is:unread code [code]",
	}
	if encode(t, got) != encode(t, want) {
		t.Errorf("Summarize =\n%s\nwant\n%s", encode(t, got), encode(t, want))
	}
	for q, want := range map[string]string{
		"larger:5000k smaller:20M -has:attachment":   "larger:5000k smaller:20M -has:attachment",
		"has:attachment after:30d BEFORE:2026-01":    "has:attachment after:30d BEFORE:2026-01",
		"-is:read report 4829":                       "-is:read report ####",
		"in:Receipts2024 account:work2024":           "in:Receipts#### account:work####",
		"from:bank subject:\"code 4829\" is:flagged": "from:bank subject:\"code ####\" is:flagged",
		"after:2026-01-04\" 4829":                    "after:####-01-04\" ####", // not an operator on its own
		"after:２０２６-01-04":                           "after:####-01-04",        // not a date the parser reads
		"after:2026-13-40 is:nonsense":               "after:####-13-40 is:nonsense",
		"\"after:2026-01-04\"":                       "\"after:####-01-04\"",
		"  after:2026-01-04   ":                      "  after:2026-01-04   ",
	} {
		if got := Summarize(map[string]any{"query": q}, nil, asciiRuns)["query"]; got != want {
			t.Errorf("query %q kept as %q, want %q", q, got, want)
		}
	}
}

func TestValuesOutsideTheSchemaAreMasked(t *testing.T) {
	got := Summarize(map[string]any{
		"limit":  "5000",            // a string where the catalog has an integer
		"by":     "dom 4829",        // not one of the enum's words
		"id":     "m1234abcd!",      // not an id
		"fields": []any{"x 4829"},   // not one of the enum's words
		"pin":    float64(482913),   // no such argument: a code sent as a number
		"to":     []any{"a 482913"}, // addresses are anyone's text
	}, nil, logMask)
	want := `{"by":"dom ####","fields":["x ####"],"id":"m####abcd!","limit":"####","pin":"[code]","to":["a [code]"]}`
	if encode(t, got) != want {
		t.Errorf("Summarize = %s\nwant %s", encode(t, got), want)
	}
	// Only top-level arguments are typed: a "limit" deeper down is anyone's number.
	if got := Summarize(map[string]any{"x": map[string]any{"limit": float64(4829)}}, nil, logMask); encode(t, got) != `{"x":{"limit":"####"}}` {
		t.Errorf("nested limit: %s", encode(t, got))
	}
	// Free text stays length only, whatever the catalog says of the name.
	got = Summarize(map[string]any{"subject": "m1234", "body": "after:2026-01-04"}, map[string]bool{"subject": true, "body": true}, logMask)
	if encode(t, got) != `{"body":{"length":16},"subject":{"length":5}}` {
		t.Errorf("free text: %s", encode(t, got))
	}
}

// An array of ids (no tool takes one yet) keeps each id and masks anything else.
func TestIDArrayKept(t *testing.T) {
	ids := &arg{}
	ids.merge(schemaProp{Type: "array", Items: &schemaProp{Type: "string", Pattern: "^m[0-9a-z]{1,16}$"}}, false)
	got := summarize(map[string]any{"ids": []any{"m1abc", "m12345678", "code 482913", true}}, nil, logMask, map[string]*arg{"ids": ids})
	if want := `{"ids":["m1abc","m12345678","code [code]",true]}`; encode(t, got) != want {
		t.Errorf("ids = %s, want %s", encode(t, got), want)
	}
}

// What the rules rely on is what the catalog says: if a schema changes shape, this fails.
func TestCatalogArgs(t *testing.T) {
	known := catalogArgs()
	check := func(name string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("the catalog's %q is not described as the log expects: %+v", name, known[name])
		}
	}
	check("limit", known["limit"] != nil && known["limit"].integer)
	check("id", known["id"] != nil && len(known["id"].patterns) > 0)
	check("cursor", known["cursor"] != nil && len(known["cursor"].patterns) > 0)
	check("by", known["by"] != nil && known["by"].enum["domain"])
	check("fields", known["fields"] != nil && known["fields"].items != nil && known["fields"].items.enum["subject"])
	check("query", known["query"] != nil && known["query"].query)
	check("account", known["account"] != nil && !known["account"].integer && known["account"].enum == nil && known["account"].patterns == nil)
}

// Whatever the mix of scripts, no run of four digits survives, and nothing but digits changes.
func TestHideLongDigitsProperty(t *testing.T) {
	alphabet := []rune("0123456789４٣३𝟗๙#a -.")
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		in := make([]rune, r.IntN(16))
		for i := range in {
			in[i] = alphabet[r.IntN(len(alphabet))]
		}
		out := []rune(hideLongDigits(string(in)))
		if len(out) != len(in) {
			t.Fatalf("hideLongDigits(%q) = %q changed the length", string(in), string(out))
		}
		run := 0
		for i, o := range out {
			if o != in[i] && (o != '#' || !unicode.IsDigit(in[i])) {
				t.Fatalf("hideLongDigits(%q) = %q changed %q", string(in), string(out), in[i])
			}
			if unicode.IsDigit(o) || o == '#' {
				run++
			} else {
				run = 0
			}
			if run >= 4 && strings.ContainsFunc(string(out[i-run+1:i+1]), unicode.IsDigit) {
				t.Fatalf("hideLongDigits(%q) = %q left a run of digits", string(in), string(out))
			}
		}
	}
}

// A name that is free text in one tool (a token, a subject) is kept by length only whichever
// tool it is sent to: a token given to the prepare half is still a secret.
func TestFreeTextInAnyToolIsFreeEverywhere(t *testing.T) {
	token := strings.Repeat("Ab_-", 10) + "xyz"
	got := Summarize(map[string]any{"token": token, "subject": "hello", "id": "m1abc"}, nil, logMask)
	if want := `{"id":"m1abc","subject":{"length":5},"token":{"length":43}}`; encode(t, got) != want {
		t.Errorf("Summarize = %s, want %s", encode(t, got), want)
	}
	if !catalogArgs()["token"].free || !catalogArgs()["body"].free || catalogArgs()["limit"].free {
		t.Error("the catalog's free texts are not read from the audit tags")
	}
}

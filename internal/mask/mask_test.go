package mask_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/testing/masktest"
)

// filler is text without a digit, to push a code far down a body.
var filler = strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 1100) // > 60 KB

// strip keeps letters and digits only, upper-cased: what a search for the number would match
// however it is spaced.
func strip(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

func TestMasked(t *testing.T) {
	cases := masktest.MaskedCases()
	if len(cases) < 150 {
		t.Fatalf("only %d masked cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			v := mask.Inspect(c.Subject, c.Body)
			in := c.Body
			switch {
			case c.InSubject:
				in = c.Subject
			case c.Other != "":
				in = c.Other
			}
			out, n := mask.Apply(in, v)
			if n == 0 || !strings.Contains(out, c.Marker) {
				t.Fatalf("Apply(%.80q) = %.200q, %d; want %q in it", in, out, n, c.Marker)
			}
			for _, sec := range c.Secrets {
				if strings.Contains(out, sec) {
					t.Errorf("%q remains in %.200q", sec, out)
				}
				whole := strip(sec)
				if c.Keep != "" {
					whole = whole[:len(whole)-4]
				}
				if strings.Contains(strip(out), whole) {
					t.Errorf("%q remains, separators ignored, in %.200q", whole, out)
				}
			}
			if c.Keep != "" && !strings.Contains(out, c.Keep+"]") {
				t.Errorf("last four %q not kept in %q", c.Keep, out)
			}
			if c.Marker == mask.HiddenCode && strings.ContainsAny(mask.HiddenCode, "0123456789") {
				t.Errorf("code marker holds a digit")
			}
			again, n2 := mask.Apply(out, v)
			if again != out || n2 != 0 {
				t.Errorf("not idempotent: %.200q → %.200q (%d)", out, again, n2)
			}
		})
	}
}

func TestLeftAlone(t *testing.T) {
	cases := masktest.LeftAlone()
	if len(cases) < 150 {
		t.Fatalf("only %d left-alone cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			v := mask.Inspect(c.Subject, c.Body)
			if v.HasCode || v.Withheld {
				t.Errorf("Inspect(%q, %q) = %+v", c.Subject, c.Body, v)
			}
			for _, s := range []string{c.Subject, c.Body} {
				if out, n := mask.Apply(s, v); out != s || n != 0 {
					t.Errorf("Apply(%q) = %q, %d; want it unchanged", s, out, n)
				}
				if out, n := mask.Text(s); out != s || n != 0 {
					t.Errorf("Text(%q) = %q, %d; want it unchanged", s, out, n)
				}
			}
		})
	}
}

func TestWithheld(t *testing.T) {
	subject := "Your temporary password"
	body := "Hello,\n\nYour temporary password is Hq7-Lm2z for 24 hours.\n"
	v := mask.Inspect(subject, body)
	if !v.Withheld || v.Reason != mask.ReasonPassword {
		t.Fatalf("Inspect = %+v", v)
	}
	if got := fmt.Sprintf("%+v", v); got != "withheld: "+mask.ReasonPassword {
		t.Errorf("a verdict prints as %q; want only what it says", got)
	}
	out, n := mask.Apply(body, v)
	if want := mask.WithheldPrefix + mask.ReasonPassword + "]"; out != want || n != 1 {
		t.Errorf("body → %q, %d; want %q", out, n, want)
	}
	if out, n := mask.Apply(subject, v); out != subject || n != 0 {
		t.Errorf("subject → %q, %d; want it kept", out, n)
	}
	// A sender name stays; a body that changed after Inspect (line breaks) is still withheld.
	if out, _ := mask.Apply("Example Support", v); out != "Example Support" {
		t.Errorf("name → %q", out)
	}
	if out, _ := mask.Apply(strings.ReplaceAll(body, "Hello", "Hi"), v); !strings.HasPrefix(out, mask.WithheldPrefix) {
		t.Errorf("changed body → %q", out)
	}
	// A Verdict not made by Inspect still withholds a body.
	if out, _ := mask.Apply(body, mask.Verdict{Withheld: true}); !strings.HasPrefix(out, mask.WithheldPrefix) {
		t.Errorf("bare verdict → %q", out)
	}
	// An error string that gives a password goes whole.
	if out, n := mask.Text("login failed: password=S3cr3t!x"); strings.Contains(out, "S3cr3t") || n == 0 {
		t.Errorf("Text → %q, %d", out, n)
	}
	// A one-time password is a code, not a withheld password.
	v = mask.Inspect("", "Your one-time password is 482913.")
	if v.Withheld || !v.HasCode {
		t.Errorf("one-time password: %+v", v)
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"invalid code 482913: your verification code has expired": "invalid code [code hidden]: your verification code has expired",
		"unknown message id 123456":                               "unknown message id 123456",
		"iban FR7630006000011234567890189 refused":                "iban [IBAN ending 0189] refused",
		"card 4111 1111 1111 1111":                                "card [card ending 1111]",
	} {
		out, _ := mask.Text(in)
		if out != want {
			t.Errorf("Text(%q) = %q; want %q", in, out, want)
		}
		if again, n := mask.Text(out); again != out || n != 0 {
			t.Errorf("Text not idempotent on %q: %q", out, again)
		}
	}
}

// TestLargeInputs runs inputs of a megabyte built to defeat a careless scanner (long runs of
// what each rule reads ahead over). It asserts no timing (SPEC §11); a quadratic rule would
// make it run for minutes. BenchmarkApply gives the throughput.
func TestLargeInputs(t *testing.T) {
	for _, in := range largeInputs() {
		v := mask.Inspect(in[:100], in)
		out, _ := mask.Apply(in, mask.Verdict{HasCode: true})
		if again, _ := mask.Apply(out, mask.Verdict{HasCode: true}); again != out {
			t.Errorf("not idempotent on a large %.20q…", in)
		}
		mask.Apply(in, v)
		mask.Text(in)
	}
}

func largeInputs() []string {
	const mb = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, mb/len(s)+1)[:mb] }
	return []string{
		rep("a."), rep("a-"), rep("1 "), rep("1\n"), rep("1-a-"), rep("password:"),
		rep("password:http://x/"), rep("code "), rep("code 12 "), rep("www."), rep("x.com/"),
		rep("FR76 "), rep("4111 "), rep("1 85 05 "), rep("["), rep("[code hidden"),
		rep("é1"), rep("\u00a0"), "1" + rep(" ") + "a", rep("Passwort ist "), rep("https://"),
		rep("(") + "https://example.com/" + rep(")"),
	}
}

func BenchmarkApply(b *testing.B) {
	body := "Your verification code is 482913.\n" + filler + "\nhttps://example.com/x 4111 1111 1111 1111\n"
	v := mask.Inspect("", body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		mask.Inspect("", body)
		mask.Apply(body, v)
	}
}

func BenchmarkAdversarial(b *testing.B) {
	ins := largeInputs()
	b.SetBytes(int64(len(ins[0])))
	for b.Loop() {
		for _, in := range ins {
			mask.Text(in)
		}
	}
}

// TestCodeMessageKeeps: in a message that carries a code, a character set's name (which a parse
// problem may echo) and a header's date stay; what only looks like one goes.
func TestCodeMessageKeeps(t *testing.T) {
	code := mask.Verdict{HasCode: true}
	for _, s := range []string{
		"unknown charset iso-8859-15", "charset windows-1252", "charset iso-2022-jp", "charset utf-16le",
		"charset GB18030", "charset koi8-r", "charset ks_c_5601-1987", "charset shift_jis",
	} {
		if out, n := mask.Apply(s, code); out != s || n != 0 {
			t.Errorf("Apply(%q) = %q with a code", s, out)
		}
	}
	for _, s := range []string{"unknown charset x-482913", "charset windows-482913"} {
		if out, _ := mask.Apply(s, code); strings.Contains(out, "482913") {
			t.Errorf("Apply(%q) = %q with a code", s, out)
		}
	}
}

// TestOwn: in the person's own texts, each secret is masked where it stands, the rest is
// shown, nothing is withheld whole, and the answer boundary (Body) finds nothing more to do.
func TestOwn(t *testing.T) {
	for _, c := range masktest.OwnMasked() {
		t.Run(c.Name, func(t *testing.T) {
			out := mask.OwnBody(c.Text)
			for _, sec := range c.Secrets {
				if strings.Contains(out, sec) || strings.Contains(digitsOf(out), digitsOf(sec)) {
					t.Errorf("%q remains in %q", sec, out)
				}
			}
			for _, k := range c.Keep {
				if !strings.Contains(out, k) {
					t.Errorf("%q lost from %q", k, out)
				}
			}
			if strings.Contains(out, mask.WithheldPrefix) {
				t.Errorf("withheld whole: %q", out)
			}
			if again := mask.OwnBody(out); again != out {
				t.Errorf("not idempotent: %q → %q", out, again)
			}
			if b := mask.Body(out); b != out {
				t.Errorf("the boundary masks again: %q → %q", out, b)
			}
		})
	}
	for _, s := range masktest.OwnLeftAlone() {
		if out := mask.OwnBody(s); out != s {
			t.Errorf("OwnBody(%q) = %q; want it unchanged", s, out)
		}
	}
}

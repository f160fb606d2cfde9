package mask_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/testing/masktest"
)

// FuzzApply checks, for any subject and body: no panic, valid UTF-8 in gives valid UTF-8 out,
// Apply, Text and Own are idempotent, the count is zero exactly when nothing changed, a
// withheld body shows none of itself, and Own never withholds.
func FuzzApply(f *testing.F) {
	for _, c := range masktest.MaskedCases() {
		f.Add(c.Subject, c.Body[:min(len(c.Body), 2000)])
	}
	for _, c := range masktest.OwnMasked() {
		f.Add("", c.Text)
	}
	for _, s := range []string{
		"", "[code hidden]", "[card ending 1111]4111 1111 1111 1111", "password: [password hidden]x",
		"Your code: 4\t8\t2\t9\t1\t3", "https://EXAMPLE.com/(a)b).", "www.a.b.", "x..example.com/a",
		"1 85 05 2A 006 084 91", "fr76 3000 6000 0112 3456 7890 189 BIC", "PIN: 1234", "\xff\xfe482913",
		"code 4829 " + strings.Repeat("1 ", 40), "Passwort ist Geh31m!x", "one-time password: 482913",
	} {
		f.Add("Your verification code", s)
		f.Add("", s)
	}
	f.Fuzz(func(t *testing.T, subject, body string) {
		v := mask.Inspect(subject, body)
		for _, s := range []string{subject, body, subject + "\n" + body} {
			out, n := mask.Apply(s, v)
			if utf8.ValidString(s) && !utf8.ValidString(out) {
				t.Fatalf("Apply(%q) = %q: invalid UTF-8", s, out)
			}
			if (n == 0) != (out == s) {
				t.Fatalf("Apply(%q) = %q, %d", s, out, n)
			}
			if again, n2 := mask.Apply(out, v); again != out || n2 != 0 {
				t.Fatalf("Apply not idempotent on %q:\n%q\n%q", s, out, again)
			}
			tout, _ := mask.Text(s)
			if utf8.ValidString(s) && !utf8.ValidString(tout) {
				t.Fatalf("Text(%q) = %q: invalid UTF-8", s, tout)
			}
			if again, n2 := mask.Text(tout); again != tout || n2 != 0 {
				t.Fatalf("Text not idempotent on %q:\n%q\n%q", s, tout, again)
			}
		}
		// The person's own texts: idempotent, never withheld whole.
		own, _ := mask.Own(body)
		if utf8.ValidString(body) && !utf8.ValidString(own) {
			t.Fatalf("Own(%q) = %q: invalid UTF-8", body, own)
		}
		if again, n := mask.Own(own); again != own || n != 0 {
			t.Fatalf("Own not idempotent on %q:\n%q\n%q", body, own, again)
		}
		if strings.Contains(own, mask.WithheldPrefix) && !strings.Contains(body, mask.WithheldPrefix) {
			t.Fatalf("Own withholds %q: %q", body, own)
		}
		if v.Withheld && len(body) > 40 {
			if out, _ := mask.Apply(body, v); strings.Contains(out, body) {
				t.Fatalf("withheld body shown: %q", out)
			}
		}
	})
}

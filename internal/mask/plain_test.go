package mask

import "testing"

// FuzzPlain: whenever the fast path says a string holds nothing to mask, the
// full masker agrees.
func FuzzPlain(f *testing.F) {
	for _, s := range []string{"Quarterly report", "Frank Fischer <frank@example.org>", "Re: lunch", "verification code", "www example",
		"heslo je SommerWind", "Salasana SommerWind", "sifre SommerWind", "adgangskode er SommerWind"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !plain(s) {
			return
		}
		if out, n := Apply(s, Inspect("", s)); out != s || n != 0 {
			t.Fatalf("plain(%q) but the masker changes it to %q", s, out)
		}
	})
}

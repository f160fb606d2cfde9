package clean

import "testing"

// FuzzPlain: whenever a fast path says a string needs no cleaning, the full
// cleaner agrees.
func FuzzPlain(f *testing.F) {
	for _, s := range []string{"Quarterly report", "a  b", " x", "line\nnext", "tab\tend\t", "x\n\ny", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if plainLine(s) {
			if out := line(s); out != s {
				t.Fatalf("plainLine(%q) but line gives %q", s, out)
			}
		}
		if plainText(s) {
			if out := text(s); out != s {
				t.Fatalf("plainText(%q) but text gives %q", s, out)
			}
		}
	})
}

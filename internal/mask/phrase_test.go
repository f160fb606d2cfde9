package mask

import (
	"strings"
	"testing"
)

// TestPhraseSets: phraseSet relies on every phrase beginning with an ASCII
// letter or digit and holding at least two bytes.
func TestPhraseSets(t *testing.T) {
	for _, list := range [][]string{codePhrases, withheldPhrases} {
		for _, p := range list {
			p = strings.TrimSuffix(p, "*")
			if len(p) < 2 || !(isLetter(p[0]) || isDigit(p[0])) {
				t.Errorf("phrase %q does not begin with an ASCII letter or digit and two bytes", p)
			}
		}
	}
}

// anyPhrase is the plain definition phraseSet.in must agree with.
func anyPhrase(n string, list []string) bool {
	for _, p := range list {
		if hasPhrase(n, p) {
			return true
		}
	}
	return false
}

// FuzzPhraseSet: the one-pass phrase search finds a phrase exactly when
// looking for each phrase on its own does.
func FuzzPhraseSet(f *testing.F) {
	for _, s := range []string{
		"Your verification code", "unverified", "xverify", "verify!", "2fa", "a2fa", "2fab",
		"reinitialisez", "préréinitialiser", "één-time", "one-time", "one-timer", "é one-time é",
		"votre code est 1234", "temporary password", "temporary passwords", "ötemporary password",
		"reset your password.", "verifizierungen", "\u00a0otp\u00a0", "mfa", "", "o", "ot",
	} {
		f.Add(s)
	}
	for _, p := range codePhrases {
		f.Add("x " + p + " y")
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalize(s)
		if got, want := codeSet.in(n), anyPhrase(n, codePhrases); got != want {
			t.Fatalf("code phrases in %q: one pass says %v, each phrase says %v", n, got, want)
		}
		if got, want := withheldSet.in(n), anyPhrase(n, withheldPhrases); got != want {
			t.Fatalf("withheld phrases in %q: one pass says %v, each phrase says %v", n, got, want)
		}
	})
}

package mask_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/testing/masktest"
)

// digitsOf keeps the letters and digits of s, every digit form as its ASCII digit, upper-cased:
// what a search for a secret would match however it is written.
func digitsOf(s string) string {
	var b strings.Builder
	for _, r := range clean.Line(s) {
		switch {
		case unicode.IsDigit(r):
			b.WriteByte(byte('0' + digitVal(r)))
		case unicode.IsLetter(r):
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

func digitVal(r rune) int {
	for _, base := range []rune{'0', '０', '٠', '۰', '०', '০', '๐', '𝟎', '𝟘', '𝟢', '𝟬', '𝟶'} {
		if r >= base && r < base+10 {
			return int(r - base)
		}
	}
	return 0
}

func TestLayouts(t *testing.T) {
	for _, c := range masktest.Layouts() {
		t.Run(c.Name, func(t *testing.T) {
			for _, how := range []string{"Apply", "Body", "Line"} {
				var out string
				switch how {
				case "Apply":
					out, _ = mask.Apply(c.Body, mask.Inspect(c.Subject, c.Body))
				case "Body":
					out = mask.Body(c.Body)
				case "Line":
					out = mask.Line(c.Body)
				}
				if !strings.Contains(out, c.Marker) {
					t.Errorf("%s(%q) = %q; want %q in it", how, c.Body, out, c.Marker)
				}
				for _, sec := range c.Secrets {
					whole := digitsOf(sec)[:len(sec)-4]
					if strings.Contains(digitsOf(out), whole) {
						t.Errorf("%s(%q) = %q: %q remains", how, c.Body, out, whole)
					}
				}
				if !strings.Contains(out, c.Keep+"]") {
					t.Errorf("%s: last four %q not kept in %q", how, c.Keep, out)
				}
			}
		})
	}
}

// invisibles are characters the cleaner removes, which a sender can put between the
// characters of a secret or of the words around it.
var invisibles = []string{"\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u034f", "\u202e", "\u2066", "\u061c", "\ufe0f", "\U000e0041"}

// sprinkle puts invisible characters between some of the runes of s.
func sprinkle(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range s {
		b.WriteRune(c)
		if r.IntN(3) == 0 {
			b.WriteString(invisibles[r.IntN(len(invisibles))])
		}
	}
	return b.String()
}

// digitForms writes the digits of s in one of the forms a reader sees as the same digits.
func digitForms(r *rand.Rand, s string) string {
	bases := []rune{'0', '０', '٠', '۰', '०', '𝟎', '𝟘'}
	base := bases[r.IntN(len(bases))]
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' {
			b.WriteRune(base + c - '0')
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// secretTexts are the shapes of texts the property test fills with secrets.
var secretTexts = []struct {
	text   string // %s is the secret
	secret func(r *rand.Rand) string
	keep   int // characters of the secret that may remain (last four)
}{
	{"Your verification code is %s.", randDigits(6), 0},
	{"Your one-time passcode: %s", randDigits(8), 0},
	{"Code de vérification : %s", randDigits(6), 0},
	{"%s is your sign-in code", randDigits(6), 0},
	{"Card %s on file", func(*rand.Rand) string { return "4111 1111 1111 1111" }, 4},
	{"IBAN: %s", func(*rand.Rand) string { return "FR76 3000 6000 0112 3456 7890 189" }, 4},
	{"NIR %s", func(*rand.Rand) string { return "1 85 05 78 006 084 91" }, 4},
	{"Password: %s", func(r *rand.Rand) string { return "Xk" + randDigits(2)(r) + "!pq" + randDigits(1)(r) }, 0},
}

func randDigits(n int) func(*rand.Rand) string {
	return func(r *rand.Rand) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		if b[0] == '1' || b[0] == '2' { // not a year
			b[0] = '7'
		}
		return string(b)
	}
}

// TestBoundaryProperty: for random text with secrets, invisible characters and digit forms
// sprinkled in, no secret survives the boundary (mask.Line and mask.Body), and the boundary
// is idempotent.
func TestBoundaryProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 1))
	words := strings.Fields("hello the team thanks regards see you soon invoice meeting Paris 2025 order 42")
	for i := range 3000 {
		st := secretTexts[r.IntN(len(secretTexts))]
		secret := st.secret(r)
		var pre, post []string
		for range r.IntN(6) {
			pre = append(pre, words[r.IntN(len(words))])
		}
		for range r.IntN(6) {
			post = append(post, words[r.IntN(len(words))])
		}
		text := strings.Replace(st.text, "%s", digitForms(r, secret), 1)
		text = strings.Join(pre, " ") + "\n" + text + "\n" + strings.Join(post, " ")
		text = sprinkle(r, text)
		for _, how := range []func(string) string{mask.Line, mask.Body} {
			out := how(text)
			if again := how(out); again != out {
				t.Fatalf("case %d: not idempotent:\n%q\n%q\n%q", i, text, out, again)
			}
			whole := digitsOf(secret)
			whole = whole[:len(whole)-st.keep]
			if strings.Contains(digitsOf(out), whole) {
				t.Fatalf("case %d: %q survives in %q (from %q)", i, whole, out, text)
			}
		}
	}
}

// FuzzBoundary: for any text around a secret written in any digit form with invisible
// characters sprinkled in, the secret does not survive mask.Line or mask.Body; for any text at
// all, both are idempotent and keep valid UTF-8.
func FuzzBoundary(f *testing.F) {
	for _, c := range masktest.MaskedCases() {
		f.Add(c.Body[:min(len(c.Body), 500)], uint64(len(c.Name)), uint8(len(c.Name)))
	}
	f.Add("", uint64(0), uint8(0))
	f.Add("x\u200b4\u200b8", uint64(7), uint8(3))
	f.Fuzz(func(t *testing.T, around string, seed uint64, kind uint8) {
		for _, how := range []func(string) string{mask.Line, mask.Body} {
			out := how(around)
			if again := how(out); again != out {
				t.Fatalf("not idempotent on %q:\n%q\n%q", around, out, again)
			}
		}
		// What sync stores of a text, without a second pass, is what the boundary shows.
		if c := clean.Text(around); true {
			v := mask.Inspect(clean.Line(around), c)
			if b := mask.BodyOf(c, v); !v.Withheld && mask.Body(b) != b {
				t.Fatalf("stored %q, shown %q", b, mask.Body(b))
			}
			if s := mask.LineOf(clean.Line(around), v); mask.Line(s) != s {
				t.Fatalf("subject stored %q, shown %q", s, mask.Line(s))
			}
		}
		// The secret on its own line, so that the fuzzer's text can neither join it nor
		// change what the words before it say.
		r := rand.New(rand.NewPCG(seed, uint64(kind)))
		st := secretTexts[int(kind)%len(secretTexts)]
		secret := st.secret(r)
		text := sprinkle(r, strings.Replace(st.text, "%s", digitForms(r, secret), 1))
		body := clean.Text(around) + "\n\n" + text + "\n"
		out := mask.Body(body)
		whole := digitsOf(secret)
		whole = whole[:len(whole)-st.keep]
		if strings.Contains(digitsOf(out), whole) && !strings.Contains(digitsOf(around), whole) {
			t.Fatalf("%q survives in %q", whole, out)
		}
		if again := mask.Body(out); again != out {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
	})
}

// TestStoredAsShown: what sync stores of a message's subject and text (LineOf, and BodyOf
// without a second pass) is what the boundary shows of it, for every row of the tables and
// the property test's texts.
func TestStoredAsShown(t *testing.T) {
	var pairs [][2]string
	for _, c := range append(masktest.MaskedCases(), masktest.Layouts()...) {
		pairs = append(pairs, [2]string{c.Subject, c.Body})
	}
	for _, c := range masktest.LeftAlone() {
		pairs = append(pairs, [2]string{c.Subject, c.Body})
	}
	r := rand.New(rand.NewPCG(5, 5))
	for range 500 {
		st := secretTexts[r.IntN(len(secretTexts))]
		text := sprinkle(r, strings.Replace(st.text, "%s", digitForms(r, st.secret(r)), 1))
		pairs = append(pairs, [2]string{"", text}, [2]string{text, "Thanks"})
	}
	for _, p := range pairs {
		subj, body := clean.Line(p[0]), clean.Text(p[1])
		v := mask.Inspect(subj, body)
		if s := mask.LineOf(subj, v); mask.Line(s) != s {
			t.Errorf("subject %q stored as %q, shown as %q", p[0], s, mask.Line(s))
		}
		if v.Withheld {
			continue
		}
		if b := mask.BodyOf(body, v); mask.Body(b) != b {
			t.Errorf("text %q stored as %q, shown as %q", p[1], b, mask.Body(b))
		}
	}
}

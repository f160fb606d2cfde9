package mask

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
)

// The fixed markers. The last-four markers are [CardPrefix], [IBANPrefix] and [NIRPrefix]
// followed by the last four characters and "]".
const (
	HiddenCode     = "[code hidden]"
	HiddenLink     = "[link hidden]"
	HiddenPassword = "[password hidden]"
	HiddenKey      = "[key hidden]" // a private key or an API token, wherever it stands

	CardPrefix = "[card ending "
	IBANPrefix = "[IBAN ending "
	NIRPrefix  = "[social security number ending "

	// WithheldPrefix starts the sentence that replaces the body of a withheld message:
	// WithheldPrefix + Verdict.Reason + "]".
	WithheldPrefix = "[message withheld: "
)

// The reasons Inspect gives for a withheld message.
const (
	ReasonPassword = "it gives a password"
	ReasonKey      = "it gives a secret key"
	ReasonPIN      = "it gives a PIN"
	reasonDefault  = "it gives a password or another secret"
)

var reasons = []string{ReasonPassword, ReasonKey, ReasonPIN, reasonDefault}

// Verdict is what a message's own words say about it.
type Verdict struct {
	HasCode  bool   // the message carries a one-time / verification / sign-in code (or link)
	Withheld bool   // the message gives a password (or another secret credential): its body must not be shown at all
	Reason   string // for Withheld: one short sentence for the agent, e.g. "it gives a password"

	// Fingerprints of the subject and body Inspect saw, so that Apply can tell the body (which a
	// withheld message loses whole) from the subject (which stays, masked). Keyed with a seed
	// made fresh for each process, so they say nothing about the text outside it. Zero when the
	// Verdict was not made by Inspect.
	inspected     bool
	subject, body uint64
	maskedSubject uint64 // the subject once masked, so that masking it again keeps it

	secrets secretSet // a withheld message's passwords, as fingerprints, masked in every field
	codes   codeSet   // a code message's codes, as fingerprints, masked in every field (known.go)
}

// String says what the verdict is without the fingerprints: "code", "withheld: REASON",
// "code, withheld: REASON" or "clean".
func (v Verdict) String() string {
	var parts []string
	if v.HasCode {
		parts = append(parts, "code")
	}
	if v.Withheld {
		parts = append(parts, "withheld: "+reasonOf(v))
	}
	if parts == nil {
		return "clean"
	}
	return strings.Join(parts, ", ")
}

// Inspect reads a message's subject and body text and says whether it carries a one-time code
// (or a sign-in link) and whether it gives a password. Linear in the length of both.
func Inspect(subject, text string) Verdict {
	v := Verdict{
		inspected: true,
		subject:   fingerprint(subject),
		body:      fingerprint(text),
	}
	// Every rule reads the folded view: "４８２９", "раssword" and "٤٨٢٩" read as what they look like.
	fs, ft := foldString(subject), foldString(text)
	if r := givesSecret(fs); r != "" {
		v.Withheld, v.Reason = true, r
	} else if r := givesSecret(ft); r != "" {
		v.Withheld, v.Reason = true, r
	}
	ns, nt := normalize(fs), normalize(ft)
	if !v.Withheld && (withheldPhrase(ns) || withheldPhrase(nt)) {
		v.Withheld, v.Reason = true, ReasonPassword
	}
	v.HasCode = messageCode(ns, nt)
	if v.Withheld {
		v.secrets = secretValues(fs, ft)
	}
	ms, _ := scanWith(subject, v.HasCode, v.secrets)
	v.maskedSubject = fingerprint(ms)
	if v.HasCode {
		v.codes = codesOf(ns, nt)
	}
	return v
}

// codesOf returns the codes of a code message, from its normalized subject and text: its
// code-shaped tokens that are not negated (not a year, a date, an order number), as
// fingerprints. The masks hide every one of them.
func codesOf(texts ...string) codeSet {
	var cs codeSet
	for _, n := range texts {
		for _, t := range newTokens(n).toks {
			if !t.negated {
				cs.add(n[t.start:t.end])
			}
		}
	}
	return cs
}

// Apply masks s, one field of the message v was made for, and returns the masked text and the
// number of things masked.
//
// When v.Withheld, the body (s equal to the text given to Inspect) is replaced whole by
// WithheldPrefix+reason+"]"; the subject (s equal to the subject given to Inspect) stays, masked.
// Any other field is withheld whole too when it spans several lines or itself gives a
// password, and masked otherwise. So pass Apply the same body that was given to Inspect: a body
// changed in between is only recognised as one by its line breaks.
func Apply(s string, v Verdict) (string, int) {
	return fixed(s, func(s string) (string, int) { return applyOnce(s, v) })
}

// fixed runs one pass of a mask until it masks nothing more, so that every mask is idempotent
// by construction: a marker put in place may bring a label or a code's context next to the
// next value, which a second pass then reads. A text with nothing to mask costs one pass. Each
// pass only replaces text by markers, which no pass masks again, so it ends; eight passes
// bound it all the same.
func fixed(s string, pass func(string) (string, int)) (string, int) {
	total := 0
	for range 8 {
		m, n := pass(s)
		if n == 0 || m == s {
			break
		}
		s, total = m, total+n
	}
	return s, total
}

func applyOnce(s string, v Verdict) (string, int) {
	if v.Withheld && s != "" && withholds(s, v) {
		out := WithheldPrefix + reasonOf(v) + "]"
		if s == out {
			return s, 0
		}
		return out, 1
	}
	if v.codes.n > 0 && !v.HasCode {
		// A field read for code shapes loses the codes by their shape already; one that is not
		// (WithoutCode: a Message-ID, a Date) loses them by their letters and digits.
		return scanKnown(s, v.HasCode, v.secrets, &v.codes)
	}
	return scanWith(s, v.HasCode, v.secrets)
}

// Text masks a string that belongs to no message: Apply with the verdict of s alone.
func Text(s string) (string, int) {
	return fixed(s, func(s string) (string, int) {
		if plain(s) {
			return s, 0
		}
		return applyOnce(s, Inspect("", s))
	})
}

// plainStems are the word starts that every password label and withheld phrase
// begins with, lower-cased; a string holding none of them, no digit, no slash
// and no "www" has nothing Text would mask.
var plainStems = []string{"pass", "kennwort", "mot de", "mot-de", "mdp", "contrase", "senha", "wachtwoord", "pwd", "api", "key", "secret", "access", "cl", "pin", "www"}

// allPlainStems are plainStems and the stems of every password label of every language.
var allPlainStems = sync.OnceValue(func() []string {
	return append(slices.Clone(plainStems), labelStems()...)
})

// plain reports whether s certainly holds nothing to mask: no digit (codes, numbers,
// IBANs, cards and NIRs all have digits), no slash (links), no password label.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= '0' && c <= '9') || c == '/' || c == ':' || c == '=' || c >= 0x80 {
			return false
		}
	}
	byFirst := plainStemsByFirst()
	for i := 0; i < len(s); i++ {
		for _, st := range byFirst[s[i]|0x20] {
			if len(s)-i >= len(st) && strings.EqualFold(s[i:i+len(st)], st) {
				return false
			}
		}
	}
	return true
}

// plainStemsByFirst holds allPlainStems by their first byte, so that plain reads s once.
var plainStemsByFirst = sync.OnceValue(func() *[256][]string {
	var m [256][]string
	for _, st := range allPlainStems() {
		st = strings.ToLower(st)
		m[st[0]|0x20] = append(m[st[0]|0x20], st)
	}
	return &m
})

func withholds(s string, v Verdict) bool {
	if v.inspected {
		switch fingerprint(s) {
		case v.body:
			return true
		case v.subject, v.maskedSubject:
			return false
		}
	}
	return strings.ContainsAny(s, "\n\r\u2028\u2029\v\f\u0085") || givesSecret(foldString(s)) != ""
}

func reasonOf(v Verdict) string {
	for _, r := range reasons {
		if v.Reason == r {
			return r
		}
	}
	return reasonDefault
}

var seed = maphash.MakeSeed()

func fingerprint(s string) uint64 { return maphash.String(seed, s) }

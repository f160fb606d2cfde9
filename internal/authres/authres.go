// Package authres reads Authentication-Results header fields (RFC 8601) and says whether a
// receiving server the person trusts found a message forged. Fields from any other authserv-id
// are ignored: a sender can write anything. It never marks a message forged on its own guess.
// It reads the field itself because go-msgauth/authres v0.7.0's Parse knows neither comments
// nor quoted strings (it fails 17 of the 61 cases of authres_test.go), and hands that Parse
// only the canonical form; what it misses: docs/packages.md, "internal/authres".
package authres

import (
	"strings"

	msgauth "github.com/emersion/go-msgauth/authres"
)

// Forged reports whether any Authentication-Results value from a trusted authserv-id says DMARC
// failed, or says SPF or DKIM failed without a DMARC pass. Each field is judged on its own; within
// one, the first result of a method counts, except that any DKIM pass wins (several signatures).
// SPF "hardfail", the older name of "fail", is a fail. A field of a version other than 1 is
// ignored.
func Forged(values []string, trusted []string) bool {
	for _, v := range values {
		f, ok := read(v)
		if !ok || !isTrusted(f.id, trusted) {
			continue
		}
		_, results, err := msgauth.Parse(f.canonical())
		if err != nil {
			continue // a version this package does not know
		}
		if forged(results) {
			return true
		}
	}
	return false
}

func forged(results []msgauth.Result) bool {
	var dmarc, spf, dkim msgauth.ResultValue
	for _, r := range results {
		switch r := r.(type) {
		case *msgauth.DMARCResult:
			if dmarc == "" {
				dmarc = r.Value
			}
		case *msgauth.SPFResult:
			if spf == "" {
				spf = r.Value
			}
		case *msgauth.DKIMResult:
			if dkim == "" || (dkim != msgauth.ResultPass && r.Value == msgauth.ResultPass) {
				dkim = r.Value
			}
		}
	}
	if dmarc == msgauth.ResultFail {
		return true
	}
	spfFail := spf == msgauth.ResultFail || spf == msgauth.ResultHardFail
	return dmarc != msgauth.ResultPass && (spfFail || dkim == msgauth.ResultFail)
}

func isTrusted(id string, trusted []string) bool {
	for _, t := range trusted {
		if t = strings.TrimSpace(t); t != "" && strings.EqualFold(t, id) {
			return true
		}
	}
	return false
}

// Authenticated reports whether a trusted authserv-id vouches for the From domain fromDomain:
// DMARC passed (for that domain, when the field names it), or a DKIM signature of that domain
// or of a parent of it passed. Projects route mail by sender only when this holds, so that
// forged mail never joins a project through the address it claims. A message Forged says is
// forged is never authenticated.
func Authenticated(values []string, trusted []string, fromDomain string) bool {
	fromDomain = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(fromDomain), "."))
	if fromDomain == "" || Forged(values, trusted) {
		return false
	}
	for _, v := range values {
		f, ok := read(v)
		if !ok || !isTrusted(f.id, trusted) || (f.version != "" && f.version != "1") {
			continue
		}
		for i, r := range f.results {
			d := f.domains[i]
			switch r {
			case "dmarc=pass":
				if d == "" || aligned(fromDomain, d) && aligned(d, fromDomain) {
					return true
				}
			case "dkim=pass":
				if d != "" && aligned(fromDomain, d) {
					return true
				}
			}
		}
	}
	return false
}

// aligned reports whether domain is signer or a subdomain of it.
func aligned(domain, signer string) bool {
	signer = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(signer), "."))
	return signer != "" && (domain == signer || strings.HasSuffix(domain, "."+signer))
}

// ServID returns the authserv-id of an Authentication-Results value: the receiving server
// that wrote it, or claims to. ok is false when the value has none.
func ServID(value string) (id string, ok bool) {
	f, ok := read(value)
	return f.id, ok
}

// Package authres reads Authentication-Results header fields (RFC 8601) and
// says whether a receiving server the person trusts found a message forged.
// Fields from any other authserv-id are ignored: a sender can write anything.
package authres

import "strings"

// Forged reports whether any Authentication-Results value from a trusted
// authserv-id says DMARC failed, or says SPF or DKIM failed without a DMARC pass.
func Forged(values []string, trusted []string) bool {
	if len(trusted) == 0 {
		return false
	}
	for _, v := range values {
		id, results, ok := parse(v)
		if !ok || !isTrusted(id, trusted) {
			continue
		}
		if results["dmarc"] == "fail" {
			return true
		}
		if results["dmarc"] != "pass" && (results["spf"] == "fail" || results["dkim"] == "fail") {
			return true
		}
	}
	return false
}

func isTrusted(id string, trusted []string) bool {
	for _, t := range trusted {
		if strings.EqualFold(strings.TrimSpace(t), id) {
			return true
		}
	}
	return false
}

// parse returns the authserv-id and, per method, its result: the first result
// seen for a method, except that a pass anywhere wins for dkim (several signatures).
func parse(v string) (string, map[string]string, bool) {
	v = stripComments(v)
	parts := strings.Split(v, ";")
	head := strings.Fields(parts[0])
	if len(head) == 0 {
		return "", nil, false
	}
	id := strings.ToLower(head[0])
	results := map[string]string{}
	for _, p := range parts[1:] {
		f := strings.Fields(p)
		if len(f) == 0 {
			continue
		}
		method, result, ok := strings.Cut(f[0], "=")
		if !ok {
			continue
		}
		method, result = strings.ToLower(method), strings.ToLower(result)
		if prev, seen := results[method]; !seen || (method == "dkim" && prev != "pass" && result == "pass") {
			results[method] = result
		}
	}
	return id, results, true
}

// stripComments removes RFC 5322 comments (nested parentheses).
func stripComments(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

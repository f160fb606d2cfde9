package mask

import (
	"strings"
	"unicode/utf8"
)

// Keys and tokens, masked wherever they stand, in mail and in the person's own texts alike:
// a PEM block whose label says it is private or secret ("-----BEGIN OPENSSH PRIVATE KEY-----"
// to its END line, or to the last line of its base64 when the END line is missing), and the
// shapes API keys are issued in, by their prefix (sk-…, ghp_…, AKIA…, xoxb-…, see
// tokenPrefixes), and a long token of mixed letters and digits that a key word ("token",
// "key", "secret", "bearer") stands before on its line. Public keys and certificates stay.

// pemAt returns the end of a private PEM block whose "BEGIN" word is at s[i:], after five
// dashes, and where the block starts (its first dash), or end -1.
func pemAt(s string, i int) (start, end int) {
	if i < 5 || !strings.HasPrefix(s[i:], "BEGIN ") || s[i-5:i] != "-----" {
		return 0, -1
	}
	start = i - 5
	le := strings.Index(s[i:min(len(s), i+80)], "-----")
	if le < 0 {
		return 0, -1
	}
	label := s[i+len("BEGIN ") : i+le]
	// A label holding a marker is text masked before ("[key hidden]" where a long token stood,
	// which may have kept the label's dashes out of reach): it is read as it was, no block.
	if !strings.Contains(label, "PRIVATE") && !strings.Contains(label, "SECRET") || strings.ContainsAny(label, "[]") {
		return 0, -1
	}
	j := i + le + 5
	// To the END line of the same label, within a bounded distance.
	const reach = 64 << 10
	if k := strings.Index(s[j:min(len(s), j+reach)], "-----END "+label+"-----"); k >= 0 {
		return start, j + k + len("-----END "+label+"-----")
	}
	// No END line: the lines that read as the block's (base64, headers, blanks) go with it.
	end = j
	for k := j; k < len(s) && k-j < reach; {
		e := strings.IndexByte(s[k:], '\n')
		if e < 0 {
			e = len(s)
		} else {
			e += k
		}
		line := strings.TrimRight(s[k:e], " \t\r")
		if line != "" && !pemLine(line) {
			break
		}
		if line != "" {
			end = k + len(line)
		}
		k = e + 1
	}
	return start, end
}

// pemLine: a line of a PEM block's body: base64, or a header such as "Proc-Type: 4,ENCRYPTED".
func pemLine(l string) bool {
	if strings.Contains(l, ": ") {
		return true
	}
	for k := 0; k < len(l); k++ {
		c := l[k]
		if !isAlnum(c) && c != '+' && c != '/' && c != '=' {
			return false
		}
	}
	return true
}

// tokenPrefix is how one kind of API key begins, and the fewest characters its random part has.
type tokenPrefix struct {
	prefix string
	min    int
}

// tokenPrefixes are the prefixes providers issue their secret keys with. A word that starts
// with one, goes on with at least min characters of the token alphabet and holds a digit is
// a key.
var tokenPrefixes = []tokenPrefix{
	{"sk-", 20}, {"sk_live_", 16}, {"sk_test_", 16}, {"rk_live_", 16}, {"rk_test_", 16},
	{"ghp_", 30}, {"gho_", 30}, {"ghu_", 30}, {"ghs_", 30}, {"ghr_", 30}, {"github_pat_", 30},
	{"glpat-", 20}, {"xoxb-", 20}, {"xoxp-", 20}, {"xoxa-", 20}, {"xoxr-", 20}, {"xoxs-", 20},
	{"xoxe-", 20}, {"xapp-", 20}, {"AKIA", 16}, {"ASIA", 16}, {"AIza", 30}, {"hf_", 30},
	{"npm_", 30}, {"pypi-", 40}, {"SG.", 30}, {"shpat_", 24}, {"shpss_", 24}, {"sq0atp-", 20},
	{"sq0csp-", 30}, {"dop_v1_", 40}, {"glsa_", 30}, {"lin_api_", 30},
}

// tokenByte: the characters of a token: letters, digits and - _ . / +.
func tokenByte(c byte) bool {
	return isAlnum(c) || c == '-' || c == '_' || c == '.' || c == '/' || c == '+'
}

// tokenRun returns the end of the run of token characters from i, with the '=' that pad
// base64 and less a trailing dot or slash. Not '=' inside it: "key=sk-…" is a name and a key.
func tokenRun(s string, i int) int {
	e := i
	for e < len(s) && tokenByte(s[e]) {
		e++
	}
	for e > i && (s[e-1] == '.' || s[e-1] == '/') {
		e--
	}
	p := e
	for p < len(s) && p-e < 2 && s[p] == '=' {
		p++
	}
	if p > e && (p == len(s) || !tokenByte(s[p]) && s[p] != '=') {
		e = p
	}
	return e
}

// prefixPairs marks the first two bytes of every token prefix, so that most words are passed
// over with one bit test.
var prefixPairs = func() (m [1 << 16 / 64]uint64) {
	for _, p := range tokenPrefixes {
		k := uint16(p.prefix[0])<<8 | uint16(p.prefix[1])
		m[k>>6] |= 1 << (k & 63)
	}
	return m
}()

// apiKeyAt returns the end of an API key that starts at the word start i, or -1.
func apiKeyAt(s string, i int) int {
	if i+1 >= len(s) {
		return -1
	}
	if k := uint16(s[i])<<8 | uint16(s[i+1]); prefixPairs[k>>6]&(1<<(k&63)) == 0 {
		return -1
	}
	ps := tokenPrefixes
	for _, p := range ps {
		if !strings.HasPrefix(s[i:], p.prefix) {
			continue
		}
		e := tokenRun(s, i+len(p.prefix))
		if e-i-len(p.prefix) < p.min || !endsWord(s, e) {
			continue
		}
		body := s[i+len(p.prefix) : e]
		if strings.IndexAny(body, "0123456789") < 0 {
			continue
		}
		if p.prefix == "AKIA" || p.prefix == "ASIA" {
			if e-i != 20 || strings.ToUpper(body) != body {
				continue
			}
		}
		return e
	}
	return -1
}

// keyWords stand before a long token on its line to make it a key: "token", "key", "secret",
// "bearer", and what ends in them ("apikey", "x-api-key", "client_secret").
var keyWords = []string{"token", "key", "secret", "bearer", "apikey", "passphrase", "password", "passwd", "pwd", "auth"}

// longTokenAt returns the end of a long token at the word start i that a key word stands
// before on its line (at most 48 bytes before), or -1: 20 characters or more of the token
// alphabet with a letter and a digit, or 32 hex digits.
//
// The 48 bytes are read as the text will stand once masked (sc.windowBefore): a token masked
// before it on the line counts as its marker, so masking the masked text again finds the same
// key words at the same distances, and changes nothing.
func (sc *scanner) longTokenAt(i int) int {
	s := sc.s
	e := tokenRun(s, i)
	if e-i < 20 || !endsWord(s, e) || !longToken(s[i:e]) && !mixedToken(s[i:e]) {
		return -1
	}
	low := strings.ToLower(sc.windowBefore(i, 48))
	for _, w := range keyWords {
		if k := strings.LastIndex(low, w); k >= 0 && !isWordAt(low, k+len(w)) {
			return e
		}
	}
	return -1
}

// mixedToken: 20 characters or more with a letter and a digit, as random keys are drawn.
func mixedToken(t string) bool {
	letter, digit := false, false
	for k := 0; k < len(t); k++ {
		letter = letter || isLetter(t[k])
		digit = digit || isDigit(t[k])
	}
	return letter && digit && strings.Count(t, "-")+strings.Count(t, ".") < 4
}

// isWordAt reports whether a letter or digit stands at s[k].
func isWordAt(s string, k int) bool {
	if k >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[k:])
	return isWordRune(r)
}

// windowBefore returns the last n bytes of the line before the view's byte i as the text reads
// once masked: each span hidden so far stands as its marker.
func (sc *scanner) windowBefore(i, n int) string {
	var chunks []string
	got, j, k := 0, i, len(sc.spans)-1
	for got < n && j > 0 {
		for k >= 0 && sc.spans[k].from >= j {
			k--
		}
		if k >= 0 && sc.spans[k].to >= j { // j ends (or is inside) a hidden span
			chunks = append(chunks, sc.spans[k].marker)
			got += len(sc.spans[k].marker)
			j = sc.spans[k].from
			k--
			continue
		}
		lo := max(0, j-(n-got))
		if k >= 0 {
			lo = max(lo, sc.spans[k].to)
		}
		seg := sc.s[lo:j]
		if nl := strings.LastIndexByte(seg, '\n'); nl >= 0 {
			chunks = append(chunks, seg[nl+1:])
			break
		}
		chunks = append(chunks, seg)
		got += len(seg)
		j = lo
	}
	var b strings.Builder
	for c := len(chunks) - 1; c >= 0; c-- {
		b.WriteString(chunks[c])
	}
	w := b.String()
	return w[max(0, len(w)-n):]
}

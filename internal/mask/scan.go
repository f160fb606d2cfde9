package mask

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// scanner walks a string once, word start by word start, and copies it with what must be hidden
// replaced by markers. Every rule looks a bounded distance ahead or consumes what it reads, and
// the "until" fields stop a rule that failed on a run from being tried again inside that run,
// so a scan is linear in the input.
type scanner struct {
	s    string
	code bool // the message carries a code: codes, numbers and links go too
	out  strings.Builder
	last int // s[:last] is already written to out
	n    int

	noLinkUntil     int
	noCompoundUntil int
}

func scan(s string, code bool) (string, int) {
	sc := scanner{s: s, code: code}
	for i := 0; i < len(s); {
		c := s[i]
		if c == '[' {
			if m := markerLen(s[i:]); m > 0 {
				i += m
				continue
			}
		}
		r, w := rune(c), 1
		if c >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[i:])
		}
		if !isWordRune(r) {
			i += w
			continue
		}
		i = sc.word(i)
	}
	if sc.n == 0 {
		return s, 0
	}
	sc.out.WriteString(s[sc.last:])
	return sc.out.String(), sc.n
}

// hide replaces s[from:to] with marker.
func (sc *scanner) hide(from, to int, marker string) int {
	if sc.out.Len() == 0 {
		sc.out.Grow(len(sc.s))
	}
	sc.out.WriteString(sc.s[sc.last:from])
	sc.out.WriteString(marker)
	sc.last = to
	sc.n++
	return to
}

// word handles the word that starts at i and returns where scanning goes on: always at the end
// of a word or at a character that cannot continue one.
func (sc *scanner) word(i int) int {
	s := sc.s
	if sc.code {
		if end, ok := sc.link(i); ok {
			return sc.hide(i, end, HiddenLink)
		}
	}
	if vs, ve, reason := passwordAt(s, i); reason != "" {
		return sc.hide(vs, ve, HiddenPassword)
	}
	if end, last4, shaped := ibanAt(s, i); last4 != "" {
		return sc.hide(i, end, IBANPrefix+last4+"]")
	} else if shaped && !sc.code {
		return end // IBAN-shaped but failing mod 97: left alone, digits and all
	}
	if isDigit(s[i]) {
		if end, last4 := nirAt(s, i); last4 != "" {
			return sc.hide(i, end, NIRPrefix+last4+"]")
		}
		end, last4, clusterEnd := cardAt(s, i)
		if last4 != "" {
			return sc.hide(i, end, CardPrefix+last4+"]")
		}
		if !sc.code {
			return clusterEnd
		}
	}
	if sc.code {
		if i >= sc.noCompoundUntil {
			end, letters, digits := compound(s, i)
			if letters > 0 && (digits >= 4 || digits >= 2 && letters+digits >= 6) {
				return sc.hide(i, end, HiddenCode)
			}
			sc.noCompoundUntil = end
		}
		if end, digits := numberCluster(s, i); end > i {
			if digits >= 4 {
				return sc.hide(i, end, HiddenCode)
			}
			return end
		}
	}
	return wordEnd(s, i)
}

// markerLen returns the length of the marker m starts with, 0 if none.
func markerLen(m string) int {
	for _, f := range []string{HiddenCode, HiddenLink, HiddenPassword} {
		if strings.HasPrefix(m, f) {
			return len(f)
		}
	}
	for _, p := range []string{CardPrefix, IBANPrefix, NIRPrefix} {
		if strings.HasPrefix(m, p) && len(m) >= len(p)+5 && m[len(p)+4] == ']' {
			for k := len(p); k < len(p)+4; k++ {
				if !isDigit(m[k]) && !(m[k] >= 'A' && m[k] <= 'Z') {
					return 0
				}
			}
			return len(p) + 5
		}
	}
	if strings.HasPrefix(m, WithheldPrefix) {
		for _, r := range reasons {
			if strings.HasPrefix(m[len(WithheldPrefix):], r+"]") {
				return len(WithheldPrefix) + len(r) + 1
			}
		}
	}
	return 0
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }

// compound reads words joined by single hyphens ("X7K-9QP", "G-482913") from i and counts their
// letters and digits.
func compound(s string, i int) (end, letters, digits int) {
	j := i
	for {
		for j < len(s) {
			r, w := utf8.DecodeRuneInString(s[j:])
			if unicode.IsDigit(r) {
				digits++
			} else if unicode.IsLetter(r) {
				letters++
			} else if !unicode.IsMark(r) {
				break
			}
			j += w
		}
		if j+1 < len(s) && s[j] == '-' {
			if r, _ := utf8.DecodeRuneInString(s[j+1:]); isWordRune(r) {
				j++
				continue
			}
		}
		return j, letters, digits
	}
}

// numericWord returns the end of the word at i when it is made of digits only, else -1.
func numericWord(s string, i int) int {
	j := i
	for j < len(s) {
		r, w := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsDigit(r) {
			if isWordRune(r) {
				return -1
			}
			break
		}
		j += w
	}
	if j == i {
		return -1
	}
	return j
}

// isCodeSep reports whether r may stand between the groups of a one-time code: spaces of every
// kind, line breaks and tabs (a digit per table cell), dashes, dots, commas, '|' and '>' (a
// quoted reply).
func isCodeSep(r rune) bool {
	switch r {
	case '-', '.', ',', '|', '>', '\u00B7', '\u2022', '\u2502', '\u2010', '\u2011', '\u2012',
		'\u2013', '\u2014', '\u2212', '\uFF5C':
		return true
	}
	return unicode.IsSpace(r)
}

// numberCluster reads numbers joined by code separators from i ("48 29 13", "4\t8\t2\t9\t1\t3",
// "| 4 | 8 |") and returns the end of its last number and its digit count; end is i when no
// number starts at i.
func numberCluster(s string, i int) (end, digits int) {
	end = i
	for j := i; ; {
		e := numericWord(s, j)
		if e < 0 {
			return end, digits
		}
		digits += utf8.RuneCountInString(s[j:e])
		end = e
		k := e
		for k < len(s) {
			r, w := utf8.DecodeRuneInString(s[k:])
			if !isCodeSep(r) {
				break
			}
			k += w
		}
		if k == e || k >= len(s) {
			return end, digits
		}
		j = k
	}
}

// link returns the end of the link that starts at i: a URL with a scheme ("https://…",
// any case), or a host name followed by a path ("example.com/magic/…"), or a name starting with
// "www.".
func (sc *scanner) link(i int) (int, bool) {
	s := sc.s
	if i < sc.noLinkUntil {
		return 0, false
	}
	// scheme://
	j := i
	for j < len(s) && j-i <= 12 && isLetter(s[j]) {
		j++
	}
	if j > i && strings.HasPrefix(s[j:], "://") {
		return urlEnd(s, i, j+3), true
	}
	// host name
	j = i
	for j < len(s) && (isAlnum(s[j]) || s[j] == '.' || s[j] == '-' || s[j] == '_') {
		j++
	}
	run := s[i:j]
	sc.noLinkUntil = j
	if i > 0 && (s[i-1] == '@' || s[i-1] == '.') {
		return 0, false
	}
	www := len(run) > 4 && strings.EqualFold(run[:4], "www.")
	path := j < len(s) && (s[j] == '/' || s[j] == '?' || s[j] == '#' ||
		s[j] == ':' && j+1 < len(s) && isDigit(s[j+1]))
	if !path {
		if !www {
			return 0, false
		}
		if j < len(s) && s[j] == '[' && strings.HasSuffix(run, ".") {
			// "www.x.[code hidden]": the host went on into what a mask replaced; it was not
			// a link the first time either (its last label was a number), so neither is it now.
			return 0, false
		}
		run = strings.TrimRight(run, ".-_")
		j = i + len(run)
	}
	if !hostName(run) {
		return 0, false
	}
	if !path {
		return j, true
	}
	return urlEnd(s, i, j), true
}

// hostName: dot-separated labels, none empty, the last of letters only (2–63).
func hostName(h string) bool {
	dot := strings.LastIndexByte(h, '.')
	if dot <= 0 {
		return false
	}
	tld := h[dot+1:]
	if len(tld) < 2 || len(tld) > 63 {
		return false
	}
	for k := 0; k < len(tld); k++ {
		if !isLetter(tld[k]) {
			return false
		}
	}
	return !strings.Contains(h, "..") && h[0] != '.' && h[0] != '-'
}

// urlEnd returns where the URL that starts at i ends, reading on from j: at a space, a control
// character or one of <>"`, less trailing punctuation and unbalanced closing brackets.
func urlEnd(s string, i, j int) int {
	for j < len(s) {
		r, w := utf8.DecodeRuneInString(s[j:])
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '<' || r == '>' || r == '"' ||
			r == '`' || r == utf8.RuneError && w == 1 {
			break
		}
		if r == '[' && markerLen(s[j:]) > 0 {
			break
		}
		j += w
	}
	u := s[i:j]
	open := strings.Count(u, "(") + strings.Count(u, "[") + strings.Count(u, "{")
	closed := strings.Count(u, ")") + strings.Count(u, "]") + strings.Count(u, "}")
	for len(u) > 0 {
		r, w := utf8.DecodeLastRuneInString(u)
		switch r {
		case '.', ',', ';', ':', '!', '?', '\'', '*', '»', '…':
		case ')', ']', '}':
			if closed <= open {
				return i + len(u)
			}
			closed--
		default:
			return i + len(u)
		}
		u = u[:len(u)-w]
	}
	return i + len(u)
}

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
	s    string // the folded view of the text, which the rules read
	v    *view  // and the way back to the text itself, from which out is made
	code bool   // the message carries a code: codes, numbers and links go too
	out  strings.Builder
	last int // v.s[:last] is already written to out
	n    int

	noLinkUntil     int
	noCompoundUntil int
	noTokenUntil    int
	rules           ruleState // what the rules of context.go remember: secrets, sign-in words
	spans           []hidden  // what hide replaced, in the view's bytes, in order
}

// hidden is a span of the view that hide replaced with marker.
type hidden struct {
	from, to int
	marker   string
}

// scan masks s reading its folded view.
func scan(s string, code bool) (string, int) { return scanWith(s, code, secretSet{}) }

// scanWith is scan that also masks the passwords of secrets wherever they stand.
func scanWith(s string, code bool, secrets secretSet) (string, int) {
	v := newView(s)
	return scanView(&v, code, secrets)
}

// scanKnown is scanWith that first hides the codes of known wherever they stand.
func scanKnown(s string, code bool, secrets secretSet, known *codeSet) (string, int) {
	v := newView(s)
	n := 0
	if spans := known.spans(v.f); len(spans) > 0 {
		sc := scanner{s: v.f, v: &v}
		for _, sp := range spans {
			sc.hide(sp[0], sp[1], HiddenCode)
		}
		sc.out.WriteString(s[sc.last:])
		s, n = sc.out.String(), sc.n
		v = newView(s)
	}
	m, k := scanView(&v, code, secrets)
	return m, n + k
}

// scanView masks v.s reading v.f.
func scanView(v *view, code bool, secrets secretSet) (string, int) {
	sc := scanner{s: v.f, v: v, code: code, rules: ruleState{secrets: secrets}}
	scanRun(&sc)
	if sc.n == 0 {
		return v.s, 0
	}
	sc.out.WriteString(v.s[sc.last:])
	return sc.out.String(), sc.n
}

// scanRun runs the scanner over its view.
func scanRun(sc *scanner) {
	s := sc.s
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
}

// hide replaces the runes of the text that s[from:to] (the view) was folded from with marker.
func (sc *scanner) hide(from, to int, marker string) int {
	if sc.out.Len() == 0 {
		sc.out.Grow(len(sc.v.s))
	}
	a, b := sc.v.start(from), sc.v.end(to)
	if a < sc.last {
		a = sc.last // a rune that folded into two halves of two spans is hidden once
	}
	sc.out.WriteString(sc.v.s[sc.last:a])
	sc.out.WriteString(marker)
	sc.spans = append(sc.spans, hidden{from, to, marker})
	sc.last = max(b, sc.last)
	sc.n++
	return to
}

// word handles the word that starts at i and returns where scanning goes on: always at the end
// of a word or at a character that cannot continue one (or after one letter of a script written
// without spaces, whose phrases and labels may start at any letter).
func (sc *scanner) word(i int) int {
	s := sc.s
	if sc.rules.secrets.n > 0 {
		if e := sc.rules.secrets.at(s, i); e > i {
			return sc.mask(i, e, HiddenPassword)
		}
	}
	if start, end := pemAt(s, i); end > 0 {
		return sc.mask(start, end, HiddenKey)
	}
	if i >= sc.noTokenUntil {
		if e := apiKeyAt(s, i); e > 0 {
			return sc.mask(i, e, HiddenKey)
		}
		run := tokenRun(s, i)
		if run-i >= 20 {
			if e := sc.longTokenAt(i); e > 0 {
				return sc.mask(i, e, HiddenKey)
			}
		}
		sc.noTokenUntil = run // no key starts inside a run that is none
	}
	if !sc.code {
		sc.trackTo(i)
	}
	if end, ok := sc.link(i); ok {
		if sc.code || sc.signInLink(i, end) {
			return sc.mask(i, end, HiddenLink)
		}
		sc.noLinkUntil = end // an ordinary link: its words are read, but no link inside it
	}
	if !sc.code {
		sc.signInWordAt(i)
	}
	if vs, ve, reason := passwordAt(s, i); reason != "" {
		return sc.mask(vs, ve, HiddenPassword)
	}
	if r, w := utf8.DecodeRuneInString(s[i:]); isSpaceless(r) {
		return i + w
	}
	if end, last4, shaped := ibanAt(s, i); last4 != "" {
		return sc.mask(i, end, IBANPrefix+last4+"]")
	} else if shaped && !sc.code {
		return end // IBAN-shaped but failing mod 97: left alone, digits and all
	}
	if isDigit(s[i]) {
		if end, last4 := nirAt(s, i); last4 != "" {
			return sc.mask(i, end, NIRPrefix+last4+"]")
		}
		end, last4, clusterEnd := cardAt(s, i)
		if last4 != "" {
			return sc.mask(i, end, CardPrefix+last4+"]")
		}
		if !sc.code {
			return clusterEnd
		}
	}
	if sc.code {
		if i >= sc.noCompoundUntil {
			c := compound(s, i)
			if (c.digits >= 4 || c.isCode()) && charsetName(s[i:c.end]) {
				return c.end // "iso-8859-15", "windows-1252": a character set, no code
			}
			if c.isCode() {
				return sc.mask(i, c.end, HiddenCode)
			}
			sc.noCompoundUntil = c.end
		}
		if end, digits := numberCluster(s, i); end > i {
			if digits >= 4 {
				return sc.mask(i, end, HiddenCode)
			}
			return end
		}
	}
	return wordEnd(s, i)
}

// markerLen returns the length of the marker m starts with, 0 if none.
func markerLen(m string) int {
	for _, f := range []string{HiddenCode, HiddenLink, HiddenPassword, HiddenKey} {
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

// compoundInfo is what compound read.
type compoundInfo struct {
	end, letters, digits int
	trans                int  // changes between letters and digits inside its parts
	longWord             bool // a part is a word of four letters or more ("2-step", "covid-19")
	letterFirst          bool
}

// isCode: in a message with a code, a compound with a letter is a code when it has four digits or
// more ("G-482913"); two or three digits in four characters or more, starting with a letter or
// changing twice between letters and digits ("K7Q2", "7KQ2", "X7K-9QP"; not "21st"); or one
// digit in five characters or more that changes twice and holds no word ("K7QPX"; not "2-step").
func (c compoundInfo) isCode() bool {
	switch {
	case c.letters == 0 || c.digits == 0:
		return false
	case c.digits >= 4:
		return true
	case c.digits >= 2:
		return c.letters+c.digits >= 4 && (c.letterFirst || c.trans >= 2)
	}
	return c.letters+c.digits >= 5 && c.trans >= 2 && !c.longWord
}

// compound reads from i words joined by single '-' or '_' ("X7K-9QP", "G-482913", "X7K_9QP"),
// or short codes of capitals and digits apart by one space ("X7K 9QP"), and counts their
// letters and digits. A change to or from a script written without spaces ends it. Not '/':
// a link may start after one, and a second pass, reading its marker, would read less.
func compound(s string, i int) compoundInfo {
	first, _ := utf8.DecodeRuneInString(s[i:])
	c := compoundInfo{letterFirst: unicode.IsLetter(first)}
	j := i
	for {
		start, letters, digits, upper, lower, prev := j, 0, 0, false, false, 0
		for j < len(s) {
			r, w := utf8.DecodeRuneInString(s[j:])
			if isSpaceless(r) {
				break
			}
			k := -1
			switch {
			case unicode.IsDigit(r):
				k = 2
				digits++
			case unicode.IsLetter(r):
				k = 1
				letters++
				upper = upper || unicode.IsUpper(r)
				lower = lower || unicode.IsLower(r)
			case unicode.IsMark(r):
				k = 0
			}
			if k < 0 {
				break
			}
			if k > 0 {
				if prev != 0 && k != prev {
					c.trans++
				}
				prev = k
			}
			j += w
		}
		c.letters += letters
		c.digits += digits
		if digits == 0 && letters >= 4 {
			c.longWord = true
		}
		if j+1 < len(s) && (s[j] == '-' || s[j] == '_') {
			if r, _ := utf8.DecodeRuneInString(s[j+1:]); isWordRune(r) && !isSpaceless(r) {
				j++
				continue
			}
		}
		if short := j - start; short >= 2 && short <= 5 && letters > 0 && digits > 0 && !lower &&
			j+1 < len(s) && s[j] == ' ' && shortCodePart(s, j+1) {
			j++
			continue
		}
		c.end = j
		return c
	}
}

// shortCodePart reports whether a group of two to five capitals and digits, with both, stands
// at s[j:] as a word of its own.
func shortCodePart(s string, j int) bool {
	k, letter, digit := j, false, false
	for k < len(s) && k-j <= 5 && (isDigit(s[k]) || 'A' <= s[k] && s[k] <= 'Z') {
		letter = letter || !isDigit(s[k])
		digit = digit || isDigit(s[k])
		k++
	}
	return k-j >= 2 && k-j <= 5 && letter && digit && endsWordAt(s, k)
}

// isCodeSep reports whether r may stand between the groups of a one-time code: spaces of every
// kind, line breaks and tabs (a digit per table cell), dashes, dots, commas, '|' and '>' (a
// quoted reply), '_', '/', '\\', '*', '~', brackets and parentheses ("[4][8][2]").
func isCodeSep(r rune) bool {
	switch r {
	case '-', '.', ',', '|', '>', '_', '/', '\\', '*', '~', '[', ']', '(', ')', '\u00B7',
		'\u2022', '\u2502', '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2212', '\uFF5C':
		return true
	}
	return unicode.IsSpace(r)
}

// numberCluster reads numbers joined by code separators from i ("48 29 13", "4\t8\t2\t9\t1\t3",
// "| 4 | 8 |", "482_913") and returns the end of its last number and its digit count; end is i
// when no number starts at i. A number ends at a word boundary (a letter of a script written
// without spaces is one: "验证码482913").
func numberCluster(s string, i int) (end, digits int) {
	end = i
	for j := i; ; {
		e := numberEnd(s, j)
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

package authres

import "strings"

// field is what one Authentication-Results value says: its authserv-id, its version ("" when
// absent) and each result as "method=result", lower-cased, method versions dropped.
type field struct {
	id, version string
	results     []string
	// domains[i] is the domain results[i] speaks for, when it names one: DMARC's header.from,
	// DKIM's header.d (lower case).
	domains []string
}

// canonical writes f as authres.Parse reads it right.
func (f field) canonical() string {
	var b strings.Builder
	b.WriteString(f.id)
	if f.version != "" {
		b.WriteString(" " + f.version)
	}
	for _, r := range f.results {
		b.WriteString("; " + r)
	}
	return b.String()
}

// read reads v per RFC 8601:
//
//	[CFWS] authserv-id [CFWS version] ( [CFWS] ";" [CFWS] "none" / 1*( [CFWS] ";" resinfo ) ) [CFWS]
//	resinfo = [CFWS] method [ [CFWS] "/" [CFWS] version ] [CFWS] "=" [CFWS] result [reason] [props]
//
// Comments nest and hold quoted-pairs; a quoted string holds quoted-pairs; CFWS (folding
// included) may stand around every "=", "/", "." and ";". Reasons and properties are skipped,
// a quoted string or comment at a time, so a ";" or "(" inside a quoted smtp.mailfrom never
// starts a result or a comment. A resinfo that cannot be read is skipped up to the next ";".
// A "(" or `"` that is never closed is read as an ordinary character, so it cannot hide the
// results after it. ok is false when v has no authserv-id (a token or quoted string followed by
// CFWS, ";" or the end).
func read(v string) (f field, ok bool) {
	l := &lexer{s: v, noQuote: len(v)}
	l.cfws()
	f.id = l.value()
	if f.id == "" || strings.ContainsAny(f.id, " \t\r\n;") || l.i < len(l.s) && !strings.ContainsRune(" \t\r\n(;", rune(l.s[l.i])) {
		return field{}, false // no authserv-id, or one glued to something else
	}
	l.cfws()
	if d := l.run(isDigit); d != "" {
		f.version = d
	}
	for l.skipResinfo(); l.i < len(l.s); l.skipResinfo() {
		l.i++ // the ";"
		l.cfws()
		method := l.run(isKeyword)
		l.cfws()
		if method == "" {
			continue
		}
		if l.peek('/') {
			l.i++
			l.cfws()
			l.run(isKeyword)
			l.cfws()
		}
		if !l.peek('=') {
			continue // "none", or garbage
		}
		l.i++
		l.cfws()
		if result := l.run(isKeyword); result != "" {
			f.results = append(f.results, strings.ToLower(method)+"="+strings.ToLower(result))
			f.domains = append(f.domains, l.domainProp(strings.ToLower(method)))
		}
	}
	return f, true
}

// lexer walks one field value. Every method moves forward only, and finding where a comment or
// quoted string ends is done once for the whole value, so reading is linear in its length.
type lexer struct {
	s       string
	i       int
	ends    map[int]int // for each "(" that is closed, the index after its ")"; made when first needed
	noQuote int         // no `"` at or after this index is closed
}

func (l *lexer) peek(c byte) bool { return l.i < len(l.s) && l.s[l.i] == c }

// cfws skips white space (folding included) and comments.
func (l *lexer) cfws() {
	for l.i < len(l.s) {
		switch l.s[l.i] {
		case ' ', '\t', '\r', '\n':
			l.i++
		case '(':
			end, ok := l.commentEnd(l.i)
			if !ok {
				return
			}
			l.i = end
		default:
			return
		}
	}
}

// run reads the longest run of bytes that pass ok.
func (l *lexer) run(ok func(byte) bool) string {
	start := l.i
	for l.i < len(l.s) && ok(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

// value reads a token or a quoted string (unquoted).
func (l *lexer) value() string {
	if l.peek('"') {
		if end, ok := l.quoteEnd(l.i); ok {
			q := l.s[l.i+1 : end-1]
			l.i = end
			return unquote(q)
		}
	}
	return l.run(func(c byte) bool {
		return c > ' ' && c < 0x7f && !strings.ContainsRune(`()<>@,;:\"/[]?=`, rune(c))
	})
}

// skipResinfo moves to the next ";" that is outside comments and quoted strings, or to the end.
func (l *lexer) skipResinfo() {
	for l.i < len(l.s) {
		switch l.s[l.i] {
		case ';':
			return
		case '(':
			if end, ok := l.commentEnd(l.i); ok {
				l.i = end
				continue
			}
		case '"':
			if end, ok := l.quoteEnd(l.i); ok {
				l.i = end
				continue
			}
		}
		l.i++
	}
}

// commentEnd returns the index after the ")" closing the comment that opens at i.
func (l *lexer) commentEnd(i int) (int, bool) {
	if l.ends == nil {
		l.ends = map[int]int{}
		var open []int
		for j := 0; j < len(l.s); j++ {
			switch l.s[j] {
			case '\\':
				j++
			case '(':
				open = append(open, j)
			case ')':
				if n := len(open); n > 0 {
					l.ends[open[n-1]] = j + 1
					open = open[:n-1]
				}
			}
		}
	}
	end, ok := l.ends[i]
	return end, ok
}

// quoteEnd returns the index after the `"` closing the quoted string that opens at i. When one
// is not closed, no later one is either (their quoted-pairs line up), which keeps this linear.
func (l *lexer) quoteEnd(i int) (int, bool) {
	if i >= l.noQuote {
		return 0, false
	}
	for j := i + 1; j < len(l.s); j++ {
		switch l.s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	l.noQuote = i
	return 0, false
}

func unquote(q string) string {
	if !strings.Contains(q, `\`) {
		return q
	}
	var b strings.Builder
	for j := 0; j < len(q); j++ {
		if q[j] == '\\' && j+1 < len(q) {
			j++
		}
		b.WriteByte(q[j])
	}
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isKeyword: RFC 8601 methods and results are ldh-str; "_" and "." are taken too.
func isKeyword(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_' || c == '.'
}

// domainProp reads a resinfo's reason and properties up to the next ";" and returns the domain
// its method speaks for: header.from for dmarc, header.d for dkim; "" when none.
func (l *lexer) domainProp(method string) string {
	want := map[string]string{"dmarc": "header.from", "dkim": "header.d"}[method]
	found := ""
	for l.i < len(l.s) && !l.peek(';') {
		start := l.i
		l.cfws()
		key := l.run(isKeyword)
		if l.peek('.') {
			l.i++
			key += "." + l.run(isKeyword)
		}
		l.cfws()
		if key != "" && l.peek('=') {
			l.i++
			l.cfws()
			v := l.value()
			if l.peek('@') { // header.from=user@domain: the domain is after the @
				l.i++
				v = l.value()
			}
			if strings.EqualFold(key, want) && found == "" {
				found = strings.ToLower(strings.TrimPrefix(v, "@"))
			}
			continue
		}
		if l.i == start {
			l.i++ // a byte that starts nothing: step over it
		}
	}
	return found
}

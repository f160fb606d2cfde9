package mask

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/clean"
)

// The person's own texts: notes, task and event descriptions, contacts' notes. They mix a
// secret with everything else (the wifi password beside the shopping list), so a secret in
// them is masked where it stands and the rest is shown; mail instead is withheld whole when it
// gives a password (Inspect), because a stranger's message that gives one is about nothing
// else and may give it in a form no rule reads.
//
// In an own text, besides what Text masks:
//   - a password, key or PIN label (any case for "PIN") masks the value it introduces: right
//     after it ("PIN 4821 for the card": a value with a digit, or a password's shape), or
//     after up to six words and ':' '=' or a connector on its line ("Wifi password for the
//     shed: hunter2-shed", "the code of the safe is 4821"), or alone at the end of its line,
//     then the next line. After ':' the value runs to the end of its line, or to ", " "; " or
//     " (" ; a passphrase's value is the whole rest of its line;
//   - a recovery-code label ("Recovery codes:", "Backup-Codes") masks each code after it, on
//     its line and on the lines that follow, one or several a line, until a blank line or a
//     line that is no list of codes;
//   - a value every rule of Text reads as a password is masked, never the whole text.

// Own masks s, a text the person wrote, and returns the masked text and the number of things
// masked. It never withholds the whole text. Own(Own(s)) == Own(s).
func Own(s string) (string, int) {
	return fixed(s, func(s string) (string, int) {
		m, n := fixed(s, ownPass)
		m, k := scanWith(m, messageCode("", normalize(foldString(m))), secretSet{})
		return m, n + k
	})
}

// OwnBody is Own for a text of several lines: cleaned as clean.Text cleans it, then masked, so
// that Body(OwnBody(s)) == OwnBody(s) when s holds no withheld phrase (see docs/packages.md).
func OwnBody(s string) string {
	c := clean.Text(s)
	m, n := Own(c)
	if n == 0 {
		return c
	}
	return clean.Text(m)
}

// OwnLine is OwnBody for a value of one line (a note's title).
func OwnLine(s string) string {
	c := clean.Line(s)
	m, n := Own(c)
	if n == 0 {
		return c
	}
	return clean.Line(m)
}

// span is a part of the view to hide behind marker.
type span struct {
	from, to int
	marker   string
}

// ownPass finds the secrets of an own text in its view and hides them.
func ownPass(s string) (string, int) {
	v := newView(s)
	f := v.f
	var spans []span
	next := 0
	eachWordStart(f, func(i int) bool {
		if i < next {
			return true
		}
		if vs, ve, reason := passwordAt(f, i); reason != "" {
			spans = append(spans, span{vs, ve, HiddenPassword})
			next = ve
			return true
		}
		if got := ownLabelAt(f, i); len(got) > 0 {
			spans = append(spans, got...)
			next = got[len(got)-1].to
		}
		return true
	})
	if len(spans) == 0 {
		return s, 0
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].from < spans[b].from })
	sc := scanner{s: f, v: &v}
	for _, sp := range spans {
		if sp.from < sc.last || v.start(sp.from) < sc.last {
			continue
		}
		sc.hide(sp.from, sp.to, sp.marker)
	}
	if sc.n == 0 {
		return s, 0
	}
	sc.out.WriteString(s[sc.last:])
	return sc.out.String(), sc.n
}

// ownLabelAt reads a label at the word start i of the view f and returns the spans of the
// secrets it introduces, or none.
func ownLabelAt(f string, i int) []span {
	t := tbl()
	if e, _ := t.recovery.longest(f, i); e > 0 {
		return recoveryCodes(f, e)
	}
	e, lb := t.labels.longest(f, i)
	pin := false
	switch {
	case lb != nil:
		pin = lb.kind == pinLabel
	case len(f)-i >= 3 && strings.EqualFold(f[i:i+3], "pin") && !isWordAt(f, i+3):
		e, pin = i+3, true
	default:
		return nil
	}
	phrase := lb != nil && lb.kind == passwordLabel && strings.Contains(strings.ToLower(f[i:e]), "phrase")
	return ownValue(f, i, e, pin, phrase)
}

// ownValue finds the value a label at f[i:e] introduces (see Own).
func ownValue(f string, i, e int, pin, phrase bool) []span {
	t := tbl()
	j := skipBlanks(f, e)
	if j < len(f) && f[j] == '-' && j+1 < len(f) && f[j+1] != ' ' {
		j++ // "PIN-Code"
	}
	// Right after the label: "PIN 4821", "password hunter2".
	if tok := firstToken(f, j); tok != "" {
		ok := pin && ownPIN(tok) || !pin && !phrase && strictShape(tok) && looksSecret(tok, false, false, false)
		if ok && !strings.HasSuffix(tok, ":") {
			return []span{{j, j + len(strings.TrimRight(tok, ".,;!?)\"'»")), HiddenPassword}}
		}
		if w := normalize(strings.Trim(tok, ".,;:!?")); t.stopValues[w] || w == "requirements" || w == "rules" {
			return nil // "password manager", "PIN policy", "password requirements:"
		}
	}
	// Up to six words, then ':' '=' or a connector.
	words, mode := 0, 0 // mode 1: after ':' or '='; 2: after a connector
	k := j
	for k < len(f) && words <= 6 {
		c := f[k]
		switch {
		case c == ':' || c == '=':
			mode, k = 1, k+1
		case strings.HasPrefix(f[k:], "："):
			mode, k = 1, k+len("：")
		case c == '\n' || c == '\r' || c == '.' || c == '?' || c == '!' || c == ';' || c == '(':
			return nil
		case c == ' ' || c == '\t':
			k++
			continue
		default:
			if ce, _ := t.connectors.longest(f, k); ce > 0 && startsWordAt(f, k) {
				m, v := 2, skipBlanks(f, ce)
				if v < len(f) && f[v] == ':' {
					m, v = 1, v+1
				}
				if got := ownFinish(f, v, m, pin, phrase); got != nil {
					return got
				}
				// Not a value after it: a word of the label's words ("de la box").
			}
			r, w := utf8.DecodeRuneInString(f[k:])
			if !isWordRune(r) && r != '-' && r != '\'' && r != '’' {
				return nil
			}
			we := wordEnd(f, k)
			if we <= k {
				we = k + w
			}
			for we < len(f) && (f[we] == '-' || f[we] == '\'') && isWordAt(f, we+1) {
				we = wordEnd(f, we+1)
			}
			k, words = we, words+1
			continue
		}
		break
	}
	if mode == 0 {
		return nil
	}
	return ownFinish(f, k, mode, pin, phrase)
}

// ownFinish reads the value after a label's separator at f[k:] (mode 1: ':' or '='; 2: a
// connector) and returns its span, or none.
func ownFinish(f string, k, mode int, pin, phrase bool) []span {
	t := tbl()
	vs := skipBlanks(f, k)
	if mode == 1 && (vs >= len(f) || f[vs] == '\n' || f[vs] == '\r') {
		// Alone at the end of its line: the value is the next line.
		if vs < len(f) && f[vs] == '\r' {
			vs++
		}
		if vs < len(f) && f[vs] == '\n' {
			vs++
		}
		vs = skipBlanks(f, vs)
	}
	ve := lineEnd(f, vs)
	if !phrase {
		ve = valueCut(f, vs, ve)
	}
	for ve > vs && (f[ve-1] == ' ' || f[ve-1] == '\t' || strings.IndexByte(".,;!?\"'", f[ve-1]) >= 0) {
		ve--
	}
	if ve <= vs || strings.Contains(f[vs:ve], "[") && markerIn(f[vs:ve]) {
		return nil
	}
	first := firstToken(f, vs)
	switch {
	case pin:
		if !ownPIN(first) {
			return nil
		}
	case phrase:
		if utf8.RuneCountInString(f[vs:ve]) < 4 {
			return nil
		}
	case mode == 2:
		if !strictShape(first) || !looksSecret(strings.TrimRight(first, ".,;!?"), false, false, false) {
			return nil
		}
	default:
		if w := strings.ToLower(strings.Trim(first, ".,;:!?")); t.stopValues[normalize(w)] ||
			!looksSecret(strings.TrimRight(f[vs:ve], ".,;!?"), true, false, false) {
			return nil
		}
	}
	return []span{{vs, ve, HiddenPassword}}
}

// ownPIN: a PIN's value holds a digit and four characters or more, or is four digits or more
// written apart ("48 21").
func ownPIN(tok string) bool {
	tok = strings.TrimRight(tok, ".,;!?)")
	return utf8.RuneCountInString(tok) >= 4 && strings.IndexFunc(tok, unicode.IsDigit) >= 0
}

// firstToken is the run of characters up to a blank at f[j:].
func firstToken(f string, j int) string {
	e := j
	for e < len(f) {
		r, w := utf8.DecodeRuneInString(f[e:])
		if unicode.IsSpace(r) {
			break
		}
		e += w
	}
	return f[j:e]
}

// lineEnd is the end of the line f[j:] is on.
func lineEnd(f string, j int) int {
	if k := strings.IndexAny(f[j:], "\n\r"); k >= 0 {
		return j + k
	}
	return len(f)
}

// valueCut ends a value at ", ", "; ", " (" or " - ", where a sentence goes on after it.
func valueCut(f string, vs, ve int) int {
	for _, sep := range []string{", ", "; ", " (", " - ", " – ", " — ", ". "} {
		if k := strings.Index(f[vs:ve], sep); k > 0 {
			ve = vs + k
		}
	}
	return ve
}

// markerIn reports whether a marker stands in v.
func markerIn(v string) bool {
	for k := strings.IndexByte(v, '['); k >= 0; {
		if markerLen(v[k:]) > 0 {
			return true
		}
		n := strings.IndexByte(v[k+1:], '[')
		if n < 0 {
			break
		}
		k += 1 + n
	}
	return false
}

// recoveryCodes returns the codes a recovery label ending at e introduces: the codes after it
// on its line (after a ':'), then each line that is a list of codes, until one is not.
func recoveryCodes(f string, e int) []span {
	var out []span
	j := skipBlanks(f, e)
	if j < len(f) && (f[j] == ':' || f[j] == '=') {
		j++
	} else if strings.HasPrefix(f[j:], "：") {
		j += len("：")
	}
	line := lineEnd(f, j)
	if got, ok := codeLine(f, j, line); ok {
		out = append(out, got...)
	} else if strings.TrimSpace(f[j:line]) != "" {
		return nil // "recovery codes are in the safe"
	}
	for n := 0; n < 64 && line < len(f); n++ {
		j = line
		if f[j] == '\r' {
			j++
		}
		if j < len(f) && f[j] == '\n' {
			j++
		}
		line = lineEnd(f, j)
		got, ok := codeLine(f, j, line)
		if !ok {
			break
		}
		out = append(out, got...)
	}
	return out
}

// codeLine reads f[a:b] as a line of recovery codes: after a list mark ("-", "*", "•", "1.",
// "1)"), one to eight codes apart by blanks, each of four to forty letters, digits, '-' and
// '_' with a digit, or of letters in groups joined by '-' ("abcd-efgh"), or a marker a first
// pass left. It reports false for a blank line or a line that is anything else.
func codeLine(f string, a, b int) ([]span, bool) {
	k := skipBlanks(f, a)
	switch {
	case k < b && strings.IndexByte("-*•>", f[k]) >= 0:
		k++
	case strings.HasPrefix(f[k:b], "•"):
		k += len("•")
	default:
		d := k
		for d < b && isDigit(f[d]) && d-k < 3 {
			d++
		}
		if d > k && d < b && (f[d] == '.' || f[d] == ')') && d+1 < b && f[d+1] == ' ' {
			k = d + 1
		}
	}
	var out []span
	for n := 0; ; n++ {
		k = skipBlanks(f, k)
		if k >= b {
			return out, n > 0
		}
		if n == 8 {
			return nil, false
		}
		if m := markerLen(f[k:b]); m > 0 {
			k += m
			continue
		}
		e := k
		digit, dash := false, false
		for e < b && (isAlnum(f[e]) || f[e] == '-' || f[e] == '_') {
			digit = digit || isDigit(f[e])
			dash = dash || f[e] == '-'
			e++
		}
		if e < b && f[e] != ' ' && f[e] != '\t' || e-k < 4 || e-k > 40 || !digit && !(dash && e-k >= 8) {
			return nil, false
		}
		out = append(out, span{k, e, HiddenCode})
		k = e
	}
}

// Package search parses the mail search language agents write, in mail_search, in actions by
// query and in the match of a mail rule: words, "phrases", -excluded, the last word as a
// prefix, the operators from: to: cc: subject: in: account: is: has: after: before: larger:
// smaller: header: list: body:, OR between conditions and ( ) groups, a - before a group
// negating it. It only parses; it never touches the store (internal/store compiles a Query to
// SQL, internal/sieve to Sieve), and an error says what to fix.
package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Term is a text condition.
type Term struct {
	Field   string // "" (anywhere), "from", "to", "cc" or "subject"
	Text    string // the words, as written (a phrase when it holds several)
	Negated bool
	Prefix  bool // the last word may be the start of a longer word
}

// Query is a parsed search: a conjunction. A match meets every term and
// operator of it, and every one of its Groups. Several in: (or account:) are
// alternatives: a match is in one of those folders.
type Query struct {
	Terms         []Term
	Folders       []string
	Accounts      []string
	Unread        *bool
	Flagged       *bool
	Answered      *bool
	HasAttachment bool
	After         time.Time // date >= After
	Before        time.Time // date < Before
	Larger        int64     // size > Larger
	Smaller       *int64    // size < *Smaller, when set (smaller:0 matches nothing)
	List          *bool     // is:list: it comes from a mailing list
	Authenticated *bool     // is:authenticated: its sender's domain vouched for it
	// Matches are the conditions on text that are not words: header:, list:, body:, a
	// sender's or recipient's domain (from:@example.com) and text anywhere (subject:*voice*).
	Matches []Match
	// Groups are the conditions written with OR or in parentheses that could
	// not be merged into the fields above; nil for a plain search.
	Groups []Group
}

// Kinds of Match.
const (
	// Contains: the text is somewhere in the field, case ignored (header:, list:, body:,
	// and from:/to:/cc:/subject: written *text*).
	Contains = "contains"
	// Domain: an address of the field is at the domain or below it (from:@example.com).
	Domain = "domain"
	// Exists: the message has the header field Name (header:NAME without a value).
	Exists = "exists"
)

// Match is a condition on a message's text other than words.
type Match struct {
	Kind    string // Contains, Domain or Exists
	Field   string // "from", "to", "cc", "subject", "body" or "header"
	Name    string // header: the header field's name
	Text    string // the text, or the domain, as written
	Negated bool
}

// Needs says whether q looks at header fields (header:, list:), which read:headers shows,
// and at body text (body:), which read:bodies shows.
func (q *Query) Needs() (headers, bodies bool) {
	q.Walk(func(c *Query) {
		for _, m := range c.Matches {
			headers = headers || m.Field == "header"
			bodies = bodies || m.Field == "body"
		}
	})
	return headers, bodies
}

// Group is a condition made of alternatives: a match meets at least one of
// Alts, or, when Negated, none of them. Each alternative is a conjunction, as
// a Query is. A group without OR has one alternative.
type Group struct {
	Alts    []*Query
	Negated bool
}

// Empty reports whether q has no condition at all (it matches every message).
func (q *Query) Empty() bool {
	return len(q.Terms) == 0 && len(q.Folders) == 0 && len(q.Accounts) == 0 && q.Unread == nil && q.Flagged == nil &&
		q.Answered == nil && !q.HasAttachment && q.After.IsZero() && q.Before.IsZero() && q.Larger == 0 && q.Smaller == nil &&
		len(q.Groups) == 0 && q.List == nil && q.Authenticated == nil && len(q.Matches) == 0
}

// Walk calls fn on q and on every alternative of its groups, depth first.
func (q *Query) Walk(fn func(*Query)) {
	fn(q)
	for _, g := range q.Groups {
		for _, a := range g.Alts {
			a.Walk(fn)
		}
	}
}

// Operators lists the operators, for messages.
var Operators = []string{"from:", "to:", "cc:", "subject:", "in:", "account:", "is:", "has:", "after:", "before:", "larger:", "smaller:", "header:", "list:", "body:"}

// Error is a query the parser refuses.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

type tokKind uint8

const (
	tWord  tokKind = iota // a word, a phrase or an operator with its value
	tOpen                 // (
	tClose                // )
	tOr                   // OR
)

type token struct {
	kind   tokKind
	pos    int // 1-based character position, for errors
	neg    bool
	op     string // lower-case operator without colon, or ""
	text   string
	name   string // header: the field name
	quoted bool
	prefix bool // set by markPrefix
}

// maxDepth is how deeply groups may nest.
const maxDepth = 20

// Parse reads q; now anchors relative dates such as 7d.
func Parse(q string, now time.Time) (*Query, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	markPrefix(toks)
	p := &parser{toks: toks, now: now}
	alts, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) { // only a ) stops the top level early
		t := p.toks[p.i]
		return nil, errorf("the ) at character %d closes no (; remove it, or quote the text that holds it", t.pos)
	}
	switch len(alts) {
	case 0:
		return &Query{}, nil
	case 1:
		return alts[0], nil
	}
	return &Query{Groups: []Group{{Alts: alts}}}, nil
}

// markPrefix marks the last text condition written as the prefix when it is
// a bare word: not quoted, not negated, not inside a negated group, no operator.
func markPrefix(toks []token) {
	negDepth := 0 // open negated groups around the current token
	var stack []bool
	last := -1
	lastOK := false
	for i, t := range toks {
		switch t.kind {
		case tOpen:
			stack = append(stack, t.neg)
			if t.neg {
				negDepth++
			}
		case tClose:
			if n := len(stack); n > 0 {
				if stack[n-1] {
					negDepth--
				}
				stack = stack[:n-1]
			}
		case tWord:
			switch t.op {
			case "":
				if !hasWordChar(t.text) {
					continue // punctuation alone is no condition
				}
			case "from", "to", "cc", "subject":
				if n := len(t.text); t.op != "subject" && strings.HasPrefix(t.text, "@") || n >= 2 && t.text[0] == '*' && t.text[n-1] == '*' {
					continue // a domain or text anywhere is no word: it does not take the prefix away
				}
			default:
				continue // other operators (body:, header:, list: too) do not take the prefix away
			}
			last, lastOK = i, t.op == "" && !t.quoted && !t.neg && negDepth == 0 && !strings.ContainsFunc(t.text, unicode.IsSpace)
		}
	}
	if last >= 0 && lastOK {
		toks[last].prefix = true
	}
}

type parser struct {
	toks []token
	i    int
	now  time.Time
}

// or reads alternatives separated by OR up to a ) or the end.
func (p *parser) or(depth int) ([]*Query, error) {
	var alts []*Query
	for {
		start := p.i
		q, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		atOr := p.i < len(p.toks) && p.toks[p.i].kind == tOr
		if q == nil {
			switch {
			case atOr:
				return nil, errorf("the OR at character %d has no condition before it; write a word or an operator on each side, e.g. budget OR invoice", p.toks[p.i].pos)
			case len(alts) > 0:
				return nil, errorf("the OR at character %d has no condition after it; write a word or an operator on each side, e.g. budget OR invoice", p.toks[start-1].pos)
			}
			return nil, nil
		}
		alts = append(alts, q)
		if !atOr {
			return alts, nil
		}
		p.i++
	}
}

// and reads a conjunction: words, operators and groups up to an OR, a ) or
// the end. It returns nil when there is no condition.
func (p *parser) and(depth int) (*Query, error) {
	out := &Query{}
	found := false
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		switch t.kind {
		case tOr, tClose:
			if !found {
				return nil, nil
			}
			return out, nil
		case tOpen:
			if depth >= maxDepth {
				return nil, errorf("the ( at character %d nests groups more than %d deep; write the search with fewer parentheses", t.pos, maxDepth)
			}
			p.i++
			alts, err := p.or(depth + 1)
			if err != nil {
				return nil, err
			}
			if p.i >= len(p.toks) || p.toks[p.i].kind != tClose {
				return nil, errorf("the ( at character %d is not closed; add a ) after the group, or quote the text that holds it", t.pos)
			}
			p.i++
			if alts == nil {
				return nil, errorf("the ( ) at character %d holds no condition; put words or operators inside or remove it", t.pos)
			}
			out.addGroup(Group{Alts: alts, Negated: t.neg})
			found = true
		case tWord:
			p.i++
			ok, err := out.add(t, p.now)
			if err != nil {
				return nil, err
			}
			found = found || ok
		}
	}
	if !found {
		return nil, nil
	}
	return out, nil
}

// addGroup adds g to q, merging a plain group (one alternative of words and
// groups only, not negated) into q, so that (a b) c is a b c.
func (q *Query) addGroup(g Group) {
	if a := g.Alts[0]; !g.Negated && len(g.Alts) == 1 {
		rest := *a
		rest.Terms, rest.Groups = nil, nil
		if rest.Empty() {
			q.Terms = append(q.Terms, a.Terms...)
			q.Groups = append(q.Groups, a.Groups...)
			return
		}
	}
	q.Groups = append(q.Groups, g)
}

// add applies one word or operator to q; ok is false for punctuation alone,
// which is no condition.
func (q *Query) add(t token, now time.Time) (ok bool, err error) {
	switch t.op {
	case "":
		if strings.TrimSpace(t.text) == "" || !hasWordChar(t.text) {
			return false, nil // punctuation alone matches nothing and excludes nothing
		}
		q.Terms = append(q.Terms, Term{Text: t.text, Negated: t.neg, Prefix: t.prefix})
	case "from", "to", "cc", "subject":
		if d, ok := strings.CutPrefix(t.text, "@"); ok && t.op != "subject" {
			if strings.TrimSpace(d) == "" {
				return false, errorf("%s:@ needs a domain after the @, e.g. %s:@example.com", t.op, t.op)
			}
			q.Matches = append(q.Matches, Match{Kind: Domain, Field: t.op, Text: d, Negated: t.neg})
			return true, nil
		}
		if n := len(t.text); n >= 2 && t.text[0] == '*' && t.text[n-1] == '*' {
			q.Matches = append(q.Matches, Match{Kind: Contains, Field: t.op, Text: t.text[1 : n-1], Negated: t.neg})
			return true, nil
		}
		if !hasWordChar(t.text) {
			return false, errorf("%s: needs a name, an address or words after it", t.op)
		}
		q.Terms = append(q.Terms, Term{Field: t.op, Text: t.text, Negated: t.neg})
	case "body":
		if strings.TrimSpace(t.text) == "" {
			return false, errorf("body: needs the text to look for, e.g. body:unsubscribe")
		}
		q.Matches = append(q.Matches, Match{Kind: Contains, Field: "body", Text: t.text, Negated: t.neg})
	case "list":
		if strings.TrimSpace(t.text) == "" {
			return false, errorf("list: needs the list's id or part of it, e.g. list:announce.example.org")
		}
		q.Matches = append(q.Matches, Match{Kind: Contains, Field: "header", Name: "List-Id", Text: t.text, Negated: t.neg})
	case "header":
		m := Match{Kind: Contains, Field: "header", Name: t.name, Text: t.text, Negated: t.neg}
		if !t.quoted && t.text == "" {
			m.Kind = Exists
		}
		q.Matches = append(q.Matches, m)
	case "in":
		if t.neg {
			return false, errorf("-in: is not supported; name the folders to search with in:, or exclude one with -(in:NAME)")
		}
		q.Folders = append(q.Folders, t.text)
	case "account":
		if t.neg {
			return false, errorf("-account: is not supported; name the accounts to search with account:, or exclude one with -(account:NAME)")
		}
		q.Accounts = append(q.Accounts, t.text)
	case "is":
		v := !t.neg
		switch strings.ToLower(t.text) {
		case "unread":
			q.Unread = &v
		case "read":
			nv := !v
			q.Unread = &nv
		case "flagged", "starred":
			q.Flagged = &v
		case "answered", "replied":
			q.Answered = &v
		case "list":
			q.List = &v
		case "authenticated":
			q.Authenticated = &v
		default:
			return false, errorf("is:%s is not known; use is:unread, is:read, is:flagged, is:answered, is:list or is:authenticated", t.text)
		}
	case "has":
		if strings.ToLower(t.text) != "attachment" && strings.ToLower(t.text) != "attachments" {
			return false, errorf("has:%s is not known; use has:attachment", t.text)
		}
		if t.neg {
			return false, errorf("-has:attachment is not supported; write -(has:attachment) for messages without attachments")
		}
		q.HasAttachment = true
	case "after", "before":
		d, err := parseDate(t.text, now)
		if err != nil {
			return false, errorf("%s:%s: %v", t.op, t.text, err)
		}
		if t.op == "after" {
			if d.After(q.After) {
				q.After = d
			}
		} else if q.Before.IsZero() || d.Before(q.Before) {
			q.Before = d
		}
	case "larger", "smaller":
		n, err := parseSize(t.text)
		if err != nil {
			return false, errorf("%s:%s: %v", t.op, t.text, err)
		}
		if t.op == "larger" {
			if n > q.Larger {
				q.Larger = n
			}
		} else if q.Smaller == nil || n < *q.Smaller {
			q.Smaller = &n
		}
	}
	return true, nil
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

var knownOps = map[string]bool{"from": true, "to": true, "cc": true, "subject": true, "in": true, "account": true, "is": true, "has": true, "after": true, "before": true, "larger": true, "smaller": true, "header": true, "list": true, "body": true}

// opNames are the operators without their colons, for Nearest.
var opNames = func() []string {
	out := make([]string, len(Operators))
	for i, o := range Operators {
		out[i] = strings.TrimSuffix(o, ":")
	}
	return out
}()

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// endsBare reports whether r ends a bare word or an operator's bare value.
func endsBare(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == ')' }

// lex splits a query into tokens, honouring quotes. Outside quotes, ( and )
// are always group marks, and OR (in capitals, alone) separates alternatives.
func lex(q string) ([]token, error) {
	var toks []token
	rs := []rune(q)
	i := 0
	for i < len(rs) {
		for i < len(rs) && unicode.IsSpace(rs[i]) {
			i++
		}
		if i >= len(rs) {
			break
		}
		t := token{pos: i + 1}
		if rs[i] == ')' {
			toks = append(toks, token{kind: tClose, pos: i + 1})
			i++
			continue
		}
		if rs[i] == '-' && i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) && rs[i+1] != ')' {
			t.neg = true
			i++
		}
		if rs[i] == '(' {
			t.kind = tOpen
			toks = append(toks, t)
			i++
			continue
		}
		// operator?
		j := i
		for j < len(rs) && unicode.IsLetter(rs[j]) {
			j++
		}
		if j > i && j < len(rs) && rs[j] == ':' {
			name := strings.ToLower(string(rs[i:j]))
			if knownOps[name] {
				t.op = name
				i = j + 1
				if i >= len(rs) || endsBare(rs[i]) {
					return nil, errorf("%s: needs a value right after the colon, e.g. %s", t.op, example(t.op))
				}
			} else if err := unknownOp(rs, i, j); err != nil {
				return nil, err
			}
		}
		if t.op == "header" {
			end := i
			for end < len(rs) && !endsBare(rs[end]) && rs[end] != ':' {
				end++
			}
			t.name = string(rs[i:end])
			if !FieldName(t.name) {
				return nil, errorf("header:%s is not a header field name; write header:NAME:text, e.g. header:List-Id:announce.example.org, or header:NAME for a field that is there", t.name)
			}
			i = end
			if i >= len(rs) || rs[i] != ':' {
				toks = append(toks, t) // header:NAME: the field is there
				continue
			}
			i++
			if i >= len(rs) || endsBare(rs[i]) {
				return nil, errorf("header:%s: needs text after the second colon, or no colon: header:%s for a field that is there", t.name, t.name)
			}
		}
		if rs[i] == '"' {
			var b strings.Builder
			end := i + 1
			for end < len(rs) && rs[end] != '"' {
				// Inside quotes, \" is a quote and \\ a backslash; any other \ is itself.
				if rs[end] == '\\' && end+1 < len(rs) && (rs[end+1] == '"' || rs[end+1] == '\\') {
					end++
				}
				b.WriteRune(rs[end])
				end++
			}
			if end >= len(rs) {
				return nil, errorf("a quote is not closed; close the phrase with \"")
			}
			t.text = b.String()
			t.quoted = true
			i = end + 1
		} else {
			end := i
			for end < len(rs) && !endsBare(rs[end]) {
				end++
			}
			t.text = string(rs[i:end])
			i = end
		}
		if t.op == "" && !t.quoted && !t.neg && t.text == "OR" {
			t.kind = tOr
		}
		toks = append(toks, t)
	}
	return toks, nil
}

// unknownOp refuses name: (the letters rs[i:j]) followed by a value when
// name is no operator, so that a mistyped operator is not silently searched
// as text. A colon at the end of a word (Re: budget), a URL (https://…) and
// names that are not plain ASCII letters stay text.
func unknownOp(rs []rune, i, j int) error {
	for _, r := range rs[i:j] {
		if !isASCIILetter(r) {
			return nil
		}
	}
	if j+1 >= len(rs) || endsBare(rs[j+1]) || rs[j+1] == '/' || rs[j+1] == ':' {
		return nil
	}
	name := string(rs[i:j])
	end := j + 1
	if rs[end] == '"' {
		for end++; end < len(rs) && rs[end] != '"'; end++ {
		}
		end = min(end+1, len(rs))
	} else {
		for end < len(rs) && !endsBare(rs[end]) {
			end++
		}
	}
	literal := strings.ReplaceAll(string(rs[i:end]), `"`, "")
	hint := fmt.Sprintf("to search for the text itself, quote it: \"%s\"", literal)
	near := Nearest(name, opNames)
	all := ""
	if len(near) == 0 {
		near = []string{Closest(name, opNames)}
		all = "; the operators are " + strings.Join(Operators, " ")
	}
	for k := range near {
		near[k] += ":"
	}
	return errorf("%s: is not a search operator; the nearest: %s%s; %s", name, strings.Join(near, ", "), all, hint)
}

func example(op string) string {
	switch op {
	case "after", "before":
		return op + ":2025-01-31 or " + op + ":7d"
	case "larger", "smaller":
		return op + ":1M"
	case "is":
		return "is:unread"
	case "has":
		return "has:attachment"
	case "in":
		return "in:INBOX"
	case "header":
		return "header:List-Id:announce.example.org"
	case "list":
		return "list:announce.example.org"
	case "body":
		return "body:unsubscribe"
	}
	return op + ":bob@example.com"
}

// FieldName reports whether n is a header field's name: 1 to 200 printable ASCII characters
// but the colon (RFC 5322 section 3.6.8).
func FieldName(n string) bool {
	if n == "" || len(n) > 200 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] <= ' ' || n[i] >= 0x7f || n[i] == ':' || n[i] == '"' || n[i] == '(' || n[i] == ')' {
			return false
		}
	}
	return true
}

// Quote is s as a quoted value of the language: in quotes, with \ before each quote and
// backslash, so that it reads back as s whatever it holds.
func Quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// parseDate reads 2025-01-31 (start of that day, UTC) or a span back from now: 7d 3w 6m 1y.
func parseDate(s string, now time.Time) (time.Time, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, layout := range []string{"2006-01-02", "2006/01/02", "2006-01"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	if len(s) >= 2 {
		n, err := strconv.Atoi(s[:len(s)-1])
		if err == nil && n >= 0 && n <= 100000 {
			switch s[len(s)-1] {
			case 'd':
				return now.AddDate(0, 0, -n), nil
			case 'w':
				return now.AddDate(0, 0, -7*n), nil
			case 'm':
				return now.AddDate(0, -n, 0), nil
			case 'y':
				return now.AddDate(-n, 0, 0), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("not a date; write YYYY-MM-DD or a span such as 7d, 3w, 6m, 1y")
}

// parseSize reads 2048, 10k, 1.5M, 1G (powers of 1024).
func parseSize(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := float64(1)
	switch {
	case strings.HasSuffix(s, "k") || strings.HasSuffix(s, "kb"):
		mult, s = 1<<10, strings.TrimSuffix(strings.TrimSuffix(s, "b"), "k")
	case strings.HasSuffix(s, "m") || strings.HasSuffix(s, "mb"):
		mult, s = 1<<20, strings.TrimSuffix(strings.TrimSuffix(s, "b"), "m")
	case strings.HasSuffix(s, "g") || strings.HasSuffix(s, "gb"):
		mult, s = 1<<30, strings.TrimSuffix(strings.TrimSuffix(s, "b"), "g")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("not a size; write bytes or a number with k, M or G, such as 500k")
	}
	if f*mult > 1<<50 {
		return 0, fmt.Errorf("too large; no message is bigger than a few hundred megabytes")
	}
	return int64(f * mult), nil
}

// Package search parses the mail search language agents write (SPEC §6):
// words, "phrases", -excluded, the last word as a prefix, and the operators
// from: to: cc: subject: in: account: is: has: after: before: larger: smaller:.
// It only parses; it never touches the store, and an error says what to fix.
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

// Query is a parsed search.
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
}

// Operators lists the operators, for messages.
var Operators = []string{"from:", "to:", "cc:", "subject:", "in:", "account:", "is:", "has:", "after:", "before:", "larger:", "smaller:"}

// Error is a query the parser refuses.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

type token struct {
	neg    bool
	op     string // lower-case operator without colon, or ""
	text   string
	quoted bool
}

// Parse reads q; now anchors relative dates such as 7d.
func Parse(q string, now time.Time) (*Query, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	out := &Query{}
	lastPlain := -1
	for i, t := range toks {
		switch t.op {
		case "":
			if strings.TrimSpace(t.text) == "" {
				continue
			}
			if !hasWordChar(t.text) {
				continue // punctuation alone matches nothing and excludes nothing
			}
			out.Terms = append(out.Terms, Term{Text: t.text, Negated: t.neg})
			if !t.quoted && !t.neg {
				lastPlain = len(out.Terms) - 1
			} else {
				lastPlain = -1
			}
		case "from", "to", "cc", "subject":
			if !hasWordChar(t.text) {
				return nil, errorf("%s: needs a name, an address or words after it", t.op)
			}
			out.Terms = append(out.Terms, Term{Field: t.op, Text: t.text, Negated: t.neg})
			lastPlain = -1
		case "in":
			if t.neg {
				return nil, errorf("-in: is not supported; name the folders to search with in:")
			}
			out.Folders = append(out.Folders, t.text)
		case "account":
			if t.neg {
				return nil, errorf("-account: is not supported; name the accounts to search with account:")
			}
			out.Accounts = append(out.Accounts, t.text)
		case "is":
			v := !t.neg
			switch strings.ToLower(t.text) {
			case "unread":
				out.Unread = &v
			case "read":
				nv := !v
				out.Unread = &nv
			case "flagged", "starred":
				out.Flagged = &v
			case "answered", "replied":
				out.Answered = &v
			default:
				return nil, errorf("is:%s is not known; use is:unread, is:read, is:flagged or is:answered", t.text)
			}
		case "has":
			if strings.ToLower(t.text) != "attachment" && strings.ToLower(t.text) != "attachments" {
				return nil, errorf("has:%s is not known; use has:attachment", t.text)
			}
			if t.neg {
				return nil, errorf("-has:attachment is not supported")
			}
			out.HasAttachment = true
		case "after", "before":
			d, err := parseDate(t.text, now)
			if err != nil {
				return nil, errorf("%s:%s: %v", t.op, t.text, err)
			}
			if t.op == "after" {
				if d.After(out.After) {
					out.After = d
				}
			} else if out.Before.IsZero() || d.Before(out.Before) {
				out.Before = d
			}
		case "larger", "smaller":
			n, err := parseSize(t.text)
			if err != nil {
				return nil, errorf("%s:%s: %v", t.op, t.text, err)
			}
			if t.op == "larger" {
				if n > out.Larger {
					out.Larger = n
				}
			} else if out.Smaller == nil || n < *out.Smaller {
				out.Smaller = &n
			}
		}
		_ = i
	}
	if lastPlain >= 0 && lastPlain == len(out.Terms)-1 && !strings.Contains(strings.TrimSpace(out.Terms[lastPlain].Text), " ") {
		out.Terms[lastPlain].Prefix = true
	}
	return out, nil
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

var knownOps = map[string]bool{"from": true, "to": true, "cc": true, "subject": true, "in": true, "account": true, "is": true, "has": true, "after": true, "before": true, "larger": true, "smaller": true}

// lex splits a query into tokens, honouring quotes.
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
		var t token
		if rs[i] == '-' && i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) {
			t.neg = true
			i++
		}
		// operator?
		j := i
		for j < len(rs) && (unicode.IsLetter(rs[j])) {
			j++
		}
		if j < len(rs) && rs[j] == ':' && knownOps[strings.ToLower(string(rs[i:j]))] {
			t.op = strings.ToLower(string(rs[i:j]))
			i = j + 1
			if i >= len(rs) || unicode.IsSpace(rs[i]) {
				return nil, errorf("%s: needs a value right after the colon, e.g. %s", t.op, example(t.op))
			}
		}
		if rs[i] == '"' {
			end := i + 1
			for end < len(rs) && rs[end] != '"' {
				end++
			}
			if end >= len(rs) {
				return nil, errorf("a quote is not closed; close the phrase with \"")
			}
			t.text = string(rs[i+1 : end])
			t.quoted = true
			i = end + 1
		} else {
			end := i
			for end < len(rs) && !unicode.IsSpace(rs[end]) {
				end++
			}
			t.text = string(rs[i:end])
			i = end
		}
		toks = append(toks, t)
	}
	return toks, nil
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
	}
	return op + ":bob@example.com"
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

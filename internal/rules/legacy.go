package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/search"
)

// The old shape of a rule's match (before match became a query): conditions that all hold,
// and at most one level of any/all/none groups. A rules.toml written so is read, each match
// rewritten as the query that matches exactly the same messages (Convert), and the file
// rewritten once with the old one kept beside it (Load). The field names and their order are
// those the old files used, so that an old rule's digest (server.go) can be worked out again.

// LegacyHeader is an old header condition: the field called Name holds Contains.
type LegacyHeader struct {
	Name     string `json:"name"`
	Contains string `json:"contains"`
}

// LegacyCondition is an old set of conditions that all hold.
type LegacyCondition struct {
	From          string         `json:"from,omitempty"`
	To            string         `json:"to,omitempty"`
	Cc            string         `json:"cc,omitempty"`
	Subject       string         `json:"subject,omitempty"`
	FromDomain    string         `json:"from_domain,omitempty"`
	ToDomain      string         `json:"to_domain,omitempty"`
	List          *bool          `json:"list,omitempty"`
	HasAttachment *bool          `json:"has_attachment,omitempty"`
	Larger        *int           `json:"larger,omitempty"`
	Smaller       *int           `json:"smaller,omitempty"`
	OlderThan     string         `json:"older_than,omitempty"`
	YoungerThan   string         `json:"younger_than,omitempty"`
	Flags         []string       `json:"flags,omitempty"`
	Header        []LegacyHeader `json:"header,omitempty"`
	Body          []string       `json:"body,omitempty"`
	Authenticated *bool          `json:"authenticated,omitempty"`
}

// LegacyMatch is an old match: its own conditions and the groups.
type LegacyMatch struct {
	LegacyCondition
	Any  []LegacyCondition `json:"any,omitempty"`
	All  []LegacyCondition `json:"all,omitempty"`
	None []LegacyCondition `json:"none,omitempty"`
}

// never is a condition no message meets (a size below zero bytes).
const never = "smaller:0"

// maxSize is more bytes than any message has.
const maxSize = 1 << 40

// Convert is the query that matches exactly the messages m matched. Old text conditions
// held text anywhere, case ignored: they become *text*, header: and body:, which mean that.
func Convert(m LegacyMatch) string {
	parts := conditionParts(m.LegacyCondition)
	alts := func(cs []LegacyCondition) (out []string, always bool) {
		for _, c := range cs {
			p := conditionParts(c)
			if len(p) == 0 {
				always = true // an empty member holds for every message
			}
			out = append(out, strings.Join(p, " "))
		}
		return out, always
	}
	if len(m.Any) > 0 {
		if as, always := alts(m.Any); !always {
			parts = append(parts, "("+strings.Join(as, " OR ")+")")
		}
	}
	for _, c := range m.All {
		parts = append(parts, conditionParts(c)...)
	}
	if len(m.None) > 0 {
		if as, always := alts(m.None); always {
			parts = append(parts, never)
		} else {
			parts = append(parts, "-("+strings.Join(as, " OR ")+")")
		}
	}
	return strings.Join(parts, " ")
}

// value is s as an operator's value: bare when it reads back as it is, else quoted.
func value(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == '"' || r == '(' || r == ')' || r == '\\'
	}) {
		return s
	}
	return search.Quote(s)
}

// conditionParts are the query's conditions for c, all of which hold; none when c holds for
// every message.
func conditionParts(c LegacyCondition) []string {
	var out []string
	for _, t := range []struct{ op, text string }{{"from", c.From}, {"to", c.To}, {"cc", c.Cc}, {"subject", c.Subject}} {
		if t.text != "" {
			out = append(out, t.op+":"+value("*"+strings.TrimSpace(t.text)+"*"))
		}
	}
	domain := func(op, d string) string {
		if strings.TrimSpace(d) == "" {
			return never
		}
		return op + ":" + value("@"+d)
	}
	if c.FromDomain != "" {
		out = append(out, domain("from", c.FromDomain))
	}
	if c.ToDomain != "" {
		if strings.Trim(strings.TrimSpace(c.ToDomain), ".") == "" {
			out = append(out, never)
		} else {
			out = append(out, "("+domain("to", c.ToDomain)+" OR "+domain("cc", c.ToDomain)+")")
		}
	}
	flag := func(p *bool, on, off string) {
		if p != nil && *p {
			out = append(out, on)
		} else if p != nil {
			out = append(out, off)
		}
	}
	flag(c.List, "is:list", "-is:list")
	flag(c.HasAttachment, "has:attachment", "-(has:attachment)")
	flag(c.Authenticated, "is:authenticated", "-is:authenticated")
	if c.Larger != nil {
		switch n := *c.Larger; {
		case n < 0: // every size is above it
		case n == 0:
			out = append(out, "-(smaller:1)")
		case n >= maxSize:
			out = append(out, never)
		default:
			out = append(out, "larger:"+strconv.Itoa(n))
		}
	}
	if c.Smaller != nil {
		switch n := *c.Smaller; {
		case n <= 0:
			out = append(out, never)
		case n >= maxSize: // every size is below it
		default:
			out = append(out, "smaller:"+strconv.Itoa(n))
		}
	}
	for _, a := range []struct{ op, v string }{{"before", c.OlderThan}, {"after", c.YoungerThan}} {
		if a.v == "" {
			continue
		}
		// The old rules read an age as the query "before:AGE" and took its before: date (the
		// earliest of its before: operators, the rest ignored); one they could not read
		// matched nothing.
		v := strings.TrimSpace(a.v)
		q, err := search.Parse("before:"+v, time.Now())
		if err != nil || q.Before.IsZero() || len(q.Terms) > 0 {
			out = append(out, never)
			continue
		}
		words := strings.Fields(v)
		befores := []string{"before:" + words[0]}
		for _, w := range words[1:] {
			if b, ok := strings.CutPrefix(strings.TrimPrefix(w, "-"), "before:"); ok || strings.HasPrefix(strings.ToLower(strings.TrimPrefix(w, "-")), "before:") {
				if !ok {
					b = strings.TrimPrefix(w, "-")[len("before:"):]
				}
				befores = append(befores, "before:"+b)
			}
		}
		switch {
		case a.op == "before":
			out = append(out, befores...)
		case len(befores) == 1:
			out = append(out, "after:"+words[0])
		default: // after the earliest of them
			out = append(out, "-("+strings.Join(befores, " ")+")")
		}
	}
	flags := map[string]string{"read": "is:read", "unread": "is:unread", "flagged": "is:flagged", "unflagged": "-is:flagged", "answered": "is:answered", "unanswered": "-is:answered"}
	seen := map[string]bool{}
	for _, f := range c.Flags {
		q, ok := flags[f]
		if !ok || seen[opposite(f)] {
			out = append(out, never) // an unknown state, or read and unread at once
			continue
		}
		if !seen[f] {
			out = append(out, q)
		}
		seen[f] = true
	}
	for _, h := range c.Header {
		name := strings.TrimSpace(h.Name)
		switch {
		case !search.FieldName(name):
			out = append(out, never) // no stored field has such a name
		case strings.TrimSpace(h.Contains) == "":
			out = append(out, "header:"+name)
		default:
			out = append(out, "header:"+name+":"+value(h.Contains))
		}
	}
	for _, w := range c.Body {
		if strings.TrimSpace(w) != "" {
			out = append(out, "body:"+value(w))
		}
	}
	return out
}

func opposite(f string) string {
	if s, ok := strings.CutPrefix(f, "un"); ok {
		return s
	}
	return "un" + f
}

// legacyDigest is digest (server.go) as it was worked out for a rule of the old shape: the
// script pushed before the rewrite still runs that rule on the server.
func legacyDigest(r generated.Rule, m LegacyMatch) string {
	b, _ := json.Marshal(struct {
		Name    string
		Account string
		Match   LegacyMatch
		Actions []generated.RuleAction
		Stop    *bool
	}{r.Name, r.Account, m, r.Actions, r.Stop})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

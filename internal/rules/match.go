package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// Message is what a rule can look at of one stored message. Headers and Text
// are filled only when a rule needs them (NeedsHeaders, NeedsBody): reading
// them costs a query each.
type Message struct {
	Row     *store.Row
	Headers []store.Header
	Text    string
}

// Needs says which parts of a message the rules look at, and so which scopes
// an agent needs to test, propose or approve them.
type Needs struct{ Headers, Body bool }

// NeedsOf is what rule r looks at.
func NeedsOf(r generated.Rule) Needs {
	var n Needs
	each(r.Match, func(c generated.RuleCondition) {
		n.Headers = n.Headers || len(c.Header) > 0
		n.Body = n.Body || len(c.Body) > 0
	})
	return n
}

// Scopes are the scopes beyond read that looking at what r looks at needs.
func (n Needs) Scopes() []string {
	var out []string
	if n.Headers {
		out = append(out, generated.ScopeReadHeaders)
	}
	if n.Body {
		out = append(out, generated.ScopeReadBodies)
	}
	return out
}

// conditionOf is the plain conditions of a match (without its groups).
func conditionOf(m generated.RuleMatch) generated.RuleCondition {
	return generated.RuleCondition{
		From: m.From, To: m.To, Cc: m.Cc, Subject: m.Subject, FromDomain: m.FromDomain, ToDomain: m.ToDomain,
		List: m.List, HasAttachment: m.HasAttachment, Larger: m.Larger, Smaller: m.Smaller,
		OlderThan: m.OlderThan, YoungerThan: m.YoungerThan, Flags: m.Flags, Header: m.Header, Body: m.Body,
		Authenticated: m.Authenticated,
	}
}

// each calls f with the match's own conditions and each member of its groups.
func each(m generated.RuleMatch, f func(generated.RuleCondition)) {
	f(conditionOf(m))
	for _, g := range [][]generated.RuleCondition{m.Any, m.All, m.None} {
		for _, c := range g {
			f(c)
		}
	}
}

// Empty reports whether a match has no condition at all (it would match every message).
func Empty(m generated.RuleMatch) bool {
	empty := true
	each(m, func(c generated.RuleCondition) {
		if !emptyCondition(c) {
			empty = false
		}
	})
	return empty
}

func emptyCondition(c generated.RuleCondition) bool {
	return c.From == "" && c.To == "" && c.Cc == "" && c.Subject == "" && c.FromDomain == "" && c.ToDomain == "" &&
		c.List == nil && c.HasAttachment == nil && c.Larger == nil && c.Smaller == nil && c.OlderThan == "" &&
		c.YoungerThan == "" && len(c.Flags) == 0 && len(c.Header) == 0 && len(c.Body) == 0 && c.Authenticated == nil
}

// Matches reports whether r's match holds for m at time now.
func Matches(r generated.Rule, m *Message, now time.Time) bool {
	if r.Account != "" && m.Row.Account != r.Account {
		return false
	}
	if !holds(conditionOf(r.Match), m, now) {
		return false
	}
	if len(r.Match.Any) > 0 && !slices.ContainsFunc(r.Match.Any, func(c generated.RuleCondition) bool { return holds(c, m, now) }) {
		return false
	}
	for _, c := range r.Match.All {
		if !holds(c, m, now) {
			return false
		}
	}
	for _, c := range r.Match.None {
		if holds(c, m, now) {
			return false
		}
	}
	return true
}

func has(hay, needle string) bool {
	return strings.Contains(strings.ToLower(hay), strings.ToLower(strings.TrimSpace(needle)))
}

func addrHas(as []store.Address, needle string) bool {
	for _, a := range as {
		if has(a.Email, needle) || has(a.Name, needle) {
			return true
		}
	}
	return false
}

func domainOf(email string) string {
	_, d, _ := strings.Cut(strings.ToLower(email), "@")
	return d
}

func inDomain(email, domain string) bool {
	d, want := domainOf(email), strings.ToLower(strings.Trim(strings.TrimSpace(domain), "."))
	return want != "" && (d == want || strings.HasSuffix(d, "."+want))
}

// holds reports whether every condition set in c holds for m; an empty c holds.
func holds(c generated.RuleCondition, m *Message, now time.Time) bool {
	r := m.Row
	if c.From != "" && !addrHas([]store.Address{r.From}, c.From) {
		return false
	}
	if c.To != "" && !addrHas(r.To, c.To) {
		return false
	}
	if c.Cc != "" && !addrHas(r.Cc, c.Cc) {
		return false
	}
	if c.Subject != "" && !has(r.Subject, c.Subject) {
		return false
	}
	if c.FromDomain != "" && !inDomain(r.From.Email, c.FromDomain) {
		return false
	}
	if c.ToDomain != "" && !slices.ContainsFunc(append(slices.Clone(r.To), r.Cc...), func(a store.Address) bool { return inDomain(a.Email, c.ToDomain) }) {
		return false
	}
	if c.List != nil && *c.List != r.List {
		return false
	}
	if c.HasAttachment != nil && *c.HasAttachment != (len(r.Attachments) > 0) {
		return false
	}
	if c.Larger != nil && !(r.Size > int64(*c.Larger)) {
		return false
	}
	if c.Smaller != nil && !(r.Size < int64(*c.Smaller)) {
		return false
	}
	if c.OlderThan != "" {
		t, err := Ago(c.OlderThan, now)
		if err != nil || !r.Date.Before(t) {
			return false
		}
	}
	if c.YoungerThan != "" {
		t, err := Ago(c.YoungerThan, now)
		if err != nil || r.Date.Before(t) {
			return false
		}
	}
	for _, f := range c.Flags {
		if !flagHolds(f, r.Flags) {
			return false
		}
	}
	for _, h := range c.Header {
		if !slices.ContainsFunc(m.Headers, func(got store.Header) bool {
			return strings.EqualFold(got.Name, strings.TrimSpace(h.Name)) && has(got.Value, h.Contains)
		}) {
			return false
		}
	}
	for _, w := range c.Body {
		if !has(m.Text, w) {
			return false
		}
	}
	if c.Authenticated != nil && *c.Authenticated == r.Forged {
		return false
	}
	return true
}

func flagHolds(f string, bits int) bool {
	switch f {
	case "read":
		return bits&store.FlagSeen != 0
	case "unread":
		return bits&store.FlagSeen == 0
	case "flagged":
		return bits&store.FlagFlagged != 0
	case "unflagged":
		return bits&store.FlagFlagged == 0
	case "answered":
		return bits&store.FlagAnswered != 0
	case "unanswered":
		return bits&store.FlagAnswered == 0
	}
	return false
}

// Ago is the time d (7d, 3w, 6m, 1y) before now, read as mail_search reads before:.
func Ago(d string, now time.Time) (time.Time, error) {
	q, err := search.Parse("before:"+strings.TrimSpace(d), now)
	if err != nil || q.Before.IsZero() || len(q.Terms) > 0 {
		return time.Time{}, fmt.Errorf("%q is not an age; write 7d, 3w, 6m or 1y", d)
	}
	return q.Before, nil
}

// Applied is a rule that runs on a message, with its actions.
type Applied struct {
	Rule    string
	Actions []generated.RuleAction
}

// Evaluate runs the enabled rules over m in order: every rule that matches
// runs, until one that matches says stop.
func Evaluate(rules []generated.Rule, m *Message, now time.Time) []Applied {
	var out []Applied
	for _, r := range rules {
		if r.State != Enabled || !Matches(r, m, now) {
			continue
		}
		out = append(out, Applied{Rule: r.Name, Actions: r.Actions})
		if r.Stop != nil && *r.Stop {
			break
		}
	}
	return out
}

// Needed is what the enabled rules together look at.
func Needed(rules []generated.Rule) Needs {
	var n Needs
	for _, r := range rules {
		if r.State == Enabled {
			x := NeedsOf(r)
			n.Headers, n.Body = n.Headers || x.Headers, n.Body || x.Body
		}
	}
	return n
}

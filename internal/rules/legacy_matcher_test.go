package rules

import (
	"slices"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// The matcher of the old shape, as it ran before a match became a query: kept here only to
// show that each old match, rewritten (Convert), matches exactly the same messages.

// legacyMessage is what an old rule looked at of one stored message.
type legacyMessage struct {
	Row     *store.Row
	Headers []store.Header
	Text    string
}

func legacyMatches(account string, m LegacyMatch, msg *legacyMessage, now time.Time) bool {
	if account != "" && msg.Row.Account != account {
		return false
	}
	if !legacyHolds(m.LegacyCondition, msg, now) {
		return false
	}
	if len(m.Any) > 0 && !slices.ContainsFunc(m.Any, func(c LegacyCondition) bool { return legacyHolds(c, msg, now) }) {
		return false
	}
	for _, c := range m.All {
		if !legacyHolds(c, msg, now) {
			return false
		}
	}
	for _, c := range m.None {
		if legacyHolds(c, msg, now) {
			return false
		}
	}
	return true
}

func oldHas(hay, needle string) bool {
	return strings.Contains(strings.ToLower(hay), strings.ToLower(strings.TrimSpace(needle)))
}

func oldAddrHas(as []store.Address, needle string) bool {
	for _, a := range as {
		if oldHas(a.Email, needle) || oldHas(a.Name, needle) {
			return true
		}
	}
	return false
}

func oldInDomain(email, domain string) bool {
	_, d, _ := strings.Cut(strings.ToLower(email), "@")
	want := strings.ToLower(strings.Trim(strings.TrimSpace(domain), "."))
	return want != "" && (d == want || strings.HasSuffix(d, "."+want))
}

func oldAgo(d string, now time.Time) (time.Time, bool) {
	q, err := search.Parse("before:"+strings.TrimSpace(d), now)
	if err != nil || q.Before.IsZero() || len(q.Terms) > 0 {
		return time.Time{}, false
	}
	return q.Before, true
}

func legacyHolds(c LegacyCondition, m *legacyMessage, now time.Time) bool {
	r := m.Row
	if c.From != "" && !oldAddrHas([]store.Address{r.From}, c.From) {
		return false
	}
	if c.To != "" && !oldAddrHas(r.To, c.To) {
		return false
	}
	if c.Cc != "" && !oldAddrHas(r.Cc, c.Cc) {
		return false
	}
	if c.Subject != "" && !oldHas(r.Subject, c.Subject) {
		return false
	}
	if c.FromDomain != "" && !oldInDomain(r.From.Email, c.FromDomain) {
		return false
	}
	if c.ToDomain != "" && !slices.ContainsFunc(append(slices.Clone(r.To), r.Cc...), func(a store.Address) bool { return oldInDomain(a.Email, c.ToDomain) }) {
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
		t, ok := oldAgo(c.OlderThan, now)
		if !ok || !r.Date.Before(t) {
			return false
		}
	}
	if c.YoungerThan != "" {
		t, ok := oldAgo(c.YoungerThan, now)
		if !ok || r.Date.Before(t) {
			return false
		}
	}
	for _, f := range c.Flags {
		if !oldFlagHolds(f, r.Flags) {
			return false
		}
	}
	for _, h := range c.Header {
		if !slices.ContainsFunc(m.Headers, func(got store.Header) bool {
			return strings.EqualFold(got.Name, strings.TrimSpace(h.Name)) && oldHas(got.Value, h.Contains)
		}) {
			return false
		}
	}
	for _, w := range c.Body {
		if !oldHas(m.Text, w) {
			return false
		}
	}
	if c.Authenticated != nil && *c.Authenticated == r.Forged {
		return false
	}
	return true
}

func oldFlagHolds(f string, bits int) bool {
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

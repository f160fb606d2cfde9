package rules

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// A rule's match is a query in mail_search's language (internal/search). The store runs it
// (store.Filter), as mail_search does, so that a rule matches at each sync exactly what
// rules_test and a search with the same words show.

// Needs says which parts of a message the rules look at, and so which scopes
// an agent needs to test, propose or approve them.
type Needs struct{ Headers, Body bool }

// Query is r's match read at now (relative dates such as before:30d count back from it).
func Query(r generated.Rule, now time.Time) (*search.Query, error) {
	q, err := search.Parse(r.Match, now)
	if err != nil {
		return nil, fmt.Errorf("its match %q cannot be read: %v", r.Match, err)
	}
	return q, nil
}

// NeedsOf is what rule r looks at; a match that cannot be read looks at nothing.
func NeedsOf(r generated.Rule) Needs {
	q, err := search.Parse(r.Match, time.Time{})
	if err != nil {
		return Needs{}
	}
	h, b := q.Needs()
	return Needs{Headers: h, Body: b}
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

// Filter selects what r matches, q being its match read: within base's accounts, folder
// and hiding, and only r's account when it names one. A rule's words are looked for in the
// subject and the addresses only, never in bodies (body: is for that), whatever the grant:
// a rule matches the same at every sync.
func Filter(r generated.Rule, q *search.Query, base store.Filter) *store.Filter {
	f := base
	f.Query, f.Bodies, f.Threads, f.Before, f.Limit = q, false, false, 0, 0
	if r.Account != "" {
		if f.Accounts == nil || slices.Contains(f.Accounts, r.Account) {
			f.Accounts = []string{r.Account}
		} else {
			f.Accounts = []string{}
		}
	}
	return &f
}

// Matching returns the ids r matches among ids, or among every message base selects when
// ids is nil.
func Matching(ctx context.Context, st *store.Store, r generated.Rule, base store.Filter, ids []int64, now time.Time) (map[int64]bool, error) {
	q, err := Query(r, now)
	if err != nil {
		return nil, fmt.Errorf("rule %s: %w", r.Name, err)
	}
	var got []int64
	if ids == nil {
		got, err = st.IDs(ctx, Filter(r, q, base))
	} else {
		got, err = st.MatchingIDs(ctx, Filter(r, q, base), ids)
	}
	if err != nil {
		return nil, err
	}
	set := make(map[int64]bool, len(got))
	for _, id := range got {
		set[id] = true
	}
	return set, nil
}

// Sets is, for each of rs, the ids it matches among ids (nil: every message base selects).
func Sets(ctx context.Context, st *store.Store, rs []generated.Rule, base store.Filter, ids []int64, now time.Time) ([]map[int64]bool, error) {
	out := make([]map[int64]bool, len(rs))
	for i, r := range rs {
		set, err := Matching(ctx, st, r, base, ids, now)
		if err != nil {
			return nil, err
		}
		out[i] = set
	}
	return out, nil
}

// Applied is a rule that runs on a message, with its actions.
type Applied struct {
	Rule    string
	Actions []generated.RuleAction
}

// Evaluate runs the enabled rules of rs over message id, sets[i] being what rs[i] matches
// (Sets): every rule that matches runs, in order, until one that matches says stop.
func Evaluate(rs []generated.Rule, sets []map[int64]bool, id int64) []Applied {
	var out []Applied
	for i, r := range rs {
		if r.State != Enabled || !sets[i][id] {
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

package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"modernc.org/sqlite"

	"github.com/postern-mcp/postern/internal/search"
)

// The conditions of the search language that are not words (search.Match, is:list,
// is:authenticated) are compiled here. Text anywhere (header:, list:, body:, *text*) and
// domains are decided by Go functions the store registers with SQLite, so that they fold case
// as Go does (SQLite's lower() folds only ASCII) and read addresses as Row does:
//
//	postern_has(text, needle)          needle (trimmed) is in text, case ignored
//	postern_addrs_has(list, needle)    one address of a stored list has needle in its address or name
//	postern_domain(list, domain)       one address of a stored list is at domain or below it
//	postern_header(headers, name, t)   a stored header field called name holds t (NULL: is there)

func init() {
	for _, f := range []struct {
		name string
		n    int32
		fn   func(args []driver.Value) bool
	}{
		{"postern_has", 2, func(a []driver.Value) bool { return Has(text(a[0]), text(a[1])) }},
		{"postern_addrs_has", 2, func(a []driver.Value) bool {
			return slices.ContainsFunc(splitAddrs(text(a[0])), func(x Address) bool { return AddressHas(x, text(a[1])) })
		}},
		{"postern_domain", 2, func(a []driver.Value) bool {
			return slices.ContainsFunc(splitAddrs(text(a[0])), func(x Address) bool { return InDomain(x.Email, text(a[1])) })
		}},
		{"postern_header", 3, func(a []driver.Value) bool {
			var hs []Header
			if json.Unmarshal([]byte(text(a[0])), &hs) != nil {
				return false
			}
			name := strings.TrimSpace(text(a[1]))
			return slices.ContainsFunc(hs, func(h Header) bool {
				return strings.EqualFold(h.Name, name) && (a[2] == nil || Has(h.Value, text(a[2])))
			})
		}},
	} {
		fn := f.fn
		err := sqlite.RegisterDeterministicScalarFunction(f.name, f.n, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			if fn(args) {
				return int64(1), nil
			}
			return int64(0), nil
		})
		if err != nil {
			panic(err)
		}
	}
}

func text(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// Has reports whether needle, trimmed, is in hay, case ignored: what *text*, header:, list:
// and body: mean.
func Has(hay, needle string) bool {
	return strings.Contains(strings.ToLower(hay), strings.ToLower(strings.TrimSpace(needle)))
}

// AddressHas reports whether a's address or name holds needle (Has).
func AddressHas(a Address, needle string) bool { return Has(a.Email, needle) || Has(a.Name, needle) }

// InDomain reports whether email's domain (after its first @) is domain or below it, case
// ignored; a domain of dots and spaces alone names none.
func InDomain(email, domain string) bool {
	_, d, _ := strings.Cut(strings.ToLower(email), "@")
	want := strings.ToLower(strings.Trim(strings.TrimSpace(domain), "."))
	return want != "" && (d == want || strings.HasSuffix(d, "."+want))
}

// matchConds are the SQL conditions of q's Matches and of is:list and is:authenticated.
func matchConds(q *search.Query, args *[]any) []string {
	var conds []string
	if q.List != nil {
		conds = append(conds, map[bool]string{true: "m.list != 0", false: "m.list = 0"}[*q.List])
	}
	if q.Authenticated != nil {
		conds = append(conds, map[bool]string{true: "m.forged = 0", false: "m.forged != 0"}[*q.Authenticated])
	}
	for _, m := range q.Matches {
		var c string
		switch {
		case m.Kind == search.Domain && m.Field == "from":
			c = "postern_domain(m.from_email, ?)"
			*args = append(*args, m.Text)
		case m.Kind == search.Domain:
			c = "postern_domain(m." + m.Field + "_list, ?)"
			*args = append(*args, m.Text)
		case m.Field == "from":
			c = "(postern_has(m.from_email, ?) OR postern_has(m.from_name, ?))"
			*args = append(*args, m.Text, m.Text)
		case m.Field == "to" || m.Field == "cc":
			c = "postern_addrs_has(m." + m.Field + "_list, ?)"
			*args = append(*args, m.Text)
		case m.Field == "subject":
			c = "postern_has(m.subject, ?)"
			*args = append(*args, m.Text)
		case m.Field == "body":
			c = "EXISTS (SELECT 1 FROM bodies b WHERE b.id = m.id AND postern_has(b.text, ?))"
			*args = append(*args, m.Text)
		case m.Field == "header":
			var t any // NULL: the field is there
			if m.Kind != search.Exists {
				t = m.Text
			}
			c = "EXISTS (SELECT 1 FROM bodies b WHERE b.id = m.id AND postern_header(b.headers, ?, ?))"
			*args = append(*args, m.Name, t)
		default:
			c = "0" // no such condition: the parser makes none
		}
		if m.Negated {
			c = "NOT " + c
		}
		conds = append(conds, c)
	}
	return conds
}

// MatchingIDs returns those of ids that f matches (its cursor and limit aside), newest first.
func (s *Store) MatchingIDs(ctx context.Context, f *Filter, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	lo, hi := slices.Min(ids), slices.Max(ids)
	list, _ := json.Marshal(ids)
	return s.ids(ctx, f, &window{lo: lo, hi: hi, ids: string(list), skip: -1})
}

// IDs returns the ids of every message f matches (its cursor and limit aside), newest first.
func (s *Store) IDs(ctx context.Context, f *Filter) ([]int64, error) { return s.ids(ctx, f, nil) }

func (s *Store) ids(ctx context.Context, f *Filter, win *window) ([]int64, error) {
	f, err := s.resolveFolders(ctx, f)
	if err != nil {
		return nil, err
	}
	g := *s.expandPrefixes(ctx, f)
	g.Before, g.Threads = 0, false
	where, args, err := g.whereIn(win)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.id`+fromJoins+where+` ORDER BY m.id DESC`, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, s.explain(err)
		}
		out = append(out, id)
	}
	return out, s.explain(rows.Err())
}

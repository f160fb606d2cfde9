package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/search"
)

// How a folder name an agent writes finds a folder of an account, first rule
// that gives an answer:
//
//  1. the name exactly, or exactly as postern shows it (cleaned as
//     clean.Line and masked as mask.Line: a name holding control characters
//     is shown without them); a name that showing masks answers only as it is
//     shown (NameForms), never to the secret it holds; INBOX in any case, as
//     IMAP has it;
//  2. the same without regard to case, / and . both being the hierarchy
//     separator (in:work/projects finds Work.Projects).
//
// Several folders of one account answering the same rule is an error naming
// them, as is a name no folder of the accounts searched answers to (naming
// the nearest ones, search.Nearest). Each account is looked in on its own:
// in:Newsletters is Newsletters in one account and newsletters in another.

// FolderError is a folder name that answers to no folder of the accounts
// searched, or to several folders of one account.
type FolderError struct {
	Name      string   // as written
	Accounts  []string // the accounts looked in
	Nearest   []string // the nearest folders, as shown (with the account when several were looked in)
	Ambiguous []string // the folders the name answers to, when several
	Empty     bool     // the accounts looked in have no folder stored yet
	Unsynced  []string // the accounts looked in whose first sync has not finished
}

func (e *FolderError) Error() string {
	name := clean.Line(e.Name)
	if len(e.Ambiguous) > 0 {
		return fmt.Sprintf("the folder name %q fits several folders of account %s: %s; write it exactly as one of them",
			name, e.Accounts[0], strings.Join(e.Ambiguous, ", "))
	}
	where := "in account " + strings.Join(e.Accounts, "")
	if len(e.Accounts) > 1 {
		where = "in accounts " + strings.Join(e.Accounts, ", ")
	}
	switch {
	case e.Empty:
		return fmt.Sprintf("no folder %q %s: no folder is stored yet; run postern sync (or %s) first", name, where, generated.ToolMailSync)
	case len(e.Unsynced) > 0:
		// The folder may still come: say so rather than send the agent looking for another.
		msg := fmt.Sprintf("no folder %q %s yet: the first sync of %s has not finished, so it may still come; try again when postern sync ends", name, where, strings.Join(e.Unsynced, ", "))
		if len(e.Nearest) > 0 {
			msg += "; the nearest so far: " + strings.Join(e.Nearest, ", ")
		}
		return msg
	case len(e.Nearest) > 0:
		return fmt.Sprintf("no folder %q %s; the nearest: %s", name, where, strings.Join(e.Nearest, ", "))
	}
	return fmt.Sprintf("no folder %q %s; %s lists the folders", name, where, generated.ToolMailFolders)
}

// folderKey is a folder name compared without regard to case, with / and .
// the same separator.
func folderKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' {
			return '/'
		}
		return r
	}, strings.ToLower(s))
}

type storedFolder struct {
	id      int64
	account string
	name    string
	forms   []string // NameForms of the name
}

// answers reports whether the folder answers to name by rule 1 (exact) or,
// when loose, by rule 2.
func (sf *storedFolder) answers(name string, loose bool) bool {
	for _, f := range sf.forms {
		if f == name || strings.EqualFold(f, "INBOX") && strings.EqualFold(name, "INBOX") {
			return true
		}
		if loose && folderKey(f) == folderKey(name) {
			return true
		}
	}
	return false
}

// resolveFolders finds the folder ids of every folder name of f (its Folder
// and every in: of its query) among the accounts f may search: its Accounts,
// narrowed by the query's own account: operators when it has some. When no
// account is left to search, every name names no folder: the search matches
// nothing, as it would without the name.
func (s *Store) resolveFolders(ctx context.Context, f *Filter) (*Filter, error) {
	var names []string
	if f.Folder != "" {
		names = append(names, f.Folder)
	}
	if f.Query != nil {
		f.Query.Walk(func(q *search.Query) { names = append(names, q.Folders...) })
	}
	if len(names) == 0 {
		return f, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT f.id, a.name, f.name FROM folders f JOIN accounts a ON a.id = f.account_id ORDER BY a.name, f.name`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	byAccount := map[string][]*storedFolder{}
	var accounts []string
	for rows.Next() {
		sf := &storedFolder{}
		if err := rows.Scan(&sf.id, &sf.account, &sf.name); err != nil {
			return nil, s.explain(err)
		}
		if f.Accounts != nil && !slices.Contains(f.Accounts, sf.account) {
			continue
		}
		if f.Query != nil && len(f.Query.Accounts) > 0 && !slices.Contains(f.Query.Accounts, sf.account) {
			continue
		}
		sf.forms = NameForms(sf.name)
		if _, ok := byAccount[sf.account]; !ok {
			accounts = append(accounts, sf.account)
		}
		byAccount[sf.account] = append(byAccount[sf.account], sf)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	// The accounts searched that have no folder yet count for the error too.
	searched := slices.Clone(accounts)
	for _, a := range f.Accounts {
		if f.Query != nil && len(f.Query.Accounts) > 0 && !slices.Contains(f.Query.Accounts, a) {
			continue
		}
		if !slices.Contains(searched, a) {
			searched = append(searched, a)
		}
	}
	sort.Strings(searched)
	g := *f
	g.folders = map[string][]int64{}
	var err2 error
	for _, name := range names {
		if _, done := g.folders[name]; done {
			continue
		}
		var ids []int64
		for _, a := range accounts {
			var found []*storedFolder
			for _, loose := range []bool{false, true} {
				for _, sf := range byAccount[a] {
					if sf.answers(name, loose) {
						found = append(found, sf)
					}
				}
				if len(found) > 0 {
					break
				}
			}
			if len(found) > 1 {
				e := &FolderError{Name: name, Accounts: []string{a}}
				for _, sf := range found {
					e.Ambiguous = append(e.Ambiguous, mask.Line(sf.name))
				}
				return nil, e
			}
			if len(found) == 1 {
				ids = append(ids, found[0].id)
			}
		}
		if len(ids) == 0 && len(searched) > 0 {
			err := nearestFolders(name, searched, accounts, byAccount)
			if err.Unsynced, err2 = s.unsynced(ctx, searched); err2 != nil {
				return nil, err2
			}
			return nil, err
		}
		g.folders[name] = ids
	}
	return &g, nil
}

// unsynced are those of accounts that have never finished a sync.
func (s *Store) unsynced(ctx context.Context, accounts []string) ([]string, error) {
	var out []string
	for _, a := range accounts {
		var last *int64
		err := s.db.QueryRowContext(ctx, `SELECT last_sync FROM accounts WHERE name = ?`, a).Scan(&last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, s.explain(err)
		}
		if last == nil || *last == 0 {
			out = append(out, a)
		}
	}
	return out, nil
}

// nearestFolders is the error for a name no folder answers to.
func nearestFolders(name string, searched, withFolders []string, byAccount map[string][]*storedFolder) *FolderError {
	e := &FolderError{Name: name, Accounts: searched, Empty: len(withFolders) == 0}
	var shown []string
	owner := map[string][]string{}
	for _, a := range withFolders {
		for _, sf := range byAccount[a] {
			n := mask.Line(sf.name) // the nearest as shown: a secret in a name is no measure
			if !slices.Contains(owner[n], a) {
				owner[n] = append(owner[n], a)
			}
			shown = append(shown, n)
		}
	}
	for _, n := range search.Nearest(mask.Line(name), shown) {
		if len(searched) > 1 {
			n += " (" + strings.Join(owner[n], ", ") + ")"
		}
		e.Nearest = append(e.Nearest, n)
	}
	return e
}

package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store/fts"
)

// Row is a message as the read tools show it.
type Row struct {
	ID          int64
	Account     string
	Folder      string
	UID         uint32
	MessageID   string
	InReplyTo   string
	ThreadID    int64
	Date        time.Time
	Subject     string
	From        Address
	To, Cc      []Address
	Flags       int
	Size        int64
	Attachments []Attachment
	// ThreadSize is the number of messages of the whole thread, in every folder of its
	// account (thread listings only).
	ThreadSize int
	Forged     bool
	Withheld   string
	// List: it comes from a mailing list; OneClick: it offers an RFC 8058 one-click
	// unsubscribe (its URIs: Store.Unsubscribe).
	List, OneClick bool
	// Invitation: InvitationRequest or InvitationCancel when it carries an iTIP invitation
	// for the event InvitationUID (invite.go); "" when not.
	Invitation, InvitationUID string
}

// Filter selects messages. Accounts limits every query to the accounts a
// connection may see; nil means all.
type Filter struct {
	Accounts      []string
	Folder        string // a folder name, found as in: finds it (folder.go); "" for all
	Query         *search.Query
	Bodies        bool // text terms also search body text (read:bodies granted)
	Unread        *bool
	Flagged       *bool
	HasAttachment bool
	Threads       bool  // one row per thread (across folders): its newest match
	Before        int64 // cursor: only ids below this; 0 for none
	Limit         int
	// Hide leaves out what the person's projects keep from agents (projects.go); nil for nothing.
	Hide *Hide

	exprs   map[exprKey]string // per index, a term's expression when its prefix was expanded ("": no word)
	folders map[string][]int64 // per folder name written, the ids of the folders it names (resolveFolders)
}

// exprKey names one term of the query in one index.
type exprKey struct {
	table string
	term  int
}

const rowColumns = `m.id, a.name, f.name, m.uid, m.message_id, m.in_reply_to, m.thread_id, m.date, m.subject, m.from_name, m.from_email, m.to_list, m.cc_list, m.flags, m.size, m.attachments, m.forged, m.withheld, m.list, m.one_click, m.invitation, m.invitation_uid`

func scanRow(sc interface{ Scan(...any) error }) (*Row, error) {
	r := &Row{}
	var date int64
	var to, cc, atts string
	if err := sc.Scan(&r.ID, &r.Account, &r.Folder, &r.UID, &r.MessageID, &r.InReplyTo, &r.ThreadID, &date, &r.Subject,
		&r.From.Name, &r.From.Email, &to, &cc, &r.Flags, &r.Size, &atts, &r.Forged, &r.Withheld, &r.List, &r.OneClick, &r.Invitation, &r.InvitationUID); err != nil {
		return nil, err
	}
	r.Date = time.Unix(date, 0).UTC()
	r.To, r.Cc = splitAddrs(to), splitAddrs(cc)
	if atts != "" {
		json.Unmarshal([]byte(atts), &r.Attachments)
	}
	return r, nil
}

// where builds the WHERE clause of f.
func (f *Filter) where() (string, []any, error) { return f.whereIn(nil) }

// window limits a search to the ids lo..hi, and to the candidate ids listed
// in ids (a JSON array) when it is set. Each text condition then reads only
// that stretch of its index.
type window struct {
	lo, hi int64
	ids    string
	skip   int // the query term the candidate ids already satisfy; -1 for none
}

// whereIn is where, limited to win when it is not nil.
func (f *Filter) whereIn(win *window) (string, []any, error) {
	var conds []string
	var args []any
	ftsRange := ""
	if win != nil {
		// With a list of candidates, the list alone drives: a range on m.id
		// would let SQLite walk every message of the window instead.
		if win.ids != "" {
			conds = append(conds, "m.id IN (SELECT value FROM json_each(?))")
			args = append(args, win.ids)
		} else {
			conds = append(conds, "m.id BETWEEN ? AND ?")
			args = append(args, win.lo, win.hi)
		}
		ftsRange = fmt.Sprintf(" AND rowid BETWEEN %d AND %d", win.lo, win.hi)
	}
	if f.Accounts != nil {
		if len(f.Accounts) == 0 {
			conds = append(conds, "0")
		} else {
			conds = append(conds, "a.name IN ("+fts.Placeholders(len(f.Accounts))+")")
			for _, a := range f.Accounts {
				args = append(args, a)
			}
		}
	}
	if f.Folder != "" {
		conds = append(conds, f.folderCond(f.Folder, &args))
	}
	if f.Hide != nil {
		conds = append(conds, f.Hide.cond(&args))
	}
	addFlag(&conds, f.Unread, FlagSeen, true)
	addFlag(&conds, f.Flagged, FlagFlagged, false)
	if f.HasAttachment {
		conds = append(conds, "m.attachments != ''")
	}
	if q := f.Query; q != nil {
		conds = append(conds, f.queryConds(q, true, win, ftsRange, &args)...)
	}
	if f.Before > 0 {
		conds = append(conds, "m.id < ?")
		args = append(args, f.Before)
	}
	if len(conds) == 0 {
		return "", args, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// addFlag adds the condition that flag bit is set (or, inverted, not set) as
// *p says, when p is not nil.
func addFlag(conds *[]string, p *bool, bit int, invert bool) {
	if p == nil {
		return
	}
	want := *p
	if invert {
		want = !want
	}
	if want {
		*conds = append(*conds, fmt.Sprintf("m.flags & %d != 0", bit))
	} else {
		*conds = append(*conds, fmt.Sprintf("m.flags & %d = 0", bit))
	}
}

// queryConds are the conditions of the conjunction q, all of which a match
// meets. top is true for the query itself, whose terms may have expanded
// prefixes (exprs) and one of which the window's candidates may already
// satisfy; a group's terms are given to FTS5 as written.
func (f *Filter) queryConds(q *search.Query, top bool, win *window, ftsRange string, args *[]any) []string {
	var conds []string
	if len(q.Folders) > 0 {
		var ors []string
		for _, name := range q.Folders {
			ors = append(ors, f.folderCond(name, args))
		}
		conds = append(conds, "("+strings.Join(ors, " OR ")+")")
	}
	if len(q.Accounts) > 0 {
		conds = append(conds, "a.name IN ("+fts.Placeholders(len(q.Accounts))+")")
		for _, a := range q.Accounts {
			*args = append(*args, a)
		}
	}
	addFlag(&conds, q.Unread, FlagSeen, true)
	addFlag(&conds, q.Flagged, FlagFlagged, false)
	addFlag(&conds, q.Answered, FlagAnswered, false)
	if q.HasAttachment {
		conds = append(conds, "m.attachments != ''")
	}
	if !q.After.IsZero() {
		conds = append(conds, "m.date >= ?")
		*args = append(*args, q.After.Unix())
	}
	if !q.Before.IsZero() {
		conds = append(conds, "m.date < ?")
		*args = append(*args, q.Before.Unix())
	}
	if q.Larger > 0 {
		conds = append(conds, "m.size > ?")
		*args = append(*args, q.Larger)
	}
	if q.Smaller != nil {
		conds = append(conds, "m.size < ?")
		*args = append(*args, *q.Smaller)
	}
	conds = append(conds, matchConds(q, args)...)
	for i, t := range q.Terms {
		if top && win != nil && i == win.skip {
			continue
		}
		var ors []string
		for _, table := range f.tablesFor(t) {
			expr := fts.Expr(t)
			if top {
				expr = f.exprFor(table, i, t)
			} else {
				expr = f.columnsFor(table, t, expr)
			}
			if expr != "" {
				ors = append(ors, "m.id IN (SELECT rowid FROM "+table+" WHERE "+table+" MATCH ?"+ftsRange+")")
				*args = append(*args, expr)
			}
		}
		switch {
		case len(ors) == 0 && !t.Negated:
			conds = append(conds, "0") // a term no index can hold matches nothing
		case len(ors) == 0:
		case t.Negated:
			conds = append(conds, "NOT ("+strings.Join(ors, " OR ")+")")
		default:
			conds = append(conds, "("+strings.Join(ors, " OR ")+")")
		}
	}
	for _, g := range q.Groups {
		alts := make([]string, 0, len(g.Alts))
		for _, a := range g.Alts {
			c := f.queryConds(a, false, win, ftsRange, args)
			if len(c) == 0 {
				c = []string{"1"}
			}
			alts = append(alts, "("+strings.Join(c, " AND ")+")")
		}
		cond := "(" + strings.Join(alts, " OR ") + ")"
		if g.Negated {
			cond = "NOT " + cond
		}
		conds = append(conds, cond)
	}
	return conds
}

// folderCond matches the folders name was resolved to (resolveFolders), or
// by name when it was not resolved; INBOX matches in any case, as IMAP says.
func (f *Filter) folderCond(name string, args *[]any) string {
	if ids, ok := f.folders[name]; ok {
		if len(ids) == 0 {
			return "0"
		}
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = strconv.FormatInt(id, 10)
		}
		return "m.folder_id IN (" + strings.Join(parts, ",") + ")"
	}
	*args = append(*args, name, name)
	return "(f.name = ? OR (upper(f.name) = 'INBOX' AND upper(?) = 'INBOX'))"
}

// Words splits text the way the index does: runs of letters and digits, lower-cased.
func Words(s string) []string { return fts.Words(s) }

// tablesFor lists the indexes a term is looked for in: the metadata always,
// the bodies for a term without a field when bodies may be searched.
func (f *Filter) tablesFor(t search.Term) []string {
	if t.Field == "" && f.Bodies {
		return []string{"meta_fts", "body_fts"}
	}
	return []string{"meta_fts"}
}

// exprFor is term i's expression in table: its expanded prefix when
// expandPrefixes found one, else ftsExpr.
//
// Without read:bodies a word without a field is not looked for in attachment names: the names
// are shown only with read:bodies (mail_attachments, mail_show), and a search must not tell
// what a tool would not show (generated/docs/scopes.md states the rule).
func (f *Filter) exprFor(table string, i int, t search.Term) string {
	e, ok := f.exprs[exprKey{table, i}]
	if !ok {
		e = fts.Expr(t)
	}
	return f.columnsFor(table, t, e)
}

// columnsFor limits expression e of term t in table to the columns f may search.
func (f *Filter) columnsFor(table string, t search.Term, e string) string {
	if table == "meta_fts" && t.Field == "" && !f.Bodies && e != "" {
		e = "{" + metaColumnsWithoutAttachments + "} : " + e
	}
	return e
}

// metaColumnsWithoutAttachments are the columns of meta_fts a search without read:bodies reads.
const metaColumnsWithoutAttachments = "subject from_addr to_addr cc_addr"

// maxExpansion is the most words a prefix is expanded to; a prefix starting
// more words is left to FTS5.
const maxExpansion = 32

// expandPrefixes turns each prefix term of f's query whose last word is plain
// ASCII into the words of each index that it starts, as an OR of whole-word
// phrases. FTS5 answers a prefix by gathering the documents of every word it
// starts before it returns the first (about 3 ms for a common prefix at
// 100,000 messages, whatever the limit or the ids asked for), while whole words
// are read lazily, newest first, and only over the ids asked for. The words
// come from the fts5vocab tables, one seek per word. Non-ASCII prefixes are
// left to FTS5, whose tokenizer folds them (é → e) in ways this would have to copy.
func (s *Store) expandPrefixes(ctx context.Context, f *Filter) *Filter {
	if f.Query == nil {
		return f
	}
	g := *f
	for i, t := range f.Query.Terms {
		words := Words(t.Text)
		if !t.Prefix || len(words) == 0 || !fts.PlainWord(words[len(words)-1]) {
			continue
		}
		last := words[len(words)-1]
		for _, table := range f.tablesFor(t) {
			completions, ok := s.completions(ctx, strings.TrimSuffix(table, "_fts")+"_terms", last)
			if !ok {
				continue
			}
			var alts []string
			for _, c := range completions {
				alts = append(alts, `"`+strings.Join(append(slices.Clone(words[:len(words)-1]), c), " ")+`"`)
			}
			expr := ""
			if len(alts) > 0 {
				expr = "(" + strings.Join(alts, " OR ") + ")"
				if col := fts.Column[t.Field]; col != "" {
					expr = "{" + col + "} : " + expr
				}
			}
			if g.exprs == nil {
				g.exprs = map[exprKey]string{}
			}
			g.exprs[exprKey{table, i}] = expr
		}
	}
	return &g
}

// completions lists the words of a vocabulary table that start with prefix,
// and false when there are more than maxExpansion or the table cannot be read
// (FTS5 then answers the prefix itself, only slower).
func (s *Store) completions(ctx context.Context, vocab, prefix string) ([]string, bool) {
	var out []string
	from := prefix
	for {
		var term string
		err := s.db.QueryRowContext(ctx, `SELECT term FROM `+vocab+` WHERE term >= ? LIMIT 1`, from).Scan(&term)
		if errors.Is(err, sql.ErrNoRows) || err == nil && !strings.HasPrefix(term, prefix) {
			return out, true
		}
		if err != nil || len(out) == maxExpansion {
			return nil, false
		}
		out = append(out, term)
		from = term + "\x01" // the first word after term: no word holds a control character
	}
}

const fromJoins = ` FROM messages m JOIN folders f ON f.id = m.folder_id JOIN accounts a ON a.id = m.account_id`

// Messages returns up to f.Limit messages, newest first, and whether more follow.
//
// A search with a word that every match must hold is driven by that word's
// index, which lists messages newest first: the newest K messages holding it
// are the candidates, checked against the whole filter; when fewer than the
// page pass and the word has older matches, K grows by what the pass rate
// says a page needs and the check runs again. A rare word is thus answered from its few messages, and a
// common one from the newest stretch of mail, never by reading every message.
// Of several such words the one whose K-th newest match is oldest drives.
func (s *Store) Messages(ctx context.Context, f *Filter) ([]*Row, bool, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	f, err := s.resolveFolders(ctx, f)
	if err != nil {
		return nil, false, err
	}
	f = s.expandPrefixes(ctx, f)
	if f.Threads || f.Query == nil {
		return s.messagesIn(ctx, f, nil, limit)
	}
	// The words that can drive: not negated, and holding a word. A whole word
	// (or a prefix expanded to whole words) is read from its index newest
	// first and stops at K; a prefix left to FTS5 makes the index gather every
	// word it starts first, so it drives only when nothing else can.
	var drivers []int
	for i, t := range f.Query.Terms {
		if !t.Negated && fts.Expr(t) != "" {
			drivers = append(drivers, i)
		}
	}
	lazy := func(i int) bool {
		if !f.Query.Terms[i].Prefix {
			return true
		}
		_, expanded := f.exprs[exprKey{"meta_fts", i}]
		return expanded
	}
	if whole := slices.DeleteFunc(slices.Clone(drivers), func(i int) bool { return !lazy(i) }); len(whole) > 0 {
		drivers = whole
	}
	if len(drivers) == 0 {
		return s.messagesIn(ctx, f, nil, limit)
	}
	// Ids are date keys (keyFor), so after: and before: bound them too.
	lo, hi := int64(0), int64(math.MaxInt64)
	if f.Before > 0 {
		hi = f.Before - 1
	}
	if a := f.Query.After; !a.IsZero() && a.Unix() > 0 {
		lo = keyFor(a)
	}
	if b := f.Query.Before; !b.IsZero() && b.Unix() > 0 {
		hi = min(hi, keyFor(b)-1)
	}
	if lo > hi {
		return nil, false, nil
	}
	// K starts at twice the page, or eight times when other conditions will
	// turn candidates away: a second round costs more than a larger first.
	k := 2 * (limit + 1)
	if narrows(f) {
		k = 8 * (limit + 1)
	}
	driver := -1
	var cands []int64
	done := false
	for _, i := range drivers {
		c, all, err := s.newestMatches(ctx, f, i, lo, hi, k)
		if err != nil {
			return nil, false, err
		}
		if len(c) == 0 {
			return nil, false, nil // a word every match needs is in no message
		}
		if driver < 0 || all && !done || !done && c[len(c)-1] < cands[len(cands)-1] {
			driver, cands, done = i, c, all
		}
	}
	for {
		ids, _ := json.Marshal(cands)
		rows, more, err := s.messagesIn(ctx, f, &window{lo: cands[len(cands)-1], hi: hi, ids: string(ids), skip: driver}, limit)
		if err != nil || more || done {
			return rows, more, err
		}
		// Too few passed: widen K by what the pass rate says a page needs,
		// with a margin, at least fourfold when none passed.
		if len(rows) == 0 {
			k *= 8
		} else {
			k = max(2*k, k*(limit+1)*3/(2*len(rows)))
		}
		if cands, done, err = s.newestMatches(ctx, f, driver, lo, hi, k); err != nil {
			return nil, false, err
		}
	}
}

// narrows reports whether f has conditions besides one word of its query.
func narrows(f *Filter) bool {
	q := f.Query
	return len(q.Terms) > 1 || len(q.Groups) > 0 || len(q.Folders) > 0 || len(q.Accounts) > 0 || q.Unread != nil || q.Flagged != nil ||
		q.Answered != nil || q.HasAttachment || !q.After.IsZero() || !q.Before.IsZero() || q.Larger > 0 || q.Smaller != nil ||
		f.Folder != "" || f.Unread != nil || f.Flagged != nil || f.HasAttachment || q.List != nil || q.Authenticated != nil || len(q.Matches) > 0
}

// newestMatches returns the ids of the k newest messages (ids from lo to hi)
// whose index entries match t, newest first, and whether these are all.
func (s *Store) newestMatches(ctx context.Context, f *Filter, i int, lo, hi int64, k int) ([]int64, bool, error) {
	t := f.Query.Terms[i]
	var out []int64
	all := true
	for _, table := range f.tablesFor(t) {
		expr := f.exprFor(table, i, t)
		if expr == "" {
			continue // no word of this index starts with the prefix
		}
		rows, err := s.db.QueryContext(ctx, `SELECT rowid FROM `+table+` WHERE `+table+` MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?`, expr, lo, hi, k)
		if err != nil {
			return nil, false, s.explain(err)
		}
		n := 0
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, false, s.explain(err)
			}
			out = append(out, id)
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, false, s.explain(err)
		}
		if n == k {
			all = false
		}
	}
	slices.SortFunc(out, func(a, b int64) int { return cmp.Compare(b, a) })
	out = slices.Compact(out)
	if len(out) > k {
		// The k newest of the union: each table gave its own k newest.
		out = out[:k]
		all = false
	}
	return out, all, nil
}

// messagesIn runs the query of Messages, limited to win when it is not nil.
func (s *Store) messagesIn(ctx context.Context, f *Filter, win *window, limit int) ([]*Row, bool, error) {
	if f.Threads {
		return s.threadsIn(ctx, f, limit)
	}
	where, args, err := f.whereIn(win)
	if err != nil {
		return nil, false, err
	}
	q := `SELECT ` + rowColumns + `, 0` + fromJoins + where + ` ORDER BY m.id DESC LIMIT ?`
	args = append(args, limit+1)
	return s.scanRows(ctx, q, args, limit)
}

// threadsIn is Messages with f.Threads: one row per thread that has a match, the thread's
// newest match, newest first. A thread is a conversation of one account, whatever folders its
// messages are in (a message in INBOX and its reply in Sent are one thread): the row's
// thread_size counts every message of the thread, matched or not, in every folder. The
// person's projects keep whole threads (projects.go), so a thread shown has no kept message
// to count. A thread's place is its newest match, and the cursor pages by it: a thread is
// on one page only, even when it has older matches below the cursor.
func (s *Store) threadsIn(ctx context.Context, f *Filter, limit int) ([]*Row, bool, error) {
	g := *f
	g.Before = 0
	where, args, err := g.whereIn(nil)
	if err != nil {
		return nil, false, err
	}
	having := ""
	if f.Before > 0 {
		having = ` HAVING max(m.id) < ?`
		args = append(args, f.Before)
	}
	q := `SELECT ` + rowColumns + `, (SELECT count(*) FROM messages x WHERE x.thread_id = m.thread_id)
		FROM (SELECT max(m.id) AS id` + fromJoins + where + ` GROUP BY m.thread_id` + having + ` ORDER BY 1 DESC LIMIT ?) t
		JOIN messages m ON m.id = t.id JOIN folders f ON f.id = m.folder_id JOIN accounts a ON a.id = m.account_id ORDER BY m.id DESC`
	args = append(args, limit+1)
	return s.scanRows(ctx, q, args, limit)
}

// scanRows runs q, whose columns are rowColumns and a thread size, and returns up to
// limit rows and whether more followed.
func (s *Store) scanRows(ctx context.Context, q string, args []any, limit int) ([]*Row, bool, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, false, s.explain(err)
	}
	defer rows.Close()
	var out []*Row
	for rows.Next() {
		r := &Row{}
		var n int
		var date int64
		var to, cc, atts string
		if err := rows.Scan(&r.ID, &r.Account, &r.Folder, &r.UID, &r.MessageID, &r.InReplyTo, &r.ThreadID, &date, &r.Subject,
			&r.From.Name, &r.From.Email, &to, &cc, &r.Flags, &r.Size, &atts, &r.Forged, &r.Withheld, &r.List, &r.OneClick, &r.Invitation, &r.InvitationUID, &n); err != nil {
			return nil, false, s.explain(err)
		}
		r.Date = time.Unix(date, 0).UTC()
		r.To, r.Cc = splitAddrs(to), splitAddrs(cc)
		if atts != "" {
			json.Unmarshal([]byte(atts), &r.Attachments)
		}
		r.ThreadSize = n
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.explain(err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// Count is how many messages (or threads) f matches, ignoring its cursor and limit.
func (s *Store) Count(ctx context.Context, f *Filter) (int, error) {
	f, err := s.resolveFolders(ctx, f)
	if err != nil {
		return 0, err
	}
	g := *s.expandPrefixes(ctx, f)
	g.Before = 0
	where, args, err := g.where()
	if err != nil {
		return 0, err
	}
	q := `SELECT count(*)` + fromJoins + where
	if f.Threads {
		q = `SELECT count(DISTINCT m.thread_id)` + fromJoins + where
	}
	var n int
	err = s.db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, s.explain(err)
}

// ErrNoMessage is returned for an id that is not in the store (or not visible).
var ErrNoMessage = errors.New("no such message")

// visibleWhere is the WHERE clause limiting rows to accounts (nil: all) and cond.
func visibleWhere(accounts []string, cond string, arg any) (string, []any) {
	f := Filter{Accounts: accounts}
	where, args, _ := f.where()
	if where == "" {
		return " WHERE " + cond, []any{arg}
	}
	return where + " AND " + cond, append(args, arg)
}

// Message returns one message by id, if its account is visible (nil accounts: all).
func (s *Store) Message(ctx context.Context, id int64, accounts []string) (*Row, error) {
	where, args := visibleWhere(accounts, "m.id = ?", id)
	r, err := scanRow(s.db.QueryRowContext(ctx, `SELECT `+rowColumns+fromJoins+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoMessage
	}
	return r, s.explain(err)
}

// Thread returns the messages of a thread, oldest first.
func (s *Store) Thread(ctx context.Context, threadID int64, accounts []string) ([]*Row, error) {
	where, args := visibleWhere(accounts, "m.thread_id = ?", threadID)
	rows, err := s.db.QueryContext(ctx, `SELECT `+rowColumns+fromJoins+where+` ORDER BY m.id LIMIT 1000`, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []*Row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, s.explain(err)
		}
		out = append(out, r)
	}
	return out, s.explain(rows.Err())
}

// Unsubscribe returns the List-Unsubscribe URIs stored for message id (none when it offers
// none). They may carry the subscriber's token: mail_unsubscribe uses them and shows only
// what mailparse.ShowURI shows of them.
func (s *Store) Unsubscribe(ctx context.Context, id int64) ([]string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT unsubscribe FROM messages WHERE id=?`, id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoMessage
	}
	if err != nil || v == "" {
		return nil, s.explain(err)
	}
	return strings.Split(v, "\n"), nil
}

// Body is a message's stored text and headers.
type Body struct {
	Text      string
	Truncated bool
	Headers   []Header
	Problems  []string
	Calendar  string // an invitation's iCalendar text (invite.go); "" when it is none
}

// Body returns the stored body of message id.
func (s *Store) Body(ctx context.Context, id int64) (*Body, error) {
	b := &Body{}
	var headers, problems string
	err := s.db.QueryRowContext(ctx, `SELECT text, truncated, headers, problems, calendar FROM bodies WHERE id=?`, id).Scan(&b.Text, &b.Truncated, &headers, &problems, &b.Calendar)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoMessage
	}
	if err != nil {
		return nil, s.explain(err)
	}
	json.Unmarshal([]byte(headers), &b.Headers)
	if problems != "" {
		b.Problems = strings.Split(problems, "\n")
	}
	return b, nil
}

// FolderStat is a folder with its counts.
type FolderStat struct {
	Account string
	Name    string
	Role    string
	Total   int
	Unread  int
}

// FolderStats lists the visible folders with total and unread counts.
func (s *Store) FolderStats(ctx context.Context, accounts []string, hide *Hide) ([]FolderStat, error) {
	f := Filter{Accounts: accounts}
	where, args, _ := f.where()
	// What hide leaves out is left out of the join, not of the folders: a folder whose
	// messages are all left out is still a folder, with 0 in it.
	on, onArgs := "", []any{}
	if hide != nil {
		on = " AND " + hide.cond(&onArgs)
	}
	q := `SELECT a.name, f.name, f.role, count(m.id), coalesce(sum(CASE WHEN m.id IS NOT NULL AND m.flags & 1 = 0 THEN 1 ELSE 0 END), 0)
		FROM folders f JOIN accounts a ON a.id = f.account_id LEFT JOIN messages m ON m.folder_id = f.id` + on + where + ` GROUP BY f.id ORDER BY a.name, f.name`
	rows, err := s.db.QueryContext(ctx, q, append(onArgs, args...)...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []FolderStat
	for rows.Next() {
		var st FolderStat
		if err := rows.Scan(&st.Account, &st.Name, &st.Role, &st.Total, &st.Unread); err != nil {
			return nil, s.explain(err)
		}
		out = append(out, st)
	}
	return out, s.explain(rows.Err())
}

// Sender is a sender (an address or a domain) with counts.
type Sender struct {
	Key      string // address or domain
	Name     string // a display name seen for it (addresses only)
	Messages int
	Unread   int
	Latest   time.Time
}

// Senders groups the messages f matches by sender address, or by domain when byDomain.
func (s *Store) Senders(ctx context.Context, f *Filter, byDomain bool, limit int) ([]Sender, error) {
	f, err := s.resolveFolders(ctx, f)
	if err != nil {
		return nil, err
	}
	where, args, err := f.where()
	if err != nil {
		return nil, err
	}
	key := "lower(m.from_email)"
	if byDomain {
		key = "lower(substr(m.from_email, instr(m.from_email, '@') + 1))"
	}
	q := `SELECT ` + key + `, max(m.from_name), count(*), sum(CASE WHEN m.flags & 1 = 0 THEN 1 ELSE 0 END), max(m.date)` + fromJoins + where +
		` GROUP BY 1 ORDER BY 3 DESC, 5 DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []Sender
	for rows.Next() {
		var x Sender
		var latest int64
		if err := rows.Scan(&x.Key, &x.Name, &x.Messages, &x.Unread, &latest); err != nil {
			return nil, s.explain(err)
		}
		if byDomain {
			x.Name = ""
		}
		x.Latest = time.Unix(latest, 0).UTC()
		out = append(out, x)
	}
	return out, s.explain(rows.Err())
}

// AccountStat is an account's sync state.
type AccountStat struct {
	Name      string
	Kind      string
	LastSync  time.Time
	LastError string
	// LastOK is when a sync last finished without an error (zero: never).
	LastOK   time.Time
	Messages int
	// Warnings are what its syncs skipped or changed of single items, until they sync
	// cleanly (syncwarn).
	Warnings []string
}

// AccountStats returns the accounts in the store.
func (s *Store) AccountStats(ctx context.Context) (map[string]AccountStat, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT a.name, a.kind, coalesce(a.last_sync, 0), coalesce(a.last_error, ''), coalesce(a.last_ok, 0), (SELECT count(*) FROM messages m WHERE m.account_id = a.id) FROM accounts a`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := map[string]AccountStat{}
	for rows.Next() {
		var st AccountStat
		var last, ok int64
		if err := rows.Scan(&st.Name, &st.Kind, &last, &st.LastError, &ok, &st.Messages); err != nil {
			return nil, s.explain(err)
		}
		if last > 0 {
			st.LastSync = time.Unix(last, 0).UTC()
		}
		if ok > 0 {
			st.LastOK = time.Unix(ok, 0).UTC()
		}
		out[st.Name] = st
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	rows.Close()
	warns, err := s.AccountWarnings(ctx)
	if err != nil {
		return nil, err
	}
	for name, ws := range warns {
		if st, ok := out[name]; ok {
			st.Warnings = ws
			out[name] = st
		}
	}
	return out, nil
}

// Refs returns the message ids a message refers to (its References, then its
// In-Reply-To when References lacked it), in order, without angle brackets.
func (s *Store) Refs(ctx context.Context, id int64) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT ref FROM refs WHERE message=? ORDER BY rowid`, id)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, s.explain(err)
		}
		out = append(out, r)
	}
	return out, s.explain(rows.Err())
}

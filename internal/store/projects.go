package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// What the person's projects keep from agents is decided per thread (a message belongs with
// its whole thread): the tools work out which threads a project's routes reach
// (RouteThreads) and pass the ones to leave out, or the only ones to show, in Filter.Hide.

// domainExpr is a message's sender domain, lower case; messages_domain indexes it.
const domainExpr = `lower(substr(from_email, instr(from_email, '@') + 1))`

// addAuthentic adds whether a trusted receiving server vouched for the sender's domain, and an
// index on the sender's domain for the projects' domain routes (schema 12), where missing (a
// store set back to an older schema may have them). A store written before is filled by
// FillAuthentic at the first call that needs it.
func addAuthentic(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'authentic'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE messages ADD COLUMN authentic INTEGER NOT NULL DEFAULT 0`); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS messages_domain ON messages(`+domainExpr+`)`)
	return err
}

// MailRoute is what makes mail belong to one project.
type MailRoute struct {
	Senders    []string      // addresses; authenticated senders only
	Domains    []string      // sender domains and their subdomains; authenticated senders only
	Subjects   []string      // words or phrases of the subject
	Folders    []FolderRoute // folders whose messages belong
	MessageIDs []string      // tied messages, without angle brackets
}

// FolderRoute names a folder; Account "" is any account.
type FolderRoute struct{ Account, Folder string }

// Hide is what a query leaves out for the person's projects: the threads listed (JSON array
// of thread ids), or, when Only, every thread but those.
type Hide struct {
	Only    bool
	Threads string
}

// cond is Hide's condition on the messages alias m.
func (h *Hide) cond(args *[]any) string {
	threads := h.Threads
	if threads == "" || threads == "null" {
		threads = "[]" // json_each of null is one NULL row, which NOT IN never passes
	}
	*args = append(*args, threads)
	if h.Only {
		return "m.thread_id IN (SELECT value FROM json_each(?))"
	}
	return "m.thread_id NOT IN (SELECT value FROM json_each(?))"
}

// Keeps reports whether h leaves out the thread.
func (h *Hide) Keeps(thread int64, in map[int64]bool) bool {
	if h == nil {
		return false
	}
	return in[thread] != h.Only
}

// RouteThreads returns the threads (of the accounts listed; nil for all) that r reaches.
func (s *Store) RouteThreads(ctx context.Context, r *MailRoute, accounts []string) (map[int64]bool, error) {
	out := map[int64]bool{}
	acct, acctArgs := "", []any{}
	if accounts != nil {
		if len(accounts) == 0 {
			return out, nil
		}
		acct = " AND m.account_id IN (SELECT id FROM accounts WHERE name IN (" + placeholders(len(accounts)) + "))"
		for _, a := range accounts {
			acctArgs = append(acctArgs, a)
		}
	}
	query := func(q string, args ...any) error {
		rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT m.thread_id FROM messages m WHERE `+q+acct, append(args, acctArgs...)...)
		if err != nil {
			return s.explain(err)
		}
		defer rows.Close()
		for rows.Next() {
			var t int64
			if err := rows.Scan(&t); err != nil {
				return s.explain(err)
			}
			out[t] = true
		}
		return s.explain(rows.Err())
	}
	lowerAll := func(xs []string) string {
		var l []string
		for _, x := range xs {
			if x = strings.ToLower(strings.TrimSpace(x)); x != "" {
				l = append(l, x)
			}
		}
		b, _ := json.Marshal(l)
		return string(b)
	}
	if len(r.Senders) > 0 {
		if err := query(`m.authentic = 1 AND m.forged = 0 AND lower(m.from_email) IN (SELECT value FROM json_each(?))`, lowerAll(r.Senders)); err != nil {
			return nil, err
		}
	}
	for _, d := range r.Domains {
		d = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		if d == "" {
			continue
		}
		if err := query(`m.authentic = 1 AND m.forged = 0 AND (`+domainExpr+` = ? OR `+domainExpr+` LIKE ? ESCAPE '\')`, d, "%."+likeEscape(d)); err != nil {
			return nil, err
		}
	}
	for _, w := range r.Subjects {
		words := Words(w)
		if len(words) == 0 {
			continue
		}
		if err := query(`m.id IN (SELECT rowid FROM meta_fts WHERE meta_fts MATCH ?)`, `subject : "`+strings.Join(words, " ")+`"`); err != nil {
			return nil, err
		}
	}
	for _, f := range r.Folders {
		q, args := `m.folder_id IN (SELECT f.id FROM folders f JOIN accounts a ON a.id = f.account_id WHERE lower(f.name) = lower(?)`, []any{f.Folder}
		if f.Account != "" {
			q += ` AND a.name = ?`
			args = append(args, f.Account)
		}
		if err := query(q+`)`, args...); err != nil {
			return nil, err
		}
	}
	if len(r.MessageIDs) > 0 {
		ids, _ := json.Marshal(r.MessageIDs)
		if err := query(`m.message_id IN (SELECT value FROM json_each(?))`, string(ids)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// MessageThreads returns the thread of each message id given (ids not found are left out).
func (s *Store) MessageThreads(ctx context.Context, ids []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(ids) == 0 {
		return out, nil
	}
	j, _ := json.Marshal(ids)
	rows, err := s.db.QueryContext(ctx, `SELECT id, thread_id FROM messages WHERE id IN (SELECT value FROM json_each(?))`, string(j))
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, t int64
		if err := rows.Scan(&id, &t); err != nil {
			return nil, s.explain(err)
		}
		out[id] = t
	}
	return out, s.explain(rows.Err())
}

// ThreadsOfMessageIDs returns the threads holding a message with one of these Message-IDs.
func (s *Store) ThreadsOfMessageIDs(ctx context.Context, msgids []string) (map[int64]bool, error) {
	return s.RouteThreads(ctx, &MailRoute{MessageIDs: msgids}, nil)
}

// FillAuthentic sets the authentic column of an account's messages from their stored
// headers with judge (authres.Authenticated with the account's trusted servers), once for
// each set of trusted servers (key names it): a store written before the column, or an
// account whose trusted servers changed, is brought up to date at the first call that
// needs it.
func (s *Store) FillAuthentic(ctx context.Context, account string, trusted []string, judge func(headers []Header, fromEmail string) bool) error {
	sum := sha256.Sum256([]byte(strings.Join(trusted, "\n")))
	key, want := "authentic:"+account, hex.EncodeToString(sum[:8])
	var have string
	_ = s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key=?`, key).Scan(&have)
	if have == want {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT m.id, m.from_email, m.authentic, coalesce(b.headers, '') FROM messages m JOIN accounts a ON a.id = m.account_id
		LEFT JOIN bodies b ON b.id = m.id WHERE a.name = ? AND m.from_email LIKE '%@%'`, account)
	if err != nil {
		return s.explain(err)
	}
	type change struct {
		id int64
		v  bool
	}
	var changes []change
	for rows.Next() {
		var id int64
		var from, headers string
		var was bool
		if err := rows.Scan(&id, &from, &was, &headers); err != nil {
			rows.Close()
			return s.explain(err)
		}
		var hs []Header
		if headers != "" {
			json.Unmarshal([]byte(headers), &hs)
		}
		if v := judge(hs, from); v != was {
			changes = append(changes, change{id, v})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.explain(err)
	}
	var st *sql.Stmt
	if len(changes) > 0 {
		if st, err = tx.PrepareContext(ctx, `UPDATE messages SET authentic=? WHERE id=?`); err != nil {
			return s.explain(err)
		}
		defer st.Close()
	}
	for _, c := range changes {
		if _, err := st.ExecContext(ctx, c.v, c.id); err != nil {
			return s.explain(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, key, want); err != nil {
		return s.explain(err)
	}
	return s.explain(tx.Commit())
}

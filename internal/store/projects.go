package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/postern-mcp/postern/internal/store/fts"
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

// RouteThreads returns the threads (of the accounts listed; nil for all) that r reaches. Each
// route is one indexed lookup: senders and domains through the sender-domain index (the
// domains stored are read once from it, to find the subdomains), subjects through the
// subject index, folders through their messages, ties through the Message-ID index.
func (s *Store) RouteThreads(ctx context.Context, r *MailRoute, accounts []string) (map[int64]bool, error) {
	out := map[int64]bool{}
	acct, acctArgs := "", []any{}
	if accounts != nil {
		if len(accounts) == 0 {
			return out, nil
		}
		// The unary + keeps the planner from reading every message of the account through
		// an index on account_id instead of the route's own index.
		acct = " AND +m.account_id IN (SELECT id FROM accounts WHERE name IN (" + fts.Placeholders(len(accounts)) + "))"
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
	jsonOf := func(xs []string) string {
		b, _ := json.Marshal(xs)
		return string(b)
	}
	var senders, senderDomains []string
	for _, x := range r.Senders {
		if x = strings.ToLower(strings.TrimSpace(x)); strings.Contains(x, "@") {
			senders = append(senders, x)
			senderDomains = append(senderDomains, x[strings.LastIndex(x, "@")+1:])
		}
	}
	if len(senders) > 0 {
		if err := query(domainExpr+` IN (SELECT value FROM json_each(?)) AND lower(m.from_email) IN (SELECT value FROM json_each(?)) AND m.authentic = 1 AND m.forged = 0`,
			jsonOf(senderDomains), jsonOf(senders)); err != nil {
			return nil, err
		}
	}
	if len(r.Domains) > 0 {
		domains, err := s.senderDomains(ctx, r.Domains)
		if err != nil {
			return nil, err
		}
		if len(domains) > 0 {
			if err := query(domainExpr+` IN (SELECT value FROM json_each(?)) AND m.authentic = 1 AND m.forged = 0`, jsonOf(domains)); err != nil {
				return nil, err
			}
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
	if len(r.Folders) > 0 {
		ids, err := s.routeFolders(ctx, r.Folders)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			b, _ := json.Marshal(ids)
			if err := query(`m.folder_id IN (SELECT value FROM json_each(?))`, string(b)); err != nil {
				return nil, err
			}
		}
	}
	if len(r.MessageIDs) > 0 {
		// account_id leads the Message-ID index: name every account.
		q := `m.message_id IN (SELECT value FROM json_each(?)) AND m.account_id IN (SELECT id FROM accounts)`
		if err := query(q, jsonOf(r.MessageIDs)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// senderDomains returns the stored sender domains that are one of domains or below one.
func (s *Store) senderDomains(ctx context.Context, domains []string) ([]string, error) {
	var want []string
	for _, d := range domains {
		if d = strings.ToLower(strings.Trim(strings.TrimSpace(d), "@.")); d != "" {
			want = append(want, d)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT `+domainExpr+` FROM messages INDEXED BY messages_domain`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, s.explain(err)
		}
		for _, w := range want {
			if d == w || strings.HasSuffix(d, "."+w) {
				out = append(out, d)
				break
			}
		}
	}
	return out, s.explain(rows.Err())
}

// routeFolders returns the ids of the folders the routes name: case ignored, / and . the
// same separator (as mail_list finds a folder), of the route's account when it names one.
func (s *Store) routeFolders(ctx context.Context, routes []FolderRoute) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT f.id, a.name, f.name FROM folders f JOIN accounts a ON a.id = f.account_id`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		var account, name string
		if err := rows.Scan(&id, &account, &name); err != nil {
			return nil, s.explain(err)
		}
		for _, r := range routes {
			if folderKey(r.Folder) == folderKey(name) && (r.Account == "" || r.Account == account) {
				out = append(out, id)
				break
			}
		}
	}
	return out, s.explain(rows.Err())
}

// DataVersion is a number that changes whenever another connection (another process's sync,
// or this process's own writes, which never go through the connection it is read on)
// commits a change to the store (SQLite's PRAGMA data_version), so that what was worked out
// from the store can be kept until it does.
func (s *Store) DataVersion(ctx context.Context) (int64, error) {
	s.dvMu.Lock()
	defer s.dvMu.Unlock()
	if s.dv == nil {
		c, err := s.db.Conn(ctx)
		if err != nil {
			return 0, s.explain(err)
		}
		s.dv = c
	}
	var v int64
	if err := s.dv.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		s.dv.Close()
		s.dv = nil
		return 0, s.explain(err)
	}
	return v, nil
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

// ThreadsSize is how many messages the threads hold.
func (s *Store) ThreadsSize(ctx context.Context, threads map[int64]bool) (int, error) {
	if len(threads) == 0 {
		return 0, nil
	}
	ids := make([]int64, 0, len(threads))
	for t := range threads {
		ids = append(ids, t)
	}
	b, _ := json.Marshal(ids)
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE thread_id IN (SELECT value FROM json_each(?))`, string(b)).Scan(&n)
	return n, s.explain(err)
}

// SenderMail counts, per account, the stored messages from the addresses or the domains (and
// their subdomains) given: all of them, and those a trusted receiving server authenticated
// (and did not find forged), the only ones a project's sender route takes.
func (s *Store) SenderMail(ctx context.Context, senders, domains []string) (all, authentic map[string]int, err error) {
	all, authentic = map[string]int{}, map[string]int{}
	var addrs, ds []string
	for _, x := range senders {
		if x = strings.ToLower(strings.TrimSpace(x)); strings.Contains(x, "@") {
			addrs = append(addrs, x)
			ds = append(ds, x[strings.LastIndex(x, "@")+1:])
		}
	}
	cond := ""
	var args []any
	if len(addrs) > 0 {
		a, _ := json.Marshal(addrs)
		d, _ := json.Marshal(ds)
		cond = domainExpr + ` IN (SELECT value FROM json_each(?)) AND lower(m.from_email) IN (SELECT value FROM json_each(?))`
		args = []any{string(d), string(a)}
	}
	if len(domains) > 0 {
		stored, err := s.senderDomains(ctx, domains)
		if err != nil {
			return nil, nil, err
		}
		if stored == nil {
			stored = []string{}
		}
		d, _ := json.Marshal(stored)
		if cond != "" {
			cond = "(" + cond + ") OR "
		}
		cond += domainExpr + ` IN (SELECT value FROM json_each(?))`
		args = append(args, string(d))
	}
	if cond == "" {
		return all, authentic, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT a.name, count(*), sum(m.authentic = 1 AND m.forged = 0) FROM messages m JOIN accounts a ON a.id = m.account_id
		WHERE `+cond+` GROUP BY a.name`, args...)
	if err != nil {
		return nil, nil, s.explain(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n, ok int
		if err := rows.Scan(&name, &n, &ok); err != nil {
			return nil, nil, s.explain(err)
		}
		all[name], authentic[name] = n, ok
	}
	return all, authentic, s.explain(rows.Err())
}

// FirstHeaders returns, for each of the newest n messages of account, the values of its first
// header field named name (case ignored), where it has one.
func (s *Store) FirstHeaders(ctx context.Context, account, name string, n int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT coalesce(b.headers, '') FROM messages m JOIN accounts a ON a.id = m.account_id
		LEFT JOIN bodies b ON b.id = m.id WHERE a.name = ? ORDER BY m.id DESC LIMIT ?`, account, n)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var headers string
		if err := rows.Scan(&headers); err != nil {
			return nil, s.explain(err)
		}
		var hs []Header
		if headers != "" {
			_ = json.Unmarshal([]byte(headers), &hs)
		}
		for _, h := range hs {
			if strings.EqualFold(h.Name, name) {
				out = append(out, h.Value)
				break
			}
		}
	}
	return out, s.explain(rows.Err())
}

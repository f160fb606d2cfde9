package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// How much of a stranger's text one answer carries. dispatch refuses to send
// an answer over 1 MB (answer.MaxAnswer); these cuts, each with a flag the
// agent sees, keep every answer under it. A byte of a string takes up to seven
// in the envelope (< is \u003c in the JSON string of the text and itself in
// structuredContent), and the labels of 500 rows some 200 KB, so 96 KB of
// strings stays under 1 MB whatever they hold.
const (
	// MaxShowText is the most body text one page of mail_show or of
	// mail_thread's text holds: max_length's default and maximum, in bytes.
	MaxShowText = 100000
	// MaxHeaderText is the most header text mail_headers returns: each
	// field's name, ": ", value and line end.
	MaxHeaderText = 64 << 10
	// maxListText is the most of strangers' strings one list answer holds
	// (the rows of mail_list, mail_search, mail_thread, mail_folders,
	// mail_senders, mail_attachments); a page stops early, with a cursor.
	maxListText = 96 << 10
	// maxRecipientText is the most recipients' text one message row holds.
	maxRecipientText = 4 << 10
	// maxShown is the most bytes a one-line string shows once cleaned
	// (clean.MaxLine runes of at most 4 bytes): a longer stored value counts
	// as that much.
	maxShown = 4 * clean.MaxLine
	// threadLimit is the most messages store.Thread reads (its LIMIT); a
	// thread that reaches it may hold more.
	threadLimit = 1000
)

// shown is what a string counts for against a budget.
func shown(s string) int { return min(len(s), maxShown) }

// budget counts down the strangers' text an answer may still hold.
type budget int

// take reports whether n more bytes fit, and counts them when they do; once
// one does not, nothing more does. A list keeps its first row whatever take
// says, so that no answer is empty because one row is long.
func (b *budget) take(n int) bool {
	if n > int(*b) {
		*b = 0
		return false
	}
	*b -= budget(n)
	return true
}

// visibleNames returns the names of the accounts this connection may see.
func (s *Service) visibleNames(ctx context.Context) ([]string, error) {
	accts, err := s.visible(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(accts))
	for _, a := range accts {
		names = append(names, a.Name)
	}
	return names, nil
}

// scopeAccounts narrows the visible accounts to one when the agent names it
// (found as findAccount finds it); an error when there is no account at all.
// A hidden account and one that does not exist get the same answer.
func (s *Service) scopeAccounts(ctx context.Context, account *string) ([]string, error) {
	names, err := s.searchAccounts(ctx)
	if err != nil {
		return nil, err
	}
	if account == nil || *account == "" {
		return names, nil
	}
	n, err := findAccount(*account, names, "")
	if err != nil {
		return nil, err
	}
	return []string{n}, nil
}

func encodeCursor(id int64) string { return "c" + strconv.FormatInt(id, 36) }

func decodeCursor(c *string) (int64, error) {
	if c == nil || *c == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(*c, "c"), 36, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("the cursor is not one postern gave; start again without a cursor")
	}
	return n, nil
}

func fieldSet(fields []string) map[string]bool {
	if len(fields) == 0 {
		return nil
	}
	m := map[string]bool{}
	for _, f := range fields {
		m[f] = true
	}
	return m
}

func ptr[T any](v T) *T { return &v }

func addrString(a store.Address) string {
	if a.Name == "" {
		return a.Email
	}
	return a.Name + " <" + a.Email + ">"
}

// recipients lists as many addresses of as as fit in left, and counts the
// others in more; once one does not fit, none of the rest is listed.
func recipients(as []store.Address, left *budget, more *int) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		s := addrString(a)
		if *more > 0 || !left.take(shown(s)) {
			*more++
			continue
		}
		out = append(out, s)
	}
	return out
}

// rowText is what a message row counts for against a list's budget.
func rowText(m *generated.MessageRow) int {
	n := shown(m.ID) + shown(m.Account) + shown(m.Folder) + shown(m.Date) + shown(m.From) +
		shown(m.Subject) + shown(m.Thread) + shown(m.Withheld) + len(m.Invitation)
	for _, s := range m.To {
		n += shown(s)
	}
	for _, s := range m.Cc {
		n += shown(s)
	}
	return n
}

// rowDate is a row's date as rows show it: YYYY-MM-DD HH:MM in UTC, which
// says all an agent sorts or reads by in 16 bytes instead of RFC 3339's 20.
const rowDate = "2006-01-02 15:04"

// rowView says what a row leaves out because it would say nothing there.
type rowView struct {
	fields    map[string]bool // the fields asked for; nil: all but size
	noAccount bool            // every row is of the one account the answer covers
	noFolder  bool            // every row is of the one folder listed
	own       ownAddrs        // the person's addresses, which go without saying in to and cc
}

// ownAddrs holds, per account, the person's own addresses, lowercase.
type ownAddrs map[string]map[string]bool

// rowOwn collects the visible accounts' own addresses (the From of
// what the person writes, their aliases, a login that is an address).
func (s *Service) rowOwn(ctx context.Context) ownAddrs {
	accts, err := s.visible(ctx)
	if err != nil {
		return nil
	}
	own := ownAddrs{}
	for _, a := range accts {
		set := map[string]bool{}
		for _, x := range append([]string{a.From(), a.User}, a.Aliases...) {
			if strings.Contains(x, "@") {
				set[strings.ToLower(x)] = true
			}
		}
		own[a.Name] = set
	}
	return own
}

// others returns as without the account's own addresses.
func (o ownAddrs) others(account string, as []store.Address) []store.Address {
	set := o[account]
	if len(set) == 0 {
		return as
	}
	out := make([]store.Address, 0, len(as))
	for _, a := range as {
		if !set[strings.ToLower(a.Email)] {
			out = append(out, a)
		}
	}
	return out
}

// messageRow renders a stored row with the fields v asks for. A row leaves
// out what carries no information (see the catalog's MessageRow): flags that
// are not set, an attachment count of 0, the thread when it is the message's
// own id, and what v says goes without saying.
func messageRow(r *store.Row, v rowView) generated.MessageRow {
	want := func(f string) bool { return v.fields == nil && f != "size" || v.fields[f] }
	out := generated.MessageRow{ID: store.EncodeID(r.ID)}
	if want("account") && !v.noAccount {
		out.Account = r.Account
	}
	if want("folder") && !v.noFolder {
		out.Folder = r.Folder
	}
	if want("date") {
		out.Date = r.Date.UTC().Format(rowDate)
	}
	if want("from") {
		out.From = addrString(r.From)
	}
	left, more := budget(maxRecipientText), 0
	// The person's own addresses go without saying in their mailbox, unless
	// fields asks for the recipients by name.
	to, cc := r.To, r.Cc
	if !v.fields["to"] {
		to = v.own.others(r.Account, to)
	}
	if !v.fields["cc"] {
		cc = v.own.others(r.Account, cc)
	}
	if want("to") && len(to) > 0 {
		out.To = recipients(to, &left, &more)
	}
	if want("cc") && len(cc) > 0 {
		out.Cc = recipients(cc, &left, &more)
	}
	if more > 0 {
		out.MoreRecipients = ptr(more)
	}
	if want("subject") {
		out.Subject = r.Subject
	}
	if want("flags") {
		if r.Flags&store.FlagSeen == 0 {
			out.Unread = ptr(true)
		}
		if r.Flags&store.FlagFlagged != 0 {
			out.Flagged = ptr(true)
		}
		if r.Flags&store.FlagAnswered != 0 {
			out.Answered = ptr(true)
		}
	}
	if want("size") {
		out.Size = ptr(int(r.Size))
	}
	if want("attachments") && len(r.Attachments) > 0 {
		out.Attachments = ptr(len(r.Attachments))
	}
	if r.Forged {
		out.Forged = ptr(true)
	}
	if r.Withheld != "" {
		out.Withheld = r.Withheld
	}
	if r.List {
		out.List = ptr(true)
	}
	if r.OneClick {
		out.OneClick = ptr(true)
	}
	if r.Invitation != "" {
		out.Invitation = r.Invitation
	}
	if want("thread") {
		if r.ThreadID != r.ID {
			out.Thread = store.EncodeID(r.ThreadID)
		}
		if r.ThreadSize > 0 {
			out.ThreadSize = ptr(r.ThreadSize)
		}
	}
	return out
}

// page answers mail_list and mail_search. Its rows leave out the account when
// the answer covers one account, and, for mail_list (no query), the folder
// when every row is of the same one: the folder that was asked for.
func (s *Service) page(ctx context.Context, f *store.Filter, fields []string, countOnly bool) (*generated.MessageList, error) {
	st, err := s.store(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.access(ctx)
	if err != nil {
		return nil, err
	}
	if f.Hide, err = acc.Mail(ctx, st); err != nil {
		return nil, err
	}
	// What is kept is counted over the list's scope, never its words (access.go). A
	// search's scope is its accounts; a list's, its folder too.
	scopeFolder := f.Folder
	if f.Query != nil {
		scopeFolder = ""
	}
	leftOut, err := acc.LeftOut(ctx, st, f.Accounts, scopeFolder)
	if err != nil {
		return nil, err
	}
	if countOnly {
		n, err := st.Count(ctx, f)
		if err != nil {
			return nil, err
		}
		return &generated.MessageList{Count: &n, LeftOut: nonZero(leftOut), SyncedAt: s.syncedAt(ctx, f.Accounts)}, nil
	}
	rows, more, err := st.Messages(ctx, f)
	if err != nil {
		return nil, err
	}
	v := rowView{fields: fieldSet(fields), noAccount: len(f.Accounts) == 1, noFolder: f.Query == nil, own: s.rowOwn(ctx)}
	for _, r := range rows {
		if v.noFolder && r.Folder != rows[0].Folder {
			v.noFolder = false
			break
		}
	}
	res := &generated.MessageList{Messages: make([]generated.MessageRow, 0, len(rows)), LeftOut: nonZero(leftOut)}
	left := budget(maxListText)
	for i, r := range rows {
		m := messageRow(r, v)
		if !left.take(rowText(&m)) && i > 0 {
			// The page ends here; the next one starts after the last row shown.
			rows, more = rows[:i], true
			break
		}
		res.Messages = append(res.Messages, m)
	}
	if more && len(rows) > 0 {
		res.NextCursor = encodeCursor(rows[len(rows)-1].ID)
	}
	groupThreads(res.Messages)
	res.SyncedAt = s.syncedAt(ctx, f.Accounts)
	return res, nil
}

// groupThreads leaves a row's thread only where it groups rows: when another
// row of the answer has the same thread, or is the thread's first message.
// Alone on its page, a thread id tells the agent nothing it can use there
// (mail_thread takes the row's own id).
func groupThreads(rows []generated.MessageRow) {
	seen := map[string]int{}
	for _, m := range rows {
		if m.Thread != "" {
			seen[m.Thread]++
		}
	}
	for _, m := range rows {
		if _, ok := seen[m.ID]; ok {
			seen[m.ID]++ // the first message is on the page
		}
	}
	for i := range rows {
		if t := rows[i].Thread; t != "" && seen[t] < 2 {
			rows[i].Thread = ""
		}
	}
}

// MailList implements mail_list.
func (s *Service) MailList(ctx context.Context, a *generated.MailListArgs) (*generated.MessageList, error) {
	accts, err := s.scopeAccounts(ctx, a.Account)
	if err != nil {
		return nil, err
	}
	before, err := decodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	// The folder is found by the store in any case and with / or . as the
	// separator; a name that fits no folder is a store.FolderError naming the nearest.
	f := &store.Filter{Accounts: accts, Folder: a.Folder, Unread: a.Unread,
		Threads: a.Threads, Before: before, Limit: a.Limit}
	return s.page(ctx, f, a.Fields, a.CountOnly)
}

func hasScope(ctx context.Context, scope string) bool {
	for _, s := range dispatch.InfoFrom(ctx).Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// searchesBodies says whether the grant widens searches to body words and attachment names: a
// granted scope the catalog marks searches_bodies.
func searchesBodies(ctx context.Context) bool {
	for _, sc := range generated.Scopes {
		if sc.SearchesBodies && hasScope(ctx, sc.Name) {
			return true
		}
	}
	return false
}

// now is the clock relative dates are read against (tests replace it).
var now = time.Now

// parseQuery reads a search, refusing the operators that look at what this connection's
// scopes do not show: header: and list: (read:headers), body: (read:bodies). The search is
// not quoted back then: its words may be what the scope hides.
func (s *Service) parseQuery(ctx context.Context, q string) (*search.Query, error) {
	parsed, err := search.Parse(q, now().UTC())
	if err != nil {
		return nil, fmt.Errorf("the search %q cannot be read: %v", q, err)
	}
	headers, bodies := parsed.Needs()
	for _, n := range []struct {
		need        bool
		scope, what string
	}{{headers, generated.ScopeReadHeaders, "header: and list: look at header fields"}, {bodies, generated.ScopeReadBodies, "body: looks at message text"}} {
		if n.need && !hasScope(ctx, n.scope) {
			return nil, fmt.Errorf("the search uses an operator this connection may not: %s, which the scope %q shows, and it was not granted", n.what, n.scope)
		}
	}
	return parsed, nil
}

// MailSearch implements mail_search.
func (s *Service) MailSearch(ctx context.Context, a *generated.MailSearchArgs) (*generated.MessageList, error) {
	accts, err := s.searchAccounts(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.parseQuery(ctx, a.Query)
	if err != nil {
		return nil, err
	}
	if err := resolveQueryAccounts(q, accts); err != nil {
		return nil, err
	}
	before, err := decodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	f := &store.Filter{Accounts: accts, Query: q, Bodies: searchesBodies(ctx), Threads: a.Threads, Before: before, Limit: a.Limit}
	return s.page(ctx, f, a.Fields, a.CountOnly)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// MailFolders implements mail_folders.
func (s *Service) MailFolders(ctx context.Context, a *generated.MailFoldersArgs) (*generated.FolderList, error) {
	accts, err := s.scopeAccounts(ctx, a.Account)
	if err != nil {
		return nil, err
	}
	st, err := s.store(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.access(ctx)
	if err != nil {
		return nil, err
	}
	hide, err := acc.Mail(ctx, st)
	if err != nil {
		return nil, err
	}
	leftOut, err := acc.LeftOut(ctx, st, accts, "")
	if err != nil {
		return nil, err
	}
	stats, err := st.FolderStats(ctx, accts, hide)
	if err != nil {
		return nil, err
	}
	res := &generated.FolderList{Folders: make([]generated.FolderInfo, 0, len(stats)), LeftOut: nonZero(leftOut)}
	left := budget(maxListText)
	for i, x := range stats {
		if acc.KeepsFolder(x.Account, x.Name) {
			continue // a closed project's own folder: its name is the project's too
		}
		if !left.take(shown(x.Account)+shown(x.Name)+len(x.Role)) && i > 0 {
			res.Truncated = ptr(true)
			break
		}
		res.Folders = append(res.Folders, generated.FolderInfo{Account: x.Account, Name: x.Name, Role: x.Role, Total: x.Total, Unread: x.Unread})
	}
	res.SyncedAt = s.syncedAt(ctx, accts)
	return res, nil
}

// MailSenders implements mail_senders.
func (s *Service) MailSenders(ctx context.Context, a *generated.MailSendersArgs) (*generated.SenderList, error) {
	accts, err := s.searchAccounts(ctx)
	if err != nil {
		return nil, err
	}
	// The folder is found by the store, as mail_list's (store.FolderError).
	f := &store.Filter{Accounts: accts, Folder: deref(a.Folder), Bodies: searchesBodies(ctx)}
	if q := deref(a.Query); q != "" {
		if f.Query, err = s.parseQuery(ctx, q); err != nil {
			return nil, err
		}
		if err := resolveQueryAccounts(f.Query, accts); err != nil {
			return nil, err
		}
	}
	st, err := s.store(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.access(ctx)
	if err != nil {
		return nil, err
	}
	if f.Hide, err = acc.Mail(ctx, st); err != nil {
		return nil, err
	}
	leftOut, err := acc.LeftOut(ctx, st, accts, f.Folder)
	if err != nil {
		return nil, err
	}
	senders, err := st.Senders(ctx, f, a.By == "domain", a.Limit)
	if err != nil {
		return nil, err
	}
	res := &generated.SenderList{Senders: make([]generated.SenderInfo, 0, len(senders)), LeftOut: nonZero(leftOut)}
	left := budget(maxListText)
	for i, x := range senders {
		latest := x.Latest.Format(time.RFC3339)
		if !left.take(shown(x.Key)+shown(x.Name)+len(latest)) && i > 0 {
			res.Truncated = ptr(true)
			break
		}
		res.Senders = append(res.Senders, generated.SenderInfo{Sender: x.Key, Name: x.Name, Messages: x.Messages, Unread: x.Unread, Latest: latest})
	}
	res.SyncedAt = s.syncedAt(ctx, accts)
	return res, nil
}

// message finds a visible message by the id an agent gave.
func (s *Service) message(ctx context.Context, id string) (*store.Store, *store.Row, error) {
	n, ok := store.DecodeID(id)
	notFound := errors.New("there is no such message here; use an id from " + generated.ToolMailList + " or " + generated.ToolMailSearch)
	if !ok {
		if acc, err := s.access(ctx); err != nil {
			return nil, nil, err
		} else {
			return nil, nil, acc.NotFound(notFound.Error())
		}
	}
	accts, err := s.visibleNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.store(ctx)
	if err != nil {
		return nil, nil, err
	}
	acc, err := s.access(ctx)
	if err != nil {
		return nil, nil, err
	}
	notFound = acc.NotFound(notFound.Error())
	r, err := st.Message(ctx, n, accts)
	if errors.Is(err, store.ErrNoMessage) {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, err
	}
	if kept, err := acc.KeepsThread(ctx, st, r.ThreadID); err != nil {
		return nil, nil, err
	} else if kept {
		return nil, nil, notFound
	}
	return st, r, nil
}

// nonZero is n, or nil when n is 0 (an optional count present only when it says something).
func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// MailThread implements mail_thread; with text, threadText (thread.go).
func (s *Service) MailThread(ctx context.Context, a *generated.MailThreadArgs) (*generated.Thread, error) {
	if a.Text && !hasScope(ctx, generated.ScopeReadBodies) {
		return nil, errors.New(generated.ToolMailThread + " with text needs the scope " + strconv.Quote(generated.ScopeReadBodies) + ", which this connection was not granted; call it without text, or ask the person to grant " + generated.ScopeReadBodies)
	}
	st, r, err := s.message(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	accts, _ := s.visibleNames(ctx)
	rows, err := st.Thread(ctx, r.ThreadID, accts)
	if err != nil {
		return nil, err
	}
	v := rowView{noAccount: len(accts) == 1, own: s.rowOwn(ctx)}
	if a.Text {
		res, err := s.threadText(ctx, st, r.ThreadID, rows, v, a)
		if res != nil {
			res.SyncedAt = s.syncedAt(ctx, accts)
		}
		return res, err
	}
	res := &generated.Thread{Thread: store.EncodeID(r.ThreadID), Messages: make([]generated.MessageRow, 0, len(rows))}
	left := budget(maxListText)
	for i, x := range rows {
		m := messageRow(x, v)
		if !left.take(rowText(&m)) && i > 0 {
			res.Truncated = ptr(true)
			break
		}
		m.Thread = "" // the answer says it once
		res.Messages = append(res.Messages, m)
	}
	if len(rows) >= threadLimit {
		res.Truncated = ptr(true)
	}
	res.SyncedAt = s.syncedAt(ctx, accts)
	return res, nil
}

// withBody finds a visible message and its stored body.
func (s *Service) withBody(ctx context.Context, id string) (*store.Row, *store.Body, error) {
	st, r, err := s.message(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	b, err := st.Body(ctx, r.ID)
	if err != nil {
		return nil, nil, err
	}
	return r, b, nil
}

// MailHeaders implements mail_headers.
func (s *Service) MailHeaders(ctx context.Context, a *generated.MailHeadersArgs) (*generated.HeaderList, error) {
	_, b, err := s.withBody(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	res := &generated.HeaderList{ID: a.ID, Headers: make([]generated.HeaderField, 0, min(len(b.Headers), 1024))}
	left := budget(MaxHeaderText)
	for _, h := range b.Headers {
		// A field counts as written: name, ": ", value, CRLF.
		if !left.take(shown(h.Name) + shown(h.Value) + 4) {
			res.Truncated = ptr(true)
			break
		}
		res.Headers = append(res.Headers, generated.HeaderField{Name: h.Name, Value: h.Value})
	}
	return res, nil
}

// MailShow implements mail_show: a page of the message's text, from offset,
// of at most max_length bytes.
func (s *Service) MailShow(ctx context.Context, a *generated.MailShowArgs) (*generated.MessageText, error) {
	r, b, err := s.withBody(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	accts, _ := s.visibleNames(ctx)
	res := &generated.MessageText{Message: messageRow(r, rowView{noAccount: len(accts) == 1, own: s.rowOwn(ctx)}), Problems: b.Problems}
	if r.Invitation != "" {
		res.Invitation = s.invitationView(ctx, r, b) // invite.go
	}
	if r.Withheld != "" {
		res.Text = "[postern withholds this message's text: " + r.Withheld + ". The person can read it in their mail program.]"
		return res, nil
	}
	p, err := textPage(b.Text, "message", a.Offset, a.MaxLength, b.Truncated)
	if err != nil {
		return nil, err
	}
	res.Text, res.NextOffset, res.Length, res.Truncated = p.text, p.next, p.length, p.truncated
	return res, nil
}

// textPart is one page of a text as the reading tools give it: the text, where the next page
// starts (nil on the last), the whole length (when there are several pages), and whether the
// whole text is not here.
type textPart struct {
	text      string
	next      *int
	length    *int
	truncated *bool
}

// textPage is the page of text (of a message, a note, an attachment: what) from offset of at
// most maxLength bytes (0: the default); cut says the stored text itself was cut short.
func textPage(text, what string, offset, maxLength int, cut bool) (textPart, error) {
	if offset > len(text) {
		return textPart{}, fmt.Errorf("offset %d is past the end of this %s's text (%d bytes); start again at 0", offset, what, len(text))
	}
	t, next := pageText(text, offset, pageLength(maxLength))
	p := textPart{text: t}
	if next < len(text) {
		p.next = ptr(next)
	}
	if next < len(text) || offset > 0 {
		p.length = ptr(len(text))
	}
	if next < len(text) || cut {
		p.truncated = ptr(true)
	}
	return p, nil
}

// pageLength is max_length as given, or its default, within MaxShowText.
func pageLength(n int) int {
	if n <= 0 || n > MaxShowText {
		return MaxShowText
	}
	return n
}

// pageText returns the page of s that starts at offset and takes at most n
// bytes, and where the next page starts (len(s) after the last). Pages never
// split a character or a masked span (mask's markers, which the store holds
// where secrets were): an offset inside one starts at its beginning. A page
// ends where the boundary's cleaning (which trims blank lines and spaces at
// a text's ends, and drops joiners left alone) changes neither side: before
// a space that ends a word in its last eighth when there is one, else
// between two characters that are neither spaces nor a joiner, a selector or
// a combining mark. So the pages of a text, each from the one before's next
// offset, show the text, every character once.
func pageText(s string, offset, n int) (string, int) {
	offset = spanStart(s, min(max(offset, 0), len(s)))
	if offset+n >= len(s) {
		return s[offset:], len(s)
	}
	end := pageEnd(s, offset, offset+n)
	return s[offset:end], end
}

// pageEnd is where a page that starts at from and may run to limit
// (< len(s)) ends: see pageText. It is always past from.
func pageEnd(s string, from, limit int) int {
	floor := max(from+1, limit-(limit-from)/8)
	for e := limit; e >= floor; e-- {
		if s[e] == ' ' && !isSpaceBefore(s, e) && spanStart(s, e) == e {
			return e
		}
	}
	for e := limit; e > from && e > limit-4096; e-- {
		if utf8.RuneStart(s[e]) && seamAt(s, e) && spanStart(s, e) == e {
			return e
		}
	}
	for e := limit; e > from; e-- { // only spaces and joiners near the end: any character's edge
		if utf8.RuneStart(s[e]) && spanStart(s, e) == e {
			return e
		}
	}
	// A span (or a character) longer than the page: take it whole.
	if e := spanEnd(s, from); e > from {
		return e
	}
	_, size := utf8.DecodeRuneInString(s[from:])
	return from + size
}

func isSpaceBefore(s string, e int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:e])
	return unicode.IsSpace(r)
}

// seamAt reports whether a page may end at s[e] with the cleaning of
// either page changing nothing there.
func seamAt(s string, e int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:e])
	after, _ := utf8.DecodeRuneInString(s[e:])
	return !unicode.IsSpace(before) && !unicode.IsSpace(after) && !contextual(before) && !contextual(after) &&
		!unicode.In(after, unicode.Mn, unicode.Me, unicode.Mc)
}

// contextual: the characters clean keeps or drops by their neighbours
// (joiners, variation selectors, tag characters).
func contextual(r rune) bool {
	return r == '\u200c' || r == '\u200d' || (r >= '\ufe00' && r <= '\ufe0f') || (r >= 0x180b && r <= 0x180f) ||
		(r >= 0xe0000 && r <= 0xe007f) || (r >= 0xe0100 && r <= 0xe01ef)
}

// maskMarkers are how the masked spans the store holds begin; each ends at
// the first "]" after its beginning.
var maskMarkers = []string{mask.HiddenCode, mask.HiddenLink, mask.HiddenPassword, mask.HiddenKey, mask.CardPrefix, mask.IBANPrefix, mask.NIRPrefix, mask.WithheldPrefix}

// maxMarker is the longest a marker is: mask.WithheldPrefix, a reason, "]".
const maxMarker = 200

// spanStart moves i back to the start of the character, and of the masked
// span, it falls in.
func spanStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	from := max(0, i-maxMarker)
	for j := strings.LastIndexByte(s[from:i], '['); j >= 0; j = strings.LastIndexByte(s[from:from+j], '[') {
		at := from + j
		if e := markerEnd(s, at); e > i {
			return at
		}
		if j == 0 {
			break
		}
	}
	return i
}

// spanEnd is the end of the masked span starting at i (i itself if none).
func spanEnd(s string, i int) int {
	if e := markerEnd(s, i); e > i {
		return e
	}
	return i
}

// markerEnd is the end of the mask marker at s[i:], or -1.
func markerEnd(s string, i int) int {
	for _, m := range maskMarkers {
		if strings.HasPrefix(s[i:], m) {
			if m[len(m)-1] == ']' {
				return i + len(m)
			}
			if e := strings.IndexByte(s[i+len(m):min(len(s), i+maxMarker)], ']'); e >= 0 {
				return i + len(m) + e + 1
			}
		}
	}
	return -1
}

// MailAttachments implements mail_attachments.
func (s *Service) MailAttachments(ctx context.Context, a *generated.MailAttachmentsArgs) (*generated.AttachmentList, error) {
	_, r, err := s.message(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	res := &generated.AttachmentList{ID: a.ID, Attachments: make([]generated.AttachmentInfo, 0, len(r.Attachments))}
	left := budget(maxListText)
	for i, x := range r.Attachments {
		if !left.take(shown(x.Name)+shown(x.ContentType)) && i > 0 {
			res.Truncated = ptr(true)
			break
		}
		res.Attachments = append(res.Attachments, generated.AttachmentInfo{Name: x.Name, Type: x.ContentType, Size: int(x.Size)})
	}
	return res, nil
}

// MailSync implements mail_sync.
func (s *Service) MailSync(ctx context.Context, a *generated.MailSyncArgs) (*generated.SyncReport, error) {
	accts, err := s.visible(ctx)
	if err != nil {
		return nil, err
	}
	if a.Account != nil && *a.Account != "" {
		var one []configAccount
		for _, x := range accts {
			if x.Name == *a.Account {
				one = append(one, x)
			}
		}
		if len(one) == 0 {
			return nil, errors.New("there is no such account here; the " + generated.ToolStatus + " tool lists the accounts you can use")
		}
		accts = one
	}
	if len(accts) == 0 {
		return nil, errors.New("no account is configured; the person adds one with postern account add")
	}
	if s.Sync == nil {
		return nil, errors.New("this server cannot sync; run postern sync in a terminal")
	}
	outs, err := s.Sync(ctx, accts)
	if err != nil {
		return nil, err
	}
	res := &generated.SyncReport{Accounts: make([]generated.SyncOutcome, 0, len(outs))}
	for _, o := range outs {
		res.Accounts = append(res.Accounts, generated.SyncOutcome{Account: o.Account, New: o.New, Deleted: o.Deleted, FlagsChanged: o.FlagsChanged, Folders: o.Folders, Error: o.Error})
	}
	return res, nil
}

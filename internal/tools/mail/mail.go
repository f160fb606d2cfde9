// Package mail serves the tools of catalog/mail.yaml: reading mail (folders, lists,
// searches, senders, threads, headers, messages), mail_sync, and writing it (mail_draft,
// mail_send); the other domains that send or show messages use what it exports.
package mail

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// Mail implements generated.MailHandlers.
type Mail struct {
	*kit.Kit
	// Invitation is what mail_show shows of the invitation a message carries (the
	// calendar_invite domain's), nil when it carries none.
	Invitation func(ctx context.Context, r *store.Row, b *store.Body) *generated.Invitation
}

var _ generated.MailHandlers = (*Mail)(nil)

// ScopeAccounts narrows the visible accounts to one when the agent names it
// (found as findAccount finds it); an error when there is no account at all.
// A hidden account and one that does not exist get the same answer.
func (s *Mail) ScopeAccounts(ctx context.Context, account *string) ([]string, error) {
	names, err := s.SearchAccounts(ctx)
	if err != nil {
		return nil, err
	}
	if account == nil || *account == "" {
		return names, nil
	}
	n, err := FindAccount(*account, names, "")
	if err != nil {
		return nil, err
	}
	return []string{n}, nil
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

func AddrString(a store.Address) string {
	if a.Name == "" {
		return a.Email
	}
	return a.Name + " <" + a.Email + ">"
}

// recipients lists as many addresses of as as fit in left, and counts the
// others in more; once one does not fit, none of the rest is listed.
func recipients(as []store.Address, left *kit.Budget, more *int) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		s := AddrString(a)
		if *more > 0 || !left.Take(kit.Shown(s)) {
			*more++
			continue
		}
		out = append(out, s)
	}
	return out
}

// rowText is what a message row counts for against a list's budget.
func rowText(m *generated.MessageRow) int {
	n := kit.Shown(m.ID) + kit.Shown(m.Account) + kit.Shown(m.Folder) + kit.Shown(m.Date) + kit.Shown(m.From) +
		kit.Shown(m.Subject) + kit.Shown(m.Thread) + kit.Shown(m.Withheld) + len(m.Invitation)
	for _, s := range m.To {
		n += kit.Shown(s)
	}
	for _, s := range m.Cc {
		n += kit.Shown(s)
	}
	return n
}

// rowDate is a row's date as rows show it: YYYY-MM-DD HH:MM in UTC, which
// says all an agent sorts or reads by in 16 bytes instead of RFC 3339's 20.
const rowDate = "2006-01-02 15:04"

// rowView says what a row leaves out because it would say nothing there.
// MessageRow is a message's row as the mail tools show it, every field but size, with own
// the addresses RowOwn collected (nil: none is the person's).
func MessageRow(r *store.Row, own OwnAddrs) generated.MessageRow {
	return messageRow(r, rowView{own: own})
}

type rowView struct {
	fields    map[string]bool // the fields asked for; nil: all but size
	noAccount bool            // every row is of the one account the answer covers
	noFolder  bool            // every row is of the one folder listed
	own       OwnAddrs        // the person's addresses, which go without saying in to and cc
}

// OwnAddrs holds, per account, the person's own addresses, lowercase.
type OwnAddrs map[string]map[string]bool

// RowOwn collects the visible accounts' own addresses (the From of
// what the person writes, their aliases, a login that is an address).
func (s *Mail) RowOwn(ctx context.Context) OwnAddrs {
	accts, err := s.Visible(ctx)
	if err != nil {
		return nil
	}
	own := OwnAddrs{}
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
func (o OwnAddrs) others(account string, as []store.Address) []store.Address {
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
		out.From = AddrString(r.From)
	}
	left, more := kit.Budget(kit.MaxRecipientText), 0
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
		out.MoreRecipients = kit.Ptr(more)
	}
	if want("subject") {
		out.Subject = r.Subject
	}
	if want("flags") {
		if r.Flags&store.FlagSeen == 0 {
			out.Unread = kit.Ptr(true)
		}
		if r.Flags&store.FlagFlagged != 0 {
			out.Flagged = kit.Ptr(true)
		}
		if r.Flags&store.FlagAnswered != 0 {
			out.Answered = kit.Ptr(true)
		}
	}
	if want("size") {
		out.Size = kit.Ptr(int(r.Size))
	}
	if want("attachments") && len(r.Attachments) > 0 {
		out.Attachments = kit.Ptr(len(r.Attachments))
	}
	if r.Forged {
		out.Forged = kit.Ptr(true)
	}
	if r.Withheld != "" {
		out.Withheld = r.Withheld
	}
	if r.List {
		out.List = kit.Ptr(true)
	}
	if r.OneClick {
		out.OneClick = kit.Ptr(true)
	}
	if r.Invitation != "" {
		out.Invitation = r.Invitation
	}
	if want("thread") {
		if r.ThreadID != r.ID {
			out.Thread = store.EncodeID(r.ThreadID)
		}
		if r.ThreadSize > 0 {
			out.ThreadSize = kit.Ptr(r.ThreadSize)
		}
	}
	return out
}

// Page answers mail_list and mail_search. Its rows leave out the account when
// the answer covers one account, and, for mail_list (no query), the folder
// when every row is of the same one: the folder that was asked for.
func (s *Mail) Page(ctx context.Context, f *store.Filter, fields []string, countOnly bool) (*generated.MessageList, error) {
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	if f.Hide, err = acc.Mail(ctx, st); err != nil {
		return nil, err
	}
	// What is kept is counted over the list's scope, never its words (kit.Access). A
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
		return &generated.MessageList{Count: &n, LeftOut: kit.NonZero(leftOut), SyncedAt: s.SyncedAt(ctx, f.Accounts)}, nil
	}
	rows, more, err := st.Messages(ctx, f)
	if err != nil {
		return nil, err
	}
	v := rowView{fields: fieldSet(fields), noAccount: len(f.Accounts) == 1, noFolder: f.Query == nil, own: s.RowOwn(ctx)}
	for _, r := range rows {
		if v.noFolder && r.Folder != rows[0].Folder {
			v.noFolder = false
			break
		}
	}
	res := &generated.MessageList{Messages: make([]generated.MessageRow, 0, len(rows)), LeftOut: kit.NonZero(leftOut)}
	left := kit.Budget(kit.MaxListText)
	for i, r := range rows {
		m := messageRow(r, v)
		if !left.Take(rowText(&m)) && i > 0 {
			// The page ends here; the next one starts after the last row shown.
			rows, more = rows[:i], true
			break
		}
		res.Messages = append(res.Messages, m)
	}
	if more && len(rows) > 0 {
		res.NextCursor = kit.EncodeCursor(rows[len(rows)-1].ID)
	}
	groupThreads(res.Messages)
	res.SyncedAt = s.SyncedAt(ctx, f.Accounts)
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
func (s *Mail) MailList(ctx context.Context, a *generated.MailListArgs) (*generated.MessageList, error) {
	accts, err := s.ScopeAccounts(ctx, a.Account)
	if err != nil {
		return nil, err
	}
	before, err := kit.DecodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	// The folder is found by the store in any case and with / or . as the
	// separator; a name that fits no folder is a store.FolderError naming the nearest.
	f := &store.Filter{Accounts: accts, Folder: a.Folder, Unread: a.Unread,
		Threads: a.Threads, Before: before, Limit: a.Limit}
	return s.Page(ctx, f, a.Fields, a.CountOnly)
}

// ParseQuery reads a search, refusing the operators that look at what this connection's
// scopes do not show: header: and list: (read:headers), body: (read:bodies). The search is
// not quoted back then: its words may be what the scope hides.
func (s *Mail) ParseQuery(ctx context.Context, q string) (*search.Query, error) {
	parsed, err := search.Parse(q, kit.Clock().UTC())
	if err != nil {
		return nil, fmt.Errorf("the search %q cannot be read: %v", q, err)
	}
	headers, bodies := parsed.Needs()
	for _, n := range []struct {
		need        bool
		scope, what string
	}{{headers, generated.ScopeReadHeaders, "header: and list: look at header fields"}, {bodies, generated.ScopeReadBodies, "body: looks at message text"}} {
		if n.need && !kit.HasScope(ctx, n.scope) {
			return nil, fmt.Errorf("the search uses an operator this connection may not: %s, which the scope %q shows, and it was not granted", n.what, n.scope)
		}
	}
	return parsed, nil
}

// MailSearch implements mail_search.
func (s *Mail) MailSearch(ctx context.Context, a *generated.MailSearchArgs) (*generated.MessageList, error) {
	accts, err := s.SearchAccounts(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.ParseQuery(ctx, a.Query)
	if err != nil {
		return nil, err
	}
	if err := ResolveQueryAccounts(q, accts); err != nil {
		return nil, err
	}
	before, err := kit.DecodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	f := &store.Filter{Accounts: accts, Query: q, Bodies: kit.SearchesBodies(ctx), Threads: a.Threads, Before: before, Limit: a.Limit}
	return s.Page(ctx, f, a.Fields, a.CountOnly)
}

// MailFolders implements mail_folders.
func (s *Mail) MailFolders(ctx context.Context, a *generated.MailFoldersArgs) (*generated.FolderList, error) {
	accts, err := s.ScopeAccounts(ctx, a.Account)
	if err != nil {
		return nil, err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
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
	res := &generated.FolderList{Folders: make([]generated.FolderInfo, 0, len(stats)), LeftOut: kit.NonZero(leftOut)}
	left := kit.Budget(kit.MaxListText)
	for i, x := range stats {
		if acc.KeepsFolder(x.Account, x.Name) {
			continue // a closed project's own folder: its name is the project's too
		}
		if !left.Take(kit.Shown(x.Account)+kit.Shown(x.Name)+len(x.Role)) && i > 0 {
			res.Truncated = kit.Ptr(true)
			break
		}
		res.Folders = append(res.Folders, generated.FolderInfo{Account: x.Account, Name: x.Name, Role: x.Role, Total: x.Total, Unread: x.Unread})
	}
	res.SyncedAt = s.SyncedAt(ctx, accts)
	return res, nil
}

// MailSenders implements mail_senders.
func (s *Mail) MailSenders(ctx context.Context, a *generated.MailSendersArgs) (*generated.SenderList, error) {
	accts, err := s.SearchAccounts(ctx)
	if err != nil {
		return nil, err
	}
	// The folder is found by the store, as mail_list's (store.FolderError).
	f := &store.Filter{Accounts: accts, Folder: kit.Deref(a.Folder), Bodies: kit.SearchesBodies(ctx)}
	if q := kit.Deref(a.Query); q != "" {
		if f.Query, err = s.ParseQuery(ctx, q); err != nil {
			return nil, err
		}
		if err := ResolveQueryAccounts(f.Query, accts); err != nil {
			return nil, err
		}
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
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
	res := &generated.SenderList{Senders: make([]generated.SenderInfo, 0, len(senders)), LeftOut: kit.NonZero(leftOut)}
	left := kit.Budget(kit.MaxListText)
	for i, x := range senders {
		latest := x.Latest.Format(time.RFC3339)
		if !left.Take(kit.Shown(x.Key)+kit.Shown(x.Name)+len(latest)) && i > 0 {
			res.Truncated = kit.Ptr(true)
			break
		}
		res.Senders = append(res.Senders, generated.SenderInfo{Sender: x.Key, Name: x.Name, Messages: x.Messages, Unread: x.Unread, Latest: latest})
	}
	res.SyncedAt = s.SyncedAt(ctx, accts)
	return res, nil
}

// Message finds a visible message by the id an agent gave.
func (s *Mail) Message(ctx context.Context, id string) (*store.Store, *store.Row, error) {
	n, ok := store.DecodeID(id)
	notFound := errors.New("there is no such message here; use an id from " + generated.ToolMailList + " or " + generated.ToolMailSearch)
	if !ok {
		if acc, err := s.Access(ctx); err != nil {
			return nil, nil, err
		} else {
			return nil, nil, acc.NotFound(notFound.Error())
		}
	}
	accts, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	acc, err := s.Access(ctx)
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

// MailThread implements mail_thread; with text, threadText (thread.go).
func (s *Mail) MailThread(ctx context.Context, a *generated.MailThreadArgs) (*generated.Thread, error) {
	if a.Text && !kit.HasScope(ctx, generated.ScopeReadBodies) {
		return nil, errors.New(generated.ToolMailThread + " with text needs the scope " + strconv.Quote(generated.ScopeReadBodies) + ", which this connection was not granted; call it without text, or ask the person to grant " + generated.ScopeReadBodies)
	}
	st, r, err := s.Message(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	accts, _ := s.VisibleNames(ctx)
	rows, err := st.Thread(ctx, r.ThreadID, accts)
	if err != nil {
		return nil, err
	}
	v := rowView{noAccount: len(accts) == 1, own: s.RowOwn(ctx)}
	if a.Text {
		res, err := s.threadText(ctx, st, r.ThreadID, rows, v, a)
		if res != nil {
			res.SyncedAt = s.SyncedAt(ctx, accts)
		}
		return res, err
	}
	res := &generated.Thread{Thread: store.EncodeID(r.ThreadID), Messages: make([]generated.MessageRow, 0, len(rows))}
	left := kit.Budget(kit.MaxListText)
	for i, x := range rows {
		m := messageRow(x, v)
		if !left.Take(rowText(&m)) && i > 0 {
			res.Truncated = kit.Ptr(true)
			break
		}
		m.Thread = "" // the answer says it once
		res.Messages = append(res.Messages, m)
	}
	if len(rows) >= kit.ThreadLimit {
		res.Truncated = kit.Ptr(true)
	}
	res.SyncedAt = s.SyncedAt(ctx, accts)
	return res, nil
}

// withBody finds a visible message and its stored body.
func (s *Mail) withBody(ctx context.Context, id string) (*store.Row, *store.Body, error) {
	st, r, err := s.Message(ctx, id)
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
func (s *Mail) MailHeaders(ctx context.Context, a *generated.MailHeadersArgs) (*generated.HeaderList, error) {
	_, b, err := s.withBody(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	res := &generated.HeaderList{ID: a.ID, Headers: make([]generated.HeaderField, 0, min(len(b.Headers), 1024))}
	left := kit.Budget(kit.MaxHeaderText)
	for _, h := range b.Headers {
		// A field counts as written: name, ": ", value, CRLF.
		if !left.Take(kit.Shown(h.Name) + kit.Shown(h.Value) + 4) {
			res.Truncated = kit.Ptr(true)
			break
		}
		res.Headers = append(res.Headers, generated.HeaderField{Name: h.Name, Value: h.Value})
	}
	return res, nil
}

// MailShow implements mail_show: a page of the message's text, from offset,
// of at most max_length bytes.
func (s *Mail) MailShow(ctx context.Context, a *generated.MailShowArgs) (*generated.MessageText, error) {
	r, b, err := s.withBody(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	accts, _ := s.VisibleNames(ctx)
	res := &generated.MessageText{Message: messageRow(r, rowView{noAccount: len(accts) == 1, own: s.RowOwn(ctx)}), Problems: b.Problems}
	if r.Invitation != "" {
		res.Invitation = s.Invitation(ctx, r, b) // the calendar_invite domain's
	}
	if r.Withheld != "" {
		res.Text = "[postern withholds this message's text: " + r.Withheld + ". The person can read it in their mail program.]"
		return res, nil
	}
	p, err := kit.TextPage(b.Text, "message", a.Offset, a.MaxLength, b.Truncated)
	if err != nil {
		return nil, err
	}
	res.Text, res.NextOffset, res.Length, res.Truncated = p.Text, p.Next, p.Length, p.Truncated
	return res, nil
}

// MailAttachments implements mail_attachments.
func (s *Mail) MailAttachments(ctx context.Context, a *generated.MailAttachmentsArgs) (*generated.AttachmentList, error) {
	_, r, err := s.Message(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	res := &generated.AttachmentList{ID: a.ID, Attachments: make([]generated.AttachmentInfo, 0, len(r.Attachments))}
	left := kit.Budget(kit.MaxListText)
	for i, x := range r.Attachments {
		if !left.Take(kit.Shown(x.Name)+kit.Shown(x.ContentType)) && i > 0 {
			res.Truncated = kit.Ptr(true)
			break
		}
		res.Attachments = append(res.Attachments, generated.AttachmentInfo{Name: x.Name, Type: x.ContentType, Size: int(x.Size)})
	}
	return res, nil
}

// MailSync implements mail_sync.
func (s *Mail) MailSync(ctx context.Context, a *generated.MailSyncArgs) (*generated.SyncReport, error) {
	accts, err := s.Visible(ctx)
	if err != nil {
		return nil, err
	}
	if a.Account != nil && *a.Account != "" {
		var one []config.Account
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

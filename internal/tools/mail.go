package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// How much of a stranger's text one answer carries. dispatch refuses to send
// an answer over 1 MB (dispatch.MaxAnswer); these cuts, each with a flag the
// agent sees, keep every answer under it. A byte of a string takes up to seven
// in the envelope (< is \u003c in the JSON string of the text and itself in
// structuredContent), and the labels of 500 rows some 200 KB, so 96 KB of
// strings stays under 1 MB whatever they hold.
const (
	// MaxShowText is the most body text mail_show returns.
	MaxShowText = 100 << 10
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
func (s *Service) visibleNames() ([]string, error) {
	accts, err := s.visible()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(accts))
	for _, a := range accts {
		names = append(names, a.Name)
	}
	return names, nil
}

// scopeAccounts narrows the visible accounts to one when the agent names it.
// A hidden account and one that does not exist get the same answer.
func (s *Service) scopeAccounts(account *string) ([]string, error) {
	names, err := s.visibleNames()
	if err != nil {
		return nil, err
	}
	if account == nil || *account == "" {
		return names, nil
	}
	for _, n := range names {
		if n == *account {
			return []string{n}, nil
		}
	}
	return nil, errors.New("there is no such account here; the accounts tool lists the accounts you can use")
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
		shown(m.Subject) + shown(m.Thread) + shown(m.Withheld)
	for _, s := range m.To {
		n += shown(s)
	}
	for _, s := range m.Cc {
		n += shown(s)
	}
	return n
}

// messageRow renders a stored row with the chosen fields (all when fields is nil).
func messageRow(r *store.Row, fields map[string]bool) generated.MessageRow {
	want := func(f string) bool { return fields == nil || fields[f] }
	out := generated.MessageRow{ID: store.EncodeID(r.ID)}
	if want("account") {
		out.Account = r.Account
	}
	if want("folder") {
		out.Folder = r.Folder
	}
	if want("date") {
		out.Date = r.Date.Format(time.RFC3339)
	}
	if want("from") {
		out.From = addrString(r.From)
	}
	left, more := budget(maxRecipientText), 0
	if want("to") {
		out.To = recipients(r.To, &left, &more)
	}
	if want("cc") && len(r.Cc) > 0 {
		out.Cc = recipients(r.Cc, &left, &more)
	}
	if more > 0 {
		out.MoreRecipients = ptr(more)
	}
	if want("subject") {
		out.Subject = r.Subject
	}
	if want("flags") {
		out.Unread = ptr(r.Flags&store.FlagSeen == 0)
		out.Flagged = ptr(r.Flags&store.FlagFlagged != 0)
		out.Answered = ptr(r.Flags&store.FlagAnswered != 0)
	}
	if want("size") {
		out.Size = ptr(int(r.Size))
	}
	if want("attachments") {
		out.Attachments = ptr(len(r.Attachments))
	}
	if r.Forged {
		out.Forged = ptr(true)
	}
	if r.Withheld != "" {
		out.Withheld = r.Withheld
	}
	if want("thread") {
		out.Thread = store.EncodeID(r.ThreadID)
		if r.ThreadSize > 0 {
			out.ThreadSize = ptr(r.ThreadSize)
		}
	}
	return out
}

func (s *Service) page(ctx context.Context, f *store.Filter, fields []string, countOnly bool) (*generated.MessageList, error) {
	st, err := s.store()
	if err != nil {
		return nil, err
	}
	if countOnly {
		n, err := st.Count(ctx, f)
		if err != nil {
			return nil, err
		}
		return &generated.MessageList{Count: &n}, nil
	}
	rows, more, err := st.Messages(ctx, f)
	if err != nil {
		return nil, err
	}
	fs := fieldSet(fields)
	res := &generated.MessageList{Messages: make([]generated.MessageRow, 0, len(rows))}
	left := budget(maxListText)
	for i, r := range rows {
		m := messageRow(r, fs)
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
	return res, nil
}

// MailList implements mail_list.
func (s *Service) MailList(ctx context.Context, a *generated.MailListArgs) (*generated.MessageList, error) {
	accts, err := s.scopeAccounts(a.Account)
	if err != nil {
		return nil, err
	}
	before, err := decodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	f := &store.Filter{Accounts: accts, Folder: a.Folder, Unread: a.Unread, Flagged: a.Flagged, HasAttachment: a.HasAttachment,
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

// now is the clock relative dates are read against (tests replace it).
var now = time.Now

func (s *Service) parseQuery(q string) (*search.Query, error) {
	parsed, err := search.Parse(q, now().UTC())
	if err != nil {
		return nil, fmt.Errorf("the search %q cannot be read: %v", q, err)
	}
	return parsed, nil
}

// MailSearch implements mail_search.
func (s *Service) MailSearch(ctx context.Context, a *generated.MailSearchArgs) (*generated.MessageList, error) {
	accts, err := s.visibleNames()
	if err != nil {
		return nil, err
	}
	q, err := s.parseQuery(a.Query)
	if err != nil {
		return nil, err
	}
	before, err := decodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	f := &store.Filter{Accounts: accts, Query: q, Bodies: hasScope(ctx, "read:bodies"), Threads: a.Threads, Before: before, Limit: a.Limit}
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
	accts, err := s.scopeAccounts(a.Account)
	if err != nil {
		return nil, err
	}
	st, err := s.store()
	if err != nil {
		return nil, err
	}
	stats, err := st.FolderStats(ctx, accts)
	if err != nil {
		return nil, err
	}
	res := &generated.FolderList{Folders: make([]generated.FolderInfo, 0, len(stats))}
	left := budget(maxListText)
	for i, x := range stats {
		if !left.take(shown(x.Account)+shown(x.Name)+len(x.Role)) && i > 0 {
			res.Truncated = ptr(true)
			break
		}
		res.Folders = append(res.Folders, generated.FolderInfo{Account: x.Account, Name: x.Name, Role: x.Role, Total: x.Total, Unread: x.Unread})
	}
	return res, nil
}

// MailSenders implements mail_senders.
func (s *Service) MailSenders(ctx context.Context, a *generated.MailSendersArgs) (*generated.SenderList, error) {
	accts, err := s.visibleNames()
	if err != nil {
		return nil, err
	}
	f := &store.Filter{Accounts: accts, Folder: deref(a.Folder), Bodies: hasScope(ctx, "read:bodies")}
	if q := deref(a.Query); q != "" {
		if f.Query, err = s.parseQuery(q); err != nil {
			return nil, err
		}
	}
	st, err := s.store()
	if err != nil {
		return nil, err
	}
	senders, err := st.Senders(ctx, f, a.By == "domain", a.Limit)
	if err != nil {
		return nil, err
	}
	res := &generated.SenderList{Senders: make([]generated.SenderInfo, 0, len(senders))}
	left := budget(maxListText)
	for i, x := range senders {
		latest := x.Latest.Format(time.RFC3339)
		if !left.take(shown(x.Key)+shown(x.Name)+len(latest)) && i > 0 {
			res.Truncated = ptr(true)
			break
		}
		res.Senders = append(res.Senders, generated.SenderInfo{Sender: x.Key, Name: x.Name, Messages: x.Messages, Unread: x.Unread, Latest: latest})
	}
	return res, nil
}

// message finds a visible message by the id an agent gave.
func (s *Service) message(ctx context.Context, id string) (*store.Store, *store.Row, error) {
	n, ok := store.DecodeID(id)
	notFound := errors.New("there is no such message here; use an id from mail_list or mail_search")
	if !ok {
		return nil, nil, notFound
	}
	accts, err := s.visibleNames()
	if err != nil {
		return nil, nil, err
	}
	st, err := s.store()
	if err != nil {
		return nil, nil, err
	}
	r, err := st.Message(ctx, n, accts)
	if errors.Is(err, store.ErrNoMessage) {
		return nil, nil, notFound
	}
	return st, r, err
}

// MailThread implements mail_thread.
func (s *Service) MailThread(ctx context.Context, a *generated.MailThreadArgs) (*generated.Thread, error) {
	st, r, err := s.message(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	accts, _ := s.visibleNames()
	rows, err := st.Thread(ctx, r.ThreadID, accts)
	if err != nil {
		return nil, err
	}
	res := &generated.Thread{Thread: store.EncodeID(r.ThreadID), Messages: make([]generated.MessageRow, 0, len(rows))}
	left := budget(maxListText)
	for i, x := range rows {
		m := messageRow(x, nil)
		if !left.take(rowText(&m)) && i > 0 {
			res.Truncated = ptr(true)
			break
		}
		res.Messages = append(res.Messages, m)
	}
	if len(rows) >= threadLimit {
		res.Truncated = ptr(true)
	}
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

// MailShow implements mail_show.
func (s *Service) MailShow(ctx context.Context, a *generated.MailShowArgs) (*generated.MessageText, error) {
	r, b, err := s.withBody(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	text, cut := capText(b.Text, MaxShowText)
	if r.Withheld != "" {
		text, cut = "[postern withholds this message's text: "+r.Withheld+". The person can read it in their mail program.]", false
	}
	return &generated.MessageText{Message: messageRow(r, nil), Text: text, Truncated: cut || b.Truncated, Problems: b.Problems}, nil
}

// capText cuts s to at most n bytes on a character boundary.
func capText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
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
	accts, err := s.visible()
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
			return nil, errors.New("there is no such account here; the accounts tool lists the accounts you can use")
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

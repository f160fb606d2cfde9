package outbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// The IMAP functions below take a logged-in client (internal/imapsync.Dial makes one).
// imapclient has no per-command cancellation, so cancelling ctx while one runs closes c.

// Append stores raw into mailbox with flags (for example imap.FlagDraft, imap.FlagSeen) and
// the internal date date (the server's clock when zero), and returns the UID the server gave
// it (from APPENDUID; 0 when the server does not say).
func Append(ctx context.Context, c *imapclient.Client, mailbox string, flags []imap.Flag, date time.Time, raw []byte) (imap.UID, error) {
	if len(raw) == 0 {
		return 0, errors.New("the message to store is empty")
	}
	defer closeOnCancel(ctx, c)()
	cmd := c.Append(mailbox, int64(len(raw)), &imap.AppendOptions{Flags: flags, Time: date})
	_, werr := cmd.Write(raw)
	cerr := cmd.Close()
	data, err := cmd.Wait()
	if err == nil {
		err = errors.Join(werr, cerr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("storing the message in %q was stopped: %w", mailbox, context.Cause(ctx))
		}
		var ie *imap.Error
		if errors.As(err, &ie) && ie.Code == imap.ResponseCodeTryCreate {
			return 0, fmt.Errorf("the folder %q does not exist on the server; create it or choose another: %w", mailbox, err)
		}
		if errors.As(err, &ie) {
			return 0, fmt.Errorf("the server refused to store the message in %q (%s); check the folder and the account's quota: %w", mailbox, strings.TrimSpace(ie.Text), err)
		}
		return 0, fmt.Errorf("storing the message in %q failed; check the connection and try again: %w", mailbox, err)
	}
	return data.UID, nil
}

// Roles FindRole knows: the special-use attribute (RFC 6154), the conventional names in order of
// preference (compared without regard to case, alone or under INBOX), and the name to create.
var roles = map[string]struct {
	attr  imap.MailboxAttr
	names []string
}{
	"drafts": {imap.MailboxAttrDrafts, []string{"Drafts"}},
	"sent":   {imap.MailboxAttrSent, []string{"Sent", "Sent Items", "Sent Messages"}},
}

// FindRole returns the mailbox for role ("drafts" or "sent"): the one with the special-use
// attribute \Drafts or \Sent, else one with a conventional name (Drafts; Sent, Sent Items,
// Sent Messages; without regard to case, also under INBOX as in INBOX.Sent), else it creates
// "Drafts" or "Sent" in the personal namespace, with the special-use attribute when the server
// supports CREATE-SPECIAL-USE, subscribes to it, and returns it.
func FindRole(ctx context.Context, c *imapclient.Client, role string) (string, error) {
	r, ok := roles[role]
	if !ok {
		return "", fmt.Errorf("no folder role %q; it is drafts or sent", role)
	}
	defer closeOnCancel(ctx, c)()
	list, err := listAll(c)
	if err != nil {
		return "", imapFailed(ctx, "listing the folders", err)
	}
	if name, ok := pick(list, r.attr, r.names); ok {
		return name, nil
	}

	name := r.names[0]
	if c.Caps().Has(imap.CapNamespace) {
		if ns, err := c.Namespace().Wait(); err == nil && len(ns.Personal) > 0 {
			name = ns.Personal[0].Prefix + name // "" on most servers, "INBOX." on some
		}
	}
	var opts *imap.CreateOptions
	if c.Caps().Has(imap.CapCreateSpecialUse) {
		opts = &imap.CreateOptions{SpecialUse: []imap.MailboxAttr{r.attr}}
	}
	if cerr := c.Create(name, opts).Wait(); cerr != nil {
		// Another client may have made it meanwhile (ALREADYEXISTS): look again.
		if list, err := listAll(c); err == nil {
			if found, ok := pick(list, r.attr, r.names); ok {
				return found, nil
			}
		}
		// A server may refuse the attribute (USEATTR) but make the folder without it.
		if opts == nil || ctx.Err() != nil || c.Create(name, nil).Wait() != nil {
			return "", imapFailed(ctx, fmt.Sprintf("creating the folder %q", name), cerr)
		}
	}
	_ = c.Subscribe(name).Wait() // so that mail programs show it; not subscribing changes nothing here
	return name, nil
}

func listAll(c *imapclient.Client) ([]*imap.ListData, error) {
	var opts *imap.ListOptions
	caps := c.Caps()
	if caps.Has(imap.CapSpecialUse) && (caps.Has(imap.CapListExtended) || caps.Has(imap.CapIMAP4rev2)) {
		opts = &imap.ListOptions{ReturnSpecialUse: true}
	}
	return c.List("", "*", opts).Collect()
}

func pick(list []*imap.ListData, attr imap.MailboxAttr, names []string) (string, bool) {
	var usable []*imap.ListData
	for _, l := range list {
		if !hasAttr(l.Attrs, imap.MailboxAttrNoSelect) && !hasAttr(l.Attrs, imap.MailboxAttrNonExistent) {
			usable = append(usable, l)
		}
	}
	for _, l := range usable {
		if hasAttr(l.Attrs, attr) {
			return l.Mailbox, true
		}
	}
	for _, want := range names {
		for _, l := range usable {
			if strings.EqualFold(l.Mailbox, want) {
				return l.Mailbox, true
			}
		}
		for _, l := range usable {
			if l.Delim != 0 && strings.EqualFold(l.Mailbox, "INBOX"+string(l.Delim)+want) {
				return l.Mailbox, true
			}
		}
	}
	return "", false
}

func hasAttr(attrs []imap.MailboxAttr, a imap.MailboxAttr) bool {
	for _, x := range attrs {
		if strings.EqualFold(string(x), string(a)) {
			return true
		}
	}
	return false
}

// RemoveByMessageID removes from mailbox the messages whose Message-ID header is msgid (with or
// without angle brackets) and returns how many it removed. It selects mailbox (which stays
// selected), finds candidates with UID SEARCH HEADER Message-ID, keeps those whose header is
// exactly msgid (SEARCH matches substrings), marks them \Deleted and removes them with UID
// EXPUNGE; without UIDPLUS it uses EXPUNGE, which also removes any other message in mailbox
// already marked \Deleted.
func RemoveByMessageID(ctx context.Context, c *imapclient.Client, mailbox, msgid string) (int, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(msgid), "<"), ">")
	if id == "" || strings.ContainsAny(id, "<>\r\n") {
		return 0, fmt.Errorf("%q is not a Message-ID", msgid)
	}
	defer closeOnCancel(ctx, c)()
	if _, err := c.Select(mailbox, nil).Wait(); err != nil {
		return 0, imapFailed(ctx, fmt.Sprintf("opening the folder %q", mailbox), err)
	}
	found, err := c.UIDSearch(&imap.SearchCriteria{
		Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: id}},
	}, nil).Wait()
	if err != nil {
		return 0, imapFailed(ctx, fmt.Sprintf("searching %q for Message-ID <%s>", mailbox, id), err)
	}
	candidates := found.AllUIDs()
	if len(candidates) == 0 {
		return 0, nil
	}
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-ID"}, Peek: true}
	msgs, err := c.Fetch(imap.UIDSetNum(candidates...), &imap.FetchOptions{
		UID:         true,
		BodySection: []*imap.FetchItemBodySection{section},
	}).Collect()
	if err != nil {
		return 0, imapFailed(ctx, fmt.Sprintf("reading the Message-IDs in %q", mailbox), err)
	}
	var match imap.UIDSet
	n := 0
	for _, m := range msgs {
		if m.UID != 0 && headerMessageID(m.FindBodySection(section)) == id {
			match.AddNum(m.UID)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	del := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
	if err := c.Store(match, del, nil).Close(); err != nil {
		return 0, imapFailed(ctx, fmt.Sprintf("marking the message deleted in %q", mailbox), err)
	}
	if c.Caps().Has(imap.CapUIDPlus) {
		gone, err := c.UIDExpunge(match).Collect()
		if err != nil {
			return 0, imapFailed(ctx, fmt.Sprintf("removing the message from %q", mailbox), err)
		}
		return len(gone), nil
	}
	if _, err := c.Expunge().Collect(); err != nil {
		return 0, imapFailed(ctx, fmt.Sprintf("removing the message from %q", mailbox), err)
	}
	return n, nil
}

// headerMessageID is the Message-ID in a header block, without angle brackets.
func headerMessageID(header []byte) string {
	if len(header) == 0 {
		return ""
	}
	if !bytes.HasSuffix(header, []byte("\r\n\r\n")) && !bytes.HasSuffix(header, []byte("\n\n")) {
		header = append(header, "\r\n"...)
	}
	m, err := mail.ReadMessage(bytes.NewReader(header))
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(m.Header.Get("Message-Id"))
	return strings.TrimSuffix(strings.TrimPrefix(v, "<"), ">")
}

// closeOnCancel closes c if ctx ends before the returned function is called.
func closeOnCancel(ctx context.Context, c *imapclient.Client) (stop func() bool) {
	return context.AfterFunc(ctx, func() { c.Close() })
}

func imapFailed(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s was stopped, and the connection closed: %w", what, context.Cause(ctx))
	}
	var ie *imap.Error
	if errors.As(err, &ie) {
		return fmt.Errorf("the server refused %s (%s): %w", what, strings.TrimSpace(ie.Text), err)
	}
	return fmt.Errorf("%s failed; check the connection and try again: %w", what, err)
}

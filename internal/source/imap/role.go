package imap

import (
	"context"
	"fmt"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// Roles FindRole and RoleFolder know: the special-use attribute (RFC 6154), the conventional
// names in order of preference (compared without regard to case, alone or under INBOX; the
// first is the name FindRole creates), and whether FindRole may create the folder.
var roles = map[string]struct {
	attr   imap.MailboxAttr
	names  []string
	create bool
}{
	source.RoleDrafts:  {imap.MailboxAttrDrafts, []string{"Drafts"}, true},
	source.RoleSent:    {imap.MailboxAttrSent, []string{"Sent", "Sent Items", "Sent Messages"}, true},
	source.RoleArchive: {imap.MailboxAttrArchive, []string{"Archive", "Archives"}, false},
	source.RoleJunk:    {imap.MailboxAttrJunk, []string{"Junk", "Spam", "Junk E-mail", "Junk Email", "Bulk Mail"}, false},
	source.RoleTrash:   {imap.MailboxAttrTrash, []string{"Trash", "Deleted Items", "Deleted Messages", "Bin"}, false},
}

// RoleFolder returns the mailbox for role (drafts, sent, archive, junk or trash) as FindRole
// finds it: by special-use attribute, else by a conventional name (Archive, Archives; Junk,
// Spam, Junk E-mail, Junk Email, Bulk Mail; Trash, Deleted Items, Deleted Messages, Bin; also
// under INBOX). It never creates one: ok is false when the account has none.
func RoleFolder(ctx context.Context, c *imapclient.Client, role string) (string, bool, error) {
	r, ok := roles[role]
	if !ok {
		return "", false, fmt.Errorf("no folder role %q; it is drafts, sent, archive, junk or trash", role)
	}
	defer closeOnCancel(ctx, c)()
	list, err := listAll(c)
	if err != nil {
		return "", false, imapFailed(ctx, "listing the folders", err)
	}
	name, ok := pick(list, r.attr, r.names)
	return name, ok, nil
}

// FindRole returns the mailbox for role ("drafts" or "sent"): the one with the special-use
// attribute \Drafts or \Sent, else one with a conventional name (Drafts; Sent, Sent Items,
// Sent Messages; without regard to case, also under INBOX as in INBOX.Sent), else it creates
// "Drafts" or "Sent" in the personal namespace, with the special-use attribute when the server
// supports CREATE-SPECIAL-USE, subscribes to it, and returns it.
func FindRole(ctx context.Context, c *imapclient.Client, role string) (string, error) {
	r, ok := roles[role]
	if !ok || !r.create {
		return "", fmt.Errorf("no folder role %q to find or make; it is drafts or sent", role)
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

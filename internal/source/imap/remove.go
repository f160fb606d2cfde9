package imap

import (
	"bytes"
	"context"
	"fmt"
	"net/mail"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// RemoveByMessageID removes from mailbox the messages whose Message-ID header is msgid (with or
// without angle brackets) and returns how many it removed. It selects mailbox (which stays
// selected), finds candidates with UID SEARCH HEADER Message-ID, keeps those whose header is
// exactly msgid (SEARCH matches substrings), marks them \Deleted and removes them with UID
// EXPUNGE. Without UIDPLUS it changes nothing and returns an error wrapping
// source.ErrNeedsExpunge: a plain EXPUNGE would also remove any other message in mailbox
// already marked \Deleted.
func RemoveByMessageID(ctx context.Context, c *imapclient.Client, mailbox, msgid string) (int, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(msgid), "<"), ">")
	if id == "" || strings.ContainsAny(id, "<>\r\n") {
		return 0, fmt.Errorf("%q is not a Message-ID", msgid)
	}
	if !c.Caps().Has(imap.CapUIDPlus) {
		return 0, fmt.Errorf("removing the message <%s> from %q: %w", id, mailbox, source.ErrNeedsExpunge)
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
	return deleteExactly(ctx, c, mailbox, match)
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

package imap

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// Fetch returns the exact bytes of message uid of mailbox, which it selects read-only. Past
// the SELECT, its errors are a *source.ReadError, source.ErrGone or source.ErrEmpty. Unlike
// the other actions it does not close c when ctx ends.
func Fetch(ctx context.Context, c *imapclient.Client, mailbox string, uid imap.UID) ([]byte, error) {
	if _, err := c.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return nil, fmt.Errorf("cannot open %s on the server (%v); sync and try again", mailbox, err)
	}
	sec := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
	if err != nil {
		return nil, &source.ReadError{Err: err}
	}
	if len(msgs) == 0 {
		return nil, source.ErrGone
	}
	raw := msgs[0].FindBodySection(sec)
	if raw == nil {
		return nil, source.ErrEmpty
	}
	return raw, nil
}

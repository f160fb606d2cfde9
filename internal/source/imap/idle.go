package imap

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// Idle logs in, selects INBOX read-only and waits in IMAP IDLE (RFC 2177; go-imap restarts it
// before servers' 30-minute timeout), calling changed once IDLE runs (what came between the
// caller's last sync and now is then not missed) and whenever the server says INBOX changed:
// a message came or went, or its flags changed. changed must not block. Idle returns nil when
// ctx ends, else why the connection ended, in a sentence; it never writes to the mailbox.
func (s *Source) Idle(ctx context.Context, changed func()) error {
	h := &imapclient.UnilateralDataHandler{
		Expunge: func(uint32) { changed() },
		Mailbox: func(d *imapclient.UnilateralDataMailbox) {
			if d.NumMessages != nil {
				changed()
			}
		},
		Fetch: func(m *imapclient.FetchMessageData) {
			m.Collect() // read to the end: the connection goes on after it
			changed()
		},
	}
	c, err := dial(ctx, s.a, h)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if caps := c.Caps(); !caps.Has(imap.CapIdle) && !caps.Has(imap.CapIMAP4rev2) {
		c.Logout()
		return source.ErrNoIdle
	}
	if _, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("cannot open INBOX of account %s to wait for new mail: %v", s.a.Name, err)
	}
	idle, err := c.Idle()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("the server %s refused to wait for new mail (IDLE) for account %s: %v", s.a.Server, s.a.Name, err)
	}
	changed()
	select {
	case <-ctx.Done():
		idle.Close()
		return nil
	case <-c.Closed():
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("the connection to %s for account %s closed while waiting for new mail", s.a.Server, s.a.Name)
	}
}

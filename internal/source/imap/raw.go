package imap

import (
	"context"

	"github.com/emersion/go-imap/v2"

	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

var _ source.Reader = (*Source)(nil)

// Raw fetches the message uid of folder from the server on a connection of its own, with
// BODY.PEEK on a read-only SELECT, so that reading it marks nothing read.
func (s *Source) Raw(ctx context.Context, _ *store.Store, folder string, uid uint32) ([]byte, error) {
	c, err := Dial(ctx, s.a)
	if err != nil {
		return nil, err
	}
	defer c.Logout()
	return Fetch(ctx, c, folder, imap.UID(uid))
}

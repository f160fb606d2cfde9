package imap

import (
	"context"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// State returns the flags and modseq (0 without CONDSTORE) of the messages uids of folder,
// which it selects read-only after checking its UIDVALIDITY; uids the folder no longer holds
// are left out. It changes nothing on the server: dry runs and undo's "changed since" use it.
func State(ctx context.Context, c *imapclient.Client, folder string, uidValidity uint32, uids []uint32) (map[uint32]source.MessageState, error) {
	defer closeOnCancel(ctx, c)()
	if _, err := openFolder(ctx, c, folder, uidValidity, true); err != nil {
		return nil, err
	}
	return fetchStates(ctx, c, folder, uidSet(uids))
}

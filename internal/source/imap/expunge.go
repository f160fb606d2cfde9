package imap

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// Expunge removes exactly the messages uids of folder for good, after checking its
// UIDVALIDITY: it marks them \Deleted and removes them with UID EXPUNGE, and says how many
// the server removed. Without UIDPLUS it changes nothing and returns an error wrapping
// source.ErrNeedsExpunge, never a plain EXPUNGE (which would also remove the messages
// another mail program marked deleted). Uids the folder no longer holds are passed over.
func Expunge(ctx context.Context, c *imapclient.Client, folder string, uidValidity uint32, uids []uint32) (int, error) {
	if !c.Caps().Has(imap.CapUIDPlus) {
		return 0, fmt.Errorf("removing messages from %q: %w", folder, source.ErrNeedsExpunge)
	}
	defer closeOnCancel(ctx, c)()
	if _, err := openFolder(ctx, c, folder, uidValidity, false); err != nil {
		return 0, err
	}
	states, err := fetchStates(ctx, c, folder, uidSet(uids))
	if err != nil || len(states) == 0 {
		return 0, err
	}
	var present imap.UIDSet
	for uid := range states {
		present.AddNum(imap.UID(uid))
	}
	return deleteExactly(ctx, c, folder, present)
}

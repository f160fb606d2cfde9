package imap

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// What the actions on messages (State, SetFlags, Move, Expunge) share: they name messages by
// the store's (folder, UIDVALIDITY, uid) and act only when the folder's UIDVALIDITY is still
// that one, since otherwise the uids name other messages.

// openFolder selects folder (read-only when readOnly), with CONDSTORE when the server offers
// it, and refuses with an error wrapping source.ErrStale when its UIDVALIDITY is not
// uidValidity.
func openFolder(ctx context.Context, c *imapclient.Client, folder string, uidValidity uint32, readOnly bool) (*imap.SelectData, error) {
	if uidValidity == 0 {
		return nil, fmt.Errorf("no UIDVALIDITY was given for the folder %q; run postern sync and try again", folder)
	}
	opts := &imap.SelectOptions{ReadOnly: readOnly, CondStore: c.Caps().Has(imap.CapCondStore)}
	data, err := c.Select(folder, opts).Wait()
	if err != nil {
		return nil, imapFailed(ctx, fmt.Sprintf("opening the folder %q", folder), err)
	}
	if data.UIDValidity != uidValidity {
		return nil, fmt.Errorf("the folder %q has a new UIDVALIDITY (%d; the store has %d): %w", folder, data.UIDValidity, uidValidity, source.ErrStale)
	}
	return data, nil
}

// uidSet is the set of uids, without zeros; empty when none is left.
func uidSet(uids []uint32) imap.UIDSet {
	var set imap.UIDSet
	for _, u := range uids {
		if u != 0 {
			set.AddNum(imap.UID(u))
		}
	}
	return set
}

// fetchStates reads the flags (and modseq, with CONDSTORE) of the messages of set in the
// selected folder; a uid the folder no longer holds is absent.
func fetchStates(ctx context.Context, c *imapclient.Client, folder string, set imap.UIDSet) (map[uint32]source.MessageState, error) {
	out := map[uint32]source.MessageState{}
	if len(set) == 0 {
		return out, nil
	}
	msgs, err := c.Fetch(set, &imap.FetchOptions{UID: true, Flags: true, ModSeq: c.Caps().Has(imap.CapCondStore)}).Collect()
	if err != nil {
		return nil, imapFailed(ctx, fmt.Sprintf("reading the flags of the messages in %q", folder), err)
	}
	for _, m := range msgs {
		if m.UID != 0 {
			out[uint32(m.UID)] = source.MessageState{Flags: flagStrings(m.Flags), ModSeq: m.ModSeq}
		}
	}
	return out, nil
}

// gone is the uids of asked that are not keys of found, sorted, without repeats.
func gone[V any](asked []uint32, found map[uint32]V) []uint32 {
	var out []uint32
	for _, u := range asked {
		if _, ok := found[u]; !ok && u != 0 {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// flagStrings is fs as strings, sorted, \Recent left out (no client may set or clear it).
func flagStrings(fs []imap.Flag) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if !strings.EqualFold(string(f), `\Recent`) {
			out = append(out, string(f))
		}
	}
	slices.Sort(out)
	return out
}

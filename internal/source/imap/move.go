package imap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// Move moves exactly the messages uids of folder to dest, after checking folder's
// UIDVALIDITY. It uses MOVE when the server offers it, else UID COPY, STORE +FLAGS.SILENT
// \Deleted and UID EXPUNGE of exactly those uids (UIDPLUS). With neither it changes nothing
// and returns an error wrapping source.ErrNeedsExpunge: a plain EXPUNGE would also remove
// the messages another mail program marked deleted in folder. (Checking first that no other
// message carries \Deleted would not do: another client may mark one between the check and
// the EXPUNGE.)
//
// Moved gives dest's UIDVALIDITY and each moved uid's uid in dest: from the server's COPYUID
// when it sends one, else found afterwards by Message-ID among the messages dest received
// (0 when that is not one message). Uids folder no longer holds are in Gone, not an error.
func Move(ctx context.Context, c *imapclient.Client, folder string, uidValidity uint32, uids []uint32, dest string) (source.Moved, error) {
	res := source.Moved{UIDs: map[uint32]uint32{}}
	if dest == "" {
		return res, errors.New("no folder to move the messages to was given")
	}
	if dest == folder {
		return res, fmt.Errorf("the messages are already in %q; choose another folder", dest)
	}
	useMove, uidPlus := c.Caps().Has(imap.CapMove), c.Caps().Has(imap.CapUIDPlus)
	if !useMove && !uidPlus {
		return res, fmt.Errorf("moving messages out of %q needs MOVE or UIDPLUS: %w", folder, source.ErrNeedsExpunge)
	}
	defer closeOnCancel(ctx, c)()
	before, err := c.Status(dest, &imap.StatusOptions{UIDNext: true, UIDValidity: true}).Wait()
	if err != nil {
		var ie *imap.Error
		if ctx.Err() == nil && errors.As(err, &ie) && ie.Type == imap.StatusResponseTypeNo {
			return res, fmt.Errorf("the folder %q cannot be opened on the server (%s), so nothing was moved; check its name, or create it: %w", dest, strings.TrimSpace(ie.Text), err)
		}
		return res, destFailed(ctx, dest, err)
	}
	res.UIDValidity = before.UIDValidity
	if _, err := openFolder(ctx, c, folder, uidValidity, false); err != nil {
		return res, err
	}
	ids, err := fetchMessageIDs(ctx, c, folder, uidSet(uids))
	if err != nil {
		return res, err
	}
	res.Gone = gone(uids, ids)
	var present imap.UIDSet
	for uid := range ids {
		present.AddNum(imap.UID(uid))
	}
	if len(present) == 0 {
		return res, nil
	}

	var copied imap.CopyData
	if useMove {
		md, err := c.Move(present, dest).Wait()
		if err != nil {
			return res, destFailed(ctx, dest, err)
		}
		copied = imap.CopyData{UIDValidity: md.UIDValidity}
		copied.SourceUIDs, _ = md.SourceUIDs.(imap.UIDSet)
		copied.DestUIDs, _ = md.DestUIDs.(imap.UIDSet)
	} else {
		cd, err := c.Copy(present, dest).Wait()
		if err != nil {
			return res, destFailed(ctx, dest, err)
		}
		copied = *cd
		remove := present
		if len(copied.SourceUIDs) > 0 {
			remove = copied.SourceUIDs // exactly the messages copied
		}
		if _, err := deleteExactly(ctx, c, folder, remove); err != nil {
			return res, fmt.Errorf("the messages were copied to %q but are still in %q too: %w", dest, folder, err)
		}
	}

	if src, dst := expand(copied.SourceUIDs), expand(copied.DestUIDs); len(src) > 0 && len(src) == len(dst) {
		// The server lists both in ascending order (go-imap sorts them too): the copies get
		// their uids in the order of the originals'.
		res.UIDValidity = copied.UIDValidity
		for i, s := range src {
			if _, ok := ids[s]; ok {
				res.UIDs[s] = dst[i]
			}
		}
		for uid := range ids {
			if _, ok := res.UIDs[uid]; !ok {
				res.Gone = append(res.Gone, uid) // expunged by another client meanwhile
			}
		}
		slices.Sort(res.Gone)
		return res, nil
	}
	for uid := range ids {
		res.UIDs[uid] = 0
	}
	if err := findCopies(ctx, c, dest, before.UIDNext, ids, &res); err != nil {
		return res, fmt.Errorf("the messages were moved to %q, but their new uids could not be read: %w", dest, err)
	}
	return res, nil
}

// deleteExactly marks the messages set of the selected folder \Deleted and removes exactly
// them with UID EXPUNGE, saying how many the server removed; when the removal fails it tries
// to take the mark off again.
func deleteExactly(ctx context.Context, c *imapclient.Client, folder string, set imap.UIDSet) (int, error) {
	if !c.Caps().Has(imap.CapUIDPlus) {
		return 0, source.ErrNeedsExpunge
	}
	del := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
	if err := c.Store(set, del, nil).Close(); err != nil {
		return 0, imapFailed(ctx, fmt.Sprintf("marking the messages deleted in %q", folder), err)
	}
	gone, err := c.UIDExpunge(set).Collect()
	if err != nil {
		if ctx.Err() == nil {
			undo := &imap.StoreFlags{Op: imap.StoreFlagsDel, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
			_ = c.Store(set, undo, nil).Close()
		}
		return 0, imapFailed(ctx, fmt.Sprintf("removing the messages from %q", folder), err)
	}
	return len(gone), nil
}

// fetchMessageIDs reads the Message-ID (without angle brackets; "" when it has none) of each
// message of set in the selected folder; a uid the folder no longer holds is absent.
func fetchMessageIDs(ctx context.Context, c *imapclient.Client, folder string, set imap.UIDSet) (map[uint32]string, error) {
	out := map[uint32]string{}
	if len(set) == 0 {
		return out, nil
	}
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-ID"}, Peek: true}
	msgs, err := c.Fetch(set, &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil, imapFailed(ctx, fmt.Sprintf("reading the Message-IDs of the messages in %q", folder), err)
	}
	for _, m := range msgs {
		if m.UID != 0 {
			out[uint32(m.UID)] = headerMessageID(m.FindBodySection(section))
		}
	}
	return out, nil
}

// findCopies fills res.UIDs for a move the server gave no COPYUID for: it opens dest
// read-only and matches the Message-IDs of the messages it received (uid uidNext and above)
// with those of the originals, where each side holds that Message-ID once.
func findCopies(ctx context.Context, c *imapclient.Client, dest string, uidNext imap.UID, ids map[uint32]string, res *source.Moved) error {
	sel, err := c.Select(dest, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return imapFailed(ctx, fmt.Sprintf("opening the folder %q", dest), err)
	}
	if uidNext == 0 || sel.UIDValidity != res.UIDValidity {
		uidNext = 1 // dest was renumbered meanwhile (or STATUS said nothing): look at all of it
	}
	res.UIDValidity = sel.UIDValidity
	var set imap.UIDSet
	set.AddRange(uidNext, 0) // uidNext:*, which holds the last message even when it is older
	got, err := fetchMessageIDs(ctx, c, dest, set)
	if err != nil {
		return err
	}
	byID := func(m map[uint32]string, from imap.UID) map[string][]uint32 {
		out := map[string][]uint32{}
		for uid, id := range m {
			if id != "" && imap.UID(uid) >= from {
				out[id] = append(out[id], uid)
			}
		}
		return out
	}
	src, dst := byID(ids, 0), byID(got, uidNext)
	for id, s := range src {
		if d := dst[id]; len(s) == 1 && len(d) == 1 {
			res.UIDs[s[0]] = d[0]
		}
	}
	return nil
}

// expand is the uids of a static set, ascending; nil for an empty or dynamic one.
func expand(set imap.UIDSet) []uint32 {
	nums, ok := set.Nums()
	if !ok {
		return nil
	}
	out := make([]uint32, len(nums))
	for i, n := range nums {
		out[i] = uint32(n)
	}
	return out
}

// destFailed is the sentence for a STATUS, MOVE or COPY to dest that failed.
func destFailed(ctx context.Context, dest string, err error) error {
	var ie *imap.Error
	if ctx.Err() == nil && errors.As(err, &ie) && (ie.Code == imap.ResponseCodeTryCreate || ie.Code == imap.ResponseCodeNonExistent) {
		return fmt.Errorf("the folder %q does not exist on the server, so nothing was moved; create it or choose another: %w", dest, err)
	}
	return imapFailed(ctx, fmt.Sprintf("moving the messages to %q", dest), err)
}

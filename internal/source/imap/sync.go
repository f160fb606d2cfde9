package imap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// Sync brings the store's copy of account a up to date.
func Sync(ctx context.Context, st *store.Store, a Account, opt source.Options) (*source.Result, error) {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 500
	}
	accountID, err := st.EnsureAccount(ctx, a.Name, "imap")
	if err != nil {
		return nil, err
	}
	c, err := Dial(ctx, a)
	if err != nil {
		return nil, err
	}
	s := &syncer{st: st, c: c, a: a, opt: opt, accountID: accountID, res: &source.Result{}, warns: source.NewWarnings(ctx, st, accountID, opt)}
	s.current.Store(c)
	defer func() { s.current.Load().Close() }()
	// ctx ending closes the connection, which ends every wait on the server
	// (a FETCH streaming a large message, a server that stops answering).
	stop := context.AfterFunc(ctx, func() { s.current.Load().Close() })
	defer stop()
	// SELECT … (CONDSTORE) turns CONDSTORE on for the session (RFC 7162), so no ENABLE is needed.
	s.condstore = c.Caps().Has(imap.CapCondStore)
	err = s.run(ctx)
	if err != nil && ctx.Err() != nil {
		return s.res, ctx.Err() // the connection is closed; what was committed is kept
	}
	if ctx.Err() == nil {
		s.c.Logout().Wait()
	}
	return s.res, err
}

type syncer struct {
	st        *store.Store
	c         *imapclient.Client
	a         Account
	opt       source.Options
	accountID int64
	condstore bool
	res       *source.Result
	warns     *source.Warnings
	// current is c, for the function that closes it when ctx ends (c changes when the server
	// closed the connection and the sync logs in again).
	current    atomic.Pointer[imapclient.Client]
	reconnects int
}

// maxReconnects bounds how many times one sync logs in again after the server closed the
// connection on a message it could not read.
const maxReconnects = 5

// reconnect logs in again after the server closed the connection, and selects folder f again.
func (s *syncer) reconnect(ctx context.Context, f *store.Folder) error {
	if s.reconnects >= maxReconnects {
		return fmt.Errorf("the server closed the connection %d times while sending messages of %s; see its log", s.reconnects, f.Name)
	}
	s.reconnects++
	c, err := Dial(ctx, s.a)
	if err != nil {
		return err
	}
	s.c = c
	old := s.current.Swap(c)
	old.Close()
	if ctx.Err() != nil {
		c.Close()
		return ctx.Err()
	}
	sel, err := c.Select(f.Name, &imap.SelectOptions{ReadOnly: true, CondStore: s.condstore}).Wait()
	if err != nil {
		return err
	}
	if sel.UIDValidity != f.UIDValidity {
		return fmt.Errorf("folder %s was renumbered on the server during the sync; the next sync continues", f.Name)
	}
	return nil
}

// dead says whether the connection is gone after a command failed with err (then nothing
// more can be done on it): closed, cut, or not answering a NOOP.
func (s *syncer) dead(err error) bool {
	select {
	case <-s.c.Closed():
		return true
	default:
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	return s.c.Noop().Wait() != nil
}

type remoteFolder struct {
	name  string
	delim string
	role  string
}

func (s *syncer) run(ctx context.Context) error {
	list, err := s.c.List("", "*", nil).Collect()
	if err != nil {
		return fmt.Errorf("listing the folders of %s failed: %w", s.a.Name, err)
	}
	var remote []remoteFolder
	for _, l := range list {
		if hasAttr(l.Attrs, imap.MailboxAttrNoSelect) || hasAttr(l.Attrs, imap.MailboxAttrNonExistent) {
			continue
		}
		delim := "/"
		if l.Delim != 0 {
			delim = string(l.Delim)
		}
		remote = append(remote, remoteFolder{name: l.Mailbox, delim: delim, role: role(l)})
	}
	sort.Slice(remote, func(i, j int) bool { return remote[i].name < remote[j].name })
	var places []string
	for _, r := range remote {
		places = append(places, r.name)
	}
	if err := s.warns.Places(ctx, places); err != nil {
		return err
	}
	stored, err := s.st.Folders(ctx, s.accountID)
	if err != nil {
		return err
	}
	byName := map[string]*store.Folder{}
	for _, f := range stored {
		byName[f.Name] = f
	}
	seen := map[string]bool{}
	var fresh []remoteFolder
	for _, r := range remote {
		seen[r.name] = true
		if byName[r.name] == nil {
			fresh = append(fresh, r)
		}
	}
	// Folders that vanished: renamed (a new folder with the same UIDVALIDITY) or deleted.
	var gone []*store.Folder
	for _, f := range stored {
		if !seen[f.Name] {
			gone = append(gone, f)
		}
	}
	if len(gone) > 0 && len(fresh) > 0 {
		for i, r := range fresh {
			sd, err := s.c.Status(r.name, &imap.StatusOptions{UIDValidity: true}).Wait()
			if err != nil {
				continue
			}
			for j, g := range gone {
				if g != nil && g.UIDValidity != 0 && g.UIDValidity == sd.UIDValidity {
					g.Name, g.Delim, g.Role = r.name, r.delim, r.role
					if err := s.st.SaveFolder(ctx, g); err != nil {
						return err
					}
					byName[r.name] = g
					gone[j] = nil
					fresh[i].name = ""
					s.res.Renamed++
					break
				}
			}
		}
	}
	for _, g := range gone {
		if g == nil {
			continue
		}
		if err := s.st.DeleteFolder(ctx, g.ID); err != nil {
			return err
		}
		s.res.FoldersGone++
	}
	var failed []string
	for _, r := range remote {
		f := byName[r.name]
		if f == nil {
			f = &store.Folder{AccountID: s.accountID, Name: r.name, Delim: r.delim, Role: r.role}
			if err := s.st.SaveFolder(ctx, f); err != nil {
				return err
			}
		} else if f.Role != r.role || f.Delim != r.delim {
			f.Role, f.Delim = r.role, r.delim
			if err := s.st.SaveFolder(ctx, f); err != nil {
				return err
			}
		}
		if err := s.folder(ctx, f); err != nil {
			if ctx.Err() != nil || s.dead(err) {
				return fmt.Errorf("syncing folder %s of %s: %w", f.Name, s.a.Name, err)
			}
			// A folder the server refuses does not stop the others.
			failed = append(failed, fmt.Sprintf("%s (%v)", f.Name, err))
			continue
		}
		s.res.Folders++
	}
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("syncing folder %s of %s failed; the other folders synced", failed[0], s.a.Name)
	}
	return fmt.Errorf("syncing %d folders of %s failed: %s; the other folders synced", len(failed), s.a.Name, strings.Join(failed, ", "))
}

func role(l *imap.ListData) string {
	for _, a := range l.Attrs {
		switch strings.ToLower(string(a)) {
		case `\sent`:
			return "sent"
		case `\drafts`:
			return "drafts"
		case `\trash`:
			return "trash"
		case `\junk`:
			return "junk"
		case `\archive`:
			return "archive"
		case `\all`:
			return "all"
		}
	}
	switch strings.ToLower(l.Mailbox) {
	case "inbox":
		return "inbox"
	case "sent", "sent items", "sent messages":
		return "sent"
	case "drafts":
		return "drafts"
	case "trash", "deleted items":
		return "trash"
	case "junk", "spam":
		return "junk"
	case "archive":
		return "archive"
	}
	return ""
}

// folder syncs one folder.
func (s *syncer) folder(ctx context.Context, f *store.Folder) error {
	sel, err := s.c.Select(f.Name, &imap.SelectOptions{ReadOnly: true, CondStore: s.condstore}).Wait()
	if err != nil {
		return err
	}
	if f.UIDValidity != 0 && f.UIDValidity != sel.UIDValidity {
		if err := s.renumber(ctx, f, sel); err != nil {
			return err
		}
	}
	if f.UIDValidity == 0 {
		f.UIDValidity = sel.UIDValidity
		if err := s.st.SaveFolder(ctx, f); err != nil {
			return err
		}
	}
	storedCount, err := s.st.FolderCount(ctx, f.ID)
	if err != nil {
		return err
	}
	var newUIDs []imap.UID
	if sel.NumMessages > 0 {
		newUIDs, err = s.uids(imap.UIDSet{imap.UIDRange{Start: imap.UID(f.SyncedUID + 1), Stop: 0}}, imap.UID(f.SyncedUID))
		if err != nil {
			return err
		}
	}
	if int(sel.NumMessages) != storedCount+len(newUIDs) {
		// Something was expunged, or an earlier run stopped mid-batch: compare every UID.
		all, err := s.uids(imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}, 0)
		if err != nil {
			return err
		}
		have, err := s.st.FolderUIDs(ctx, f.ID)
		if err != nil {
			return err
		}
		onServer := map[uint32]bool{}
		for _, u := range all {
			onServer[uint32(u)] = true
		}
		stored := map[uint32]bool{}
		var vanished []uint32
		for _, u := range have {
			stored[u] = true
			if !onServer[u] {
				vanished = append(vanished, u)
			}
		}
		if err := s.st.DeleteUIDs(ctx, f.ID, vanished); err != nil {
			return err
		}
		s.res.Deleted += len(vanished)
		newUIDs = newUIDs[:0]
		for _, u := range all {
			if !stored[uint32(u)] {
				newUIDs = append(newUIDs, u)
			}
		}
	}
	known := f.SyncedUID // messages stored before this run: only their flags can have changed
	if err := s.fetchNew(ctx, f, newUIDs); err != nil {
		return err
	}
	if err := s.flags(ctx, f, sel, known); err != nil {
		return err
	}
	f.UIDNext = uint32(sel.UIDNext)
	if s.condstore && sel.HighestModSeq > 0 {
		f.HighestModSeq = sel.HighestModSeq
	}
	if err := s.st.SaveFolder(ctx, f); err != nil {
		return err
	}
	return s.warns.Done(ctx, f.Name)
}

// uids lists the UIDs of set above floor.
func (s *syncer) uids(set imap.UIDSet, floor imap.UID) ([]imap.UID, error) {
	msgs, err := s.c.Fetch(set, &imap.FetchOptions{UID: true}).Collect()
	if err != nil {
		return nil, err
	}
	var out []imap.UID
	for _, m := range msgs {
		if m.UID > floor {
			out = append(out, m.UID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// renumber handles a new UIDVALIDITY: messages still there (same Message-ID and
// size) keep their rows and ids; the rest are dropped.
func (s *syncer) renumber(ctx context.Context, f *store.Folder, sel *imap.SelectData) error {
	ids, err := s.st.FolderIdentities(ctx, f.ID)
	if err != nil {
		return err
	}
	type key struct {
		mid  string
		size int64
	}
	byKey := map[key][]int64{}
	for _, x := range ids {
		if x.MessageID != "" {
			byKey[key{x.MessageID, x.Size}] = append(byKey[key{x.MessageID, x.Size}], x.ID)
		}
	}
	kept := map[int64]uint32{}
	if sel.NumMessages > 0 && len(byKey) > 0 {
		hdr := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-Id"}, Peek: true}
		cmd := s.c.Fetch(imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{hdr}})
		for {
			m := cmd.Next()
			if m == nil {
				break
			}
			buf, err := m.Collect()
			if err != nil {
				cmd.Close()
				return err
			}
			mid := ""
			for _, b := range buf.BodySection {
				mid = messageIDFromHeader(b.Bytes)
			}
			k := key{mid, buf.RFC822Size}
			if rows := byKey[k]; mid != "" && len(rows) > 0 {
				kept[rows[0]] = uint32(buf.UID)
				byKey[k] = rows[1:]
			}
		}
		if err := cmd.Close(); err != nil {
			return err
		}
	}
	var maxUID uint32
	for _, u := range kept {
		if u > maxUID {
			maxUID = u
		}
	}
	f.UIDValidity = sel.UIDValidity
	f.UIDNext = uint32(sel.UIDNext)
	f.HighestModSeq = 0
	f.SyncedUID = 0
	if len(kept) == len(ids) {
		f.SyncedUID = maxUID
	}
	s.res.Deleted += len(ids) - len(kept)
	return s.st.Renumber(ctx, f, kept)
}

func messageIDFromHeader(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, ':'); i > 0 && strings.EqualFold(strings.TrimSpace(line[:i]), "message-id") {
			v := strings.TrimSpace(line[i+1:])
			return strings.Trim(v, "<>")
		}
	}
	return ""
}

// fetchNew downloads and stores the given messages, one committed batch at a
// time. Fetching and parsing the next batch overlaps the commit of the last one.
func (s *syncer) fetchNew(ctx context.Context, f *store.Folder, uids []imap.UID) error {
	total := len(uids)
	type fetched struct {
		msgs  []store.NewMessage
		skips []skipped
		last  imap.UID
		n     int
		err   error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan fetched, 1)
	go func() {
		defer close(ch)
		for len(uids) > 0 {
			if ctx.Err() != nil {
				return
			}
			n := s.opt.BatchSize
			if n > len(uids) {
				n = len(uids)
			}
			chunk := uids[:n]
			uids = uids[n:]
			var set imap.UIDSet
			for _, u := range chunk {
				set.AddNum(u)
			}
			batch, err := s.fetchBatch(set)
			var skips []skipped
			if err != nil && ctx.Err() == nil {
				// The server refused the batch, or closed the connection on it (Dovecot
				// does on a message it cannot read): one message may be at fault. Each is
				// fetched alone, and only those that still fail are skipped.
				if s.dead(err) {
					err = s.reconnect(ctx, f)
				}
				if err == nil {
					batch, skips, err = s.fetchEach(ctx, f, chunk)
				}
			}
			select {
			case ch <- fetched{batch, skips, chunk[len(chunk)-1], n, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		cancel()
		for range ch { // let the fetcher finish before the client is used again
		}
	}()
	done := 0
	for b := range ch {
		if b.err != nil {
			return b.err
		}
		// Progress is the highest UID below which everything is stored; a
		// message the server no longer returns counts as done.
		// A message skipped is not stored: the next sync finds the folder one short and
		// asks for it again (the comparison of every UID in folder).
		for _, sk := range b.skips {
			s.warns.Add(ctx, f.Name, strconv.FormatUint(uint64(sk.uid), 10), fmt.Sprintf("Account %s, folder %s: the message with UID %d was skipped (%s); the rest synced, and the next sync tries it again",
				s.a.Name, f.Name, sk.uid, strings.TrimSuffix(sk.why, ".")))
		}
		if err := s.st.AddMessages(ctx, f, b.msgs, uint32(b.last)); err != nil {
			return err
		}
		s.res.New += len(b.msgs)
		done += b.n
		if s.opt.Progress != nil {
			s.opt.Progress(source.Progress{Account: s.a.Name, Folder: f.Name, Done: done, Total: total})
		}
		if s.opt.AfterBatch != nil {
			s.opt.AfterBatch(f.Name, len(b.msgs))
		}
	}
	return ctx.Err()
}

// skipped is a message that could not be fetched, and why.
type skipped struct {
	uid imap.UID
	why string
}

// fetchEach fetches the messages uids of f one at a time, skipping those the server will not
// give, and logging in again when it closed the connection on one. Only ctx ending, a new
// login failing, or too many of them, is an error.
func (s *syncer) fetchEach(ctx context.Context, f *store.Folder, uids []imap.UID) ([]store.NewMessage, []skipped, error) {
	var out []store.NewMessage
	var skips []skipped
	for _, u := range uids {
		var set imap.UIDSet
		set.AddNum(u)
		one, err := s.fetchBatch(set)
		if err == nil {
			out = append(out, one...)
			continue
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		why := err.Error()
		if s.dead(err) {
			why = "the server closed the connection when asked for it (" + why + ")"
			if err := s.reconnect(ctx, f); err != nil {
				return nil, nil, err
			}
		}
		skips = append(skips, skipped{u, why})
	}
	return out, skips, nil
}

var bodySection = &imap.FetchItemBodySection{Peek: true}

func (s *syncer) fetchBatch(set imap.UIDSet) ([]store.NewMessage, error) {
	cmd := s.c.Fetch(set, &imap.FetchOptions{
		UID: true, Flags: true, InternalDate: true, RFC822Size: true, ModSeq: s.condstore,
		BodySection: []*imap.FetchItemBodySection{bodySection},
	})
	var out []store.NewMessage
	for {
		m := cmd.Next()
		if m == nil {
			break
		}
		var nm store.NewMessage
		var parsed *mailparse.Message
		for {
			item := m.Next()
			if item == nil {
				break
			}
			switch it := item.(type) {
			case imapclient.FetchItemDataUID:
				nm.UID = uint32(it.UID)
			case imapclient.FetchItemDataFlags:
				nm.Flags = flagBits(it.Flags)
			case imapclient.FetchItemDataInternalDate:
				nm.InternalDate = it.Time
			case imapclient.FetchItemDataRFC822Size:
				nm.Size = it.Size
			case imapclient.FetchItemDataModSeq:
				nm.ModSeq = it.ModSeq
			case imapclient.FetchItemDataBodySection:
				if it.Literal != nil {
					p, err := mailparse.Parse(it.Literal)
					if err != nil {
						cmd.Close()
						return nil, fmt.Errorf("reading a message from the server failed: %w", err)
					}
					io.Copy(io.Discard, it.Literal)
					parsed = p
				}
			}
		}
		if nm.UID == 0 {
			continue
		}
		if parsed != nil {
			source.Fill(&nm, parsed)
			source.Judge(&nm, s.a.TrustedAuthServ)
		}
		out = append(out, nm)
	}
	if err := cmd.Close(); err != nil {
		return nil, err
	}
	return out, nil
}

func flagBits(fs []imap.Flag) int {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return store.FlagBits(names)
}

// flags mirrors flag changes: only those since the last HIGHESTMODSEQ with
// CONDSTORE, else every message's flags.
func (s *syncer) flags(ctx context.Context, f *store.Folder, sel *imap.SelectData, known uint32) error {
	if known == 0 || sel.NumMessages == 0 {
		return nil
	}
	opts := &imap.FetchOptions{UID: true, Flags: true, ModSeq: s.condstore}
	if s.condstore && f.HighestModSeq > 0 {
		if sel.HighestModSeq == f.HighestModSeq {
			return nil // nothing changed
		}
		opts.ChangedSince = f.HighestModSeq
	}
	msgs, err := s.c.Fetch(imap.UIDSet{imap.UIDRange{Start: 1, Stop: imap.UID(known)}}, opts).Collect()
	if err != nil {
		return err
	}
	ups := make([]store.FlagUpdate, 0, len(msgs))
	for _, m := range msgs {
		ups = append(ups, store.FlagUpdate{UID: uint32(m.UID), Flags: flagBits(m.Flags), ModSeq: m.ModSeq})
	}
	before := s.res.FlagsChanged
	if err := s.st.UpdateFlags(ctx, f.ID, ups, 0); err != nil {
		return err
	}
	if opts.ChangedSince > 0 {
		s.res.FlagsChanged = before + len(ups)
	}
	return nil
}

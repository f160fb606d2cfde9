package actions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// MailUndo implements mail_undo: each message of the action goes back where it
// was, with the flags it had, when it is still as the action left it. The undo
// is logged as an action of its own whose items are the action's reversed, so
// undoing it does the action again. The work is done a folder at a time: one
// State, one STORE per flag change and one MOVE per folder to go back to.
//
// Given a backup's id (b…) instead, it restores that deleted message (restoreAction).
func (s *Actions) MailUndo(ctx context.Context, a *generated.MailUndoArgs) (*generated.ActionResult, error) {
	if strings.HasPrefix(a.ID, "b") {
		return s.restoreAction(ctx, a)
	}
	st, act, err := s.loggedAction(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	if act.Preview {
		return nil, fmt.Errorf("%s holds only the rows of a dry run, which changed nothing, so there is nothing to undo", a.ID)
	}
	if act.UndoneBy != 0 {
		return nil, fmt.Errorf("action %s was already undone by %s; undo that one to do it again", a.ID, store.EncodeActionID(act.UndoneBy))
	}
	if len(act.DAV) > 0 {
		return s.undoDAV(ctx, st, act, a.ID, a.DryRun)
	}
	if err := s.Kit.RefuseKeptItems(ctx, st, act.Items); err != nil {
		return nil, err
	}
	res := &generated.ActionResult{Action: "undo " + a.ID, Messages: []generated.ActionRow{}}
	log := &store.Action{At: time.Now().UTC(), Tool: generated.ToolMailUndo, What: "undo " + a.ID + " (" + act.What + ")",
		Client: kit.ClientName(ctx), Undoes: act.ID}
	rows := make([]generated.ActionRow, len(act.Items))
	for i, it := range act.Items {
		rows[i] = generated.ActionRow{ID: store.EncodeID(it.Message), Subject: it.Subject, From: it.ToFolder, To: it.FromFolder, Outcome: outPutBack}
		if it.FromFolder == it.ToFolder {
			rows[i].To = ""
		}
		if it.FromFolder == "" {
			rows[i].ID = store.EncodeBackupID(it.Backup)
			rows[i].Outcome, rows[i].Reason = outNothingToUndo, "a restored message is removed with "+generated.ToolMailMove+" to trash"
		}
	}
	if !a.DryRun {
		sessions := map[string]source.Session{}
		defer func() {
			for _, c := range sessions {
				c.Close()
			}
		}()
		// Folder by folder, in the order the action first met them.
		type key struct {
			account, folder string
			uidv            uint32
		}
		groups := map[key][]int{}
		var keys []key
		for i, it := range act.Items {
			if it.FromFolder == "" {
				continue
			}
			k := key{it.Account, it.ToFolder, it.ToUIDValidity}
			if groups[k] == nil {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], i)
		}
		for _, k := range keys {
			idx := groups[k]
			c, err := s.session(ctx, sessions, k.account)
			if err == nil {
				err = s.undoFolder(ctx, st, c, act.Items, idx, rows, log)
			}
			if err != nil {
				for _, i := range idx {
					if rows[i].Outcome == outPutBack {
						rows[i].Outcome, rows[i].Reason, rows[i].To = outFailed, trimSentence(err.Error()), ""
					}
				}
			}
		}
	}
	senders, err := st.MessageSenders(ctx, itemMessages(act.Items))
	if err != nil {
		return nil, err
	}
	all := make([]answerRow, len(rows))
	for i, r := range rows {
		all[i] = answerRow{row: r, message: act.Items[i].Message, sender: senders[act.Items[i].Message]}
		if act.Items[i].FromFolder == "" {
			all[i].message = 0 // the row names the backup
		}
	}
	log.Accounts = act.Accounts
	if a.DryRun {
		res.DryRun = kit.Ptr(true)
		if err := s.shortAnswer(ctx, st, res, all, log); err != nil {
			return nil, err
		}
		return res, nil
	}
	log.Count, log.Rows = len(log.Items), loggedRows(all)
	if err := st.RecordAction(ctx, log); err != nil {
		return nil, fmt.Errorf("the messages were put back but the action log could not be written (%v)", err)
	}
	res.ActionID = store.EncodeActionID(log.ID)
	if err := s.shortAnswer(ctx, st, res, all, log); err != nil {
		return nil, err
	}
	return res, nil
}

// itemMessages are the store's ids of items' messages.
func itemMessages(items []store.ActionItem) []int64 {
	out := make([]int64, 0, len(items))
	for _, it := range items {
		out = append(out, it.Message)
	}
	return out
}

func (s *Actions) loggedAction(ctx context.Context, id string) (*store.Store, *store.Action, error) {
	n, ok := store.DecodeActionID(id)
	if !ok {
		return nil, nil, fmt.Errorf("%q is not an action id; %s lists them", id, generated.ToolMailActions)
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	act, err := st.LoggedAction(ctx, n)
	if errors.Is(err, store.ErrNoAction) {
		return nil, nil, fmt.Errorf("there is no action %s; %s lists them", id, generated.ToolMailActions)
	}
	if err != nil {
		return nil, nil, err
	}
	visible, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, acct := range act.Accounts {
		if acct != "" && !slices.Contains(visible, acct) {
			return nil, nil, fmt.Errorf("there is no action %s; %s lists them", id, generated.ToolMailActions)
		}
	}
	return st, act, nil
}

// undoFolder puts back the items idx of one folder (where the action left them),
// writing each one's outcome in rows and what undoes the undo in log.
func (s *Actions) undoFolder(ctx context.Context, st *store.Store, c source.Session, items []store.ActionItem, idx []int, rows []generated.ActionRow, log *store.Action) error {
	first := items[idx[0]]
	// A later action, undone since, may have put the message back into this folder under a new
	// UID: the store follows every move postern makes (MoveStored keeps the message's id), so
	// where it says the message is now, in the folder this action left it in, is where it is.
	for _, i := range idx {
		if items[i].ToUID == 0 {
			continue
		}
		if row, err := st.Message(ctx, items[i].Message, nil); err == nil && row.UID != 0 && row.UID != items[i].ToUID && row.Folder == items[i].ToFolder {
			items[i].ToUID = row.UID
		}
	}
	var uids []uint32
	for _, i := range idx {
		if items[i].ToUID != 0 {
			uids = append(uids, items[i].ToUID)
		}
	}
	state := map[uint32]source.MessageState{}
	if len(uids) > 0 {
		var err error
		state, err = c.State(ctx, first.ToFolder, first.ToUIDValidity, uids)
		if errors.Is(err, source.ErrStale) {
			state, err = map[uint32]source.MessageState{}, nil // renumbered: nothing is where the action left it
		}
		if err != nil {
			return err
		}
	}
	backOf := func(it store.ActionItem, now source.MessageState) store.ActionItem {
		back := it
		back.FromFolder, back.FromUID, back.FromUIDValidity = it.ToFolder, it.ToUID, it.ToUIDValidity
		back.ToFolder, back.ToUID, back.ToUIDValidity = it.FromFolder, it.FromUID, it.FromUIDValidity
		back.FlagsBefore, back.FlagsAfter, back.Backup = now.Flags, it.FlagsBefore, 0
		return back
	}
	// Flag changes to take back, grouped by what they add and remove.
	type change struct{ add, remove string }
	flagGroups := map[change][]int{}
	var changes []change
	moves := map[string][]int{} // folder to go back to → items
	var dests []string
	for _, i := range idx {
		it := items[i]
		now, present := state[it.ToUID]
		if !present {
			if it.Backup != 0 {
				if _, err := s.restoreBackup(ctx, st, c, it.Backup, it.FromFolder, &rows[i]); err != nil {
					rows[i].Outcome, rows[i].Reason, rows[i].To = outFailed, trimSentence(err.Error()), ""
				}
				continue
			}
			rows[i].Outcome, rows[i].Reason, rows[i].To = outGone, "it is no longer in "+it.ToFolder+" on the server", ""
			continue
		}
		isMark := it.FromFolder == it.ToFolder
		if isMark && sameSet(now.Flags, it.FlagsBefore) {
			rows[i].Outcome, rows[i].Reason = outNothingToUndo, "its flags are already as they were"
			continue
		}
		if isMark && !sameSet(now.Flags, it.FlagsAfter) {
			rows[i].Outcome, rows[i].Reason = outChangedSince, "its flags were changed since, so they were left alone"
			continue
		}
		add, remove := flagDiff(it.FlagsAfter, it.FlagsBefore)
		if len(add)+len(remove) > 0 {
			k := change{strings.Join(add, " "), strings.Join(remove, " ")}
			if flagGroups[k] == nil {
				changes = append(changes, k)
			}
			flagGroups[k] = append(flagGroups[k], i)
		}
		if !isMark {
			if moves[it.FromFolder] == nil {
				dests = append(dests, it.FromFolder)
			}
			moves[it.FromFolder] = append(moves[it.FromFolder], i)
		}
	}
	for _, k := range changes {
		group := flagGroups[k]
		var gu []uint32
		var since uint64
		for _, i := range group {
			gu = append(gu, items[i].ToUID)
			since = max(since, state[items[i].ToUID].ModSeq)
		}
		fl, err := c.SetFlags(ctx, first.ToFolder, first.ToUIDValidity, gu, strings.Fields(k.add), strings.Fields(k.remove), since)
		if err != nil {
			return err
		}
		for _, i := range group {
			it := items[i]
			if slices.Contains(fl.Changed, it.ToUID) || slices.Contains(fl.Gone, it.ToUID) {
				rows[i].Outcome, rows[i].Reason, rows[i].To = outChangedSince, "it changed on the server meanwhile, so it was left alone", ""
				moves[it.FromFolder] = slices.DeleteFunc(moves[it.FromFolder], func(j int) bool { return j == i })
				continue
			}
			if it.FromFolder == it.ToFolder { // a mark: done
				after := fl.After[it.ToUID]
				if err := st.SetStoredFlags(ctx, it.Message, store.FlagBits(after.Flags), after.ModSeq); err != nil {
					return err
				}
				back := backOf(it, state[it.ToUID])
				back.FlagsAfter = after.Flags
				log.Items = append(log.Items, back)
			}
		}
	}
	for _, folder := range dests {
		group := moves[folder]
		if len(group) == 0 {
			continue
		}
		dest, err := st.FolderNamed(ctx, first.Account, folder)
		if err != nil {
			return err
		}
		if dest == nil {
			for _, i := range group {
				rows[i].Outcome, rows[i].To = outFailed, ""
				rows[i].Reason = "the folder " + folder + " it came from is no longer stored; run " + generated.ToolMailSync + " and move it with " + generated.ToolMailMove
			}
			continue
		}
		var gu []uint32
		for _, i := range group {
			gu = append(gu, items[i].ToUID)
		}
		mv, err := c.Move(ctx, first.ToFolder, first.ToUIDValidity, gu, folder)
		if err != nil {
			for _, i := range group {
				rows[i].Outcome, rows[i].Reason, rows[i].To = outFailed, trimSentence(err.Error()), ""
			}
			continue
		}
		for _, i := range group {
			it := items[i]
			if slices.Contains(mv.Gone, it.ToUID) {
				rows[i].Outcome, rows[i].Reason, rows[i].To = outGone, "it is no longer in "+it.ToFolder+" on the server", ""
				continue
			}
			nu := mv.UIDs[it.ToUID]
			if mv.UIDValidity != 0 && dest.UIDValidity != 0 && mv.UIDValidity != dest.UIDValidity {
				nu = 0
			}
			if err := st.MoveStored(ctx, it.Message, dest, nu); err != nil {
				return err
			}
			back := backOf(it, state[it.ToUID])
			back.ToUID, back.ToUIDValidity = nu, mv.UIDValidity
			log.Items = append(log.Items, back)
		}
	}
	return nil
}

// restoreBackup appends a backup's bytes to folder (INBOX when it is gone).
func (s *Actions) restoreBackup(ctx context.Context, st *store.Store, c source.Session, id int64, folder string, row *generated.ActionRow) (*store.ActionItem, error) {
	b, err := st.BackupByID(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("its backup b%d is gone, so it cannot be restored", id)
	}
	raw, err := os.ReadFile(b.File)
	if err != nil {
		return nil, fmt.Errorf("cannot read its backup %s (%v)", b.File, err)
	}
	if folder == "" {
		folder = b.Folder
	}
	if f, err := st.FolderNamed(ctx, b.Account, folder); err != nil {
		return nil, err
	} else if f == nil {
		folder = "INBOX"
	}
	if err := c.Append(ctx, folder, store.FlagBits(b.Flags), b.Date, raw); err != nil {
		return nil, err
	}
	row.Outcome, row.To = outRestored, folder
	row.Reason = "the server no longer had it; put back from its backup " + store.EncodeBackupID(b.ID) + " (it gets a new id at the next sync)"
	return nil, nil
}

// flagDiff is what to add and remove to go from flags have to flags want.
func flagDiff(have, want []string) (add, remove []string) {
	for _, f := range want {
		if !containsFold(have, f) {
			add = append(add, f)
		}
	}
	for _, f := range have {
		if !containsFold(want, f) && f != `\Recent` {
			remove = append(remove, f)
		}
	}
	return add, remove
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if equalFold(x, s) {
			return true
		}
	}
	return false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func sameSet(a, b []string) bool {
	add, remove := flagDiff(a, b)
	return len(add) == 0 && len(remove) == 0
}

func allVisible(accounts, visible []string) bool {
	for _, a := range accounts {
		if a != "" && !slices.Contains(visible, a) {
			return false
		}
	}
	return true
}

func joinAccounts(as []string) string {
	out := ""
	for _, a := range as {
		if a == "" {
			continue
		}
		if out != "" {
			out += ", "
		}
		out += a
	}
	return out
}

package actions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
)

// backupList is mail_actions with backups: a page of the kept backups of deleted
// mail, newest first.
func (s *Actions) backupList(ctx context.Context, a *generated.MailActionsArgs) (*generated.ActionList, error) {
	accts, err := s.Mail.ScopeAccounts(ctx, a.Account)
	if err != nil {
		return nil, err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	before, err := kit.DecodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	bs, err := st.Backups(ctx, accts, before, a.Limit+1)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	// Kept backups are left out and counted over the account, page by page alike.
	leftOut := 0
	if acc.Active() {
		all, err := st.Backups(ctx, accts, 0, 1<<30)
		if err != nil {
			return nil, err
		}
		var shown []*store.Backup
		for _, b := range all {
			if kept, err := acc.KeepsBackup(ctx, st, b); err != nil {
				return nil, err
			} else if kept {
				leftOut++
			} else if before == 0 || b.ID < before {
				shown = append(shown, b)
			}
		}
		bs = shown[:min(len(shown), a.Limit+1)]
	}
	res := &generated.ActionList{Actions: []generated.ActionInfo{}, Backups: []generated.BackupInfo{}, LeftOut: kit.NonZero(leftOut)}
	// A page ends at limit backups or about SmallAnswer bytes, whichever comes first.
	empty := &generated.ActionList{Actions: []generated.ActionInfo{}, Backups: []generated.BackupInfo{}}
	budget := SmallAnswer - AnswerSize(res)
	for i, b := range bs {
		if i == a.Limit {
			res.NextCursor = kit.EncodeCursor(bs[i-1].ID)
			break
		}
		info := generated.BackupInfo{Backup: store.EncodeBackupID(b.ID), Account: b.Account, Folder: shorten(b.Folder, shownString),
			Subject: shorten(b.Subject, shownString), Saved: b.Saved.Format("2006-01-02 15:04"), Size: int(b.Size)}
		if b.From != "" {
			info.From = shorten(b.From, shownString)
		}
		c := AnswerSize(&generated.ActionList{Actions: []generated.ActionInfo{}, Backups: []generated.BackupInfo{info}}) - AnswerSize(empty)
		if c > budget && i > 0 {
			res.NextCursor = kit.EncodeCursor(bs[i-1].ID)
			break
		}
		budget -= c
		res.Backups = append(res.Backups, info)
	}
	return res, nil
}

func (s *Actions) backup(ctx context.Context, id string) (*store.Store, *store.Backup, error) {
	n, ok := store.DecodeBackupID(id)
	notFound := fmt.Errorf("there is no backup %s; %s with backups: true lists them", id, generated.ToolMailActions)
	if !ok {
		if acc, err := s.Access(ctx); err != nil {
			return nil, nil, err
		} else {
			return nil, nil, acc.NotFound(notFound.Error())
		}
	}
	accts, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, nil, err
	}
	b, err := st.BackupByID(ctx, n, accts)
	if errors.Is(err, store.ErrNoBackup) {
		return nil, nil, acc.NotFound(notFound.Error())
	}
	if err != nil {
		return nil, nil, err
	}
	if kept, err := acc.KeepsBackup(ctx, st, b); err != nil {
		return nil, nil, err
	} else if kept {
		return nil, nil, acc.NotFound(notFound.Error())
	}
	return st, b, nil
}

// restoreAction is mail_undo given a backup's id: the backed-up message goes back
// into the folder it was deleted from (INBOX when that is gone), as an action of
// its own, which mail_undo given its action_id removes again.
func (s *Actions) restoreAction(ctx context.Context, a *generated.MailUndoArgs) (*generated.ActionResult, error) {
	st, b, err := s.backup(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	folder := b.Folder
	if f, err := st.FolderNamed(ctx, b.Account, folder); err != nil {
		return nil, err
	} else if f == nil {
		folder = "INBOX"
	}
	res := &generated.ActionResult{Action: "restore " + a.ID, Messages: []generated.ActionRow{}}
	row := generated.ActionRow{ID: a.ID, Outcome: outRestored, To: folder, Subject: b.Subject}
	if a.DryRun {
		res.DryRun = kit.Ptr(true)
		return res, s.shortAnswer(ctx, st, res, []answerRow{{row: row}}, nil)
	}
	if _, err := os.Stat(b.File); err != nil {
		return nil, fmt.Errorf("the file of backup %s (%s) cannot be read (%v), so nothing was restored", a.ID, b.File, err)
	}
	acct, err := s.actingAccount(ctx, b.Account)
	if err != nil {
		return nil, err
	}
	c, err := mail.Connect(ctx, acct)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := s.restoreBackup(ctx, st, c, b.ID, folder, &row); err != nil {
		return nil, err
	}
	row.Reason = "put back from its backup; it shows with a new id after the next sync"
	rows := []answerRow{{row: row}}
	log := &store.Action{At: time.Now().UTC(), Tool: generated.ToolMailUndo, What: "restore " + a.ID,
		Client: kit.ClientName(ctx), Accounts: []string{b.Account}, Count: 1, Rows: loggedRows(rows),
		Items: []store.ActionItem{{Account: b.Account, MessageID: b.MessageID, Subject: b.Subject, ToFolder: folder, Backup: b.ID}}}
	if err := st.RecordAction(ctx, log); err != nil {
		return nil, err
	}
	res.ActionID = store.EncodeActionID(log.ID)
	return res, s.shortAnswer(ctx, st, res, rows, log)
}

// MailBackupsPurge implements mail_backups_purge and its commit: the backups
// older than each account's retention, removed for good once the person approves.
func (s *Actions) MailBackupsPurge(ctx context.Context, a *generated.MailBackupsPurgeArgs) (*generated.Action, error) {
	accts, err := s.Mail.ScopeAccounts(ctx, a.Account)
	if err != nil {
		return nil, err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := s.Config.Get()
	if err != nil {
		return nil, err
	}
	var old []*store.Backup
	var oldDAV []store.DAVBackup // the kept texts of events and tasks, purged alike
	var bytes int64
	for _, name := range accts {
		days := config.DefaultBackupDays
		for _, acct := range cfg.Accounts {
			if acct.Name == name {
				days = acct.BackupRetention()
			}
		}
		cut := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
		bs, err := st.BackupsBefore(ctx, []string{name}, cut)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			old = append(old, b)
			bytes += b.Size
		}
		ds, err := st.DAVBackupsBefore(ctx, []string{name}, cut)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			oldDAV = append(oldDAV, d)
			bytes += d.Size
		}
	}
	if len(old) == 0 && len(oldDAV) == 0 {
		return nil, fmt.Errorf("no backup is older than its account's retention (%d days unless backup_retention_days says otherwise), so there is nothing to purge", config.DefaultBackupDays)
	}
	ids := make([]int64, len(old))
	for i, b := range old {
		ids[i] = b.ID
	}
	account := joinAccounts(accts)
	return &generated.Action{
		Account: account,
		Preview: &generated.Prepared{Action: purgeWords(len(old), len(oldDAV), bytes)},
		Payload: struct {
			Kind string
			IDs  []int64
			DAV  []store.DAVBackup
		}{"purge_backups", ids, oldDAV},
		Run: func(ctx context.Context) (any, error) {
			res := &generated.PurgeResult{}
			for _, b := range old {
				if err := os.Remove(b.File); err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("cannot remove the backup %s (%v); %d were removed before it", b.File, err, res.Removed)
				}
				if err := st.DeleteBackup(ctx, b.ID); err != nil {
					return nil, err
				}
				res.Removed++
				res.Bytes += int(b.Size)
			}
			for _, d := range oldDAV {
				if err := os.Remove(d.File); err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("cannot remove the backup %s (%v); %d were removed before it", d.File, err, res.Removed)
				}
				if err := st.ForgetDAVBackup(ctx, d.Row); err != nil {
					return nil, err
				}
				res.Removed++
				res.Bytes += int(d.Size)
			}
			left, err := st.Backups(ctx, accts, 0, 1<<30)
			if err != nil {
				return nil, err
			}
			leftDAV, err := st.CountDAVBackups(ctx, accts)
			if err != nil {
				return nil, err
			}
			res.Kept = len(left) + leftDAV
			return res, nil
		},
	}, nil
}

// purgeWords is what a purge removes, for its preview.
func purgeWords(mail, dav int, bytes int64) string {
	var what string
	switch {
	case dav == 0:
		what = fmt.Sprintf("%d backups of deleted mail", mail)
	case mail == 0:
		what = fmt.Sprintf("%d kept texts of changed events and tasks", dav)
	default:
		what = fmt.Sprintf("%d backups of deleted mail and %d kept texts of changed events and tasks", mail, dav)
	}
	s := fmt.Sprintf("remove for good %s older than the retention (%d bytes); they cannot be restored afterwards", what, bytes)
	if dav > 0 {
		s += ", and undoing those changes can no longer put the events and tasks back"
	}
	return s
}

package mailsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/imapsync"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/store"
)

// SyncMaildir imports a local Maildir (Maildir++ folders) read-only: it never
// renames, moves or writes a file there.
func SyncMaildir(ctx context.Context, st *store.Store, a config.Account, opt Options) (*imapsync.Result, error) {
	root := a.Path
	if fi, err := os.Stat(filepath.Join(root, "cur")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("account %s: %s is not a Maildir (no cur folder); check the path given to --maildir", a.Name, root)
	}
	accountID, err := st.EnsureAccount(ctx, a.Name, "maildir")
	if err != nil {
		return nil, err
	}
	folders := map[string]string{"INBOX": root}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("account %s: cannot read %s: %w", a.Name, root, err)
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && e.Name() != "." && e.Name() != ".." {
			dir := filepath.Join(root, e.Name())
			if fi, err := os.Stat(filepath.Join(dir, "cur")); err == nil && fi.IsDir() {
				folders[strings.ReplaceAll(strings.TrimPrefix(e.Name(), "."), ".", "/")] = dir
			}
		}
	}
	res := &imapsync.Result{}
	stored, err := st.Folders(ctx, accountID)
	if err != nil {
		return nil, err
	}
	byName := map[string]*store.Folder{}
	for _, f := range stored {
		byName[f.Name] = f
		if _, ok := folders[f.Name]; !ok {
			if err := st.DeleteFolder(ctx, f.ID); err != nil {
				return nil, err
			}
			res.FoldersGone++
		}
	}
	names := make([]string, 0, len(folders))
	for n := range folders {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f := byName[name]
		if f == nil {
			f = &store.Folder{AccountID: accountID, Name: name, Delim: "/", UIDValidity: 1}
			if name == "INBOX" {
				f.Role = "inbox"
			}
			if err := st.SaveFolder(ctx, f); err != nil {
				return nil, err
			}
		}
		if err := maildirFolder(ctx, st, a, f, folders[name], opt, res); err != nil {
			err = fmt.Errorf("importing folder %s of %s: %w", name, a.Name, err)
			st.SetAccountSynced(ctx, accountID, time.Now(), err.Error())
			return res, err
		}
		res.Folders++
	}
	return res, st.SetAccountSynced(ctx, accountID, time.Now(), "")
}

type maildirFile struct {
	key, path string
	flags     int
	mtime     int64
}

func maildirFolder(ctx context.Context, st *store.Store, a config.Account, f *store.Folder, dir string, opt Options, res *imapsync.Result) error {
	var files []maildirFile
	for _, sub := range []string{"cur", "new"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			key, info, _ := strings.Cut(e.Name(), ":2,")
			mf := maildirFile{key: key, path: filepath.Join(dir, sub, e.Name())}
			for _, c := range info {
				switch c {
				case 'S':
					mf.flags |= store.FlagSeen
				case 'F':
					mf.flags |= store.FlagFlagged
				case 'R':
					mf.flags |= store.FlagAnswered
				case 'D':
					mf.flags |= store.FlagDraft
				case 'T':
					mf.flags |= store.FlagDeleted
				}
			}
			if fi, err := e.Info(); err == nil {
				mf.mtime = fi.ModTime().UnixNano()
			}
			files = append(files, mf)
		}
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].mtime != files[j].mtime {
			return files[i].mtime < files[j].mtime
		}
		return files[i].key < files[j].key
	})
	keys := make([]string, len(files))
	for i, mf := range files {
		keys[i] = mf.key
	}
	uids, err := st.MaildirUIDs(ctx, f.ID, keys)
	if err != nil {
		return err
	}
	present := map[string]bool{}
	for _, k := range keys {
		present[k] = true
	}
	var goneKeys []string
	var goneUIDs []uint32
	for k, u := range uids {
		if !present[k] {
			goneKeys = append(goneKeys, k)
			goneUIDs = append(goneUIDs, u)
		}
	}
	if err := st.DeleteUIDs(ctx, f.ID, goneUIDs); err != nil {
		return err
	}
	if err := st.ForgetMaildirKeys(ctx, f.ID, goneKeys); err != nil {
		return err
	}
	res.Deleted += len(goneUIDs)
	have, err := st.FolderUIDs(ctx, f.ID)
	if err != nil {
		return err
	}
	stored := map[uint32]bool{}
	for _, u := range have {
		stored[u] = true
	}
	batchSize := opt.BatchSize
	if batchSize <= 0 {
		batchSize = 200
	}
	var batch []store.NewMessage
	var ups []store.FlagUpdate
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := st.AddMessages(ctx, f, batch, 0); err != nil {
			return err
		}
		res.New += len(batch)
		if opt.AfterBatch != nil {
			opt.AfterBatch(f.Name, len(batch))
		}
		batch = batch[:0]
		return nil
	}
	for _, mf := range files {
		uid := uids[mf.key]
		if stored[uid] {
			ups = append(ups, store.FlagUpdate{UID: uid, Flags: mf.flags})
			continue
		}
		fh, err := os.Open(mf.path)
		if err != nil {
			continue // moved away while reading: the next sync sees it
		}
		p, err := mailparse.Parse(fh)
		fi, _ := fh.Stat()
		fh.Close()
		if err != nil {
			continue
		}
		nm := store.NewMessage{UID: uid, Flags: mf.flags}
		if fi != nil {
			nm.InternalDate = fi.ModTime()
			nm.Size = fi.Size()
		}
		imapsync.Fill(&nm, p)
		imapsync.Judge(&nm, a.TrustedAuthServ)
		batch = append(batch, nm)
		if len(batch) >= batchSize {
			if err := flush(); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return st.UpdateFlags(ctx, f.ID, ups, 0)
}

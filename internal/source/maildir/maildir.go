// Package maildir is the Maildir account kind: it imports a local Maildir (Maildir++ folders)
// into the store, confined to it through an os.Root and bounded per file. It never renames,
// moves or writes a file there, and never follows a symbolic link.
package maildir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// What one file of a Maildir may cost. Variables so that tests can lower them.
var (
	// maxMessageBytes is how much of one file is read. A larger file is stored
	// from its first maxMessageBytes (its headers, its text and the attachments
	// that fit), with its real size, a problem saying so, and a warning.
	maxMessageBytes int64 = 64 << 20
	// messageTimeout is how long one file may take to be read and parsed. A
	// file that takes longer is skipped with a warning; the next sync tries it again.
	messageTimeout = 15 * time.Second
)

// errTooSlow is a file that took longer than messageTimeout.
var errTooSlow = errors.New("reading it took too long")

// Source is a Maildir account as the table of kinds opens it.
type Source struct{ a Settings }

// Open is the Source of a configured account: the Open of Kind.
func Open(a config.Account) (source.Source, error) {
	s, err := SettingsOf(a)
	if err != nil {
		return nil, err
	}
	return &Source{a: s}, nil
}

// Sync imports the Maildir into the store (see the function Sync).
func (s *Source) Sync(ctx context.Context, st *store.Store, opt source.Options) (*source.Result, error) {
	return sync(ctx, st, s.a, opt)
}

// Sync imports a local Maildir (Maildir++ folders) read-only: it never
// renames, moves or writes a file there.
//
// The import is confined to the Maildir: every folder and file is opened
// through an os.Root on it (openat(2) one component at a time, never leaving
// it), a symbolic link is never followed (not even one that stays inside), and
// only regular files are read: each is opened with O_NOFOLLOW|O_NONBLOCK (so a
// named pipe cannot block the open), checked with fstat on the opened
// descriptor, and checked again to be the very file its name holds. Anything
// else is skipped with one warning through opt.Warn.
func Sync(ctx context.Context, st *store.Store, a config.Account, opt source.Options) (*source.Result, error) {
	s, err := SettingsOf(a)
	if err != nil {
		return nil, &source.NotStarted{Err: err}
	}
	return sync(ctx, st, s, opt)
}

func sync(ctx context.Context, st *store.Store, a Settings, opt source.Options) (*source.Result, error) {
	root, err := os.OpenRoot(a.Path)
	if err != nil {
		return nil, &source.NotStarted{Err: fmt.Errorf("account %s: cannot open the Maildir %s (%v); check the path given to --maildir", a.Name, a.Path, cause(err))}
	}
	defer root.Close()
	if fi, err := root.Lstat("cur"); err != nil || !(fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) {
		return nil, &source.NotStarted{Err: fmt.Errorf("account %s: %s is not a Maildir (no cur folder); check the path given to --maildir", a.Name, a.Path)}
	}
	accountID, err := st.EnsureAccount(ctx, a.Name, KindName)
	if err != nil {
		return nil, err
	}
	m := &maildir{root: root, path: a.Path, account: a, warn: opt.Warn, ctx: ctx, warns: source.NewWarnings(ctx, st, accountID, opt)}
	folders, err := m.folders()
	if err != nil {
		return nil, err
	}
	if err := m.warns.Done(ctx, ""); err != nil { // the Maildir's own entries were all looked at
		return nil, err
	}
	places := []string{""}
	for name := range folders {
		places = append(places, name)
	}
	if err := m.warns.Places(ctx, places); err != nil {
		return nil, err
	}
	res := &source.Result{}
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
		m.place = name
		if err := m.folder(ctx, st, f, folders[name], opt, res); err != nil {
			return res, fmt.Errorf("importing folder %s of %s: %w", name, a.Name, err)
		}
		if err := m.warns.Done(ctx, name); err != nil {
			return res, err
		}
		res.Folders++
	}
	return res, nil
}

// maildir is one Maildir being imported.
type maildir struct {
	root    *os.Root
	path    string // as configured, for describing links only
	account Settings
	warn    func(string)
	ctx     context.Context
	warns   *source.Warnings
	place   string // the folder being imported ("" while the Maildir's own entries are read)
}

// skip says that rel (a path relative to the Maildir) was not imported, and why, and keeps
// the warning until it is imported or gone (a file by its name without its flags, which
// change).
func (m *maildir) skip(rel, why string) {
	if m.warns == nil {
		return // not a sync (Raw reading one file)
	}
	item, _, _ := strings.Cut(rel, ":2,")
	m.warns.Add(m.ctx, m.place, item, fmt.Sprintf("account %s: skipped %q of the Maildir: %s.", m.account.Name, rel, why))
}

// folders maps folder names to their paths relative to the Maildir: INBOX is
// ".", a Maildir++ folder ".Name.Sub" is Name/Sub. A folder that is a symbolic
// link is skipped with a warning.
func (m *maildir) folders() (map[string]string, error) {
	d, err := m.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("account %s: cannot read %s: %w", m.account.Name, m.path, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("account %s: cannot read %s: %w", m.account.Name, m.path, err)
	}
	folders := map[string]string{"INBOX": "."}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || name == "." || name == ".." {
			continue
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			m.skip(name, describeLink(m.path, name))
		case e.IsDir():
			if fi, err := m.root.Lstat(name + "/cur"); err == nil && (fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) {
				folders[strings.ReplaceAll(strings.TrimPrefix(name, "."), ".", "/")] = name
			}
		}
	}
	return folders, nil
}

type maildirFile struct {
	key, name string
	dir       *os.Root // the cur or new folder holding it
	rel       string   // its path relative to the Maildir
	flags     int
	mtime     int64
}

// list reads the regular files of one cur or new folder, warning about every
// other kind of entry. The returned Root is nil when there is nothing to read.
func (m *maildir) list(rel string) (*os.Root, []maildirFile) {
	fi, err := m.root.Lstat(rel)
	switch {
	case err != nil:
		return nil, nil // no such folder: nothing to import
	case fi.Mode()&fs.ModeSymlink != 0:
		m.skip(rel, describeLink(m.path, rel))
		return nil, nil
	case !fi.IsDir():
		m.skip(rel, "it is "+kind(fi.Mode())+", not a folder")
		return nil, nil
	}
	dir, err := m.root.OpenRoot(rel)
	if err != nil {
		m.skip(rel, fmt.Sprintf("it could not be opened (%v)", cause(err)))
		return nil, nil
	}
	if di, err := dir.Stat("."); err != nil || !os.SameFile(fi, di) {
		dir.Close()
		m.skip(rel, "it changed while being opened (a link or another folder took its place)")
		return nil, nil
	}
	d, err := dir.Open(".")
	if err != nil {
		dir.Close()
		m.skip(rel, fmt.Sprintf("it could not be read (%v)", cause(err)))
		return nil, nil
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		m.skip(rel, fmt.Sprintf("it could not be read (%v)", err))
	}
	var files []maildirFile
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		frel := rel + "/" + name
		fi, err := dir.Lstat(name)
		if err != nil {
			continue // gone since it was listed: the next sync sees what took its place
		}
		switch mode := fi.Mode(); {
		case mode.IsDir():
			continue
		case mode&fs.ModeSymlink != 0:
			m.skip(frel, describeLink(m.path, frel))
			continue
		case !mode.IsRegular():
			m.skip(frel, "it is "+kind(mode)+", not a message file")
			continue
		}
		key, info, _ := strings.Cut(name, ":2,")
		mf := maildirFile{key: key, name: name, dir: dir, rel: frel, flags: maildirFlags(info), mtime: fi.ModTime().UnixNano()}
		files = append(files, mf)
	}
	return dir, files
}

func maildirFlags(info string) int {
	flags := 0
	for _, c := range info {
		switch c {
		case 'S':
			flags |= store.FlagSeen
		case 'F':
			flags |= store.FlagFlagged
		case 'R':
			flags |= store.FlagAnswered
		case 'D':
			flags |= store.FlagDraft
		case 'T':
			flags |= store.FlagDeleted
		}
	}
	return flags
}

func (m *maildir) folder(ctx context.Context, st *store.Store, f *store.Folder, rel string, opt source.Options, res *source.Result) error {
	var files []maildirFile
	for _, sub := range []string{"cur", "new"} {
		dir, found := m.list(path.Join(rel, sub))
		if dir != nil {
			defer dir.Close()
		}
		files = append(files, found...)
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
		if err := ctx.Err(); err != nil {
			return err
		}
		uid := uids[mf.key]
		if stored[uid] {
			ups = append(ups, store.FlagUpdate{UID: uid, Flags: mf.flags})
			continue
		}
		nm, err := m.read(ctx, mf)
		if err != nil {
			return err
		}
		if nm == nil {
			continue
		}
		nm.UID, nm.Flags = uid, mf.flags
		batch = append(batch, *nm)
		if len(batch) >= batchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return st.UpdateFlags(ctx, f.ID, ups, 0)
}

// read opens, checks and parses one file. It returns nil (after a warning if
// the file was not what it should be) when the file is not imported, and an
// error only when ctx ends.
func (m *maildir) read(ctx context.Context, mf maildirFile) (*store.NewMessage, error) {
	fh, fi, why := openMessage(mf.dir, mf.name)
	if why != "" {
		m.skip(mf.rel, why)
		return nil, nil
	}
	if fh == nil {
		return nil, nil // moved away since it was listed: the next sync sees it
	}
	defer fh.Close()
	var r io.Reader = fh
	cut := fi.Size() > maxMessageBytes
	if cut {
		r = io.LimitReader(fh, maxMessageBytes)
	}
	p, err := parseBounded(ctx, r, messageTimeout)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, errTooSlow):
		m.skip(mf.rel, fmt.Sprintf("reading it took more than %s (the next sync tries again)", messageTimeout))
		return nil, nil
	case err != nil:
		m.skip(mf.rel, fmt.Sprintf("it could not be read (%v)", cause(err)))
		return nil, nil
	}
	nm := &store.NewMessage{InternalDate: fi.ModTime(), Size: fi.Size()}
	source.Fill(nm, p)
	if cut {
		limit := sizeText(maxMessageBytes)
		nm.Problems = append(nm.Problems, fmt.Sprintf("The file is larger than %s; only its first %s were read.", limit, limit))
		if m.warn != nil {
			m.warn(fmt.Sprintf("account %s: %q of the Maildir is larger than %s; only its first %s were read.", m.account.Name, mf.rel, limit, limit))
		}
	}
	source.Judge(nm, m.account.TrustedAuthServ)
	return nm, nil
}

// openMessage opens name in dir for reading when it is a regular file, and
// says why not otherwise. Neither a file nor a reason means it is gone.
func openMessage(dir *os.Root, name string) (*os.File, os.FileInfo, string) {
	// O_NONBLOCK: a named pipe swapped in since the listing cannot block the
	// open. O_NOFOLLOW: os.Root adds it at every step anyway; a link it then
	// follows inside the folder is caught by the SameFile check below.
	fh, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, ""
	}
	if err != nil {
		return nil, nil, fmt.Sprintf("it could not be opened (%v)", cause(err))
	}
	fi, err := fh.Stat() // fstat(2) of the descriptor: what was opened, not what the name now holds
	if err != nil {
		fh.Close()
		return nil, nil, fmt.Sprintf("it could not be read (%v)", cause(err))
	}
	if !fi.Mode().IsRegular() {
		fh.Close()
		return nil, nil, "it is " + kind(fi.Mode()) + ", not a message file"
	}
	if li, err := dir.Lstat(name); err != nil || !os.SameFile(fi, li) {
		fh.Close()
		return nil, nil, "it changed while being opened (a link or another file took its place)"
	}
	return fh, fi, ""
}

// parseBounded parses one message from r, giving up after timeout or when
// ctx ends. The parse runs in its own goroutine so that a read the kernel
// does not return from cannot hold the sync; that goroutine stops at its next
// read once the wait is over.
func parseBounded(ctx context.Context, r io.Reader, timeout time.Duration) (*mailparse.Message, error) {
	pctx, cancel := context.WithTimeoutCause(ctx, timeout, errTooSlow)
	defer cancel()
	type parsed struct {
		p   *mailparse.Message
		err error
	}
	done := make(chan parsed, 1)
	go func() {
		p, err := mailparse.Parse(&ctxReader{ctx: pctx, r: r})
		done <- parsed{p, err}
	}()
	select {
	case res := <-done:
		if res.err != nil && pctx.Err() != nil {
			return nil, context.Cause(pctx)
		}
		return res.p, res.err
	case <-pctx.Done():
		return nil, context.Cause(pctx)
	}
}

// ctxReader fails every read once ctx has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

// sizeText writes n bytes in MiB, or KiB when that is not a whole number.
func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// cause is the system's reason inside a path error, which names the path
// (the warning names it relative to the Maildir already).
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// kind names a file mode for a warning.
func kind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a file"
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// describeLink says where the link rel (relative to the Maildir at root)
// leads, for a warning only: nothing is opened, and the import never follows it.
func describeLink(root, rel string) string {
	full := filepath.Join(root, filepath.FromSlash(rel))
	target, err := filepath.EvalSymlinks(full)
	if errors.Is(err, fs.ErrNotExist) {
		return "it is a dangling symbolic link (it leads to nothing)"
	}
	if err != nil {
		return "it is a symbolic link that cannot be resolved"
	}
	base, err := filepath.EvalSymlinks(root)
	if err == nil && within(base, target) {
		return "it is a symbolic link, which postern does not follow even inside the Maildir (only regular files are imported)"
	}
	what := "something"
	if fi, err := os.Stat(target); err == nil {
		what = kind(fi.Mode())
	}
	return "it is a symbolic link to " + what + " outside the Maildir, which postern never follows"
}

// within reports whether path is base or below it.
func within(base, path string) bool {
	rel, err := filepath.Rel(base, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

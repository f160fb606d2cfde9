package calwrite

// How a write of an event or task is recorded so that mail_undo can put it back
// (the undo itself is package actions'): the text it replaces is kept exactly as
// the server sent it, in a backup file beside mail's (0600, the folder 0700), and
// the action log gets the ETag the write produced.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// davChange is one write of an event or task, worked out and not yet done.
type davChange struct {
	w       *davObject // the object, its collection and account; w.o is nil for a new one
	tool    string
	what    string // what it does, for the log
	href    string // where it writes
	data    []byte // the new text; nil removes the object
	uid     string // a new object's UID
	summary string
}

// objectKind is the store's kind of an event or task write.
func (w *davObject) objectKind() string {
	if w.noun == "task" {
		return store.ObjectTodo
	}
	return store.ObjectEvent
}

// apply does ch: keeps the text it replaces, writes, and logs the write with the ETag it
// produced. It returns the object as now stored (nil when removed or not read back), the
// action id, and a warning when something after the write failed.
func (s *CalWrite) apply(ctx context.Context, ch *davChange) (*store.Object, string, string, error) {
	w := ch.w
	item := store.DAVItem{Account: w.c.Account, Kind: w.objectKind(), Collection: w.c.URL, CollectionName: w.c.Name,
		Href: ch.href, UID: ch.uid, Summary: ch.summary}
	if w.o != nil {
		if w.got == nil {
			return nil, "", "", errors.New("nothing was written: the server's copy was not read first")
		}
		path, err := KeepDAVBackup(w.c.Account, w.noun, w.got.Data)
		if err != nil {
			return nil, "", "", fmt.Errorf("nothing was written, because its present text could not be kept for an undo: %w", err)
		}
		item.HadBefore, item.BeforeFile, item.BeforeSize = true, path, int64(len(w.got.Data))
		item.BeforeETag, item.UID, item.Object = w.o.ETag, w.o.UID, w.o.ID
	}
	var o *store.Object
	var warn string
	var err error
	if ch.data == nil {
		warn, err = s.remove(ctx, w)
	} else {
		etag := ""
		if w.o != nil {
			etag = w.o.ETag
		}
		o, item.AfterETag, warn, err = s.put(ctx, w, ch.href, etag, ch.data)
	}
	if err != nil {
		if item.BeforeFile != "" {
			os.Remove(item.BeforeFile)
		}
		return nil, "", "", err
	}
	if o != nil {
		item.Object, item.UID = o.ID, o.UID
	}
	log := &store.Action{At: time.Now().UTC(), Tool: ch.tool, What: ch.what, Client: kit.ClientName(ctx),
		Accounts: []string{w.c.Account}, Count: 1, DAV: []store.DAVItem{item}}
	if err := w.st.RecordAction(ctx, log); err != nil {
		return nil, "", "", fmt.Errorf("the %s was written but the action log could not be written (%v); %s cannot put it back", w.noun, err, generated.ToolMailUndo)
	}
	return o, store.EncodeActionID(log.ID), warn, nil
}

// KeepDAVBackup writes an event's or task's text, byte for byte, to the account's backup
// folder (the one of mail's backups), 0600 in a folder 0700.
func KeepDAVBackup(account, noun string, data []byte) (string, error) {
	return writeBackup(config.BackupDir(account), noun, ".ics", data)
}

// writeBackup writes data to a new file of dir named after now and name (0600, the
// folder 0700), synced to disk before it returns.
func writeBackup(dir, name, ext string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot create the backup folder %s: %w", dir, err)
	}
	now := time.Now().UTC()
	var f *os.File
	var path string
	var err error
	for i := 0; ; i++ {
		path = filepath.Join(dir, fmt.Sprintf("%s-%s-%d%s", now.Format("20060102T150405.000"), name, i, ext))
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !errors.Is(err, os.ErrExist) || i > 100 {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("cannot write the backup %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("cannot write the backup %s: %w", path, err)
	}
	return path, nil
}

package maildir

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

var _ source.Reader = (*Source)(nil)

// Raw reads the file of the message uid of folder, confined to the Maildir as Sync reads it:
// through an os.Root, never following a link, a regular file only (openMessage), at most
// maxMessageBytes. The store's maildir_keys table gives the file's key (its name before
// ":2,"), which stays when another program changes its flags.
func (s *Source) Raw(ctx context.Context, st *store.Store, folder string, uid uint32) ([]byte, error) {
	key, err := fileKey(ctx, st, s.a.Name, folder, uid)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(s.a.Path)
	if err != nil {
		return nil, fmt.Errorf("account %s: cannot open the Maildir %s (%v); check the path given to --maildir", s.a.Name, s.a.Path, cause(err))
	}
	defer root.Close()
	m := &maildir{root: root, path: s.a.Path, account: s.a}
	folders, err := m.folders()
	if err != nil {
		return nil, err
	}
	rel, ok := folders[folder]
	if !ok {
		return nil, source.ErrGone
	}
	for _, sub := range []string{"cur", "new"} {
		dir, files := m.list(path.Join(rel, sub))
		if dir == nil {
			continue
		}
		for _, mf := range files {
			if mf.key != key {
				continue
			}
			fh, fi, why := openMessage(dir, mf.name)
			if why != "" {
				dir.Close()
				return nil, &source.ReadError{Err: fmt.Errorf("%s of the Maildir: %s", mf.rel, why)}
			}
			if fh == nil {
				continue // renamed since it was listed: the other folder may hold it
			}
			b, err := io.ReadAll(io.LimitReader(fh, maxMessageBytes))
			fh.Close()
			dir.Close()
			if err != nil {
				return nil, &source.ReadError{Err: cause(err)}
			}
			if fi.Size() > maxMessageBytes {
				return nil, fmt.Errorf("the message file is larger than %s, more than postern reads; open it in your mail program", sizeText(maxMessageBytes))
			}
			return b, ctx.Err()
		}
		dir.Close()
	}
	return nil, source.ErrGone
}

// fileKey is the key of the file the store numbered uid in folder of account.
func fileKey(ctx context.Context, st *store.Store, account, folder string, uid uint32) (string, error) {
	var key string
	err := st.DB().QueryRowContext(ctx, `SELECT k.key FROM maildir_keys k
		JOIN folders f ON f.id = k.folder_id JOIN accounts a ON a.id = f.account_id
		WHERE a.name = ? AND f.name = ? AND k.uid = ?`, account, folder, uid).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return "", source.ErrGone
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the store (%v); try again", err)
	}
	return key, nil
}

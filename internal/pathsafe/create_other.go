//go:build !linux

package pathsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// create uses os.Root, which never leaves base even if a link is swapped in,
// and checks each folder of the chain with Lstat to refuse links at all. The
// file is created with O_CREATE|O_EXCL, which never follows a link at its
// last component.
func create(base string, dirs []string, last string) (*os.File, string, error) {
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, "", fmt.Errorf("pathsafe: cannot open the folder %s; check that it exists and is yours: %w", base, err)
	}
	defer root.Close()
	rel := "."
	for _, c := range dirs {
		rel = path.Join(rel, c)
		full := filepath.Join(base, filepath.FromSlash(rel))
		fi, err := root.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			if err := root.Mkdir(rel, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, "", fmt.Errorf("pathsafe: cannot create the folder %s; check its parent's permissions: %w", full, err)
			}
			fi, err = root.Lstat(rel)
		}
		switch {
		case err != nil:
			return nil, "", fmt.Errorf("pathsafe: cannot check the folder %s; try another name: %w", full, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, "", fmt.Errorf("pathsafe: %s is a symbolic link, which postern never follows; choose another name", full)
		case !fi.IsDir():
			return nil, "", fmt.Errorf("pathsafe: %s is a file, not a folder; choose another name", full)
		}
	}
	dir := filepath.Join(base, filepath.FromSlash(rel))
	for i := 1; i <= maxTries; i++ {
		name := candidate(last, i)
		f, err := root.OpenFile(path.Join(rel, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("pathsafe: cannot create %s; check the folder's permissions: %w", filepath.Join(dir, name), err)
		}
		final := filepath.Join(dir, name)
		if err := verify(f, final, dir); err != nil {
			f.Close()
			root.Remove(path.Join(rel, name))
			return nil, "", err
		}
		return f, final, nil
	}
	return nil, "", fmt.Errorf("pathsafe: %d files named like %q already exist in %s; choose another name", maxTries, last, dir)
}

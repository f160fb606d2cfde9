package fileedit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// failAt, when a test sets it, is asked before each step of WriteFile ("backup", "temp", "state",
// "rename") and fails that step by returning an error.
var failAt func(step string) error

func step(name string) error {
	if failAt != nil {
		return failAt(name)
	}
	return nil
}

// WriteFile replaces path with data atomically: a temporary file in the same folder, fsync, rename
// over path. The new file gets the mode (and, where allowed, the owner) of the old one; a new file
// gets perm, or 0600 when perm is 0, and a missing folder is created 0700. If path is a symbolic
// link, the link's target is written and the link stays a link.
//
// Backups: before the first change of a file, its content is copied to path+".bak" (same mode).
// Later changes keep that .bak unless someone else changed the file since our last write; then the
// .bak is replaced by the file as it was just before this write. "Our last write" is recorded in
// stateFile, a small JSON object mapping the absolute path of each file written (the link's target
// for a link) to the SHA-256 of what we wrote. backup is the .bak written by this call, "" if none.
//
// If data equals the current content nothing is written (no .bak, no record) and changed is false.
// A failure at any step leaves the file byte-identical and removes the temporary file.
func WriteFile(path string, data []byte, perm fs.FileMode, stateFile string) (changed bool, backup string, err error) {
	target, err := resolveLink(path)
	if err != nil {
		return false, "", err
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return false, "", fmt.Errorf("cannot write %s: %w; give an absolute path", path, err)
	}
	old, err := os.ReadFile(target)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, "", fmt.Errorf("cannot read %s: %w; check the file's owner and mode", path, reason(err))
	}
	if exists && bytes.Equal(old, data) {
		return false, "", nil
	}
	state, err := readState(stateFile)
	if err != nil {
		return false, "", err
	}
	mode, like := perm.Perm(), fs.FileInfo(nil)
	if mode == 0 {
		mode = 0o600
	}
	if exists {
		if like, err = os.Stat(target); err != nil {
			return false, "", fmt.Errorf("cannot read %s: %w; check the file's owner and mode", path, reason(err))
		}
		mode = like.Mode().Perm()
		if last, ok := state[abs]; !ok || last != sum(old) {
			backup = path + ".bak"
			if err := writeAtomic(backup, old, mode, like, "backup"); err != nil {
				return false, "", fmt.Errorf("cannot back up %s to %s: %w; check the owner and mode of its folder", path, backup, reason(err))
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return false, "", fmt.Errorf("cannot create the folder of %s: %w; check the owner and mode of its parent", path, reason(err))
	}
	tmp, err := tempFile(target, data, mode, like)
	if err != nil {
		return false, "", fmt.Errorf("cannot write %s: %w; check the owner and mode of the file and its folder", path, reason(err))
	}
	defer func() {
		if tmp != "" {
			os.Remove(tmp)
		}
	}()
	// The record is written before the rename, and put back if the rename fails, so that it never
	// claims a write that did not happen, nor misses one that did.
	prev, had := state[abs]
	state[abs] = sum(data)
	if err := writeState(stateFile, state); err != nil {
		return false, "", err
	}
	err = step("rename")
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		delete(state, abs)
		if had {
			state[abs] = prev
		}
		_ = writeState(stateFile, state) // best effort: a stale record only costs a fresh .bak later
		return false, "", fmt.Errorf("cannot write %s: %w; check the owner and mode of the file and its folder", path, reason(err))
	}
	tmp = ""
	syncDir(filepath.Dir(target))
	return true, backup, nil
}

// resolveLink follows symbolic links from path to the file they name, which may not exist yet.
func resolveLink(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil // a missing file is created; other errors surface when it is read
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("cannot follow the link %s: %w; check it points to a file", path, reason(err))
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("cannot write %s: too many symbolic links on the way; fix the link", path)
}

// tempFile writes data, fsynced, to a new file beside path and returns its name.
func tempFile(path string, data []byte, mode fs.FileMode, like fs.FileInfo) (string, error) {
	if err := step("temp"); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	err = f.Chmod(mode)
	if err == nil {
		keepOwner(f, like)
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// writeAtomic replaces path with data through a temporary file; step names it for failAt.
func writeAtomic(path string, data []byte, mode fs.FileMode, like fs.FileInfo, name string) error {
	if err := step(name); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := tempFile(path, data, mode, like)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir makes a rename in dir durable where the system allows it.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		_ = f.Sync() // not supported everywhere (Windows); the rename itself is done
		f.Close()
	}
}

func readState(stateFile string) (map[string]string, error) {
	state := map[string]string{}
	b, err := os.ReadFile(stateFile)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(b)) == 0 {
		return state, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the record of written files %s: %w; check its owner and mode", stateFile, reason(err))
	}
	if err := json.Unmarshal(b, &state); err != nil {
		return nil, fmt.Errorf("the record of written files %s is not a JSON object of paths to hashes; delete it and try again", stateFile)
	}
	return state, nil
}

func writeState(stateFile string, state map[string]string) error {
	b, _ := json.MarshalIndent(state, "", "  ") // a map of strings always encodes
	if err := writeAtomic(stateFile, append(b, '\n'), 0o600, nil, "state"); err != nil {
		return fmt.Errorf("cannot write the record of written files %s: %w; check the owner and mode of its folder", stateFile, reason(err))
	}
	return nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// reason drops the operation and path from err, which our messages already give.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Package atomicfile replaces a file whole or not at all: the new text goes to a temporary
// file beside it (mode 0600, synced) that is renamed over it, so a reader or a crash never
// sees half a file. It is for the person's small files (config.toml, rules.toml,
// projects.toml); it never follows the file's name anywhere else and never keeps the
// temporary file after a failure.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with b, creating its folder (0700) when needed. pattern names the
// temporary file, as os.CreateTemp takes it (".rules-*.toml").
func Write(path, pattern string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("cannot write beside %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	for _, step := range []func() error{
		func() error { return tmp.Chmod(0o600) },
		func() error { _, err := tmp.Write(b); return err },
		tmp.Sync,
	} {
		if err := step(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

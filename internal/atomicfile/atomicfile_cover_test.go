package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leftovers lists the files in dir other than the ones named.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		found := false
		for _, k := range keep {
			if e.Name() == k {
				found = true
			}
		}
		if !found {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteCreatesPrivateFileAndFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	path := filepath.Join(dir, "config.toml")
	if err := Write(path, ".config-*.toml", []byte("x = 1\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "x = 1\n" {
		t.Fatalf("read back %q, %v; want %q", got, err, "x = 1\n")
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600: the person's file must stay private", fi.Mode().Perm())
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", di.Mode().Perm())
	}
	if l := leftovers(t, dir, "config.toml"); len(l) != 0 {
		t.Errorf("temporary files left beside it: %v", l)
	}
}

func TestWriteReplacesWholeAndTightensMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.toml")
	if err := os.WriteFile(path, []byte(strings.Repeat("old text\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, ".rules-*.toml", []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "new\n" {
		t.Fatalf("file is %q after replace, want exactly %q (no tail of the old text)", got, "new\n")
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600", fi.Mode().Perm())
	}
	if l := leftovers(t, dir, "rules.toml"); len(l) != 0 {
		t.Errorf("temporary files left beside it: %v", l)
	}
}

// A symbolic link at the path is replaced by the file; what it pointed to is left alone.
func TestWriteDoesNotFollowSymlink(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(elsewhere, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "projects.toml")
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	if err := Write(path, ".projects-*.toml", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(elsewhere); string(b) != "keep me" {
		t.Errorf("the link's target was written: %q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("path is still a link (%v, %v)", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Errorf("path holds %q, want %q", b, "mine")
	}
}

// A failure says so, keeps what was there and leaves no temporary file.
func TestWriteFailureKeepsOldAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	// The path is a non-empty folder: the rename over it fails.
	path := filepath.Join(dir, "config.toml")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, ".config-*.toml", []byte("x")); err == nil {
		t.Fatal("writing over a folder succeeded")
	}
	if _, err := os.Stat(filepath.Join(path, "inside")); err != nil {
		t.Errorf("the folder's content was lost: %v", err)
	}
	if l := leftovers(t, dir, "config.toml"); len(l) != 0 {
		t.Errorf("temporary files left after a failure: %v", l)
	}

	// The folder cannot be made: a file stands where it should be.
	block := filepath.Join(dir, "file")
	if err := os.WriteFile(block, []byte("f"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(block, "sub", "x.toml"), ".x-*", []byte("x")); err == nil {
		t.Error("writing under a file succeeded")
	}

	// The folder exists but cannot be written to: the error names the path.
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		err := Write(filepath.Join(ro, "rules.toml"), ".rules-*", []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "rules.toml") {
			t.Errorf("read-only folder: err %v, want one naming rules.toml", err)
		}
	}
}

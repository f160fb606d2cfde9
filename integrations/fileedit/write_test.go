package fileedit

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// write calls WriteFile and fails the test on an error.
func write(t *testing.T, path, data, state string) (bool, string) {
	t.Helper()
	changed, backup, err := WriteFile(path, []byte(data), 0, state)
	if err != nil {
		t.Fatalf("WriteFile(%s): %v", path, err)
	}
	return changed, backup
}

func TestWriteFileNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Claude", "claude_desktop_config.json")
	state := filepath.Join(dir, "state", "written.json")
	changed, backup := write(t, path, "{}\n", state)
	if !changed || backup != "" {
		t.Errorf("WriteFile = %v, %q; want true and no backup for a new file", changed, backup)
	}
	if got := read(t, path); got != "{}\n" {
		t.Errorf("content = %q", got)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("a new file got mode %o; want 600", m)
	}
	if m := mode(t, filepath.Dir(path)); m != 0o700 {
		t.Errorf("a new folder got mode %o; want 700", m)
	}
	var rec map[string]string
	if err := json.Unmarshal([]byte(read(t, state)), &rec); err != nil || rec[path] != sum([]byte("{}\n")) {
		t.Errorf("state = %v, %v; want %s mapped to the SHA-256 of what was written", rec, err, path)
	}
	if _, _, err := WriteFile(filepath.Join(dir, "other.json"), []byte("{}"), 0o640, state); err != nil || mode(t, filepath.Join(dir, "other.json")) != 0o640 {
		t.Errorf("perm 0640 for a new file was not used")
	}
}

func TestWriteFileKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	write(t, path, `{"a": 1}`, filepath.Join(dir, "state.json"))
	if m := mode(t, path); m != 0o644 {
		t.Errorf("mode = %o; want the old 644", m)
	}
	if m := mode(t, path+".bak"); m != 0o644 {
		t.Errorf(".bak mode = %o; want the old 644", m)
	}
}

// TestWriteFileBackups: the .bak holds the person's file from before our first change, and is
// replaced only when someone else changed the file after our last write.
func TestWriteFileBackups(t *testing.T) {
	dir := t.TempDir()
	path, state := filepath.Join(dir, "mcp.json"), filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("original"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, backup := write(t, path, "ours 1", state); backup != path+".bak" || read(t, path+".bak") != "original" {
		t.Fatalf("first change: backup %q holds %q; want the original", backup, read(t, path+".bak"))
	}
	if _, backup := write(t, path, "ours 2", state); backup != "" || read(t, path+".bak") != "original" {
		t.Errorf("second change: backup %q, .bak holds %q; want the original kept", backup, read(t, path+".bak"))
	}
	if err := os.WriteFile(path, []byte("edited by hand"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, backup := write(t, path, "ours 3", state); backup != path+".bak" || read(t, path+".bak") != "edited by hand" {
		t.Errorf("after an outside change: backup %q holds %q; want the hand-edited file", backup, read(t, path+".bak"))
	}
	if _, backup := write(t, path, "ours 4", state); backup != "" || read(t, path+".bak") != "edited by hand" {
		t.Errorf("next change: backup %q, .bak holds %q; want it kept", backup, read(t, path+".bak"))
	}
	if read(t, path) != "ours 4" {
		t.Errorf("content = %q", read(t, path))
	}
}

func TestWriteFileUnchanged(t *testing.T) {
	dir := t.TempDir()
	path, state := filepath.Join(dir, "mcp.json"), filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, backup := write(t, path, "{}\n", state); changed || backup != "" {
		t.Errorf("WriteFile of the same content = %v, %q; want false, no backup", changed, backup)
	}
	for _, p := range []string{path + ".bak", state} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists after a write that changed nothing", p)
		}
	}
}

func TestWriteFileSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "mcp.json")
	link := filepath.Join(dir, "home", "mcp.json")
	os.MkdirAll(filepath.Dir(target), 0o700)
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../dotfiles/mcp.json", link); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	write(t, link, "new", filepath.Join(dir, "state.json"))
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if read(t, target) != "new" || mode(t, target) != 0o640 {
		t.Errorf("target holds %q mode %o; want new, 640", read(t, target), mode(t, target))
	}
	if read(t, link+".bak") != "old" {
		t.Errorf("no backup of the target beside the link")
	}
	dangling := filepath.Join(dir, "home", "cursor.json")
	os.Symlink("../dotfiles/cursor.json", dangling)
	write(t, dangling, "{}", filepath.Join(dir, "state.json"))
	if read(t, filepath.Join(dir, "dotfiles", "cursor.json")) != "{}" {
		t.Errorf("a link to a missing file did not create its target")
	}
}

// TestWriteFileFailure: whatever step fails, the file keeps its bytes, no temporary file is left,
// the record is unchanged, and the error names the file and what to do.
func TestWriteFileFailure(t *testing.T) {
	for _, step := range []string{"backup", "temp", "state", "rename"} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			path, state := filepath.Join(dir, "mcp.json"), filepath.Join(dir, "state.json")
			os.WriteFile(path, []byte("original"), 0o600)
			write(t, path, "ours", state) // so that the record exists
			os.WriteFile(path, []byte("by hand"), 0o600)
			rec := read(t, state)

			failAt = func(s string) error {
				if s == step {
					return errors.New("disk full")
				}
				return nil
			}
			defer func() { failAt = nil }()
			changed, _, err := WriteFile(path, []byte("new"), 0, state)
			if err == nil || changed {
				t.Fatalf("WriteFile = %v, %v; want an error", changed, err)
			}
			if !strings.Contains(err.Error(), "disk full; check the owner and mode") || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the file and say what to do", err)
			}
			if read(t, path) != "by hand" {
				t.Errorf("the file changed: %q", read(t, path))
			}
			if read(t, state) != rec {
				t.Errorf("the record changed: %s", read(t, state))
			}
			noTemp(t, dir)
		})
	}
	t.Run("read-only folder", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root, which writes into read-only folders; the injected failures above cover this")
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "mcp.json")
		os.WriteFile(path, []byte("original"), 0o600)
		os.Chmod(dir, 0o500)
		defer os.Chmod(dir, 0o700)
		_, _, err := WriteFile(path, []byte("new"), 0, filepath.Join(t.TempDir(), "state.json"))
		if err == nil || !strings.Contains(err.Error(), "permission denied; check the owner and mode") {
			t.Errorf("error = %v; want permission denied and what to check", err)
		}
		if read(t, path) != "original" {
			t.Errorf("the file changed")
		}
		noTemp(t, dir)
	})
	t.Run("corrupt record", func(t *testing.T) {
		dir := t.TempDir()
		path, state := filepath.Join(dir, "mcp.json"), filepath.Join(dir, "state.json")
		os.WriteFile(path, []byte("original"), 0o600)
		os.WriteFile(state, []byte("not json"), 0o600)
		_, _, err := WriteFile(path, []byte("new"), 0, state)
		if err == nil || !strings.Contains(err.Error(), "delete it and try again") || read(t, path) != "original" {
			t.Errorf("error = %v, file %q; want a refusal that leaves the file", err, read(t, path))
		}
	})
}

func noTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

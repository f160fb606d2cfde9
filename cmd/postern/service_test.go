package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/service"
)

// tree lists every path under dir with its mode and contents: two listings are equal when
// nothing was added, removed or changed.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, _ := d.Info()
		line := strings.TrimPrefix(p, dir) + " " + info.Mode().String()
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			line += " " + string(b)
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestServiceInstallRemove: install in a throwaway HOME shows the unit, refuses to write it
// without --yes at no terminal, writes a unit systemd-analyze accepts with --yes, and remove
// leaves the HOME as it was.
func TestServiceInstallRemove(t *testing.T) {
	env := home(t)
	var h string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok {
			h = v
		}
	}
	cfg := filepath.Join(h, ".config", "postern", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("[[accounts]]\nname = \"archive\"\nkind = \"maildir\"\npath = \""+t.TempDir()+"\"\n"), 0o600)
	before := tree(t, h)
	unit := filepath.Join(h, ".config", "systemd", "user", service.Unit)

	out, errOut, code := runCLI(t, env, "service", "install", "--no-start", "--config", cfg)
	if code != 1 || !strings.Contains(errOut, "--yes") || !strings.Contains(out, "ExecStart=") {
		t.Fatalf("install at no terminal without --yes: %d %q %q", code, out, errOut)
	}
	if tree(t, h) != before {
		t.Fatal("install without a yes changed the HOME")
	}
	out, errOut, code = runCLI(t, env, "service", "install", "--no-start", "--yes", "--config", cfg)
	if code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errOut)
	}
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, string(b)) {
		t.Fatalf("install did not show the unit it wrote:\n%s", out)
	}
	if !strings.Contains(string(b), `watch --config "`+cfg+`"`) {
		t.Fatalf("the unit does not run postern watch --config %s:\n%s", cfg, b)
	}
	if sa, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze is not installed (apt-get install systemd): the unit is not verified")
	} else {
		cmd := exec.Command(sa, "verify", "--user", unit)
		cmd.Env = append(env, "XDG_RUNTIME_DIR="+t.TempDir())
		if vout, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(vout), service.Unit) {
			t.Fatalf("systemd-analyze verify --user: %v\n%s", err, vout)
		}
	}
	if out, errOut, code := runCLI(t, env, "service", "remove", "--no-start", "--config", cfg); code != 0 {
		t.Fatalf("remove: %d %s %s", code, out, errOut)
	}
	if after := tree(t, h); after != before {
		t.Fatalf("remove did not leave the HOME as it was:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, errOut, code := runCLI(t, env, "service", "remove", "--no-start", "--config", cfg); code != 1 || !strings.Contains(errOut, "nothing was removed") {
		t.Fatalf("a second remove: %d %s", code, errOut)
	}
}

package service

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plan runs this binary with the configuration's absolute path, under this home; a
// configuration that cannot be read is refused before anything is planned.
func TestPlanHere(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(""), 0o600)
	t.Chdir(dir)
	in, err := PlanHere("linux", "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := os.Executable()
	bin, _ = filepath.EvalSymlinks(bin)
	if in.Config != cfg || !strings.HasPrefix(in.Path, home) || !strings.Contains(string(in.Text), bin) || !strings.Contains(string(in.Text), cfg) {
		t.Fatalf("plan: %+v\n%s", in, in.Text)
	}
	os.WriteFile(cfg, []byte("[[accounts]\nbroken"), 0o600)
	if _, err := PlanHere("linux", cfg); err == nil {
		t.Fatal("a broken configuration was planned for")
	}
}

// Commands run in order; one whose program is missing stops there and is named; one that
// fails says what it printed and the next is not run.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	if missing, err := Run([]string{"touch " + mark, "no-such-program-postern x"}); err != nil || missing != "no-such-program-postern" {
		t.Fatalf("missing: %q %v", missing, err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the command before the missing one did not run")
	}
	os.Remove(mark)
	_, err := Run([]string{"ls " + filepath.Join(dir, "nothing-here"), "touch " + mark})
	var re *RunError
	if !errors.As(err, &re) || !strings.HasPrefix(re.Cmd, "ls ") || re.Output == "" {
		t.Fatalf("a failing command: %v", err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the command after a failure ran")
	}
	if missing, err := Run([]string{"true"}); err != nil || missing != "" {
		t.Fatalf("a command that works: %q %v", missing, err)
	}
}

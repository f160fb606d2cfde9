package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/corpus"
)

// mailHome is a throwaway HOME whose configuration has one Maildir account
// holding n generated messages, already synced with the real binary.
func mailHome(t *testing.T, n int) (env []string, cfg string) {
	t.Helper()
	env = home(t)
	dir := t.TempDir()
	maildir := filepath.Join(dir, "Maildir")
	if _, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: 3, Messages: n}); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[[accounts]]\nname = \"local\"\nkind = \"maildir\"\npath = \""+maildir+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, env, "sync", "--config", cfg)
	if code != 0 || !strings.Contains(out, "local:") {
		t.Fatalf("sync: %d %q %q", code, out, errOut)
	}
	return env, cfg
}

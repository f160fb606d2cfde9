package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCatalogLintCommand(t *testing.T) {
	env := home(t)
	out, errOut, code := runCLI(t, env, "catalog", "lint", "--dir", "../../catalog")
	if code != 0 || !strings.Contains(out, "no problems") {
		t.Fatalf("lint of the real catalog: %d %q %q", code, out, errOut)
	}
	// A copy with an unknown key is refused, naming file and line.
	dir := filepath.Join(t.TempDir(), "catalog")
	os.MkdirAll(dir, 0o755)
	entries, _ := os.ReadDir("../../catalog")
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join("../../catalog", e.Name()))
		if e.Name() == "core.yaml" {
			b = []byte(strings.Replace(string(b), "    scope: read\n", "    scope: read\n    scopes: [read]\n", 1))
		}
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	_, errOut, code = runCLI(t, env, "catalog", "lint", "--dir", dir)
	if code != 1 || !strings.Contains(errOut, "catalog/core.yaml:") || !strings.Contains(errOut, `unknown key "scopes"`) {
		t.Fatalf("lint of a broken copy: %d %q", code, errOut)
	}
}

package mask_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/testing/masktest"
)

var updateRules = flag.Bool("update-rules", false, "write testdata/rules.golden from the masks' output")

// rulesDigest is a digest of what the masks make of every case of masktest.
func rulesDigest() string {
	h := sha256.New()
	out := func(s string) { fmt.Fprintf(h, "%d:%s\n", len(s), s) }
	for _, c := range append(masktest.MaskedCases(), masktest.Layouts()...) {
		v := mask.Inspect(c.Subject, c.Body)
		out(v.String())
		out(mask.LineOf(c.Subject, v))
		out(mask.BodyOf(c.Body, v))
		out(mask.Line(c.Other))
		out(mask.Line(c.Subject))
		out(mask.Body(c.Body))
	}
	for _, c := range masktest.LeftAlone() {
		out(mask.Line(c.Subject))
		out(mask.Body(c.Body))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestRules: when what the masks make of masktest's cases changes, mask.Rules must change
// too, so that stores mask what they hold again (store.remask). testdata/rules.golden holds
// the Rules and the digest they were last written with (-update-rules writes it).
func TestRules(t *testing.T) {
	path := filepath.Join("testdata", "rules.golden")
	got := fmt.Sprintf("rules %d\ndigest %s\n", mask.Rules, rulesDigest())
	if *updateRules {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./internal/mask -run TestRules -update-rules", err)
	}
	var rules int
	var digest string
	if _, err := fmt.Sscanf(string(b), "rules %d\ndigest %s\n", &rules, &digest); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	switch {
	case rules == mask.Rules && !strings.HasSuffix(strings.TrimSpace(got), digest):
		t.Fatalf("the masks' output over masktest changed but mask.Rules is still %d: bump it (rules.go) so that stores mask again what they hold, then run go test ./internal/mask -run TestRules -update-rules", rules)
	case rules != mask.Rules:
		t.Fatalf("mask.Rules is %d, %s says %d: run go test ./internal/mask -run TestRules -update-rules", mask.Rules, path, rules)
	}
}

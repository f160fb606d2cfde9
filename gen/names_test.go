package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/gen/catalog"
)

// namesAllowed are whole string literals, in non-test code, that equal a
// catalog name but mean something else. Each is keyed by file (slash path
// from the repository root) and value, with the reason; the test prints them.
var namesAllowed = map[[2]string]string{
	{"cmd/postern/status.go", "status"}:               "the command postern status, not the tool",
	{"integrations/doctor.go", "none"}:                "what doctor shows for a flag a host entry does not set",
	{"internal/config/check.go", "read"}:              "the shell builtin read in a password command",
	{"internal/config/config.go", "none"}:             "the TLS mode smtp_tls = none",
	{"internal/approval/pairs.go", "none"}:            "the approval mode of a commit that asks nobody",
	{"internal/mailparse/charset.go", "none"}:         "a charset label senders write",
	{"internal/rules/check.go", "delete"}:             "the rule action delete (to Trash, with a backup)",
	{"internal/rules/legacy.go", "read"}:              "the old rule condition flags: read",
	{"internal/source/imap/sieve.go", "none"}:         "the TLS mode tls = none",
	{"internal/sieve/translate.go", "delete"}:         "the rule action delete (RuleAction.do), not the effect",
	{"internal/tools/mail/send.go", "send"}:           "the payload kind of a message to send (beside draft), digested into the token",
	{"internal/mailparse/html.go", "none"}:            "the CSS values display: none and the colour channel none",
	{"internal/mask/phrases.go", "none"}:              "a word of the masking phrase lists",
	{"internal/mask/phrases.go", "status"}:            "a word of the masking phrase lists",
	{"internal/outbox/send.go", "none"}:               "the SMTP TLS mode none",
	{"internal/search/search.go", "read"}:             "the search operator is:read",
	{"internal/testing/smtptest/smtptest.go", "none"}: "what the test server reports when no message came",
	{"internal/source/imap/dial.go", "none"}:          "the IMAP TLS mode none",
	{"internal/source/imap/check.go", "none"}:         "the TLS mode --tls none",
	{"internal/source/imap/kind.go", "none"}:          "the TLS modes tls = none and smtp_tls = none (--tls, --smtp-tls)",

	// The domains of internal/tools: acting on mail (mail_move, mail_mark, rules' plans) and rules.
	{"internal/tools/actions/actions.go", "read"}:   "the value read of mail_mark's how argument",
	{"internal/tools/actions/actions.go", "delete"}: "the name of a move to trash's action in its answer and the action log, and the rule action delete",
	{"internal/tools/mailrules/rules.go", "delete"}: "the rule action delete (to Trash, with a backup)",

	// Discovery (account add --email).
	{"internal/discover/autoconfig.go", "none"}: "the TLS mode none of an autoconfig document's plain server",
}

// TestNoCatalogNameLiterals: no tool, scope, effect, phase or preset name of
// the catalog is written as a Go string literal in non-test code outside
// generated/ and testdata/ folders; code uses the constants of package
// generated instead. Only whole literals count: "none" is a hit, "none of
// these" is not.
func TestNoCatalogNameLiterals(t *testing.T) {
	root := repoRoot(t)
	cat, err := catalog.Load(filepath.Join(root, "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // name → what it is, for the message
	for _, tl := range cat.Registry() {
		names[tl.Name] = "tool"
	}
	for _, s := range cat.Scopes {
		names[s.Name] = "scope"
	}
	for _, p := range cat.Presets {
		names[p.Name] = "preset"
	}
	for _, w := range catalog.Effects {
		names[w.Name] = "effect"
	}
	for _, w := range catalog.Phases {
		names[w.Name] = "phase"
	}

	var allowed []string
	for k, why := range namesAllowed {
		allowed = append(allowed, fmt.Sprintf("%s %q: %s", k[0], k[1], why))
	}
	sort.Strings(allowed)
	t.Logf("allowed, as they mean something else:\n%s", strings.Join(allowed, "\n"))
	var hits []string
	used := map[[2]string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(must(filepath.Rel(root, path)))
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "generated" || rel == "catalog") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || catalogSource[rel] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			what, ok := names[v]
			if !ok {
				if n := nameInText(v, names); n != "" {
					hits = append(hits, fmt.Sprintf("%s:%d: %s name %q inside a text; build it with generated.%s", rel, fset.Position(lit.Pos()).Line, names[n], n, catalog.ConstName(kindOf[names[n]], n)))
				}
				return true
			}
			if _, ok := namesAllowed[[2]string{rel, v}]; ok {
				used[[2]string{rel, v}] = true
				return true
			}
			hits = append(hits, fmt.Sprintf("%s:%d: %s name %q; use generated.%s", rel, fset.Position(lit.Pos()).Line, what, v, catalog.ConstName(kindOf[what], v)))
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range namesAllowed {
		if !used[k] {
			t.Errorf("allow-list entry %s %q matches nothing any more; remove it", k[0], k[1])
		}
	}
	sort.Strings(hits)
	if len(hits) > 0 {
		t.Errorf("%d catalog name(s) written as string literals:\n%s", len(hits), strings.Join(hits, "\n"))
	}
}

// catalogSource are the non-test files that define the catalog's own
// vocabulary (the generator cannot import what it generates).
var catalogSource = map[string]bool{
	"gen/catalog/effects.go": true,
}

// nameInText returns the first distinctive name (one holding '_' or ':', so
// never a plain word) that v holds as a whole word, or "".
func nameInText(v string, names map[string]string) string {
	isName := func(r byte) bool { return r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' }
	for i := 0; i < len(v); {
		if !isName(v[i]) {
			i++
			continue
		}
		j := i
		for j < len(v) && isName(v[j]) {
			j++
		}
		w := strings.TrimRight(v[i:j], ":")
		if _, ok := names[w]; ok && strings.ContainsAny(w, "_:") {
			return w
		}
		i = j
	}
	return ""
}

var kindOf = map[string]string{"tool": "Tool", "scope": "Scope", "preset": "Preset", "effect": "Effect", "phase": "Phase"}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

package archtest

import (
	"strings"
	"testing"
)

// testingImports finds the imports of a package under internal/testing/ by a package that is
// not itself one of them: what the program is built from never includes a test helper.
func testingImports(pkgs []pkg) []string {
	helpers := internal + "testing/"
	var out []string
	for _, p := range pkgs {
		if strings.HasPrefix(p.ImportPath, helpers) {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, helpers) {
				out = append(out, p.ImportPath+" imports "+imp)
			}
		}
	}
	return out
}

// TestNoRuntimeImportsTesting: the test helpers (a private Dovecot, Mailpit users, MCP clients,
// the mask's cases) stand under internal/testing/, and no package's non-test files import them.
func TestNoRuntimeImportsTesting(t *testing.T) {
	for _, f := range testingImports(listPackages(t)) {
		t.Errorf("%s: a test helper in what postern is built from", f)
	}
	// The check can fail.
	fake := []pkg{
		{internal + "watch", []string{internal + "testing/imaptest"}},
		{internal + "testing/imaptest", []string{internal + "testing/testmsg"}},
	}
	if got := testingImports(fake); len(got) != 1 || !strings.HasPrefix(got[0], internal+"watch imports") {
		t.Errorf("the check found %q in a package importing a helper; want that one import", got)
	}
}

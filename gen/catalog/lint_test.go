package catalog

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/lint/*/want.txt from what the loader says")

// lintCases is the folder of lint refusals: one folder per case, holding the
// catalog files of the case (each replaces the fixture's file of that name, or
// is added beside them) and want.txt, the problem lines the loader must print,
// exactly and in order.
const lintCases = "testdata/lint"

// TestLintRefusals loads each case of testdata/lint with the real loader and
// compares its problems with the case's want.txt. go test -run
// TestLintRefusals -update rewrites want.txt; read the diff before keeping it.
func TestLintRefusals(t *testing.T) {
	entries, err := os.ReadDir(lintCases)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("%s/%s: only case folders belong here", lintCases, e.Name())
			continue
		}
		n++
		dir := filepath.Join(lintCases, e.Name())
		t.Run(e.Name(), func(t *testing.T) { lintCase(t, dir) })
	}
	if n == 0 {
		t.Fatalf("no cases in %s", lintCases)
	}
}

func lintCase(t *testing.T, dir string) {
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	yamls := 0
	for _, f := range files {
		switch {
		case f.Name() == "want.txt":
		case strings.HasSuffix(f.Name(), ".yaml") && !f.IsDir():
			yamls++
			// A file equal to the fixture's would make the case test the fixture.
			mine, err := os.ReadFile(filepath.Join(dir, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if theirs, err := os.ReadFile(filepath.Join(fixtureDir, f.Name())); err == nil && bytes.Equal(mine, theirs) {
				t.Errorf("%s is the fixture's %s unchanged", f.Name(), f.Name())
			}
		default:
			t.Errorf("%s: a case holds only *.yaml files and want.txt", f.Name())
		}
	}
	if yamls == 0 {
		t.Fatal("the case has no catalog file (*.yaml)")
	}

	_, err = fixture(t, dir)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("not refused: %v", err)
	}
	if len(ps) == 0 {
		t.Fatal("refused with no problem")
	}
	for _, p := range ps {
		if p.Pos.File == "" || p.Pos.Line <= 0 {
			t.Errorf("a problem without file and line: %v", p)
		}
	}
	got := ps.Error() + "\n"

	wantFile := filepath.Join(dir, "want.txt")
	if *update {
		if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(wantFile)
	if err != nil {
		t.Fatalf("%v (go test -run TestLintRefusals -update writes it)", err)
	}
	if strings.TrimSpace(string(want)) == "" {
		t.Fatal("want.txt is empty: a case must name at least one problem")
	}
	if got != string(want) {
		t.Errorf("problems differ from %s\n got:\n%s\nwant:\n%s", wantFile, got, want)
	}
}

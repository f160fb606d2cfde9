package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// module is the module path; internal is where its folders start.
const (
	module   = "github.com/postern-mcp/postern"
	internal = module + "/internal/"
)

// folder is the folder of internal/ that holds package path: the first path element under
// internal/ (internal/source/imap and internal/source/caldav are both in folder "source");
// "" for a package outside internal/.
func folder(path string) string {
	rest, ok := strings.CutPrefix(path, internal)
	if !ok {
		return ""
	}
	f, _, _ := strings.Cut(rest, "/")
	return f
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
}

// listPackages runs go list -json over the module's packages (run from this package's folder,
// ../.. is the module's root).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = "../.."
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errOut.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// folderCycles finds the folders of internal/ that import each other, directly or through
// other packages, from the imports of the module's packages (test files left out: they are
// not what the program is built from). A package outside internal/ is a node of its own, so
// that internal/a → cmd/x → internal/b counts as a → b. Each cycle is given as one import of
// each folder into the next, sorted.
func folderCycles(pkgs []pkg) []string {
	node := func(path string) string {
		if f := folder(path); f != "" {
			return f
		}
		return path
	}
	edges := map[string]map[string]string{} // from node → to node → one import that makes it
	for _, p := range pkgs {
		if !strings.HasPrefix(p.ImportPath, module) {
			continue
		}
		a := node(p.ImportPath)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			b := node(imp)
			if a == b {
				continue
			}
			if edges[a] == nil {
				edges[a] = map[string]string{}
			}
			if _, ok := edges[a][b]; !ok {
				edges[a][b] = p.ImportPath + " imports " + imp
			}
		}
	}
	// reach[a] is every node a reaches.
	reach := func(from string) map[string]bool {
		seen := map[string]bool{}
		stack := []string{from}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for m := range edges[n] {
				if !seen[m] {
					seen[m] = true
					stack = append(stack, m)
				}
			}
		}
		return seen
	}
	var out []string
	for a, tos := range edges {
		if !strings.Contains(a, "/") { // a folder of internal/
			ra := reach(a)
			for b, why := range tos {
				if ra[b] && reach(b)[a] && b != a {
					out = append(out, fmt.Sprintf("folder %s reaches folder %s and back (%s)", a, b, why))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestNoFolderCycles: no two folders of internal/ import each other, directly or through
// others, so that each folder can be read, tested and moved below the ones it uses.
func TestNoFolderCycles(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; the module has many more", len(pkgs))
	}
	for _, c := range folderCycles(pkgs) {
		t.Error(c)
	}
}

// TestFolderCyclesFound: the check finds a cycle between two folders, direct or through a
// third folder or a package outside internal/, and none within one folder, so that
// TestNoFolderCycles can fail.
func TestFolderCyclesFound(t *testing.T) {
	for _, c := range []struct {
		name string
		pkgs []pkg
		want int
	}{
		{"direct", []pkg{
			{internal + "source/imap", []string{internal + "sieve/managesieve"}},
			{internal + "sieve", []string{internal + "source"}},
		}, 2},
		{"through a third folder", []pkg{
			{internal + "oauth", []string{internal + "secret"}},
			{internal + "secret", []string{internal + "source"}},
			{internal + "source/imap", []string{internal + "oauth"}},
		}, 3},
		{"through a package outside internal", []pkg{
			{internal + "a", []string{module + "/generated"}},
			{module + "/generated", []string{internal + "b/c"}},
			{internal + "b/c", []string{internal + "a"}},
		}, 2},
		{"within one folder", []pkg{
			{internal + "source/ics", []string{internal + "source/caldav", internal + "store"}},
			{internal + "source/caldav", []string{internal + "source", internal + "store"}},
		}, 0},
	} {
		if got := folderCycles(c.pkgs); len(got) != c.want {
			t.Errorf("%s: %d findings %q; want %d", c.name, len(got), got, c.want)
		}
	}
}

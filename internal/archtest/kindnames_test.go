package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/source/kinds"
)

// kindComparisonsToRemove are the comparisons with a kind's name that stand, for now, outside
// the kinds' packages: each is file and expression, and what to ask instead. Each must become
// a question to the table (kinds.Has) and leave this list, which is to be empty; an entry
// that matches nothing fails, so that the list only shrinks.
var kindComparisonsToRemove = map[string]string{}

// kindComparisons finds, in one file, each comparison of a kind with a kind's name that is
// not in the named kind's own package (internal/source/NAME/): an == or != of an account's
// kind (x.Kind, kind) with a kind's name (its string, NAME.KindName, NAME.Kind.Name), or
// any comparison with NAME.KindName or NAME.Kind.Name, or a switch case of one. names are
// the kinds' names; rel is the file's path from the repository's root.
func kindComparisons(fset *token.FileSet, f *ast.File, rel string, names map[string]bool) []string {
	dir := filepath.ToSlash(filepath.Dir(rel))
	// kindName says whether e names a kind and which (pkg "" for this package's KindName).
	kindName := func(e ast.Expr) (name string, constant, ok bool) {
		switch x := ast.Unparen(e).(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return "", false, false
			}
			v, err := strconv.Unquote(x.Value)
			return v, false, err == nil && names[v]
		case *ast.Ident:
			return "", true, x.Name == "KindName"
		case *ast.SelectorExpr:
			if pkg, isIdent := x.X.(*ast.Ident); isIdent && x.Sel.Name == "KindName" {
				return pkg.Name, true, true
			}
			if in, isSel := x.X.(*ast.SelectorExpr); isSel && x.Sel.Name == "Name" && in.Sel.Name == "Kind" {
				if pkg, isIdent := in.X.(*ast.Ident); isIdent && names[pkg.Name] {
					return pkg.Name, true, true
				}
			}
		}
		return "", false, false
	}
	// isKind says whether e is an account's kind, as a field or a variable.
	isKind := func(e ast.Expr) bool {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			return x.Sel.Name == "Kind"
		case *ast.Ident:
			return strings.EqualFold(x.Name, "kind")
		}
		return false
	}
	own := func(name string) bool { return name == "" || dir == "internal/source/"+name }
	text := func(n ast.Node) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, n)
		return b.String()
	}
	var out []string
	found := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%s:%d: %s", rel, fset.Position(n.Pos()).Line, what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if x.Op != token.EQL && x.Op != token.NEQ {
				return true
			}
			for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
				name, constant, ok := kindName(pair[0])
				if ok && (constant || isKind(pair[1])) && !own(name) {
					found(x, text(x))
					break
				}
			}
		case *ast.SwitchStmt:
			if x.Tag == nil {
				return true
			}
			for _, st := range x.Body.List {
				for _, e := range st.(*ast.CaseClause).List {
					if name, constant, ok := kindName(e); ok && (constant || isKind(x.Tag)) && !own(name) {
						found(e, "switch "+text(x.Tag)+" case "+text(e))
					}
				}
			}
		}
		return true
	})
	return out
}

// TestNoKindNameComparisons: outside its own package no non-test Go file compares a kind with
// a kind's name; a decision by kind asks the table what the kind holds or allows (kinds.Has).
func TestNoKindNameComparisons(t *testing.T) {
	names := map[string]bool{}
	for _, k := range kinds.Rows() {
		names[k.Name] = true
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	used := map[string]bool{}
	files := 0
	var hits []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, h := range kindComparisons(fset, f, rel, names) {
			file, rest, _ := strings.Cut(h, ":")
			_, expr, _ := strings.Cut(rest, ": ")
			if key := file + ": " + expr; kindComparisonsToRemove[key] != "" {
				used[key] = true
				continue
			}
			hits = append(hits, h+"; ask the table instead (kinds.Has)")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files; the repository has many more", files)
	}
	for k := range kindComparisonsToRemove {
		if !used[k] {
			t.Errorf("kindComparisonsToRemove: %q matches nothing any more; remove it", k)
		}
	}
	sort.Strings(hits)
	for _, h := range hits {
		t.Error(h)
	}
}

// TestKindComparisonsFound: the check finds each way of comparing with a kind's name, outside
// the kind's package only, and leaves alone comparisons with other words or a variable, so
// that TestNoKindNameComparisons can fail.
func TestKindComparisonsFound(t *testing.T) {
	const src = `package p

func f(a, h, c T, k string) {
	_ = a.Kind == "imap"            // found
	_ = a.Kind != imap.KindName     // found
	_ = "caldav" == acct.Kind       // found
	_ = kind == "notes"             // found
	_ = k != imap.Kind.Name         // found
	_ = caldav.KindName == k        // found
	switch a.Kind {
	case "maildir", "other":        // found (maildir)
	case ics.KindName:              // found
	}
	switch x {
	case imap.KindName:             // found
	case "imap":                    // a word compared, not a kind
	}
	_ = h.Kind == "snippet"
	_ = c.Kind == k
	_ = a.Kind == ""
	_ = ext == "ics"
	_ = KindName == a.Kind
}
`
	names := map[string]bool{"caldav": true, "ics": true, "imap": true, "maildir": true, "notes": true}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, h := range kindComparisons(fset, f, "internal/tools/p.go", names) {
		var n int
		fmt.Sscanf(strings.Split(h, ":")[1], "%d", &n)
		lines = append(lines, n)
	}
	want := []int{4, 5, 6, 7, 8, 9, 11, 12, 15}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("found on lines %v; want %v", lines, want)
	}
	// In the kind's own package, its own name may be compared; another kind's may not.
	if got := kindComparisons(fset, f, "internal/source/imap/p.go", names); len(got) != 5 {
		t.Errorf("in internal/source/imap: %d found %q; want the 5 that name another kind", len(got), got)
	}
}

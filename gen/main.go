// Command gen is postern's generator: it loads and lints catalog/ and writes
// generated/ (Go, docs) and plugins/. It never reads anything but the catalog and
// its own templates, and its output carries no timestamp, so a second run changes nothing.
//
// JSON Schemas are written by the second step, gen/schemagen, which needs the
// freshly generated Go types; generated/generate.go runs both in order.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/postern-mcp/postern/gen/catalog"
)

func main() {
	root, err := findRoot()
	if err != nil {
		fail(err)
	}
	catDir := flag.String("catalog", filepath.Join(root, "catalog"), "catalog folder to read")
	outDir := flag.String("out", filepath.Join(root, "generated"), "folder for generated Go, schemas and docs")
	plugDir := flag.String("plugins", filepath.Join(root, "plugins"), "folder for plugin bundles")
	flag.Parse()
	if err := Generate(*catDir, *outDir, *plugDir); err != nil {
		fail(err)
	}
}

func fail(err error) {
	var ob *catalog.OverBudget
	if errors.As(err, &ob) {
		for _, p := range ob.Problems {
			fmt.Fprintln(os.Stderr, p.String())
		}
		fmt.Fprint(os.Stderr, "\nWhat the tool list costs (figure / budget; the wire is measured once the schemas are written):\n"+catalog.FormatTable(ob.Table))
		fmt.Fprintf(os.Stderr, "gen: the catalog is over %d budget(s) of catalog/budgets.yaml; shrink it and run go generate ./... again\n", len(ob.Problems))
		os.Exit(1)
	}
	var ps catalog.Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Fprintln(os.Stderr, p.String())
		}
		fmt.Fprintf(os.Stderr, "gen: the catalog has %d problem(s); fix them and run go generate ./... again\n", len(ps))
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// findRoot walks up from the working directory to the folder holding go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; run go generate ./... from the repository")
		}
		dir = parent
	}
}

// Generate loads catDir and writes every phase-one output.
func Generate(catDir, outDir, plugDir string) error {
	cat, err := catalog.Load(catDir)
	if err != nil {
		return err
	}
	// Budgets over their limit while budgets.enforce is false: said, not refused.
	// gen/schemas prints the table, with the wire, once the schemas are written.
	for _, p := range cat.Warnings {
		fmt.Fprintln(os.Stderr, "warning:", p.String())
	}
	m := newModel(cat)
	for _, f := range files {
		if err := f.render(m, outDir, plugDir); err != nil {
			return fmt.Errorf("%s: %w", f.out, err)
		}
	}
	return nil
}

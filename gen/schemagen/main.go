// Command schemagen is the generator's second step: it reflects the freshly
// generated Go types (package generated) into JSON Schemas under generated/schemas.
// It runs after gen, from generated/generate.go.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/postern-mcp/postern/gen/schemas"
	"github.com/postern-mcp/postern/generated"
)

func main() {
	// go generate runs this in generated/; the catalog is beside it.
	wd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	root := filepath.Dir(wd)
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	var tools []schemas.ToolTypes
	for _, t := range generated.Tools {
		tools = append(tools, schemas.ToolTypes{Name: t.Name, Args: t.NewArgs(), Result: t.NewResult()})
	}
	if err := schemas.Write(filepath.Join(root, "catalog"), filepath.Join(root, "generated"), tools); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "schemagen:", err)
	os.Exit(1)
}

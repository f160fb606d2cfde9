package tools_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/tools"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// TestHandlerWithoutViewIsRefused: a handler called directly, without the view dispatch
// opens for each call, reads nothing: not the store, not the accounts. Through dispatch
// the same call answers.
func TestHandlerWithoutViewIsRefused(t *testing.T) {
	m := newMailbox(t, map[string]string{"1.budget:2,S": "From: ann@example.com\r\nTo: sam@example.com\r\nSubject: budget for q3\r\nDate: Mon, 2 Jun 2025 09:00:00 +0000\r\nMessage-ID: <1@example.com>\r\n\r\nThe figures.\r\n"})
	sc, text := m.must(bodies, generated.ToolMailSearch, map[string]any{"query": "budget"})
	if list, _ := sc["messages"].([]any); len(list) != 1 {
		t.Fatalf("through dispatch, mail_search did not find the message: %s", text)
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[[accounts]]\nname = \"work\"\nkind = \"maildir\"\npath = \""+dir+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := &tools.Service{Version: "test", Config: config.NewWatcher(cfg), StorePath: filepath.Join(dir, "store.db")}
	defer svc.Close()
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: dispatch.EraCLI})
	if _, err := svc.MailSearch(ctx, &generated.MailSearchArgs{Query: "budget"}); !errors.Is(err, view.ErrNoView) {
		t.Errorf("mail_search without a view: %v; want the refusal %q", err, view.ErrNoView)
	}
	if _, err := svc.CalendarList(ctx, &generated.CalendarListArgs{}); !errors.Is(err, view.ErrNoView) {
		t.Errorf("calendar_list without a view: %v; want the refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "store.db")); err == nil {
		t.Error("a call without a view created the store")
	}
	// A view of another context is not this call's: a bare context carries none.
	if _, err := view.From(context.Background()); !errors.Is(err, view.ErrNoView) {
		t.Errorf("view.From of a bare context: %v", err)
	}
}

// entryPoints are the functions of internal/tools that are not tools and open their own
// view: the MCP server's resource reads, and what the person runs (rules at sync, notes
// indexing, the Sieve push, project holds). Everything else gets the view dispatch opens.
var entryPoints = map[string]bool{
	"OpenView": true, "List": true, "Read": true, "Digest": true, "ApplyRules": true,
	"RefreshNotes": true, "PlanSievePush": true, "PushSieve": true, "ProjectHolds": true,
}

// TestStoreOnlyThroughTheView: no code under internal/tools but package view opens the
// store or keeps one beyond a call (a package variable, a field of the service, the kit or a
// domain), no
// handler opens a view of its own, and the service's store is read through the call's view.
func TestStoreOnlyThroughTheView(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == "view" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d files under internal/tools", len(files))
	}
	const storePkg = "github.com/postern-mcp/postern/internal/store"
	for _, name := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		alias := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == storePkg {
				alias = "store"
				if im.Name != nil {
					alias = im.Name.Name
				}
			}
		}
		isStorePtr := func(e ast.Expr) bool {
			st, ok := e.(*ast.StarExpr)
			if !ok {
				return false
			}
			sel, ok := st.X.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			id, ok := sel.X.(*ast.Ident)
			return ok && alias != "" && id.Name == alias && sel.Sel.Name == "Store"
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.ValueSpec:
						if d.Tok == token.VAR && sp.Type != nil && isStorePtr(sp.Type) {
							t.Errorf("%s: package variable %s holds a store", fset.Position(sp.Pos()), sp.Names[0].Name)
						}
					case *ast.TypeSpec:
						// The service, the kit and the domains outlive a call: none holds a store.
						s, ok := sp.Type.(*ast.StructType)
						if !ok || !sp.Name.IsExported() {
							continue
						}
						for _, fl := range s.Fields.List {
							if isStorePtr(fl.Type) {
								t.Errorf("%s: %s holds a store outside the call's view", fset.Position(fl.Pos()), sp.Name.Name)
							}
						}
					}
				}
			case *ast.FuncDecl:
				ast.Inspect(d, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if id, ok := sel.X.(*ast.Ident); ok && alias != "" && id.Name == alias && strings.HasPrefix(sel.Sel.Name, "Open") {
						t.Errorf("%s: %s calls store.%s; the store is opened by the call's view only", fset.Position(call.Pos()), d.Name.Name, sel.Sel.Name)
					}
					if (sel.Sel.Name == "OpenView" || sel.Sel.Name == "Open") && !entryPoints[d.Name.Name] {
						if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "os" && id.Name != "notes" {
							if sel.Sel.Name == "OpenView" || isOpener(sel.X) {
								t.Errorf("%s: %s opens a view of its own; a handler reads the one dispatch opened for the call", fset.Position(call.Pos()), d.Name.Name)
							}
						}
					}
					return true
				})
			}
		}
	}
}

// isOpener reports whether e is s.opener() or s.views: the service's view opener.
func isOpener(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "opener"
	case *ast.SelectorExpr:
		return e.Sel.Name == "views"
	}
	return false
}

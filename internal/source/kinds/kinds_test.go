package kinds

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// TestUnknownKindNamesTheKnownOnes: a kind without a row is refused with one sentence that
// names the account, its kind and every kind the table has.
func TestUnknownKindNamesTheKnownOnes(t *testing.T) {
	_, err := Open(config.Account{Name: "work", Kind: "jmap"})
	if err == nil {
		t.Fatal("Open of kind jmap succeeded; the table has no such row")
	}
	want := `account work has kind "jmap", which postern cannot sync; the kinds it knows are caldav, ics, imap and maildir`
	if err.Error() != want {
		t.Errorf("error:\n  %s\nwant\n  %s", err, want)
	}
}

// TestRows: each row opens a source of its kind; only imap reaches a server that postern may
// write to (drafts, a sent copy).
func TestRows(t *testing.T) {
	if got := strings.Join(Names(), " "); got != "caldav ics imap maildir" {
		t.Fatalf("kinds = %q; want caldav ics imap maildir", got)
	}
	for kind, remote := range map[string]bool{"caldav": false, "ics": false, "imap": true, "maildir": false} {
		src, err := Open(config.Account{Name: "a", Kind: kind})
		if err != nil {
			t.Fatalf("Open(%s): %v", kind, err)
		}
		if _, ok := src.(source.Remote); ok != remote {
			t.Errorf("kind %s: remote actions %v; want %v", kind, ok, remote)
		}
	}
}

// TestMaildirRowSyncs: the maildir row's source imports a Maildir through the interface.
func TestMaildirRowSyncs(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	raw := "From: Ann <ann@example.com>\r\nSubject: hello\r\nMessage-ID: <h@example.com>\r\n\r\nHi.\r\n"
	if err := os.WriteFile(filepath.Join(md, "cur", "1.host:2,S"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src, err := Open(config.Account{Name: "home", Kind: "maildir", Path: md})
	if err != nil {
		t.Fatal(err)
	}
	res, err := src.Sync(context.Background(), st, source.Options{})
	if err != nil || res.New != 1 || res.Folders != 1 {
		t.Fatalf("sync: %+v, %v; want one message in one folder", res, err)
	}
}

// optional are the parts of a row a kind may leave out: what account add and set do only for
// kinds that log in to check an account, a second flag that names the kind, and the sync's
// own words (a mail account's are the default). Section is only a row's that no account has
// (TestNotesIsARow).
var optional = map[string]bool{"Check": true, "Added": true, "Changed": true, "Naming": true, "Synced": true, "Section": true}

// missing names the parts of k that are not optional and that it lacks.
func missing(k source.Kind) []string {
	var out []string
	for _, v := range []reflect.Value{reflect.ValueOf(k), reflect.ValueOf(k.Flags)} {
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); !optional[f.Name] && v.Field(i).IsZero() {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

// TestMissingFindsEveryPart: a row without parts is said to lack each required one, so that
// TestRowsAreWhole can fail; a part added to source.Kind is required until made optional.
func TestMissingFindsEveryPart(t *testing.T) {
	want := "Name Noun Caps Settings Parse Open Problems Where Line Flags List Synopsis Needs Foreign Apply Validate"
	if got := strings.Join(missing(source.Kind{}), " "); got != want {
		t.Errorf("missing(empty row) = %s; want %s", got, want)
	}
}

// TestRowsAreWhole: every row has every part of a source.Kind but the optional ones, its first
// flag names the kind, and two kinds share a flag only with the same usage.
func TestRowsAreWhole(t *testing.T) {
	usage := map[string]string{}
	for _, k := range All() {
		for _, part := range missing(k) {
			t.Errorf("kind %q: the row has no %s", k.Name, part)
		}
		if len(k.Flags.List) == 0 {
			continue
		}
		if !strings.HasPrefix(k.Flags.Synopsis, "--"+k.Flags.List[0].Name+" ") && k.Flags.Synopsis != "--"+k.Flags.List[0].Name {
			t.Errorf("kind %q: the synopsis %q does not start with its first flag --%s", k.Name, k.Flags.Synopsis, k.Flags.List[0].Name)
		}
		for _, f := range k.Flags.List {
			if f.Name == "" || f.Usage == "" {
				t.Errorf("kind %q: a flag without a name or usage: %+v", k.Name, f)
			}
			if u, ok := usage[f.Name]; ok && u != f.Usage {
				t.Errorf("kind %q: flag --%s is another kind's with another usage", k.Name, f.Name)
			}
			usage[f.Name] = f.Usage
		}
	}
	var names []string
	for _, k := range All() {
		names = append(names, k.Name)
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("the table is not sorted by name: %v", names)
	}
}

// TestConfigChecksThroughTheTable: loading this package makes the configuration refuse a kind
// that has no row, naming those that have one, and find an account's problems through its row.
func TestConfigChecksThroughTheTable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte("[[accounts]]\nname = \"cal\"\nkind = \"jmap\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(p)
	if want := `account "cal" has kind "jmap"; use caldav, ics, imap or maildir`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Load: %v; want it to end %q", err, want)
	}
	for _, c := range []struct {
		a    config.Account
		want string
	}{
		{config.Account{Name: "m", Kind: "maildir"}, "account m: no path; set one with postern account set m --maildir PATH"},
		{config.Account{Name: "w", Kind: "imap", Server: "h:993", PasswordCmd: "true"}, "account w: no user; set one with postern account set w --user USER"},
	} {
		if ps := c.a.Problems(); len(ps) != 1 || ps[0] != c.want {
			t.Errorf("%s: problems %q; want [%q]", c.a.Kind, ps, c.want)
		}
	}
}

// kindLiteralAllowed are the files outside the kinds' packages where a kind's name is a string
// literal that means something else, with why.
var kindLiteralAllowed = map[[2]string]string{
	{"gen/catalog/names.go", "imap"}:     "the initialism table spells the word imap as IMAP in Go names",
	{"internal/corpus/attach.go", "ics"}: "the test corpus names the file type of a calendar attachment",

	{"internal/discover/autoconfig.go", "imap"}: "Thunderbird's autoconfig format names the protocol of an incomingServer",

	{"generated/catalog.go", "caldav"}:  "the catalog's declared kinds (generated.AccountKinds), which TestCatalogKinds holds equal to the table",
	{"generated/catalog.go", "ics"}:     "the catalog's declared kinds (generated.AccountKinds), which TestCatalogKinds holds equal to the table",
	{"generated/catalog.go", "imap"}:    "the catalog's declared kinds (generated.AccountKinds), which TestCatalogKinds holds equal to the table",
	{"generated/catalog.go", "maildir"}: "the catalog's declared kinds (generated.AccountKinds), which TestCatalogKinds holds equal to the table",
}

// TestNoKindNameLiterals: outside its own package and this table, no non-test Go file types a
// kind's name as a string: a decision by kind belongs in the kind's row.
func TestNoKindNameLiterals(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]string{} // kind → its package's folder
	for _, k := range All() {
		own[k.Name] = "internal/source/" + k.Name + "/"
	}
	used := map[[2]string]bool{}
	var hits []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal/source/kinds") {
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
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			dir, isKind := own[v]
			if !isKind || strings.HasPrefix(rel, dir) {
				return true
			}
			if _, ok := kindLiteralAllowed[[2]string{rel, v}]; ok {
				used[[2]string{rel, v}] = true
				return true
			}
			hits = append(hits, fmt.Sprintf("%s:%d: kind name %q; use the kind's row (kinds.Lookup) or its KindName", rel, fset.Position(lit.Pos()).Line, v))
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range kindLiteralAllowed {
		if !used[k] {
			t.Errorf("allow-list entry %s %q matches nothing any more; remove it", k[0], k[1])
		}
	}
	sort.Strings(hits)
	for _, h := range hits {
		t.Error(h)
	}
}

// TestCapabilities: each row declares what it holds and allows, and Has answers from the row
// (every capability asked for, none for a kind the table lacks), so that no caller compares a
// kind's name.
func TestCapabilities(t *testing.T) {
	for _, c := range []struct {
		kind string
		caps Capability
		want bool
	}{
		{"imap", Mail, true},
		{"imap", Scripts, true},
		{"imap", OAuth, true},
		{"imap", Mail | Writes, true},
		{"imap", Calendar, false},
		{"imap", Calendar | Writes, false},
		{"maildir", Mail, true},
		{"maildir", Writes, false},
		{"maildir", Scripts, false},
		{"caldav", Calendar | Writes, true},
		{"caldav", Contacts, true},
		{"caldav", Tasks, true},
		{"caldav", Mail, false},
		{"caldav", OAuth, false},
		{"ics", Calendar, true},
		{"ics", Calendar | Writes, false},
		{"ics", Contacts, false},
		{"notes", Notes, true},
		{"notes", Mail, false},
		{"jmap", Mail, false},
		{"imap", 0, false},
	} {
		if got := Has(c.kind, c.caps); got != c.want {
			t.Errorf("Has(%q, %b) = %v; want %v", c.kind, c.caps, got, c.want)
		}
	}
}

// TestNotesIsARow: the notes folders are a row of the table that declares notes, but no
// account may have that kind: account add's kinds, the configuration's and Open's leave it
// out, as before it was a row.
func TestNotesIsARow(t *testing.T) {
	var rows []string
	for _, k := range Rows() {
		rows = append(rows, k.Name)
		if (k.Section != "") != (k.Name == "notes") {
			t.Errorf("row %q has section %q", k.Name, k.Section)
		}
	}
	if got := strings.Join(rows, " "); got != "caldav ics imap maildir notes" {
		t.Errorf("rows = %q; want caldav ics imap maildir notes", got)
	}
	if _, ok := Lookup("notes"); ok {
		t.Error("Lookup(notes) found a row; no account may have kind notes")
	}
	if _, err := Open(config.Account{Name: "n", Kind: "notes"}); err == nil || !strings.Contains(err.Error(), "the kinds it knows are caldav, ics, imap and maildir") {
		t.Errorf("Open of kind notes: %v; want the kinds an account may have", err)
	}
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte("[[accounts]]\nname = \"n\"\nkind = \"notes\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(p); err == nil || !strings.HasSuffix(err.Error(), `account "n" has kind "notes"; use caldav, ics, imap or maildir`) {
		t.Errorf("Load of an account of kind notes: %v; want it refused", err)
	}
}

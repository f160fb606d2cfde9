package kinds

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// catalogKinds is the kinds the catalog declares (catalog/kinds.yaml, generated.AccountKinds).
func catalogKinds() []string {
	var out []string
	for _, k := range generated.AccountKinds {
		out = append(out, k.Name)
	}
	return out
}

// notIn is the names of a that b lacks.
func notIn(a, b []string) []string {
	var out []string
	for _, n := range a {
		if !slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// TestCatalogKinds: the catalog's account kinds and the table's rows are the same kinds. The
// generator cannot read the table, so a kind added to one only is found here: an account of a
// kind the catalog lacks would get an answer that breaks its own output schema.
func TestCatalogKinds(t *testing.T) {
	checkKindsAgree(t, catalogKinds(), Names())
}

// checkKindsAgree fails, naming each kind and where to add it, unless declared (the catalog's)
// and table (the runtime's) hold the same kinds, each once.
func checkKindsAgree(t testing.TB, declared, table []string) {
	t.Helper()
	for _, n := range notIn(table, declared) {
		t.Errorf("kind %q has a row in internal/source/kinds but is not declared in catalog/kinds.yaml (account_kinds); declare it and run go generate ./...", n)
	}
	for _, n := range notIn(declared, table) {
		t.Errorf("kind %q is declared in catalog/kinds.yaml but has no row in internal/source/kinds; add its row or remove it from the catalog", n)
	}
	for _, list := range [][]string{declared, table} {
		seen := map[string]bool{}
		for _, n := range list {
			if seen[n] {
				t.Errorf("kind %q is listed twice in %v", n, list)
			}
			seen[n] = true
		}
	}
}

// TestCheckKindsAgreeFails: the check fails on a kind in one list only, either way, so that
// TestCatalogKinds can fail.
func TestCheckKindsAgreeFails(t *testing.T) {
	for _, c := range []struct {
		declared, table []string
		want            string
	}{
		{[]string{"imap"}, []string{"imap", "jmap"}, `kind "jmap" has a row in internal/source/kinds but is not declared`},
		{[]string{"imap", "jmap"}, []string{"imap"}, `kind "jmap" is declared in catalog/kinds.yaml but has no row`},
	} {
		rec := &recorder{TB: t}
		checkKindsAgree(rec, c.declared, c.table)
		if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], c.want) {
			t.Errorf("declared %v, table %v: errors %q; want one containing %q", c.declared, c.table, rec.errs, c.want)
		}
	}
}

// recorder keeps the errors a check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// TestServedSchemasTakeEveryKind: the output schema postern serves for status (which lists
// the accounts) accepts the kind of every row of the table, and no other.
func TestServedSchemasTakeEveryKind(t *testing.T) {
	for _, tool := range []string{generated.ToolStatus} {
		b, err := generated.Files.ReadFile("schemas/" + tool + ".output.json")
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Properties struct {
				Accounts struct {
					Items struct {
						Properties struct {
							Kind struct {
								Enum []string `json:"enum"`
							} `json:"kind"`
						} `json:"properties"`
					} `json:"items"`
				} `json:"accounts"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(s.Properties.Accounts.Items.Properties.Kind.Enum))
		if want := Names(); !slices.Equal(got, want) {
			t.Errorf("%s: the output schema's accounts[].kind enum is %v; the table's kinds are %v", tool, got, want)
		}
	}
}

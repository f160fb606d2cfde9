// Package kinds is the table of account kinds: a configured account's kind names the package
// that syncs it and does its remote actions. Adding a kind is one row here; nothing else
// switches on a kind to reach its source.
package kinds

import (
	"fmt"
	"sort"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/imap"
	"github.com/postern-mcp/postern/internal/source/maildir"
)

// table maps the kind of config.Account to the function that opens its Source.
var table = map[string]source.Open{
	"imap":    imap.Open,
	"maildir": maildir.Open,
}

// Open returns the Source of a, or says which kinds postern knows.
func Open(a config.Account) (source.Source, error) {
	open, ok := table[a.Kind]
	if !ok {
		return nil, fmt.Errorf("account %s has kind %q, which postern cannot sync; the kinds it knows are %s", a.Name, a.Kind, strings.Join(Names(), " and "))
	}
	return open(a), nil
}

// Names lists the kinds of the table, sorted.
func Names() []string {
	out := make([]string, 0, len(table))
	for k := range table {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

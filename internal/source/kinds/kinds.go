// Package kinds is the table of kinds: a configured account's kind names the package that
// syncs it, checks it, reads its flags and does its remote actions (a source.Kind), and the
// notes folders are a row that no account names. Each row declares its capabilities, which
// callers ask (Has) instead of comparing a kind's name. Adding a kind is one package and one
// row here; nothing else switches on a kind's name (internal/archtest fails when something
// does).
package kinds

import (
	"fmt"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/caldav"
	"github.com/postern-mcp/postern/internal/source/ics"
	"github.com/postern-mcp/postern/internal/source/imap"
	"github.com/postern-mcp/postern/internal/source/maildir"
	"github.com/postern-mcp/postern/internal/source/notes"
)

// rows is every row, sorted by name.
var rows = []source.Kind{
	caldav.Kind,
	ics.Kind,
	imap.Kind,
	maildir.Kind,
	notes.Kind,
}

// table is the kinds an account may have (the rows without a Section), sorted by name: the
// order in which sentences name them and flags are checked.
var table = accountKinds(rows)

func accountKinds(rows []source.Kind) []source.Kind {
	var out []source.Kind
	for _, k := range rows {
		if k.Section == "" {
			out = append(out, k)
		}
	}
	return out
}

// Capability is one thing a kind holds or allows (source.Capability); Has asks for them.
type Capability = source.Capability

// The capabilities a row declares (see source.Capability).
const (
	Mail     = source.Mail
	Calendar = source.Calendar
	Tasks    = source.Tasks
	Contacts = source.Contacts
	Notes    = source.Notes
	Writes   = source.Writes
	Scripts  = source.Scripts
	OAuth    = source.OAuth
)

// Has says whether the row named kind declares every capability of c (false for a kind the
// table lacks). Callers ask it instead of comparing kind names: Has(a.Kind, Calendar|Writes)
// is an account whose calendars postern writes to.
func Has(kind string, c Capability) bool {
	for _, k := range rows {
		if k.Name == kind {
			return k.Has(c)
		}
	}
	return false
}

// Rows is every row of the table, the notes folders' included, sorted by name.
func Rows() []source.Kind { return append([]source.Kind(nil), rows...) }

// The configuration accepts the kinds of the table and checks an account through its row
// (config cannot import this package, which imports it): Load refuses what the kind's Parse
// refuses, Problems is the kind's own problems, and Notices says of each field the kind does not
// read that postern ignores it (source.Strays). Each row's
// settings say whose each key is, for those sentences (source.Own).
func init() {
	for _, k := range table {
		source.Own(k.Noun, k.Settings)
	}
	for _, k := range table {
		config.RegisterKind(k.Name, k.Problems, k.Parse, strays(k))
	}
}

// strays is what config.Notices says of an account of kind k: the fields it ignores.
func strays(k source.Kind) func(config.Account) []string {
	return func(a config.Account) []string { return source.Strays(a, k.Noun, k.Settings) }
}

// All is the kinds an account may have, sorted by name.
func All() []source.Kind { return append([]source.Kind(nil), table...) }

// Lookup is the row of the account kind name.
func Lookup(name string) (source.Kind, bool) {
	for _, k := range table {
		if k.Name == name {
			return k, true
		}
	}
	return source.Kind{}, false
}

// Open returns the Source of a, or says which kinds postern knows.
func Open(a config.Account) (source.Source, error) {
	k, ok := Lookup(a.Kind)
	if !ok {
		return nil, fmt.Errorf("account %s has kind %q, which postern cannot sync; the kinds it knows are %s", a.Name, a.Kind, List(Names(), "and"))
	}
	return k.Open(a)
}

// Names lists the kinds an account may have, sorted.
func Names() []string {
	out := make([]string, len(table))
	for i, k := range table {
		out[i] = k.Name
	}
	return out
}

// Where is where a's mail is, in a word (its server, its folder); a's server when its kind is
// not in the table.
func Where(a config.Account) string {
	if k, ok := Lookup(a.Kind); ok {
		return k.Where(a)
	}
	return a.Server
}

// Line is how postern reaches a, in one line; a's server when its kind is not in the table.
func Line(a config.Account) string {
	if k, ok := Lookup(a.Kind); ok {
		return k.Line(a)
	}
	return a.Server
}

// List joins words as a sentence does: "a", "a and b", "a, b and c" (with conj "and").
func List(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

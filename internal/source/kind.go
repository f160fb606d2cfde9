package source

import (
	"context"
	"fmt"
	"io"

	"github.com/postern-mcp/postern/internal/config"
)

// Kind is one row of the table of account kinds (internal/source/kinds): everything postern
// decides by an account's kind. Each kind's package provides its row (imap.Kind, maildir.Kind),
// so that nothing outside it switches on the kind's name.
type Kind struct {
	// Name is the kind as the configuration writes it (kind = "imap").
	Name string
	// Noun names an account of the kind in a sentence: "an IMAP account", "a Maildir import".
	Noun string
	// Caps is what the kind holds and allows (Mail, Calendar, Writes, …): callers ask the
	// table (kinds.Has) instead of comparing the kind's name.
	Caps Capability
	// Section, when set, names the configuration's section that lists what the kind reads
	// ("notes": [notes]): no account has the kind, and the configuration refuses an account
	// that names it.
	Section string
	// Settings is a value of the kind's own settings struct (imap.Settings{}): the fields of
	// the configuration's accounts the kind reads, by their toml keys. The kind's SettingsOf
	// makes one from an account (Settle); the table records whose each key is (Own).
	Settings any
	// Parse is the kind's SettingsOf without its result: it says, in one sentence, what in an
	// account of the kind the kind refuses, and config.Load refuses the file then. A field of
	// another kind is not refused but warned of (Strays).
	Parse func(config.Account) error
	// Open makes the Source of an account of the kind, from its settings (SettingsOf).
	Open Open
	// Problems lists what would make an account of the kind fail (postern config check,
	// postern status), one sentence each that says what to do; config puts the account's name
	// before each.
	Problems func(config.Account) []string
	// Where is where the account's mail is, in a word: its server, its folder (postern status).
	Where func(config.Account) string
	// Line is how postern reaches the account, in one line (postern account list).
	Line func(config.Account) string
	// Flags is what postern account add and account set do for the kind.
	Flags Flags
	// Synced, when set, says what one sync did in the kind's words (postern sync); nil: a
	// mail account's ("3 new, 1 gone, 2 flag changes, 5 folders").
	Synced func(r Result) string
}

// Capability is one thing a kind holds or allows; a set of them is their bitwise or.
type Capability uint

// The capabilities a kind declares.
const (
	// Mail: the kind holds mail (messages and folders).
	Mail Capability = 1 << iota
	// Calendar: the kind holds calendars and their events.
	Calendar
	// Tasks: the kind holds task lists.
	Tasks
	// Contacts: the kind holds address books.
	Contacts
	// Notes: the kind holds notes (Markdown files).
	Notes
	// Writes: postern writes what the agent does back to the kind's server (drafts, moves,
	// calendar changes); a kind without it is read-only.
	Writes
	// Scripts: the kind's server holds server-side rules (Sieve scripts over ManageSieve).
	Scripts
	// OAuth: an account of the kind may log in with OAuth2 (postern account oauth).
	OAuth
)

// Has says whether k declares every capability of c.
func (k Kind) Has(c Capability) bool { return c != 0 && k.Caps&c == c }

// SyncedLine is what postern sync says a sync of an account of kind k did.
func (k Kind) SyncedLine(r Result) string {
	if k.Synced != nil {
		return k.Synced(r)
	}
	return fmt.Sprintf("%d new, %d gone, %d flag changes, %d folders", r.New, r.Deleted, r.FlagsChanged, r.Folders)
}

// Flags is a kind's part of postern account add and account set.
type Flags struct {
	// List is the kind's flags. The first Naming of them name the kind: any of them given to
	// account add makes an account of the kind (--imap, --maildir; --caldav or --carddav).
	List []Flag
	// Naming is how many of List's first flags name the kind (0: one).
	Naming int
	// Synopsis is what account add needs to make an account of the kind, as its usage line
	// writes it ("--maildir PATH").
	Synopsis string
	// Needs is the same in a sentence's words ("--imap HOST:PORT (with --user and
	// --password-cmd)"), for the sentence that asks for one of the kinds.
	Needs string
	// Foreign is the error for flag, one of the kind's, given to account, which is of another
	// kind that noun names.
	Foreign func(flag, account, noun string) error
	// Apply sets the fields of a whose flags (of the kind's List) were given.
	Apply func(fl FlagValues, a *config.Account) error
	// Validate says, naming the flag, what is wrong with an account of the kind about to be
	// written.
	Validate func(config.Account) error
	// Check, when set, tries the account the way sync will (a login) before it is written,
	// unless --no-check is given, and says on stdout what it did. old is the account before
	// account set (nil on account add): Check does nothing when what it tries is unchanged.
	Check func(ctx context.Context, old *config.Account, a config.Account, stdout io.Writer) error
	// Added, when set, is what account add says of the new account after its kind, starting
	// with ", " (", tls implicit").
	Added func(a config.Account, fl FlagValues) string
	// Changed, when set, is what account set says it changed that was not given, starting with
	// a space, or "".
	Changed func(old, a config.Account, fl FlagValues) string
}

// Names is the flags that name the kind (the first Naming of List).
func (f Flags) Names() []Flag {
	return f.List[:min(max(f.Naming, 1), len(f.List))]
}

// Flag is one flag of postern account add and account set, a string.
type Flag struct {
	Name, Usage string
	// Values, when set, are the values the shell completes.
	Values []string
	// Dir says the shell completes a directory.
	Dir bool
}

// FlagValues is the command line as a kind reads it (a *pflag.FlagSet).
type FlagValues interface {
	// Changed says whether the flag was given.
	Changed(name string) bool
	// GetString is the value of a string flag.
	GetString(name string) (string, error)
}

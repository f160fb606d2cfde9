// Package accountedit changes the accounts of the configuration as postern account add, set
// and remove ask: which kind the flags given make, which flag belongs to another kind, what an
// account must hold before it is written, the check against its server before it is saved,
// and its mail taken out of the store when it goes. The command line parses the flags and
// prints; what the flags mean for an account is here and in each kind's row (source.Flags).
package accountedit

import (
	"context"
	"fmt"
	"io"
	"net/mail"
	"os"
	"path/filepath"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/spf13/pflag"
)

// KindFlags are the flags that make an account of each kind on account add (--imap, --maildir)
// that were given.
func KindFlags(given func(string) bool) []string {
	var out []string
	for _, k := range kinds.All() {
		for _, kf := range k.Flags.Names() {
			if given(kf.Name) {
				out = append(out, "--"+kf.Name)
				break // --caldav and --carddav make one account
			}
		}
	}
	return out
}

// ApplyKind sets the fields of a whose kind's flags were given. On account add (a has no kind
// yet), the flag that names a kind gives a its kind; a flag of another kind than a's is refused.
func ApplyKind(fl *pflag.FlagSet, a *config.Account) error {
	given := fl.Changed
	if a.Kind == "" {
	find:
		for _, k := range kinds.All() {
			for _, kf := range k.Flags.Names() {
				if given(kf.Name) {
					a.Kind = k.Name
					break find
				}
			}
		}
	}
	k, known := kinds.Lookup(a.Kind)
	if a.Kind != "" {
		own := map[string]bool{}
		for _, kf := range k.Flags.List {
			own[kf.Name] = true
		}
		for _, other := range kinds.All() {
			for _, kf := range other.Flags.List {
				if given(kf.Name) && !own[kf.Name] {
					return other.Flags.Foreign(kf.Name, a.Name, k.Noun)
				}
			}
		}
	}
	if known {
		return k.Flags.Apply(fl, a)
	}
	return nil
}

// Common are the values of the flags every kind has (--address, --name, --ca-file, --alias,
// --trust-authserv).
type Common struct {
	Address, CAFile, Display string
	Aliases, Trusted         []string
}

// Apply sets the fields of a whose flags were given: an empty --ca-file clears it, an empty
// --alias or --trust-authserv clears the list, and the lists given replace the old ones.
func (c Common) Apply(given func(string) bool, a *config.Account) error {
	set := func(flag string, p *string, v string) {
		if given(flag) {
			*p = v
		}
	}
	set("address", &a.Address, c.Address)
	set("name", &a.DisplayName, strings.TrimSpace(c.Display))
	if given("ca-file") {
		a.TLSCA = ""
		if c.CAFile != "" {
			abs, err := filepath.Abs(c.CAFile)
			if err != nil {
				return err
			}
			a.TLSCA = abs
		}
	}
	list := func(flag string, p *[]string, v []string) {
		if given(flag) {
			*p = nil
			for _, x := range v {
				if x != "" { // --alias "" clears the list
					*p = append(*p, x)
				}
			}
		}
	}
	list("alias", &a.Aliases, c.Aliases)
	list("trust-authserv", &a.TrustedAuthServ, c.Trusted)
	return nil
}

// NoKind is an account whose flags name no kind: a mistake of the command line.
type NoKind struct{ msg string }

func (e *NoKind) Error() string { return e.msg }

// Validate says, naming the flag, what is wrong with an account about to be written.
func Validate(a config.Account) error {
	if err := config.ValidAccountName(a.Name); err != nil {
		return err
	}
	k, ok := kinds.Lookup(a.Kind)
	if !ok {
		var needs []string
		for _, k := range kinds.All() {
			needs = append(needs, k.Flags.Needs)
		}
		return &NoKind{fmt.Sprintf("give %s; run postern account add --help", kinds.List(needs, "or"))}
	}
	if err := k.Flags.Validate(a); err != nil {
		return err
	}
	bare := func(flag, v string) error {
		if _, err := mail.ParseAddress(v); err != nil || strings.ContainsAny(v, "<>, ") {
			return fmt.Errorf("--%s %q must be a bare address such as you@example.com", flag, v)
		}
		return nil
	}
	if a.Address != "" {
		if err := bare("address", a.Address); err != nil {
			return err
		}
	}
	for _, al := range a.Aliases {
		if err := bare("alias", al); err != nil {
			return err
		}
	}
	if err := config.ValidDisplayName(a.DisplayName); err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	if a.TLSCA != "" {
		if _, err := config.LoadCA(a.TLSCA); err != nil {
			return fmt.Errorf("--ca-file: %v; give the PEM file of the certificate authority that signed the server's certificate", err)
		}
	}
	return nil
}

// Save checks a against its server (unless noCheck, or its kind has nothing to check) and
// writes it into the configuration at path: added when old is nil, else changed from old. When
// nothing is written, undo is called (it forgets the secrets kept for a).
func Save(ctx context.Context, path string, old *config.Account, a config.Account, noCheck bool, stdout io.Writer, undo func()) error {
	k, _ := kinds.Lookup(a.Kind) // Validate made sure it is a kind
	if k.Flags.Check != nil && !noCheck {
		if err := k.Flags.Check(ctx, old, a, stdout); err != nil {
			undo()
			if old == nil {
				return fmt.Errorf("%w. Nothing was added; fix it, or add the account anyway with --no-check", err)
			}
			return fmt.Errorf("%w. Nothing was changed; fix it, or change the account anyway with --no-check", err)
		}
	}
	var err error
	if old == nil {
		err = config.AddAccount(path, a)
	} else {
		err = config.SetAccount(path, a)
	}
	if err != nil {
		undo()
	}
	return err
}

// Remove takes the account name out of the configuration at cfgPath and its messages out of
// the store at storePath (when there is one). It reports whether the configuration had it and
// how many messages went.
func Remove(ctx context.Context, cfgPath, storePath, name string) (found bool, n int, err error) {
	found, err = config.RemoveAccount(cfgPath, name)
	if err != nil {
		return false, 0, err
	}
	if _, err := os.Stat(storePath); err == nil {
		st, err := store.Open(storePath)
		if err != nil {
			return found, 0, err
		}
		defer st.Close()
		lock, err := store.LockWriter(st.Path())
		if err != nil {
			return found, 0, err
		}
		defer lock.Unlock()
		if n, err = st.RemoveAccount(ctx, name); err != nil {
			return found, 0, err
		}
	}
	return found, n, nil
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/accountedit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/discover"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/spf13/cobra"
)

// imapFlag is the flag that names an IMAP account (--imap), which --email fills.
var imapFlag = accountedit.ImapFlag

// emailFlags are account add's discovery flags: --email finds the servers (generated/docs/
// providers.md), --provider names a row of the providers table instead of the address's domain,
// --yes saves what was found without asking.
type emailFlags struct {
	email, provider string
	yes             bool
}

func (e *emailFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&e.email, "email", "", "your address; postern finds the IMAP and SMTP servers (providers table, autoconfig, SRV records) and shows them before saving")
	fl.StringVar(&e.provider, "provider", "", "with --email: use this row of the providers table (such as microsoft365) whatever the address's domain")
	fl.BoolVar(&e.yes, "yes", false, "with --email: save what was found without asking")
	ids := make([]string, len(generated.Providers))
	for i, p := range generated.Providers {
		ids[i] = p.ID
	}
	cmd.RegisterFlagCompletionFunc("provider", cobra.FixedCompletions(ids, cobra.ShellCompDirectiveNoFileComp))
}

// fromEmail fills a from what was found for --email (accountedit.FromEmail).
func (e *emailFlags) fromEmail(cmd *cobra.Command, a *config.Account) (*discover.Found, error) {
	found, err := accountedit.FromEmail(cmd.Context(), e.email, e.provider, cmd.Flags().Changed, a)
	if u := (*accountedit.Usage)(nil); errors.As(err, &u) {
		return nil, usagef("%s", u)
	}
	return found, err
}

// showFound prints what account add --email will save and where each part came from.
func showFound(w io.Writer, cmd *cobra.Command, email string, found *discover.Found, a config.Account) {
	given := cmd.Flags().Changed
	from := func(flags ...string) string {
		for _, f := range flags {
			if given(f) {
				return "your --" + f
			}
		}
		if found == nil {
			return "your flags"
		}
		return "found"
	}
	if found != nil {
		fmt.Fprintf(w, "Found the servers of %s in %s:\n", termsafe.Line(email), termsafe.Line(found.Source))
	}
	line := func(what, addr, tls, user, src string) {
		fmt.Fprintf(w, "  %-4s  %s, tls %s, user %s  (%s)\n", what, termsafe.Line(addr), tls, termsafe.Line(user), termsafe.Line(src))
	}
	line("IMAP", a.Server, a.TLS, a.User, from(imapFlag, "tls", "user"))
	if a.SMTP != "" {
		user := a.SMTPUser
		if user == "" {
			user = a.User
		}
		line("SMTP", a.SMTP, a.SMTPSecurity(), user, from("smtp", "smtp-tls", "smtp-user"))
	} else {
		fmt.Fprintf(w, "  SMTP  none found: the account reads mail but cannot send; add a server later with postern account set %s --smtp HOST:PORT\n", termsafe.Line(a.Name))
	}
	if found == nil {
		return
	}
	if s := found.SignIn(); s != "" {
		fmt.Fprintln(w, "  "+termsafe.Line(s))
	}
	if p := found.Provider; p != nil && p.Notes != "" {
		fmt.Fprintln(w, "  "+p.Notes)
	}
}

// confirmFound asks before saving what --email found: --yes says yes, a terminal is asked, and
// without either nothing is saved.
func (e *emailFlags) confirmFound(cmd *cobra.Command, name string, stdout io.Writer) error {
	if e.yes {
		return nil
	}
	if !stdinIsTerminal() {
		return errors.New("not adding anything without a yes: run again with --yes, or in a terminal to be asked")
	}
	fmt.Fprintf(stdout, "Add account %s with these servers? [y/N] ", termsafe.Line(name))
	line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(stdout, "Nothing was added.")
		return exitError{1}
	}
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/accountedit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/discover"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/oauth"
	"github.com/postern-mcp/postern/internal/server"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/status"
	"github.com/postern-mcp/postern/internal/store"
	syncrun "github.com/postern-mcp/postern/internal/sync"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/postern-mcp/postern/internal/tools"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// storePath is where the store lives: $XDG_DATA_HOME/postern/store.db.
func storePath() string { return store.DefaultPath(config.DataDir()) }

// accountFlags are the flags of account add and account set that every kind has; each kind
// adds its own (source.Flags). set changes only the fields whose flags are given.
type accountFlags struct {
	config, address, caFile, display string
	aliases, trusted                 []string
	noCheck                          bool
	auth                             authFlags // oauth.go
}

func (f *accountFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	addConfigFlag(cmd, &f.config)
	fl.StringVar(&f.caFile, "ca-file", "", "PEM file of a private certificate authority to trust for this account's IMAP and SMTP servers (stored as tls_ca)")
	fl.StringVar(&f.address, "address", "", "your address on this account, the From of what you write (default: --user when it is an address)")
	fl.StringVar(&f.display, "name", "", `your name in the From of what you write, such as "Sam Rivera" (default: the bare address)`)
	fl.StringArrayVar(&f.aliases, "alias", nil, "another address of yours, never replied to by reply-all; repeatable")
	fl.StringArrayVar(&f.trusted, "trust-authserv", nil, "authserv-id of your provider's receiving server (e.g. mx.example.com) whose Authentication-Results mark forged mail; repeatable")
	fl.BoolVar(&f.noCheck, "no-check", false, "do not log in to the IMAP server to check the account first")
	f.auth.register(cmd)
	cmd.MarkFlagFilename("ca-file", "pem", "crt")
	for _, k := range kinds.All() {
		for _, kf := range k.Flags.List {
			if fl.Lookup(kf.Name) != nil {
				continue // another kind has it too
			}
			fl.String(kf.Name, "", kf.Usage)
			if kf.Dir {
				cmd.MarkFlagDirname(kf.Name)
			}
			if kf.Values != nil {
				cmd.RegisterFlagCompletionFunc(kf.Name, cobra.FixedCompletions(kf.Values, cobra.ShellCompDirectiveNoFileComp))
			}
		}
	}
}

// kindFlags are the flags that make an account of each kind on account add (--imap, --maildir)
// that were given.
func kindFlags(cmd *cobra.Command) []string { return accountedit.KindFlags(cmd.Flags().Changed) }

// apply sets the fields of a whose flags were given (accountedit.ApplyKind, Common.Apply).
func (f *accountFlags) apply(cmd *cobra.Command, a *config.Account) error {
	if err := accountedit.ApplyKind(cmd.Flags(), a); err != nil {
		return err
	}
	if err := f.auth.apply(cmd, a); err != nil {
		return err
	}
	c := accountedit.Common{Address: f.address, CAFile: f.caFile, Display: f.display, Aliases: f.aliases, Trusted: f.trusted}
	return c.Apply(cmd.Flags().Changed, a)
}

// validateAccount says, naming the flag, what is wrong with an account about to be written;
// an account of no kind is a usage error.
func validateAccount(a config.Account) error {
	err := accountedit.Validate(a)
	var nk *accountedit.NoKind
	if errors.As(err, &nk) {
		return usagef("%s", err)
	}
	return err
}

// accountAddUse is the usage line of account add: one synopsis per kind.
func accountAddUse() string {
	var syn []string
	for _, k := range kinds.All() {
		syn = append(syn, k.Flags.Synopsis)
	}
	return "add NAME (--email ADDRESS --password-cmd CMD | " + strings.Join(syn, " | ") + ") [flags]"
}

const accountAddLong = `Add a mail account to the configuration.

--email ADDRESS finds the IMAP and SMTP servers, their TLS and your user name:
from postern's providers table (Gmail, Outlook.com, Fastmail, iCloud, Yahoo, GMX,
Proton Bridge, …), else the domain's autoconfig document, else its SRV records
(RFC 6186). It shows what it found and where from, and asks before saving
(--yes to skip the question); every flag you give wins over what was found, and
the password command is not run before you say yes. generated/docs/providers.md
lists the providers and how each signs in.

postern never writes a password into its files: --password-cmd is run at each
sync (and each send) and must print it on its first line (for example "pass show
mail/work"); --keyring keeps the password you type in the OS keyring instead;
--oauth2 signs in with OAuth2 in the browser (its tokens go to the OS keyring, or
a 0600 file when there is none, and it says which), and --oauth2-token-cmd runs
a command that prints an access token.

--tls says how the IMAP connection is secured: implicit TLS (port 993) or
STARTTLS (port 143). When --tls is not given, postern uses starttls on ports 143
and 587 and implicit TLS on every other port, and says which it chose. A server
whose certificate is signed by a private authority needs --ca-file PATH.

Unless --no-check is given, postern first logs in to the IMAP server and lists its
folders, the way postern sync will; when that fails nothing is added, and a TLS
failure says which --tls or --ca-file to try.

With --smtp, the account can send (only when a person grants ` + generated.ScopeMailSend + ` and
approves each message); the SMTP login uses the same password command unless
--smtp-password-cmd is given. --name is your name in the From of drafts and sent
mail.`

const accountAddExample = `  postern account add personal --email sam@fastmail.com --password-cmd "pass show mail/fastmail"
  postern account add work --imap imap.example.com:993 --user sam@example.com \
      --password-cmd "pass show mail/work" --name "Sam Rivera"
  postern account add office --imap mail.corp.example:143 --user sam \
      --password-cmd "secret-tool lookup mail office" --ca-file ~/corp-ca.pem \
      --address sam@corp.example --smtp mail.corp.example:587
  postern account add archive --maildir ~/Maildir`

func newAccountCmd(stdout, stderr io.Writer) *cobra.Command {
	var add, set accountFlags
	var email emailFlags
	addCmd := &cobra.Command{
		Use:     accountAddUse(),
		Short:   "add an IMAP account or a local Maildir (checks the server first)",
		Long:    accountAddLong,
		Example: accountAddExample,
		Args:    exactArgs(1, "the account's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdAccountAdd(cmd, &add, &email, args[0], stdout)
		},
	}
	add.register(addCmd)
	email.register(addCmd)
	setCmd := &cobra.Command{
		Use:   "set NAME --FLAG VALUE…",
		Short: "change fields of an existing account, keeping the rest of the file",
		Long: `Change the fields of an existing account whose flags are given; every other
field, every other account and the file's comments stay as they are. The flags
are those of postern account add; an empty value ("") clears a field, and
--alias or --trust-authserv replace the whole list. When the IMAP server, user,
password command, --tls or --ca-file change, postern logs in to check them first
(unless --no-check). The kind of an account (IMAP or Maildir) cannot change.`,
		Example: `  postern account set work --name "Sam Rivera"
  postern account set work --imap imap.example.com:143 --tls starttls
  postern account set office --ca-file ~/corp-ca.pem
  postern account set work --smtp smtp.example.com:465 --address sam@example.com`,
		Args:              exactArgs(1, "the name of the account to change"),
		ValidArgsFunction: completeFirstAccount,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdAccountSet(cmd, &set, args[0], stdout)
		},
	}
	set.register(setCmd)
	var listCfg string
	var listJSON bool
	listCmd := &cobra.Command{
		Use:   "list",
		Short: "list the accounts, how they connect and how far their mail is synced",
		Long: `List the configured accounts: how each connects (never its password command),
how it sends, and its sync state: the messages stored and when it was last
synced, "partly synced" when a sync was interrupted before it finished, or the
error of its last sync.`,
		Example: "  postern account list\n  postern account list --json",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdAccountList(listCfg, listJSON, stdout)
		},
	}
	addConfigFlag(listCmd, &listCfg)
	listCmd.Flags().BoolVar(&listJSON, "json", false, "print as JSON")
	var rmCfg string
	rmCmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "remove an account from the configuration and its mail from the store",
		Long: `Remove an account's block from the configuration (the rest of the file stays)
and its messages from the local store. The mail on the server is not touched.`,
		Example:           "  postern account remove work",
		Args:              exactArgs(1, "the name of the account to remove"),
		ValidArgsFunction: completeFirstAccount,
		RunE: func(_ *cobra.Command, args []string) error {
			return cmdAccountRemove(rmCfg, args[0], stdout)
		},
	}
	addConfigFlag(rmCmd, &rmCfg)
	return group("account", "add, list, change or remove mail accounts (no password in postern's files)",
		`Manage the mail accounts postern syncs. An account is an IMAP server (read,
and with --smtp also send) or a local Maildir imported read-only. No password is
written into postern's files: each IMAP account has a command that prints its
password, the password in the OS keyring (--keyring), or OAuth2 (--oauth2).`,
		addCmd, listCmd, setCmd, rmCmd, newAccountOAuthCmd(stdout))
}

// completeFirstAccount completes the NAME of account set and remove.
func completeFirstAccount(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completeAccounts(cmd, args, toComplete)
}

func cmdAccountAdd(cmd *cobra.Command, f *accountFlags, e *emailFlags, name string, stdout io.Writer) error {
	if err := config.ValidAccountName(name); err != nil {
		return err
	}
	if chosen := kindFlags(cmd); len(chosen) > 1 {
		return usagef("give either %s or %s, not both; run postern account add --help", chosen[0], chosen[1])
	}
	a := config.Account{Name: name}
	withEmail := cmd.Flags().Changed("email")
	var found *discover.Found
	if withEmail {
		var err error
		if found, err = e.fromEmail(cmd, &a); err != nil {
			return err
		}
	} else if cmd.Flags().Changed("provider") || cmd.Flags().Changed("yes") {
		return usagef("--provider and --yes go with --email; run postern account add --help")
	}
	if err := f.apply(cmd, &a); err != nil {
		return err
	}
	if withEmail {
		found.FillOAuth2(&a)
		showFound(stdout, cmd, e.email, found, a)
		if a.PasswordCmd == "" && a.Password == "" && a.Auth == "" {
			return usagef("--email finds the servers; add --password-cmd CMD (the command that prints your password or app password), --keyring, --oauth2 or --oauth2-token-cmd CMD")
		}
	}
	if err := validateAccount(a); err != nil {
		return err
	}
	cfg, err := config.Load(f.config)
	if err != nil {
		return err
	}
	if server.HasAccount(cfg, name) {
		return fmt.Errorf("an account named %q exists already; change it with postern account set %s, or choose another name", name, name)
	}
	if withEmail {
		if err := e.confirmFound(cmd, name, stdout); err != nil {
			return err
		}
	}
	k, _ := kinds.Lookup(a.Kind) // validateAccount made sure it is a kind
	undo, err := f.auth.keep(cmd, a, stdout)
	if err != nil {
		return err
	}
	if err := accountedit.Save(cmd.Context(), f.config, nil, a, f.noCheck, stdout, undo); err != nil {
		return err
	}
	how := ""
	if k.Flags.Added != nil {
		how = k.Flags.Added(a, cmd.Flags())
	}
	if found != nil && !cmd.Flags().Changed(imapFlag) && !cmd.Flags().Changed("tls") {
		how = ", tls " + a.TLS + " as found"
	}
	fmt.Fprintf(stdout, "Added account %s (%s%s). Run postern sync to fetch its mail.\n", termsafe.Line(name), a.Kind, termsafe.Line(how))
	return nil
}

func cmdAccountSet(cmd *cobra.Command, f *accountFlags, name string, stdout io.Writer) error {
	cfg, err := config.Load(f.config)
	if err != nil {
		return err
	}
	a, err := accountedit.Find(cfg, name)
	if err != nil {
		return err
	}
	var changed []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Name != "config" && fl.Name != "no-check" {
			changed = append(changed, "--"+fl.Name)
		}
	})
	if len(changed) == 0 {
		return usagef("account set %s changes nothing without a flag such as --name or --tls; run postern account set --help", name)
	}
	old := a
	if err := f.apply(cmd, &a); err != nil {
		return err
	}
	if err := validateAccount(a); err != nil {
		return err
	}
	k, _ := kinds.Lookup(a.Kind) // validateAccount made sure it is a kind
	undo, err := f.auth.keep(cmd, a, stdout)
	if err != nil {
		return err
	}
	if err := accountedit.Save(cmd.Context(), f.config, &old, a, f.noCheck, stdout, undo); err != nil {
		return err
	}
	extra := ""
	if k.Flags.Changed != nil {
		extra = k.Flags.Changed(old, a, cmd.Flags())
	}
	fmt.Fprintf(stdout, "Changed account %s (%s).%s\n", termsafe.Line(name), strings.Join(changed, ", "), extra)
	return nil
}

func cmdAccountList(cfgPath string, asJSON bool, stdout io.Writer) error {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	stats, _ := status.ReadStats(storePath())
	rows := status.Accounts(cfg, stats)
	if asJSON {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Fprintln(stdout, string(termsafe.JSON(b)))
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "No accounts. Add one with postern account add NAME --imap HOST:PORT --user USER --password-cmd CMD.")
		return nil
	}
	for _, r := range rows {
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", termsafe.Line(r.Name), termsafe.Line(r.Kind), termsafe.Line(r.Line), termsafe.Line(r.Sync))
	}
	return nil
}

func cmdAccountRemove(cfgPath, name string, stdout io.Writer) error {
	forget := oauth.Forget(cfgPath, name)
	found, n, err := accountedit.Remove(context.Background(), cfgPath, storePath(), name)
	if err != nil {
		return err
	}
	if !found && n == 0 {
		cfg, _ := config.Load(cfgPath)
		return noSuchAccount(name, cfg)
	}
	forget()
	fmt.Fprintf(stdout, "Removed account %s and its %d messages from the store.\n", termsafe.Line(name), n)
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// syncFlags are the flags of postern sync.
type syncFlags struct {
	config, only string
	quiet, stats bool
}

func newSyncCmd(stdout, stderr io.Writer) *cobra.Command {
	var f syncFlags
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "fetch mail into the local store (resumable)",
		Long: `Fetch new mail, flag changes and deletions of every account (or of --account)
into the local store. Resumable: a sync stopped at any moment continues where it
stopped, and until it has finished once, account list and status say "partly
synced". Ctrl-C (SIGINT) or SIGTERM stops it within 2 s, keeping what it stored,
with exit status 130 or 143.`,
		Example: "  postern sync\n  postern sync --account work --quiet",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdSync(&f, stdout, stderr)
		},
	}
	addConfigFlag(cmd, &f.config)
	cmd.Flags().StringVar(&f.only, "account", "", "sync only this account")
	cmd.Flags().BoolVar(&f.quiet, "quiet", false, "print nothing but errors")
	cmd.Flags().BoolVar(&f.stats, "stats", false, "print the time taken and the peak memory used")
	cmd.RegisterFlagCompletionFunc("account", completeAccounts)
	return cmd
}

func cmdSync(f *syncFlags, stdout, stderr io.Writer) error {
	ctx, stop := syncrun.OnSignal(stderr, os.Exit)
	defer stop()
	cfg, err := config.Load(f.config)
	if err != nil {
		return err
	}
	accts, ok := syncrun.Accounts(cfg, f.only)
	if !ok {
		return noSuchAccount(f.only, cfg)
	}
	if roots, _ := cfg.NotesFolders(); len(accts) == 0 && len(roots) == 0 {
		return noSuchAccount("", cfg)
	}
	svc := &tools.Service{Version: postVersion(), Config: config.NewWatcher(f.config), StorePath: storePath()}
	defer svc.Close()
	r := &syncrun.Runner{StorePath: storePath(), Tools: svc, Notes: f.only == ""}
	if len(accts) > 0 {
		syncrun.Memory()
	}
	r.BatchFromEnv() // POSTERN_SYNC_BATCH
	tty := isTerminal(stderr) && !f.quiet
	r.Mail.Warn = func(msg string) {
		if tty {
			fmt.Fprint(stderr, "\r\033[K") // the progress bar is drawn again on the next batch
		}
		fmt.Fprintln(stderr, "postern: "+termsafe.Line(msg))
	}
	if tty {
		r.Mail.Progress = func(p mailsync.Progress) {
			width := 30
			filled := 0
			if p.Total > 0 {
				filled = width * p.Done / p.Total
			}
			fmt.Fprintf(stderr, "\r\033[K%s/%s [%s%s] %d/%d", termsafe.Line(p.Account), termsafe.Line(p.Folder), strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.Done, p.Total)
		}
	}
	failed := 0
	r.Mailed = func(outs []mailsync.Outcome) {
		if tty {
			fmt.Fprint(stderr, "\r\033[K")
		}
		for _, o := range outs {
			if o.Interrupted {
				continue
			}
			if o.Error != "" {
				failed++
				fmt.Fprintf(stderr, "postern: %s\n", termsafe.Line(o.Error))
			} else if !f.quiet {
				fmt.Fprintf(stdout, "%s: %s\n", termsafe.Line(o.Account), syncrun.SyncedLine(accts, o))
			}
		}
	}
	// POSTERN_CPUPROFILE=FILE writes a CPU profile of the sync (for benchmarks).
	defer syncrun.Profile(os.Getenv("POSTERN_CPUPROFILE"))()
	start := time.Now()
	res, err := r.Run(ctx, accts)
	var in *syncrun.Interrupted
	if err != nil {
		if tty {
			fmt.Fprint(stderr, "\r\033[K")
		}
		if errors.As(err, &in) {
			return exitError{in.Report(stderr, 0)} // the store was being opened
		}
		return err
	}
	// A signal that came after every account was done interrupted nothing.
	if errors.As(context.Cause(ctx), &in) && res.Cut {
		return exitError{in.Report(stderr, res.Stored())}
	}
	if len(accts) > 0 {
		failed += printRules(res, stdout, stderr, f.quiet)
	}
	failed += printNotes(res, stdout, stderr, f.quiet)
	if failed > 0 {
		return exitError{1}
	}
	if len(accts) == 0 {
		return nil // only notes to index: nothing was fetched
	}
	if !f.quiet {
		fmt.Fprintf(stdout, "Synced %d account(s) in %s.\n", len(res.Mail), time.Since(start).Round(time.Millisecond))
	}
	if f.stats {
		fmt.Fprintf(stdout, "stats: %.3f s, peak memory %s\n", time.Since(start).Seconds(), syncrun.PeakMemory())
	}
	return nil
}

// printNotes says what indexing the notes folders changed, and returns 1 when it failed.
// Files it skipped are warnings, not failures.
func printNotes(res *syncrun.Result, stdout, stderr io.Writer, quiet bool) int {
	for _, p := range res.NoteProblems {
		fmt.Fprintf(stderr, "postern: %s\n", termsafe.Line(p))
	}
	if res.NotesErr != nil {
		fmt.Fprintf(stderr, "postern: the notes were not indexed: %s\n", termsafe.Line(res.NotesErr.Error()))
		return 1
	}
	if res.Notes == nil {
		return 0
	}
	for _, p := range res.Notes.Problems {
		fmt.Fprintf(stderr, "postern: notes: %s\n", termsafe.Line(p))
	}
	if !quiet {
		fmt.Fprintf(stdout, "notes: %d notes (%d new, %d changed, %d removed)\n", res.Notes.Notes, res.Notes.Added, res.Notes.Updated, res.Notes.Removed)
	}
	return 0
}

// printRules says what the rules did to the new mail, and returns how many accounts' rules
// failed (1 when they did not run at all).
func printRules(res *syncrun.Result, stdout, stderr io.Writer, quiet bool) int {
	if res.RulesErr != nil {
		fmt.Fprintf(stderr, "postern: the rules did not run: %s\n", termsafe.Line(res.RulesErr.Error()))
		return 1
	}
	failed := 0
	for _, r := range res.Rules {
		for _, e := range r.Errors {
			fmt.Fprintf(stderr, "postern: %s: %s\n", termsafe.Line(r.Account), termsafe.Line(e))
		}
		if len(r.Errors) > 0 {
			failed++
		}
		if !quiet && (r.Acted > 0 || r.Sent > 0) {
			fmt.Fprintf(stdout, "%s: rules changed %d of %d new messages (postern undo %s puts them back)", termsafe.Line(r.Account), r.Acted, r.Looked, strings.Join(r.Actions, ", "))
			if r.Sent > 0 {
				fmt.Fprintf(stdout, ", forwarded %d", r.Sent)
			}
			fmt.Fprintln(stdout)
		}
	}
	return failed
}

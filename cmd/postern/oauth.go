package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/postern-mcp/postern/internal/accountedit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/oauth"
	"github.com/postern-mcp/postern/internal/source/imap"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// authFlags are account add's and set's flags for how an IMAP account logs in besides
// --password-cmd: --keyring (the password typed here, kept in the OS keyring) and --oauth2
// (postern's own authorisation, as postern account oauth does). The OAuth2 fields' own flags
// are the IMAP kind's (imap.AuthFlags). Only the person, at a terminal, uses these: no tool
// starts, sees or changes any of it.
type authFlags struct {
	keyring, oauth2, open bool
	clientSecret          string
}

func (f *authFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.keyring, "keyring", false, "ask for the password here and keep it in the OS keyring (password = \"keyring\"), instead of --password-cmd")
	fl.BoolVar(&f.oauth2, "oauth2", false, "log in with OAuth2, authorised now in the browser (needs --oauth2-client-id, --oauth2-auth-url and --oauth2-token-url)")
	registerFlowFlags(cmd, &f.clientSecret, &f.open)
}

func registerFlowFlags(cmd *cobra.Command, secret *string, open *bool) {
	cmd.Flags().StringVar(secret, "oauth2-client-secret", "", "the OAuth2 client's secret, for providers that give one (kept in the keyring with the tokens, never in the file)")
	cmd.Flags().BoolVar(open, "open-browser", false, "open the authorisation page in the browser (else only its address is printed)")
}

// apply sets how a logs in from --keyring and --oauth2.
func (f *authFlags) apply(cmd *cobra.Command, a *config.Account) error {
	if f.keyring && f.oauth2 {
		return usagef("give either --keyring or --oauth2, not both")
	}
	if f.keyring && cmd.Flags().Changed("password-cmd") {
		return usagef("give either --keyring or --password-cmd, not both")
	}
	switch {
	case f.keyring:
		a.Password, a.PasswordCmd, a.Auth = config.PasswordKeyring, "", ""
	case f.oauth2:
		a.Auth, a.Password, a.OAuth2TokenCmd = config.AuthOAuth2, "", ""
	}
	return nil
}

// keep puts the secrets --keyring and --oauth2 ask for where they belong before the account
// is checked and written, and returns what puts back what was there, for when it is not.
func (f *authFlags) keep(cmd *cobra.Command, a config.Account, stdout io.Writer) (undo func(), err error) {
	undo = func() {}
	switch {
	case f.keyring:
		pw, err := readPassword(cmd.InOrStdin(), cmd.ErrOrStderr(), a.Name)
		if err != nil {
			return undo, err
		}
		undo, err := oauth.KeepPassword(a.Name, pw)
		if err != nil {
			return undo, err
		}
		fmt.Fprintf(stdout, "The password of account %s is in the OS keyring (service %s).\n", termsafe.Line(a.Name), oauth.Service)
		return undo, nil
	case f.oauth2:
		return authorize(cmd, a, f.clientSecret, f.open, stdout)
	}
	return undo, nil
}

// authorize runs the browser flow for a and keeps its tokens (oauth.AuthorizeAndKeep), saying where.
func authorize(cmd *cobra.Command, a config.Account, secret string, open bool, stdout io.Writer) (func(), error) {
	where, undo, err := oauth.AuthorizeAndKeep(cmd.Context(), a, oauth.FlowOptions{ClientSecret: secret, Open: open, Out: stdout})
	if err != nil {
		return undo, err
	}
	fmt.Fprintf(stdout, "Authorised account %s. %s\n", termsafe.Line(a.Name), termsafe.Line(where.Sentence()))
	return undo, nil
}

// readPassword reads a password: typed without echo at a terminal, else the first line of stdin.
func readPassword(stdin io.Reader, stderr io.Writer, account string) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(stderr, "Password of account %s (not shown): ", termsafe.Line(account))
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", fmt.Errorf("could not read the password (%v); try again", err)
		}
		if len(b) == 0 {
			return "", errors.New("no password was typed; nothing was changed")
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		if err != nil && err != io.EOF {
			return "", fmt.Errorf("could not read the password from standard input (%v)", err)
		}
		return "", errors.New("--keyring reads the password from the terminal (or the first line of standard input), and none came; nothing was changed")
	}
	return line, nil
}

func newAccountOAuthCmd(stdout io.Writer) *cobra.Command {
	var cfgPath, secret string
	var open bool
	cmd := &cobra.Command{
		Use:   "oauth NAME",
		Short: "authorise an IMAP account to log in with OAuth2 (in your browser), or again after a revocation",
		Long: `Authorise an account to log in with OAuth2 (SASL XOAUTH2 or OAUTHBEARER) for
IMAP and SMTP: postern prints the address of the provider's authorisation page
(and opens it with --open-browser), listens on 127.0.0.1 for the answer (the
redirect address http://127.0.0.1:PORT/callback, with PKCE and a state that is
checked), and trades it for tokens. The refresh token is kept in the OS keyring
(service postern, user NAME), or, where no keyring can be used, in a file only
you can read ($XDG_DATA_HOME/postern/tokens/NAME.json, mode 0600), and the
command says which. postern renews the access token before it expires and once
when a server refuses it; when the renewal itself is refused (the access was
revoked), sync and send say to run this command again.

The provider's client id and endpoints come from the account (oauth2_client_id,
oauth2_auth_url, oauth2_token_url, oauth2_scopes) or from the flags, which are
saved in the account. No tool can start, see or change any of this.`,
		Example: `  postern account oauth work --oauth2-client-id ID \
      --oauth2-auth-url https://login.example.com/authorize \
      --oauth2-token-url https://login.example.com/token --oauth2-scopes "imap smtp offline_access"`,
		Args:              exactArgs(1, "the name of the account to authorise"),
		ValidArgsFunction: completeFirstAccount,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.Load(cfgPath)
			if err != nil {
				return err
			}
			a, err := accountedit.Find(cfg, args[0])
			if err != nil {
				return err
			}
			if !kinds.Has(a.Kind, kinds.OAuth) {
				return fmt.Errorf("account %s is not an IMAP account, and only IMAP accounts log in with OAuth2", a.Name)
			}
			old := a
			if err := imap.ApplyAuth(cmd.Flags(), &a); err != nil {
				return err
			}
			a.Auth, a.Password, a.OAuth2TokenCmd = config.AuthOAuth2, "", ""
			if err := imap.ValidateAuth(a); err != nil {
				return err
			}
			if _, err := authorize(cmd, a, secret, open, stdout); err != nil {
				return err
			}
			if fmt.Sprintf("%#v", old) != fmt.Sprintf("%#v", a) { // changed by the flags
				if err := config.SetAccount(cfgPath, a); err != nil {
					return err
				}
			}
			fmt.Fprintf(stdout, "Account %s logs in with OAuth2. Run postern sync to fetch its mail.\n", termsafe.Line(a.Name))
			return nil
		},
	}
	addConfigFlag(cmd, &cfgPath)
	for _, f := range imap.AuthFlags {
		if f.Name != "oauth2-token-cmd" {
			cmd.Flags().String(f.Name, "", f.Usage)
		}
	}
	registerFlowFlags(cmd, &secret, &open)
	return cmd
}

package imap

import (
	"fmt"
	"net/url"
	"os/exec"
	"reflect"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/oauth"
	"github.com/postern-mcp/postern/internal/source"
)

// AuthFlags are the flags of account add and set for logging in with OAuth2 (the OAuth2
// fields of the configuration; --oauth2 and --keyring are postern account's own).
var AuthFlags = []source.Flag{
	{Name: "oauth2-token-cmd", Usage: "command that prints an OAuth2 access token (for people who have a token helper); run at each connection, never stored"},
	{Name: "oauth2-client-id", Usage: "OAuth2 client id, for postern's own authorisation (postern account oauth NAME)"},
	{Name: "oauth2-auth-url", Usage: "the provider's OAuth2 authorisation endpoint"},
	{Name: "oauth2-token-url", Usage: "the provider's OAuth2 token endpoint"},
	{Name: "oauth2-scopes", Usage: "the OAuth2 scopes to ask for, separated by spaces or commas"},
	{Name: "oauth2-mechanism", Usage: "xoauth2 or oauthbearer (default: oauthbearer when the server offers it, else xoauth2)", Values: []string{config.MechXOAuth2, config.MechOAuthBearer}},
}

// ApplyAuth sets the OAuth2 fields whose flags were given; a token command makes the account
// log in with OAuth2.
func ApplyAuth(fl source.FlagValues, a *config.Account) error {
	value := func(flag string) string { v, _ := fl.GetString(flag); return v }
	for flag, p := range map[string]*string{
		"oauth2-token-cmd": &a.OAuth2TokenCmd, "oauth2-client-id": &a.OAuth2ClientID, "oauth2-auth-url": &a.OAuth2AuthURL,
		"oauth2-token-url": &a.OAuth2TokenURL, "oauth2-mechanism": &a.OAuth2Mechanism,
	} {
		if fl.Changed(flag) {
			*p = strings.TrimSpace(value(flag))
		}
	}
	if fl.Changed("oauth2-scopes") {
		a.OAuth2Scopes = strings.FieldsFunc(value("oauth2-scopes"), func(r rune) bool { return r == ',' || r == ' ' })
	}
	if fl.Changed("oauth2-token-cmd") && a.OAuth2TokenCmd != "" {
		a.Auth, a.Password = config.AuthOAuth2, ""
	}
	if v, _ := fl.GetString("password-cmd"); fl.Changed("password-cmd") && v != "" {
		a.Auth, a.Password, a.OAuth2TokenCmd = "", "", "" // back to a password command
	}
	return nil
}

// ValidateAuth says, naming the flag, what is wrong with how the account logs in.
func ValidateAuth(a config.Account) error {
	for flag, u := range map[string]string{"--oauth2-auth-url": a.OAuth2AuthURL, "--oauth2-token-url": a.OAuth2TokenURL} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || p.Host == "" || (p.Scheme != "https" && !(p.Scheme == "http" && config.Loopback(p.Hostname()))) {
			return fmt.Errorf("%s %q must be an https:// URL (http:// only to this computer)", flag, u)
		}
	}
	switch a.OAuth2Mechanism {
	case "", config.MechXOAuth2, config.MechOAuthBearer:
	default:
		return fmt.Errorf("--oauth2-mechanism must be xoauth2 or oauthbearer, not %q", a.OAuth2Mechanism)
	}
	if a.OAuth2() && a.OAuth2TokenCmd == "" && (a.OAuth2ClientID == "" || a.OAuth2AuthURL == "" || a.OAuth2TokenURL == "") {
		return fmt.Errorf("an OAuth2 account needs --oauth2-token-cmd CMD, or --oauth2-client-id, --oauth2-auth-url and --oauth2-token-url for postern's own authorisation")
	}
	return nil
}

// authProblems are what would make an OAuth2 or keyring login fail, found without connecting.
func authProblems(a config.Account) []string {
	set := "postern account set " + a.Name
	switch {
	case a.OAuth2() && strings.TrimSpace(a.OAuth2TokenCmd) != "":
		if prog := config.FirstProgram(a.OAuth2TokenCmd); prog != "" {
			if _, err := exec.LookPath(prog); err != nil {
				return []string{fmt.Sprintf("the OAuth2 token command runs %s, which is not installed or not on PATH; install it or change it with %s --oauth2-token-cmd CMD", prog, set)}
			}
		}
	case a.OAuth2():
		if err := ValidateAuth(a); err != nil {
			return []string{err.Error()}
		}
		if _, err := oauth.LoadToken(a.Name); err != nil {
			return []string{err.Error()}
		}
	case a.KeyringPassword():
		if _, err := oauth.Password(a.Name); err != nil {
			return []string{err.Error()}
		}
	}
	return nil
}

// sameAuth says whether a logs in as old did (account set checks the login again otherwise).
func sameAuth(old, a config.Account) bool {
	return old.Auth == a.Auth && old.Password == a.Password && old.OAuth2TokenCmd == a.OAuth2TokenCmd &&
		old.OAuth2ClientID == a.OAuth2ClientID && old.OAuth2TokenURL == a.OAuth2TokenURL &&
		old.OAuth2Mechanism == a.OAuth2Mechanism && reflect.DeepEqual(old.OAuth2Scopes, a.OAuth2Scopes)
}

// authWord is how the account logs in, for account list, when it is not a password command;
// never the command itself.
func authWord(a config.Account) string {
	switch {
	case a.OAuth2() && a.OAuth2TokenCmd != "":
		return ", OAuth2 by token command"
	case a.OAuth2():
		return ", OAuth2"
	case a.KeyringPassword():
		return ", password in the keyring"
	}
	return ""
}

package config

import "fmt"

// How an account logs in (the auth key): by password (the default: password_cmd, or the OS
// keyring when password = "keyring") or by OAuth2 (SASL XOAUTH2 or OAUTHBEARER), with an
// access token printed by oauth2_token_cmd or one postern renews itself from the refresh token
// that postern account oauth NAME saved in the OS keyring (internal/oauth).
const (
	AuthPassword = "password"
	AuthOAuth2   = "oauth2"
	// PasswordKeyring is the only value of the password key: the password is in the OS
	// keyring (postern account add … --keyring put it there). A password itself is never
	// written in the file.
	PasswordKeyring = "keyring"
)

// OAuth2 mechanisms an account may insist on (oauth2_mechanism); empty: OAUTHBEARER when the
// server offers it, else XOAUTH2.
const (
	MechXOAuth2     = "xoauth2"
	MechOAuthBearer = "oauthbearer"
)

// OAuth2 says whether the account logs in with OAuth2.
func (a Account) OAuth2() bool { return a.Auth == AuthOAuth2 }

// KeyringPassword says whether the account's password is in the OS keyring.
func (a Account) KeyringPassword() bool { return a.Password == PasswordKeyring }

// HasSecret says whether the account has a way to log in: a password command, a password in
// the keyring, or OAuth2.
func (a Account) HasSecret() bool {
	return a.PasswordCmd != "" || a.KeyringPassword() || a.OAuth2()
}

// authProblems are the values of the auth keys Load refuses. The value of password is never
// repeated: it may be a password written there by mistake.
func (a Account) authProblems() []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	switch a.Auth {
	case "", AuthPassword, AuthOAuth2:
	default:
		add("account %q has auth %q; use password or oauth2", a.Name, a.Auth)
	}
	if a.Password != "" && a.Password != PasswordKeyring {
		add("account %q has a password key that is not \"keyring\"; a password is never written in the file: remove it and use password_cmd, or postern account set %s --keyring", a.Name, a.Name)
	}
	switch a.OAuth2Mechanism {
	case "", MechXOAuth2, MechOAuthBearer:
	default:
		add("account %q has oauth2_mechanism %q; use xoauth2 or oauthbearer (or remove it to choose by what the server offers)", a.Name, a.OAuth2Mechanism)
	}
	if a.OAuth2() && a.KeyringPassword() {
		add("account %q has both auth = \"oauth2\" and password = \"keyring\"; keep one", a.Name)
	}
	return ps
}

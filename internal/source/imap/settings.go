package imap

import (
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
)

// noun names an account of the kind in a sentence.
const noun = "an IMAP account"

// Settings are the fields of the configuration's account that an IMAP account reads: how it
// reaches and logs in to its IMAP server, how it sends, and where its server-side rules are.
type Settings struct {
	Name   string `toml:"name"`
	Server string `toml:"server"` // host:port
	User   string `toml:"user"`
	// PasswordCmd prints the password (run at each connection, never stored).
	PasswordCmd string `toml:"password_cmd"`
	TLS         string `toml:"tls"` // implicit, starttls or none
	// TLSCA is a PEM file of authorities trusted, besides the system's, for IMAP and SMTP.
	TLSCA string `toml:"tls_ca"`
	// TrustedAuthServ names the receiving servers whose Authentication-Results are believed.
	TrustedAuthServ []string `toml:"trusted_authserv_ids"`
	// SMTP is the submission server (host:port) and how it is reached and logged in to.
	SMTP            string `toml:"smtp"`
	SMTPTLS         string `toml:"smtp_tls"`
	SMTPUser        string `toml:"smtp_user"`
	SMTPPasswordCmd string `toml:"smtp_password_cmd"`
	// ArchiveFolder is where archived mail goes when no folder is marked \Archive.
	ArchiveFolder string `toml:"archive_folder"`
	// BackupDays is how long backups of moves to trash are kept.
	BackupDays int `toml:"backup_retention_days"`
	// Sieve is the ManageSieve server (host:port; empty: the IMAP host, port 4190).
	Sieve string `toml:"sieve"`
	// How the account logs in other than by PasswordCmd: OAuth2, or the OS keyring.
	Auth            string   `toml:"auth"`
	Password        string   `toml:"password"`
	OAuth2TokenCmd  string   `toml:"oauth2_token_cmd"`
	OAuth2ClientID  string   `toml:"oauth2_client_id"`
	OAuth2AuthURL   string   `toml:"oauth2_auth_url"`
	OAuth2TokenURL  string   `toml:"oauth2_token_url"`
	OAuth2Scopes    []string `toml:"oauth2_scopes"`
	OAuth2Mechanism string   `toml:"oauth2_mechanism"`
}

// SettingsOf is the settings of a configured account; a field of another kind is ignored
// (config.Notices says so).
func SettingsOf(a config.Account) (Settings, error) {
	var s Settings
	err := source.Settle(a, noun, &s)
	return s, err
}

// parse is SettingsOf without its result: the Parse of Kind.
func parse(a config.Account) error {
	_, err := SettingsOf(a)
	return err
}

// OAuth2 says whether the account logs in with OAuth2.
func (s Settings) OAuth2() bool { return s.Auth == config.AuthOAuth2 }

// KeyringPassword says whether the account's password is in the OS keyring.
func (s Settings) KeyringPassword() bool { return s.Password == config.PasswordKeyring }

// oauthAccount is what internal/oauth reads of the account (its name, user and OAuth2 fields).
func (s Settings) oauthAccount() config.Account {
	return config.Account{
		Name: s.Name, Kind: KindName, User: s.User, Auth: s.Auth,
		OAuth2TokenCmd: s.OAuth2TokenCmd, OAuth2ClientID: s.OAuth2ClientID, OAuth2AuthURL: s.OAuth2AuthURL,
		OAuth2TokenURL: s.OAuth2TokenURL, OAuth2Scopes: s.OAuth2Scopes, OAuth2Mechanism: s.OAuth2Mechanism,
	}
}

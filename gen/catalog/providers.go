package catalog

import (
	"slices"
	"strings"
)

// MailServer is one IMAP or SMTP server of a provider.
type MailServer struct {
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
	// TLS is implicit or starttls.
	TLS string `yaml:"tls"`
	// Username is %EMAILADDRESS% (the default, when empty) or %EMAILLOCALPART%.
	Username string `yaml:"username"`
}

// ProviderOAuth2 is how a provider's sign-in gives tokens for IMAP and SMTP.
type ProviderOAuth2 struct {
	AuthURL       string   `yaml:"auth_url"`
	TokenURL      string   `yaml:"token_url"`
	Scopes        []string `yaml:"scopes"`
	BringClientID bool     `yaml:"bring_client_id"`
}

// Provider is a mail provider postern account add --email knows by its domains.
type Provider struct {
	ID          string          `yaml:"id"`
	Name        string          `yaml:"name"`
	Domains     []string        `yaml:"domains"`
	IMAP        MailServer      `yaml:"imap"`
	SMTP        MailServer      `yaml:"smtp"`
	CalDAV      string          `yaml:"caldav"`
	CardDAV     string          `yaml:"carddav"`
	Auth        []string        `yaml:"auth"`
	OAuth2      *ProviderOAuth2 `yaml:"oauth2"`
	AppPassword string          `yaml:"app_password"`
	Notes       string          `yaml:"notes"`
	Pos         Pos             `yaml:"-"`
}

// Auth methods a provider may accept (the schema's enum).
const (
	AuthPassword    = "password"
	AuthAppPassword = "app_password"
	AuthOAuth2      = "oauth2"
)

// lintProviders checks what the schema cannot: ids and domains claimed once, an oauth2 section
// exactly when oauth2 is accepted, an app-password line exactly when app passwords are, and
// domains written the way lookups compare them.
func lintProviders(ps []*Provider, add func(Pos, string, ...any)) {
	ids := map[string]Pos{}
	domains := map[string]string{}
	for _, p := range ps {
		if prev, ok := ids[p.ID]; ok {
			add(p.Pos, "provider %q is declared twice (also at %s)", p.ID, prev)
		}
		ids[p.ID] = p.Pos
		for _, d := range p.Domains {
			if other, ok := domains[d]; ok && other != p.ID {
				add(p.Pos, "provider %s: domain %s is already served by provider %s; a domain names one provider", p.ID, d, other)
				continue
			}
			domains[d] = p.ID
		}
		oauth := slices.Contains(p.Auth, AuthOAuth2)
		switch {
		case oauth && p.OAuth2 == nil:
			add(p.Pos, "provider %s accepts oauth2 but has no oauth2 section (auth_url, token_url, scopes, bring_client_id)", p.ID)
		case !oauth && p.OAuth2 != nil:
			add(p.Pos, "provider %s has an oauth2 section but auth does not list oauth2", p.ID)
		}
		app := slices.Contains(p.Auth, AuthAppPassword)
		switch {
		case app && strings.TrimSpace(p.AppPassword) == "":
			add(p.Pos, "provider %s accepts app_password but has no app_password line saying where to make one", p.ID)
		case !app && p.AppPassword != "":
			add(p.Pos, "provider %s has an app_password line but auth does not list app_password", p.ID)
		}
		if strings.ContainsAny(p.AppPassword+p.Notes, "\n") {
			add(p.Pos, "provider %s: app_password and notes are one line each", p.ID)
		}
	}
}

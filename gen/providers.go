package main

import (
	"strings"

	"github.com/postern-mcp/postern/gen/catalog"
)

// providerView is a provider as the templates print it: the user names filled in where the
// catalog leaves the default, and the sign-in methods in words for the docs page.
type providerView struct {
	*catalog.Provider
	IMAP, SMTP catalog.MailServer
	// AuthWords is the auth methods in a person's words: "OAuth2, app password".
	AuthWords string
	// AuthConsts are the Go constants of the auth methods (generated.AuthOAuth2 …).
	AuthConsts []string
	// IMAPUser and SMTPUser are the Go constants of the servers' user names.
	IMAPUser, SMTPUser string
}

// DefaultUsername is what a server takes as the user name when the catalog does not say.
const DefaultUsername = "%EMAILADDRESS%"

// authWords are the auth methods as a person reads them, and their Go constants.
var authWords = map[string][2]string{
	catalog.AuthPassword:    {"password", "AuthPassword"},
	catalog.AuthAppPassword: {"app password", "AuthAppPassword"},
	catalog.AuthOAuth2:      {"OAuth2", "AuthOAuth2"},
}

// usernameConsts are the generated constants of the user name placeholders.
var usernameConsts = map[string]string{"%EMAILADDRESS%": "UsernameAddress", "%EMAILLOCALPART%": "UsernameLocalPart"}

func newProviderViews(ps []*catalog.Provider) []*providerView {
	var out []*providerView
	for _, p := range ps {
		v := &providerView{Provider: p, IMAP: p.IMAP, SMTP: p.SMTP}
		for _, s := range []*catalog.MailServer{&v.IMAP, &v.SMTP} {
			if s.Username == "" {
				s.Username = DefaultUsername
			}
		}
		v.IMAPUser, v.SMTPUser = usernameConsts[v.IMAP.Username], usernameConsts[v.SMTP.Username]
		var words []string
		for _, a := range p.Auth {
			words = append(words, authWords[a][0])
			v.AuthConsts = append(v.AuthConsts, authWords[a][1])
		}
		v.AuthWords = strings.Join(words, ", ")
		out = append(out, v)
	}
	return out
}

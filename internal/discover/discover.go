// Package discover finds the IMAP and SMTP servers of an email address for postern account add
// --email: from the providers table (catalog/providers.yaml), else the domain's autoconfig
// document (Thunderbird's format), else its RFC 6186 SRV records, saying where each came from.
// It never sends a password or runs a password command, contacts nothing but the address's
// domain (its autoconfig hosts and its DNS), fetches autoconfig over HTTPS only (unless a
// test points it elsewhere) and gives each lookup a few seconds.
//
// Written here rather than taken from a library: no maintained Go package reads Thunderbird's
// autoconfig format, and SRV lookups are net.Resolver's; what is left is the order and the
// sentences.
package discover

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
)

// DefaultTimeout bounds each lookup: one autoconfig fetch, one SRV query.
const DefaultTimeout = 5 * time.Second

// Server is one server found: where it is, how it is secured, the user name it takes.
type Server struct {
	Host string
	Port int
	// TLS is implicit, starttls or none, as --tls writes it.
	TLS  string
	User string
}

// Addr is the server as HOST:PORT.
func (s Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Found is what one source said about an address.
type Found struct {
	// Source says where it was found, in words: "the providers table (Gmail)",
	// "the autoconfig document https://…", "the SRV records of example.com".
	Source string
	// IMAP is always set; SMTP may be nil (the source named no submission server).
	IMAP *Server
	SMTP *Server
	// Provider is the table's row when the table knew the domain, else nil.
	Provider *generated.ProviderSpec
	// Auth is how the servers take a login (generated.AuthPassword, AuthOAuth2 …) when the
	// source says so, else nil.
	Auth []string
}

// Attempt is one place looked at, and what was there.
type Attempt struct {
	Where, Result string
}

// Options are where the lookups go. The zero value looks in the real places.
type Options struct {
	// HTTP fetches autoconfig documents (nil: a client with Timeout).
	HTTP *http.Client
	// AutoconfigURLs are the documents to try, each with {domain} and {email} filled in
	// (nil: AutoconfigURLs).
	AutoconfigURLs []string
	// AllowHTTP lets AutoconfigURLs be plain http (tests only: a server on 127.0.0.1).
	AllowHTTP bool
	// Resolver answers SRV queries (nil: net.DefaultResolver).
	Resolver *net.Resolver
	// Timeout bounds each lookup (0: DefaultTimeout).
	Timeout time.Duration
}

// AutoconfigURLs are where Thunderbird looks for a domain's own autoconfig document.
var AutoconfigURLs = []string{
	"https://autoconfig.{domain}/mail/config-v1.1.xml?emailaddress={email}",
	"https://{domain}/.well-known/autoconfig/mail/config-v1.1.xml",
}

// ErrNotFound is returned, wrapped in a *NotFoundError, when no source knows the domain.
var ErrNotFound = errors.New("no servers found")

// NotFoundError says every place looked at, so that the person is told what was tried.
type NotFoundError struct {
	Domain   string
	Attempts []Attempt
}

func (e *NotFoundError) Error() string {
	var parts []string
	for _, a := range e.Attempts {
		parts = append(parts, a.Where+" ("+a.Result+")")
	}
	return fmt.Sprintf("no IMAP server found for %s: %s", e.Domain, strings.Join(parts, "; "))
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Split checks that email is a bare address and returns its local part and its domain, lower
// case.
func Split(email string) (local, domain string, err error) {
	a, perr := mail.ParseAddress(email)
	at := strings.LastIndexByte(email, '@')
	if perr != nil || a.Address != email || at <= 0 || at == len(email)-1 || strings.ContainsAny(email, " <>,") {
		return "", "", fmt.Errorf("--email %q must be a bare address such as you@example.com", email)
	}
	return email[:at], strings.ToLower(email[at+1:]), nil
}

// FromTable is the providers table's row for email's domain, or nil.
func FromTable(email string) (*Found, error) {
	_, domain, err := Split(email)
	if err != nil {
		return nil, err
	}
	for i := range generated.Providers {
		p := &generated.Providers[i]
		for _, d := range p.Domains {
			if d == domain {
				return FromProvider(p, email), nil
			}
		}
	}
	return nil, nil
}

// Provider is the table's row with id, or nil.
func Provider(id string) *generated.ProviderSpec {
	for i := range generated.Providers {
		if generated.Providers[i].ID == id {
			return &generated.Providers[i]
		}
	}
	return nil
}

// FromProvider is what the table's row p says for email.
func FromProvider(p *generated.ProviderSpec, email string) *Found {
	server := func(s generated.ProviderServer) *Server {
		return &Server{Host: s.Host, Port: s.Port, TLS: s.TLS, User: Fill(s.Username, email)}
	}
	return &Found{
		Source:   "the providers table (" + p.Name + ")",
		IMAP:     server(p.IMAP),
		SMTP:     server(p.SMTP),
		Provider: p,
		Auth:     append([]string(nil), p.Auth...),
	}
}

// Fill replaces Thunderbird's placeholders in s: %EMAILADDRESS%, %EMAILLOCALPART% and
// %EMAILDOMAIN%.
func Fill(s, email string) string {
	local, domain := email, ""
	if at := strings.LastIndexByte(email, '@'); at >= 0 {
		local, domain = email[:at], email[at+1:]
	}
	return strings.NewReplacer(
		generated.UsernameAddress, email,
		generated.UsernameLocalPart, local,
		"%EMAILDOMAIN%", domain,
	).Replace(s)
}

// Lookup finds email's servers: the providers table, else the domain's autoconfig documents
// in order, else its SRV records. It returns the first source that names an IMAP server and
// every attempt made; when none does, the error is a *NotFoundError.
func Lookup(ctx context.Context, email string, opt Options) (*Found, []Attempt, error) {
	_, domain, err := Split(email)
	if err != nil {
		return nil, nil, err
	}
	var tried []Attempt
	if f, _ := FromTable(email); f != nil {
		return f, append(tried, Attempt{"the providers table", "found " + f.Provider.Name}), nil
	}
	tried = append(tried, Attempt{"the providers table", "no entry for " + domain})
	f, more := lookupAutoconfig(ctx, email, domain, opt)
	tried = append(tried, more...)
	if f != nil {
		return f, tried, nil
	}
	f, more = lookupSRV(ctx, email, domain, opt)
	tried = append(tried, more...)
	if f != nil {
		return f, tried, nil
	}
	return nil, tried, &NotFoundError{Domain: domain, Attempts: tried}
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// validHost reports whether h can be a server's host name: a DNS name or an IP address, as a
// document from a stranger must be checked before it is shown or dialled.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

package discover

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/postern-mcp/postern/generated"
)

// maxDocument bounds an autoconfig document; real ones are a few kilobytes.
const maxDocument = 1 << 20

// clientConfig is the part of Thunderbird's autoconfig format (clientConfig version 1.1)
// postern reads: the first emailProvider's servers.
type clientConfig struct {
	XMLName   xml.Name `xml:"clientConfig"`
	Providers []struct {
		ID          string      `xml:"id,attr"`
		DisplayName string      `xml:"displayName"`
		Incoming    []xmlServer `xml:"incomingServer"`
		Outgoing    []xmlServer `xml:"outgoingServer"`
	} `xml:"emailProvider"`
}

type xmlServer struct {
	Type       string   `xml:"type,attr"`
	Hostname   string   `xml:"hostname"`
	Port       string   `xml:"port"`
	SocketType string   `xml:"socketType"`
	Username   string   `xml:"username"`
	Auth       []string `xml:"authentication"`
}

// socketTLS maps autoconfig's socketType to --tls.
var socketTLS = map[string]string{"SSL": "implicit", "STARTTLS": "starttls", "plain": "none"}

// autoconfigAuth maps autoconfig's authentication values to the table's auth methods.
var autoconfigAuth = map[string]string{
	"password-cleartext": generated.AuthPassword,
	"password-encrypted": generated.AuthPassword,
	"OAuth2":             generated.AuthOAuth2,
}

func lookupAutoconfig(ctx context.Context, email, domain string, opt Options) (*Found, []Attempt) {
	urls := opt.AutoconfigURLs
	if urls == nil {
		urls = AutoconfigURLs
	}
	client := opt.HTTP
	if client == nil {
		client = &http.Client{Timeout: opt.timeout()}
	}
	// Redirects stay on HTTPS (a test's plain server aside); the document is read whole or not.
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if req.URL.Scheme != "https" && !opt.AllowHTTP {
			return fmt.Errorf("redirected to %s, which is not HTTPS", req.URL.Redacted())
		}
		return nil
	}
	var tried []Attempt
	for _, tmpl := range urls {
		u := strings.NewReplacer("{domain}", domain, "{email}", url.QueryEscape(email)).Replace(tmpl)
		doc, err := fetch(ctx, &c, u, opt)
		shown := strings.SplitN(u, "?", 2)[0] // the address stays out of what is printed
		if err != nil {
			tried = append(tried, Attempt{"the autoconfig document " + shown, err.Error()})
			continue
		}
		f, err := parseAutoconfig(doc, email)
		if err != nil {
			tried = append(tried, Attempt{"the autoconfig document " + shown, err.Error()})
			continue
		}
		f.Source = "the autoconfig document " + shown
		return f, append(tried, Attempt{"the autoconfig document " + shown, "found " + f.IMAP.Host})
	}
	return nil, tried
}

func fetch(ctx context.Context, c *http.Client, u string, opt Options) ([]byte, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	if pu.Scheme != "https" && !(opt.AllowHTTP && pu.Scheme == "http") {
		return nil, errors.New("not HTTPS, so not fetched")
	}
	ctx, cancel := context.WithTimeout(ctx, opt.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var de *net.DNSError
		if errors.As(err, &de) {
			return nil, errors.New(de.Err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s", opt.timeout())
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDocument {
		return nil, fmt.Errorf("larger than %d bytes", maxDocument)
	}
	return b, nil
}

// parseAutoconfig reads the first emailProvider of doc: its first IMAP incomingServer and first
// SMTP outgoingServer that use TLS (else the first at all), placeholders filled for email.
func parseAutoconfig(doc []byte, email string) (*Found, error) {
	var cc clientConfig
	if err := xml.Unmarshal(doc, &cc); err != nil {
		return nil, fmt.Errorf("not an autoconfig document: %v", err)
	}
	if len(cc.Providers) == 0 {
		return nil, errors.New("no emailProvider in the document")
	}
	p := cc.Providers[0]
	imap, err := pick(p.Incoming, "imap", email)
	if err != nil {
		return nil, err
	}
	if imap == nil {
		return nil, errors.New("no IMAP server in the document")
	}
	smtp, err := pick(p.Outgoing, "smtp", email)
	if err != nil {
		return nil, err
	}
	f := &Found{IMAP: imap.Server, Auth: imap.auth}
	if smtp != nil {
		f.SMTP = smtp.Server
	}
	return f, nil
}

type picked struct {
	*Server
	auth []string
}

func pick(servers []xmlServer, typ, email string) (*picked, error) {
	var first *picked
	for _, s := range servers {
		if s.Type != typ {
			continue
		}
		host := strings.TrimSpace(Fill(s.Hostname, email))
		if !validHost(host) {
			return nil, fmt.Errorf("the %s server's host name %q is not a host name", typ, host)
		}
		port, err := strconv.Atoi(strings.TrimSpace(s.Port))
		if err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("the %s server's port %q is not a port", typ, s.Port)
		}
		tls, ok := socketTLS[strings.TrimSpace(s.SocketType)]
		if !ok {
			return nil, fmt.Errorf("the %s server's socketType %q is not SSL, STARTTLS or plain", typ, s.SocketType)
		}
		user := strings.TrimSpace(Fill(s.Username, email))
		if user == "" {
			user = email
		}
		pk := &picked{Server: &Server{Host: host, Port: port, TLS: tls, User: user}}
		for _, a := range s.Auth {
			if m, ok := autoconfigAuth[strings.TrimSpace(a)]; ok && !contains(pk.auth, m) {
				pk.auth = append(pk.auth, m)
			}
		}
		if tls != "none" {
			return pk, nil
		}
		if first == nil {
			first = pk
		}
	}
	return first, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

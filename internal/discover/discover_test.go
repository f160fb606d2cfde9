package discover

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// doc is an autoconfig document as providers publish them: a plain server listed before the
// TLS one, placeholders in the host and user names, and a POP3 server to be passed over.
const doc = `<?xml version="1.0" encoding="UTF-8"?>
<clientConfig version="1.1">
  <emailProvider id="example.org">
    <domain>example.org</domain>
    <displayName>Example Mail</displayName>
    <incomingServer type="pop3">
      <hostname>pop.example.org</hostname><port>995</port><socketType>SSL</socketType>
      <username>%EMAILADDRESS%</username>
    </incomingServer>
    <incomingServer type="imap">
      <hostname>imap.example.org</hostname><port>143</port><socketType>plain</socketType>
      <username>%EMAILADDRESS%</username>
    </incomingServer>
    <incomingServer type="imap">
      <hostname>imap.%EMAILDOMAIN%</hostname><port>993</port><socketType>SSL</socketType>
      <username>%EMAILLOCALPART%</username>
      <authentication>OAuth2</authentication>
      <authentication>password-cleartext</authentication>
    </incomingServer>
    <outgoingServer type="smtp">
      <hostname>smtp.example.org</hostname><port>587</port><socketType>STARTTLS</socketType>
      <username>%EMAILADDRESS%</username>
    </outgoingServer>
  </emailProvider>
</clientConfig>`

func TestParseAutoconfig(t *testing.T) {
	f, err := parseAutoconfig([]byte(doc), "sam@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if got := *f.IMAP; got != (Server{"imap.example.org", 993, "implicit", "sam"}) {
		t.Errorf("IMAP: %+v; want the first TLS server, placeholders filled", got)
	}
	if got := *f.SMTP; got != (Server{"smtp.example.org", 587, "starttls", "sam@example.org"}) {
		t.Errorf("SMTP: %+v", got)
	}
	if strings.Join(f.Auth, ",") != generated.AuthOAuth2+","+generated.AuthPassword {
		t.Errorf("auth %v", f.Auth)
	}
}

// A stranger's document is checked before anything in it is shown or dialled.
func TestParseAutoconfigRefuses(t *testing.T) {
	for name, c := range map[string]struct{ doc, want string }{
		"not xml":      {"hello", "not an autoconfig document"},
		"no provider":  {`<clientConfig version="1.1"></clientConfig>`, "no emailProvider"},
		"no imap":      {`<clientConfig><emailProvider><incomingServer type="pop3"><hostname>p.example</hostname><port>995</port><socketType>SSL</socketType></incomingServer></emailProvider></clientConfig>`, "no IMAP server"},
		"bad host":     {`<clientConfig><emailProvider><incomingServer type="imap"><hostname>evil.example;rm -rf</hostname><port>993</port><socketType>SSL</socketType></incomingServer></emailProvider></clientConfig>`, "is not a host name"},
		"escape":       {"<clientConfig><emailProvider><incomingServer type=\"imap\"><hostname>a\x1b[2Jb</hostname><port>993</port><socketType>SSL</socketType></incomingServer></emailProvider></clientConfig>", "not an autoconfig document"},
		"bad port":     {`<clientConfig><emailProvider><incomingServer type="imap"><hostname>i.example</hostname><port>99999</port><socketType>SSL</socketType></incomingServer></emailProvider></clientConfig>`, "is not a port"},
		"bad security": {`<clientConfig><emailProvider><incomingServer type="imap"><hostname>i.example</hostname><port>993</port><socketType>TLS1</socketType></incomingServer></emailProvider></clientConfig>`, "is not SSL, STARTTLS or plain"},
	} {
		if _, err := parseAutoconfig([]byte(c.doc), "sam@example.org"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestFromTable(t *testing.T) {
	f, err := FromTable("Sam.Rivera@GoogleMail.com")
	if err != nil || f == nil {
		t.Fatalf("googlemail.com not found: %v", err)
	}
	if f.IMAP.Addr() != "imap.gmail.com:993" || f.IMAP.TLS != "implicit" || f.IMAP.User != "Sam.Rivera@GoogleMail.com" || f.Provider.ID != "gmail" {
		t.Errorf("gmail: %+v", f.IMAP)
	}
	if f, _ := FromTable("sam@example.org"); f != nil {
		t.Errorf("example.org found in the table: %+v", f)
	}
	if _, err := FromTable("Sam <sam@gmail.com>"); err == nil {
		t.Error("a display name was taken for an address")
	}
}

// Every row of the table can be used as it is: its servers are host:port with a TLS word, and
// what it needs to sign in is there.
func TestTableRowsAreWhole(t *testing.T) {
	for _, p := range generated.Providers {
		f := FromProvider(&p, "sam@"+append(p.Domains, "example.org")[0])
		for _, s := range []*Server{f.IMAP, f.SMTP} {
			if !validHost(s.Host) || s.Port == 0 || (s.TLS != "implicit" && s.TLS != "starttls") || strings.Contains(s.User, "%") {
				t.Errorf("%s: server %+v", p.ID, *s)
			}
		}
	}
}

func TestLookupAutoconfigOrder(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
		if r.URL.Path == "/second/config-v1.1.xml" {
			w.Write([]byte(doc))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	opt := Options{AllowHTTP: true, AutoconfigURLs: []string{srv.URL + "/first/config-v1.1.xml?emailaddress={email}", srv.URL + "/second/config-v1.1.xml"}}
	f, tried, err := Lookup(context.Background(), "sam+x@example.org", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0] != "/first/config-v1.1.xml?emailaddress=sam%2Bx%40example.org" {
		t.Errorf("asked %q", asked)
	}
	if f.IMAP.Host != "imap.example.org" || !strings.Contains(f.Source, "/second/") || len(tried) != 3 {
		t.Errorf("found %+v from %s after %v", f.IMAP, f.Source, tried)
	}
	if strings.Contains(f.Source, "sam") {
		t.Errorf("the source shown names the address: %s", f.Source)
	}

	// Plain HTTP is a test's only: without AllowHTTP nothing is fetched.
	asked = nil
	opt.AllowHTTP = false
	opt.Resolver = nil
	_, tried, err = lookupOnlyAutoconfig(opt)
	if len(asked) != 0 || err == nil || !strings.Contains(tried[0].Result, "not HTTPS") {
		t.Errorf("plain http fetched: asked %v, %v", asked, tried)
	}
}

func lookupOnlyAutoconfig(opt Options) (*Found, []Attempt, error) {
	f, tried := lookupAutoconfig(context.Background(), "sam@example.org", "example.org", opt)
	if f == nil {
		return nil, tried, errors.New("none")
	}
	return f, tried, nil
}

func TestSplit(t *testing.T) {
	if l, d, err := Split("Sam@Example.ORG"); err != nil || l != "Sam" || d != "example.org" {
		t.Errorf("%q %q %v", l, d, err)
	}
	for _, bad := range []string{"", "sam", "@example.org", "sam@", "Sam <sam@example.org>", "a@b@c", "sam @example.org"} {
		if _, _, err := Split(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

// An HTTPS document that redirects to plain HTTP is not followed.
func TestAutoconfigRedirectStaysHTTPS(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(doc)) }))
	defer plain.Close()
	tls := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/config-v1.1.xml", http.StatusFound))
	defer tls.Close()
	opt := Options{HTTP: tls.Client(), AutoconfigURLs: []string{tls.URL + "/mail/config-v1.1.xml"}}
	f, tried := lookupAutoconfig(context.Background(), "sam@example.org", "example.org", opt)
	if f != nil || len(tried) != 1 || !strings.Contains(tried[0].Result, "not HTTPS") {
		t.Fatalf("followed a redirect to http: %+v %v", f, tried)
	}
	// The same document over HTTPS is taken.
	good := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(doc)) }))
	defer good.Close()
	opt = Options{HTTP: good.Client(), AutoconfigURLs: []string{good.URL + "/mail/config-v1.1.xml"}}
	if f, tried := lookupAutoconfig(context.Background(), "sam@example.org", "example.org", opt); f == nil {
		t.Fatalf("an HTTPS document was not taken: %v", tried)
	}
}

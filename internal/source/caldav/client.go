package caldav

// The HTTP side: one Client per server URL of an account, Basic auth sent
// only to that server, and the few WebDAV requests sync and the write tools
// make (PROPFIND, REPORT, GET, conditional PUT and DELETE). go-webdav's client
// is used for discovery (discover.go); these are by hand because it returns
// objects parsed and re-encoded (not the bytes the server holds), reads no
// colour, time zone, privileges, ctag or sync token, has no sync-collection
// for CalDAV, and sends no If-Match or If-None-Match.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/config"
)

// maxResponseBytes bounds what one response may hold (a multistatus of a
// batch of objects, one object).
const maxResponseBytes = 64 << 20

// requestTimeout bounds one request.
const requestTimeout = 2 * time.Minute

// Client speaks WebDAV to one server (a CalDAV or CardDAV URL of an account).
type Client struct {
	base *url.URL
	hc   *http.Client
	// rawXML reads multistatus answers without leaving out the characters XML does not
	// allow (tests of what a sync does when an answer still cannot be read).
	rawXML bool
}

// ErrConflict is a conditional write refused because the object changed (or
// appeared, or went) on the server since its ETag was read.
var ErrConflict = errors.New("the object changed on the server since it was read, so nothing was written; sync and read it again")

// HTTPError is a request the server answered with a status other than the
// ones asked for.
type HTTPError struct {
	Method, URL string
	Status      int
	Text        string
}

func (e *HTTPError) Error() string {
	what := http.StatusText(e.Status)
	switch e.Status {
	case http.StatusUnauthorized:
		return fmt.Sprintf("%s refused the user name or password (%d %s); check --user and --password-cmd", hostOf(e.URL), e.Status, what)
	case http.StatusForbidden:
		return fmt.Sprintf("%s refused %s %s (%d %s); the account may not have access to it", hostOf(e.URL), e.Method, e.URL, e.Status, what)
	}
	return fmt.Sprintf("%s answered %s %s with %d %s", hostOf(e.URL), e.Method, e.URL, e.Status, what)
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// NewClient makes a client of rawURL that logs in as user with password.
// Plain http is refused except to this computer. tlsCA, when set, is a PEM
// file of authorities trusted besides the system's.
func NewClient(rawURL, user, password, tlsCA string) (*Client, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsCA != "" {
		pool, err := config.LoadCA(tlsCA)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	c := &Client{base: u}
	c.hc = &http.Client{
		Transport: &basicAuth{next: tr, host: u.Host, user: user, password: password},
		Timeout:   requestTimeout,
		// Redirects are followed only on the same server and scheme, and never from https to
		// http: the password goes with each request.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			if req.URL.Host != u.Host || req.URL.Scheme != u.Scheme {
				return fmt.Errorf("the server redirected to %s, another server; give that URL instead", req.URL.Redacted())
			}
			return nil
		},
	}
	return c, nil
}

// parseURL checks that rawURL is http(s), and http only to this computer.
func parseURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%q is not an http or https URL such as https://dav.example.com/", rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("the URL %s holds a user name; give it with --user instead", u.Redacted())
	}
	if u.Scheme == "http" && !config.Loopback(u.Hostname()) {
		return nil, fmt.Errorf("%s is plain http, which would send the password in clear; use https (plain http is only allowed to this computer)", rawURL)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// basicAuth adds the account's user and password to requests to its server only.
type basicAuth struct {
	next           http.RoundTripper
	host           string
	user, password string
}

func (b *basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == b.host && b.user != "" {
		req = req.Clone(req.Context())
		req.SetBasicAuth(b.user, b.password)
	}
	return b.next.RoundTrip(req)
}

// Base is the URL the client was made with.
func (c *Client) Base() *url.URL { return c.base }

// HTTPClient is the client's HTTP client (Basic auth to its server only), for go-webdav.
func (c *Client) HTTPClient() *http.Client { return c.hc }

// Resolve makes href (a path as the server writes it, or a URL) absolute.
func (c *Client) Resolve(href string) string {
	r, err := url.Parse(href)
	if err != nil {
		return href
	}
	return c.base.ResolveReference(r).String()
}

// do sends one request and returns the response when its status is among ok;
// else an *HTTPError (or ErrConflict for 412).
func (c *Client) do(ctx context.Context, method, href string, header http.Header, body []byte, ok ...int) (*http.Response, []byte, error) {
	resp, err := c.send(ctx, method, href, header, body)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := c.readAll(ctx, resp.Body, method, href)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range ok {
		if resp.StatusCode == s {
			return resp, data, nil
		}
	}
	return resp, data, statusError(resp, method, data)
}

// send sends one request and returns the response, its body still to be read and closed.
func (c *Client) send(ctx context.Context, method, href string, header http.Header, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	target := c.Resolve(href)
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach %s (%v); check the URL and that the server is up", c.base.Host, unwrapURLError(err))
	}
	return resp, nil
}

// readAll reads a response body of at most maxResponseBytes.
func (c *Client) readAll(ctx context.Context, body io.Reader, method, href string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxResponseBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the answer of %s to %s was cut (%v); try again", c.base.Host, method, err)
	}
	if len(data) > maxResponseBytes {
		return nil, c.tooLarge(method, href)
	}
	return data, nil
}

func (c *Client) tooLarge(method, href string) error {
	return fmt.Errorf("the answer of %s to %s %s is larger than %d MB; postern does not read it", c.base.Host, method, href, maxResponseBytes>>20)
}

// statusError is the error of a response whose status was not one asked for.
func statusError(resp *http.Response, method string, data []byte) error {
	if resp.StatusCode == http.StatusPreconditionFailed {
		return ErrConflict
	}
	return &HTTPError{Method: method, URL: resp.Request.URL.String(), Status: resp.StatusCode, Text: strings.TrimSpace(string(data))}
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Object is one object as the server holds it.
type Object struct {
	Href string
	ETag string // as the server writes it, quotes included
	Data []byte
	// removed is what was left out of Data: characters XML does not allow.
	removed removed
}

// Get reads the object at href, byte for byte.
func (c *Client) Get(ctx context.Context, href string) (*Object, error) {
	resp, data, err := c.do(ctx, http.MethodGet, href, nil, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	return &Object{Href: href, ETag: resp.Header.Get("ETag"), Data: data}, nil
}

// contentType is the media type of an object's text.
func contentType(data []byte) string {
	if bytes.HasPrefix(bytes.ToUpper(bytes.TrimSpace(data)), []byte("BEGIN:VCARD")) {
		return "text/vcard; charset=utf-8"
	}
	return "text/calendar; charset=utf-8"
}

// PutIfMatch stores data at href only if the object there still has etag (the
// ETag read, quotes included), or, with etag "", only if there is none there
// yet (a new object). It returns the new ETag ("" when the server does not
// say: read it back with Get), or ErrConflict when the condition failed.
func (c *Client) PutIfMatch(ctx context.Context, href, etag string, data []byte) (string, error) {
	h := http.Header{"Content-Type": {contentType(data)}}
	if etag == "" {
		h.Set("If-None-Match", "*")
	} else {
		h.Set("If-Match", etag)
	}
	resp, _, err := c.do(ctx, http.MethodPut, href, h, data, http.StatusOK, http.StatusCreated, http.StatusNoContent)
	if err != nil {
		return "", err
	}
	return resp.Header.Get("ETag"), nil
}

// DeleteIfMatch removes the object at href only if it still has etag, or
// returns ErrConflict. An object already gone is not an error.
func (c *Client) DeleteIfMatch(ctx context.Context, href, etag string) error {
	h := http.Header{}
	if etag != "" {
		h.Set("If-Match", etag)
	}
	resp, _, err := c.do(ctx, http.MethodDelete, href, h, nil, http.StatusOK, http.StatusNoContent, http.StatusAccepted)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil
	}
	return err
}

// The XML of the requests and answers (RFC 4918, 4791, 6352, 6578).
const (
	nsDAV     = "DAV:"
	nsCalDAV  = "urn:ietf:params:xml:ns:caldav"
	nsCardDAV = "urn:ietf:params:xml:ns:carddav"
	nsCS      = "http://calendarserver.org/ns/"
	nsApple   = "http://apple.com/ns/ical/"
)

type multistatus struct {
	Responses []response `xml:"DAV: response"`
	SyncToken string     `xml:"DAV: sync-token"`
}

type response struct {
	Href      string     `xml:"DAV: href"`
	Status    string     `xml:"DAV: status"`
	Propstats []propstat `xml:"DAV: propstat"`
	removed   removed    // the characters XML does not allow that were left out of it
}

type propstat struct {
	Prop   prop   `xml:"DAV: prop"`
	Status string `xml:"DAV: status"`
}

type empty struct{}

type prop struct {
	ResourceType *struct {
		Collection  *empty `xml:"DAV: collection"`
		Calendar    *empty `xml:"urn:ietf:params:xml:ns:caldav calendar"`
		AddressBook *empty `xml:"urn:ietf:params:xml:ns:carddav addressbook"`
	} `xml:"DAV: resourcetype"`
	DisplayName string `xml:"DAV: displayname"`
	SyncToken   string `xml:"DAV: sync-token"`
	CTag        string `xml:"http://calendarserver.org/ns/ getctag"`
	ETag        string `xml:"DAV: getetag"`
	Color       string `xml:"http://apple.com/ns/ical/ calendar-color"`
	TimeZone    string `xml:"urn:ietf:params:xml:ns:caldav calendar-timezone"`
	TimeZoneID  string `xml:"urn:ietf:params:xml:ns:caldav calendar-timezone-id"`
	Comps       *struct {
		Comp []struct {
			Name string `xml:"name,attr"`
		} `xml:"urn:ietf:params:xml:ns:caldav comp"`
	} `xml:"urn:ietf:params:xml:ns:caldav supported-calendar-component-set"`
	Privileges *struct {
		Privilege []struct {
			All          *empty `xml:"DAV: all"`
			Write        *empty `xml:"DAV: write"`
			WriteContent *empty `xml:"DAV: write-content"`
			Bind         *empty `xml:"DAV: bind"`
		} `xml:"DAV: privilege"`
	} `xml:"DAV: current-user-privilege-set"`
	CalendarData string `xml:"urn:ietf:params:xml:ns:caldav calendar-data"`
	AddressData  string `xml:"urn:ietf:params:xml:ns:carddav address-data"`
}

// ok says whether a status line ("HTTP/1.1 200 OK") is a success; an empty one is.
func ok(status string) bool {
	f := strings.Fields(status)
	return len(f) < 2 || strings.HasPrefix(f[1], "2")
}

// statusCode is the code of a status line, 0 when there is none.
func statusCode(status string) int {
	f := strings.Fields(status)
	if len(f) < 2 {
		return 0
	}
	n := 0
	fmt.Sscanf(f[1], "%d", &n)
	return n
}

// found is the response's properties the server has (those of its 2xx propstats).
func (r *response) found() prop {
	var out prop
	for _, ps := range r.Propstats {
		if !ok(ps.Status) {
			continue
		}
		p := ps.Prop
		if p.ResourceType != nil {
			out.ResourceType = p.ResourceType
		}
		if p.Comps != nil {
			out.Comps = p.Comps
		}
		if p.Privileges != nil {
			out.Privileges = p.Privileges
		}
		for _, f := range []struct{ dst, src *string }{
			{&out.DisplayName, &p.DisplayName}, {&out.SyncToken, &p.SyncToken}, {&out.CTag, &p.CTag},
			{&out.ETag, &p.ETag}, {&out.Color, &p.Color}, {&out.TimeZone, &p.TimeZone}, {&out.TimeZoneID, &p.TimeZoneID},
			{&out.CalendarData, &p.CalendarData}, {&out.AddressData, &p.AddressData},
		} {
			if *f.src != "" {
				*f.dst = *f.src
			}
		}
	}
	return out
}

const xmlHeader = `<?xml version="1.0" encoding="utf-8"?>` + "\n"

// DecodeError is a multistatus answer that could not be read as XML even without the
// characters XML does not allow: the sync then asks for its objects in smaller groups, then
// one by one.
type DecodeError struct {
	Host, Method, Href string
	Err                error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("cannot read the answer of %s to %s %s (%v)", e.Host, e.Method, e.Href, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// multi sends a PROPFIND or REPORT and reads its multistatus as it comes, through a filter
// that leaves out the characters XML does not allow (xmlchars.go); each response says what
// was removed from it. The body is never held whole: only what is decoded of it.
func (c *Client) multi(ctx context.Context, method, href, depth, body string) (*multistatus, error) {
	h := http.Header{"Content-Type": {"application/xml; charset=utf-8"}}
	if depth != "" {
		h.Set("Depth", depth)
	}
	resp, err := c.send(ctx, method, href, h, []byte(xmlHeader+body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusMultiStatus {
		data, err := c.readAll(ctx, resp.Body, method, href)
		if err != nil {
			return nil, err
		}
		return nil, statusError(resp, method, data)
	}
	lim := &limitReader{r: resp.Body, n: maxResponseBytes}
	var in io.Reader = lim
	var filter *charFilter
	if !c.rawXML {
		filter = newCharFilter(lim, true)
		in = filter
	}
	dec := xml.NewDecoder(in)
	var ms multistatus
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, c.decodeError(ctx, lim, method, href, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Space != nsDAV {
			continue
		}
		switch se.Name.Local {
		case "response":
			if filter != nil {
				filter.take() // what came before belongs to no object
			}
			var r response
			if err := dec.DecodeElement(&r, &se); err != nil {
				return nil, c.decodeError(ctx, lim, method, href, err)
			}
			if filter != nil {
				r.removed = filter.take()
			}
			ms.Responses = append(ms.Responses, r)
		case "sync-token":
			if err := dec.DecodeElement(&ms.SyncToken, &se); err != nil {
				return nil, c.decodeError(ctx, lim, method, href, err)
			}
		}
	}
	return &ms, nil
}

// decodeError says why a multistatus could not be read: ctx ended, the answer was too
// large or cut, or it is not XML (a *DecodeError).
func (c *Client) decodeError(ctx context.Context, lim *limitReader, method, href string, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case lim.over:
		return c.tooLarge(method, href)
	case lim.err != nil:
		return fmt.Errorf("the answer of %s to %s was cut (%v); try again", c.base.Host, method, lim.err)
	}
	return &DecodeError{Host: c.base.Host, Method: method, Href: href, Err: err}
}

// limitReader reads at most n bytes of r, and remembers whether there were more, and how a
// read of r failed.
type limitReader struct {
	r    io.Reader
	n    int64
	over bool
	err  error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, errors.New("the answer is too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if err != nil && err != io.EOF {
		l.err = err
	}
	return n, err
}

// samePath says whether two hrefs name the same resource (trailing slash and
// escaping aside).
func samePath(a, b string) bool {
	norm := func(s string) string {
		if u, err := url.Parse(s); err == nil {
			s = u.Path
		}
		return strings.TrimSuffix(s, "/")
	}
	return norm(a) == norm(b)
}

// crlf gives text whose lines an XML parser ended with LF (XML turns a CR LF
// into LF) the CR LF line ends that iCalendar and vCard require, which is what
// the server holds (RFC 5545 3.1, RFC 6350 3.2); lines already ending CR LF
// (a server that escaped its CRs as &#13;) are left as they are.
func crlf(s string) []byte {
	if !strings.Contains(s, "\n") {
		return []byte(s)
	}
	var b bytes.Buffer
	b.Grow(len(s) + len(s)/40)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(s[i])
	}
	return b.Bytes()
}

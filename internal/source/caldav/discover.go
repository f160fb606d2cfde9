package caldav

// Discovery (RFC 6764 section 6, RFC 4791 section 6, RFC 6352 section 7):
// from the URL given, the current user's principal, then its calendar or
// address-book home set, then the collections in it. When the URL answers no
// principal, /.well-known/caldav (or carddav) on its host is asked where the
// service is. A URL that is itself a calendar or address book is taken alone.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/emersion/go-webdav"
	webdavcal "github.com/emersion/go-webdav/caldav"
	webdavcard "github.com/emersion/go-webdav/carddav"

	"github.com/postern-mcp/postern/internal/store"
)

// service is CalDAV or CardDAV.
type service struct {
	name    string // as in /.well-known/NAME
	flag    string // the account flag that gives its URL
	homeSet func(ctx context.Context, hc *http.Client, endpoint, principal string) (string, error)
}

var (
	calDAV = service{name: "caldav", flag: "caldav", homeSet: func(ctx context.Context, hc *http.Client, endpoint, principal string) (string, error) {
		c, err := webdavcal.NewClient(hc, endpoint)
		if err != nil {
			return "", err
		}
		return c.FindCalendarHomeSet(ctx, principal)
	}}
	cardDAV = service{name: "carddav", flag: "carddav", homeSet: func(ctx context.Context, hc *http.Client, endpoint, principal string) (string, error) {
		c, err := webdavcard.NewClient(hc, endpoint)
		if err != nil {
			return "", err
		}
		return c.FindAddressBookHomeSet(ctx, principal)
	}}
)

// remote is a collection as the server lists it.
type remote struct {
	store.Collection
	syncToken, ctag string
}

// isCollection says whether p is a collection of the service's kind.
func (s service) isCollection(p prop) bool {
	if p.ResourceType == nil {
		return false
	}
	if s.name == calDAV.name {
		return p.ResourceType.Calendar != nil
	}
	return p.ResourceType.AddressBook != nil
}

const collectionProps = `<D:propfind xmlns:D="DAV:" xmlns:C="` + nsCalDAV + `" xmlns:CR="` + nsCardDAV + `" xmlns:CS="` + nsCS + `" xmlns:I="` + nsApple + `"><D:prop>` +
	`<D:resourcetype/><D:displayname/><D:sync-token/><CS:getctag/><D:current-user-privilege-set/>` +
	`<I:calendar-color/><C:calendar-timezone/><C:calendar-timezone-id/><C:supported-calendar-component-set/>` +
	`</D:prop></D:propfind>`

// Collections finds the service's collections from the client's URL.
func (c *Client) collections(ctx context.Context, s service) ([]remote, error) {
	// The URL may be a collection itself.
	if ms, err := c.multi(ctx, "PROPFIND", c.base.String(), "0", collectionProps); err == nil {
		for _, r := range ms.Responses {
			if p := r.found(); s.isCollection(p) {
				return []remote{c.remote(r.Href, p)}, nil
			}
		}
	} else if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	} else if he := (*HTTPError)(nil); errors.As(err, &he) && he.Status == http.StatusUnauthorized {
		return nil, err
	}
	home, err := c.homeSet(ctx, s)
	if err != nil {
		return nil, err
	}
	ms, err := c.multi(ctx, "PROPFIND", home, "1", collectionProps)
	if err != nil {
		return nil, fmt.Errorf("cannot list the collections in %s (%w)", home, err)
	}
	var out []remote
	for _, r := range ms.Responses {
		if p := r.found(); s.isCollection(p) {
			out = append(out, c.remote(r.Href, p))
		}
	}
	return out, nil
}

// homeSet finds the service's home set: through the principal that the URL, or
// the host's /.well-known/NAME, names.
func (c *Client) homeSet(ctx context.Context, s service) (string, error) {
	endpoint := c.base.String()
	principal, err := c.principal(ctx, endpoint)
	if err != nil || principal == "" {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		wk, werr := c.wellKnown(ctx, s)
		if werr != nil || wk == "" {
			if err == nil {
				err = errors.New("it names no current-user-principal")
			}
			return "", fmt.Errorf("cannot find the %s service at %s (%v); give the URL of your calendars or address books as your provider documents it", strings.ToUpper(s.name[:3])+s.name[3:], endpoint, cause(err))
		}
		endpoint = wk
		if principal, err = c.principal(ctx, endpoint); err != nil || principal == "" {
			if err == nil {
				err = errors.New("it names no current-user-principal")
			}
			return "", fmt.Errorf("%s points to %s, which does not say whose calendars are there (%v)", "/.well-known/"+s.name, endpoint, cause(err))
		}
	}
	home, err := s.homeSet(ctx, c.hc, endpoint, principal)
	if err != nil || home == "" {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		// Some servers keep the collections right under the principal.
		return c.Resolve(principal), nil
	}
	return c.Resolve(home), nil
}

// principal asks endpoint for the current user's principal (go-webdav).
func (c *Client) principal(ctx context.Context, endpoint string) (string, error) {
	wc, err := webdav.NewClient(c.hc, endpoint)
	if err != nil {
		return "", err
	}
	return wc.FindCurrentUserPrincipal(ctx)
}

// wellKnown is where the host's /.well-known/NAME redirects to.
func (c *Client) wellKnown(ctx context.Context, s service) (string, error) {
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, "PROPFIND", c.Resolve("/.well-known/"+s.name), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Depth", "0")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" {
		if resp.StatusCode == http.StatusMultiStatus {
			return c.Resolve("/.well-known/" + s.name), nil
		}
		return "", fmt.Errorf("/.well-known/%s answered %d", s.name, resp.StatusCode)
	}
	target := c.Resolve(loc)
	u, err := parseURL(target)
	if err != nil || u.Host != c.base.Host || u.Scheme != c.base.Scheme {
		return "", fmt.Errorf("/.well-known/%s points to %s, another server; give that URL instead", s.name, target)
	}
	return target, nil
}

// cause is the innermost error, for a sentence that says what failed.
func cause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

var tzidLine = regexp.MustCompile(`(?m)^TZID:([^\r\n]+)`)

// remote is the collection at href with properties p.
func (c *Client) remote(href string, p prop) remote {
	r := remote{syncToken: strings.TrimSpace(p.SyncToken), ctag: strings.TrimSpace(p.CTag)}
	r.URL = c.Resolve(href)
	r.Name = strings.TrimSpace(p.DisplayName)
	r.Color = strings.TrimSpace(p.Color)
	r.TimeZone = strings.TrimSpace(p.TimeZoneID)
	if r.TimeZone == "" {
		if m := tzidLine.FindStringSubmatch(p.TimeZone); m != nil {
			r.TimeZone = strings.TrimSpace(m[1])
		}
	}
	switch {
	case p.ResourceType != nil && p.ResourceType.AddressBook != nil:
		r.Kind = store.KindAddressBook
	case p.Comps != nil && len(p.Comps.Comp) > 0 && onlyTodo(p):
		r.Kind = store.KindTasks
	default:
		r.Kind = store.KindCalendar
	}
	// Without current-user-privilege-set (RFC 3744), assume writable: the server refuses a write it does not allow.
	r.Writable = true
	if p.Privileges != nil {
		r.Writable = false
		for _, pr := range p.Privileges.Privilege {
			if pr.All != nil || pr.Write != nil || pr.WriteContent != nil || pr.Bind != nil {
				r.Writable = true
			}
		}
	}
	if r.Name == "" {
		r.Name = lastSegment(r.URL)
	}
	return r
}

// onlyTodo says whether a calendar holds tasks (VTODO) and nothing else.
func onlyTodo(p prop) bool {
	for _, c := range p.Comps.Comp {
		if !strings.EqualFold(c.Name, "VTODO") {
			return false
		}
	}
	return true
}

func lastSegment(u string) string {
	u = strings.TrimSuffix(u, "/")
	if i := strings.LastIndex(u, "/"); i >= 0 {
		return u[i+1:]
	}
	return u
}

// Package davtest runs tests against real CalDAV/CardDAV servers on 127.0.0.1: Radicale (the
// main one) and Xandikos (the second, for compatibility).
//
// Each server comes from its .ci script (.ci/radicale, .ci/xandikos): either the instance that
// .ci/run started and named in POSTERN_RADICALE_DIR (POSTERN_XANDIKOS_DIR), shared by every
// test binary of the run, or one this package starts into a temporary directory for the test
// binary, shared by its tests and stopped after the last (wrap the run with
// os.Exit(davtest.Run(m)) to keep it for the whole binary). When the server is not installed,
// the test is skipped saying so, or failed when CI=true.
//
// Radicale has users: [Server.NewUser] makes one per test, so tests never see each other's
// calendars. Xandikos has one principal and no authentication: its users share it, each test
// making calendars under names of its own. The package writes fixtures with plain HTTP of its
// own ([User.MkCalendar], [User.Put], [User.Delete]), never through the code under test.
package davtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/testing/testservice"
)

// Server is a running CalDAV/CardDAV server.
type Server struct {
	Name string // "radicale" or "xandikos"
	URL  string // http://127.0.0.1:PORT/
	Dir  string // the instance's directory
	// ComponentSets says whether a calendar keeps the components MKCALENDAR asked for (Radicale
	// does; Xandikos makes every calendar hold every kind, so a task list is a calendar there).
	ComponentSets bool

	script testservice.Script
	inst   *testservice.Instance // started by this process; nil for one .ci/run started
	users  bool                  // it has users (Radicale): NewUser adds one
}

// User is an account on a Server, with no collections when made.
type User struct {
	Name, Password string
	// CalendarHome and ContactsHome are where the user's calendars and address books are made
	// (absolute URLs ending in /).
	CalendarHome, ContactsHome string
	Server                     *Server
}

type kind struct {
	script testservice.Script
	envDir string // POSTERN_X_DIR
	envURL string // POSTERN_X_URL
	users  bool
	shared *testservice.Shared[*Server]
}

var (
	radicaleShared, xandikosShared testservice.Shared[*Server]

	radicale = kind{
		script: testservice.Script{Name: "radicale", Keep: "POSTERN_RADICALE_KEEP", Prefix: "davtest"},
		envDir: "POSTERN_RADICALE_DIR", envURL: "POSTERN_RADICALE_URL", users: true, shared: &radicaleShared,
	}
	xandikos = kind{
		script: testservice.Script{Name: "xandikos", Keep: "POSTERN_XANDIKOS_KEEP", Prefix: "davtest"},
		envDir: "POSTERN_XANDIKOS_DIR", envURL: "POSTERN_XANDIKOS_URL", shared: &xandikosShared,
	}
)

// Radicale returns the Radicale server for this test binary.
func Radicale(tb testing.TB) *Server { tb.Helper(); return radicale.start(tb) }

// Xandikos returns the Xandikos server for this test binary.
func Xandikos(tb testing.TB) *Server { tb.Helper(); return xandikos.start(tb) }

// Run runs the tests holding the servers (if any test starts one) for the whole binary.
func Run(m *testing.M) int {
	release := radicaleShared.Hold()
	defer release()
	return xandikosShared.Run(m)
}

func (k kind) start(tb testing.TB) *Server {
	tb.Helper()
	if dir := os.Getenv(k.envDir); dir != "" {
		u := os.Getenv(k.envURL)
		if u == "" {
			if env, err := testservice.ReadEnv(dir); err == nil {
				u = env[k.envURL]
			}
		}
		if u == "" {
			tb.Fatalf("davtest: %s=%s but no %s", k.envDir, dir, k.envURL)
		}
		sc, err := k.script.Find()
		if err != nil {
			tb.Fatalf("davtest: %v", err)
		}
		return &Server{Name: k.script.Name, URL: u, Dir: dir, script: sc, users: k.users, ComponentSets: k.users}
	}
	if _, err := exec.LookPath(k.script.Name); err != nil {
		why := fmt.Sprintf("davtest: %s is not installed (bash .ci/%s install, or apt-get install %s)", k.script.Name, k.script.Name, k.script.Name)
		testservice.Unavailable(tb, why, why+"; CI=true requires it")
	}
	s, err := k.shared.Start(tb, func() (*Server, error) { return k.startOwn() }, (*Server).logTail)
	if err != nil {
		tb.Fatalf("davtest: %v", err)
	}
	return s
}

func (k kind) startOwn() (*Server, error) {
	sc, err := k.script.Find()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "postern-"+k.script.Name+"-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := sc.Run(ctx, 20, "start", dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	env := testservice.ParseEnv(out)
	s := &Server{Name: k.script.Name, URL: env[k.envURL], Dir: dir, script: sc, inst: sc.Own(dir), users: k.users, ComponentSets: k.users}
	if s.URL == "" {
		s.Stop()
		return nil, fmt.Errorf(".ci/%s start printed no URL:\n%s", k.script.Name, out)
	}
	s.inst.Watch()
	return s, nil
}

// Stop stops the server if this process started it.
func (s *Server) Stop() {
	if s.inst != nil && s.inst.Stop() {
		radicaleShared.Forget(s)
		xandikosShared.Forget(s)
	}
}

func (s *Server) logTail(tb testing.TB) {
	s.script.LogTail(tb, s.Dir, 40, s.Name+".log")
}

var seq atomic.Int64

// Unique is a name no other test of any binary uses, for users and collections.
func Unique(prefix string) string {
	return fmt.Sprintf("%s%d-%s", prefix, seq.Add(1), testservice.RandHex(4))
}

// NewUser adds a user with a unique name and a random password (Radicale), or returns the
// one principal (Xandikos, which ignores the password).
func (s *Server) NewUser(tb testing.TB) *User {
	tb.Helper()
	if !s.users {
		return &User{Name: "user", Password: "unused", Server: s,
			CalendarHome: s.URL + "user/calendars/", ContactsHome: s.URL + "user/contacts/"}
	}
	u := &User{Name: Unique("u"), Password: testservice.RandHex(12), Server: s}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := s.script.Run(ctx, 0, "adduser", s.Dir, u.Name, u.Password); err != nil {
		tb.Fatalf("davtest: %v\n%s", err, out)
	}
	u.CalendarHome = s.URL + u.Name + "/"
	u.ContactsHome = u.CalendarHome
	return u
}

// PasswordCmd is a password command that prints the user's password.
func (u *User) PasswordCmd() string { return "echo " + u.Password }

// Do sends one request as u and returns the status, the ETag header and the body.
func (u *User) Do(tb testing.TB, method, url string, header map[string]string, body string) (int, string, string) {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatalf("davtest: %v", err)
	}
	req.SetBasicAuth(u.Name, u.Password)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("davtest: %s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = io.Copy(&b, resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag"), b.String()
}

func (u *User) must(tb testing.TB, method, url string, header map[string]string, body string, ok ...int) (string, string) {
	tb.Helper()
	st, etag, b := u.Do(tb, method, url, header, body)
	for _, o := range ok {
		if st == o {
			return etag, b
		}
	}
	tb.Fatalf("davtest: %s %s: status %d\n%s", method, url, st, b)
	return "", ""
}

// MkCalendar makes a calendar named name (display name display, colour color when not "")
// holding the components comps (VEVENT, VTODO; none: the server's default), and returns its URL.
func (u *User) MkCalendar(tb testing.TB, name, display, color string, comps ...string) string {
	tb.Helper()
	url := u.CalendarHome + name + "/"
	var props strings.Builder
	if display != "" {
		props.WriteString("<D:displayname>" + display + "</D:displayname>")
	}
	if len(comps) > 0 {
		props.WriteString("<C:supported-calendar-component-set>")
		for _, c := range comps {
			props.WriteString(`<C:comp name="` + c + `"/>`)
		}
		props.WriteString("</C:supported-calendar-component-set>")
	}
	body := `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:I="http://apple.com/ns/ical/"><D:set><D:prop>` +
		props.String() + `</D:prop></D:set></C:mkcalendar>`
	u.must(tb, "MKCALENDAR", url, map[string]string{"Content-Type": "application/xml"}, body, http.StatusCreated)
	if color != "" {
		// Set apart: Xandikos keeps no colour given to MKCALENDAR.
		patch := `<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:I="http://apple.com/ns/ical/"><D:set><D:prop>` +
			`<I:calendar-color>` + color + `</I:calendar-color></D:prop></D:set></D:propertyupdate>`
		u.must(tb, "PROPPATCH", url, map[string]string{"Content-Type": "application/xml"}, patch, http.StatusMultiStatus)
	}
	return url
}

// MkAddressBook makes an address book named name and returns its URL.
func (u *User) MkAddressBook(tb testing.TB, name, display string) string {
	tb.Helper()
	url := u.ContactsHome + name + "/"
	body := `<?xml version="1.0" encoding="utf-8"?><D:mkcol xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:set><D:prop>` +
		`<D:resourcetype><D:collection/><CR:addressbook/></D:resourcetype><D:displayname>` + display + `</D:displayname></D:prop></D:set></D:mkcol>`
	u.must(tb, "MKCOL", url, map[string]string{"Content-Type": "application/xml"}, body, http.StatusCreated)
	return url
}

// Put stores data (an iCalendar object or a vCard, CRLF line ends) at url and returns its ETag.
func (u *User) Put(tb testing.TB, url, data string) string {
	tb.Helper()
	ct := "text/calendar; charset=utf-8"
	if strings.HasPrefix(data, "BEGIN:VCARD") {
		ct = "text/vcard; charset=utf-8"
	}
	etag, _ := u.must(tb, http.MethodPut, url, map[string]string{"Content-Type": ct}, data, http.StatusCreated, http.StatusNoContent, http.StatusOK)
	return etag
}

// Get returns the object at url as the server sends it, and its ETag.
func (u *User) Get(tb testing.TB, url string) (data, etag string) {
	tb.Helper()
	etag, data = u.must(tb, http.MethodGet, url, nil, "", http.StatusOK)
	return data, etag
}

// Delete removes the object at url.
func (u *User) Delete(tb testing.TB, url string) {
	tb.Helper()
	u.must(tb, http.MethodDelete, url, nil, "", http.StatusOK, http.StatusNoContent)
}

// CRLF turns a fixture's LF line ends into the CR LF that iCalendar and vCard require.
func CRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

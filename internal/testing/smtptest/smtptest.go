// Package smtptest runs tests against a real SMTP server (Mailpit) on 127.0.0.1 and reads back,
// through Mailpit's HTTP API, what it received. It never relays mail anywhere.
//
// The server comes from .ci/mailpit: either the instances that .ci/run started and named in
// POSTERN_MAILPIT_DIR, shared by every test binary of the run, or ones that this package starts
// into a temporary directory for the test binary. Tests share a server, so each test sends to
// recipient addresses of its own (see [Addr]) and reads back only what was addressed to them.
//
// A package whose tests should share one instance for the whole binary wraps its run:
//
//	func TestMain(m *testing.M) { os.Exit(smtptest.Run(m)) }
//
// Without that, the instance that Start makes lives while any test that asked for it is
// running and is stopped by the last one's t.Cleanup.
//
// When Mailpit cannot be built or started, Start skips the test, or fails it when CI=true.
// .ci/mailpit install builds it (with go install, into a cache directory).
package smtptest

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/testing/testservice"
)

// Server is a running pair of Mailpit instances sharing one user and one certificate.
type Server struct {
	SMTP     string // SMTP on 127.0.0.1:port; STARTTLS is required before AUTH and MAIL
	SMTPS    string // SMTP over implicit TLS on 127.0.0.1:port
	API      string // base URL of the HTTP API of the instance behind SMTP
	SMTPSAPI string // base URL of the HTTP API of the instance behind SMTPS
	User     string // the one user both instances accept
	Password string // its password; no mail is accepted without it
	Dir      string // the instances' directory: env, tls/cert.pem, mailpit*.log

	inst *testservice.Instance // started by this process: Stop stops it; nil for POSTERN_MAILPIT_DIR's
	http *http.Client
	ids  sync.Map // message ID -> API base URL that holds it
}

// Message is what Mailpit recorded about one received message. Addresses are bare
// (local@domain), as Mailpit parsed them.
type Message struct {
	ID        string // Mailpit's ID, for Raw
	From      string
	To        []string
	Cc        []string
	Bcc       []string // the Bcc header, to which Mailpit adds every envelope recipient the To, Cc and Bcc headers do not name
	Subject   string
	MessageID string // the Message-ID header without its angle brackets
	Received  time.Time
}

// EnvDir names the directory of instances that .ci/mailpit started (set by .ci/run).
const EnvDir = "POSTERN_MAILPIT_DIR"

var (
	mailpit = testservice.Script{Name: "mailpit", Keep: "POSTERN_MAILPIT_KEEP", Prefix: "smtptest"}
	shared  testservice.Shared[*Server]
)

// Start returns the Mailpit server for this test binary: the one named by POSTERN_MAILPIT_DIR
// if set, else one started with .ci/mailpit into a temporary directory, shared by the tests
// that run while it is up and stopped by Run or by the last user's t.Cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if dir := os.Getenv(EnvDir); dir != "" {
		s, err := external(dir)
		if err != nil {
			tb.Fatalf("smtptest: %s=%s: %v", EnvDir, dir, err)
		}
		return s
	}
	s, err := shared.Start(tb, start, (*Server).logTail)
	if err != nil {
		testservice.Unavailable(tb,
			fmt.Sprintf("smtptest: Mailpit is not available, skipping (%v); bash .ci/mailpit install builds it", err),
			fmt.Sprintf("smtptest: Mailpit is not available (%v); CI=true requires it", err))
	}
	return s
}

// Run runs the tests holding one instance (if any test starts it) for the whole binary, then
// stops it. Use it from TestMain: os.Exit(smtptest.Run(m)).
func Run(m *testing.M) int {
	return shared.Run(m)
}

// Hold keeps the instance that Start makes (if any test starts it) until release is called,
// for a TestMain that also wraps its run in another package's Run:
//
//	func TestMain(m *testing.M) {
//		release := smtptest.Hold()
//		code := imaptest.Run(m)
//		release()
//		os.Exit(code)
//	}
func Hold() (release func()) {
	return shared.Hold()
}

// Stop stops the instances if this process started them. Those named by POSTERN_MAILPIT_DIR
// belong to .ci/run and are left running.
func (s *Server) Stop() {
	if s.inst != nil && s.inst.Stop() {
		shared.Forget(s)
	}
}

// CertPool holds the instances' self-signed certificate, for clients that should verify it
// (its names are 127.0.0.1 and localhost).
func (s *Server) CertPool(tb testing.TB) *x509.CertPool {
	tb.Helper()
	pool, err := testservice.CertPool(s.Dir)
	if err != nil {
		tb.Fatalf("smtptest: %v", err)
	}
	return pool
}

var addrSeq atomic.Int64

// Addr returns an address no other test uses: name-N-RANDOM@example.test.
func Addr(name string) string {
	return fmt.Sprintf("%s-%d-%s@example.test", name, addrSeq.Add(1), testservice.RandHex(4))
}

// Messages returns the messages either instance received whose To, Cc or Bcc names the
// address to (compared whole and without regard to case), oldest first. Envelope recipients
// that no header names are in Bcc (Mailpit puts them there).
func (s *Server) Messages(tb testing.TB, to string) []Message {
	tb.Helper()
	msgs, err := s.messages(to)
	if err != nil {
		tb.Fatalf("smtptest: %v", err)
	}
	return msgs
}

// WaitCount polls Messages(to) until n messages have arrived and returns them, failing the
// test when fewer than n arrive within timeout or more than n are there (a duplicate is a bug
// a test should see).
func (s *Server) WaitCount(tb testing.TB, to string, n int, timeout time.Duration) []Message {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msgs, err := s.messages(to)
		if err != nil {
			tb.Fatalf("smtptest: %v", err)
		}
		if len(msgs) > n {
			tb.Fatalf("smtptest: %d messages to %s arrived, want %d: %s", len(msgs), to, n, summary(msgs))
		}
		if len(msgs) == n {
			return msgs
		}
		if time.Now().After(deadline) {
			tb.Fatalf("smtptest: %d messages to %s arrived within %v, want %d: %s", len(msgs), to, timeout, n, summary(msgs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func summary(msgs []Message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q from %s to %v cc %v bcc %v", m.Subject, m.From, m.To, m.Cc, m.Bcc)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// Raw returns the message exactly as Mailpit stored it: the bytes received after DATA, with
// the headers Mailpit adds at the top (Received, Return-Path and, for envelope recipients no
// header names, Bcc).
func (s *Server) Raw(tb testing.TB, id string) []byte {
	tb.Helper()
	apis := []string{s.API, s.SMTPSAPI}
	if v, ok := s.ids.Load(id); ok {
		apis = []string{v.(string)}
	}
	for _, api := range apis {
		b, status, err := s.get(api + "/api/v1/message/" + url.PathEscape(id) + "/raw")
		if err != nil {
			tb.Fatalf("smtptest: %v", err)
		}
		if status == http.StatusOK {
			return b
		}
		if status != http.StatusNotFound {
			tb.Fatalf("smtptest: raw message %s from %s: HTTP %d: %s", id, api, status, b)
		}
	}
	tb.Fatalf("smtptest: no message %s in Mailpit", id)
	return nil
}

type apiAddress struct {
	Name, Address string
}

type apiSummary struct {
	ID        string
	MessageID string
	From      *apiAddress
	To        []apiAddress
	Cc        []apiAddress
	Bcc       []apiAddress
	Subject   string
	Created   time.Time
}

func (s *Server) messages(to string) ([]Message, error) {
	var out []Message
	for _, api := range []string{s.API, s.SMTPSAPI} {
		if api == "" {
			continue
		}
		// addressed: is a substring match over From, To, Cc, Bcc and Reply-To; the exact
		// comparison below keeps only the messages to this address.
		q := url.Values{"query": {"addressed:" + to}, "limit": {"1000"}}
		b, status, err := s.get(api + "/api/v1/search?" + q.Encode())
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("search %s: HTTP %d: %s", api, status, b)
		}
		var res struct {
			Messages []apiSummary `json:"messages"`
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, fmt.Errorf("search %s: %v", api, err)
		}
		for _, m := range res.Messages {
			msg := Message{
				ID:        m.ID,
				To:        addrs(m.To),
				Cc:        addrs(m.Cc),
				Bcc:       addrs(m.Bcc),
				Subject:   m.Subject,
				MessageID: m.MessageID,
				Received:  m.Created,
			}
			if m.From != nil {
				msg.From = m.From.Address
			}
			if !names(msg.To, to) && !names(msg.Cc, to) && !names(msg.Bcc, to) {
				continue
			}
			s.ids.Store(m.ID, api)
			out = append(out, msg)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out, nil
}

func addrs(as []apiAddress) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Address)
	}
	return out
}

func names(list []string, addr string) bool {
	for _, a := range list {
		if strings.EqualFold(a, addr) {
			return true
		}
	}
	return false
}

func (s *Server) get(u string) ([]byte, int, error) {
	resp, err := s.http.Get(u)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %v", u, err)
	}
	return b, resp.StatusCode, nil
}

// logTail writes the end of both instances' logs to the test's log.
func (s *Server) logTail(tb testing.TB) {
	mailpit.LogTail(tb, s.Dir, 30, "mailpit.log", "mailpit-tls.log")
}

func newHTTPClient() *http.Client {
	// Loopback only: never through a proxy from the environment.
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{Proxy: nil}}
}

func start() (*Server, error) {
	sc, err := mailpit.Find()
	if err != nil {
		return nil, err
	}
	// The first build downloads and compiles Mailpit (about 15 s); later ones find it cached.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := sc.Run(ctx, 20, "install"); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "postern-mailpit-")
	if err != nil {
		return nil, err
	}
	out, err := sc.Run(ctx, 0, "start", dir)
	var s *Server
	if err == nil {
		if s, err = fromEnv(testservice.ParseEnv(out)); err != nil {
			err = fmt.Errorf(".ci/mailpit start: %v:\n%s", err, out)
		}
	}
	if err != nil {
		_ = exec.Command("bash", sc.Path, "stop", dir).Run()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.Dir, s.inst = dir, sc.Own(dir)
	s.inst.Watch()
	return s, nil
}

func external(dir string) (*Server, error) {
	env, err := testservice.ReadEnv(dir)
	if err != nil {
		return nil, err
	}
	s, err := fromEnv(env)
	if err != nil {
		return nil, fmt.Errorf("%v in %s/env", err, dir)
	}
	s.Dir = dir
	if err := testservice.Listening(s.SMTP); err != nil {
		return nil, err
	}
	return s, nil
}

func fromEnv(env map[string]string) (*Server, error) {
	s := &Server{
		SMTP:     env["POSTERN_MAILPIT_SMTP"],
		SMTPS:    env["POSTERN_MAILPIT_SMTPS"],
		API:      strings.TrimRight(env["POSTERN_MAILPIT_API"], "/"),
		SMTPSAPI: strings.TrimRight(env["POSTERN_MAILPIT_SMTPS_API"], "/"),
		User:     env["POSTERN_MAILPIT_USER"],
		Password: env["POSTERN_MAILPIT_PASSWORD"],
		http:     newHTTPClient(),
	}
	if s.SMTP == "" || s.SMTPS == "" || s.API == "" || s.SMTPSAPI == "" || s.User == "" || s.Password == "" {
		return nil, errors.New("addresses, user or password missing")
	}
	return s, nil
}

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
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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

	script   string
	owned    bool      // started by this process: Stop stops it
	watcher  *exec.Cmd // stops the instances if this process dies without Stop
	watchW   *os.File  // its stdin; closing it (or dying) makes it stop the instances
	stopOnce sync.Once
	http     *http.Client
	ids      sync.Map // message ID -> API base URL that holds it
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

var shared struct {
	mu      sync.Mutex
	srv     *Server
	holders int
	err     error // a failed start, so later tests end fast
}

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
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.err != nil {
		unavailable(tb, shared.err)
	}
	if shared.srv == nil {
		s, err := start()
		if err != nil {
			shared.err = err
			unavailable(tb, err)
		}
		shared.srv = s
	}
	s := shared.srv
	shared.holders++
	tb.Cleanup(func() { release(s, tb) })
	return s
}

func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("smtptest: Mailpit is not available (%v); CI=true requires it", err)
	}
	tb.Skipf("smtptest: Mailpit is not available, skipping (%v); bash .ci/mailpit install builds it", err)
}

// Run runs the tests holding one instance (if any test starts it) for the whole binary, then
// stops it. Use it from TestMain: os.Exit(smtptest.Run(m)).
func Run(m *testing.M) int {
	release := Hold()
	defer release()
	return m.Run()
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
	shared.mu.Lock()
	shared.holders++
	shared.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			shared.mu.Lock()
			shared.holders--
			s := shared.srv
			last := shared.holders == 0 && s != nil
			if last {
				shared.srv = nil
			}
			shared.mu.Unlock()
			if last {
				s.Stop()
			}
		})
	}
}

func release(s *Server, tb testing.TB) {
	if tb.Failed() {
		s.logTail(tb)
	}
	shared.mu.Lock()
	shared.holders--
	last := shared.holders == 0 && shared.srv == s
	if last {
		shared.srv = nil
	}
	shared.mu.Unlock()
	if last {
		s.Stop()
	}
}

// Stop stops the instances if this process started them. Those named by POSTERN_MAILPIT_DIR
// belong to .ci/run and are left running.
func (s *Server) Stop() {
	if !s.owned {
		return
	}
	s.stopOnce.Do(func() {
		if s.watcher != nil {
			// Its own process group: bash and the cat it waits on.
			_ = syscall.Kill(-s.watcher.Process.Pid, syscall.SIGKILL)
			_ = s.watcher.Wait()
			_ = s.watchW.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "bash", s.script, "stop", s.Dir).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "smtptest: .ci/mailpit stop %s: %v\n%s", s.Dir, err, out)
			return
		}
		if os.Getenv("POSTERN_MAILPIT_KEEP") == "" {
			_ = os.RemoveAll(s.Dir)
		}
		shared.mu.Lock()
		if shared.srv == s {
			shared.srv = nil
		}
		shared.mu.Unlock()
	})
}

// CertPool holds the instances' self-signed certificate, for clients that should verify it
// (its names are 127.0.0.1 and localhost).
func (s *Server) CertPool(tb testing.TB) *x509.CertPool {
	tb.Helper()
	pem, err := os.ReadFile(filepath.Join(s.Dir, "tls", "cert.pem"))
	if err != nil {
		tb.Fatalf("smtptest: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		tb.Fatalf("smtptest: no certificate in %s/tls/cert.pem", s.Dir)
	}
	return pool
}

var addrSeq atomic.Int64

// Addr returns an address no other test uses: name-N-RANDOM@example.test.
func Addr(name string) string {
	return fmt.Sprintf("%s-%d-%s@example.test", name, addrSeq.Add(1), randHex(4))
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
	for _, name := range []string{"mailpit.log", "mailpit-tls.log"} {
		b, err := os.ReadFile(filepath.Join(s.Dir, name))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 30 {
			lines = lines[len(lines)-30:]
		}
		tb.Logf("smtptest: last lines of %s/%s:\n%s", s.Dir, name, strings.Join(lines, "\n"))
	}
}

func newHTTPClient() *http.Client {
	// Loopback only: never through a proxy from the environment.
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{Proxy: nil}}
}

func start() (*Server, error) {
	script, err := findScript()
	if err != nil {
		return nil, err
	}
	// The first build downloads and compiles Mailpit (about 15 s); later ones find it cached.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script, "install")
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		return nil, fmt.Errorf(".ci/mailpit install: %v\n%s%s", err, out, lastLines(stderr.Bytes(), 20))
	}
	dir, err := os.MkdirTemp("", "postern-mailpit-")
	if err != nil {
		return nil, err
	}
	stderr.Reset()
	cmd = exec.CommandContext(ctx, "bash", script, "start", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		_ = exec.Command("bash", script, "stop", dir).Run()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf(".ci/mailpit start: %v\n%s%s", err, out, stderr.Bytes())
	}
	s, err := fromEnv(parseEnv(out))
	if err != nil {
		_ = exec.Command("bash", script, "stop", dir).Run()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf(".ci/mailpit start: %v:\n%s", err, out)
	}
	s.Dir, s.script, s.owned = dir, script, true
	s.watch()
	return s, nil
}

// watch starts a process, in its own process group so a ^C to the test does not reach it,
// that stops the instances when this process exits without calling Stop (a panic, a -timeout,
// a kill): it waits for EOF on a pipe only this process holds open.
func (s *Server) watch() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	cmd := exec.Command("bash", "-c",
		`cat >/dev/null; bash "$1" stop "$2" && if [ -z "$POSTERN_MAILPIT_KEEP" ]; then rm -rf "$2"; fi`,
		"smtptest-watch", s.script, s.Dir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return
	}
	s.watcher, s.watchW = cmd, w
}

func external(dir string) (*Server, error) {
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		return nil, err
	}
	s, err := fromEnv(parseEnv(b))
	if err != nil {
		return nil, fmt.Errorf("%v in %s/env", err, dir)
	}
	s.Dir = dir
	c, err := net.DialTimeout("tcp", s.SMTP, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c.Close()
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

func parseEnv(b []byte) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			env[k] = v
		}
	}
	return env
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// findScript walks up from the working directory to the module root (the folder with go.mod).
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".ci", "mailpit")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("no .ci/mailpit beside %s/go.mod", dir)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; cannot find .ci/mailpit")
		}
		dir = parent
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

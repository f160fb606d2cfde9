// Package imaptest runs tests against a real Dovecot IMAP server on 127.0.0.1.
//
// The server comes from .ci/dovecot: either the instance that .ci/run started and named in
// POSTERN_DOVECOT_DIR, shared by every test binary of the run, or one that this package starts
// into a temporary directory for the test binary. Each test makes its own users with
// [Server.NewUser], so tests and packages running in parallel never see each other's mail.
//
// A package whose tests should share one instance for the whole binary wraps its run:
//
//	func TestMain(m *testing.M) { os.Exit(imaptest.Run(m)) }
//
// Without that, the instance that Start makes lives while any test that asked for it is
// running and is stopped by the last one's t.Cleanup.
//
// When Dovecot is not installed, Start skips the test, or fails it when CI=true.
// .ci/dovecot install puts it in place (apt package dovecot-imapd).
package imaptest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Server is a running Dovecot instance.
type Server struct {
	Addr    string // plain IMAP (STARTTLS offered), 127.0.0.1:port
	TLSAddr string // implicit TLS with a self-signed certificate, 127.0.0.1:port
	Dir     string // the instance's directory: dovecot.conf, dovecot.log, home/USER/Maildir, tls/cert.pem

	script   string
	owned    bool      // started by this process: Stop stops it
	watcher  *exec.Cmd // stops the instance if this process dies without Stop
	watchW   *os.File  // its stdin; closing it (or dying) makes it stop the instance
	stopOnce sync.Once
}

// User is a mail account on a Server, with an empty Maildir when made.
type User struct {
	Name, Password string
	// Maildir is the absolute path of the user's Maildir++ root (INBOX; folder X is Maildir/.X).
	// Write corpus files with AddMessage, or write them yourself and call FixOwnership: Dovecot
	// serves mail as an unprivileged user that must be able to rename files and write folders.
	Maildir string
	Server  *Server
}

// EnvDir names the directory of an instance that .ci/dovecot started (set by .ci/run).
const EnvDir = "POSTERN_DOVECOT_DIR"

var shared struct {
	mu      sync.Mutex
	srv     *Server
	holders int
	err     error // a failed start, so later tests fail fast
}

// Start returns the Dovecot instance for this test binary: the one named by POSTERN_DOVECOT_DIR
// if set, else one started with .ci/dovecot into a temporary directory, shared by the tests
// that run while it is up and stopped by Run or by the last user's t.Cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if dir := os.Getenv(EnvDir); dir != "" {
		s, err := external(dir)
		if err != nil {
			tb.Fatalf("imaptest: %s=%s: %v", EnvDir, dir, err)
		}
		return s
	}
	requireDovecot(tb)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.err != nil {
		tb.Fatalf("imaptest: %v", shared.err)
	}
	if shared.srv == nil {
		s, err := start()
		if err != nil {
			shared.err = err
			tb.Fatalf("imaptest: %v", err)
		}
		shared.srv = s
	}
	s := shared.srv
	shared.holders++
	tb.Cleanup(func() { release(s, tb) })
	return s
}

// NewServer starts a private instance for one test, stopped by its t.Cleanup, for tests that
// stop, restart or break the server. It ignores POSTERN_DOVECOT_DIR.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	requireDovecot(tb)
	s, err := start()
	if err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			s.logTail(tb)
		}
		s.Stop()
	})
	return s
}

// Run runs the tests holding one instance (if any test starts it) for the whole binary, then
// stops it. Use it from TestMain: os.Exit(imaptest.Run(m)).
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.holders++
	shared.mu.Unlock()
	code := m.Run()
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
	return code
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

// Stop stops the instance if this process started it, and waits until its processes are gone.
// The instance named by POSTERN_DOVECOT_DIR belongs to .ci/run and is left running.
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
			fmt.Fprintf(os.Stderr, "imaptest: .ci/dovecot stop %s: %v\n%s", s.Dir, err, out)
			return
		}
		if os.Getenv("POSTERN_DOVECOT_KEEP") == "" {
			_ = os.RemoveAll(s.Dir)
		}
		shared.mu.Lock()
		if shared.srv == s {
			shared.srv = nil
		}
		shared.mu.Unlock()
	})
}

// MasterPID is the pid of the instance's dovecot master process, from its master.pid.
func (s *Server) MasterPID() (int, error) {
	conf, err := os.ReadFile(filepath.Join(s.Dir, "dovecot.conf"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(conf), "\n") {
		if v, ok := strings.CutPrefix(line, "base_dir = "); ok {
			b, err := os.ReadFile(filepath.Join(strings.TrimSpace(v), "master.pid"))
			if err != nil {
				return 0, err
			}
			return strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	return 0, errors.New("no base_dir in dovecot.conf")
}

// CertPool holds the instance's self-signed certificate, for clients that should verify it
// (its names are 127.0.0.1 and localhost).
func (s *Server) CertPool(tb testing.TB) *x509.CertPool {
	tb.Helper()
	pem, err := os.ReadFile(filepath.Join(s.Dir, "tls", "cert.pem"))
	if err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		tb.Fatalf("imaptest: no certificate in %s/tls/cert.pem", s.Dir)
	}
	return pool
}

var userSeq atomic.Int64

// NewUser adds a user with a unique name, a random password and an empty Maildir.
func (s *Server) NewUser(tb testing.TB) *User {
	tb.Helper()
	name := fmt.Sprintf("u%d-%s", userSeq.Add(1), randHex(6))
	pass := randHex(12)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", s.script, "adduser", s.Dir, name, pass).CombinedOutput()
	if err != nil {
		tb.Fatalf("imaptest: .ci/dovecot adduser: %v\n%s", err, out)
	}
	return &User{
		Name:     name,
		Password: pass,
		Maildir:  filepath.Join(s.Dir, "home", name, "Maildir"),
		Server:   s,
	}
}

var msgSeq atomic.Int64

// AddMessage writes raw (an RFC 5322 message, CRLF line ends) into mailbox ("INBOX" or "" for
// the inbox, else a Maildir++ folder such as "Archive" or "Lists.go", made if missing) as a
// message with the Maildir flags given ("" or e.g. "FS" for \Flagged \Seen; letters sorted).
// It returns the file's path. Dovecot notices it on the next SELECT, NOOP or IDLE wake-up.
func (u *User) AddMessage(tb testing.TB, mailbox string, raw []byte, flags string) string {
	tb.Helper()
	dir := u.Maildir
	if mailbox != "" && !strings.EqualFold(mailbox, "INBOX") {
		dir = filepath.Join(u.Maildir, "."+mailbox)
	}
	uid, gid := u.owner(tb)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		for _, sub := range []string{"", "cur", "new", "tmp"} {
			p := filepath.Join(dir, sub)
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatalf("imaptest: %v", err)
			}
			if err := os.Chown(p, uid, gid); err != nil {
				tb.Fatalf("imaptest: %v", err)
			}
		}
		mf := filepath.Join(dir, "maildirfolder")
		if err := os.WriteFile(mf, nil, 0o644); err != nil {
			tb.Fatalf("imaptest: %v", err)
		}
		_ = os.Chown(mf, uid, gid)
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	now := time.Now()
	base := fmt.Sprintf("%d.M%dP%dQ%d.%s", now.Unix(), now.Nanosecond()/1000, os.Getpid(), msgSeq.Add(1),
		strings.NewReplacer("/", `\057`, ":", `\072`).Replace(host))
	tmp := filepath.Join(dir, "tmp", base)
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	if err := os.Chown(tmp, uid, gid); err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	final := filepath.Join(dir, "cur", base+":2,"+flags)
	if err := os.Rename(tmp, final); err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	return final
}

// FixOwnership hands everything under the Maildir to the user Dovecot serves mail as, for
// tests that wrote files or folders there themselves.
func (u *User) FixOwnership(tb testing.TB) {
	tb.Helper()
	uid, gid := u.owner(tb)
	err := filepath.Walk(u.Maildir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
}

func (u *User) owner(tb testing.TB) (int, int) {
	tb.Helper()
	fi, err := os.Stat(u.Maildir)
	if err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// logTail writes the end of dovecot.log to the test's log.
func (s *Server) logTail(tb testing.TB) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "dovecot.log"))
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	tb.Logf("imaptest: last lines of %s/dovecot.log:\n%s", s.Dir, strings.Join(lines, "\n"))
}

// DovecotInstalled reports whether the dovecot binary is there, with the reason when not.
func DovecotInstalled() (bool, string) {
	if _, err := exec.LookPath("dovecot"); err == nil {
		return true, ""
	}
	if fi, err := os.Stat("/usr/sbin/dovecot"); err == nil && !fi.IsDir() {
		return true, ""
	}
	return false, "dovecot is not installed (bash .ci/dovecot install, or apt-get install dovecot-imapd)"
}

func requireDovecot(tb testing.TB) {
	tb.Helper()
	if ok, why := DovecotInstalled(); !ok {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("imaptest: %s; CI=true requires it", why)
		}
		tb.Skipf("imaptest: %s", why)
	}
}

func start() (*Server, error) {
	script, err := findScript()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "postern-dovecot-")
	if err != nil {
		return nil, err
	}
	// Dovecot serves mail as an unprivileged user, who must reach the homes inside.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script, "start", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf(".ci/dovecot start: %v\n%s%s", err, out, stderr.Bytes())
	}
	env := parseEnv(out)
	s := &Server{Addr: env["POSTERN_DOVECOT_IMAP"], TLSAddr: env["POSTERN_DOVECOT_IMAPS"], Dir: dir, script: script, owned: true}
	if s.Addr == "" || s.TLSAddr == "" {
		s.Stop()
		return nil, fmt.Errorf(".ci/dovecot start printed no addresses:\n%s", out)
	}
	s.watch()
	return s, nil
}

// watch starts a process, in its own process group so a ^C to the test does not reach it,
// that stops the instance when this process exits without calling Stop (a panic, a -timeout,
// a kill): it waits for EOF on a pipe only this process holds open.
func (s *Server) watch() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	cmd := exec.Command("bash", "-c",
		`cat >/dev/null; bash "$1" stop "$2" && if [ -z "$POSTERN_DOVECOT_KEEP" ]; then rm -rf "$2"; fi`,
		"imaptest-watch", s.script, s.Dir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return
	}
	s.watcher, s.watchW = cmd, w
}

func external(dir string) (*Server, error) {
	script, err := findScript()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, script: script, Addr: os.Getenv("POSTERN_DOVECOT_IMAP"), TLSAddr: os.Getenv("POSTERN_DOVECOT_IMAPS")}
	if s.Addr == "" || s.TLSAddr == "" {
		b, err := os.ReadFile(filepath.Join(dir, "env"))
		if err != nil {
			return nil, err
		}
		env := parseEnv(b)
		s.Addr, s.TLSAddr = env["POSTERN_DOVECOT_IMAP"], env["POSTERN_DOVECOT_IMAPS"]
	}
	if s.Addr == "" || s.TLSAddr == "" {
		return nil, errors.New("no addresses in its env file")
	}
	c, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c.Close()
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

// findScript walks up from the working directory to the module root (the folder with go.mod).
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".ci", "dovecot")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("no .ci/dovecot beside %s/go.mod", dir)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; cannot find .ci/dovecot")
		}
		dir = parent
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

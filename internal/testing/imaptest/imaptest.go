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
// .ci/dovecot install puts it in place (apt package dovecot-imapd), with Pigeonhole when apt
// has it: then the server also speaks ManageSieve and delivers over LMTP through the user's
// active Sieve script ([Server.ManageSieveAddr], [User.Deliver], [RequireSieve]).
package imaptest

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/testing/testservice"
)

// Server is a running Dovecot instance.
type Server struct {
	Addr    string // plain IMAP (STARTTLS offered), 127.0.0.1:port
	TLSAddr string // implicit TLS with a self-signed certificate, 127.0.0.1:port
	// ManageSieveAddr is the ManageSieve server (RFC 5804, STARTTLS offered), 127.0.0.1:port,
	// and LMTPAddr the LMTP server whose deliveries run the user's active Sieve script; both
	// "" when Pigeonhole is not installed (see RequireSieve).
	ManageSieveAddr string
	LMTPAddr        string
	Dir             string // the instance's directory: dovecot.conf, dovecot.log, home/USER/Maildir, tls/cert.pem

	script testservice.Script    // .ci/dovecot, found: NewUser runs its adduser
	inst   *testservice.Instance // started by this process: Stop stops it; nil for POSTERN_DOVECOT_DIR's
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

var (
	dovecot = testservice.Script{Name: "dovecot", Keep: "POSTERN_DOVECOT_KEEP", Prefix: "imaptest"}
	shared  testservice.Shared[*Server]
)

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
	s, err := shared.Start(tb, func() (*Server, error) { return start(Options{}) }, (*Server).logTail)
	if err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	return s
}

// NewServer starts a private instance for one test, stopped by its t.Cleanup, for tests that
// stop, restart or break the server. It ignores POSTERN_DOVECOT_DIR.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	return NewServerWith(tb, Options{})
}

// Options configure a private instance differently from the shared one.
type Options struct {
	// Capability, when set, is what the server announces after login (Dovecot's
	// imap_capability), so that a test sees a server without some extension, for example
	// "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ SPECIAL-USE CONDSTORE" for
	// one with neither MOVE nor UIDPLUS. Dovecot still accepts the commands it hides; what
	// it changes is what a client, which must look before it uses one, is told.
	Capability string
	// OAuth2IntrospectionURL, when set, makes the server also take OAuth2 logins (SASL
	// XOAUTH2 and OAUTHBEARER), whose tokens it checks by asking this RFC 7662 endpoint
	// (an oauthtest.Server's IntrospectURL) for each login (oauth2.go).
	OAuth2IntrospectionURL string
}

// NewServerWith is NewServer with opts.
func NewServerWith(tb testing.TB, opts Options) *Server {
	tb.Helper()
	requireDovecot(tb)
	s, err := start(opts)
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
	return shared.Run(m)
}

// Stop stops the instance if this process started it, and waits until its processes are gone.
// The instance named by POSTERN_DOVECOT_DIR belongs to .ci/run and is left running.
func (s *Server) Stop() {
	if s.inst != nil && s.inst.Stop() {
		shared.Forget(s)
	}
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
	pool, err := testservice.CertPool(s.Dir)
	if err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	return pool
}

var userSeq atomic.Int64

// NewUser adds a user with a unique name, a random password and an empty Maildir.
func (s *Server) NewUser(tb testing.TB) *User {
	tb.Helper()
	name := fmt.Sprintf("u%d-%s", userSeq.Add(1), testservice.RandHex(6))
	pass := testservice.RandHex(12)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", s.script.Path, "adduser", s.Dir, name, pass).CombinedOutput()
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
	dovecot.LogTail(tb, s.Dir, 40, "dovecot.log")
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
		testservice.Unavailable(tb, "imaptest: "+why, "imaptest: "+why+"; CI=true requires it")
	}
}

func start(opts Options) (*Server, error) {
	sc, err := dovecot.Find()
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
	oauthConf, err := opts.oauth2Conf(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if extra := opts.conf() + oauthConf; extra != "" {
		// .ci/dovecot start appends DIR/extra.conf to the config it writes.
		if err := os.WriteFile(filepath.Join(dir, "extra.conf"), []byte(extra), 0o644); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := sc.Run(ctx, 0, "start", dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	env := testservice.ParseEnv(out)
	s := &Server{Addr: env["POSTERN_DOVECOT_IMAP"], TLSAddr: env["POSTERN_DOVECOT_IMAPS"], Dir: dir, script: sc, inst: sc.Own(dir)}
	s.ManageSieveAddr, s.LMTPAddr = env[envManageSieve], env[envLMTP]
	if s.Addr == "" || s.TLSAddr == "" {
		s.Stop()
		return nil, fmt.Errorf(".ci/dovecot start printed no addresses:\n%s", out)
	}
	s.inst.Watch()
	return s, nil
}

// conf is the Dovecot settings opts add to the config.
func (o Options) conf() string {
	if o.Capability == "" {
		return ""
	}
	return "imap_capability = " + strings.Join(strings.Fields(o.Capability), " ") + "\n"
}

func external(dir string) (*Server, error) {
	sc, err := dovecot.Find()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, script: sc, Addr: os.Getenv("POSTERN_DOVECOT_IMAP"), TLSAddr: os.Getenv("POSTERN_DOVECOT_IMAPS"),
		ManageSieveAddr: os.Getenv(envManageSieve), LMTPAddr: os.Getenv(envLMTP)}
	if s.Addr == "" || s.TLSAddr == "" || s.ManageSieveAddr == "" || s.LMTPAddr == "" {
		// The env file is the instance's own word; the environment may predate Pigeonhole.
		if env, err := testservice.ReadEnv(dir); err == nil {
			s.Addr, s.TLSAddr = env["POSTERN_DOVECOT_IMAP"], env["POSTERN_DOVECOT_IMAPS"]
			s.ManageSieveAddr, s.LMTPAddr = env[envManageSieve], env[envLMTP]
		} else if s.Addr == "" || s.TLSAddr == "" {
			return nil, err
		}
	}
	if s.Addr == "" || s.TLSAddr == "" {
		return nil, errors.New("no addresses in its env file")
	}
	if err := testservice.Listening(s.Addr); err != nil {
		return nil, err
	}
	return s, nil
}

// Login opens an IMAP session as u over plain IMAP on loopback, closed by tb's cleanup: the
// test's own view of the server, independent of the code under test. opts may be nil.
func (u *User) Login(tb testing.TB, opts *imapclient.Options) *imapclient.Client {
	tb.Helper()
	c, err := imapclient.DialInsecure(u.Server.Addr, opts)
	if err != nil {
		tb.Fatalf("imaptest: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	if err := c.Login(u.Name, u.Password).Wait(); err != nil {
		tb.Fatalf("imaptest: login as %s: %v", u.Name, err)
	}
	return c
}

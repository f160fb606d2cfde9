package imaptest

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

const testMessage = "From: Alice <alice@example.org>\r\n" +
	"To: Bob <bob@example.org>\r\n" +
	"Subject: hello\r\n" +
	"Date: Mon, 02 Jan 2006 15:04:05 +0000\r\n" +
	"Message-ID: <1@example.org>\r\n" +
	"\r\n" +
	"Hello, Bob.\r\n"

func options(tlsConfig *tls.Config) *imapclient.Options {
	return &imapclient.Options{TLSConfig: tlsConfig, Dialer: &net.Dialer{Timeout: 10 * time.Second}}
}

func login(t *testing.T, addr string, u *User) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, options(nil))
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(u.Name, u.Password).Wait(); err != nil {
		t.Fatalf("login %s: %v", u.Name, err)
	}
	return c
}

// raw runs IMAP commands (tagged t1, t2, ...) on a plain connection and returns the untagged
// lines; every command must end in OK.
func raw(t *testing.T, addr string, cmds ...string) []string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	if greeting, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(greeting, "* OK") {
		t.Fatalf("greeting %q, %v", greeting, err)
	}
	var untagged []string
	for i, cmd := range cmds {
		tag := "t" + strconv.Itoa(i+1)
		if _, err := fmt.Fprintf(conn, "%s %s\r\n", tag, cmd); err != nil {
			t.Fatal(err)
		}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			line = strings.TrimRight(line, "\r\n")
			if strings.HasPrefix(line, tag+" ") {
				if !strings.HasPrefix(line, tag+" OK") {
					t.Fatalf("%s: %s", cmd, line)
				}
				break
			}
			untagged = append(untagged, line)
		}
	}
	return untagged
}

func containsLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestLoginSelectCondstoreQresync(t *testing.T) {
	t.Parallel()
	s := Start(t)
	u := s.NewUser(t)
	// A file written straight into cur/ by the test (as root in CI) before the first login.
	name := filepath.Join(u.Maildir, "cur", "1136214245.M1P1Q1.test:2,S")
	if err := os.WriteFile(name, []byte(testMessage), 0o644); err != nil {
		t.Fatal(err)
	}

	c, err := imapclient.DialInsecure(s.Addr, options(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitGreeting(); err != nil {
		t.Fatal(err)
	}
	pre := c.Caps()
	for _, cap := range []imap.Cap{imap.CapStartTLS, "AUTH=PLAIN", "AUTH=LOGIN"} {
		if !pre.Has(cap) {
			t.Errorf("pre-login capabilities lack %s: %v", cap, pre)
		}
	}
	if err := c.Login(u.Name, u.Password).Wait(); err != nil {
		t.Fatalf("login: %v", err)
	}
	caps, err := c.Capability().Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, cap := range []imap.Cap{imap.CapCondStore, imap.CapQResync, imap.CapEnable, imap.CapUIDPlus, imap.CapIdle} {
		if _, ok := caps[cap]; !ok { // literal presence, not CapSet.Has's implications
			t.Errorf("capabilities lack %s: %v", cap, caps)
		}
	}
	// go-imap v2 (beta.8) refuses to send ENABLE CONDSTORE/QRESYNC itself: ask on a raw
	// connection that the server enables both.
	untagged := raw(t, s.Addr, "LOGIN "+u.Name+" "+u.Password, "ENABLE CONDSTORE QRESYNC", "SELECT INBOX (QRESYNC (1 1))")
	if !containsLine(untagged, "* ENABLED CONDSTORE QRESYNC") {
		t.Errorf("ENABLE CONDSTORE QRESYNC answered %q, want * ENABLED CONDSTORE QRESYNC", untagged)
	}
	if !containsLine(untagged, "* OK [HIGHESTMODSEQ ") {
		t.Errorf("SELECT with QRESYNC gave no HIGHESTMODSEQ: %q", untagged)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{CondStore: true}).Wait()
	if err != nil {
		t.Fatalf("SELECT INBOX: %v", err)
	}
	if sel.NumMessages != 1 {
		t.Errorf("INBOX has %d messages, want 1", sel.NumMessages)
	}
	if sel.HighestModSeq == 0 || sel.UIDValidity == 0 {
		t.Errorf("SELECT gave HIGHESTMODSEQ %d UIDVALIDITY %d, want both non-zero", sel.HighestModSeq, sel.UIDValidity)
	}
	msgs, err := c.Fetch(imap.SeqSetNum(1), &imap.FetchOptions{UID: true, Flags: true, Envelope: true, ModSeq: true}).Collect()
	if err != nil {
		t.Fatalf("FETCH: %v", err)
	}
	if len(msgs) != 1 || msgs[0].Envelope == nil || msgs[0].Envelope.Subject != "hello" {
		t.Fatalf("FETCH = %+v", msgs)
	}
	if msgs[0].ModSeq == 0 || len(msgs[0].Flags) != 1 || msgs[0].Flags[0] != imap.FlagSeen {
		t.Errorf("FETCH flags %v modseq %d, want [\\Seen] and a modseq", msgs[0].Flags, msgs[0].ModSeq)
	}
	if err := c.Logout().Wait(); err != nil {
		t.Errorf("LOGOUT: %v", err)
	}
}

func TestAddMessageToFolderIsWritable(t *testing.T) {
	t.Parallel()
	s := Start(t)
	u := s.NewUser(t)
	u.AddMessage(t, "INBOX", []byte(testMessage), "")
	u.AddMessage(t, "Archive", []byte(testMessage), "S")
	u.AddMessage(t, "Archive", []byte(testMessage), "FS")
	c := login(t, s.Addr, u)

	boxes, err := c.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range boxes {
		names = append(names, b.Mailbox)
	}
	if strings.Join(names, ",") != "Archive,INBOX" && strings.Join(names, ",") != "INBOX,Archive" {
		t.Errorf("LIST = %v, want INBOX and Archive", names)
	}
	sel, err := c.Select("Archive", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sel.NumMessages != 2 {
		t.Errorf("Archive has %d messages, want 2", sel.NumMessages)
	}
	// Dovecot must be able to rename and remove the files (they and their folder are its).
	if err := c.Store(imap.SeqSetNum(1), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		t.Fatalf("STORE: %v", err)
	}
	if _, err := c.Expunge().Collect(); err != nil {
		t.Fatalf("EXPUNGE: %v", err)
	}
	if err := c.Create("Lists.go", nil).Wait(); err != nil {
		t.Fatalf("CREATE: %v", err)
	}
	if _, err := os.Stat(filepath.Join(u.Maildir, ".Lists.go", "cur")); err != nil {
		t.Errorf("CREATE Lists.go did not make a Maildir++ folder .Lists.go: %v", err)
	}
	// Mail arriving while connected: Dovecot notices the file on NOOP.
	u.AddMessage(t, "Archive", []byte(testMessage), "")
	if err := c.Noop().Wait(); err != nil {
		t.Fatal(err)
	}
	if n := c.Mailbox().NumMessages; n != 2 {
		t.Errorf("after delivery while selected, Archive has %d messages, want 2", n)
	}
}

func TestImplicitTLSVerification(t *testing.T) {
	t.Parallel()
	s := Start(t)
	u := s.NewUser(t)

	// Default verification: the self-signed certificate must be refused.
	_, err := imapclient.DialTLS(s.TLSAddr, options(nil))
	var unknown x509.UnknownAuthorityError
	var verr *tls.CertificateVerificationError
	if err == nil || !(errors.As(err, &unknown) || errors.As(err, &verr)) {
		t.Fatalf("DialTLS with default verification: err = %v, want a certificate verification error", err)
	}

	for name, cfg := range map[string]*tls.Config{
		"InsecureSkipVerify": {InsecureSkipVerify: true},
		"RootCAs":            {RootCAs: s.CertPool(t), ServerName: "127.0.0.1"},
	} {
		c, err := imapclient.DialTLS(s.TLSAddr, options(cfg))
		if err != nil {
			t.Fatalf("DialTLS %s: %v", name, err)
		}
		if err := c.Login(u.Name, u.Password).Wait(); err != nil {
			t.Errorf("login over TLS (%s): %v", name, err)
		}
		c.Close()
	}

	// STARTTLS on the plain port.
	c, err := imapclient.DialStartTLS(s.Addr, options(&tls.Config{InsecureSkipVerify: true}))
	if err != nil {
		t.Fatalf("DialStartTLS: %v", err)
	}
	defer c.Close()
	if err := c.Login(u.Name, u.Password).Wait(); err != nil {
		t.Errorf("login after STARTTLS: %v", err)
	}
	if _, err := imapclient.DialStartTLS(s.Addr, options(nil)); err == nil || !(errors.As(err, &unknown) || errors.As(err, &verr)) {
		t.Errorf("STARTTLS with default verification: err = %v, want a certificate verification error", err)
	}
}

func TestWrongPasswordFails(t *testing.T) {
	t.Parallel()
	s := Start(t)
	u := s.NewUser(t)
	for name, creds := range map[string][2]string{
		"wrong password": {u.Name, u.Password + "x"},
		"unknown user":   {u.Name + "-nobody", u.Password},
	} {
		c, err := imapclient.DialInsecure(s.Addr, options(nil))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Login(creds[0], creds[1]).Wait()
		c.Close()
		var ierr *imap.Error
		if !errors.As(err, &ierr) || ierr.Type != imap.StatusResponseTypeNo || ierr.Code != imap.ResponseCodeAuthenticationFailed {
			t.Errorf("%s: LOGIN err = %v, want NO [AUTHENTICATIONFAILED]", name, err)
		}
	}
}

// Users made at once are usable at once (Dovecot caches a passwd-file for a second).
func TestManyUsersAtOnce(t *testing.T) {
	t.Parallel()
	s := Start(t)
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			u := s.NewUser(t)
			u.AddMessage(t, "", []byte(testMessage), "")
			c := login(t, s.Addr, u)
			sel, err := c.Select("INBOX", nil).Wait()
			if err != nil {
				t.Fatal(err)
			}
			if sel.NumMessages != 1 {
				t.Errorf("INBOX has %d messages, want 1", sel.NumMessages)
			}
		})
	}
}

// children lists the pids whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, p)
		}
	}
	return kids
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie is dead but still listed until reaped.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestStopLeavesNoProcess(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	u := s.NewUser(t)
	c := login(t, s.Addr, u) // a logged-in session: an imap process of this instance
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	master, err := s.MasterPID()
	if err != nil {
		t.Fatal(err)
	}
	pids := append([]int{master}, children(t, master)...)
	if len(pids) < 4 {
		t.Fatalf("instance processes = %v, want the master and several children", pids)
	}
	start := time.Now()
	s.Stop()
	s.Stop() // idempotent
	t.Logf("Stop took %v", time.Since(start))
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d of the stopped instance is still running", p)
		}
	}
	if len(children(t, master)) != 0 {
		t.Errorf("children of master %d left: %v", master, children(t, master))
	}
	if conn, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Stop", s.Addr)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stop left %s behind (err %v)", s.Dir, err)
	}
}

// Instances started at once get their own directories and ports.
func TestPrivateServersDoNotCollide(t *testing.T) {
	t.Parallel()
	servers := make(chan *Server, 3)
	for i := range 3 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			s := NewServer(t)
			servers <- s
			u := s.NewUser(t)
			c := login(t, s.Addr, u)
			if _, err := c.Select("INBOX", nil).Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Cleanup(func() {
		close(servers)
		seen := map[string]bool{}
		for s := range servers {
			for _, k := range []string{s.Addr, s.TLSAddr, s.Dir} {
				if seen[k] {
					t.Errorf("%s used by two instances", k)
				}
				seen[k] = true
			}
		}
	})
}

// TestNewServerWithCapability: a private instance told to announce fewer extensions does
// after login (MOVE and UIDPLUS gone, CONDSTORE kept), and the shared instance still
// announces them.
func TestNewServerWithCapability(t *testing.T) {
	t.Parallel()
	s := NewServerWith(t, Options{Capability: "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ SPECIAL-USE CONDSTORE"})
	c := s.NewUser(t).Login(t, nil)
	caps := c.Caps()
	for _, gone := range []imap.Cap{imap.CapMove, imap.CapUIDPlus} {
		if caps.Has(gone) {
			t.Errorf("the restricted server announces %s: %v", gone, caps)
		}
	}
	if !caps.Has(imap.CapCondStore) || !caps.Has(imap.CapSpecialUse) {
		t.Errorf("the restricted server lost CONDSTORE or SPECIAL-USE: %v", caps)
	}
	if full := Start(t).NewUser(t).Login(t, nil).Caps(); !full.Has(imap.CapMove) || !full.Has(imap.CapUIDPlus) {
		t.Errorf("the shared server lacks MOVE or UIDPLUS: %v", full)
	}
}

// Deliver goes through Dovecot's LMTP into the inbox (no script active), dot-stuffed.
func TestDeliver(t *testing.T) {
	s := Start(t)
	RequireSieve(t, s)
	u := s.NewUser(t)
	s.Deliver(t, u, []byte("From: a@example.org\nSubject: dots\n\n.leading dot\nend\n"))
	c := u.Login(t, nil)
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil || sel.NumMessages != 1 {
		t.Fatalf("INBOX after Deliver: %+v, %v", sel, err)
	}
	body, err := c.Fetch(imap.SeqSetNum(1), &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{{Specifier: imap.PartSpecifierText}}}).Collect()
	if err != nil || len(body) != 1 || len(body[0].BodySection) != 1 {
		t.Fatalf("fetch: %v", err)
	}
	for _, b := range body[0].BodySection {
		if got := string(b.Bytes); got != ".leading dot\r\nend\r\n" {
			t.Errorf("body %q", got)
		}
	}
}

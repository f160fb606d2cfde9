package imaptest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/testing/testservice"
)

// The env lines .ci/dovecot start prints when Pigeonhole is installed.
const (
	envManageSieve = "POSTERN_DOVECOT_MANAGESIEVE"
	envLMTP        = "POSTERN_DOVECOT_LMTP"
)

// RequireSieve skips the test (fails it when CI=true) unless s speaks ManageSieve and LMTP,
// which .ci/dovecot sets up when Pigeonhole is installed.
func RequireSieve(tb testing.TB, s *Server) {
	tb.Helper()
	if s.ManageSieveAddr != "" && s.LMTPAddr != "" {
		return
	}
	why := "imaptest: the Dovecot instance has no ManageSieve or LMTP server: Pigeonhole is not installed " +
		"(bash .ci/dovecot install, or apt-get install dovecot-sieve dovecot-managesieved dovecot-lmtpd), " +
		"or the instance in " + EnvDir + " was started before it was"
	testservice.Unavailable(tb, why, why+"; CI=true requires it")
}

// Deliver hands raw (an RFC 5322 message) to Dovecot's LMTP server for u, as a mail server
// would: Dovecot runs u's active Sieve script, which files it. It returns once Dovecot has
// stored it (LMTP answers after the delivery), and fails the test if Dovecot refused it.
func (s *Server) Deliver(tb testing.TB, u *User, raw []byte) {
	tb.Helper()
	RequireSieve(tb, s)
	if err := lmtpDeliver(s.LMTPAddr, "imaptest@localhost", u.Name, raw); err != nil {
		tb.Fatalf("imaptest: LMTP delivery to %s: %v", u.Name, err)
	}
}

// lmtpDeliver is a minimal LMTP client (RFC 2033): LHLO, MAIL FROM, RCPT TO, DATA, QUIT.
func lmtpDeliver(addr, from, rcpt string, raw []byte) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	r := bufio.NewReader(conn)
	expect := func(what string, code byte) error {
		var text []string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			line = strings.TrimRight(line, "\r\n")
			text = append(text, line)
			if len(line) < 4 || line[3] != '-' {
				if line == "" || line[0] != code {
					return fmt.Errorf("%s: the server answered %q", what, strings.Join(text, " / "))
				}
				return nil
			}
		}
	}
	send := func(cmd string) error {
		_, err := fmt.Fprintf(conn, "%s\r\n", cmd)
		return err
	}
	if err := expect("greeting", '2'); err != nil {
		return err
	}
	for _, step := range []struct {
		cmd  string
		code byte
	}{{"LHLO imaptest", '2'}, {"MAIL FROM:<" + from + ">", '2'}, {"RCPT TO:<" + rcpt + ">", '2'}, {"DATA", '3'}} {
		if err := send(step.cmd); err != nil {
			return err
		}
		if err := expect(step.cmd, step.code); err != nil {
			return err
		}
	}
	if _, err := conn.Write(dotStuff(raw)); err != nil {
		return err
	}
	if err := expect("end of DATA", '2'); err != nil { // one reply per recipient: one here
		return err
	}
	_ = send("QUIT")
	return nil
}

// dotStuff is raw with CRLF line ends, a leading "." doubled on each line, and the ending
// "." line.
func dotStuff(raw []byte) []byte {
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	var b bytes.Buffer
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, ".") {
			b.WriteByte('.')
		}
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	b.WriteString(".\r\n")
	return b.Bytes()
}

package outbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/postern-mcp/postern/internal/testing/smtptest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

func TestMain(m *testing.M) {
	release := smtptest.Hold()
	code := m.Run()
	release()
	os.Exit(code)
}

func mailpitAccount(t *testing.T, s *smtptest.Server, mode string) SMTPAccount {
	a := SMTPAccount{
		Name: "test", User: s.User,
		Password:  func(context.Context) (string, error) { return s.Password, nil },
		TLSConfig: &tls.Config{RootCAs: s.CertPool(t)},
	}
	switch mode {
	case "starttls":
		a.Server, a.TLS = s.SMTP, "starttls"
	case "implicit":
		a.Server, a.TLS = s.SMTPS, "" // the default
	default:
		t.Fatalf("mode %q", mode)
	}
	return a
}

// traceOnly reports whether head holds only the header fields Mailpit puts on top of what
// it receives.
func traceOnly(head []byte) bool {
	for _, line := range strings.SplitAfter(string(head), "\r\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		name, _, _ := strings.Cut(line, ":")
		switch strings.ToLower(name) {
		case "received", "return-path", "bcc":
		default:
			return false
		}
	}
	return true
}

func TestSendArrivesByteForByte(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	for _, mode := range []string{"starttls", "implicit"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			from, to, cc, bcc := smtptest.Addr("alice"), smtptest.Addr("bob"), smtptest.Addr("carol"), smtptest.Addr("dave")
			msgid := smtptest.Addr("id")
			raw := testmsg.Plain(from, to, cc, "hello over "+mode, msgid)
			sent := bytes.Clone(raw)
			if err := Send(context.Background(), mailpitAccount(t, srv, mode), from, []string{to, cc, bcc}, raw); err != nil {
				t.Fatalf("Send: %v", err)
			}
			if !bytes.Equal(raw, sent) {
				t.Errorf("Send changed the caller's bytes")
			}
			msgs := srv.WaitCount(t, to, 1, 10*time.Second)
			m := msgs[0]
			if m.Subject != "hello over "+mode || m.MessageID != msgid || !strings.EqualFold(m.From, from) {
				t.Errorf("arrived: subject %q message-id %q from %q", m.Subject, m.MessageID, m.From)
			}
			// Every envelope recipient got it, the Bcc-only one included (Mailpit records an
			// envelope recipient no header names in Bcc).
			for _, r := range []string{cc, bcc} {
				got := srv.Messages(t, r)
				if len(got) != 1 || got[0].ID != m.ID {
					t.Errorf("recipient %s: got %d messages %+v; want the one sent", r, len(got), got)
				}
			}
			if len(m.Bcc) != 1 || !strings.EqualFold(m.Bcc[0], bcc) {
				t.Errorf("Bcc (envelope-only recipients) = %v; want [%s]", m.Bcc, bcc)
			}
			stored := srv.Raw(t, m.ID)
			if !bytes.HasSuffix(stored, raw) {
				t.Fatalf("what arrived does not end with the bytes sent; arrived:\n%s", stored)
			}
			if head := stored[:len(stored)-len(raw)]; !traceOnly(head) {
				t.Errorf("what arrived has more on top than Mailpit's trace headers:\n%s", head)
			}
		})
	}
}

func TestSendWrongPasswordNotSent(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	for _, mode := range []string{"starttls", "implicit"} {
		a := mailpitAccount(t, srv, mode)
		a.Password = func(context.Context) (string, error) { return srv.Password + "-wrong", nil }
		to := smtptest.Addr("erin")
		err := Send(context.Background(), a, smtptest.Addr("alice"), []string{to}, testmsg.Plain("a@example.test", to, "", "wrong password", smtptest.Addr("id")))
		if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrUnknown) {
			t.Fatalf("%s: wrong password: %v; want ErrNotSent", mode, err)
		}
		var se *smtp.SMTPError
		if !errors.As(err, &se) || se.Code != 535 {
			t.Errorf("%s: want the server's 535 as the cause: %v", mode, err)
		}
		if !strings.Contains(err.Error(), "refused the login") || !strings.Contains(err.Error(), "--password-cmd") {
			t.Errorf("%s: the error should say the login was refused and what to check: %v", mode, err)
		}
		if got := srv.Messages(t, to); len(got) != 0 {
			t.Errorf("%s: %d messages arrived after a refused login", mode, len(got))
		}
	}
}

func TestSendUnverifiedCertificateNotSent(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	for _, mode := range []string{"starttls", "implicit"} {
		a := mailpitAccount(t, srv, mode)
		a.TLSConfig = nil // the system's roots, which do not hold the test certificate
		asked := false
		a.Password = func(context.Context) (string, error) { asked = true; return srv.Password, nil }
		to := smtptest.Addr("frank")
		err := Send(context.Background(), a, smtptest.Addr("alice"), []string{to}, testmsg.Plain("a@example.test", to, "", "bad cert", smtptest.Addr("id")))
		if !errors.Is(err, ErrNotSent) {
			t.Fatalf("%s: unverifiable certificate: %v; want ErrNotSent", mode, err)
		}
		if !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: the error should name the certificate: %v", mode, err)
		}
		if !asked {
			t.Errorf("%s: the password command was not run", mode)
		}
		if got := srv.Messages(t, to); len(got) != 0 {
			t.Errorf("%s: %d messages arrived over an unverified connection", mode, len(got))
		}
	}
}

func TestSendWrongTLSModeNotSent(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	a := mailpitAccount(t, srv, "starttls")
	a.TLS = "implicit" // a TLS handshake against a server that greets in plain text
	err := Send(context.Background(), a, smtptest.Addr("alice"), []string{smtptest.Addr("gina")}, testmsg.Plain("a@example.test", "b@example.test", "", "mode", smtptest.Addr("id")))
	if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "--smtp-tls") {
		t.Errorf("implicit TLS to a STARTTLS port: %v; want ErrNotSent pointing at --smtp-tls", err)
	}
}

func TestSendUnreachableNotSent(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = Send(context.Background(), SMTPAccount{Name: "test", Server: addr, TLS: "none"}, "a@example.test", []string{"b@example.test"}, []byte("Subject: x\r\n\r\nx\r\n"))
	if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("closed port: %v; want ErrNotSent saying it cannot reach the server", err)
	}
}

func TestSendRefusesBeforeDialing(t *testing.T) {
	t.Parallel()
	raw := []byte("Subject: x\r\n\r\nx\r\n")
	cases := []struct {
		name  string
		a     SMTPAccount
		from  string
		rcpts []string
		want  string
	}{
		{"plain text to another computer", SMTPAccount{Name: "t", Server: "192.0.2.1:25", TLS: "none"}, "a@example.test", []string{"b@example.test"}, "only allowed to this computer"},
		{"unknown TLS mode", SMTPAccount{Name: "t", Server: "127.0.0.1:25", TLS: "ssl"}, "a@example.test", []string{"b@example.test"}, "implicit, starttls or none"},
		{"no port", SMTPAccount{Name: "t", Server: "smtp.example.test"}, "a@example.test", []string{"b@example.test"}, "not host:port"},
		{"no recipient", SMTPAccount{Name: "t", Server: "127.0.0.1:25", TLS: "none"}, "a@example.test", nil, "no recipient"},
		{"a display name as recipient", SMTPAccount{Name: "t", Server: "127.0.0.1:25", TLS: "none"}, "a@example.test", []string{"Bob <b@example.test>"}, "not a bare address"},
		{"a line break in the sender", SMTPAccount{Name: "t", Server: "127.0.0.1:25", TLS: "none"}, "a@example.test\r\nRCPT TO:<x@example.test>", []string{"b@example.test"}, "not a bare address"},
		{"user without password command", SMTPAccount{Name: "t", Server: "127.0.0.1:25", TLS: "none", User: "u"}, "a@example.test", []string{"b@example.test"}, "no password command"},
	}
	for _, c := range cases {
		err := Send(context.Background(), c.a, c.from, c.rcpts, raw)
		if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrNotSent saying %q", c.name, err, c.want)
		}
	}
}

// fakeSMTP is a hand-written SMTP server on 127.0.0.1 that accepts everything up to the end
// of DATA and then does what the test asks, to reach outcomes a real server rarely shows.
type fakeSMTP struct {
	addr     string
	conns    atomic.Int32
	mu       sync.Mutex
	data     []byte // the message as received (dot-unstuffed), when the final dot came
	commands []string
}

// startFake serves connections; at names the point ("DATA" for the DATA command, "RCPT" for
// each RCPT, "dot" after the final dot) where act runs instead of the usual reply; act returns
// false to end the connection.
func startFake(t *testing.T, at string, act func(conn net.Conn, w *bufio.Writer) bool) *fakeSMTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMTP{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				f.serve(conn, at, act)
			}()
		}
	}()
	return f
}

func (f *fakeSMTP) serve(conn net.Conn, at string, act func(net.Conn, *bufio.Writer) bool) {
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	w := bufio.NewWriter(conn)
	say := func(s string) { w.WriteString(s + "\r\n"); w.Flush() }
	say("220 fake ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimRight(line, "\r\n"))
		verb, _, _ := strings.Cut(cmd, " ")
		verb, _, _ = strings.Cut(verb, ":")
		f.mu.Lock()
		f.commands = append(f.commands, verb)
		f.mu.Unlock()
		if verb == at && at != "dot" {
			if !act(conn, w) {
				return
			}
			continue
		}
		switch verb {
		case "EHLO":
			say("250-fake\r\n250-8BITMIME\r\n250 SIZE 10000000")
		case "MAIL", "RCPT", "RSET", "NOOP":
			say("250 ok")
		case "DATA":
			say("354 go on")
			var msg []byte
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				msg = append(msg, strings.TrimPrefix(l, ".")...)
			}
			f.mu.Lock()
			f.data = msg
			f.mu.Unlock()
			if at == "dot" {
				if !act(conn, w) {
					return
				}
				continue
			}
			say("250 queued")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 no")
		}
	}
}

func (f *fakeSMTP) received() ([]byte, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.data, append([]string(nil), f.commands...)
}

func fakeAccount(f *fakeSMTP) SMTPAccount {
	return SMTPAccount{Name: "test", Server: f.addr, TLS: "none"}
}

func TestSendConnectionLostAfterDotIsUnknown(t *testing.T) {
	t.Parallel()
	f := startFake(t, "dot", func(net.Conn, *bufio.Writer) bool { return false }) // hang up, no reply
	raw := testmsg.Plain("a@example.test", "b@example.test", "", "lost", "lost@example.test")
	err := Send(context.Background(), fakeAccount(f), "a@example.test", []string{"b@example.test", "c@example.test"}, raw)
	if !errors.Is(err, ErrUnknown) || errors.Is(err, ErrNotSent) {
		t.Fatalf("connection closed after the final dot: %v; want ErrUnknown (and not ErrNotSent)", err)
	}
	if !strings.Contains(err.Error(), "may or may not have been sent") {
		t.Errorf("the error should say the outcome is unknown: %v", err)
	}
	if n := f.conns.Load(); n != 1 {
		t.Errorf("Send made %d connections; want exactly 1 (no retry)", n)
	}
	data, cmds := f.received()
	if !bytes.Equal(data, raw) {
		t.Errorf("the server received:\n%q\nwant the message as given:\n%q", data, raw)
	}
	if strings.Join(cmds, " ") != "EHLO MAIL RCPT RCPT DATA" {
		t.Errorf("commands %v; want EHLO MAIL RCPT RCPT DATA", cmds)
	}
}

func TestSendConnectionLostInsideDataIsUnknown(t *testing.T) {
	t.Parallel()
	f := startFake(t, "DATA", func(conn net.Conn, w *bufio.Writer) bool {
		w.WriteString("354 go on\r\n")
		w.Flush()
		buf := make([]byte, 100) // read a part of the message, then hang up
		_, _ = conn.Read(buf)
		return false
	})
	raw := append(testmsg.Plain("a@example.test", "b@example.test", "", "partial", "partial@example.test"), bytes.Repeat([]byte("x\r\n"), 200_000)...)
	err := Send(context.Background(), fakeAccount(f), "a@example.test", []string{"b@example.test"}, raw)
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("connection closed while the message was being written: %v; want ErrUnknown", err)
	}
	if n := f.conns.Load(); n != 1 {
		t.Errorf("Send made %d connections; want exactly 1 (no retry)", n)
	}
}

func TestSendNoReplyAfterDotUntilCancelledIsUnknown(t *testing.T) {
	t.Parallel()
	f := startFake(t, "dot", func(conn net.Conn, _ *bufio.Writer) bool {
		_, _ = io.Copy(io.Discard, conn) // say nothing until the client hangs up
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Send(ctx, fakeAccount(f), "a@example.test", []string{"b@example.test"}, testmsg.Plain("a@example.test", "b@example.test", "", "slow", "slow@example.test"))
	if !errors.Is(err, ErrUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("no reply to the final dot before the deadline: %v; want ErrUnknown wrapping the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Send returned after %v; the context's deadline was 0.5s", d)
	}
}

func TestSendRefusedAfterDotIsNotSent(t *testing.T) {
	t.Parallel()
	for _, reply := range []string{"554 5.7.1 message refused as spam", "451 4.3.0 try again later"} {
		f := startFake(t, "dot", func(_ net.Conn, w *bufio.Writer) bool {
			w.WriteString(reply + "\r\n")
			w.Flush()
			return true
		})
		err := Send(context.Background(), fakeAccount(f), "a@example.test", []string{"b@example.test"}, testmsg.Plain("a@example.test", "b@example.test", "", "refused", "refused@example.test"))
		if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrUnknown) {
			t.Fatalf("%q after the final dot: %v; want ErrNotSent", reply, err)
		}
		var se *smtp.SMTPError
		if !errors.As(err, &se) || se.Code != int(reply[0]-'0')*100+int(reply[1]-'0')*10+int(reply[2]-'0') {
			t.Errorf("%q: the server's reply should be the cause: %v", reply, err)
		}
		if !strings.Contains(err.Error(), strings.SplitN(reply, " ", 3)[2]) {
			t.Errorf("%q: the error should quote the server: %v", reply, err)
		}
		if n := f.conns.Load(); n != 1 {
			t.Errorf("%q: Send made %d connections; want 1", reply, n)
		}
	}
}

func TestSendRefusedRecipientsNotSent(t *testing.T) {
	t.Parallel()
	f := startFake(t, "RCPT", func(_ net.Conn, w *bufio.Writer) bool {
		w.WriteString("550 5.1.1 no such user\r\n")
		w.Flush()
		return true
	})
	err := Send(context.Background(), fakeAccount(f), "a@example.test", []string{"b@example.test", "c@example.test"}, testmsg.Plain("a@example.test", "b@example.test", "", "rcpt", "rcpt@example.test"))
	if !errors.Is(err, ErrNotSent) {
		t.Fatalf("every RCPT refused: %v; want ErrNotSent", err)
	}
	if !strings.Contains(err.Error(), "b@example.test") || !strings.Contains(err.Error(), "c@example.test") {
		t.Errorf("the error should name every refused recipient: %v", err)
	}
	_, cmds := f.received()
	for _, c := range cmds {
		if c == "DATA" {
			t.Errorf("Send went on to DATA after refused recipients: %v", cmds)
		}
	}
}

func TestSendDataRefusedOrLostBeforeMessageIsNotSent(t *testing.T) {
	t.Parallel()
	for name, act := range map[string]func(net.Conn, *bufio.Writer) bool{
		"554 to DATA": func(_ net.Conn, w *bufio.Writer) bool {
			w.WriteString("554 5.5.1 no valid recipients\r\n")
			w.Flush()
			return true
		},
		"hang-up at DATA": func(net.Conn, *bufio.Writer) bool { return false },
	} {
		f := startFake(t, "DATA", act)
		err := Send(context.Background(), fakeAccount(f), "a@example.test", []string{"b@example.test"}, testmsg.Plain("a@example.test", "b@example.test", "", "data", "data@example.test"))
		if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrUnknown) {
			t.Errorf("%s: %v; want ErrNotSent: no byte of the message was written", name, err)
		}
	}
}

func TestSendNonASCIIAddressWithoutSMTPUTF8NotSent(t *testing.T) {
	t.Parallel()
	f := startFake(t, "none", nil) // offers no SMTPUTF8
	err := Send(context.Background(), fakeAccount(f), "a@example.test", []string{"bjørn@example.test"}, testmsg.Plain("a@example.test", "b@example.test", "", "utf8", "utf8@example.test"))
	if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "SMTPUTF8") {
		t.Errorf("a non-ASCII recipient to a server without SMTPUTF8: %v; want ErrNotSent naming SMTPUTF8", err)
	}
	if _, cmds := f.received(); strings.Join(cmds, " ") != "EHLO QUIT" && strings.Join(cmds, " ") != "EHLO" {
		t.Errorf("commands %v; want none after EHLO (a MAIL would be refused by a real server anyway)", cmds)
	}
}

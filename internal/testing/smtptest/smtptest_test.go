package smtptest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

func message(from, to, cc, subject, msgid string) []byte {
	return []byte("From: Alice <" + from + ">\r\n" +
		"To: Bob <" + to + ">\r\n" +
		"Cc: " + cc + "\r\n" +
		"Subject: " + subject + "\r\n" +
		"Date: Mon, 02 Jan 2006 15:04:05 +0000\r\n" +
		"Message-ID: <" + msgid + ">\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"\r\n" +
		"Hello, Bob.\r\n" +
		".a line that starts with a dot\r\n" +
		"\r\n" +
		"Grüße\r\n")
}

// dial connects with STARTTLS (or implicit TLS), verifying the server's certificate.
func dial(t *testing.T, s *Server, implicit bool) *smtp.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: s.CertPool(t)}
	var c *smtp.Client
	var err error
	if implicit {
		c, err = smtp.DialTLS(s.SMTPS, cfg)
	} else {
		c, err = smtp.DialStartTLS(s.SMTP, cfg)
	}
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.CommandTimeout = 10 * time.Second
	c.SubmissionTimeout = 10 * time.Second
	t.Cleanup(func() { c.Close() })
	return c
}

func send(c *smtp.Client, from string, rcpts []string, raw []byte) error {
	if err := c.Mail(from, nil); err != nil {
		return fmt.Errorf("MAIL: %w", err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			return fmt.Errorf("RCPT %s: %w", r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(raw); err != nil {
		return err
	}
	return w.Close()
}

// addedByMailpit reports whether head holds only the header fields Mailpit puts on top of a
// message it receives.
func addedByMailpit(head []byte) bool {
	for _, line := range strings.SplitAfter(string(head), "\r\n") {
		if line == "" {
			continue
		}
		name, _, _ := strings.Cut(line, ":")
		switch {
		case line[0] == ' ' || line[0] == '\t': // a folded continuation
		case strings.EqualFold(name, "Received"), strings.EqualFold(name, "Return-Path"), strings.EqualFold(name, "Bcc"):
		default:
			return false
		}
	}
	return true
}

func same(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !strings.EqualFold(got[i], want[i]) {
			return false
		}
	}
	return true
}

func TestSendAndReadBack(t *testing.T) {
	t.Parallel()
	s := Start(t)
	for _, implicit := range []bool{false, true} {
		name := "starttls"
		if implicit {
			name = "implicit-tls"
		}
		t.Run(name, func(t *testing.T) {
			from, to, cc, bcc := Addr("alice"), Addr("bob"), Addr("carol"), Addr("dave")
			msgid := Addr("id")
			raw := message(from, to, cc, "hello "+name, msgid)
			c := dial(t, s, implicit)
			if err := c.Auth(sasl.NewPlainClient("", s.User, s.Password)); err != nil {
				t.Fatalf("AUTH PLAIN with the right password: %v", err)
			}
			if err := send(c, from, []string{to, cc, bcc}, raw); err != nil {
				t.Fatalf("send: %v", err)
			}
			if err := c.Quit(); err != nil {
				t.Fatalf("QUIT: %v", err)
			}

			msgs := s.WaitCount(t, to, 1, 10*time.Second)
			m := msgs[0]
			if m.Subject != "hello "+name || !strings.EqualFold(m.From, from) || m.MessageID != msgid {
				t.Errorf("got subject %q from %q message-id %q; want %q from %q message-id %q", m.Subject, m.From, m.MessageID, "hello "+name, from, msgid)
			}
			if !same(m.To, to) || !same(m.Cc, cc) || !same(m.Bcc, bcc) {
				t.Errorf("got To %v Cc %v Bcc %v; want [%s] [%s] [%s] (Bcc from the envelope)", m.To, m.Cc, m.Bcc, to, cc, bcc)
			}
			for _, r := range []string{cc, bcc} {
				other := s.Messages(t, r)
				if len(other) != 1 || other[0].ID != m.ID {
					t.Errorf("Messages(%s) = %+v; want the one message %s", r, other, m.ID)
				}
			}
			if got := s.Messages(t, from); len(got) != 0 {
				t.Errorf("Messages(sender %s) = %+v; the sender is no recipient", from, got)
			}

			stored := s.Raw(t, m.ID)
			if !bytes.HasSuffix(stored, raw) {
				t.Fatalf("Mailpit's copy does not end with the bytes sent:\n%s", stored)
			}
			if head := stored[:len(stored)-len(raw)]; !addedByMailpit(head) {
				t.Errorf("Mailpit's copy starts with more than its own trace headers:\n%s", head)
			}
		})
	}
}

// Messages compares whole addresses: Mailpit's search matches substrings.
func TestMessagesMatchWholeAddress(t *testing.T) {
	t.Parallel()
	s := Start(t)
	to := Addr("erin")
	longer := "x" + to
	c := dial(t, s, false)
	if err := c.Auth(sasl.NewPlainClient("", s.User, s.Password)); err != nil {
		t.Fatal(err)
	}
	if err := send(c, Addr("alice"), []string{longer}, message(Addr("alice"), longer, Addr("cc"), "longer", Addr("id"))); err != nil {
		t.Fatal(err)
	}
	s.WaitCount(t, longer, 1, 10*time.Second)
	if got := s.Messages(t, to); len(got) != 0 {
		t.Errorf("Messages(%s) = %+v; that message went to %s", to, got, longer)
	}
	if got := s.Messages(t, strings.ToUpper(longer)); len(got) != 1 {
		t.Errorf("Messages(%s) = %d messages; addresses compare without regard to case", strings.ToUpper(longer), len(got))
	}
}

func smtpCode(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestWrongPasswordRefused(t *testing.T) {
	t.Parallel()
	s := Start(t)
	for _, implicit := range []bool{false, true} {
		to := Addr("frank")
		c := dial(t, s, implicit)
		err := c.Auth(sasl.NewPlainClient("", s.User, s.Password+"x"))
		if code := smtpCode(err); code != 535 {
			t.Fatalf("implicit=%v: AUTH with a wrong password: %v (code %d); want 535", implicit, err, code)
		}
		if err := send(c, Addr("alice"), []string{to}, message(Addr("alice"), to, Addr("cc"), "wrong password", Addr("id"))); err == nil {
			t.Errorf("implicit=%v: the server took a message after a refused AUTH", implicit)
		}
		if got := s.Messages(t, to); len(got) != 0 {
			t.Errorf("implicit=%v: %d messages arrived after a refused AUTH", implicit, len(got))
		}
	}
}

func TestUnauthenticatedRefused(t *testing.T) {
	t.Parallel()
	s := Start(t)
	for _, implicit := range []bool{false, true} {
		to := Addr("grace")
		c := dial(t, s, implicit)
		err := send(c, Addr("alice"), []string{to}, message(Addr("alice"), to, Addr("cc"), "no auth", Addr("id")))
		if code := smtpCode(err); code != 530 {
			t.Errorf("implicit=%v: MAIL without AUTH: %v (code %d); want 530", implicit, err, code)
		}
		if got := s.Messages(t, to); len(got) != 0 {
			t.Errorf("implicit=%v: %d messages arrived without AUTH", implicit, len(got))
		}
	}
	// Nor is a password taken, or mail, before STARTTLS.
	c, err := smtp.Dial(s.SMTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if code := smtpCode(c.Auth(sasl.NewPlainClient("", s.User, s.Password))); code != 530 {
		t.Errorf("AUTH before STARTTLS: code %d; want 530", code)
	}
	if code := smtpCode(c.Mail(Addr("alice"), nil)); code != 530 {
		t.Errorf("MAIL before STARTTLS: code %d; want 530", code)
	}
}

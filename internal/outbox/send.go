// Package outbox puts a finished message on the wire (SMTP submission; storing it in IMAP
// folders is internal/source/imap's). It never builds or changes a message's bytes, never
// retries a submission by itself and never logs a password.
package outbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/postern-mcp/postern/internal/config"
)

// SMTPAccount is what Send needs to reach a submission server.
type SMTPAccount struct {
	Name   string // the account name, for messages
	Server string // host:port
	// TLS is "implicit" (the default when ""), "starttls", or "none" (allowed only when the
	// host is loopback).
	TLS  string
	User string // the login; "" sends without AUTH
	// Password returns the password; it is called once per Send, before dialing.
	Password func(ctx context.Context) (string, error)
	// TLSConfig overrides certificate checks (tests only); nil means the system roots, with
	// ServerName taken from the host.
	TLSConfig *tls.Config
	// CAFile is a PEM file of authorities trusted besides the system's (tls_ca).
	CAFile string
	// Token, when set, logs in with OAuth2 instead of Password (oauth.go): it returns an
	// access token, a new one when fresh. Mechanism is oauth2_mechanism ("": by what the
	// server offers); Fix, what to do when even a new token is refused.
	Token          func(ctx context.Context, fresh bool) (string, error)
	Mechanism, Fix string
}

var (
	// ErrNotSent is wrapped by every Send error after which it is certain that the server
	// accepted nothing: the message may be sent again.
	ErrNotSent = errors.New("the message was not sent")
	// ErrUnknown is wrapped by a Send error after which it cannot be known whether the server
	// accepted the message: the connection broke, timed out or was cancelled after (part of)
	// the message was written and before the server's final reply. Sending again may deliver
	// it twice.
	ErrUnknown = errors.New("whether the message was sent is unknown")
)

// sendError is one sentence for the person, wrapping the outcome (ErrNotSent or ErrUnknown)
// and the cause.
type sendError struct {
	msg     string
	outcome error
	cause   error
}

func (e *sendError) Error() string { return e.msg }

func (e *sendError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.outcome}
	}
	return []error{e.outcome, e.cause}
}

func notSent(cause error, format string, args ...any) error {
	return &sendError{msg: fmt.Sprintf(format, args...) + "; nothing was sent", outcome: ErrNotSent, cause: cause}
}

func unknown(cause error, format string, args ...any) error {
	return &sendError{msg: fmt.Sprintf(format, args...), outcome: ErrUnknown, cause: cause}
}

// Timeouts of one submission. A variable so tests can shorten them.
var timeouts = struct {
	dial    time.Duration // TCP connect
	command time.Duration // the greeting, TLS, and each command's reply (including DATA's 354)
	body    time.Duration // writing the message after DATA
	final   time.Duration // the reply to the final dot (RFC 5321 4.5.3.2.6 suggests 10 minutes)
}{20 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute}

// Send submits raw (a complete RFC 5322 message) from envelope sender from to every address of
// rcpts (bare addresses): it dials, says EHLO, does STARTTLS or implicit TLS as configured,
// AUTH (PLAIN, else LOGIN; never a password over an unencrypted link to another computer),
// MAIL FROM, RCPT TO for each, DATA, and QUIT. Every error wraps ErrNotSent or ErrUnknown
// (see there) and, where there is one, the cause (a *smtp.SMTPError for a server's refusal,
// ctx's error when cancelled). Send never retries.
func Send(ctx context.Context, a SMTPAccount, from string, rcpts []string, raw []byte) error {
	host, _, err := net.SplitHostPort(a.Server)
	if err != nil || host == "" {
		return notSent(err, "the SMTP server %q of account %s is not host:port; fix it with postern account add --smtp HOST:PORT", a.Server, a.Name)
	}
	switch a.TLS {
	case "", "implicit", "starttls":
	case "none":
		if !isLoopback(host) {
			return notSent(nil, "account %s: SMTP without TLS is only allowed to this computer (loopback); use --smtp-tls implicit or starttls", a.Name)
		}
	default:
		return notSent(nil, "account %s: the SMTP TLS mode must be implicit, starttls or none, not %q", a.Name, a.TLS)
	}
	if len(rcpts) == 0 {
		return notSent(nil, "the message has no recipient; add one")
	}
	if len(raw) == 0 {
		return notSent(nil, "the message is empty")
	}
	if !bare(from) {
		return notSent(nil, "the sender %q is not a bare address (local@domain); fix the account's address", from)
	}
	for _, r := range rcpts {
		if r == "" || !bare(r) {
			return notSent(nil, "the recipient %q is not a bare address (local@domain); fix the address", r)
		}
	}

	var password string
	if a.User != "" && a.Token == nil {
		if a.Password == nil {
			return notSent(nil, "account %s has an SMTP user but no password command; add one with postern account add --password-cmd", a.Name)
		}
		if password, err = a.Password(ctx); err != nil {
			return notSent(err, "account %s: the password command failed (%v)", a.Name, err)
		}
	}

	s := &submission{ctx: ctx, a: a, host: host}
	return s.run(from, rcpts, raw, password)
}

type submission struct {
	ctx  context.Context
	a    SMTPAccount
	host string
	conn net.Conn // the TCP connection, under any TLS
	c    *smtp.Client
	// timedOut is set when our own timer closed the connection.
	timedOut atomic.Bool
}

func (s *submission) run(from string, rcpts []string, raw []byte, password string) error {
	d := &net.Dialer{Timeout: timeouts.dial}
	conn, err := d.DialContext(s.ctx, "tcp", s.a.Server)
	if err != nil {
		return notSent(s.cause(err), "cannot reach the SMTP server %s of account %s (%v); check --smtp and the network, then send again", s.a.Server, s.a.Name, s.reason(err))
	}
	s.conn = conn
	defer conn.Close()
	// Cancelling ctx breaks the connection, which ends whatever is waiting on it.
	defer context.AfterFunc(s.ctx, func() { conn.Close() })()

	if err := s.hello(); err != nil {
		return err
	}
	if password != "" || s.a.Token != nil {
		if err := s.auth(password); err != nil {
			return err
		}
	}
	if max, ok := s.c.MaxMessageSize(); ok && max > 0 && len(raw) > max {
		return notSent(nil, "the message is %s and the server %s takes at most %s; make it smaller (fewer or smaller attachments)", size(len(raw)), s.a.Server, size(max))
	}

	opts := &smtp.MailOptions{Size: int64(len(raw)), UTF8: !isASCII(from) || !allASCII(rcpts)}
	if ok, _ := s.c.Extension("SMTPUTF8"); opts.UTF8 && !ok {
		return notSent(nil, "the server %s does not take addresses with non-ASCII characters (no SMTPUTF8); use an ASCII form of the address", s.a.Server)
	}
	if err := s.c.Mail(from, opts); err != nil {
		return s.refused(err, "the server %s refused the sender %s", s.a.Server, from)
	}
	var refused []string
	var first error
	for _, r := range rcpts {
		err := s.c.Rcpt(r, nil)
		if err == nil {
			continue
		}
		var se *smtp.SMTPError
		if !errors.As(err, &se) {
			return s.refused(err, "the server %s refused the recipient %s", s.a.Server, r)
		}
		refused = append(refused, fmt.Sprintf("%s (%d %s)", r, se.Code, oneLine(se.Message)))
		if first == nil {
			first = err
		}
	}
	if len(refused) > 0 {
		_ = s.c.Reset()
		_ = s.c.Quit()
		return notSent(first, "the server %s refused %s: %s; fix or remove them and send again", s.a.Server, plural(len(refused), "the recipient", "these recipients"), strings.Join(refused, ", "))
	}
	w, err := s.c.Data()
	if err != nil {
		return s.refused(err, "the server %s refused to take the message (DATA)", s.a.Server)
	}

	// From here on, bytes of the message are on their way: a broken connection leaves the
	// outcome unknown until the server's reply to the final dot.
	_ = conn.SetDeadline(time.Now().Add(timeouts.body))
	if _, err := w.Write(raw); err != nil {
		return s.unknown(err)
	}
	if err := w.Close(); err != nil { // writes the final dot, then waits (timeouts.final) for the reply
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			if se.Code >= 400 && se.Code < 500 {
				return notSent(err, "the server %s did not take the message for now (%d %s); send it again later", s.a.Server, se.Code, oneLine(se.Message))
			}
			return notSent(err, "the server %s refused the message (%d %s)", s.a.Server, se.Code, oneLine(se.Message))
		}
		return s.unknown(err)
	}
	_ = s.c.Quit() // the message is accepted; a failed goodbye changes nothing
	return nil
}

// hello reads the greeting, does TLS as configured and says EHLO; s.c is ready for AUTH.
func (s *submission) hello() error {
	cfg := &tls.Config{}
	if s.a.TLSConfig != nil {
		cfg = s.a.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = s.host
	}
	if cfg.MinVersion == 0 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if s.a.CAFile != "" {
		pool, err := config.LoadCA(s.a.CAFile)
		if err != nil {
			return notSent(err, "account %s: %v; fix it with postern account set %s --ca-file PATH", s.a.Name, err, s.a.Name)
		}
		cfg.RootCAs = pool
	}
	_ = s.conn.SetDeadline(time.Now().Add(timeouts.command))
	var err error
	switch s.a.TLS {
	case "", "implicit":
		tc := tls.Client(s.conn, cfg)
		if err := tc.HandshakeContext(s.ctx); err != nil {
			return s.tlsError(err)
		}
		s.c = smtp.NewClient(tc)
	case "starttls":
		// The greeting, EHLO and STARTTLS happen inside, with go-smtp's default timeouts
		// (minutes): a timer keeps them to ours.
		t := time.AfterFunc(timeouts.command, func() {
			s.timedOut.Store(true)
			s.conn.Close()
		})
		s.c, err = smtp.NewClientStartTLS(s.conn, cfg)
		if !t.Stop() && err == nil { // the timer fired just as STARTTLS completed
			err = errors.New("timed out")
		}
		if err != nil {
			if strings.Contains(err.Error(), "doesn't support STARTTLS") {
				return notSent(err, "the server %s does not offer STARTTLS; if it speaks TLS from the start (usually port 465), use --smtp-tls implicit", s.a.Server)
			}
			return s.tlsError(err)
		}
	case "none":
		s.c = smtp.NewClient(s.conn)
	}
	_ = s.conn.SetDeadline(time.Time{})
	s.c.CommandTimeout = timeouts.command
	s.c.SubmissionTimeout = timeouts.final
	// EHLO (after STARTTLS, the first on the encrypted link, where the handshake happens) with
	// our address as a literal rather than a host name, as RFC 5321 allows.
	if err := s.c.Hello(ehloName(s.conn)); err != nil {
		if s.a.TLS == "starttls" && isTLSError(err) {
			return s.tlsError(err)
		}
		return s.refused(err, "the server %s did not accept our greeting (EHLO)", s.a.Server)
	}
	return nil
}

func (s *submission) auth(password string) error {
	if _, encrypted := s.c.TLSConnectionState(); !encrypted && !isLoopback(s.host) {
		return notSent(nil, "account %s: the connection to %s is not encrypted, so the password is not sent; use --smtp-tls implicit or starttls", s.a.Name, s.a.Server)
	}
	if s.a.Token != nil {
		return s.oauthAuth()
	}
	var mech sasl.Client
	switch {
	case s.c.SupportsAuth("PLAIN"):
		mech = sasl.NewPlainClient("", s.a.User, password)
	case s.c.SupportsAuth("LOGIN"):
		mech = sasl.NewLoginClient(s.a.User, password)
	default:
		return notSent(nil, "the server %s offers no password login (AUTH PLAIN or LOGIN) on this connection; check --smtp and --smtp-tls", s.a.Server)
	}
	err := s.c.Auth(mech)
	if err == nil {
		return nil
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) && (se.Code == 535 || se.Code == 534) {
		return notSent(err, "the SMTP server %s refused the login of %s for account %s (%d %s); check --smtp-user and what --password-cmd prints", s.a.Server, s.a.User, s.a.Name, se.Code, oneLine(se.Message))
	}
	return s.refused(err, "the SMTP server %s refused the login of %s for account %s", s.a.Server, s.a.User, s.a.Name)
}

// refused turns an error before the message was written into ErrNotSent: a server's reply, or
// a connection that broke while nothing of the message had been sent.
func (s *submission) refused(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		if se.Code >= 400 && se.Code < 500 {
			return notSent(err, "%s for now (%d %s); send it again later", what, se.Code, oneLine(se.Message))
		}
		return notSent(err, "%s (%d %s)", what, se.Code, oneLine(se.Message))
	}
	if s.ctx.Err() != nil {
		return notSent(s.cause(err), "sending through %s was stopped (%s) before the message was handed over", s.a.Server, s.reason(err))
	}
	return notSent(s.cause(err), "the connection to %s broke before the message was handed over (%v); send it again", s.a.Server, s.reason(err))
}

func (s *submission) unknown(err error) error {
	return unknown(s.cause(err), "the connection to %s broke after the message began to go out and before the server confirmed it (%v), so it may or may not have been sent; look in the recipients' mail or the Sent folder on the server before sending it again", s.a.Server, s.reason(err))
}

func (s *submission) tlsError(err error) error {
	err = s.cause(err)
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return notSent(err, "the TLS certificate of %s could not be verified (%v); check the server name in --smtp, or the server's certificate", s.a.Server, err)
	case s.ctx.Err() != nil:
		return notSent(err, "sending through %s was cancelled (%v)", s.a.Server, s.reason(err))
	case isTLSError(err):
		return notSent(err, "TLS with %s failed (%v); check --smtp-tls (implicit for port 465, starttls for 587)", s.a.Server, err)
	}
	return s.refused(err, "the server %s did not start TLS", s.a.Server)
}

// cause is err, or ctx's error when ctx ended (the connection was closed because of it).
func (s *submission) cause(err error) error {
	if cerr := context.Cause(s.ctx); cerr != nil {
		return cerr
	}
	return err
}

// reason is a short account of err for a sentence.
func (s *submission) reason(err error) string {
	if cerr := context.Cause(s.ctx); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return "the time for sending ran out"
		}
		return "cancelled"
	}
	var ne net.Error
	if s.timedOut.Load() || errors.As(err, &ne) && ne.Timeout() {
		return "no answer in time"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err.Error()
	}
	return err.Error()
}

func isTLSError(err error) bool {
	var re tls.RecordHeaderError
	var ae tls.AlertError
	return errors.As(err, &re) || errors.As(err, &ae) || strings.Contains(err.Error(), "tls:")
}

// ehloName is our address as an RFC 5321 address literal.
func ehloName(conn net.Conn) string {
	if ta, ok := conn.LocalAddr().(*net.TCPAddr); ok {
		if ip4 := ta.IP.To4(); ip4 != nil {
			return "[" + ip4.String() + "]"
		}
		return "[IPv6:" + ta.IP.String() + "]"
	}
	return "localhost"
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bare reports whether addr can stand in MAIL FROM:<addr> or RCPT TO:<addr> as it is.
func bare(addr string) bool {
	return !strings.ContainsAny(addr, "<>\r\n \t")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func allASCII(ss []string) bool {
	for _, s := range ss {
		if !isASCII(s) {
			return false
		}
	}
	return true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

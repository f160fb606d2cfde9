// Package managesieve is a small ManageSieve client (RFC 5804): STARTTLS, AUTHENTICATE PLAIN,
// CAPABILITY, LISTSCRIPTS, GETSCRIPT, PUTSCRIPT, CHECKSCRIPT, SETACTIVE, LOGOUT. It speaks the
// protocol over a connection it is given and never dials, never logs what it sends (a password
// goes by in AUTHENTICATE), and never deletes or renames a script.
//
// It is hand-written because no Go ManageSieve library is reachable from this build (none is in
// the module cache or the package lists here); the protocol is line-based and this is the part
// postern needs, about 400 lines.
package managesieve

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// Limits on what the server may send, so that a broken or hostile one cannot make the client
// hold unbounded memory.
const (
	maxLine    = 64 << 10 // one response line, literals aside
	maxLiteral = 8 << 20  // one literal (a script, a message)
)

// Client is one ManageSieve connection. Its methods are not safe for concurrent use.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
	caps Capabilities
	// Timeout bounds each command's exchange (0: none); the caller's context should close the
	// connection when it ends.
	Timeout time.Duration
}

// Capabilities is what the server announced.
type Capabilities struct {
	Implementation string
	Sieve          []string // the Sieve extensions its scripts may require
	SASL           []string
	StartTLS       bool
	Version        string
	// Other holds the rest, upper-cased name to value.
	Other map[string]string
}

// Has says whether the server's Sieve supports extension ext ("fileinto", "body").
func (c Capabilities) Has(ext string) bool {
	for _, e := range c.Sieve {
		if strings.EqualFold(e, ext) {
			return true
		}
	}
	return false
}

// Error is a NO or BYE from the server: Text is its human-readable reason (a script's
// compile errors, for PUTSCRIPT), Code its response code such as "QUOTA" or "NONEXISTENT".
type Error struct {
	Status string // NO or BYE
	Code   string
	Text   string
}

func (e *Error) Error() string {
	s := "the ManageSieve server answered " + e.Status
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if t := strings.TrimSpace(e.Text); t != "" {
		s += ": " + t
	}
	return s
}

// ErrProtocol is wrapped by every error about a response the client could not read.
var ErrProtocol = errors.New("the ManageSieve server sent something that is not ManageSieve")

// New reads the greeting (the capabilities and OK) on conn.
func New(conn net.Conn) (*Client, error) {
	c := &Client{conn: conn, r: bufio.NewReaderSize(conn, 4096), Timeout: time.Minute}
	c.deadline()
	if err := c.readCapabilities(); err != nil {
		return nil, err
	}
	return c, nil
}

// Capabilities is what the server last announced (at the greeting, after STARTTLS, or after
// Capability).
func (c *Client) Capabilities() Capabilities { return c.caps }

// StartTLS upgrades the connection and reads the capabilities the server sends again.
func (c *Client) StartTLS(cfg *tls.Config) error {
	if !c.caps.StartTLS {
		return errors.New("the ManageSieve server does not offer STARTTLS")
	}
	if _, err := c.cmd("STARTTLS"); err != nil {
		return err
	}
	if c.r.Buffered() > 0 {
		return fmt.Errorf("%w: data after the STARTTLS answer", ErrProtocol)
	}
	tc := tls.Client(c.conn, cfg)
	c.deadline()
	if err := tc.Handshake(); err != nil {
		return err
	}
	c.conn = tc
	c.r = bufio.NewReaderSize(tc, 4096)
	return c.readCapabilities()
}

// AuthenticatePlain logs in with SASL PLAIN (RFC 4616) as user.
func (c *Client) AuthenticatePlain(user, password string) error {
	ir := base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + password))
	_, err := c.cmd("AUTHENTICATE " + quote("PLAIN") + " " + quote(ir))
	return err
}

// Capability asks again (after AUTHENTICATE the list may change).
func (c *Client) Capability() (Capabilities, error) {
	lines, err := c.cmd("CAPABILITY")
	if err != nil {
		return Capabilities{}, err
	}
	c.caps = parseCapabilities(lines)
	return c.caps, nil
}

// Script is a script on the server.
type Script struct {
	Name   string
	Active bool
}

// ListScripts lists the scripts, the active one marked.
func (c *Client) ListScripts() ([]Script, error) {
	lines, err := c.cmd("LISTSCRIPTS")
	if err != nil {
		return nil, err
	}
	var out []Script
	for _, l := range lines {
		if len(l) == 0 || l[0].kind == tokAtom {
			return nil, fmt.Errorf("%w: a LISTSCRIPTS line without a script name", ErrProtocol)
		}
		s := Script{Name: l[0].text}
		if len(l) > 1 && l[1].kind == tokAtom && strings.EqualFold(l[1].text, "ACTIVE") {
			s.Active = true
		}
		out = append(out, s)
	}
	return out, nil
}

// GetScript returns the script's text.
func (c *Client) GetScript(name string) (string, error) {
	lines, err := c.cmd("GETSCRIPT " + quote(name))
	if err != nil {
		return "", err
	}
	if len(lines) != 1 || len(lines[0]) != 1 || lines[0][0].kind == tokAtom {
		return "", fmt.Errorf("%w: GETSCRIPT answered without one script", ErrProtocol)
	}
	return lines[0][0].text, nil
}

// PutScript stores text as the script name (replacing a script of that name; an active one
// stays active). The server compiles it first and refuses one with errors (an *Error whose
// Text says where).
func (c *Client) PutScript(name, text string) error {
	_, err := c.cmd("PUTSCRIPT " + quote(name) + " " + literal(text))
	return err
}

// CheckScript asks the server to compile text without storing it.
func (c *Client) CheckScript(text string) error {
	_, err := c.cmd("CHECKSCRIPT " + literal(text))
	return err
}

// SetActive makes name the active script ("" deactivates every script).
func (c *Client) SetActive(name string) error {
	_, err := c.cmd("SETACTIVE " + quote(name))
	return err
}

// Logout says goodbye and closes the connection.
func (c *Client) Logout() error {
	_, err := c.cmd("LOGOUT")
	cerr := c.conn.Close()
	if err != nil {
		return err
	}
	return cerr
}

// Close closes the connection without a goodbye.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) deadline() {
	if c.Timeout > 0 {
		_ = c.conn.SetDeadline(time.Now().Add(c.Timeout))
	} else {
		_ = c.conn.SetDeadline(time.Time{})
	}
}

// cmd sends one command line and reads the data lines up to its OK; NO and BYE are *Error.
func (c *Client) cmd(line string) ([][]token, error) {
	c.deadline()
	if _, err := io.WriteString(c.conn, line+"\r\n"); err != nil {
		return nil, err
	}
	return c.response()
}

// response reads data lines up to OK, NO or BYE.
func (c *Client) response() ([][]token, error) {
	var lines [][]token
	for {
		l, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if len(l) > 0 && l[0].kind == tokAtom {
			switch status := strings.ToUpper(l[0].text); status {
			case "OK":
				return lines, nil
			case "NO", "BYE":
				e := &Error{Status: status}
				for _, t := range l[1:] {
					switch t.kind {
					case tokCode:
						e.Code = t.text
					case tokString:
						e.Text = t.text
					}
				}
				return lines, e
			}
			// Every data line starts with a string (a capability, a script name, a script);
			// an atom there is another protocol, such as IMAP's "* OK".
			if !strings.EqualFold(l[0].text, "STARTTLS") {
				return nil, fmt.Errorf("%w: a line starting with %q", ErrProtocol, l[0].text)
			}
		}
		lines = append(lines, l)
	}
}

func (c *Client) readCapabilities() error {
	lines, err := c.response()
	if err != nil {
		return err
	}
	c.caps = parseCapabilities(lines)
	return nil
}

func parseCapabilities(lines [][]token) Capabilities {
	caps := Capabilities{Other: map[string]string{}}
	for _, l := range lines {
		if len(l) == 0 || l[0].kind == tokAtom && !strings.EqualFold(l[0].text, "STARTTLS") {
			continue
		}
		name := strings.ToUpper(l[0].text)
		value := ""
		if len(l) > 1 && l[1].kind == tokString {
			value = l[1].text
		}
		switch name {
		case "IMPLEMENTATION":
			caps.Implementation = value
		case "SIEVE":
			caps.Sieve = strings.Fields(value)
		case "SASL":
			caps.SASL = strings.Fields(value)
		case "STARTTLS":
			caps.StartTLS = true
		case "VERSION":
			caps.Version = value
		default:
			caps.Other[name] = value
		}
	}
	return caps
}

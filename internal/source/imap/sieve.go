package imap

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/managesieve"
	"github.com/postern-mcp/postern/internal/source"
)

// DefaultSievePort is where ManageSieve listens unless the account says otherwise (RFC 5804).
const DefaultSievePort = "4190"

// SieveAddr is the ManageSieve server of a configured account: its sieve setting, else the
// IMAP server's host on port 4190.
func SieveAddr(a config.Account) string {
	s, _ := SettingsOf(a) // the two fields it reads are copied whatever else a holds
	return s.sieveAddr()
}

// sieveAddr is the ManageSieve server of the account: its sieve setting, else the IMAP
// server's host on port 4190.
func (a Settings) sieveAddr() string {
	if a.Sieve != "" {
		return a.Sieve
	}
	host, _, err := net.SplitHostPort(a.Server)
	if err != nil {
		host = a.Server
	}
	return net.JoinHostPort(host, DefaultSievePort)
}

// OpenScripts logs in to the ManageSieve server of a configured account, with its user and
// password command.
func OpenScripts(ctx context.Context, a config.Account) (*Scripts, error) {
	s, err := SettingsOf(a)
	if err != nil {
		return nil, err
	}
	return DialScripts(ctx, s.account(), s.sieveAddr())
}

// Scripts is a logged-in ManageSieve connection: the source.ScriptStore of an IMAP account.
type Scripts struct {
	a    Account
	addr string
	c    *managesieve.Client
}

var _ source.ScriptStore = (*Scripts)(nil)

// DialScripts connects to the ManageSieve server addr (host:port) for a, upgrades it with
// STARTTLS (only a.TLS none to a loopback address goes without), and logs in with SASL PLAIN.
// Until it returns, ctx ending closes the connection.
func DialScripts(ctx context.Context, a Account, addr string) (*Scripts, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("the ManageSieve server %q of account %s is not host:port; set sieve = \"host:port\" in the account", addr, a.Name)
	}
	plain := false
	switch a.TLS {
	case "", "implicit", "starttls":
	case "none":
		if !isLoopback(host) {
			return nil, fmt.Errorf("account %s: ManageSieve without TLS is only allowed to this computer (loopback); use tls implicit or starttls", a.Name)
		}
		plain = true
	default:
		return nil, fmt.Errorf("account %s: tls must be implicit, starttls or none, not %q", a.Name, a.TLS)
	}
	conn, err := (&net.Dialer{Timeout: 20 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach the ManageSieve server %s of account %s (%v); if the server offers ManageSieve elsewhere, set sieve = \"host:port\" in the account", addr, a.Name, unwrapOp(err))
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	fail := func(err error) (*Scripts, error) {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	c, err := managesieve.New(conn)
	if err != nil {
		return fail(fmt.Errorf("the server %s of account %s does not answer as a ManageSieve server (%v); check its sieve address", addr, a.Name, err))
	}
	if !plain {
		if !c.Capabilities().StartTLS {
			return fail(fmt.Errorf("the ManageSieve server %s of account %s offers no STARTTLS, so the password would go in clear; nothing was sent", addr, a.Name))
		}
		cfg := &tls.Config{ServerName: host}
		if a.TLSConfig != nil {
			cfg = a.TLSConfig.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName = host
			}
		}
		if a.CAFile != "" {
			pool, err := config.LoadCA(a.CAFile)
			if err != nil {
				return fail(fmt.Errorf("account %s: %v; fix it with postern account set %s --ca-file PATH", a.Name, err, a.Name))
			}
			cfg.RootCAs = pool
		}
		if err := c.StartTLS(cfg); err != nil {
			return fail(dialError(Account{Name: a.Name, Server: addr}, err))
		}
	}
	pw, err := a.Password(ctx)
	if err != nil {
		return fail(err)
	}
	if err := c.AuthenticatePlain(a.User, pw); err != nil {
		var me *managesieve.Error
		if errors.As(err, &me) {
			return fail(fmt.Errorf("the ManageSieve server %s refused the login of %s for account %s (%s); check the user and what the password command prints", addr, a.User, a.Name, strings.TrimSpace(me.Text)))
		}
		return fail(fmt.Errorf("cannot log in to the ManageSieve server %s of account %s: %v", addr, a.Name, err))
	}
	if _, err := c.Capability(); err != nil {
		return fail(fmt.Errorf("the ManageSieve server %s of account %s did not say what it offers: %v", addr, a.Name, err))
	}
	return &Scripts{a: a, addr: addr, c: c}, nil
}

func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// Capabilities is what the server announced after the login.
func (s *Scripts) Capabilities() managesieve.Capabilities { return s.c.Capabilities() }

// Extensions are the Sieve extensions the server supports.
func (s *Scripts) Extensions() []string {
	return append([]string(nil), s.c.Capabilities().Sieve...)
}

// Scripts lists the scripts and names the active one.
func (s *Scripts) Scripts(ctx context.Context) ([]source.Script, string, error) {
	var list []managesieve.Script
	err := s.do(ctx, "list the scripts", func() (err error) { list, err = s.c.ListScripts(); return err })
	if err != nil {
		return nil, "", err
	}
	out := make([]source.Script, len(list))
	active := ""
	for i, sc := range list {
		out[i] = source.Script{Name: sc.Name, Active: sc.Active}
		if sc.Active {
			active = sc.Name
		}
	}
	return out, active, nil
}

// Get returns the script's text.
func (s *Scripts) Get(ctx context.Context, name string) (string, error) {
	var text string
	err := s.do(ctx, fmt.Sprintf("read the script %q", name), func() (err error) { text, err = s.c.GetScript(name); return err })
	return text, err
}

// Put stores the script.
func (s *Scripts) Put(ctx context.Context, name, text string) error {
	return s.do(ctx, fmt.Sprintf("store the script %q", name), func() error { return s.c.PutScript(name, text) })
}

// Activate makes name the active script.
func (s *Scripts) Activate(ctx context.Context, name string) error {
	return s.do(ctx, fmt.Sprintf("activate the script %q", name), func() error { return s.c.SetActive(name) })
}

// Check compiles text on the server without storing it.
func (s *Scripts) Check(ctx context.Context, text string) error {
	return s.do(ctx, "check a script", func() error { return s.c.CheckScript(text) })
}

// Close logs out.
func (s *Scripts) Close() { _ = s.c.Logout() }

// do runs one command, closing the connection if ctx ends first, and says what failed.
func (s *Scripts) do(ctx context.Context, what string, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { s.c.Close() })
	err := f()
	stop()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var me *managesieve.Error
	if errors.As(err, &me) {
		return fmt.Errorf("the ManageSieve server %s of account %s would not %s: %w", s.addr, s.a.Name, what, err)
	}
	return fmt.Errorf("could not %s on the ManageSieve server %s of account %s: %w", what, s.addr, s.a.Name, err)
}

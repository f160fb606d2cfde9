package imap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/config"
)

// Dial connects and logs in, turning every failure into a sentence a person can act on.
// Until it returns, ctx ending closes the connection, so no wait on the server
// (connecting, TLS, the greeting, the login) outlasts it.
func Dial(ctx context.Context, a Account) (*imapclient.Client, error) {
	return dial(ctx, a, nil)
}

// dial is Dial with a handler of what the server says unasked (h may be nil; idle.go).
func dial(ctx context.Context, a Account, h *imapclient.UnilateralDataHandler) (*imapclient.Client, error) {
	host, _, err := net.SplitHostPort(a.Server)
	if err != nil {
		return nil, fmt.Errorf("the server %q of account %s is not host:port; fix it with postern account add", a.Server, a.Name)
	}
	switch a.TLS {
	case "", "implicit", "starttls":
	case "none":
		if !isLoopback(host) {
			return nil, fmt.Errorf("account %s: plain IMAP without TLS is only allowed to this computer (loopback); use --tls implicit or starttls", a.Name)
		}
	default:
		return nil, fmt.Errorf("account %s: tls must be implicit, starttls or none, not %q", a.Name, a.TLS)
	}
	tlsConfig := &tls.Config{ServerName: host}
	if a.TLSConfig != nil {
		tlsConfig = a.TLSConfig.Clone()
		if tlsConfig.ServerName == "" {
			tlsConfig.ServerName = host
		}
	}
	if a.CAFile != "" {
		pool, err := config.LoadCA(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("account %s: %v; fix it with postern account set %s --ca-file PATH", a.Name, err, a.Name)
		}
		tlsConfig.RootCAs = pool
	}
	opts := &imapclient.Options{TLSConfig: tlsConfig, UnilateralDataHandler: h}
	conn, err := (&net.Dialer{Timeout: 20 * time.Second}).DialContext(ctx, "tcp", a.Server)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, dialError(a, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var c *imapclient.Client
	switch a.TLS {
	case "", "implicit":
		if tlsConfig.NextProtos == nil {
			tlsConfig.NextProtos = []string{"imap"}
		}
		tc := tls.Client(conn, tlsConfig)
		hctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			conn.Close()
			return nil, dialFailed(ctx, a, err)
		}
		c = imapclient.New(tc, opts)
	case "starttls":
		c, err = imapclient.NewStartTLS(conn, opts)
		if err != nil {
			return nil, dialFailed(ctx, a, err)
		}
	default:
		c = imapclient.New(conn, opts)
	}
	if err := c.WaitGreeting(); err != nil {
		c.Close()
		return nil, dialFailed(ctx, a, err)
	}
	if err := login(ctx, c, a); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// dialFailed is ctx's error when ctx ended (the connection was closed for
// it), else the sentence dialError makes.
func dialFailed(ctx context.Context, a Account, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return dialError(a, err)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func dialError(a Account, err error) error {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var opErr *net.OpError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return fmt.Errorf("the TLS certificate of %s could not be verified (%v); check the server name, or the server's certificate", a.Server, err)
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "first record does not look like a TLS handshake"):
		return fmt.Errorf("TLS with %s failed (%v); check --tls (implicit for port 993, starttls for 143)", a.Server, err)
	case errors.As(err, &opErr):
		return fmt.Errorf("cannot reach %s for account %s (%v); check the address and the network", a.Server, a.Name, opErr.Err)
	}
	return fmt.Errorf("cannot talk to %s for account %s: %v", a.Server, a.Name, err)
}

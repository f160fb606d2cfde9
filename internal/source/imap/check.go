package imap

// account add and account set try an IMAP account before writing it: the
// login and LIST that sync makes, through the same code (Dial). When that
// fails, tlsHint looks at what the server speaks to say which --tls or
// --ca-file to try.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// checkTimeout bounds the whole check: a server that says nothing (STARTTLS
// asked of a port that waits for TLS) is given up on then.
const checkTimeout = 20 * time.Second

// checkAccount logs in to a's IMAP server and lists its folders, and says so.
func checkAccount(ctx context.Context, a config.Account, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	acct, err := FromConfig(a)
	if err != nil {
		return err
	}
	c, err := Dial(ctx, acct)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the server %s did not answer within %v (tls %s)", a.Server, checkTimeout, a.TLS)
		}
		if hint := tlsHint(a); hint != "" {
			return fmt.Errorf("%v; %s", strings.TrimSuffix(err.Error(), "."), hint)
		}
		return err
	}
	defer c.Close()
	list, err := c.List("", "*", nil).Collect()
	if err != nil {
		return fmt.Errorf("logged in to %s, but listing the folders failed (%v)", a.Server, err)
	}
	c.Logout().Wait()
	fmt.Fprintf(stdout, "Checked %s: logged in as %s and listed %d folders.\n", termsafe.Line(a.Server), termsafe.Line(a.User), len(list))
	return nil
}

// probeTimeout bounds each look at the server by tlsHint.
const probeTimeout = 4 * time.Second

// tlsHint looks at what a's server speaks and says which --tls or --ca-file to
// try, or "" when TLS is not what failed.
func tlsHint(a config.Account) string {
	host, port, err := net.SplitHostPort(a.Server)
	if err != nil {
		return ""
	}
	plainGreeting := func() (greeted bool, caps string) {
		conn, err := net.DialTimeout("tcp", a.Server, probeTimeout)
		if err != nil {
			return false, ""
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(probeTimeout))
		r := bufio.NewReader(conn)
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "* OK") && !strings.HasPrefix(line, "* PREAUTH") {
			return false, ""
		}
		fmt.Fprintf(conn, "p1 CAPABILITY\r\n")
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return true, caps
			}
			if strings.HasPrefix(l, "* CAPABILITY") {
				caps = strings.ToUpper(l)
			}
			if strings.HasPrefix(l, "p1 ") {
				return true, caps
			}
		}
	}
	roots := (*x509.CertPool)(nil)
	if a.TLSCA != "" {
		pool, err := config.LoadCA(a.TLSCA)
		if err != nil {
			return "" // Dial said so already
		}
		roots = pool
	}
	certHint := func(err error) string {
		var unknown x509.UnknownAuthorityError
		var name x509.HostnameError
		var invalid x509.CertificateInvalidError
		switch {
		case errors.As(err, &unknown):
			if a.TLSCA != "" {
				return fmt.Sprintf("the server's certificate is not signed by the authority in %s either; give the CA that signed it with --ca-file PATH", a.TLSCA)
			}
			return "the server's certificate is signed by an authority this computer does not trust; if it is your own or your organisation's, give its certificate (PEM) with --ca-file PATH"
		case errors.As(err, &name):
			names := name.Certificate.DNSNames
			for _, ip := range name.Certificate.IPAddresses {
				names = append(names, ip.String())
			}
			return fmt.Sprintf("the server's certificate is for %s, not %s; give one of those names in --imap", strings.Join(names, ", "), host)
		case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
			return "the server's certificate has expired; its administrator must renew it"
		}
		return ""
	}
	handshake := func(conn net.Conn) error {
		tc := tls.Client(conn, &tls.Config{ServerName: host, RootCAs: roots, NextProtos: []string{"imap"}})
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		return tc.HandshakeContext(ctx)
	}
	switch a.TLS {
	case "", "implicit":
		conn, err := net.DialTimeout("tcp", a.Server, probeTimeout)
		if err != nil {
			return ""
		}
		err = handshake(conn)
		conn.Close()
		if err == nil {
			return ""
		}
		if h := certHint(err); h != "" {
			return h
		}
		if greeted, caps := plainGreeting(); greeted {
			if strings.Contains(caps, "STARTTLS") {
				return fmt.Sprintf("port %s speaks plain IMAP first and offers STARTTLS: try --tls starttls", port)
			}
			return fmt.Sprintf("port %s speaks plain IMAP and offers no STARTTLS: try the implicit TLS port (usually %s:993) with --tls implicit", port, host)
		}
	case "starttls", "none":
		greeted, caps := plainGreeting()
		if !greeted {
			// No plain greeting: does the port wait for a TLS handshake?
			conn, err := net.DialTimeout("tcp", a.Server, probeTimeout)
			if err != nil {
				return ""
			}
			err = handshake(conn)
			conn.Close()
			if err == nil || certHint(err) != "" {
				return fmt.Sprintf("port %s expects TLS at once, not plain IMAP: try --tls implicit", port)
			}
			return ""
		}
		if a.TLS == "starttls" {
			if !strings.Contains(caps, "STARTTLS") {
				return fmt.Sprintf("the server does not offer STARTTLS on port %s: try its implicit TLS port (usually %s:993) with --tls implicit", port, host)
			}
			conn, err := net.DialTimeout("tcp", a.Server, probeTimeout)
			if err != nil {
				return ""
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(probeTimeout))
			r := bufio.NewReader(conn)
			if _, err := r.ReadString('\n'); err != nil {
				return ""
			}
			fmt.Fprintf(conn, "p1 STARTTLS\r\n")
			if l, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(l, "p1 OK") {
				return ""
			}
			conn.SetDeadline(time.Time{})
			if err := handshake(conn); err != nil {
				return certHint(err)
			}
		}
	}
	return ""
}

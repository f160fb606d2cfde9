package mcphttp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
)

// What stands between the endpoint and everything else on the machine (a web page the person
// visits can make their browser POST to 127.0.0.1, and a name it controls can resolve there):
// the Origin header, when sent, must be a loopback origin; the Host header must be a loopback
// name unless --listen-any; and every request must carry the bearer token, compared in
// constant time.

func randomID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("postern: no randomness for an id: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// loopbackHost says whether host (no port) is a loopback name.
func loopbackHost(host string) bool {
	switch strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// checkOrigin returns why r is refused for its Origin or Host header, or "".
func checkOrigin(r *http.Request, anyHost bool) string {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Hostname()) || u.Path != "" {
			return "Forbidden: requests from origin " + o + " are refused (only http(s)://localhost, 127.0.0.1 or [::1] may call this server)"
		}
	}
	if !anyHost {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !loopbackHost(host) {
			return "Forbidden: Host " + r.Host + " is not a loopback name; call http://127.0.0.1:PORT" + Path + " (or start postern mcp --http with --listen-any)"
		}
	}
	return ""
}

// checkToken says whether r carries Authorization: Bearer token.
func checkToken(r *http.Request, token string) bool {
	if token == "" {
		return false
	}
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// TokenPath is where the bearer token is kept: $XDG_CONFIG_HOME/postern/http-token.
func TokenPath() string { return filepath.Join(filepath.Dir(config.DefaultPath()), "http-token") }

// Token returns the bearer token, making it at first use (32 random bytes, base64url, in a
// file only the person can read); made says it was made now, so the caller shows it once.
func Token() (token string, made bool, err error) {
	path := TokenPath()
	if b, err := os.ReadFile(path); err == nil {
		t := strings.TrimSpace(string(b))
		if len(t) < 32 {
			return "", false, fmt.Errorf("the HTTP token in %s is too short to be one postern made; delete the file and start postern mcp --http again to make a new one", path)
		}
		return t, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("reading the HTTP token: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", false, fmt.Errorf("making the HTTP token: %w", err)
	}
	t := base64.RawURLEncoding.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("making the folder for the HTTP token: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another postern made it meanwhile: use that one
		return Token()
	}
	if err != nil {
		return "", false, fmt.Errorf("writing the HTTP token: %w", err)
	}
	if _, err := f.WriteString(t + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", false, fmt.Errorf("writing the HTTP token: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", false, fmt.Errorf("writing the HTTP token: %w", err)
	}
	return t, true, nil
}

// CheckAddr refuses an --http address that is not loopback unless listenAny; an address
// with no host is refused too, because it would listen on every interface.
func CheckAddr(addr string, listenAny bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("--http %s is not HOST:PORT; pass 127.0.0.1:PORT (for example 127.0.0.1:8765)", addr)
	}
	if listenAny {
		return nil
	}
	if host == "" || !loopbackIP(host) {
		return fmt.Errorf("--http %s would listen beyond this machine; pass 127.0.0.1:%s, or add --listen-any to serve other machines (the bearer token is still required)", addr, port)
	}
	return nil
}

func loopbackIP(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

package config

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/mail"
	"os"
	"strings"
	"unicode"
)

// Problems lists every problem of the configuration, one sentence each that
// says what to do: the values Load refuses, then what would make a sync, a
// send or a grant fail (an unknown scope, a missing password command, a CA
// file that cannot be read). knownScope says whether a scope exists.
func (c *Config) Problems(knownScope func(string) bool) []string {
	ps := c.hardProblems()
	for _, s := range c.MCP.Scopes {
		if knownScope != nil && !knownScope(s) {
			ps = append(ps, fmt.Sprintf("[mcp] scopes grants %q, which is not a scope; remove it or correct it (postern call docs '{\"page\":\"scopes\"}' lists them)", s))
		}
	}
	for _, a := range c.Accounts {
		ps = append(ps, a.Problems()...)
	}
	_, notes := c.NotesFolders()
	return append(ps, notes...)
}

// Problems lists what would make the account fail, one sentence each: those its kind
// looks for (RegisterKind), then those of every account.
func (a Account) Problems() []string {
	var ps []string
	add := func(format string, args ...any) {
		ps = append(ps, fmt.Sprintf("account %s: ", a.Name)+fmt.Sprintf(format, args...))
	}
	set := "postern account set " + a.Name
	if problems := kinds.problems[a.Kind]; problems != nil {
		for _, p := range problems(a) {
			add("%s", p)
		}
	}
	if a.TLSCA != "" {
		if _, err := LoadCA(a.TLSCA); err != nil {
			add("%v; fix the file or set another with %s --ca-file PATH", err, set)
		}
	}
	if a.Address != "" {
		if _, err := mail.ParseAddress(a.Address); err != nil || strings.ContainsAny(a.Address, "<>, ") {
			add("address %q is not a bare address such as you@example.com; set it with %s --address ADDR", a.Address, set)
		}
	}
	if err := ValidDisplayName(a.DisplayName); err != nil {
		add("%v", err)
	}
	return ps
}

// ValidDisplayName says what is wrong with a display name for the From, or nil.
func ValidDisplayName(name string) error {
	if len(name) > 200 {
		return fmt.Errorf("the display name is %d bytes long; keep it under 200", len(name))
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("the display name %q holds a control character; give the name only, such as \"Sam Rivera\"", name)
		}
	}
	return nil
}

// FirstProgram is the program a simple shell command runs first, or "" when
// the command is not that simple (a variable, a builtin, a pipe at its start).
func FirstProgram(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return ""
	}
	p := f[0]
	if strings.ContainsAny(p, "=$`'\"\\(){};|&<>*?~") {
		return ""
	}
	switch p {
	case "exec", "command", "env", "echo", "printf", "test", "[", "if", "eval", "read", ".", "source":
		return "" // a builtin or a wrapper: what it runs is further on
	}
	return p
}

// Loopback reports whether host is this computer.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoadCA is the system's certificate authorities and those of the PEM file at
// path: what an account with tls_ca trusts.
func LoadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the CA file %s cannot be read (%v)", path, err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the CA file %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return pool, nil
}

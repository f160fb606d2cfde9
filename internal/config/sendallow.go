package config

import (
	"fmt"
	"strings"
)

// Send limits where mail postern sends may go.
type Send struct {
	// Allow, when not empty, is every recipient a send may reach: an address
	// ("bob@example.org"), every address of a domain ("*@example.com") or of a
	// domain and its subdomains ("*@*.example.com" adds them to "*@example.com").
	// Compared without regard to case. mail_send (a draft too) and a mailto
	// unsubscribe refuse any other recipient before their preview.
	Allow []string `toml:"allow,omitempty"`
}

// allowProblems checks the patterns of [send] allow.
func (s Send) allowProblems() []string {
	var ps []string
	for _, p := range s.Allow {
		if err := checkAllowPattern(p); err != nil {
			ps = append(ps, "[send] allow: "+err.Error())
		}
	}
	return ps
}

func checkAllowPattern(p string) error {
	local, domain, ok := strings.Cut(p, "@")
	switch {
	case !ok || local == "" || domain == "" || strings.Contains(domain, "@"):
		return fmt.Errorf("%q is neither an address nor *@domain; write bob@example.org, *@example.com or *@*.example.com", p)
	case strings.ContainsAny(p, " \t\r\n,<>\""):
		return fmt.Errorf("%q holds a space, comma, quote or angle bracket; write one bare address or *@domain per entry", p)
	case strings.Contains(local, "*") && local != "*":
		return fmt.Errorf("%q has * inside the part before @; only a whole * (every address of the domain) is allowed", p)
	case strings.Contains(domain, "*") && !(strings.HasPrefix(domain, "*.") && !strings.Contains(domain[2:], "*")):
		return fmt.Errorf("%q has * inside the domain; only *.example.com (its subdomains) is allowed", p)
	}
	return nil
}

// SendAllowed says whether addr (a bare address) may be sent to: always when
// [send] allow is empty, else when a pattern of it matches.
func (c *Config) SendAllowed(addr string) bool {
	if len(c.Send.Allow) == 0 {
		return true
	}
	a := strings.ToLower(strings.TrimSpace(addr))
	local, domain, ok := strings.Cut(a, "@")
	if !ok || local == "" || domain == "" {
		return false
	}
	for _, p := range c.Send.Allow {
		p = strings.ToLower(strings.TrimSpace(p))
		pl, pd, _ := strings.Cut(p, "@")
		if checkAllowPattern(p) != nil {
			continue
		}
		if pl != "*" && pl != local {
			continue
		}
		if sub, ok := strings.CutPrefix(pd, "*."); ok {
			if strings.HasSuffix(domain, "."+sub) {
				return true
			}
			continue
		}
		if pd == domain {
			return true
		}
	}
	return false
}

// CheckRecipients refuses, naming the first, any recipient [send] allow does not
// let a send reach.
func (c *Config) CheckRecipients(addrs []string) error {
	for _, a := range addrs {
		if !c.SendAllowed(a) {
			return fmt.Errorf("the recipient %s is not among those postern may send to ([send] allow: %s), so nothing was sent or prepared; only the person can add it, in the configuration file", a, strings.Join(c.Send.Allow, ", "))
		}
	}
	return nil
}

package config

import (
	"strings"
	"testing"
)

func TestSendAllowed(t *testing.T) {
	c := &Config{Send: Send{Allow: []string{"bob@example.org", "*@Example.com", "*@*.corp.test"}}}
	for addr, want := range map[string]bool{
		"bob@example.org":     true,
		"BOB@EXAMPLE.ORG":     true,
		"alice@example.org":   false,
		"anyone@example.com":  true,
		"x@sub.example.com":   false, // *@example.com is that domain only
		"x@a.corp.test":       true,
		"x@a.b.corp.test":     true,
		"x@corp.test":         false, // *@*.corp.test is its subdomains only
		"x@evilcorp.test":     false,
		"x@example.com.evil":  false,
		"bob@example.org.":    false,
		"":                    false,
		"no-at-sign":          false,
		"@example.com":        false,
		"bob@example.org\r\n": true, // trimmed, as parsed addresses are
	} {
		if got := c.SendAllowed(addr); got != want {
			t.Errorf("SendAllowed(%q) = %v, want %v", addr, got, want)
		}
	}
	if !(&Config{}).SendAllowed("anyone@anywhere.test") {
		t.Error("with no [send] allow every recipient is allowed")
	}
	if err := c.CheckRecipients([]string{"bob@example.org", "eve@evil.test"}); err == nil || !strings.Contains(err.Error(), "eve@evil.test") {
		t.Errorf("CheckRecipients: %v", err)
	}
}

func TestSendAllowPatternsChecked(t *testing.T) {
	for _, p := range []string{"example.com", "*", "a*@example.com", "*@ex*ample.com", "*@*", "bob@", "@x.test", "a@b@c", "Bob <bob@x.test>", "a@x.test, b@x.test"} {
		if ps := (Send{Allow: []string{p}}).allowProblems(); len(ps) != 1 || !strings.Contains(ps[0], "[send] allow") {
			t.Errorf("pattern %q: %v", p, ps)
		}
	}
	for _, p := range []string{"bob@example.org", "*@example.com", "*@*.example.com"} {
		if ps := (Send{Allow: []string{p}}).allowProblems(); len(ps) != 0 {
			t.Errorf("pattern %q refused: %v", p, ps)
		}
	}
}

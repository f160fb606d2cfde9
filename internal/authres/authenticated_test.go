package authres

import "testing"

// TestAuthenticated: only a trusted server's DMARC pass for the From domain, or its DKIM pass
// of that domain or a parent, vouches for a sender; anything a sender can write does not.
func TestAuthenticated(t *testing.T) {
	trusted := []string{"mx.example.net"}
	for _, c := range []struct {
		name   string
		values []string
		domain string
		want   bool
	}{
		{"dmarc pass", []string{"mx.example.net; dmarc=pass header.from=acme.example"}, "acme.example", true},
		{"dmarc pass without header.from", []string{"mx.example.net; dmarc=pass"}, "acme.example", true},
		{"dmarc pass for another domain", []string{"mx.example.net; dmarc=pass header.from=other.example"}, "acme.example", false},
		{"dmarc fail", []string{"mx.example.net; dmarc=fail header.from=acme.example"}, "acme.example", false},
		{"dmarc fail with a dkim pass", []string{"mx.example.net; dkim=pass header.d=acme.example; dmarc=fail header.from=acme.example"}, "acme.example", false},
		{"aligned dkim pass", []string{"mx.example.net; dkim=pass header.d=acme.example"}, "mail.acme.example", true},
		{"dkim pass of a lookalike", []string{"mx.example.net; dkim=pass header.d=cme.example"}, "acme.example", false},
		{"dkim pass of a subdomain only", []string{"mx.example.net; dkim=pass header.d=mail.acme.example"}, "acme.example", false},
		{"dkim pass of another domain", []string{"mx.example.net; dkim=pass header.d=mailer.example"}, "acme.example", false},
		{"spf pass alone", []string{"mx.example.net; spf=pass smtp.mailfrom=acme.example"}, "acme.example", false},
		{"untrusted server", []string{"evil.example; dmarc=pass header.from=acme.example"}, "acme.example", false},
		{"a sender's own field beside a trusted fail", []string{"acme.example; dmarc=pass", "mx.example.net; dmarc=fail"}, "acme.example", false},
		{"no field", nil, "acme.example", false},
		{"no domain", []string{"mx.example.net; dmarc=pass"}, "", false},
		{"case", []string{"MX.EXAMPLE.NET; DMARC=PASS header.from=ACME.example"}, "Acme.Example", true},
	} {
		if got := Authenticated(c.values, trusted, c.domain); got != c.want {
			t.Errorf("%s: Authenticated = %v, want %v", c.name, got, c.want)
		}
	}
}

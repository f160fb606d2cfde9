package authres

import "testing"

func TestForged(t *testing.T) {
	trusted := []string{"mx.example.net"}
	cases := []struct {
		name   string
		values []string
		want   bool
	}{
		{"dmarc fail", []string{"mx.example.net; dmarc=fail (p=reject) header.from=example.com"}, true},
		{"spf and dkim fail", []string{"mx.example.net; spf=fail smtp.mailfrom=example.com; dkim=fail header.d=example.com"}, true},
		{"dkim fail, dmarc pass", []string{"mx.example.net; dkim=fail header.d=a.example.com; dkim=pass header.d=example.com; dmarc=pass"}, false},
		{"all pass", []string{"mx.example.net; spf=pass; dkim=pass; dmarc=pass"}, false},
		{"fail from an untrusted id", []string{"evil.example.org; dmarc=fail"}, false},
		{"the sender claims a pass, the trusted server says fail", []string{"mx.example.net; dmarc=pass", "mx.example.net (comment; dmarc=pass); dmarc=fail"}, true},
		{"case and comments", []string{"MX.Example.NET (version 1); DMARC=FAIL (p=none)"}, true},
		{"none", nil, false},
		{"garbage", []string{";;;=", "", "mx.example.net"}, false},
	}
	for _, c := range cases {
		if got := Forged(c.values, trusted); got != c.want {
			t.Errorf("%s: Forged = %v, want %v", c.name, got, c.want)
		}
	}
	if Forged([]string{"mx.example.net; dmarc=fail"}, nil) {
		t.Error("no trusted id configured, yet a message was called forged")
	}
}

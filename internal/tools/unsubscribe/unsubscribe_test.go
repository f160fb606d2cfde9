package unsubscribe

import "testing"

// TestReadMailto: a mailto unsubscribe is written to its one address with its subject and
// body (RFC 6068, percent-decoded), else "unsubscribe"; several addresses, none, or a field
// that cannot be sent are refused.
func TestReadMailto(t *testing.T) {
	for _, c := range []struct {
		in, addr, subject, body string
		ok                      bool
	}{
		{"mailto:leave@list.test", "leave@list.test", "unsubscribe", "unsubscribe", true},
		{"mailto:leave@list.test?subject=Remove%20me&body=please", "leave@list.test", "Remove me", "please", true},
		{"MAILTO:%6Ceave@list.test?subject=", "leave@list.test", "unsubscribe", "unsubscribe", true},
		{"mailto:?to=leave@list.test", "leave@list.test", "unsubscribe", "unsubscribe", true},
		{"mailto:a@list.test,b@list.test", "", "", "", false},
		{"mailto:", "", "", "", false},
		{"mailto:leave@list.test?subject=a%0D%0ABcc:%20x@evil.test", "", "", "", false},
	} {
		addr, subject, body, err := readMailto(c.in)
		if (err == nil) != c.ok || addr != c.addr || subject != c.subject || body != c.body {
			t.Errorf("readMailto(%q) = %q %q %q %v", c.in, addr, subject, body, err)
		}
	}
}

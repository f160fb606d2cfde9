package authres

import (
	"strings"
	"testing"
	"time"
)

// forgedCases are Authentication-Results values as receiving servers write them (and as
// senders try to bend them), each read with mx.example.net as the only trusted authserv-id.
var forgedCases = []struct {
	name   string
	values []string
	want   bool
}{
	// The contract.
	{"dmarc fail", []string{"mx.example.net; dmarc=fail (p=reject) header.from=example.com"}, true},
	{"spf and dkim fail", []string{"mx.example.net; spf=fail smtp.mailfrom=example.com; dkim=fail header.d=example.com"}, true},
	{"spf fail alone", []string{"mx.example.net; spf=fail smtp.mailfrom=example.com"}, true},
	{"spf fail, dmarc pass", []string{"mx.example.net; spf=fail smtp.mailfrom=example.com; dkim=pass header.d=example.com; dmarc=pass"}, false},
	{"dmarc fail outweighs an spf pass", []string{"mx.example.net; spf=pass smtp.mailfrom=example.com; dmarc=fail"}, true},
	{"all pass", []string{"mx.example.net; spf=pass; dkim=pass; dmarc=pass"}, false},
	{"softfail is not fail", []string{"mx.example.net; spf=softfail smtp.mailfrom=example.com"}, false},
	{"hardfail is the old name of fail", []string{"mx.example.net; spf=hardfail smtp.mailfrom=example.com"}, true},
	{"dmarc none does not rescue an spf fail", []string{"mx.example.net; dmarc=none; spf=fail"}, true},
	{"no values", nil, false},

	// Comments everywhere.
	{"case and comments", []string{"MX.Example.NET (version 1); DMARC=FAIL (p=none)"}, true},
	{"comment before the authserv-id", []string{"(received by) mx.example.net; dmarc=fail"}, true},
	{"comments around = and the result", []string{"mx.example.net; dmarc(c1)=(c2)fail(c3)"}, true},
	{"a claimed pass inside a comment", []string{"mx.example.net (comment; dmarc=pass); dmarc=fail"}, true},
	{"nested comment holding a fail", []string{"mx.example.net; dmarc=pass (a (nested; dmarc=fail) b)"}, false},
	{"nested comment holding a pass", []string{"mx.example.net (x (y) z; dmarc=pass); dmarc=fail"}, true},
	{"escaped parenthesis in a comment", []string{`mx.example.net; spf=fail (a \) ; dmarc=pass) smtp.mailfrom=example.com`}, true},
	{"unterminated comment is read as text", []string{"mx.example.net; spf=pass smtp.mailfrom=a(b@example.org; dmarc=fail"}, true},

	// Quoted strings.
	{"( inside a quoted local part", []string{`mx.example.net; spf=pass smtp.mailfrom="a(b"@example.com; dmarc=fail header.from=example.com`}, true},
	{") inside a quoted local part", []string{`mx.example.net; spf=fail smtp.mailfrom="a)b"@example.com; dkim=none`}, true},
	{"; inside a quoted local part", []string{`mx.example.net; spf=fail smtp.mailfrom="x; dmarc=pass x"@example.org; dkim=none`}, true},
	{"escaped quote inside a quoted string", []string{`mx.example.net; spf=fail smtp.mailfrom="a\"; dmarc=pass x"@example.org`}, true},
	{"quoted reason with a ; and a (", []string{`mx.example.net; dmarc=fail reason="policy; p=reject (x" header.from=example.com`}, true},
	{"quoted authserv-id", []string{`"mx.example.net"; dmarc=fail`}, true},
	{"unterminated quote is read as text", []string{`mx.example.net; spf=pass smtp.mailfrom="abc@example.org; dmarc=fail`}, true},

	// CFWS around =, ; and .
	{"spaces around =", []string{"mx.example.net; spf = fail smtp.mailfrom=example.com"}, true},
	{"tabs around = everywhere", []string{"mx.example.net; spf\t=\tfail reason = \"x\" smtp . mailfrom = a@example.com; dmarc = pass"}, false},
	{"no space after the authserv-id", []string{"mx.example.net;dmarc=fail"}, true},
	{"space before ;", []string{"mx.example.net ;dmarc=fail"}, true},
	{"comments around ;", []string{"mx.example.net(c) ; (c) dmarc=fail (c) ; spf=pass"}, true},
	{"empty resinfo", []string{"mx.example.net; ; dmarc=fail;"}, true},

	// Folded lines.
	{"folded", []string{"mx.example.net;\r\n\tspf=fail\r\n smtp.mailfrom=example.com;\r\n dkim=none"}, true},
	{"folded inside a comment", []string{"mx.example.net; dmarc=pass (a comment\r\n\t; dmarc=fail\r\n still the comment)"}, false},
	{"folded around =", []string{"mx.example.net; dmarc\r\n =\r\n fail"}, true},

	// Several results for one method.
	{"dkim fail then pass: pass wins", []string{"mx.example.net; dkim=fail header.d=a.example.com; dkim=pass header.d=example.com"}, false},
	{"dkim pass then fail: pass wins", []string{"mx.example.net; dkim=pass header.d=example.com; dkim=fail header.d=a.example.com"}, false},
	{"dkim fail twice", []string{"mx.example.net; dkim=fail header.d=a.example.com; dkim=fail header.d=b.example.com"}, true},
	{"dkim fail, dmarc pass", []string{"mx.example.net; dkim=fail header.d=a.example.com; dkim=pass header.d=example.com; dmarc=pass"}, false},
	{"the first dmarc result counts", []string{"mx.example.net; dmarc=fail; dmarc=pass"}, true},

	// Versions.
	{"version 1", []string{"mx.example.net 1; dmarc=fail"}, true},
	{"version 1 and a comment", []string{"mx.example.net 1 (comment); dmarc=fail"}, true},
	{"comment then version", []string{"mx.example.net (c) 1; dmarc=fail"}, true},
	{"unknown version: the field is ignored", []string{"mx.example.net 2; dmarc=fail"}, false},
	{"method version", []string{"mx.example.net; dkim/1=fail; spf=none"}, true},
	{"method version with CFWS", []string{"mx.example.net; dkim (c) / 1 = fail"}, true},

	// none and unknown methods.
	{"none", []string{"mx.example.net; none"}, false},
	{"version and none", []string{"mx.example.net 1; none"}, false},
	{"none with comments", []string{"mx.example.net (c); (c) none (c)"}, false},
	{"unknown methods", []string{"mx.example.net; x-custom=fail; auth=pass smtp.auth=sam@example.com; iprev=fail policy.iprev=192.0.2.1"}, false},
	{"unknown method with a version, then dmarc", []string{"mx.example.net; x-foo/2=pass; dmarc=fail"}, true},
	{"arc with a bad property", []string{"mx.example.net; arc=pass header.oldest-pass=zero; dmarc=fail"}, true},

	// Whose results count.
	{"fail from an untrusted id", []string{"evil.example.org; dmarc=fail"}, false},
	{"the sender claims a pass, the trusted server says fail", []string{"mx.example.net; dmarc=pass", "mx.example.net (comment; dmarc=pass); dmarc=fail"}, true},
	{"untrusted pass, trusted fail", []string{"evil.example.org; spf=pass; dkim=pass; dmarc=pass", "mx.example.net; dmarc=fail"}, true},
	{"untrusted fail, trusted pass", []string{"evil.example.org; dmarc=fail", "mx.example.net; spf=pass; dkim=pass; dmarc=pass"}, false},
	{"trusted only case-insensitively", []string{"MX.EXAMPLE.NET; dmarc=fail"}, true},
	{"a longer name is another id", []string{"mx.example.net.example.org; dmarc=fail"}, false},
	{"a prefix is another id", []string{"mx.example.ne; dmarc=fail"}, false},
	{"an id glued to more is another id", []string{"mx.example.net:25; dmarc=fail", `"mx.example.net"x; dmarc=fail`}, false},
	{"the results of one field are not mixed with another's", []string{"mx.example.net; spf=fail", "mx.example.net; dmarc=pass"}, true},

	// Garbage.
	{"garbage", []string{";;;=", "", "mx.example.net", "=", "(", "\"", "mx.example.net; =fail", "mx.example.net; dmarc=", "mx.example.net; dmarc fail"}, false},
	{"garbage then a fail", []string{"mx.example.net; ===; dmarc=fail"}, true},
}

func TestForged(t *testing.T) {
	for _, c := range forgedCases {
		if got := Forged(c.values, []string{"mx.example.net"}); got != c.want {
			t.Errorf("%s: Forged(%q) = %v, want %v", c.name, c.values, got, c.want)
		}
	}
}

func TestForgedTrustedList(t *testing.T) {
	fail := []string{"mx.example.net; dmarc=fail"}
	if Forged(fail, nil) {
		t.Error("no trusted id configured, yet a message was called forged")
	}
	if !Forged(fail, []string{"other.example.org", " MX.Example.Net "}) {
		t.Error("a trusted id written with spaces and capitals was not matched")
	}
	if Forged(fail, []string{""}) {
		t.Error("an empty trusted id matched")
	}
}

// TestForgedLinear: hostile fields of 256 KiB (the most a header value keeps) are read in
// linear time.
func TestForgedLinear(t *testing.T) {
	const n = 256 << 10
	start := time.Now()
	for _, v := range []string{
		strings.Repeat("(", n),
		strings.Repeat("\"", n),
		"mx.example.net; " + strings.Repeat("(", n/2) + strings.Repeat(")", n/2),
		"mx.example.net; " + strings.Repeat("( ) ", n/4),
		"mx.example.net; " + strings.Repeat("a=b ", n/4),
		"mx.example.net; " + strings.Repeat("dkim=fail; ", n/11) + "dmarc=pass",
		"mx.example.net; spf=fail " + strings.Repeat(`\`, n),
	} {
		Forged([]string{v}, []string{"mx.example.net"})
	}
	if d := time.Since(start); d > 5*time.Second { // about 0.1 s; a quadratic reading takes minutes
		t.Errorf("reading 7 hostile fields took %v", d)
	}
}

func FuzzForged(f *testing.F) {
	for _, c := range forgedCases {
		f.Add(strings.Join(c.values, "\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		values := strings.Split(s, "\n")
		trusted := []string{"mx.example.net"}
		got := Forged(values, trusted)
		if Forged(values, nil) {
			t.Fatal("forged with no trusted id")
		}
		if Forged(append([]string{"evil.example.org; " + s}, values...), trusted) != got {
			t.Fatal("an untrusted field changed the verdict")
		}
		if !got && Forged(append(values, "mx.example.net; dmarc=fail"), trusted) != true {
			t.Fatal("a trusted dmarc fail next to this input was missed")
		}
	})
}

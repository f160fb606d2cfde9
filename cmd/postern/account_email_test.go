package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/discover"
)

// emailRun runs account add … --email in a throwaway HOME with env added, and returns what it
// printed, its exit status and the configuration file afterwards.
func emailRun(t *testing.T, env []string, args ...string) (out, errOut string, code int, cfg string) {
	t.Helper()
	e := append(home(t), env...)
	path := filepath.Join(t.TempDir(), "config.toml")
	out, errOut, code = runCLI(t, e, append(append([]string{"account", "add"}, args...), "--config", path)...)
	b, _ := os.ReadFile(path)
	return out, errOut, code, string(b)
}

// notFound is an autoconfig server on 127.0.0.1 that has no document, so that a test never
// asks the real autoconfig hosts.
func notFound(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return discover.AutoconfigURLEnv + "=" + srv.URL + "/mail/config-v1.1.xml?emailaddress={email}"
}

func TestAccountAddEmailFromTable(t *testing.T) {
	var gmail *generated.ProviderSpec
	for i := range generated.Providers {
		if generated.Providers[i].ID == "gmail" {
			gmail = &generated.Providers[i]
		}
	}
	if gmail == nil {
		t.Fatal("no gmail row in the providers table")
	}
	out, errOut, code, cfg := emailRun(t, nil, "personal", "--email", "someone@gmail.com", "--password-cmd", "pass show gmail", "--no-check", "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"providers table (Gmail)", "IMAP  imap.gmail.com:993, tls implicit, user someone@gmail.com", "SMTP  smtp.gmail.com:465, tls implicit", "OAuth2 or an app password", gmail.AppPassword, "Added account personal"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{`server = "imap.gmail.com:993"`, `tls = "implicit"`, `user = "someone@gmail.com"`, `address = "someone@gmail.com"`, `smtp = "smtp.gmail.com:465"`, `smtp_tls = "implicit"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration lacks %s:\n%s", want, cfg)
		}
	}

	// Explicit flags win over the table, and each line says where it came from.
	out, errOut, code, cfg = emailRun(t, nil, "icloud", "--email", "sam@icloud.com", "--password-cmd", "c", "--smtp", "smtp.example.com:587", "--user", "sam@icloud.com", "--no-check", "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(cfg, `server = "imap.mail.me.com:993"`) || !strings.Contains(cfg, `smtp = "smtp.example.com:587"`) || !strings.Contains(cfg, `user = "sam@icloud.com"`) || strings.Contains(cfg, "smtp.mail.me.com") {
		t.Errorf("flags did not win:\n%s", cfg)
	}
	if !strings.Contains(out, "(your --smtp)") || !strings.Contains(out, "(your --user)") {
		t.Errorf("the lines do not say the flags' values are the person's:\n%s", out)
	}
	// iCloud's IMAP takes the part before the @, its SMTP the whole address.
	_, _, code, cfg = emailRun(t, nil, "icloud", "--email", "sam@icloud.com", "--password-cmd", "c", "--no-check", "--yes")
	if code != 0 || !strings.Contains(cfg, `user = "sam"`) || !strings.Contains(cfg, `smtp_user = "sam@icloud.com"`) {
		t.Errorf("icloud user names (exit %d):\n%s", code, cfg)
	}

	// Without --yes and without a terminal, nothing is saved.
	out, errOut, code, cfg = emailRun(t, nil, "personal", "--email", "someone@gmail.com", "--password-cmd", "c", "--no-check")
	if code != 1 || cfg != "" || !strings.Contains(errOut, "--yes") || !strings.Contains(out, "imap.gmail.com") {
		t.Errorf("saved without a yes: exit %d, %q, %q, config %q", code, out, errOut, cfg)
	}
	// --provider names a row whatever the domain; a typo names the nearest.
	_, _, code, cfg = emailRun(t, nil, "work", "--email", "sam@corp.example", "--provider", "microsoft365", "--password-cmd", "c", "--no-check", "--yes")
	if code != 0 || !strings.Contains(cfg, `smtp = "smtp.office365.com:587"`) {
		t.Errorf("--provider microsoft365 (exit %d):\n%s", code, cfg)
	}
	_, errOut, code, _ = emailRun(t, nil, "work", "--email", "sam@corp.example", "--provider", "microsoft356", "--password-cmd", "c", "--yes")
	if code != 2 || !strings.Contains(errOut, "did you mean microsoft365") {
		t.Errorf("--provider typo: exit %d, %q", code, errOut)
	}
	for _, bad := range [][]string{
		{"x", "--email", "Sam <sam@gmail.com>", "--password-cmd", "c", "--yes"},
		{"x", "--email", "sam@gmail.com", "--maildir", t.TempDir(), "--yes"},
		{"x", "--imap", "imap.example.com:993", "--user", "u", "--password-cmd", "c", "--yes"},
	} {
		if _, errOut, code, cfg := emailRun(t, nil, bad...); code == 0 || cfg != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q, config %q", bad, code, errOut, cfg)
		}
	}
}

func TestAccountAddEmailFromAutoconfig(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.RequestURI())
		if r.URL.Path != "/.well-known/autoconfig/mail/config-v1.1.xml" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `<?xml version="1.0"?>
<clientConfig version="1.1"><emailProvider id="example.org">
  <incomingServer type="imap"><hostname>mail.%EMAILDOMAIN%</hostname><port>143</port>
    <socketType>STARTTLS</socketType><username>%EMAILLOCALPART%</username>
    <authentication>password-cleartext</authentication></incomingServer>
  <outgoingServer type="smtp"><hostname>mail.example.org</hostname><port>465</port>
    <socketType>SSL</socketType><username>%EMAILADDRESS%</username></outgoingServer>
</emailProvider></clientConfig>`)
	}))
	defer srv.Close()
	// The two documents Thunderbird looks at, in its order, both on the test's server.
	hook := discover.AutoconfigURLEnv + "=" + srv.URL + "/mail/config-v1.1.xml?emailaddress={email} " + srv.URL + "/.well-known/autoconfig/mail/config-v1.1.xml"
	out, errOut, code, cfg := emailRun(t, []string{hook}, "work", "--email", "sam@example.org", "--password-cmd", "pass show work", "--no-check", "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(asked) != 2 || asked[0] != "/mail/config-v1.1.xml?emailaddress=sam%40example.org" {
		t.Errorf("asked %q", asked)
	}
	if !strings.Contains(out, "autoconfig document "+srv.URL+"/.well-known/autoconfig/mail/config-v1.1.xml") || !strings.Contains(out, "Sign-in: your password") {
		t.Errorf("the source is not named:\n%s", out)
	}
	for _, want := range []string{`server = "mail.example.org:143"`, `tls = "starttls"`, `user = "sam"`, `smtp = "mail.example.org:465"`, `smtp_tls = "implicit"`, `smtp_user = "sam@example.org"`, `address = "sam@example.org"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration lacks %s:\n%s", want, cfg)
		}
	}
	if strings.Contains(strings.Join(asked, " "), "pass") {
		t.Error("the password command reached the autoconfig server")
	}
	// The hook cannot point anywhere but this computer.
	_, errOut, code, _ = emailRun(t, []string{discover.AutoconfigURLEnv + "=http://autoconfig.example.org/x"}, "work", "--email", "sam@example.org", "--password-cmd", "c", "--yes")
	if code == 0 || !strings.Contains(errOut, "for tests") {
		t.Errorf("a remote hook was taken: exit %d, %q", code, errOut)
	}
}

// dnsmasq starts a DNS server on 127.0.0.1 serving the given --srv-host records for
// example.test (and nothing else there), and returns its address.
func dnsmasq(t *testing.T, records ...string) string {
	t.Helper()
	bin, err := exec.LookPath("dnsmasq")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/dnsmasq"); serr == nil {
			bin, err = "/usr/sbin/dnsmasq", nil
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("dnsmasq is not installed, and CI must run the SRV tests: apt-get install dnsmasq-base (.ci/run does)")
		}
		t.Skip("dnsmasq is not installed (apt-get install dnsmasq-base); the SRV discovery tests are skipped")
	}
	for try := 0; try < 3; try++ {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := pc.LocalAddr().String()
		pc.Close()
		_, port, _ := net.SplitHostPort(addr)
		args := []string{"--no-daemon", "--port=" + port, "--listen-address=127.0.0.1", "--bind-interfaces",
			"--no-resolv", "--no-hosts", "--conf-file=/dev/null", "--pid-file", "--local=/example.test/"}
		for _, r := range records {
			args = append(args, "--srv-host="+r)
		}
		cmd := exec.Command(bin, args...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-done
		})
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			select {
			case <-done:
				deadline = time.Time{} // it exited: the port was taken, try another
				continue
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err := r.LookupHost(ctx, "ready.example.test")
			cancel()
			if err != nil && strings.Contains(err.Error(), "no such host") {
				return addr // it answers
			}
		}
		t.Logf("dnsmasq on %s did not answer (try %d): %s", addr, try+1, log.String())
	}
	t.Fatal("dnsmasq did not start")
	return ""
}

func TestAccountAddEmailFromSRV(t *testing.T) {
	dns := dnsmasq(t,
		"_imaps._tcp.example.test,imap.example.test,993",
		// Both IMAP records: implicit TLS is preferred (RFC 8314).
		"_imap._tcp.example.test,plain.example.test,143",
		// No _submissions record: the STARTTLS one is the fallback.
		"_submission._tcp.example.test,smtp.example.test,587",
	)
	env := []string{notFound(t), discover.DNSServerEnv + "=" + dns}
	out, errOut, code, cfg := emailRun(t, env, "srv", "--email", "sam@example.test", "--password-cmd", "c", "--no-check", "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "SRV records of example.test") {
		t.Errorf("the source is not named:\n%s", out)
	}
	for _, want := range []string{`server = "imap.example.test:993"`, `tls = "implicit"`, `user = "sam@example.test"`, `smtp = "smtp.example.test:587"`, `smtp_tls = "starttls"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration lacks %s:\n%s", want, cfg)
		}
	}

	// A domain that none of the three knows is told what was tried and which flags to pass,
	// and nothing is written.
	_, errOut, code, cfg = emailRun(t, env, "none", "--email", "sam@none.example.test", "--password-cmd", "c", "--no-check", "--yes")
	if code != 1 || cfg != "" {
		t.Fatalf("exit %d, config %q, %s", code, cfg, errOut)
	}
	for _, want := range []string{"no IMAP server found for none.example.test", "providers table", "autoconfig document", "_imaps._tcp.none.example.test", "_imap._tcp.none.example.test", "--imap HOST:PORT", "--tls implicit|starttls", "--smtp HOST:PORT", "--smtp-tls"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the error lacks %q: %s", want, errOut)
		}
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("the error is not one line: %q", errOut)
	}
	// With --imap given, the same domain needs nothing found: the flags are enough.
	_, errOut, code, cfg = emailRun(t, env, "none", "--email", "sam@none.example.test", "--imap", "mail.none.example.test:993", "--password-cmd", "c", "--no-check", "--yes")
	if code != 0 || !strings.Contains(cfg, `user = "sam@none.example.test"`) {
		t.Errorf("--imap with --email: exit %d, %s\n%s", code, errOut, cfg)
	}
}

// At a terminal the person is asked, and only a yes saves.
func TestAccountAddEmailAsks(t *testing.T) {
	env := home(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	args := []string{"account", "add", "personal", "--email", "someone@fastmail.com", "--password-cmd", "c", "--no-check", "--config", cfg}
	out, errOut, code := runTerminal(t, env, "n\n", args...)
	if _, err := os.Stat(cfg); code != 1 || !strings.Contains(out, "[y/N]") || !strings.Contains(out, "Nothing was added") || err == nil {
		t.Fatalf("no: exit %d, %q %q, config written: %v", code, out, errOut, err == nil)
	}
	out, errOut, code = runTerminal(t, env, "y\n", args...)
	b, _ := os.ReadFile(cfg)
	if code != 0 || !strings.Contains(out, "Added account personal") || !strings.Contains(string(b), `server = "imap.fastmail.com:993"`) {
		t.Fatalf("yes: exit %d, %q %q\n%s", code, out, errOut, b)
	}
}

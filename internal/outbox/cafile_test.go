package outbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/testing/smtptest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

// TestSendTrustsCAFile: an account's tls_ca (CAFile) is what makes the test
// server's certificate trusted, on both STARTTLS and implicit TLS; a CA file
// that cannot be read stops the send before anything is written.
func TestSendTrustsCAFile(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	for _, mode := range []string{"starttls", "implicit"} {
		a := mailpitAccount(t, srv, mode)
		a.TLSConfig = nil // only the CA file can make the certificate trusted
		a.CAFile = filepath.Join(srv.Dir, "tls", "cert.pem")
		to := smtptest.Addr("gina")
		if err := Send(context.Background(), a, smtptest.Addr("alice"), []string{to}, testmsg.Plain("a@example.test", to, "", "ca file "+mode, smtptest.Addr("id"))); err != nil {
			t.Fatalf("%s with CAFile: %v", mode, err)
		}
		if got := srv.Messages(t, to); len(got) != 1 {
			t.Fatalf("%s: %d messages arrived, want 1", mode, len(got))
		}
		bad := filepath.Join(t.TempDir(), "ca.pem")
		os.WriteFile(bad, []byte("not a certificate"), 0o600)
		a.CAFile = bad
		err := Send(context.Background(), a, smtptest.Addr("alice"), []string{to}, testmsg.Plain("a@example.test", to, "", "bad ca", smtptest.Addr("id2")))
		if err == nil || !strings.Contains(err.Error(), "no PEM certificate") || !strings.Contains(err.Error(), "nothing was sent") {
			t.Fatalf("%s with an unusable CA file: %v", mode, err)
		}
	}
}

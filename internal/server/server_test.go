package server

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/tools"
)

// home gives the test its own HOME and XDG folders and a configuration with one Maildir
// account, and returns the configuration's path.
func home(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(h, strings.ToLower(v)))
	}
	md := filepath.Join(h, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o700)
	}
	cfg := filepath.Join(h, "config.toml")
	if err := config.AddAccount(cfg, config.Account{Name: "archive", Kind: "maildir", Path: md}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func wire(t *testing.T, cfg string, o Options) (*tools.Service, error) {
	t.Helper()
	w := config.NewWatcher(cfg)
	svc := &tools.Service{Version: "test", Config: w, Only: o.Accounts, StorePath: filepath.Join(t.TempDir(), "store.db")}
	o.Queue = &approval.Queue{Dir: t.TempDir()}
	o.NoSuchAccount = func(name string, _ *config.Config) error { return os.ErrNotExist }
	reg, grant, err := Wire(svc, w, o)
	if err == nil {
		t.Cleanup(reg.Close)
		if svc.Sync == nil || len(reg.Allowed(grant())) == 0 {
			t.Fatalf("wired without a sync (%v) or with no tool allowed", svc.Sync == nil)
		}
	}
	return svc, err
}

func TestWire(t *testing.T) {
	cfg := home(t)
	var stderr bytes.Buffer
	if _, err := wire(t, cfg, Options{Scopes: "read", Accounts: []string{"archive"}, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	_, err := wire(t, cfg, Options{Accounts: []string{"archive", "work"}, Stderr: &stderr})
	if err == nil || !strings.Contains(err.Error(), "--account work") {
		t.Fatalf("an --account not configured: %v", err)
	}
	if _, err := wire(t, cfg, Options{Scopes: "read,nonsense", Stderr: &stderr}); err == nil || !strings.HasPrefix(err.Error(), "--scopes") {
		t.Fatalf("an unknown scope: %v", err)
	}
	cfgBad := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfgBad, []byte("[[accounts]\n"), 0o600)
	stderr.Reset()
	if _, err := wire(t, cfgBad, Options{Scopes: "read", Stderr: &stderr}); err != nil || !strings.HasPrefix(stderr.String(), "postern: ") {
		t.Fatalf("a broken configuration: %v, said %q; want a warning and a server", err, stderr.String())
	}
}

func TestServeHTTP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := 0
	done := make(chan error, 1)
	go func() {
		done <- ServeHTTP(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }), func() { closed++ })
	}()
	var resp *http.Response
	for range 50 {
		if resp, err = http.Get("http://" + l.Addr().String()); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	select {
	case err := <-done:
		if err != nil || closed != 1 {
			t.Fatalf("after SIGHUP: %v, handler closed %d times", err, closed)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still serving 10 s after SIGHUP")
	}
	if _, err := http.Get("http://" + l.Addr().String()); err == nil {
		t.Fatal("still answering after the shutdown")
	}
	// A listener that fails is an error, after the handler is closed.
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	l2.Close()
	if err := ServeHTTP(l2, http.NotFoundHandler(), func() { closed++ }); err == nil || closed != 2 {
		t.Fatalf("a closed listener: %v, handler closed %d times", err, closed)
	}
}

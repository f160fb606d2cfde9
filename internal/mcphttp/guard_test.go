package mcphttp

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8765": true, "localhost:0": true, "[::1]:8765": true, "127.0.0.2:1": true,
		"0.0.0.0:8765": false, ":8765": false, "[::]:8765": false, "192.168.1.5:80": false, "example.com:80": false,
		"127.0.0.1": false, "nonsense": false,
	} {
		err := CheckAddr(addr, false)
		if (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v, want ok=%v", addr, err, ok)
		}
		if err != nil && strings.Count(err.Error(), ". ") > 0 {
			t.Errorf("CheckAddr(%q): more than one sentence: %v", addr, err)
		}
	}
	if err := CheckAddr("0.0.0.0:8765", true); err != nil {
		t.Errorf("--listen-any refused 0.0.0.0: %v", err)
	}
}

func TestCheckOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		anyHost, ok  bool
	}{
		{"", "127.0.0.1:1", false, true},
		{"http://localhost:3000", "127.0.0.1:1", false, true},
		{"https://127.0.0.1", "localhost:1", false, true},
		{"http://[::1]:9", "[::1]:1", false, true},
		{"http://evil.example", "127.0.0.1:1", false, false},
		{"http://localhost.evil.example", "127.0.0.1:1", false, false},
		{"file://localhost", "127.0.0.1:1", false, false},
		{"null", "127.0.0.1:1", false, false},
		{"", "evil.example:1", false, false},
		{"", "evil.example:1", true, true},
		{"http://evil.example", "evil.example:1", true, false},
	} {
		r := httptest.NewRequest("POST", "http://"+tc.host+Path, nil)
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := checkOrigin(r, tc.anyHost) == ""; got != tc.ok {
			t.Errorf("origin %q host %q anyHost %v: ok=%v, want %v", tc.origin, tc.host, tc.anyHost, got, tc.ok)
		}
	}
}

func TestCheckToken(t *testing.T) {
	r := httptest.NewRequest("POST", "http://127.0.0.1"+Path, nil)
	if checkToken(r, "secret-token") {
		t.Error("no header accepted")
	}
	r.Header.Set("Authorization", "Bearer secret-tokeN")
	if checkToken(r, "secret-token") {
		t.Error("wrong token accepted")
	}
	r.Header.Set("Authorization", "bearer secret-token")
	if !checkToken(r, "secret-token") {
		t.Error("the right token refused")
	}
	if checkToken(r, "") {
		t.Error("an empty configured token accepts")
	}
}

func TestTokenMadeOnce(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "cfg"))
	tok, made, err := Token()
	if err != nil || !made || len(tok) != 43 {
		t.Fatalf("Token() = %q, %v, %v; want a new 43-character token", tok, made, err)
	}
	fi, err := os.Stat(TokenPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v), want 0600", fi.Mode(), err)
	}
	again, made, err := Token()
	if err != nil || made || again != tok {
		t.Fatalf("second Token() = %q, made %v, %v; want the same, not made", again, made, err)
	}
	os.WriteFile(TokenPath(), []byte("short\n"), 0o600)
	if _, _, err := Token(); err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Fatalf("a short token file: %v", err)
	}
}

package attachments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/pathsafe"
)

// TestCleanFileName: every hostile name a sender may write becomes a plain name that pathsafe
// accepts, at most 255 bytes, keeping what can be kept.
func TestCleanFileName(t *testing.T) {
	long := strings.Repeat("é", 150) + ".pdf" // 304 bytes
	cases := []struct{ sent, ctype, want string }{
		{"report.pdf", "application/pdf", "report.pdf"},
		{"../x", "text/plain", "_x"},
		{"/etc/passwd", "text/plain", "_etc_passwd"},
		{"a/../../b", "text/plain", "a_.._.._b"},
		{`..\..\windows\win.ini`, "text/plain", "_.._windows_win.ini"},
		{"CON", "text/plain", "_CON"},
		{"nul.txt", "text/plain", "_nul.txt"},
		{"COM1.pdf", "application/pdf", "_COM1.pdf"},
		{"evil\x00.exe.pdf", "application/pdf", "evil.exe.pdf"},
		{"line\r\nbreak.txt", "text/plain", "line break.txt"},
		{"invoice\u202Efdp.exe", "application/pdf", "invoicefdp.exe"},
		{"zero\u200Bwidth.txt", "text/plain", "zerowidth.txt"},
		{".bashrc", "text/plain", "bashrc"},
		{"trailing. ", "text/plain", "trailing"},
		{"C:evil.txt", "text/plain", "C_evil.txt"},
		{"%2e%2e", "text/plain", "_2e_2e"},
		{"100%.pdf", "application/pdf", "100%.pdf"},
		{"full\uFF0Fwidth\uFF0E\uFF0E", "text/plain", "full_width__"},
		{"", "application/pdf", "attachment-3.pdf"},
		{"...", "image/png", "attachment-3.png"},
		{" . ", "application/x-unknown", "attachment-3"},
		{"\x00\r\n", "text/calendar", "attachment-3.ics"},
		{"Re: lunch", "message/rfc822", "Re_ lunch.eml"},
		{"a\tb   c.txt", "text/plain", "a b c.txt"},
		{"bad\xffutf8.txt", "text/plain", "badutf8.txt"},
		{long, "application/pdf", ""}, // checked below: cut, keeping .pdf
	}
	for _, c := range cases {
		got := cleanFileName(c.sent, c.ctype, 3, pathsafe.MaxName)
		if c.sent == long {
			if len(got) > pathsafe.MaxName || !strings.HasSuffix(got, ".pdf") || !utf8.ValidString(got) || !strings.HasPrefix(got, "éé") {
				t.Errorf("300-byte name: %q (%d bytes)", got, len(got))
			}
		} else if got != c.want {
			t.Errorf("cleanFileName(%q) = %q, want %q", c.sent, got, c.want)
		}
		// Whatever it gives, pathsafe takes it, as a file of its own: no folder, no climb.
		if _, err := pathsafe.Join(t.TempDir(), got); err != nil || strings.ContainsAny(got, `/\`) {
			t.Errorf("cleanFileName(%q) = %q, which pathsafe refuses: %v", c.sent, got, err)
		}
	}
	// A tighter limit (a long dir) still keeps the extension.
	if got := cleanFileName(strings.Repeat("x", 100)+".tar.gz", "application/gzip", 1, 40); len(got) > 40 || !strings.HasSuffix(got, ".gz") {
		t.Errorf("limit 40: %q", got)
	}
}

// TestSaveSubdir: dir must be an existing, visible folder below the save folder, reached without
// a link.
func TestSaveSubdir(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(root, "invoices", "2025"), 0o700)
	os.MkdirAll(filepath.Join(root, ".hidden"), 0o700)
	os.WriteFile(filepath.Join(root, "file.txt"), nil, 0o600)
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"": "", "invoices": "invoices", "invoices/2025": "invoices/2025", `invoices\2025`: "invoices/2025"} {
		if got, err := saveSubdir(root, dir); err != nil || got != want {
			t.Errorf("saveSubdir(%q) = %q, %v; want %q", dir, got, err, want)
		}
	}
	for _, dir := range []string{"..", "../x", "/etc", "invoices/../..", "link", "link/sub", ".hidden", "invoices/.git", "missing", "file.txt", "CON", "a//b", strings.Repeat("d", 300)} {
		if got, err := saveSubdir(root, dir); err == nil {
			t.Errorf("saveSubdir(%q) accepted: %q", dir, got)
		} else if strings.Contains(err.Error(), "pathsafe:") {
			t.Errorf("saveSubdir(%q): the error shows its package: %v", dir, err)
		}
	}
}

package kinds

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// TestUnknownKindNamesTheKnownOnes: a kind without a row is refused with one sentence that
// names the account, its kind and every kind the table has.
func TestUnknownKindNamesTheKnownOnes(t *testing.T) {
	_, err := Open(config.Account{Name: "work", Kind: "caldav"})
	if err == nil {
		t.Fatal("Open of kind caldav succeeded; the table has no such row")
	}
	want := `account work has kind "caldav", which postern cannot sync; the kinds it knows are imap and maildir`
	if err.Error() != want {
		t.Errorf("error:\n  %s\nwant\n  %s", err, want)
	}
}

// TestRows: each row opens a source of its kind; only imap reaches a server that postern may
// write to (drafts, a sent copy).
func TestRows(t *testing.T) {
	if got := strings.Join(Names(), " "); got != "imap maildir" {
		t.Fatalf("kinds = %q; want imap maildir", got)
	}
	for kind, remote := range map[string]bool{"imap": true, "maildir": false} {
		src, err := Open(config.Account{Name: "a", Kind: kind})
		if err != nil {
			t.Fatalf("Open(%s): %v", kind, err)
		}
		if _, ok := src.(source.Remote); ok != remote {
			t.Errorf("kind %s: remote actions %v; want %v", kind, ok, remote)
		}
	}
}

// TestMaildirRowSyncs: the maildir row's source imports a Maildir through the interface.
func TestMaildirRowSyncs(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	raw := "From: Ann <ann@example.com>\r\nSubject: hello\r\nMessage-ID: <h@example.com>\r\n\r\nHi.\r\n"
	if err := os.WriteFile(filepath.Join(md, "cur", "1.host:2,S"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src, err := Open(config.Account{Name: "home", Kind: "maildir", Path: md})
	if err != nil {
		t.Fatal(err)
	}
	res, err := src.Sync(context.Background(), st, source.Options{})
	if err != nil || res.New != 1 || res.Folders != 1 {
		t.Fatalf("sync: %+v, %v; want one message in one folder", res, err)
	}
}

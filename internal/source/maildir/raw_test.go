package maildir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// TestRawReadsTheSyncedFile: Raw gives the exact bytes of the file the store numbered, also
// after another program changed its flags (renamed it) or moved it from new to cur; a file
// gone is ErrGone, and a symbolic link put in its place is refused, never followed.
func TestRawReadsTheSyncedFile(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	md := filepath.Join(base, "Maildir")
	for _, d := range []string{"cur", "new", "tmp", ".Work/cur", ".Work/new", ".Work/tmp"} {
		os.MkdirAll(filepath.Join(md, d), 0o755)
	}
	inbox, work := message("inbox one", "hello"), message("work one", "report")
	write(t, filepath.Join(md, "new", "1.inbox"), inbox)
	write(t, filepath.Join(md, ".Work", "cur", "2.work:2,S"), work)
	secret := message("outside", "never read")
	write(t, filepath.Join(base, "secret.eml"), secret)
	st, _ := openStore(t)
	a := config.Account{Name: "home", Kind: "maildir", Path: md}
	if _, err := Sync(ctx, st, a, source.Options{}); err != nil {
		t.Fatal(err)
	}
	uid := func(folder string) uint32 {
		rows, _, err := st.Messages(ctx, &store.Filter{Folder: folder, Limit: 10})
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: %v %v", folder, rows, err)
		}
		return rows[0].UID
	}
	opened, err := Open(a)
	if err != nil {
		t.Fatal(err)
	}
	src := opened.(source.Reader)
	inboxUID, workUID := uid("INBOX"), uid("Work")
	if b, err := src.Raw(ctx, st, "INBOX", inboxUID); err != nil || string(b) != string(inbox) {
		t.Fatalf("INBOX: %q %v", b, err)
	}
	if b, err := src.Raw(ctx, st, "Work", workUID); err != nil || string(b) != string(work) {
		t.Fatalf("Work: %q %v", b, err)
	}
	// Read elsewhere: moved to cur and flagged.
	os.Rename(filepath.Join(md, "new", "1.inbox"), filepath.Join(md, "cur", "1.inbox:2,FS"))
	if b, err := src.Raw(ctx, st, "INBOX", inboxUID); err != nil || string(b) != string(inbox) {
		t.Fatalf("after a rename: %q %v", b, err)
	}
	if _, err := src.Raw(ctx, st, "INBOX", workUID+100); !errors.Is(err, source.ErrGone) {
		t.Fatalf("an unknown uid: %v", err)
	}
	// A link in the file's place.
	os.Remove(filepath.Join(md, ".Work", "cur", "2.work:2,S"))
	if err := os.Symlink(filepath.Join(base, "secret.eml"), filepath.Join(md, ".Work", "cur", "2.work:2,S")); err != nil {
		t.Fatal(err)
	}
	if b, err := src.Raw(ctx, st, "Work", workUID); err == nil || string(b) == string(secret) {
		t.Fatalf("a link was followed: %q %v", b, err)
	}
	os.Remove(filepath.Join(md, ".Work", "cur", "2.work:2,S"))
	if _, err := src.Raw(ctx, st, "Work", workUID); !errors.Is(err, source.ErrGone) {
		t.Fatalf("a file gone: %v", err)
	}
}

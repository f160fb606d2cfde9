package maildir

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// secretWord is in every file outside the Maildir; it must never be imported.
const secretWord = "quillfeatheroutside"

func message(subject, body string) []byte {
	return []byte("From: Ann <ann@example.com>\r\nTo: me@example.com\r\nSubject: " + subject +
		"\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\nMessage-ID: <" + strings.ReplaceAll(subject, " ", ".") + "@example.com>\r\n\r\n" + body + "\r\n")
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// hostileMaildir is a Maildir holding two ordinary messages and, beside them,
// every kind of entry that must not be imported. It returns the Maildir and
// the names (relative to it) that must be warned about.
func hostileMaildir(t *testing.T) (string, map[string]string) {
	t.Helper()
	base := t.TempDir()
	md, out := filepath.Join(base, "Maildir"), filepath.Join(base, "outside")
	for _, d := range []string{"cur", "new", "tmp", ".Work/cur", ".Work/tmp", ".Linked/cur"} {
		os.MkdirAll(filepath.Join(md, d), 0o755)
	}
	secret := message("outside "+secretWord, "the body says "+secretWord)
	write(t, filepath.Join(out, "secret.eml"), secret)
	write(t, filepath.Join(out, "Maildir/cur/1.outside:2,S"), secret)
	write(t, filepath.Join(out, "Maildir/new/2.outside"), secret)
	write(t, filepath.Join(out, "new/3.outside"), secret)

	write(t, filepath.Join(md, "cur/100.ordinary:2,S"), message("ordinary one", "hello"))
	write(t, filepath.Join(md, ".Work/cur/101.ordinary:2,"), message("ordinary two", "hello again"))
	symlink(t, filepath.Join(out, "secret.eml"), filepath.Join(md, "cur/200.linkout:2,S"))
	symlink(t, "../../outside/secret.eml", filepath.Join(md, "cur/201.relativeout:2,"))
	symlink(t, "100.ordinary:2,S", filepath.Join(md, "cur/202.linkinside:2,"))
	symlink(t, filepath.Join(md, "nothing-here"), filepath.Join(md, "cur/203.dangling:2,"))
	symlink(t, "/dev/zero", filepath.Join(md, "new/204.zero"))
	if err := syscall.Mkfifo(filepath.Join(md, "cur/205.fifo:2,"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(out, "Maildir"), filepath.Join(md, ".Outside"))
	symlink(t, filepath.Join(out, "new"), filepath.Join(md, ".Work/new"))
	os.Remove(filepath.Join(md, ".Linked/cur"))
	symlink(t, filepath.Join(out, "Maildir/cur"), filepath.Join(md, ".Linked/cur"))
	want := map[string]string{
		"cur/200.linkout:2,S":    "symbolic link to a file outside the Maildir",
		"cur/201.relativeout:2,": "symbolic link to a file outside the Maildir",
		"cur/202.linkinside:2,":  "does not follow even inside the Maildir",
		"cur/203.dangling:2,":    "dangling symbolic link",
		"new/204.zero":           "symbolic link to a character device outside the Maildir",
		"cur/205.fifo:2,":        "named pipe (FIFO), not a message file",
		".Outside":               "symbolic link to a folder outside the Maildir",
		".Work/new":              "symbolic link to a folder outside the Maildir",
		".Linked/cur":            "symbolic link to a folder outside the Maildir",
	}
	// A Unix socket, where the path is short enough for one.
	sock := filepath.Join(md, "cur/206.socket")
	if len(sock) < 100 {
		if l, err := net.Listen("unix", sock); err == nil {
			t.Cleanup(func() { l.Close() })
			want["cur/206.socket"] = "socket, not a message file"
		}
	}
	return md, want
}

func openStore(t *testing.T) (*store.Store, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return st, db
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// warnings collects opt.Warn's lines.
type warnings []string

func (w *warnings) add(msg string) { *w = append(*w, msg) }

func (w warnings) about(rel string) []string {
	var out []string
	for _, l := range w {
		if strings.Contains(l, fmt.Sprintf("%q", rel)) {
			out = append(out, l)
		}
	}
	return out
}

// TestSyncMaildirConfined: only the two regular files inside the Maildir are
// imported; each link, pipe, device and socket gets exactly one warning that
// names it and says why, and nothing outside the Maildir reaches the store.
func TestSyncMaildirConfined(t *testing.T) {
	md, want := hostileMaildir(t)
	st, db := openStore(t)
	var w warnings
	done := make(chan error, 1)
	var res any
	go func() {
		r, err := Sync(context.Background(), st, config.Account{Name: "home", Kind: "maildir", Path: md}, source.Options{Warn: w.add})
		res = r
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the import of a Maildir holding a FIFO and a link to /dev/zero did not end within 20 s")
	}
	if n := count(t, db, `SELECT count(*) FROM messages`); n != 2 {
		t.Fatalf("%d messages imported, want the 2 ordinary ones (result %+v, warnings %q)", n, res, w)
	}
	if n := count(t, db, `SELECT count(*) FROM messages m JOIN bodies b ON b.id = m.id WHERE m.subject LIKE ? OR b.text LIKE ? OR b.headers LIKE ?`,
		"%"+secretWord+"%", "%"+secretWord+"%", "%"+secretWord+"%"); n != 0 {
		t.Fatalf("%d messages from outside the Maildir were imported", n)
	}
	if n := count(t, db, `SELECT count(*) FROM maildir_keys WHERE key NOT LIKE '%.ordinary'`); n != 0 {
		t.Fatalf("%d keys of files that are not regular were recorded", n)
	}
	for rel, why := range want {
		got := w.about(rel)
		if len(got) != 1 || !strings.Contains(got[0], why) || !strings.Contains(got[0], "account home: skipped") {
			t.Errorf("%s: want one warning saying %q, got %q", rel, why, got)
		}
	}
	if len(w) != len(want) {
		t.Errorf("%d warnings for %d entries: %q", len(w), len(want), w)
	}
	for _, l := range w {
		if strings.Contains(l, "\n") || strings.Count(l, ". ") > 0 || !strings.HasSuffix(l, ".") {
			t.Errorf("a warning is not one sentence: %q", l)
		}
	}
}

// TestMaildirOpenRefuses: opened directly by name (as when an entry changes
// between the listing and the open), a FIFO opens without blocking and is
// refused, and a link is refused whether it leads in or out.
func TestMaildirOpenRefuses(t *testing.T) {
	md, _ := hostileMaildir(t)
	root, err := os.OpenRoot(filepath.Join(md, "cur"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	cases := map[string]string{
		"100.ordinary:2,S":   "",
		"205.fifo:2,":        "named pipe",
		"202.linkinside:2,":  "changed while being opened",
		"200.linkout:2,S":    "could not be opened",
		"201.relativeout:2,": "could not be opened",
		"203.dangling:2,":    "could not be opened",
		"does-not-exist:2,S": "",
	}
	if _, err := os.Lstat(filepath.Join(md, "cur/206.socket")); err == nil {
		cases["206.socket"] = "could not be opened" // open(2) of a socket fails
	}
	for name, want := range cases {
		done := make(chan string, 1)
		go func() {
			fh, _, why := openMessage(root, name)
			if fh != nil {
				fh.Close()
			}
			done <- why
		}()
		select {
		case why := <-done:
			if (want == "") != (why == "") || !strings.Contains(why, want) {
				t.Errorf("%s: reason %q, want one with %q", name, why, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("opening %s blocked", name)
		}
	}
	// A device node in the folder itself (only root can make one).
	if err := syscall.Mknod(filepath.Join(md, "cur/207.device"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		if _, _, why := openMessage(root, "207.device"); !strings.Contains(why, "character device") {
			t.Errorf("a device node: reason %q", why)
		}
	}
}

// TestMaildirSizeBound: a file larger than the bound is read up to it, stored
// with its real size and a problem that says so, and warned about once.
func TestMaildirSizeBound(t *testing.T) {
	old := maxMessageBytes
	maxMessageBytes = 64 << 10
	defer func() { maxMessageBytes = old }()
	md := filepath.Join(t.TempDir(), "Maildir")
	big := message("big one", strings.Repeat("all work and no play makes a long message\r\n", 10000))
	write(t, filepath.Join(md, "cur/1.big:2,S"), big)
	os.MkdirAll(filepath.Join(md, "new"), 0o755)
	st, db := openStore(t)
	var w warnings
	if _, err := Sync(context.Background(), st, config.Account{Name: "home", Path: md}, source.Options{Warn: w.add}); err != nil {
		t.Fatal(err)
	}
	var size int64
	var problems string
	if err := db.QueryRow(`SELECT m.size, b.problems FROM messages m JOIN bodies b ON b.id = m.id WHERE m.subject = 'big one'`).Scan(&size, &problems); err != nil {
		t.Fatal(err)
	}
	if size != int64(len(big)) || !strings.Contains(problems, "larger than 64 KiB; only its first 64 KiB were read") {
		t.Fatalf("size %d (file %d), problems %q", size, len(big), problems)
	}
	if len(w) != 1 || !strings.Contains(w[0], `"cur/1.big:2,S"`) || !strings.Contains(w[0], "only its first") {
		t.Fatalf("warnings %q", w)
	}
}

// TestMaildirParseBounded: a read that never returns holds the parse no longer than
// the time bound, and no longer than the context.
func TestMaildirParseBounded(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	pw2 := make(chan struct{})
	go func() { pw.Write([]byte("Subject: slow\r\n")); close(pw2) }()
	start := time.Now()
	_, err := parseBounded(context.Background(), pr, 300*time.Millisecond)
	if err != errTooSlow || time.Since(start) > 2*time.Second {
		t.Fatalf("a stalled read: %v after %s, want errTooSlow after about 300 ms", err, time.Since(start))
	}
	<-pw2
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(context.Canceled) })
	start = time.Now()
	pr2, pw3 := io.Pipe()
	defer pw3.Close()
	if _, err := parseBounded(ctx, pr2, time.Hour); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("a cancelled parse: %v after %s", err, time.Since(start))
	}
	p, err := parseBounded(context.Background(), strings.NewReader(string(message("quick", "body"))), time.Second)
	if err != nil || p.Subject != "quick" {
		t.Fatalf("an ordinary parse: %v %+v", err, p)
	}
}

// TestMaildirInterruptedResumes: an import whose context ends after its first
// batch keeps that batch, and the next import adds the rest, each message once.
func TestMaildirInterruptedResumes(t *testing.T) {
	md := filepath.Join(t.TempDir(), "Maildir")
	os.MkdirAll(filepath.Join(md, "new"), 0o755)
	const n = 120
	for i := 0; i < n; i++ {
		write(t, filepath.Join(md, fmt.Sprintf("cur/%d.m%d:2,S", 1000+i, i)), message(fmt.Sprintf("number %d", i), "text"))
	}
	st, db := openStore(t)
	a := config.Account{Name: "home", Path: md}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Sync(ctx, st, a, source.Options{BatchSize: 50, AfterBatch: func(string, int) { cancel() }})
	if err == nil {
		t.Fatal("the interrupted import reported no error")
	}
	if got := count(t, db, `SELECT count(*) FROM messages`); got != 50 {
		t.Fatalf("%d messages kept after an interruption after the first batch of 50", got)
	}
	if _, err := Sync(context.Background(), st, a, source.Options{BatchSize: 50}); err != nil {
		t.Fatal(err)
	}
	if got := count(t, db, `SELECT count(DISTINCT message_id) FROM messages`); got != n || count(t, db, `SELECT count(*) FROM messages`) != n {
		t.Fatalf("%d distinct messages after the second import, want %d each once", got, n)
	}
}

// TestMaildirIsolation: among good messages, one with raw NUL and BEL bytes and broken MIME
// is imported (its problems noted), a file that cannot be read is skipped with a warning kept
// in the store until it is gone, and the rest is imported.
func TestMaildirIsolation(t *testing.T) {
	md := filepath.Join(t.TempDir(), "Maildir")
	write(t, filepath.Join(md, "cur/1.good:2,S"), message("first good", "hello"))
	write(t, filepath.Join(md, "new/2.good"), message("second good", "hello again"))
	hostile := "From: Stranger <s@evil.example>\r\nSubject: nul\x00 bel\x07 here\r\nMessage-ID: <hostile@evil.example>\r\n" +
		"Content-Type: multipart/mixed; boundary=\"never\"\r\n\r\n--never\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n%%%not base64\x00\x07\r\n"
	write(t, filepath.Join(md, "cur/3.hostile:2,"), []byte(hostile))
	os.MkdirAll(filepath.Join(md, "tmp"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(md, "cur/4.fifo:2,S"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, db := openStore(t)
	ctx := context.Background()
	a := config.Account{Name: "home", Kind: "maildir", Path: md}
	var w warnings
	res, err := Sync(ctx, st, a, source.Options{Warn: w.add})
	if err != nil || res.New != 3 {
		t.Fatalf("sync: %+v, %v; want the 3 message files imported", res, err)
	}
	if n := count(t, db, `SELECT count(*) FROM messages WHERE subject LIKE '%good%' OR message_id = 'hostile@evil.example'`); n != 3 {
		t.Errorf("%d of the good and hostile messages stored; want 3", n)
	}
	kept, _ := st.AccountWarnings(ctx)
	if len(w) != 1 || len(kept["home"]) != 1 || !strings.Contains(kept["home"][0], `"cur/4.fifo:2,S"`) || !strings.Contains(kept["home"][0], "named pipe") {
		t.Errorf("warnings said %q, kept %q; want one naming the FIFO", w, kept["home"])
	}
	// Still there: still warned about, even though nothing else changed.
	w = nil
	if _, err := Sync(ctx, st, a, source.Options{Warn: w.add}); err != nil {
		t.Fatal(err)
	}
	if kept, _ := st.AccountWarnings(ctx); len(kept["home"]) != 1 {
		t.Errorf("second sync kept %q; want the FIFO's warning", kept["home"])
	}
	os.Remove(filepath.Join(md, "cur/4.fifo:2,S"))
	if _, err := Sync(ctx, st, a, source.Options{}); err != nil {
		t.Fatal(err)
	}
	if kept, _ := st.AccountWarnings(ctx); len(kept["home"]) != 0 {
		t.Errorf("after the FIFO went, warnings %q remain", kept["home"])
	}
}

package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// outsideWord is written only in files outside the Maildir. No tool answer
// and no byte of the store may ever hold it.
const outsideWord = "marmaladeoutsiderword"

// maildirConfig is a throwaway HOME whose configuration has one Maildir account.
func maildirConfig(t *testing.T, md string) (env []string, cfg, dataDir string) {
	t.Helper()
	env = home(t)
	cfg = filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[[accounts]]\nname = \"home\"\nkind = \"maildir\"\npath = %q\n", md)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_DATA_HOME="); ok {
			dataDir = filepath.Join(v, "postern")
		}
	}
	return env, cfg, dataDir
}

func mustWrite(t *testing.T, path string, b []byte, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		os.Chtimes(path, mtime, mtime)
	}
}

// manyParts is a message of n MIME parts: one text part and n-1 small attachments.
func manyParts(n int) []byte {
	var b bytes.Buffer
	b.WriteString("From: Many Parts <parts@example.org>\r\nTo: me@example.com\r\nSubject: Ten thousand parts\r\n" +
		"Date: Tue, 2 Jan 2024 10:00:00 +0000\r\nMessage-ID: <parts.many@example.org>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"pp\"\r\n\r\n--pp\r\nContent-Type: text/plain\r\n\r\nThe parts follow.\r\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "--pp\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"p%d.bin\"\r\n\r\nxx\r\n", i)
	}
	b.WriteString("--pp--\r\n")
	return b.Bytes()
}

// hostileEntries adds to the Maildir md every kind of entry the import must
// skip (links out to a file and to whole folders, a FIFO, a link to
// /dev/zero, a dangling link, a link inside), with the messages the links
// lead to written under outside, and a 50 MB message and a message of 10,000
// parts, with the given modification time. It returns the entries that must
// be warned about, relative to md, with what the warning must say.
func hostileEntries(t *testing.T, md, outside string, mtime time.Time) map[string]string {
	t.Helper()
	secret := []byte("From: Outsider <outsider@example.org>\r\nTo: me@example.com\r\nSubject: the " + outsideWord +
		"\r\nDate: Wed, 3 Jan 2024 10:00:00 +0000\r\nMessage-ID: <outside@example.org>\r\n\r\nThe text says " + outsideWord + ".\r\n")
	mustWrite(t, filepath.Join(outside, "secret.eml"), secret, time.Time{})
	mustWrite(t, filepath.Join(outside, "Maildir/cur/1.outside:2,S"), secret, time.Time{})
	mustWrite(t, filepath.Join(outside, "Maildir/new/2.outside"), secret, time.Time{})
	os.MkdirAll(filepath.Join(outside, "Maildir/tmp"), 0o755)
	mustWrite(t, filepath.Join(outside, "new/3.outside"), secret, time.Time{})
	for _, d := range []string{"cur", "new", "tmp", ".Work/cur", ".Work/tmp"} {
		if err := os.MkdirAll(filepath.Join(md, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"cur/9000.linkout:2,S": filepath.Join(outside, "secret.eml"),
		"cur/9001.relout:2,S":  "../../outside/secret.eml",
		"new/9002.zero":        "/dev/zero",
		"cur/9003.dangling:2,": filepath.Join(md, "cur", "gone-long-ago"),
		".Outside":             filepath.Join(outside, "Maildir"),
		".Work/new":            filepath.Join(outside, "new"),
		"cur/9004.inside:2,S":  "9005.big:2,S",
	}
	for rel, target := range links {
		os.Remove(filepath.Join(md, rel)) // an empty folder the corpus made
		if err := os.Symlink(target, filepath.Join(md, rel)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(md, "cur/9006.fifo:2,"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(md, "cur/9005.big:2,S"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, corpus.Big(50_000_000, 11)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chtimes(filepath.Join(md, "cur/9005.big:2,S"), mtime, mtime)
	mustWrite(t, filepath.Join(md, "cur/9007.parts:2,S"), manyParts(10000), mtime.Add(time.Second))
	return map[string]string{
		"cur/9000.linkout:2,S": "a symbolic link to a file outside the Maildir",
		"cur/9001.relout:2,S":  "a symbolic link to a file outside the Maildir",
		"new/9002.zero":        "a symbolic link to a character device outside the Maildir",
		"cur/9003.dangling:2,": "a dangling symbolic link",
		".Outside":             "a symbolic link to a folder outside the Maildir",
		".Work/new":            "a symbolic link to a folder outside the Maildir",
		"cur/9004.inside:2,S":  "a symbolic link, which postern does not follow",
		"cur/9006.fifo:2,":     "a named pipe (FIFO), not a message file",
	}
}

// checkSkipped asserts one warning line per skipped entry, naming it and saying why.
func checkSkipped(t *testing.T, stderr string, want map[string]string) {
	t.Helper()
	for rel, why := range want {
		n := 0
		for _, line := range strings.Split(stderr, "\n") {
			if strings.Contains(line, fmt.Sprintf("%q", rel)) {
				n++
				if !strings.HasPrefix(line, "postern: account home: skipped ") || !strings.Contains(line, why) {
					t.Errorf("the warning about %s does not say %q: %q", rel, why, line)
				}
			}
		}
		if n != 1 {
			t.Errorf("%d warning lines about %s, want 1; stderr:\n%s", n, rel, stderr)
		}
	}
}

// checkNoOutside asserts that nothing from outside the Maildir reached the
// store, its write-ahead log, or an answer of the search and list tools.
func checkNoOutside(t *testing.T, env []string, cfg, dataDir string) {
	t.Helper()
	for _, name := range []string{"store.db", "store.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dataDir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(outsideWord)) {
			t.Fatalf("%s holds the word written only outside the Maildir", name)
		}
	}
	for _, call := range [][]string{
		{"mail_search", `{"query":"` + outsideWord + `"}`},
		{"mail_search", `{"query":"outsider"}`},
		{"mail_list", `{"limit":500}`},
		{"mail_senders", `{}`},
		{"mail_folders", `{}`},
	} {
		out, errOut, code := runCLI(t, env, "call", call[0], call[1], "--config", cfg, "--scopes", "read,read:bodies", "--json")
		if code != 0 {
			t.Fatalf("postern call %s: exit %d: %s", call[0], code, errOut)
		}
		if strings.Contains(strings.ToLower(out), outsideWord) || strings.Contains(strings.ToLower(out), "outsider@example.org") || strings.Contains(out, `"Outside"`) {
			t.Fatalf("postern call %s %s shows what lies outside the Maildir: %s", call[0], call[1], out)
		}
	}
}

// searchCount is the count_only answer of mail_search.
func searchCount(t *testing.T, env []string, cfg, query string) int {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"query": query, "count_only": true})
	out, errOut, code := runCLI(t, env, "call", "mail_search", string(args), "--config", cfg, "--scopes", "read,read:bodies", "--json")
	if code != 0 {
		t.Fatalf("mail_search %q: exit %d: %s", query, code, errOut)
	}
	var r struct{ Count int }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("mail_search %q: %v: %s", query, err, out)
	}
	return r.Count
}

// startSync starts postern sync with args and returns it, its stderr and the channel its
// exit arrives on.
func startSync(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"sync"}, args...)...)
	cmd.Env = env
	errOut := new(bytes.Buffer)
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, errOut, done
}

// runSync runs postern sync and fails the test when it does not end within limit.
func runSync(t *testing.T, env []string, cfg string, limit time.Duration) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	cmd := exec.Command(binary, "sync", "--config", cfg)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		took = time.Since(start)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("postern sync did not end within %s (it hangs): %s", limit, errb.String())
	}
	return out.String(), errb.String(), code, took
}

// TestMaildirConfinedSync: a Maildir holding links out (to a file and to whole
// folders), a FIFO, a link to /dev/zero, a dangling link, a 50 MB message, a
// message of 10,000 parts and ordinary messages syncs to the end; it imports
// the regular files and none of the links' targets, and says on stderr, one
// line each, what it skipped and why.
func TestMaildirConfinedSync(t *testing.T) {
	base := t.TempDir()
	md := filepath.Join(base, "Maildir")
	n, err := corpus.WriteMaildir(md, corpus.Options{Seed: 41, Messages: 60, Folders: []string{"INBOX", "Work"}})
	if err != nil {
		t.Fatal(err)
	}
	skipped := hostileEntries(t, md, filepath.Join(base, "outside"), time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC))
	env, cfg, dataDir := maildirConfig(t, md)
	out, errOut, code, took := runSync(t, env, cfg, 60*time.Second)
	t.Logf("sync took %s:\n%s%s", took.Round(time.Millisecond), out, errOut)
	if code != 0 {
		t.Fatalf("sync: exit %d", code)
	}
	if want := fmt.Sprintf("home: %d new,", n+2); !strings.Contains(out, want) {
		t.Fatalf("stdout %q does not say %q (the %d ordinary messages, the 50 MB one and the one of 10,000 parts)", out, want, n)
	}
	checkSkipped(t, errOut, skipped)
	checkNoOutside(t, env, cfg, dataDir)
	if c := searchCount(t, env, cfg, `subject:"Large attachment (50000000 bytes)"`); c != 1 {
		t.Errorf("the 50 MB message: %d found", c)
	}
	if c := searchCount(t, env, cfg, `subject:"Ten thousand parts"`); c != 1 {
		t.Errorf("the message of 10,000 parts: %d found", c)
	}
	// A second sync finds nothing new, and says again what it skips.
	out, errOut, code, _ = runSync(t, env, cfg, 60*time.Second)
	if code != 0 || !strings.Contains(out, "home: 0 new, 0 gone") {
		t.Fatalf("the second sync: exit %d: %s%s", code, out, errOut)
	}
	checkSkipped(t, errOut, skipped)
}

// copies writes message copies k of pool into md/cur, each with its own
// Message-ID, and returns the ids written.
func writeCopies(t *testing.T, md string, pool []corpus.Message, k int, mtime time.Time) []string {
	t.Helper()
	ids := make([]string, 0, len(pool))
	for j, m := range pool {
		id := fmt.Sprintf("c%d.%s", k, m.MessageID)
		raw := bytes.Replace(m.Raw, []byte("Message-ID: <"), []byte(fmt.Sprintf("Message-ID: <c%d.", k)), 1)
		mustWrite(t, filepath.Join(md, "cur", fmt.Sprintf("%d.c%d_%d.test:2,S", mtime.Unix(), k, j)), raw, mtime.Add(time.Duration(j)*time.Millisecond))
		ids = append(ids, id)
	}
	return ids
}

// lockFree reports whether the sync lock can be taken at once.
func lockFree(t *testing.T, dataDir string) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dataDir, "store.db.lock"), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// checkConsistent asserts the store is sound and holds each message once, and
// returns how many it holds. It reads through a connection of its own, as a
// new postern would: one kept open across the syncs of other processes keeps
// FTS5's cached index structure, which the check then reports as corrupt.
func checkConsistent(t *testing.T, dataDir string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "store.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA quick_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("the store fails its check: %q %v", check, err)
	}
	if countRows(t, db, `SELECT count(*) FROM sqlite_master WHERE name = 'messages'`) == 0 {
		return 0 // killed (by the signal's default action) while the store was being created
	}
	for what, q := range map[string]string{
		"messages stored twice":           `SELECT count(*) FROM (SELECT 1 FROM messages GROUP BY folder_id, message_id HAVING count(*) > 1)`,
		"messages without their body row": `SELECT count(*) FROM messages m LEFT JOIN bodies b ON b.id = m.id WHERE b.id IS NULL`,
		"files sharing a UID":             `SELECT count(*) FROM (SELECT 1 FROM maildir_keys GROUP BY folder_id, uid HAVING count(*) > 1)`,
		"messages of no file":             `SELECT count(*) FROM messages WHERE (folder_id, uid) NOT IN (SELECT folder_id, uid FROM maildir_keys)`,
	} {
		if n := countRows(t, db, q); n != 0 {
			t.Fatalf("%d %s", n, what)
		}
	}
	return countRows(t, db, `SELECT count(*) FROM messages`)
}

func countRows(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMaildirSyncSIGTERM: postern sync over a big Maildir (with every hostile
// entry of TestMaildirConfinedSync in it) ends within 2 s of SIGTERM sent at
// ten random moments, with exit status 143 and a sentence saying it was
// interrupted; its lock is free at once; the store stays sound and keeps what
// was committed; and a last sync completes the import, each message once.
func TestMaildirSyncSIGTERM(t *testing.T) {
	base := t.TempDir()
	md := filepath.Join(base, "Maildir")
	all := corpus.Generate(corpus.Options{Seed: 52, Messages: 2400, Folders: []string{"INBOX"}})
	var pool []corpus.Message
	for _, m := range all {
		if len(m.Raw) <= 8<<10 {
			pool = append(pool, m)
		}
	}
	t0 := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	os.MkdirAll(filepath.Join(md, "cur"), 0o755)
	var ids []string
	copies := 0
	for len(ids) < 8000 {
		ids = append(ids, writeCopies(t, md, pool, copies, t0.Add(time.Duration(copies)*time.Hour))...)
		copies++
	}
	// The 50 MB message and the one of 10,000 parts come after the first copies.
	hostileEntries(t, md, filepath.Join(base, "outside"), t0.Add(90*time.Minute))
	ids = append(ids, "parts.many@example.org")
	env, cfg, dataDir := maildirConfig(t, md)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	t.Logf("%d files in the Maildir; random moments from seed %d", len(ids)+1, seed)

	stored, worst, early := 0, time.Duration(0), 0
	rate := 0.0 // messages imported per second, as measured so far
	for round := 0; round < 10; round++ {
		// Keep enough mail waiting that the signal lands mid-import, however fast this machine is.
		for float64(len(ids)+1-stored) < max(4000, 3*rate) {
			ids = append(ids, writeCopies(t, md, pool, copies, t0.Add(time.Duration(copies)*time.Hour))...)
			copies++
		}
		cmd, errOut, done := startSync(t, env, "--config", cfg)
		wait := time.Duration(rng.Int64N(int64(time.Second)))
		select {
		case err := <-done:
			t.Fatalf("round %d: the sync ended (%v) before the signal at %s: %s", round, err, wait, errOut.String())
		case <-time.After(wait):
		}
		sent := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("round %d: postern sync did not end within 10 s of SIGTERM: %s", round, errOut.String())
		}
		took := time.Since(sent)
		worst = max(worst, took)
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("round %d: the interrupted sync exited with status 0: %s", round, errOut.String())
		}
		ws := ee.Sys().(syscall.WaitStatus)
		switch {
		case ws.Exited() && ws.ExitStatus() == 143:
			if !strings.Contains(errOut.String(), "postern: sync interrupted by SIGTERM; what it stored is kept") {
				t.Fatalf("round %d: exit 143 without saying it was interrupted: %s", round, errOut.String())
			}
		case ws.Signaled() && ws.Signal() == syscall.SIGTERM && wait < 300*time.Millisecond:
			// Before postern set up its handler (while it starts): the default action.
			early++
		default:
			t.Fatalf("round %d: status %v after SIGTERM, want 143: %s", round, ws, errOut.String())
		}
		if strings.Contains(errOut.String(), "another sync is running") {
			t.Fatalf("round %d: the lock of an earlier sync was still held: %s", round, errOut.String())
		}
		if !lockFree(t, dataDir) {
			t.Fatalf("round %d: the sync lock is still held after postern exited", round)
		}
		now := 0
		if _, err := os.Stat(filepath.Join(dataDir, "store.db")); err == nil {
			now = checkConsistent(t, dataDir)
		}
		if now < stored {
			t.Fatalf("round %d: the store lost messages it had committed: %d, then %d", round, stored, now)
		}
		if wait > 0 && now > stored {
			rate = max(rate, float64(now-stored)/wait.Seconds())
		}
		t.Logf("round %d: SIGTERM at %s, exited %s later (%v), %d messages stored (+%d)", round, wait.Round(time.Millisecond), took.Round(time.Millisecond), ws, now, now-stored)
		stored = now
		if took > 2*time.Second {
			t.Errorf("round %d: postern sync took %s to end after SIGTERM; it must end within 2 s", round, took)
		}
	}
	t.Logf("the longest time from SIGTERM to exit over ten rounds: %s", worst.Round(time.Millisecond))
	if early > 5 {
		t.Fatalf("%d of ten syncs were ended by SIGTERM's default action, not by postern's handler", early)
	}
	if stored == 0 {
		t.Fatal("no round stored anything: the signals all fell before the import, and the test proves nothing")
	}

	// The next sync runs at once, continues where the last one stopped and completes.
	out, errOut, code, took := runSync(t, env, cfg, 5*time.Minute)
	if code != 0 {
		t.Fatalf("the sync after the interruptions: exit %d: %s%s", code, out, errOut)
	}
	t.Logf("the completing sync took %s: %s", took.Round(time.Millisecond), strings.TrimSpace(out))
	if n := checkConsistent(t, dataDir); n != len(ids)+1 {
		t.Fatalf("%d messages stored, want the %d regular files", n, len(ids)+1)
	}
	db := openDB(t, dataDir)
	if want := fmt.Sprintf("home: %d new,", len(ids)+1-stored); !strings.Contains(out, want) {
		t.Fatalf("the completing sync did not continue where the others stopped: %q, want %q", out, want)
	}
	got := map[string]bool{}
	rows, err := db.Query(`SELECT message_id FROM messages`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		got[id] = true
	}
	rows.Close()
	for _, id := range ids {
		if !got[id] {
			t.Fatalf("%s is missing from the store", id)
		}
	}
	if c := searchCount(t, env, cfg, `subject:"Large attachment (50000000 bytes)"`); c != 1 {
		t.Errorf("the 50 MB message: %d found", c)
	}
	checkNoOutside(t, env, cfg, dataDir)
}

// stallingIMAP is an IMAP server on loopback that answers up to stage and
// then stops answering, holding the connection: "greeting" never greets;
// "fetch" sends the first bytes of a large message and no more. reached is
// closed when the server has stalled.
func stallingIMAP(t *testing.T, stage string) (addr string, reached chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reached = make(chan struct{})
	accepted := make(chan net.Conn, 1)
	t.Cleanup(func() {
		l.Close()
		select {
		case c := <-accepted:
			c.Close()
		default:
		}
	})
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		accepted <- c
		if stage == "greeting" {
			close(reached)
			io.Copy(io.Discard, c)
			return
		}
		fmt.Fprint(c, "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n")
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			tag, verb := f[0], strings.ToUpper(f[1])
			if verb == "UID" && len(f) > 2 {
				verb += " " + strings.ToUpper(f[2])
			}
			switch {
			case verb == "LIST":
				fmt.Fprint(c, "* LIST () \"/\" INBOX\r\n"+tag+" OK done\r\n")
			case verb == "SELECT" || verb == "EXAMINE":
				fmt.Fprint(c, "* 1 EXISTS\r\n* OK [UIDVALIDITY 7] v\r\n* OK [UIDNEXT 2] n\r\n"+tag+" OK [READ-ONLY] done\r\n")
			case verb == "UID FETCH" && strings.Contains(strings.ToUpper(line), "BODY"):
				fmt.Fprint(c, "* 1 FETCH (UID 1 RFC822.SIZE 1000000 BODY[] {1000000}\r\nFrom: slow@example.org\r\nSubject: slow\r\n\r\n")
				fmt.Fprint(c, strings.Repeat("x", 5000))
				close(reached)
				io.Copy(io.Discard, br)
				return
			case verb == "UID FETCH":
				fmt.Fprint(c, "* 1 FETCH (UID 1)\r\n"+tag+" OK done\r\n")
			case verb == "LOGOUT":
				fmt.Fprint(c, "* BYE bye\r\n"+tag+" OK done\r\n")
			default:
				fmt.Fprint(c, tag+" OK done\r\n")
			}
		}
	}()
	return l.Addr().String(), reached
}

// TestSyncSignalStalledIMAP: an IMAP sync ends within 2 s of SIGTERM or SIGINT
// wherever it waits: a server that never greets, a password command that does
// not return, a server that stops in the middle of a message. The exit status
// says which signal interrupted it and the lock is free at once.
func TestSyncSignalStalledIMAP(t *testing.T) {
	cases := []struct {
		name, stage, pwCmd string
		sig                syscall.Signal
	}{
		{"server never greets", "greeting", "echo pw", syscall.SIGTERM},
		{"password command hangs", "password", "sleep 5; echo pw", syscall.SIGTERM},
		{"server stalls mid-message", "fetch", "echo pw", syscall.SIGTERM},
		{"server stalls mid-message, SIGINT", "fetch", "echo pw", syscall.SIGINT},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr, reached := stallingIMAP(t, c.stage)
			env := home(t)
			dataDir := ""
			for _, e := range env {
				if v, ok := strings.CutPrefix(e, "XDG_DATA_HOME="); ok {
					dataDir = filepath.Join(v, "postern")
				}
			}
			cfg := filepath.Join(t.TempDir(), "config.toml")
			os.WriteFile(cfg, []byte(fmt.Sprintf("[[accounts]]\nname = \"work\"\nkind = \"imap\"\nserver = %q\nuser = \"me\"\npassword_cmd = %q\ntls = \"none\"\n", addr, c.pwCmd)), 0o600)
			cmd, errOut, done := startSync(t, env, "--config", cfg)
			if c.stage == "password" {
				time.Sleep(700 * time.Millisecond) // the server has greeted; the command sleeps
			} else {
				select {
				case <-reached:
					time.Sleep(200 * time.Millisecond) // postern is now waiting on the server
				case err := <-done:
					t.Fatalf("the sync ended before the server stalled (%v): %s", err, errOut.String())
				case <-time.After(20 * time.Second):
					t.Fatal("the sync never reached the stalling server")
				}
			}
			select {
			case err := <-done:
				t.Fatalf("the sync ended on its own (%v): %s", err, errOut.String())
			default:
			}
			sent := time.Now()
			cmd.Process.Signal(c.sig)
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("postern sync did not end within 10 s of %v: %s", c.sig, errOut.String())
			}
			took := time.Since(sent)
			t.Logf("ended %s after %v: %s", took.Round(time.Millisecond), c.sig, strings.TrimSpace(errOut.String()))
			if took > 2*time.Second {
				t.Errorf("postern sync took %s to end after %v; it must end within 2 s", took, c.sig)
			}
			want, name := 143, "SIGTERM"
			if c.sig == syscall.SIGINT {
				want, name = 130, "SIGINT"
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != want || !strings.Contains(errOut.String(), "postern: sync interrupted by "+name) {
				t.Fatalf("exit %v, want status %d and a sentence saying it was interrupted: %s", err, want, errOut.String())
			}
			if strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 {
				t.Errorf("more than the one interruption sentence on stderr: %q", errOut.String())
			}
			if !lockFree(t, dataDir) {
				t.Fatal("the sync lock is still held after postern exited")
			}
		})
	}
}

// TestSyncSIGTERMIMAPResumes: a sync from a real Dovecot ends within 2 s of
// SIGTERM at random moments, with status 143 and its lock free, and the next
// sync completes it: every message of the server in the store, once.
func TestSyncSIGTERMIMAPResumes(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	n, err := corpus.WriteMaildir(u.Maildir, corpus.Options{Seed: 23, Messages: 4000})
	if err != nil {
		t.Fatal(err)
	}
	u.FixOwnership(t)
	env, cfg, dataDir := imapHome(t, u, srv.Addr, "none")
	env = append(env, "POSTERN_SYNC_BATCH=100")
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 9))
	worst, rounds := time.Duration(0), 0
	for round := 0; round < 6; round++ {
		cmd, errOut, done := startSync(t, env, "--config", cfg, "--quiet")
		wait := time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
		finished := false
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round %d: the sync failed before the signal: %v: %s", round, err, errOut.String())
			}
			finished = true
		case <-time.After(wait):
		}
		if finished {
			t.Logf("round %d: the sync ended before the signal at %s", round, wait.Round(time.Millisecond))
			break // nothing is left to interrupt
		}
		sent := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("round %d: postern sync did not end within 10 s of SIGTERM: %s", round, errOut.String())
		}
		took := time.Since(sent)
		worst = max(worst, took)
		rounds++
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("round %d: exit status 0 after SIGTERM: %s", round, errOut.String())
		}
		ws := ee.Sys().(syscall.WaitStatus)
		if !(ws.Exited() && ws.ExitStatus() == 143 && strings.Contains(errOut.String(), "sync interrupted by SIGTERM")) &&
			!(ws.Signaled() && ws.Signal() == syscall.SIGTERM && wait < 300*time.Millisecond) {
			t.Fatalf("round %d: status %v after SIGTERM, want 143 and a sentence saying so: %s", round, ws, errOut.String())
		}
		if !lockFree(t, dataDir) {
			t.Fatalf("round %d: the sync lock is still held after postern exited", round)
		}
		t.Logf("round %d: SIGTERM at %s, exited %s later", round, wait.Round(time.Millisecond), took.Round(time.Millisecond))
		if took > 2*time.Second {
			t.Errorf("round %d: postern sync took %s to end after SIGTERM; it must end within 2 s", round, took)
		}
	}
	t.Logf("%d rounds (seed %d); the longest time from SIGTERM to exit: %s", rounds, seed, worst.Round(time.Millisecond))
	if rounds < 3 {
		t.Fatalf("only %d syncs were still running when the signal came; the test proves little", rounds)
	}
	out, errOut, code := runCLI(t, env, "sync", "--config", cfg)
	if code != 0 {
		t.Fatalf("the sync after the signals failed: %s %s", out, errOut)
	}
	db := openDB(t, dataDir)
	want, got := serverIdentities(t, u), storeIdentities(t, db)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %d on the server, %d in the store", k, w, got[k])
		}
	}
	if countStored(db) != n {
		t.Fatalf("store %d, corpus %d", countStored(db), n)
	}
}

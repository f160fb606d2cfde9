package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// imapHome is a throwaway HOME whose configuration has one IMAP account on the
// test Dovecot, its password given by a command reading a file.
func imapHome(t *testing.T, u *imaptest.User, server, tlsMode string) (env []string, cfg, dataDir string) {
	t.Helper()
	env = home(t)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(u.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "config.toml")
	body := fmt.Sprintf("[[accounts]]\nname = \"work\"\nkind = \"imap\"\nserver = %q\nuser = %q\npassword_cmd = \"cat %s\"\ntls = %q\n", server, u.Name, pwFile, tlsMode)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_DATA_HOME="); ok {
			dataDir = filepath.Join(v, "postern")
		}
	}
	return env, cfg, dataDir
}

func countStored(db *sql.DB) int {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM messages`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// serverIdentities lists folder/Message-ID of every message on the server.
func serverIdentities(t *testing.T, u *imaptest.User) map[string]int {
	t.Helper()
	c := u.Login(t, nil)
	list, err := c.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range list {
		skip := false
		for _, a := range l.Attrs {
			skip = skip || strings.EqualFold(string(a), string(imap.MailboxAttrNoSelect))
		}
		if skip {
			continue
		}
		sel, err := c.Select(l.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
		if err != nil || sel.NumMessages == 0 {
			continue
		}
		msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{Envelope: true}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			out[l.Mailbox+"/"+m.Envelope.MessageID]++
		}
	}
	return out
}

func storeIdentities(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT f.name, m.message_id FROM messages m JOIN folders f ON f.id = m.folder_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var f, mid string
		rows.Scan(&f, &mid)
		out[f+"/"+mid]++
	}
	return out
}

func openDB(t *testing.T, dataDir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "store.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSyncKilledResumes: postern sync killed with SIGKILL at several points is
// completed by the next run with no duplicate and no missing message.
func TestSyncKilledResumes(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	n, err := corpus.WriteMaildir(u.Maildir, corpus.Options{Seed: 21, Messages: 2000})
	if err != nil {
		t.Fatal(err)
	}
	u.FixOwnership(t)
	env, cfg, dataDir := imapHome(t, u, srv.Addr, "none")
	env = append(env, "POSTERN_SYNC_BATCH=40")
	var db *sql.DB
	var points []int
	for i, threshold := range []int{0, 120, 500, 900, 1300, 1700} {
		cmd := exec.Command(binary, "sync", "--config", cfg, "--quiet")
		cmd.Env = env
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if threshold == 0 {
			time.Sleep(30 * time.Millisecond) // before anything is stored
		} else {
			for db == nil {
				if _, err := os.Stat(filepath.Join(dataDir, "store.db")); err == nil {
					db = openDB(t, dataDir)
				} else {
					time.Sleep(5 * time.Millisecond)
				}
			}
			deadline := time.Now().Add(60 * time.Second)
			for countStored(db) < threshold && time.Now().Before(deadline) {
				select {
				case err := <-done:
					t.Fatalf("kill %d: the sync ended before %d messages (%v): %s", i, threshold, err, errOut.String())
				default:
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		stored := 0
		if db != nil {
			stored = countStored(db)
		}
		points = append(points, stored)
		t.Logf("kill %d at %d stored messages", i, stored)
	}
	out, errOut, code := runCLI(t, env, "sync", "--config", cfg)
	if code != 0 {
		t.Fatalf("the sync after the kills failed: %s %s", out, errOut)
	}
	if db == nil {
		db = openDB(t, dataDir)
	}
	want := serverIdentities(t, u)
	got := storeIdentities(t, db)
	total := 0
	for k, w := range want {
		total += w
		if got[k] != w {
			t.Errorf("%s: %d on the server, %d in the store", k, w, got[k])
		}
	}
	for k, g := range got {
		if want[k] == 0 {
			t.Errorf("%s: in the store (%d times) but not on the server", k, g)
		}
	}
	if total != n || countStored(db) != n {
		t.Fatalf("server %d, store %d, corpus %d", total, countStored(db), n)
	}
	distinct := map[int]bool{}
	for _, p := range points {
		distinct[p] = true
	}
	if len(distinct) < 5 {
		t.Fatalf("the kills fell at only %d different points: %v", len(distinct), points)
	}
}

// TestReadersDuringSync: mail_search and mail_list through the stdio server keep
// answering while a sync writes, and no lock error ever reaches the agent.
func TestReadersDuringSync(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	if _, err := corpus.WriteMaildir(u.Maildir, corpus.Options{Seed: 8, Messages: 2000}); err != nil {
		t.Fatal(err)
	}
	u.FixOwnership(t)
	env, cfg, _ := imapHome(t, u, srv.Addr, "none")
	env = append(env, "POSTERN_SYNC_BATCH=10")
	s := startEnv(t, env, "--config", cfg)
	s.initialize("2025-11-25")
	// The first call opens the store, as an agent's first call would.
	result(t, s.rpc("first", "tools/call", map[string]any{"name": "mail_list"}))

	sync := exec.Command(binary, "sync", "--config", cfg, "--quiet")
	sync.Env = env
	var syncErr bytes.Buffer
	sync.Stderr = &syncErr
	if err := sync.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sync.Wait() }()
	calls, during := 0, 0
	var lastCount float64
	finished := false
	for !finished {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("sync failed: %v %s", err, syncErr.String())
			}
			finished = true
		default:
		}
		for _, call := range []map[string]any{
			{"name": "mail_search", "arguments": map[string]any{"query": "report", "limit": 20}},
			{"name": "mail_list", "arguments": map[string]any{"limit": 20, "unread": true}},
			{"name": "mail_list", "arguments": map[string]any{"count_only": true}},
		} {
			r := result(t, s.rpc(calls, "tools/call", call))
			calls++
			if !finished {
				during++
			}
			b, _ := json.Marshal(r)
			if r["isError"] == true && lastCount == 0 && (strings.Contains(string(b), "no folder is stored yet") || strings.Contains(string(b), "has not finished")) {
				continue // before the sync stored its first folder, the answer says so
			}
			if r["isError"] != false || strings.Contains(strings.ToLower(string(b)), "locked") || strings.Contains(strings.ToLower(string(b)), "busy") {
				t.Fatalf("call %d during the sync: %s", calls, b)
			}
			if c, ok := r["structuredContent"].(map[string]any)["count"].(float64); ok {
				if c < lastCount {
					t.Fatalf("the INBOX count went down during a first sync: %v after %v", c, lastCount)
				}
				lastCount = c
			}
		}
	}
	t.Logf("%d calls answered, %d of them while the sync ran", calls, during)
	if during < 10 {
		t.Fatalf("only %d calls ran during the sync; the test proves nothing", during)
	}
}

// TestPagingWhileMailArrives: cursor paging through a 1,000-message folder
// returns each message exactly once, also when new mail arrives between pages.
func TestPagingWhileMailArrives(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	maildir := filepath.Join(dir, "Maildir")
	if _, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: 4, Messages: 1000, Folders: []string{"INBOX"}}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[[accounts]]\nname = \"local\"\nkind = \"maildir\"\npath = \""+maildir+"\"\n"), 0o600)
	if _, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatal(errOut)
	}
	s := startEnv(t, env, "--config", cfg)
	s.initialize("2025-11-25")
	extra := corpus.Generate(corpus.Options{Seed: 77, Messages: 60, Start: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)})
	seen := map[string]int{}
	cursor := ""
	pages := 0
	for {
		args := map[string]any{"limit": 37, "fields": []string{"date"}}
		if cursor != "" {
			args["cursor"] = cursor
		}
		r := result(t, s.rpc(pages, "tools/call", map[string]any{"name": "mail_list", "arguments": args}))
		sc := r["structuredContent"].(map[string]any)
		msgs, _ := sc["messages"].([]any)
		for _, m := range msgs {
			seen[m.(map[string]any)["id"].(string)]++
		}
		pages++
		next, _ := sc["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
		// New mail between pages: newer and older than what was listed so far.
		for k := 0; k < 2 && len(extra) > 0; k++ {
			m := extra[0]
			extra = extra[1:]
			if k == 1 {
				m.Raw = bytes.Replace(m.Raw, []byte("Date: "), []byte("Date: Mon, 30 Nov 2026 08:00:00 +0000\r\nX-Old-Date: "), 1)
			}
			name := fmt.Sprintf("%d.paging%d.test:2,", time.Now().UnixNano(), pages*10+k)
			if err := os.WriteFile(filepath.Join(maildir, "cur", name), m.Raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, errOut, code := runCLI(t, env, "sync", "--config", cfg, "--quiet"); code != 0 {
			t.Fatal(errOut)
		}
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", id, n)
		}
	}
	// Every message that was there before paging began was listed.
	r := result(t, s.rpc("count", "tools/call", map[string]any{"name": "mail_search", "arguments": map[string]any{"query": "before:2026-11-30", "count_only": true}}))
	inRange := int(r["structuredContent"].(map[string]any)["count"].(float64))
	if len(seen) < 1000 || inRange < 1000 {
		t.Fatalf("listed %d distinct messages over %d pages; %d messages are dated before the arrivals", len(seen), pages, inRange)
	}
	t.Logf("%d pages, %d distinct messages, each once", pages, len(seen))
}

// TestSyncErrorsCLI: a wrong password, an unreachable server and a TLS failure
// each end with one clear sentence and a non-zero exit, never showing the password.
func TestSyncErrorsCLI(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	cases := []struct {
		name, server, tls, want string
		password                string
	}{
		{"wrong password", srv.Addr, "none", "refused the login", "not-" + u.Password},
		{"unreachable", "127.0.0.1:1", "none", "cannot reach 127.0.0.1:1", u.Password},
		{"TLS certificate", srv.TLSAddr, "implicit", "certificate", u.Password},
		{"TLS to a plain port", srv.Addr, "implicit", "TLS", u.Password},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			uu := *u
			uu.Password = c.password
			env, cfg, _ := imapHome(t, &uu, c.server, c.tls)
			out, errOut, code := runCLI(t, env, "sync", "--config", cfg)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code == 0 || len(lines) != 1 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if strings.Contains(out+errOut, u.Password) {
				t.Fatalf("the password appears in the output")
			}
		})
	}
}

// TestSyncHugeMessageMemory: a 25 MB message syncs without being read whole into
// memory; the peak memory of the sync (its own VmHWM) is reported.
func TestSyncHugeMessageMemory(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	big, err := io.ReadAll(corpus.Big(25<<20, 3))
	if err != nil {
		t.Fatal(err)
	}
	u.AddMessage(t, "INBOX", big, "S")
	env, cfg, _ := imapHome(t, u, srv.Addr, "none")
	out, errOut, code := runCLI(t, env, "sync", "--config", cfg, "--stats")
	if code != 0 {
		t.Fatalf("sync: %s %s", out, errOut)
	}
	var secs, mib float64
	i := strings.Index(out, "stats: ")
	if i < 0 {
		t.Fatalf("no stats line: %q", out)
	}
	if _, err := fmt.Sscanf(out[i:], "stats: %f s, peak memory %f MiB", &secs, &mib); err != nil {
		t.Fatalf("stats line %q: %v", out[i:], err)
	}
	t.Logf("postern sync of a 25 MB message: %.2f s, peak memory %.1f MiB", secs, mib)
	if mib > 45 {
		t.Fatalf("peak memory %.1f MiB: the 25 MB message seems to be held whole in memory", mib)
	}
}

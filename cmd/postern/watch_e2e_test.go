package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// watchInterval is [sync] interval in these tests (POSTERN_SYNC_MIN_INTERVAL lets it be
// under the 30 s a person may set).
const watchInterval = 2 * time.Second

// lockedBuffer is a child's stderr, read while it writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type watchHome struct {
	u        *imaptest.User
	env      []string
	cfg      string
	dataDir  string
	sessions []*watchServer
}

type watchServer struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

// newWatchHome is an IMAP account on Dovecot with one message, and an environment in which
// postern mcp syncs in the background every watchInterval.
func newWatchHome(t *testing.T) *watchHome {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	u.AddMessage(t, "INBOX", []byte("From: Priya <priya@example.org>\r\nTo: me@example.org\r\nSubject: Harbour plans\r\nMessage-ID: <harbour-1@example.org>\r\nDate: Mon, 1 Jun 2026 09:00:00 +0000\r\n\r\nShall we meet at the harbour?\r\n"), "S")
	env, cfg, dataDir := imapHome(t, u, srv.Addr, "none")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[sync]\ninterval = %q\n", watchInterval.String())
	f.Close()
	var kept []string
	for _, e := range env {
		if !strings.HasPrefix(e, "POSTERN_WATCH=") {
			kept = append(kept, e)
		}
	}
	return &watchHome{u: u, env: append(kept, "POSTERN_SYNC_MIN_INTERVAL=1s"), cfg: cfg, dataDir: dataDir}
}

func (h *watchHome) serve(t *testing.T, ctx context.Context, opts *mcp.ClientOptions) *watchServer {
	t.Helper()
	cmd := exec.Command(binary, "mcp", "--config", h.cfg)
	cmd.Env = h.env
	ws := &watchServer{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = ws.stderr
	// Wait returns once the server is gone even when its stderr pipe stays open a while (CI
	// saw a killed server's Wait block for ten minutes on the copy of its stderr).
	cmd.WaitDelay = 5 * time.Second
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-watch", Version: "1"}, opts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	ws.cs = cs
	t.Cleanup(func() { cs.Close() })
	h.sessions = append(h.sessions, ws)
	return ws
}

// appendMail stores a message in INBOX through a separate IMAP client, as a mail server's
// delivery would.
func (h *watchHome) appendMail(t *testing.T, subject, msgID, inReplyTo string) {
	t.Helper()
	c := h.u.Login(t, nil)
	raw := "From: Priya <priya@example.org>\r\nTo: me@example.org\r\nSubject: " + subject + "\r\nMessage-ID: <" + msgID + ">\r\n"
	if inReplyTo != "" {
		raw += "In-Reply-To: <" + inReplyTo + ">\r\nReferences: <" + inReplyTo + ">\r\n"
	}
	raw += "Date: " + time.Now().UTC().Format(time.RFC1123Z) + "\r\n\r\nSee you there.\r\n"
	cmd := c.Append("INBOX", int64(len(raw)), nil)
	cmd.Write([]byte(raw))
	cmd.Close()
	if _, err := cmd.Wait(); err != nil {
		t.Fatalf("APPEND: %v", err)
	}
	c.Logout().Wait()
}

// listed says whether mail_list on ws shows subject now, with the answer's structured form.
func listed(ctx context.Context, ws *watchServer, subject string) (bool, map[string]any) {
	res, err := ws.cs.CallTool(ctx, &mcp.CallToolParams{Name: generated.ToolMailList, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		return false, nil
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	json.Unmarshal(b, &m)
	msgs, _ := m["messages"].([]any)
	for _, x := range msgs {
		if x.(map[string]any)["subject"] == subject {
			return true, m
		}
	}
	return false, m
}

// waitListed polls mail_list every 200 ms until subject shows, failing after within.
func waitListed(t *testing.T, ctx context.Context, ws *watchServer, subject string, within time.Duration) map[string]any {
	t.Helper()
	end := time.Now().Add(within)
	for {
		ok, m := listed(ctx, ws, subject)
		if ok {
			return m
		}
		if time.Now().After(end) {
			t.Fatalf("%q not listed by mail_list within %s (stderr: %s)", subject, within, ws.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestWatchFreshWithoutAsking: with postern mcp running and no tool call that syncs, a message
// appended to INBOX by another IMAP client is listed by mail_list within 5 s (IDLE), the
// answer says how fresh the store is (synced_at), and a client subscribed to the thread the
// message joins is told it changed.
func TestWatchFreshWithoutAsking(t *testing.T) {
	h := newWatchHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	updated := make(chan string, 16)
	ws := h.serve(t, ctx, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	first := waitListed(t, ctx, ws, "Harbour plans", 15*time.Second) // the first sync, as the lock holder
	at, err := time.Parse(time.RFC3339, fmt.Sprint(first["synced_at"]))
	if err != nil || time.Since(at) > time.Minute {
		t.Fatalf("mail_list's synced_at is %v, want a time of the last minute", first["synced_at"])
	}
	if !strings.Contains(ws.stderr.String(), "watch: syncing as the lock holder") {
		t.Fatalf("the only server does not say it syncs: %s", ws.stderr.String())
	}
	id := fmt.Sprint(first["messages"].([]any)[0].(map[string]any)["id"])
	uri := "postern://thread/" + id
	if _, err := ws.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if err := ws.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(watchInterval + time.Second) // a poll of everything that brings nothing: nobody is told
	select {
	case u := <-updated:
		t.Fatalf("told %s changed when nothing came", u)
	default:
	}
	h.appendMail(t, "Re: Harbour plans", "harbour-2@example.org", "harbour-1@example.org")
	waitListed(t, ctx, ws, "Re: Harbour plans", 5*time.Second)
	select {
	case u := <-updated:
		if u != uri {
			t.Fatalf("told %s changed, want %s", u, uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("not told within 5 s that %s changed", uri)
	}
	for _, name := range []string{generated.ToolStatus, generated.ToolMailFolders, generated.ToolMailSenders, generated.ToolMailSearch, generated.ToolMailThread} {
		args := map[string]any{}
		switch name {
		case generated.ToolMailSearch:
			args["query"] = "harbour"
		case generated.ToolMailThread:
			args["id"] = id
		}
		res, err := ws.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(b), `"synced_at":"`) {
			t.Fatalf("%s says nothing of how fresh the store is: %s", name, b)
		}
	}
}

// TestWatchThreeServersOneSyncer: three servers on one store elect one syncer (the holder of
// the watch lock, whose id the lock file holds); all three list new mail; the syncer killed,
// another takes over within one interval and new mail still comes.
func TestWatchThreeServersOneSyncer(t *testing.T) {
	h := newWatchHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for range 3 {
		h.serve(t, ctx, nil)
	}
	lockFile := filepath.Join(h.dataDir, store.File+store.WatchLockSuffix)
	holder := func() *watchServer {
		t.Helper()
		end := time.Now().Add(15 * time.Second)
		for time.Now().Before(end) {
			b, _ := os.ReadFile(lockFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			for _, ws := range h.sessions {
				if ws.cmd.Process != nil && ws.cmd.Process.Pid == pid && ws.cmd.ProcessState == nil {
					return ws
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("no live server holds the watch lock %s", lockFile)
		return nil
	}
	syncer := holder()
	waitListed(t, ctx, syncer, "Harbour plans", 15*time.Second)
	leaders := 0
	for _, ws := range h.sessions {
		if strings.Contains(ws.stderr.String(), "watch: syncing as the lock holder") {
			leaders++
		}
	}
	if leaders != 1 {
		t.Fatalf("%d servers say they sync, want 1", leaders)
	}
	h.appendMail(t, "Ferry times", "ferry-1@example.org", "")
	for _, ws := range h.sessions {
		waitListed(t, ctx, ws, "Ferry times", 5*time.Second)
	}
	syncer.cmd.Process.Kill() // SIGKILL: no goodbye, the kernel frees the lock
	killed := time.Now()
	syncer.cmd.Wait()
	h.appendMail(t, "Kiln repair", "kiln-1@example.org", "")
	var next *watchServer
	for next == nil {
		for _, ws := range h.sessions {
			if ws != syncer && strings.Contains(ws.stderr.String(), "watch: syncing as the lock holder") {
				next = ws
			}
		}
		if time.Since(killed) > watchInterval+time.Second {
			t.Fatalf("no server took over within one interval (%s) of the syncer's death", watchInterval)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, ws := range h.sessions {
		if ws != syncer {
			waitListed(t, ctx, ws, "Kiln repair", 5*time.Second)
		}
	}
	if got := holder(); got != next {
		t.Fatal("the lock file does not name the server that says it syncs")
	}
}

// TestWatchCommandStopsCleanly: postern watch syncs in the foreground and SIGTERM ends it at
// once with status 0, the lock freed.
func TestWatchCommandStopsCleanly(t *testing.T) {
	h := newWatchHome(t)
	cmd := exec.Command(binary, "watch", "--config", h.cfg)
	cmd.Env = h.env
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(15 * time.Second)
	for !strings.Contains(stderr.String(), "watch: syncing as the lock holder") {
		if time.Now().After(end) {
			cmd.Process.Kill()
			t.Fatalf("postern watch did not start syncing: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // most likely mid-sync
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("postern watch after SIGINT: %v (%s)", err, stderr.String())
		}
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		t.Fatal("postern watch did not stop within 3 s of SIGINT")
	}
	lock, err := store.LockWatch(filepath.Join(h.dataDir, store.File))
	if err != nil {
		t.Fatalf("the watch lock is still held: %v", err)
	}
	lock.Unlock()
	if out, errOut, code := runCLI(t, h.env, "sync", "--config", h.cfg); code != 0 {
		t.Fatalf("sync after watch stopped: %s %s", out, errOut)
	}
}

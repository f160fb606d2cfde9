package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

// harness runs Run on a real store with the real mail sync (mailsync.Run), recording each
// sync's accounts and every log line; the configuration can be changed while it runs.
type harness struct {
	t     *testing.T
	st    *store.Store
	mu    sync.Mutex
	cfg   *config.Config
	err   error
	logs  []string
	calls [][]string
	reads int // calls of Config
	done  chan error
	stop  context.CancelFunc
}

func newHarness(t *testing.T, interval time.Duration, accts ...config.Account) *harness {
	t.Helper()
	t.Setenv("POSTERN_SYNC_MIN_INTERVAL", "10ms")
	st, err := store.Open(filepath.Join(t.TempDir(), "data", "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, st: st}
	h.setAccounts(interval, accts...)
	return h
}

func (h *harness) setAccounts(interval time.Duration, accts ...config.Account) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cfg = &config.Config{Accounts: accts}
	h.cfg.Sync.Interval = config.Duration{Duration: interval}
	h.err = nil
}

func (h *harness) setError(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
}

func (h *harness) options() Options {
	return Options{
		StorePath: h.st.Path(),
		Config: func() (*config.Config, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.reads++
			if h.err != nil {
				return nil, h.err
			}
			c := *h.cfg
			return &c, nil
		},
		Sync: func(ctx context.Context, accts []config.Account) ([]mailsync.Outcome, error) {
			var names []string
			for _, a := range accts {
				names = append(names, a.Name)
			}
			h.mu.Lock()
			h.calls = append(h.calls, names)
			h.mu.Unlock()
			return mailsync.Run(ctx, h.st, accts, mailsync.Options{})
		},
		Open: kinds.Open,
		Log: func(s string) {
			h.mu.Lock()
			h.logs = append(h.logs, s)
			h.mu.Unlock()
		},
	}
}

func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	h.done = make(chan error, 1)
	opt := h.options()
	go func() { h.done <- Run(ctx, opt) }()
	h.t.Cleanup(h.end)
}

// end stops Run and checks it returns nil at once.
func (h *harness) end() {
	h.t.Helper()
	if h.stop == nil {
		return
	}
	h.stop()
	h.stop = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run returned %v when its context ended; want nil", err)
		}
	case <-time.After(5 * time.Second):
		h.t.Fatal("Run did not return within 5s of its context ending")
	}
}

func (h *harness) nCalls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

// logged counts the log lines holding every part.
func (h *harness) logged(parts ...string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.logs {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			n++
		}
	}
	return n
}

func (h *harness) allLogs() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.logs, "\n")
}

// waitFor polls cond until it holds, failing the test after within.
func (h *harness) waitFor(what string, within time.Duration, cond func() bool) {
	h.t.Helper()
	end := time.Now().Add(within)
	for !cond() {
		if time.Now().After(end) {
			h.t.Fatalf("after %s: %s did not happen; log:\n%s", within, what, h.allLogs())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// maildir makes a Maildir holding n messages and returns its path.
func maildir(t *testing.T, n int) string {
	t.Helper()
	md := filepath.Join(t.TempDir(), "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		addFile(t, md, i)
	}
	return md
}

func addFile(t *testing.T, md string, i int) {
	t.Helper()
	raw := fmt.Sprintf("From: Ann <ann@example.com>\r\nSubject: number %d\r\nMessage-ID: <w%d@example.com>\r\n\r\ntext\r\n", i, i)
	if err := os.WriteFile(filepath.Join(md, "cur", fmt.Sprintf("%d.host:2,S", 5000+i)), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunSyncsAtOnceThenEachInterval: the lock holder syncs a new account at once, tells what
// came in, polls again each interval (mail added meanwhile is told), and when stopped
// returns nil and frees the watch lock for the next process.
func TestRunSyncsAtOnceThenEachInterval(t *testing.T) {
	md := maildir(t, 3)
	h := newHarness(t, 150*time.Millisecond, config.Account{Name: "home", Kind: "maildir", Path: md})
	h.start()
	h.waitFor("the first sync's report", 3*time.Second, func() bool { return h.logged("account home: 3 new, 0 gone") == 1 })
	if h.logged("syncing as the lock holder") != 1 {
		t.Errorf("the lock holder did not say it syncs; log:\n%s", h.allLogs())
	}
	addFile(t, md, 3)
	h.waitFor("the next poll's report of the added message", 3*time.Second, func() bool { return h.logged("account home: 1 new, 0 gone") == 1 })
	h.end()
	lock, err := store.LockWatch(h.st.Path())
	if err != nil {
		t.Fatalf("the watch lock is still held after Run returned: %v", err)
	}
	lock.Unlock()
}

// TestRunOtherHolderOnlyReads: while another process holds the watch lock this one does not
// sync, says so once (not at each retry), and takes over soon after the holder stops.
func TestRunOtherHolderOnlyReads(t *testing.T) {
	h := newHarness(t, 20*time.Millisecond, config.Account{Name: "home", Kind: "maildir", Path: maildir(t, 1)})
	other, err := store.LockWatch(h.st.Path())
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitFor("the note that it only reads", 3*time.Second, func() bool { return h.logged("only reads") > 0 })
	time.Sleep(60 * time.Millisecond) // several retries, at interval/2
	if n := h.nCalls(); n != 0 {
		t.Fatalf("%d syncs while another process held the watch lock", n)
	}
	if n := h.logged("keeps this store synced", "this one only reads, and takes over if it stops"); n != 1 {
		t.Errorf("the reader said it only reads %d times; want once. log:\n%s", n, h.allLogs())
	}
	other.Unlock()
	h.waitFor("the take-over's sync", 3*time.Second, func() bool { return h.logged("account home: 1 new, 0 gone") == 1 })
}

// TestRunFailureSaidOnceThenRecovers: an account whose sync fails is tried again with a
// backoff, its error told once however often it repeats, and its recovery told.
func TestRunFailureSaidOnceThenRecovers(t *testing.T) {
	md := filepath.Join(t.TempDir(), "Maildir")
	h := newHarness(t, 60*time.Millisecond, config.Account{Name: "home", Kind: "maildir", Path: md})
	h.start()
	h.waitFor("three failed syncs", 5*time.Second, func() bool { return h.nCalls() >= 3 })
	if n := h.logged("account home: ", "; trying again within"); n != 1 {
		t.Fatalf("the same failure was told %d times over %d syncs; want once. log:\n%s", n, h.nCalls(), h.allLogs())
	}
	if err := os.MkdirAll(md, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	addFile(t, md, 0)
	h.waitFor("the recovery note", 5*time.Second, func() bool { return h.logged("account home syncs again") == 1 })
	h.waitFor("the recovered sync's report", 5*time.Second, func() bool { return h.logged("account home: 1 new, 0 gone") == 1 })
}

// TestRunWaitsForAnotherSync: while a postern sync holds the writer lock, the watcher's
// syncs are refused; that is not a failure to tell the person, and it syncs once it is free.
func TestRunWaitsForAnotherSync(t *testing.T) {
	h := newHarness(t, 60*time.Millisecond, config.Account{Name: "home", Kind: "maildir", Path: maildir(t, 2)})
	busy, err := store.LockWriter(h.st.Path())
	if err != nil {
		t.Fatal(err)
	}
	h.start()
	h.waitFor("two refused syncs", 5*time.Second, func() bool { return h.nCalls() >= 2 })
	if n := h.logged("account home"); n != 0 {
		t.Errorf("a sync refused because another runs was told as a failure; log:\n%s", h.allLogs())
	}
	busy.Unlock()
	h.waitFor("the sync once the lock is free", 5*time.Second, func() bool { return h.logged("account home: 2 new, 0 gone") == 1 })
}

// TestRunFollowsTheConfiguration: an account added while watching is synced, one removed is
// no longer synced, and a configuration that cannot be read is told once and not acted on.
func TestRunFollowsTheConfiguration(t *testing.T) {
	a := config.Account{Name: "a", Kind: "maildir", Path: maildir(t, 1)}
	b := config.Account{Name: "b", Kind: "maildir", Path: maildir(t, 2)}
	h := newHarness(t, 60*time.Millisecond, a)
	h.start()
	h.waitFor("a's first sync", 3*time.Second, func() bool { return h.logged("account a: 1 new") == 1 })
	h.setAccounts(60*time.Millisecond, a, b)
	h.waitFor("b, added, synced", 3*time.Second, func() bool { return h.logged("account b: 2 new") == 1 })
	h.setAccounts(60*time.Millisecond, b)
	h.mu.Lock()
	from := len(h.calls)
	h.mu.Unlock()
	h.waitFor("two more syncs", 3*time.Second, func() bool { return h.nCalls() >= from+3 })
	h.mu.Lock()
	for _, c := range h.calls[from+1:] {
		for _, n := range c {
			if n == "a" {
				t.Errorf("account a was synced after it left the configuration: %v", h.calls[from:])
			}
		}
	}
	reads := h.reads
	h.mu.Unlock()
	// Between polls it waits: the schedule of the account removed does not wake it.
	time.Sleep(50 * time.Millisecond)
	h.mu.Lock()
	if n := h.reads - reads; n > 20 {
		t.Errorf("the configuration was read %d times in 50ms with a 60ms interval: the watcher spins", n)
	}
	h.mu.Unlock()
	h.setError(errors.New("config.toml line 3: expected a value"))
	h.waitFor("the configuration error", 3*time.Second, func() bool {
		return h.logged("watch: config.toml line 3: expected a value; syncing again once it can be read") == 1
	})
	h.mu.Lock()
	from = len(h.calls)
	h.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	if n := h.nCalls(); n != from {
		t.Errorf("%d syncs while the configuration could not be read", n-from)
	}
	if n := h.logged("syncing again once it can be read"); n != 1 {
		t.Errorf("the configuration error was told %d times; want once", n)
	}
}

// TestRunWithoutAccountsHoldsNoLock: with no account configured nothing is synced and the
// watch lock stays free for a process that has some.
func TestRunWithoutAccountsHoldsNoLock(t *testing.T) {
	h := newHarness(t, 20*time.Millisecond)
	h.start()
	time.Sleep(40 * time.Millisecond)
	lock, err := store.LockWatch(h.st.Path())
	if err != nil {
		t.Fatalf("a watcher without accounts holds the watch lock: %v", err)
	}
	lock.Unlock()
	if n := h.nCalls(); n != 0 {
		t.Errorf("%d syncs without accounts", n)
	}
}

// TestRunCannotMakeDataFolder: a data folder that cannot be made is an error naming it.
func TestRunCannotMakeDataFolder(t *testing.T) {
	t.Setenv("POSTERN_SYNC_MIN_INTERVAL", "10ms")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Accounts: []config.Account{{Name: "home", Kind: "maildir", Path: "x"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := Run(ctx, Options{
		StorePath: filepath.Join(file, "data", "store.db"),
		Config:    func() (*config.Config, error) { return cfg, nil },
		Sync: func(context.Context, []config.Account) ([]mailsync.Outcome, error) {
			t.Error("synced without a data folder")
			return nil, nil
		},
	})
	if err == nil || !strings.Contains(err.Error(), "cannot create the data folder "+filepath.Join(file, "data")) {
		t.Fatalf("Run = %v; want the data folder named", err)
	}
}

// TestRunNotSynced: an account the sync gave no outcome for is told as not synced.
func TestRunNotSynced(t *testing.T) {
	t.Setenv("POSTERN_SYNC_MIN_INTERVAL", "10ms")
	cfg := &config.Config{Accounts: []config.Account{{Name: "home", Kind: "maildir"}}}
	cfg.Sync.Interval = config.Duration{Duration: time.Minute}
	var mu sync.Mutex
	var logs []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			StorePath: filepath.Join(t.TempDir(), "store.db"),
			Config:    func() (*config.Config, error) { return cfg, nil },
			Sync: func(context.Context, []config.Account) ([]mailsync.Outcome, error) {
				return []mailsync.Outcome{{Account: "someone else"}}, nil
			},
			Log: func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() },
		})
	}()
	end := time.Now().Add(3 * time.Second)
	for {
		mu.Lock()
		got := strings.Join(logs, "\n")
		mu.Unlock()
		if strings.Contains(got, "account home: it was not synced; trying again within") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no 'not synced' line; log:\n%s", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestBackoff: the wait after failures doubles from 1 s, never exceeds the interval nor
// 5 minutes, and is at least half of its step.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		n        int
		interval time.Duration
		lo, hi   time.Duration
	}{
		{1, time.Hour, 500 * time.Millisecond, time.Second},
		{2, time.Hour, time.Second, 2 * time.Second},
		{4, time.Hour, 4 * time.Second, 8 * time.Second},
		{4, 3 * time.Second, 1500 * time.Millisecond, 3 * time.Second},
		{60, time.Hour, 150 * time.Second, 5 * time.Minute},
	} {
		for range 50 {
			if d := backoff(c.n, c.interval); d < c.lo || d > c.hi {
				t.Fatalf("backoff(%d, %s) = %s; want within [%s, %s]", c.n, c.interval, d, c.lo, c.hi)
			}
		}
	}
}

// imapAccount is u as configured, its password from a command.
func imapAccount(u *imaptest.User, server string) config.Account {
	return config.Account{Name: "work", Kind: "imap", Server: server, User: u.Name, TLS: "none",
		PasswordCmd: "printf '%s\\n' '" + u.Password + "'"}
}

// TestRunIdleSyncsNewMailAtOnce: with a real Dovecot, a message arriving in INBOX is synced
// within seconds, long before the next poll is due.
func TestRunIdleSyncsNewMailAtOnce(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	h := newHarness(t, time.Hour, imapAccount(u, srv.Addr))
	h.start()
	// The first sync, then the one IDLE asks for once it waits.
	h.waitFor("IDLE waiting", 10*time.Second, func() bool { return h.nCalls() >= 2 })
	u.AddMessage(t, "INBOX", testmsg.Plain("a@example.test", "b@example.test", "", "hello", "idle@example.test"), "")
	h.waitFor("the new message synced through IDLE", 10*time.Second, func() bool { return h.logged("account work: 1 new, 0 gone") == 1 })
}

// TestRunIdleConnectionFails: an account whose server cannot be reached is told, for IDLE
// and for its sync, and tried again; nothing else stops.
func TestRunIdleConnectionFails(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	h := newHarness(t, 80*time.Millisecond, imapAccount(u, "127.0.0.1:1"))
	h.start()
	h.waitFor("IDLE's reconnection note", 5*time.Second, func() bool { return h.logged("watch: account work: ", "; connecting again within") > 0 })
	h.waitFor("the sync's failure note", 5*time.Second, func() bool { return h.logged("watch: account work: ", "; trying again within") > 0 })
	// The account fixed in the configuration: its sync recovers, and IDLE restarts on the
	// new server, so that mail arriving after that sync comes in without waiting an hour.
	h.setAccounts(time.Hour, imapAccount(u, srv.Addr))
	h.waitFor("the recovery", 10*time.Second, func() bool { return h.logged("account work syncs again") == 1 })
	u.AddMessage(t, "INBOX", testmsg.Plain("a@example.test", "b@example.test", "", "hi", "fixed@example.test"), "")
	h.waitFor("the fixed account synced", 10*time.Second, func() bool { return h.logged("account work: 1 new, 0 gone") == 1 })
}

// TestRunNoIdleIsPolled: a server without IDLE is said to be polled, once.
func TestRunNoIdleIsPolled(t *testing.T) {
	srv := imaptest.NewServerWith(t, imaptest.Options{Capability: "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE LITERAL+ SPECIAL-USE CONDSTORE UIDPLUS MOVE"})
	u := srv.NewUser(t)
	h := newHarness(t, time.Hour, imapAccount(u, srv.Addr))
	h.start()
	h.waitFor("the no-IDLE note", 10*time.Second, func() bool {
		return h.logged("watch: account work: the server offers no IDLE; its INBOX is polled every 1h0m0s like its other folders") == 1
	})
	time.Sleep(30 * time.Millisecond)
	if n := h.logged("offers no IDLE"); n != 1 {
		t.Errorf("told %d times; want once", n)
	}
}

package mailsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/store"
)

// newMaildir makes a Maildir of n messages in cur.
func newMaildir(t *testing.T, n int) string {
	t.Helper()
	md := filepath.Join(t.TempDir(), "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		raw := fmt.Sprintf("From: Ann <ann@example.com>\r\nSubject: number %d\r\nMessage-ID: <n%d@example.com>\r\n\r\ntext\r\n", i, i)
		if err := os.WriteFile(filepath.Join(md, "cur", fmt.Sprintf("%d.host:2,S", 1000+i)), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return md
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestRunEachAccount: an account that fails (a kind without a row) does not stop the next,
// and each Outcome says what its sync did.
func TestRunEachAccount(t *testing.T) {
	st := openStore(t)
	accts := []config.Account{
		{Name: "cal", Kind: "jmap"},
		{Name: "home", Kind: "maildir", Path: newMaildir(t, 3)},
	}
	outs, err := Run(context.Background(), st, accts, Options{})
	if err != nil || len(outs) != 2 {
		t.Fatalf("Run: %d outcomes, %v", len(outs), err)
	}
	if !strings.Contains(outs[0].Error, `account cal has kind "jmap", which postern cannot sync`) || outs[0].Interrupted {
		t.Errorf("the unknown kind's outcome: %+v", outs[0])
	}
	if o := outs[1]; o.Error != "" || o.New != 3 || o.Folders != 1 {
		t.Errorf("the Maildir's outcome: %+v; want 3 new in 1 folder", o)
	}
	outs, _ = Run(context.Background(), st, accts[1:], Options{})
	if o := outs[0]; o.Error != "" || o.New != 0 {
		t.Errorf("a second run: %+v; want nothing new", o)
	}
}

// TestRunInterrupted: ctx ending during an account marks it Interrupted with the sentence
// the person reads, starts no further account, keeps what was committed and frees the lock.
func TestRunInterrupted(t *testing.T) {
	st := openStore(t)
	accts := []config.Account{
		{Name: "first", Kind: "maildir", Path: newMaildir(t, 30)},
		{Name: "second", Kind: "maildir", Path: newMaildir(t, 5)},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outs, err := Run(ctx, st, accts, Options{BatchSize: 10, AfterBatch: func(string, int) { cancel() }})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 {
		t.Fatalf("%d outcomes; the second account must not start after the interruption", len(outs))
	}
	o := outs[0]
	want := "the sync of first was interrupted; what it stored is kept and the next sync continues from there"
	if !o.Interrupted || o.Error != want || o.New != 10 {
		t.Fatalf("outcome %+v; want interrupted after the first batch of 10", o)
	}
	outs, err = Run(context.Background(), st, accts, Options{})
	if err != nil || len(outs) != 2 || outs[0].New != 20 || outs[1].New != 5 {
		t.Fatalf("the next run: %+v, %v; want the 20 left and the second account's 5", outs, err)
	}
}

// TestRunHoldsTheLock: a second writer is refused while a run holds the lock.
func TestRunHoldsTheLock(t *testing.T) {
	st := openStore(t)
	var second error
	_, err := Run(context.Background(), st, []config.Account{{Name: "home", Kind: "maildir", Path: newMaildir(t, 2)}}, Options{
		AfterBatch: func(string, int) {
			_, second = Run(context.Background(), st, nil, Options{})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if second == nil || !strings.Contains(second.Error(), "another sync is running") {
		t.Fatalf("a second Run while the first held the writer lock: %v", second)
	}
}

// TestRunRecordsEachEnd: the run records each account's last sync once, whatever its kind: a
// success clears the last error, a failure after the account was reached is said by status, a
// sync that never reached the account (no Maildir there) or that ctx stopped records nothing.
func TestRunRecordsEachEnd(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	icsDir := t.TempDir()
	accts := []config.Account{
		{Name: "home", Kind: "maildir", Path: newMaildir(t, 2)},
		{Name: "gone", Kind: "maildir", Path: filepath.Join(t.TempDir(), "nothing")},
		{Name: "cal", Kind: "ics", Path: icsDir},
		{Name: "dav", Kind: "caldav", CalDAV: "http://127.0.0.1:1/dav/", User: "u", PasswordCmd: "echo pw"},
	}
	before := time.Now().Add(-time.Second)
	outs, err := Run(ctx, st, accts, Options{})
	if err != nil || len(outs) != 4 {
		t.Fatalf("Run: %+v, %v", outs, err)
	}
	stats, err := st.AccountStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"home", "cal"} {
		if x, ok := stats[name]; !ok || x.LastSync.Before(before) || x.LastError != "" {
			t.Errorf("account %s: %+v (in the store: %v); want synced now, without an error", name, x, ok)
		}
	}
	if x, ok := stats["dav"]; !ok || x.LastSync.Before(before) || x.LastError == "" || x.LastError != outs[3].Error {
		t.Errorf("account dav: %+v (in the store: %v); want its failure %q recorded", x, ok, outs[3].Error)
	}
	if x, ok := stats["gone"]; ok {
		t.Errorf("account gone: %+v; a sync that never reached it records nothing", x)
	}
	if outs[1].Error == "" {
		t.Errorf("account gone: no error in its outcome")
	}
	// A run that ctx stops records nothing new.
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	last := stats["home"].LastSync
	time.Sleep(1100 * time.Millisecond)
	if _, err := Run(stopped, st, accts[:1], Options{}); err != nil {
		t.Fatal(err)
	}
	stats, _ = st.AccountStats(ctx)
	if !stats["home"].LastSync.Equal(last) {
		t.Errorf("a stopped run recorded a sync: %v, was %v", stats["home"].LastSync, last)
	}
}

package sync_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/rules"
	"github.com/postern-mcp/postern/internal/source/maildir"
	"github.com/postern-mcp/postern/internal/store"
	syncrun "github.com/postern-mcp/postern/internal/sync"
	"github.com/postern-mcp/postern/internal/tools"
)

// fixture is a home with a Maildir account, a notes folder and a configuration naming both.
type fixture struct {
	dir, cfgPath, storePath, mbox string
	acct                          config.Account
	svc                           *tools.Service
}

func newFixture(t *testing.T, messages int) *fixture {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(dir, strings.ToLower(v)))
	}
	f := &fixture{dir: dir, cfgPath: filepath.Join(dir, "config.toml"), storePath: filepath.Join(dir, "store.db"), mbox: filepath.Join(dir, "Maildir")}
	if _, err := corpus.WriteMaildir(f.mbox, corpus.Options{Seed: 3, Messages: messages}); err != nil {
		t.Fatal(err)
	}
	notesDir := filepath.Join(dir, "Notes")
	os.MkdirAll(notesDir, 0o700)
	for i := range 3 {
		os.WriteFile(filepath.Join(notesDir, fmt.Sprintf("n%d.md", i)), []byte(fmt.Sprintf("# Note %d\n\nsome text\n", i)), 0o600)
	}
	f.acct = config.Account{Name: "archive", Kind: maildir.KindName, Path: f.mbox}
	if err := config.AddAccount(f.cfgPath, f.acct); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f.cfgPath)
	os.WriteFile(f.cfgPath, append(b, []byte(fmt.Sprintf("\n[notes]\nfolder = %q\n", notesDir))...), 0o600)
	f.svc = &tools.Service{Version: "test", Config: config.NewWatcher(f.cfgPath), StorePath: f.storePath}
	t.Cleanup(func() { f.svc.Close() })
	return f
}

// addMessage delivers one more message to the Maildir's INBOX.
func (f *fixture) addMessage(t *testing.T, n int) {
	t.Helper()
	raw := fmt.Sprintf("From: Alice <alice@example.com>\r\nTo: sam@example.com\r\nSubject: new %d\r\nMessage-ID: <new-%d@example.com>\r\nDate: %s\r\n\r\nhello\r\n", n, n, time.Now().Format(time.RFC1123Z))
	if err := os.WriteFile(filepath.Join(f.mbox, "new", fmt.Sprintf("%d.new%d.test", time.Now().UnixNano(), n)), []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
}

func storedMessages(t *testing.T, path string) int {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stats, err := st.AccountStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return stats["archive"].Messages
}

func TestRunSyncsMailThenNotes(t *testing.T) {
	f := newFixture(t, 40)
	var order []string
	r := &syncrun.Runner{StorePath: f.storePath, Tools: f.svc, Notes: true, Mailed: func(outs []mailsync.Outcome) {
		order = append(order, fmt.Sprintf("mailed %d", len(outs)))
	}}
	res, err := r.Run(context.Background(), []config.Account{f.acct})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mail) != 1 || res.Mail[0].Error != "" || res.Mail[0].New == 0 {
		t.Fatalf("mail outcome = %+v, want the account synced", res.Mail)
	}
	if got := storedMessages(t, f.storePath); got != res.Stored() || got == 0 {
		t.Fatalf("the store holds %d messages, the run says it stored %d", got, res.Stored())
	}
	if res.Cut || res.RulesErr != nil {
		t.Fatalf("cut %v, rules error %v", res.Cut, res.RulesErr)
	}
	if res.Notes == nil || res.Notes.Notes != 3 || res.Notes.Added != 3 {
		t.Fatalf("notes = %+v, want the 3 notes indexed", res.Notes)
	}
	if len(order) != 1 || order[0] != "mailed 1" {
		t.Fatalf("Mailed was told %v", order)
	}
	// A second run finds nothing new, and the notes unchanged.
	res, err = r.Run(context.Background(), []config.Account{f.acct})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored() != 0 || res.Notes.Added != 0 || res.Notes.Notes != 3 {
		t.Fatalf("second run stored %d, notes %+v", res.Stored(), res.Notes)
	}
}

func TestRunOnlyNotesWithoutAccounts(t *testing.T) {
	f := newFixture(t, 0)
	res, err := (&syncrun.Runner{StorePath: f.storePath, Tools: f.svc, Notes: true}).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mail) != 0 || res.Notes == nil || res.Notes.Notes != 3 {
		t.Fatalf("mail %v, notes %+v: want only the notes indexed", res.Mail, res.Notes)
	}
	// Without Notes, nothing at all is done.
	res, err = (&syncrun.Runner{StorePath: f.storePath, Tools: f.svc}).Run(context.Background(), nil)
	if err != nil || res.Notes != nil || len(res.Mail) != 0 {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

func TestFailedAccountGetsNoRules(t *testing.T) {
	f := newFixture(t, 5)
	gone := config.Account{Name: "gone", Kind: maildir.KindName, Path: filepath.Join(f.dir, "no-such-maildir")}
	res, err := (&syncrun.Runner{StorePath: f.storePath, Tools: f.svc}).Run(context.Background(), []config.Account{gone, f.acct})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mail) != 2 || res.Mail[0].Error == "" || res.Mail[1].Error != "" {
		t.Fatalf("outcomes %+v: want the missing Maildir failed and the other synced", res.Mail)
	}
	for _, run := range res.Rules {
		if run.Account == "gone" {
			t.Fatalf("the rules ran over an account whose sync failed: %+v", run)
		}
	}
	if len(res.Rules) != 1 || res.Rules[0].Account != "archive" {
		t.Fatalf("rules ran over %+v, want archive only", res.Rules)
	}
}

// A rule that cannot run is said in its account's outcome, as mail_sync and the watch loop
// report it, and the account's new mail is stored all the same.
func TestSyncPutsRuleFailureInOutcome(t *testing.T) {
	f := newFixture(t, 5)
	r := &syncrun.Runner{StorePath: f.storePath, Tools: f.svc}
	if _, err := r.Sync(context.Background(), []config.Account{f.acct}); err != nil {
		t.Fatal(err) // the first sync marks the mail there as seen by the rules
	}
	err := rules.Save(rules.Path(f.cfgPath), []generated.Rule{{Name: "broken", Match: "nosuchoperator:x (", Actions: []generated.RuleAction{{Do: "archive"}}, State: rules.Enabled}})
	if err != nil {
		t.Fatal(err)
	}
	f.addMessage(t, 1)
	outs, err := r.Sync(context.Background(), []config.Account{f.acct})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].New != 1 {
		t.Fatalf("outcomes %+v: want the new message stored", outs)
	}
	if !strings.Contains(outs[0].Error, "the rules did not all run") || !strings.Contains(outs[0].Error, "broken") {
		t.Fatalf("outcome error %q: want the broken rule named", outs[0].Error)
	}
}

// A sync lock another process holds is waited for as long as Wait says, and no longer.
func TestWaitForSyncLock(t *testing.T) {
	f := newFixture(t, 5)
	os.MkdirAll(filepath.Dir(f.storePath), 0o700)
	st, err := store.Open(f.storePath)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	lock, err := store.LockWriter(f.storePath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&syncrun.Runner{StorePath: f.storePath, Tools: f.svc}).Sync(context.Background(), []config.Account{f.acct})
	if !store.IsBusy(err) {
		lock.Unlock()
		t.Fatalf("err = %v, want the lock's holder named at once", err)
	}
	time.AfterFunc(400*time.Millisecond, func() { lock.Unlock() })
	outs, err := (&syncrun.Runner{StorePath: f.storePath, Tools: f.svc, Wait: 10 * time.Second}).Sync(context.Background(), []config.Account{f.acct})
	if err != nil || len(outs) != 1 || outs[0].New == 0 {
		t.Fatalf("outs %+v, err %v: want the sync done once the lock was released", outs, err)
	}
}

func TestPeakMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	if got := syncrun.PeakMemory(); !strings.HasSuffix(got, " MiB") {
		t.Fatalf("PeakMemory() = %q", got)
	}
}

func TestProfileWritesBesideExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	os.WriteFile(path, []byte("keep"), 0o600)
	syncrun.Profile(path)()
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Fatalf("the existing profile was overwritten")
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("no profile beside it: %v", err)
	}
	syncrun.Profile("")() // nothing to write
}

func TestInterruptedReportsOnce(t *testing.T) {
	in := &syncrun.Interrupted{Signal: syscall.SIGTERM}
	var b strings.Builder
	if code := in.Report(&b, 1); code != 143 {
		t.Fatalf("exit status %d, want 143", code)
	}
	if code := in.Report(&b, 7); code != 143 {
		t.Fatalf("exit status %d", code)
	}
	want := "postern: sync interrupted by SIGTERM; what it stored is kept (1 new message); run postern sync again to continue where it stopped.\n"
	if b.String() != want {
		t.Fatalf("said %q, want %q once", b.String(), want)
	}
	if in.Error() != "SIGTERM received" {
		t.Fatalf("Error() = %q", in.Error())
	}
}

// The first SIGINT ends the context with the signal as its cause; without stop, the grace
// timer reports it and exits with 130.
func TestOnSignal(t *testing.T) {
	var b strings.Builder
	exited := make(chan int, 1)
	ctx, stop := syncrun.OnSignal(&b, func(code int) { exited <- code })
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGINT did not end the context")
	}
	var in *syncrun.Interrupted
	if !errors.As(context.Cause(ctx), &in) || in.Signal != syscall.SIGINT {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	select {
	case code := <-exited:
		if code != 130 || !strings.Contains(b.String(), "interrupted by SIGINT") {
			t.Fatalf("exit %d, said %q", code, b.String())
		}
	case <-time.After(syncrun.StopGrace + 3*time.Second):
		t.Fatal("no exit after the grace")
	}
}

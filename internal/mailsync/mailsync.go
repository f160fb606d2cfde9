// Package mailsync runs a sync of configured accounts (IMAP servers or local
// Maildirs) into the store, holding the single-writer lock. It runs each
// account's password command at sync time and never keeps, logs or returns
// the password.
package mailsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/imapsync"
	"github.com/postern-mcp/postern/internal/store"
)

// Outcome is what a sync did for one account.
type Outcome struct {
	Account      string
	New          int
	Deleted      int
	FlagsChanged int
	Folders      int
	Renamed      int
	Error        string
	// Interrupted is set when ctx ended during this account's sync: Error
	// then says so, and what was committed before is kept.
	Interrupted bool
}

// Options tune a run.
type Options struct {
	Progress   func(imapsync.Progress)
	AfterBatch func(folder string, stored int)
	BatchSize  int
	// Warn, when set, is told in one sentence about each file of a Maildir
	// that was skipped or cut, naming it relative to the Maildir.
	Warn func(msg string)
}

// Run syncs each account in turn, taking the writer lock for the whole run.
// An account that fails does not stop the others; its Outcome says why. When
// ctx ends, the account being synced stops at once (every blocking read
// honours ctx: a Maildir file, the IMAP connection, the password command),
// its Outcome is marked Interrupted, no other account is started, and the
// lock is released; what was committed is kept and the next run continues.
func Run(ctx context.Context, st *store.Store, accounts []config.Account, opt Options) ([]Outcome, error) {
	lock, err := store.LockWriter(st.Path())
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	var outs []Outcome
	for _, a := range accounts {
		o := Outcome{Account: a.Name}
		var res *imapsync.Result
		var err error
		switch a.Kind {
		case "imap":
			res, err = imapsync.Sync(ctx, st, IMAPAccount(a), imapsync.Options{Progress: opt.Progress, AfterBatch: opt.AfterBatch, BatchSize: opt.BatchSize})
		case "maildir":
			res, err = SyncMaildir(ctx, st, a, opt)
		default:
			err = fmt.Errorf("account %s has kind %q, which postern cannot sync", a.Name, a.Kind)
		}
		if res != nil {
			o.New, o.Deleted, o.FlagsChanged, o.Folders, o.Renamed = res.New, res.Deleted, res.FlagsChanged, res.Folders, res.Renamed
		}
		if err != nil {
			o.Error = err.Error()
		}
		if err != nil && ctx.Err() != nil {
			o.Interrupted = true
			o.Error = fmt.Sprintf("the sync of %s was interrupted; what it stored is kept and the next sync continues from there", a.Name)
		}
		outs = append(outs, o)
		if ctx.Err() != nil {
			break
		}
	}
	return outs, nil
}

// IMAPAccount turns a configured account into what imapsync needs.
func IMAPAccount(a config.Account) imapsync.Account {
	return imapsync.Account{
		Name: a.Name, Server: a.Server, User: a.User, TLS: a.TLS, TrustedAuthServ: a.TrustedAuthServ, CAFile: a.TLSCA,
		Password: func(ctx context.Context) (string, error) { return Password(ctx, a) },
	}
}

// Password runs the account's password command and returns the first line it prints.
func Password(ctx context.Context, a config.Account) (string, error) {
	if strings.TrimSpace(a.PasswordCmd) == "" {
		return "", fmt.Errorf("account %s has no password command; add one with postern account add %s … --password-cmd CMD", a.Name, a.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", a.PasswordCmd)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// When ctx ends the shell is killed; a program it started that keeps the
	// output open (a pinentry, a sleep) is given half a second before Run
	// returns. A command that exited well but left such a program behind is
	// a success (ErrWaitDelay): its output was read.
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Run(); err != nil && !(errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil) {
		var ee *exec.ExitError
		why := err.Error()
		if errors.As(err, &ee) {
			why = fmt.Sprintf("exit status %d", ee.ExitCode())
		}
		return "", fmt.Errorf("the password command of account %s failed (%s); run it in a terminal to see why", a.Name, why)
	}
	pw, _, _ := strings.Cut(out.String(), "\n")
	pw = strings.TrimRight(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("the password command of account %s printed nothing; it must print the password on its first line", a.Name)
	}
	return pw, nil
}

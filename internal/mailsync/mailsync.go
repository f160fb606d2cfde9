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
}

// Options tune a run.
type Options struct {
	Progress   func(imapsync.Progress)
	AfterBatch func(folder string, stored int)
	BatchSize  int
}

// Run syncs each account in turn, taking the writer lock for the whole run.
// An account that fails does not stop the others; its Outcome says why.
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
		Name: a.Name, Server: a.Server, User: a.User, TLS: a.TLS, TrustedAuthServ: a.TrustedAuthServ,
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
	if err := cmd.Run(); err != nil {
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

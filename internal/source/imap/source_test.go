package imap

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

// configured is u as a person configures it: the password comes from a password command.
func configured(u *imaptest.User) config.Account {
	return config.Account{Name: "test", Kind: "imap", Server: u.Server.Addr, User: u.Name, TLS: "none", PasswordCmd: "printf '%s\\n' '" + u.Password + "'"}
}

// TestOpenSyncsAndActs: the table's row, opened from a configured account (password command
// included), syncs into a store and does the remote actions drafts and sending use on one
// connection: find Drafts, append, fetch the exact bytes back, remove.
func TestOpenSyncsAndActs(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	raw := testmsg.Plain("a@example.test", "b@example.test", "", "kept", "kept@example.test")
	u.AddMessage(t, "INBOX", raw, "S")
	src, err := Open(configured(u))
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	ctx := context.Background()
	res, err := src.Sync(ctx, st, source.Options{})
	if err != nil || res.New != 1 {
		t.Fatalf("sync through Open: %+v, %v; want one new message", res, err)
	}

	remote, ok := src.(source.Remote)
	if !ok {
		t.Fatal("the imap source has no remote actions")
	}
	sess, err := remote.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer sess.Close()
	drafts, err := sess.FindRole(ctx, source.RoleDrafts)
	if err != nil || drafts != "Drafts" {
		t.Fatalf("FindRole(drafts) = %q, %v; want Drafts, made", drafts, err)
	}
	draft := testmsg.Plain("a@example.test", "b@example.test", "", "a draft", "d@example.test")
	if err := sess.Append(ctx, drafts, store.FlagDraft|store.FlagSeen, time.Time{}, draft); err != nil {
		t.Fatalf("Append: %v", err)
	}
	got := uids(t, client(t, u), drafts)
	if len(got) != 1 {
		t.Fatalf("Drafts holds %d messages after one Append", len(got))
	}
	back, err := sess.Fetch(ctx, drafts, uint32(got[0]))
	if err != nil || !bytes.Equal(back, draft) {
		t.Fatalf("Fetch = %q, %v; want the appended bytes", back, err)
	}
	v := client(t, u)
	if _, err := v.Select(drafts, nil).Wait(); err != nil {
		t.Fatal(err)
	}
	msgs, err := v.Fetch(imap.UIDSetNum(got[0]), &imap.FetchOptions{Flags: true}).Collect()
	if err != nil || len(msgs) != 1 || store.FlagBits(flagNames(msgs[0].Flags)) != store.FlagDraft|store.FlagSeen {
		t.Fatalf("flags on the server: %v, %v; want \\Draft \\Seen", msgs, err)
	}
	if _, err := sess.Fetch(ctx, drafts, uint32(got[0])+100); !errors.Is(err, source.ErrGone) {
		t.Errorf("Fetch of a UID the folder does not hold: %v; want ErrGone", err)
	}
	if _, err := sess.Fetch(ctx, "Nowhere", 1); err == nil || !strings.Contains(err.Error(), "cannot open Nowhere on the server") {
		t.Errorf("Fetch in a missing folder: %v", err)
	}
	if n, err := sess.Remove(ctx, drafts, "d@example.test"); err != nil || n != 1 {
		t.Errorf("Remove = %d, %v; want 1", n, err)
	}
}

func flagNames(fs []imap.Flag) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// TestOpenPasswordCommandFails: a failing password command stops the connection with the
// sentence that names the account and the exit status, never the output.
func TestOpenPasswordCommandFails(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	a := configured(u)
	a.PasswordCmd = "echo " + u.Password + "; exit 3"
	src, err := Open(a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.(source.Remote).Connect(context.Background())
	if err == nil || err.Error() != "the password command of account test failed (exit status 3); run it in a terminal to see why" {
		t.Fatalf("Connect with a failing password command: %v", err)
	}
}

package imap

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// hostileRaw is a message with raw NUL, BEL and ESC bytes in its header and body and broken
// MIME (a multipart whose boundary never closes, base64 that is not).
const hostileRaw = "From: Stranger <s@evil.example>\r\nTo: me@example.com\r\nSubject: nul\x00 bel\x07 esc\x1b[2J here\r\n" +
	"Date: Tue, 3 Jun 2025 10:00:00 +0000\r\nMessage-ID: <hostile@evil.example>\r\n" +
	"Content-Type: multipart/mixed; boundary=\"never\"\r\n\r\n--never\r\nContent-Type: text/plain\r\n" +
	"Content-Transfer-Encoding: base64\r\n\r\n%%%not base64\x00\x07\r\n"

func goodRaw(n string) []byte {
	return []byte("From: Ann <ann@example.com>\r\nTo: me@example.com\r\nSubject: good " + n +
		"\r\nDate: Tue, 3 Jun 2025 10:00:00 +0000\r\nMessage-ID: <good" + n + "@example.com>\r\n\r\nhello\r\n")
}

// TestIsolation: against Dovecot, a message with raw NUL and BEL bytes and broken MIME,
// appended over IMAP, syncs beside good ones; a message the server cannot read (its file made
// unreadable to Dovecot) is skipped with a warning naming it, kept until it syncs, and the
// rest of its folder and the other folders sync.
func TestIsolation(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	c := client(t, u)
	ctx := context.Background()
	for _, raw := range [][]byte{goodRaw("1"), []byte(hostileRaw), goodRaw("2")} {
		cmd := c.Append("INBOX", int64(len(raw)), nil)
		cmd.Write(raw)
		cmd.Close()
		if _, err := cmd.Wait(); err != nil {
			t.Logf("APPEND of %q refused: %v", raw[:40], err)
		}
	}
	unreadable := u.AddMessage(t, "INBOX", goodRaw("3"), "")
	u.AddMessage(t, "Archive", goodRaw("4"), "S")
	if os.Getuid() != 0 {
		t.Skip("the test makes a message unreadable to Dovecot, which runs as nobody only when the tests run as root")
	}
	st := openStore(t)
	var said []string
	opt := source.Options{Warn: func(m string) { said = append(said, m) }, BatchSize: 10}
	// The file made unreadable to Dovecot only once it has seen it (so that it is listed).
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("INBOX holds %d messages", sel.NumMessages)
	c.Unselect().Wait()
	if err := os.Chmod(unreadable, 0); err != nil {
		t.Fatal(err)
	}
	stored := func() map[string]bool {
		out := map[string]bool{}
		rows, err := st.DB().Query(`SELECT subject FROM messages`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out[s] = true
		}
		return out
	}
	warned := func(ws []string) bool {
		return len(ws) == 1 && strings.Contains(ws[0], "folder INBOX") && strings.Contains(ws[0], "UID 4 was skipped")
	}
	res, err := Sync(ctx, st, account(u), opt)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	got := stored()
	for _, want := range []string{"good 1", "good 2", "good 4"} {
		if !got[want] {
			t.Errorf("%q was not synced (stored %v, result %+v)", want, got, res)
		}
	}
	hostile := false
	for s := range got {
		hostile = hostile || strings.HasPrefix(s, "nul") && strings.HasSuffix(s, "here")
	}
	if !hostile || len(got) != 4 {
		t.Errorf("stored %v; want the hostile message beside the 3 good ones", got)
	}
	if !warned(said) {
		t.Errorf("warnings said %q; want one naming INBOX and UID 4", said)
	}
	kept, _ := st.AccountWarnings(ctx)
	if !warned(kept["test"]) {
		t.Errorf("warnings kept %q; want one naming INBOX and UID 4", kept["test"])
	}
	// Still unreadable: still warned about. Readable again: synced, and the warning goes.
	said = nil
	if _, err := Sync(ctx, st, account(u), opt); err != nil || !warned(said) {
		t.Errorf("second sync: %v, warnings %q", err, said)
	}
	if err := os.Chmod(unreadable, 0o644); err != nil {
		t.Fatal(err)
	}
	said = nil
	if _, err := Sync(ctx, st, account(u), opt); err != nil || len(said) != 0 || !stored()["good 3"] {
		t.Errorf("sync once readable: %v, warnings %q, stored %v", err, said, stored())
	}
	if kept, _ := st.AccountWarnings(ctx); len(kept["test"]) != 0 {
		t.Errorf("warnings %q remain after the message synced", kept["test"])
	}
}

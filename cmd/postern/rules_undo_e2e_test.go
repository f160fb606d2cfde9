package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	_ "modernc.org/sqlite"
)

// TestRuleUndoSticks (issue 23, must-show 4): a rule moves a new message; mail_undo puts it
// back; after three postern sync runs, and while postern mcp syncs in the background several
// times, it is still in INBOX, as a separate IMAP client sees. A message the rule moved that
// the person moves back with another mail program (a new uid) is not moved again either, and
// a truly new message still is.
func TestRuleUndoSticks(t *testing.T) {
	b := newActionBox(t, imaptest.Start(t), "")
	// The background sync of postern mcp, below, every watchInterval.
	b.env = append(b.env, "POSTERN_SYNC_MIN_INTERVAL=1s")
	f, err := os.OpenFile(b.cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[sync]\ninterval = %q\n", watchInterval.String())
	f.Close()
	agent := b.connect(t, "read,rules:propose")
	if _, text, isErr := call(t, agent, generated.ToolRulesPropose, map[string]any{"rule": newsRule}); isErr {
		t.Fatalf("rules_propose: %s", text)
	}
	if out, errOut, code := runCLI(t, b.env, "rules", "approve", "News to Receipts", "--config", b.cfg); code != 0 {
		t.Fatalf("postern rules approve: %d %s%s", code, out, errOut)
	}
	issue := func(id string) []byte {
		return []byte("From: News <news@example.test>\r\nTo: me@example.test\r\nSubject: Issue " + id + "\r\nDate: " +
			time.Now().UTC().Format(time.RFC1123Z) + "\r\nMessage-ID: <" + id + "@example.test>\r\n\r\nThis is issue " + id + ".\r\n")
	}
	where := func(msgID string) string {
		t.Helper()
		state := b.serverState(t)
		var in []string
		for folder, rows := range state {
			if has(rows, msgID) {
				in = append(in, folder)
			}
		}
		return strings.Join(in, ",")
	}
	// undoLast undoes the newest action of the rules through cs.
	undoLast := func(cs *mcp.ClientSession) {
		t.Helper()
		sc, text, _ := call(t, cs, generated.ToolMailActions, map[string]any{})
		acts, _ := sc["actions"].([]any)
		if len(acts) == 0 {
			t.Fatalf("mail_actions: %s", text)
		}
		act := acts[0].(map[string]any)
		if act["client"] != "postern rules" {
			t.Fatalf("the newest action is not the rules': %s", text)
		}
		if _, text, isErr := call(t, cs, generated.ToolMailUndo, map[string]any{"id": act["action_id"]}); isErr {
			t.Fatalf("mail_undo: %s", text)
		}
	}

	// A rule moves a new message; mail_undo puts it back; three syncs leave it there.
	b.user.AddMessage(t, "INBOX", issue("first"), "")
	if out, errOut, code := runCLI(t, b.env, "sync", "--config", b.cfg); code != 0 || !strings.Contains(out, "rules changed 1 of 1 new messages") {
		t.Fatalf("postern sync: %d\n%s%s", code, out, errOut)
	}
	if got := where("first@example.test"); got != "Receipts" {
		t.Fatalf("the rule did not move the new message: it is in %q", got)
	}
	person := b.connect(t, "read,mail:modify")
	undoLast(person)
	if got := where("first@example.test"); got != "INBOX" {
		t.Fatalf("mail_undo did not put it back: it is in %q", got)
	}
	for i := 1; i <= 3; i++ {
		out, errOut, code := runCLI(t, b.env, "sync", "--config", b.cfg)
		if code != 0 || strings.Contains(out, "rules changed") {
			t.Fatalf("postern sync %d after the undo: %d\n%s%s", i, code, out, errOut)
		}
		if got := where("first@example.test"); got != "INBOX" {
			t.Fatalf("after postern sync %d the undone message is in %q, not INBOX", i, got)
		}
	}

	// postern mcp syncing in the background.
	var env []string
	for _, e := range b.env {
		if !strings.HasPrefix(e, "POSTERN_WATCH=") {
			env = append(env, e)
		}
	}
	server := (&mailbox{env: env, cfg: b.cfg}).connect(t, "read,mail:modify", nil)
	syncs := syncCounter(t, filepath.Join(b.data, "postern", "store.db"))
	syncs.wait(t, 3)
	if got := where("first@example.test"); got != "INBOX" {
		t.Fatalf("after background syncs the undone message is in %q, not INBOX", got)
	}

	// A truly new message is still moved, by the background sync.
	b.user.AddMessage(t, "INBOX", issue("second"), "")
	waitIn(t, where, "second@example.test", "Receipts")
	// The person moves it back with another mail program: a new uid in INBOX.
	before := uidOf(t, b.user, "Receipts", "second@example.test")
	moveBack(t, b.user, "Receipts", "second@example.test")
	after := uidOf(t, b.user, "INBOX", "second@example.test")
	if before == 0 || after == 0 {
		t.Fatalf("the message moved back has no uid: %d in Receipts, %d in INBOX", before, after)
	}
	syncs.wait(t, 3)
	if got := where("second@example.test"); got != "INBOX" {
		t.Fatalf("the message the person moved back is in %q, not INBOX", got)
	}

	// A third one: moved by the background sync, undone through the same server, left alone.
	b.user.AddMessage(t, "INBOX", issue("third"), "")
	waitIn(t, where, "third@example.test", "Receipts")
	undoLast(server)
	if got := where("third@example.test"); got != "INBOX" {
		t.Fatalf("mail_undo did not put the third back: it is in %q", got)
	}
	syncs.wait(t, 3)
	for _, id := range []string{"first", "second", "third"} {
		if got := where(id + "@example.test"); got != "INBOX" {
			t.Errorf("at the end, %s is in %q, not INBOX", id, got)
		}
	}
	// The rule still acts on what is new.
	b.user.AddMessage(t, "INBOX", issue("fourth"), "")
	waitIn(t, where, "fourth@example.test", "Receipts")
}

// waitIn waits up to 20 s for a message to be in folder, and only there.
func waitIn(t *testing.T, where func(string) string, msgID, folder string) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for {
		got := where(msgID)
		if got == folder {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s is in %q, not %s, after 20 s", msgID, got, folder)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// syncs counts the syncs of account work that finished, from the store (read only).
type syncs struct {
	db   *sql.DB
	last int64
}

func syncCounter(t *testing.T, path string) *syncs {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := &syncs{db: db}
	s.last = s.at()
	return s
}

func (s *syncs) at() int64 {
	var at sql.NullInt64
	s.db.QueryRow(`SELECT last_sync FROM accounts WHERE name = 'work'`).Scan(&at)
	return at.Int64
}

// wait waits for n more syncs (n changes of last_sync, a second apart at least), failing
// after n intervals and 20 s.
func (s *syncs) wait(t *testing.T, n int) {
	t.Helper()
	end := time.Now().Add(time.Duration(n)*watchInterval + 20*time.Second)
	for seen := 0; seen < n; {
		if at := s.at(); at != s.last {
			s.last = at
			seen++
			continue
		}
		if time.Now().After(end) {
			t.Fatalf("%d of %d background syncs seen", seen, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// uidOf is the uid of the message msgID in folder, as a separate IMAP client sees it (0: none).
func uidOf(t *testing.T, u *imaptest.User, folder, msgID string) imap.UID {
	t.Helper()
	c := u.Login(t, nil)
	defer c.Logout()
	if _, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatal(err)
	}
	return searchID(t, c, msgID)
}

func searchID(t *testing.T, c *imapclient.Client, msgID string) imap.UID {
	t.Helper()
	data, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: msgID}}}, nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	uids := data.AllUIDs()
	if len(uids) != 1 {
		return 0
	}
	return uids[0]
}

// moveBack moves msgID from folder to INBOX with a separate IMAP client, as a person would in
// another mail program.
func moveBack(t *testing.T, u *imaptest.User, folder, msgID string) {
	t.Helper()
	c := u.Login(t, nil)
	defer c.Logout()
	if _, err := c.Select(folder, nil).Wait(); err != nil {
		t.Fatal(err)
	}
	uid := searchID(t, c, msgID)
	if uid == 0 {
		t.Fatalf("%s is not in %s", msgID, folder)
	}
	if _, err := c.Move(imap.UIDSetNum(uid), "INBOX").Wait(); err != nil {
		t.Fatalf("MOVE: %v", err)
	}
}

package imap

import (
	"context"
	"fmt"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message/charset"

	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

func TestMain(m *testing.M) { os.Exit(imaptest.Run(m)) }

func account(u *imaptest.User) Account {
	return Account{
		Name: "test", Server: u.Server.Addr, User: u.Name, TLS: "none",
		Password: func(context.Context) (string, error) { return u.Password, nil },
	}
}

// client is an independent IMAP session, the test's view of the server.
func client(t *testing.T, u *imaptest.User) *imapclient.Client {
	t.Helper()
	return u.Login(t, &imapclient.Options{WordDecoder: &mime.WordDecoder{CharsetReader: charset.Reader}})
}

// msg is what the test compares for one message.
type msg struct {
	Subject     string
	From        string
	Date        int64
	Flags       int
	Attachments string
}

func (m msg) String() string {
	return fmt.Sprintf("subject %q from %s date %d flags %d attachments [%s]", m.Subject, m.From, m.Date, m.Flags, m.Attachments)
}

// serverState reads every message of every folder as the server reports it.
func serverState(t *testing.T, c *imapclient.Client) map[string]msg {
	t.Helper()
	list, err := c.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]msg{}
	for _, l := range list {
		if noSelect(l.Attrs) {
			continue
		}
		sel, err := c.Select(l.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
		if err != nil {
			t.Fatalf("select %s: %v", l.Mailbox, err)
		}
		if sel.NumMessages == 0 {
			continue
		}
		msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{
			UID: true, Flags: true, Envelope: true, BodyStructure: &imap.FetchItemBodyStructure{Extended: true},
		}).Collect()
		if err != nil {
			t.Fatalf("fetch %s: %v", l.Mailbox, err)
		}
		for _, m := range msgs {
			var names []string
			m.BodyStructure.Walk(func(path []int, part imap.BodyStructure) bool {
				if sp, ok := part.(*imap.BodyStructureSinglePart); ok {
					if n := filename(sp); n != "" {
						names = append(names, n)
					}
				}
				return true
			})
			sort.Strings(names)
			var flags []string
			for _, f := range m.Flags {
				flags = append(flags, string(f))
			}
			from := ""
			if len(m.Envelope.From) > 0 {
				from = strings.ToLower(m.Envelope.From[0].Addr())
			}
			out[fmt.Sprintf("%s/%d", l.Mailbox, m.UID)] = msg{
				Subject: m.Envelope.Subject, From: from, Date: m.Envelope.Date.Unix(),
				Flags: store.FlagBits(flags), Attachments: strings.Join(names, "|"),
			}
		}
	}
	return out
}

// filename is a part's file name as the server reports it, RFC 2231 forms
// (filename*=UTF-8”…) decoded by the test itself.
func filename(sp *imap.BodyStructureSinglePart) string {
	if n := sp.Filename(); n != "" {
		return n
	}
	var params map[string]string
	if d := sp.Disposition(); d != nil {
		params = d.Params
	}
	for _, key := range []string{"filename*", "name*"} {
		v, ok := params[key]
		if !ok {
			v, ok = sp.Params[key]
		}
		if !ok {
			continue
		}
		parts := strings.SplitN(v, "'", 3)
		if len(parts) != 3 {
			continue
		}
		if dec, err := url.PathUnescape(parts[2]); err == nil {
			return dec
		}
	}
	return ""
}

func noSelect(attrs []imap.MailboxAttr) bool {
	for _, a := range attrs {
		if strings.EqualFold(string(a), string(imap.MailboxAttrNoSelect)) || strings.EqualFold(string(a), string(imap.MailboxAttrNonExistent)) {
			return true
		}
	}
	return false
}

// storeState reads the same from the store.
func storeState(t *testing.T, st *store.Store) map[string]msg {
	t.Helper()
	rows, err := st.DB().Query(`SELECT f.name, m.uid, m.subject, m.from_email, m.date, m.flags, m.attachments FROM messages m JOIN folders f ON f.id = m.folder_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]msg{}
	for rows.Next() {
		var folder, subject, from, atts string
		var uid uint32
		var date int64
		var flags int
		if err := rows.Scan(&folder, &uid, &subject, &from, &date, &flags, &atts); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, part := range strings.Split(atts, `"name":"`)[1:] {
			n, _, _ := strings.Cut(part, `"`)
			names = append(names, n)
		}
		sort.Strings(names)
		key := fmt.Sprintf("%s/%d", folder, uid)
		if _, dup := out[key]; dup {
			t.Fatalf("the store holds %s twice", key)
		}
		out[key] = msg{Subject: subject, From: strings.ToLower(from), Date: date, Flags: flags, Attachments: strings.Join(names, "|")}
	}
	return out
}

// same fails the test unless the store holds exactly what the server reports.
func same(t *testing.T, c *imapclient.Client, st *store.Store) int {
	t.Helper()
	want := serverState(t, c)
	got := storeState(t, st)
	bad := 0
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s is on the server but not in the store", k)
			bad++
		case g != w:
			t.Errorf("%s differs:\n  server: %s\n  store:  %s", k, w, g)
			bad++
		}
		if bad > 10 {
			t.Fatalf("too many differences")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s is in the store but not on the server", k)
		}
	}
	return len(want)
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

func syncOK(t *testing.T, st *store.Store, u *imaptest.User) *source.Result {
	t.Helper()
	res, err := Sync(context.Background(), st, account(u), source.Options{})
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

// TestFullSync: a generated corpus of 2,000 messages in six folders syncs, and
// every message's subject, sender, date, flags, folder and attachments equal
// what the server reports.
func TestFullSync(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	n, err := corpus.WriteMaildir(u.Maildir, corpus.Options{Seed: 11, Messages: 2000})
	if err != nil {
		t.Fatal(err)
	}
	u.FixOwnership(t)
	st := openStore(t)
	start := time.Now()
	res := syncOK(t, st, u)
	t.Logf("first sync: %d messages in %d folders, %s", res.New, res.Folders, time.Since(start))
	if res.New != n || res.Folders < 5 {
		t.Fatalf("synced %d messages in %d folders, want %d in at least 5", res.New, res.Folders, n)
	}
	c := client(t, u)
	if got := same(t, c, st); got != n {
		t.Fatalf("the server reports %d messages, the corpus has %d", got, n)
	}
	// A second sync finds nothing to do.
	res = syncOK(t, st, u)
	if res.New != 0 || res.Deleted != 0 {
		t.Fatalf("second sync changed things: %+v", res)
	}
}

func appendMsg(t *testing.T, c *imapclient.Client, folder string, raw []byte, flags ...imap.Flag) {
	t.Helper()
	cmd := c.Append(folder, int64(len(raw)), &imap.AppendOptions{Flags: flags})
	if _, err := cmd.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		t.Fatalf("append to %s: %v", folder, err)
	}
}

func uids(t *testing.T, c *imapclient.Client, folder string) []imap.UID {
	t.Helper()
	if _, err := c.Select(folder, nil).Wait(); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var out []imap.UID
	for _, m := range msgs {
		out = append(out, m.UID)
	}
	return out
}

func storedIDs(t *testing.T, st *store.Store, folder string) map[int64]bool {
	t.Helper()
	rows, err := st.DB().Query(`SELECT m.id FROM messages m JOIN folders f ON f.id = m.folder_id WHERE f.name = ?`, folder)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		out[id] = true
	}
	return out
}

// TestIncremental: each kind of change on the server is reflected by the next sync.
func TestIncremental(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	if _, err := corpus.WriteMaildir(u.Maildir, corpus.Options{Seed: 5, Messages: 300}); err != nil {
		t.Fatal(err)
	}
	u.FixOwnership(t)
	st := openStore(t)
	syncOK(t, st, u)
	c := client(t, u)
	same(t, c, st)
	extra := corpus.Generate(corpus.Options{Seed: 99, Messages: 20})

	t.Run("new messages", func(t *testing.T) {
		for _, m := range extra[:5] {
			appendMsg(t, c, "INBOX", m.Raw)
		}
		appendMsg(t, c, "Archive", extra[5].Raw, imap.FlagSeen)
		res := syncOK(t, st, u)
		if res.New != 6 {
			t.Errorf("new = %d, want 6", res.New)
		}
		same(t, c, st)
	})
	t.Run("flag changes", func(t *testing.T) {
		in := uids(t, c, "INBOX")
		var set imap.UIDSet
		set.AddNum(in[0], in[3], in[7])
		if err := c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagFlagged}}, nil).Close(); err != nil {
			t.Fatal(err)
		}
		var set2 imap.UIDSet
		set2.AddNum(in[1], in[2])
		if err := c.Store(set2, &imap.StoreFlags{Op: imap.StoreFlagsSet, Flags: []imap.Flag{imap.FlagAnswered}}, nil).Close(); err != nil {
			t.Fatal(err)
		}
		syncOK(t, st, u)
		same(t, c, st)
	})
	t.Run("expunges", func(t *testing.T) {
		in := uids(t, c, "INBOX")
		var set imap.UIDSet
		set.AddNum(in[2], in[5], in[len(in)-1])
		if err := c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Expunge().Close(); err != nil {
			t.Fatal(err)
		}
		res := syncOK(t, st, u)
		if res.Deleted != 3 {
			t.Errorf("deleted = %d, want 3", res.Deleted)
		}
		same(t, c, st)
	})
	t.Run("folder renamed", func(t *testing.T) {
		before := storedIDs(t, st, "Archive")
		if err := c.Rename("Archive", "Archive2024", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		res := syncOK(t, st, u)
		if res.Renamed != 1 {
			t.Errorf("renamed = %d, want 1", res.Renamed)
		}
		same(t, c, st)
		after := storedIDs(t, st, "Archive2024")
		if len(after) != len(before) || len(before) == 0 {
			t.Fatalf("renamed folder: %d messages before, %d after", len(before), len(after))
		}
		for id := range before {
			if !after[id] {
				t.Fatalf("message id %d changed with the rename", id)
			}
		}
	})
	t.Run("folder deleted", func(t *testing.T) {
		if err := c.Delete("Newsletters").Wait(); err != nil {
			t.Fatal(err)
		}
		res := syncOK(t, st, u)
		if res.FoldersGone != 1 {
			t.Errorf("folders gone = %d, want 1", res.FoldersGone)
		}
		same(t, c, st)
		if n := len(storedIDs(t, st, "Newsletters")); n != 0 {
			t.Fatalf("%d messages of the deleted folder remain", n)
		}
	})
	t.Run("UIDVALIDITY change", func(t *testing.T) {
		// Recreate Drafts with the same messages (new UIDs, new UIDVALIDITY) plus one more.
		if _, err := c.Select("Drafts", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		raws, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{{Peek: true}}}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		before := storedIDs(t, st, "Drafts")
		if _, err := c.Select("INBOX", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		oldValidity := mustStatus(t, c, "Drafts")
		if err := c.Delete("Drafts").Wait(); err != nil {
			t.Fatal(err)
		}
		if err := c.Create("Drafts", nil).Wait(); err != nil {
			t.Fatal(err)
		}
		if mustStatus(t, c, "Drafts") == oldValidity {
			t.Skip("the server kept UIDVALIDITY across delete and create; nothing to test")
		}
		for _, r := range raws {
			appendMsg(t, c, "Drafts", r.BodySection[0].Bytes)
		}
		appendMsg(t, c, "Drafts", extra[10].Raw)
		syncOK(t, st, u)
		same(t, c, st)
		after := storedIDs(t, st, "Drafts")
		if len(after) != len(before)+1 {
			t.Fatalf("Drafts: %d before, %d after, want one more", len(before), len(after))
		}
		for id := range before {
			if !after[id] {
				t.Errorf("message id %d of Drafts did not survive the new UIDVALIDITY", id)
			}
		}
	})
}

func mustStatus(t *testing.T, c *imapclient.Client, folder string) uint32 {
	t.Helper()
	sd, err := c.Status(folder, &imap.StatusOptions{UIDValidity: true}).Wait()
	if err != nil {
		t.Fatal(err)
	}
	return sd.UIDValidity
}

// TestMalformedAndHuge: a malformed message is stored with what could be read,
// and a 25 MB message syncs, both without stopping the sync.
func TestMalformedAndHuge(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	u.AddMessage(t, "INBOX", []byte("Subject: =?utf-8?B?broken\r\nFrom: Nobody <nobody@example.com>\r\nDate: Tue, 3 Jun 2025 10:00:00 +0000\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain; charset=no-such-charset\r\n\r\nstill readable\r\n--zz\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64!!!"), "")
	big, err := readAll(corpus.Big(25<<20, 1))
	if err != nil {
		t.Fatal(err)
	}
	u.AddMessage(t, "INBOX", big, "S")
	u.AddMessage(t, "INBOX", corpus.Generate(corpus.Options{Seed: 2, Messages: 1})[0].Raw, "")
	st := openStore(t)
	res := syncOK(t, st, u)
	if res.New != 3 {
		t.Fatalf("new = %d, want 3", res.New)
	}
	c := client(t, u)
	same(t, c, st)
	var text, problems string
	if err := st.DB().QueryRow(`SELECT b.text, b.problems FROM bodies b JOIN messages m ON m.id = b.id WHERE m.subject LIKE '%broken%'`).Scan(&text, &problems); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "still readable") || problems == "" {
		t.Fatalf("malformed message: text %q problems %q", text, problems)
	}
}

func readAll(r interface{ Read([]byte) (int, error) }) ([]byte, error) {
	var b strings.Builder
	buf := make([]byte, 1<<20)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			if err.Error() == "EOF" {
				return []byte(b.String()), nil
			}
			return nil, err
		}
	}
}

// TestLoginErrors: a wrong password and an unreachable server each end with one sentence.
func TestLoginErrors(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	st := openStore(t)
	a := account(u)
	a.Password = func(context.Context) (string, error) { return "wrong-" + u.Password, nil }
	_, err := Sync(context.Background(), st, a, source.Options{})
	if err == nil || !strings.Contains(err.Error(), "refused the login") || strings.Contains(err.Error(), u.Password) {
		t.Fatalf("wrong password: %v", err)
	}
	a = account(u)
	a.Server = "127.0.0.1:1"
	_, err = Sync(context.Background(), st, a, source.Options{})
	if err == nil || !strings.Contains(err.Error(), "cannot reach 127.0.0.1:1") {
		t.Fatalf("unreachable: %v", err)
	}
	a = account(u)
	a.Server, a.TLS = srv.TLSAddr, "implicit"
	_, err = Sync(context.Background(), st, a, source.Options{})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("self-signed certificate: %v", err)
	}
	a = account(u)
	a.Server = "192.0.2.1:143" // TEST-NET-1: refused before any connection for plain IMAP
	_, err = Sync(context.Background(), st, a, source.Options{})
	if err == nil || !strings.Contains(err.Error(), "only allowed to this computer") {
		t.Fatalf("plain IMAP to a remote host: %v", err)
	}
}

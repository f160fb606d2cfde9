package imap

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

// dialUser is the connection the code under test gets: Dial over STARTTLS, verifying
// the test server's certificate.
func dialUser(t *testing.T, u *imaptest.User) *imapclient.Client {
	t.Helper()
	c, err := Dial(context.Background(), Account{
		Name: "test", Server: u.Server.Addr, User: u.Name, TLS: "starttls",
		Password:  func(context.Context) (string, error) { return u.Password, nil },
		TLSConfig: &tls.Config{RootCAs: u.Server.CertPool(t)},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// view is an independent session: the test's view of the server.
func view(t *testing.T, u *imaptest.User) *imapclient.Client {
	t.Helper()
	return u.Login(t, nil)
}

func folders(t *testing.T, c *imapclient.Client) map[string]*imap.ListData {
	t.Helper()
	list, err := c.List("", "*", &imap.ListOptions{ReturnSubscribed: true}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*imap.ListData{}
	for _, l := range list {
		out[l.Mailbox] = l
	}
	return out
}

func names(m map[string]*imap.ListData) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestFindRoleCreatesDraftsThenAppend(t *testing.T) {
	t.Parallel()
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	c := dialUser(t, u)
	ctx := context.Background()

	drafts, err := FindRole(ctx, c, "drafts")
	if err != nil {
		t.Fatalf("FindRole(drafts) on an account without one: %v", err)
	}
	if drafts != "Drafts" {
		t.Errorf("created %q; want Drafts", drafts)
	}
	seen := folders(t, view(t, u))
	l := seen[drafts]
	if l == nil {
		t.Fatalf("no folder %q on the server after FindRole; folders: %v", drafts, names(seen))
	}
	if !hasAttr(l.Attrs, imap.MailboxAttrSubscribed) {
		t.Errorf("%q is not subscribed, so mail programs may hide it: %v", drafts, l.Attrs)
	}
	again, err := FindRole(ctx, c, "drafts")
	if err != nil || again != drafts {
		t.Errorf("second FindRole(drafts) = %q, %v; want the same folder", again, err)
	}
	if n := len(folders(t, view(t, u))); n != len(seen) {
		t.Errorf("the second FindRole made a folder: %d folders, then %d", len(seen), n)
	}

	raw := testmsg.Plain("a@example.test", "b@example.test", "", "a draft", "draft-1@example.test")
	date := time.Date(2024, 5, 14, 9, 12, 44, 0, time.FixedZone("", 2*3600))
	uid, err := Append(ctx, c, drafts, []imap.Flag{imap.FlagDraft, imap.FlagSeen}, date, raw)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if uid == 0 {
		t.Fatalf("Append returned UID 0; Dovecot reports APPENDUID")
	}

	v := view(t, u)
	if _, err := v.Select(drafts, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatal(err)
	}
	body := &imap.FetchItemBodySection{Peek: true}
	msgs, err := v.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Flags: true, InternalDate: true, BodySection: []*imap.FetchItemBodySection{body}}).Collect()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("fetching UID %d from %s: %d messages, %v", uid, drafts, len(msgs), err)
	}
	m := msgs[0]
	if !hasFlag(m.Flags, imap.FlagDraft) || !hasFlag(m.Flags, imap.FlagSeen) {
		t.Errorf("flags %v; want \\Draft and \\Seen", m.Flags)
	}
	if !m.InternalDate.Equal(date) {
		t.Errorf("internal date %v; want %v", m.InternalDate, date)
	}
	if got := m.FindBodySection(body); !bytes.Equal(got, raw) {
		t.Errorf("stored message differs from the bytes appended:\n%q\nwant\n%q", got, raw)
	}
}

func hasFlag(flags []imap.Flag, f imap.Flag) bool {
	for _, x := range flags {
		if strings.EqualFold(string(x), string(f)) {
			return true
		}
	}
	return false
}

func TestAppendToMissingFolder(t *testing.T) {
	t.Parallel()
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	c := dialUser(t, u)
	_, err := Append(context.Background(), c, "No Such Folder", nil, time.Time{}, testmsg.Plain("a@example.test", "b@example.test", "", "x", "x@example.test"))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Append to a missing folder: %v; want an error saying it does not exist", err)
	}
}

func TestFindRoleUsesExistingFolders(t *testing.T) {
	t.Parallel()
	srv := imaptest.Start(t)
	msg := testmsg.Plain("a@example.test", "b@example.test", "", "x", "x@example.test")
	cases := []struct {
		role     string
		existing []string // folders the account has
		want     string
	}{
		{"sent", []string{"Sent Items"}, "Sent Items"},
		{"sent", []string{"Sent Messages", "sent"}, "sent"}, // Sent before Sent Messages, any case
		{"sent", []string{"INBOX.Sent"}, "INBOX.Sent"},      // under INBOX, as some servers keep them
		{"drafts", []string{"DRAFTS", "Sent"}, "DRAFTS"},
	}
	for _, tc := range cases {
		u := srv.NewUser(t)
		for _, f := range tc.existing {
			u.AddMessage(t, f, msg, "S")
		}
		c := dialUser(t, u)
		before := folders(t, view(t, u))
		for _, f := range tc.existing {
			if before[f] == nil {
				t.Fatalf("setup: folder %q missing; server has %v", f, names(before))
			}
		}
		got, err := FindRole(context.Background(), c, tc.role)
		if err != nil || got != tc.want {
			t.Errorf("FindRole(%s) with %v = %q, %v; want %q", tc.role, tc.existing, got, err, tc.want)
		}
		if after := folders(t, view(t, u)); len(after) != len(before) {
			t.Errorf("FindRole(%s) with %v made a folder: now %v", tc.role, tc.existing, names(after))
		}
	}
	if _, err := FindRole(context.Background(), dialUser(t, srv.NewUser(t)), "trash"); err == nil {
		t.Errorf("FindRole(trash) succeeded; only drafts and sent are known")
	}
}

func TestRemoveByMessageID(t *testing.T) {
	t.Parallel()
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	m := func(id string) []byte {
		return testmsg.Plain("a@example.test", "b@example.test", "", "draft "+id, id)
	}
	// The target twice (a draft saved twice), and Message-IDs that contain it.
	for _, id := range []string{"d1@example.test", "xd1@example.test", "d1@example.test.org", "d1@example.test", "other@example.test"} {
		u.AddMessage(t, "Drafts", m(id), "D")
	}
	// The same Message-ID in another folder stays.
	u.AddMessage(t, "Sent", m("d1@example.test"), "S")
	c := dialUser(t, u)

	n, err := RemoveByMessageID(context.Background(), c, "Drafts", "d1@example.test")
	if err != nil {
		t.Fatalf("RemoveByMessageID: %v", err)
	}
	if n != 2 {
		t.Errorf("removed %d; want 2 (both copies of d1@example.test)", n)
	}
	if got := messageIDs(t, u, "Drafts"); strings.Join(got, " ") != "d1@example.test.org other@example.test xd1@example.test" {
		t.Errorf("left in Drafts: %v; want the three others", got)
	}
	if got := messageIDs(t, u, "Sent"); len(got) != 1 {
		t.Errorf("Sent holds %v; another folder must be left alone", got)
	}

	n, err = RemoveByMessageID(context.Background(), c, "Drafts", "<d1@example.test>")
	if err != nil || n != 0 {
		t.Errorf("removing again: %d, %v; want 0, nil", n, err)
	}
	n, err = RemoveByMessageID(context.Background(), c, "Drafts", "<other@example.test>")
	if err != nil || n != 1 {
		t.Errorf("removing <other@example.test> (with brackets): %d, %v; want 1", n, err)
	}
	if got := messageIDs(t, u, "Drafts"); strings.Join(got, " ") != "d1@example.test.org xd1@example.test" {
		t.Errorf("left in Drafts: %v", got)
	}
	if _, err := RemoveByMessageID(context.Background(), c, "Nowhere", "d1@example.test"); err == nil || !strings.Contains(err.Error(), "Nowhere") {
		t.Errorf("a missing folder: %v; want an error naming it", err)
	}
}

// messageIDs lists the Message-IDs in a folder, sorted, as an independent session sees them.
func messageIDs(t *testing.T, u *imaptest.User, mailbox string) []string {
	t.Helper()
	v := view(t, u)
	if _, err := v.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatal(err)
	}
	msgs, err := v.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{Envelope: true}).Collect()
	if err != nil {
		// an empty folder has no message 1
		if strings.Contains(err.Error(), "Invalid messageset") || strings.Contains(err.Error(), "No matching messages") {
			return nil
		}
		t.Fatal(err)
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.Envelope.MessageID)
	}
	sort.Strings(ids)
	return ids
}

// The order FindRole picks in, on LIST answers Dovecot here does not give (it has no
// SPECIAL-USE configured): the attribute wins over any name, and folders that cannot hold
// mail are passed over.
func TestPickPrefersSpecialUse(t *testing.T) {
	l := func(name string, attrs ...imap.MailboxAttr) *imap.ListData {
		return &imap.ListData{Mailbox: name, Delim: '/', Attrs: attrs}
	}
	cases := []struct {
		list []*imap.ListData
		want string // "" when none fits
	}{
		{[]*imap.ListData{l("Sent"), l("Gesendet", imap.MailboxAttrSent)}, "Gesendet"},
		{[]*imap.ListData{l("[Gmail]/Sent Mail", imap.MailboxAttrSent, imap.MailboxAttrHasNoChildren), l("Sent Items")}, "[Gmail]/Sent Mail"},
		{[]*imap.ListData{l("Old", imap.MailboxAttrSent, imap.MailboxAttrNoSelect), l("Sent Messages")}, "Sent Messages"},
		{[]*imap.ListData{l("Sent", imap.MailboxAttrNonExistent), l("sent items")}, "sent items"},
		{[]*imap.ListData{l("INBOX/Sent"), l("sent")}, "sent"}, // the plain name before the one under INBOX
		{[]*imap.ListData{l("Archive/Sent"), l("Drafts", imap.MailboxAttrDrafts)}, ""},
	}
	for _, tc := range cases {
		got, ok := pick(tc.list, imap.MailboxAttrSent, roles["sent"].names)
		if got != tc.want || ok != (tc.want != "") {
			var in []string
			for _, x := range tc.list {
				in = append(in, fmt.Sprintf("%s %v", x.Mailbox, x.Attrs))
			}
			t.Errorf("pick(sent) in %v = %q, %v; want %q", in, got, ok, tc.want)
		}
	}
}

// TestImapFlags: the store's flag bits a Session is given become the IMAP system flags, a
// draft's as saveDraft always sent them (\Draft, then \Seen).
func TestImapFlags(t *testing.T) {
	cases := []struct {
		bits int
		want string
	}{
		{store.FlagDraft | store.FlagSeen, `\Draft \Seen`},
		{store.FlagSeen, `\Seen`},
		{0, ""},
		{store.FlagFlagged | store.FlagAnswered | store.FlagDeleted, `\Flagged \Answered \Deleted`},
	}
	for _, tc := range cases {
		var got []string
		for _, f := range imapFlags(tc.bits) {
			got = append(got, string(f))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("imapFlags(%d) = %v; want %s", tc.bits, got, tc.want)
		}
	}
}

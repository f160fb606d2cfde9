package imap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/testmsg"
)

// Capabilities of the restricted servers: Dovecot's own list less MOVE (and UIDPLUS).
const (
	capsNoMove          = "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ SPECIAL-USE CONDSTORE UIDPLUS"
	capsNoMoveNoUIDPlus = "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ SPECIAL-USE CONDSTORE"
)

// onServer is one message as an independent session sees it.
type onServer struct {
	uid   uint32
	flags string // sorted, space-separated, \Recent left out
}

// mailbox is what an independent session sees in folder: its UIDVALIDITY and its messages by
// Message-ID.
func mailbox(t *testing.T, u *imaptest.User, folder string) (uint32, map[string]onServer) {
	t.Helper()
	v := view(t, u)
	sel, err := v.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("selecting %s: %v", folder, err)
	}
	out := map[string]onServer{}
	if sel.NumMessages == 0 {
		return sel.UIDValidity, out
	}
	msgs, err := v.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Flags: true, Envelope: true}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		out[m.Envelope.MessageID] = onServer{uint32(m.UID), strings.Join(flagStrings(m.Flags), " ")}
	}
	return sel.UIDValidity, out
}

// seed puts one message per Message-ID in folder; a Message-ID ending in "!" gets \Deleted,
// as if the person had deleted it in another mail program that has not expunged yet.
func seed(t *testing.T, u *imaptest.User, folder string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		flags := ""
		if strings.HasSuffix(id, "!") {
			id, flags = strings.TrimSuffix(id, "!"), "T"
		}
		u.AddMessage(t, folder, testmsg.Plain("a@example.test", "b@example.test", "", "about "+id, id), flags)
	}
}

// ids is the Message-IDs a mailbox view holds, sorted.
func ids(m map[string]onServer) string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func TestMoveExactlyThose(t *testing.T) {
	t.Parallel()
	u := imaptest.Start(t).NewUser(t)
	moveExactlyThose(t, u, dialUser(t, u))
}

// TestMoveWithoutMove: a server without MOVE but with UIDPLUS gets COPY, \Deleted and UID
// EXPUNGE of exactly the messages moved.
func TestMoveWithoutMove(t *testing.T) {
	t.Parallel()
	u := imaptest.NewServerWith(t, imaptest.Options{Capability: capsNoMove}).NewUser(t)
	c := dialUser(t, u)
	if c.Caps().Has(imap.CapMove) || !c.Caps().Has(imap.CapUIDPlus) {
		t.Fatalf("the server should offer UIDPLUS without MOVE: %v", c.Caps())
	}
	moveExactlyThose(t, u, c)
}

// moveExactlyThose: Move takes exactly the messages asked for to dest, reports their new uids
// and those already gone, and leaves every other message alone, including one the person
// marked \Deleted in another mail program.
func moveExactlyThose(t *testing.T, u *imaptest.User, c *imapclient.Client) {
	ctx := context.Background()
	seed(t, u, "INBOX", "m1@x", "m2@x", "m3@x", "m4@x!")
	seed(t, u, "Archive", "old@x")
	val, inbox := mailbox(t, u, "INBOX")
	if inbox["m4@x"].flags != `\Deleted` {
		t.Fatalf("setup: m4 should carry \\Deleted: %+v", inbox)
	}
	asked := []uint32{inbox["m1@x"].uid, inbox["m2@x"].uid, 9999}

	if _, err := Move(ctx, c, "INBOX", val+1, asked, "Archive"); !errors.Is(err, source.ErrStale) || !strings.Contains(err.Error(), "run postern sync") {
		t.Errorf("Move with a stale UIDVALIDITY: %v; want ErrStale, saying to sync", err)
	}
	if _, err := Move(ctx, c, "INBOX", val, asked, "Nowhere"); err == nil || !strings.Contains(err.Error(), `the folder "Nowhere" cannot be opened on the server`) {
		t.Errorf("Move to a missing folder: %v", err)
	}
	if _, now := mailbox(t, u, "INBOX"); ids(now) != ids(inbox) {
		t.Fatalf("refused moves changed INBOX: %s", ids(now))
	}

	got, err := Move(ctx, c, "INBOX", val, asked, "Archive")
	if err != nil {
		t.Fatalf("Move: %v", err)
	}
	archVal, arch := mailbox(t, u, "Archive")
	_, after := mailbox(t, u, "INBOX")
	if ids(after) != "m3@x m4@x" || after["m4@x"].flags != `\Deleted` || after["m3@x"] != inbox["m3@x"] {
		t.Errorf("INBOX after the move: %+v; want m3 untouched and m4 still \\Deleted", after)
	}
	if ids(arch) != "m1@x m2@x old@x" || arch["m1@x"].flags != "" {
		t.Errorf("Archive after the move: %+v; want old, m1, m2 (not \\Deleted)", arch)
	}
	want := map[uint32]uint32{inbox["m1@x"].uid: arch["m1@x"].uid, inbox["m2@x"].uid: arch["m2@x"].uid}
	if got.UIDValidity != archVal || fmt.Sprint(got.UIDs) != fmt.Sprint(want) || fmt.Sprint(got.Gone) != "[9999]" {
		t.Errorf("Move = %+v; want UIDVALIDITY %d, uids %v, gone [9999]", got, archVal, want)
	}

	again, err := Move(ctx, c, "INBOX", val, asked[:2], "Archive")
	if err != nil || len(again.UIDs) != 0 || len(again.Gone) != 2 {
		t.Errorf("moving the moved messages again: %+v, %v; want both gone", again, err)
	}
}

// TestFindCopies: when the server sends no COPYUID, the copies are found by Message-ID among
// the messages the destination received, and a Message-ID held twice is left unknown.
func TestFindCopies(t *testing.T) {
	t.Parallel()
	u := imaptest.Start(t).NewUser(t)
	seed(t, u, "Archive", "old@x", "a@x")
	c := dialUser(t, u)
	st, err := c.Status("Archive", &imap.StatusOptions{UIDNext: true, UIDValidity: true}).Wait()
	if err != nil {
		t.Fatal(err)
	}
	seed(t, u, "Archive", "a@x", "b@x", "c@x", "c@x")
	val, _ := mailbox(t, u, "Archive")
	newUID := map[string]uint32{} // the uid each Message-ID got in Archive after the STATUS
	v := view(t, u)
	if _, err := v.Select("Archive", &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatal(err)
	}
	msgs, err := v.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Envelope: true}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.UID >= st.UIDNext {
			newUID[m.Envelope.MessageID] = uint32(m.UID)
		}
	}
	res := source.Moved{UIDValidity: st.UIDValidity, UIDs: map[uint32]uint32{11: 0, 12: 0, 13: 0, 14: 0}}
	if err := findCopies(context.Background(), c, "Archive", st.UIDNext, map[uint32]string{11: "a@x", 12: "b@x", 13: "c@x", 14: ""}, &res); err != nil {
		t.Fatal(err)
	}
	// a@x was there before too, but only the new copy counts; c@x arrived twice; 14 has none.
	want := map[uint32]uint32{11: newUID["a@x"], 12: newUID["b@x"], 13: 0, 14: 0}
	if res.UIDValidity != val || fmt.Sprint(res.UIDs) != fmt.Sprint(want) {
		t.Errorf("findCopies = %+v; want UIDVALIDITY %d, uids %v", res, val, want)
	}
}

// TestStateAndSetFlags: State reads flags and modseqs without changing anything; SetFlags
// adds and removes exactly the flags asked on exactly the messages asked, reports the gone,
// and, given the modseq the caller saw, leaves alone (and reports) a message another client
// changed since.
func TestStateAndSetFlags(t *testing.T) {
	t.Parallel()
	u := imaptest.Start(t).NewUser(t)
	seed(t, u, "INBOX", "m1@x", "m2@x", "m3@x", "m4@x!")
	ctx := context.Background()
	c := dialUser(t, u)
	val, inbox := mailbox(t, u, "INBOX")
	m1, m2, m3, m4 := inbox["m1@x"].uid, inbox["m2@x"].uid, inbox["m3@x"].uid, inbox["m4@x"].uid

	st, err := State(ctx, c, "INBOX", val, []uint32{m1, m2, m4, 9999})
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	if len(st) != 3 || st[m4].Flags[0] != `\Deleted` || len(st[m1].Flags) != 0 || st[m1].ModSeq == 0 {
		t.Errorf("State = %+v; want m1, m2 without flags and m4 \\Deleted, with modseqs, 9999 left out", st)
	}
	if _, err := State(ctx, c, "INBOX", val+1, []uint32{m1}); !errors.Is(err, source.ErrStale) {
		t.Errorf("State with a stale UIDVALIDITY: %v", err)
	}
	seen := st[m1].ModSeq
	if st[m2].ModSeq > seen {
		seen = st[m2].ModSeq
	}

	got, err := SetFlags(ctx, c, "INBOX", val, []uint32{m1, m2, 9999}, []string{`\seen`, "$Junk"}, []string{"$NotJunk"}, seen)
	if err != nil {
		t.Fatalf("SetFlags: %v", err)
	}
	_, now := mailbox(t, u, "INBOX")
	for _, id := range []string{"m1@x", "m2@x"} {
		if now[id].flags != `$Junk \Seen` {
			t.Errorf("%s on the server: %q; want $Junk \\Seen", id, now[id].flags)
		}
	}
	if now["m3@x"] != inbox["m3@x"] || now["m4@x"] != inbox["m4@x"] {
		t.Errorf("other messages changed: %+v, before %+v", now, inbox)
	}
	if len(got.After) != 2 || strings.Join(got.After[m1].Flags, " ") != `$Junk \Seen` || got.After[m1].ModSeq <= st[m1].ModSeq ||
		len(got.Before[m1].Flags) != 0 || fmt.Sprint(got.Gone) != "[9999]" || len(got.Changed) != 0 {
		t.Errorf("SetFlags = %+v", got)
	}

	// The caller looks (State), then another mail program flags m3: marking m1 and m3 unread
	// with the modseq the caller saw changes m1 only.
	st, err = State(ctx, c, "INBOX", val, []uint32{m1, m3})
	if err != nil {
		t.Fatal(err)
	}
	looked := max(st[m1].ModSeq, st[m3].ModSeq)
	other := view(t, u)
	if _, err := other.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := other.Store(imap.UIDSetNum(imap.UID(m3)), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagFlagged}}, nil).Close(); err != nil {
		t.Fatal(err)
	}
	got, err = SetFlags(ctx, c, "INBOX", val, []uint32{m1, m3}, []string{`\Answered`}, []string{`\Seen`}, looked)
	if err != nil {
		t.Fatalf("SetFlags after another client's change: %v", err)
	}
	_, now = mailbox(t, u, "INBOX")
	if fmt.Sprint(got.Changed) != fmt.Sprint([]uint32{m3}) || len(got.After) != 1 || now["m3@x"].flags != `\Flagged` || now["m1@x"].flags != `$Junk \Answered` {
		t.Errorf("SetFlags = %+v; server: m1 %q, m3 %q; want m3 reported changed and left \\Flagged only", got, now["m1@x"].flags, now["m3@x"].flags)
	}

	// Without a modseq to hold to, +FLAGS and -FLAGS leave the other flags alone.
	got, err = SetFlags(ctx, c, "INBOX", val, []uint32{m3}, []string{`\Seen`}, []string{`\Flagged`}, 0)
	if _, now = mailbox(t, u, "INBOX"); err != nil || len(got.After) != 1 || now["m3@x"].flags != `\Seen` {
		t.Errorf("SetFlags without modseq: %+v, %v; m3 is %q", got, err, now["m3@x"].flags)
	}

	for _, bad := range []struct {
		add, remove []string
		want        string
	}{
		{[]string{`\Deleted`}, nil, `\Deleted is not set on its own`},
		{nil, []string{`\deleted`}, `\Deleted is not set on its own`},
		{[]string{`\Recent`}, nil, "is not a flag that can be set"},
		{[]string{"two words"}, nil, "is not an IMAP keyword"},
		{[]string{"$Junk"}, []string{"$junk"}, "both to add and to remove"},
		{nil, nil, "no flag"},
	} {
		if _, err := SetFlags(ctx, c, "INBOX", val, []uint32{m1}, bad.add, bad.remove, 0); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("SetFlags(+%v -%v): %v; want %q", bad.add, bad.remove, err, bad.want)
		}
	}
	if _, err := SetFlags(ctx, c, "INBOX", val+1, []uint32{m1}, []string{`\Seen`}, nil, 0); !errors.Is(err, source.ErrStale) {
		t.Errorf("SetFlags with a stale UIDVALIDITY: %v", err)
	}
	if _, final := mailbox(t, u, "INBOX"); final["m4@x"] != inbox["m4@x"] {
		t.Errorf("m4, never asked for, changed: %+v", final["m4@x"])
	}
}

// TestExpungeExactlyThose: Expunge removes the messages asked for and nothing else, not even
// a message the person marked \Deleted elsewhere.
func TestExpungeExactlyThose(t *testing.T) {
	t.Parallel()
	u := imaptest.Start(t).NewUser(t)
	seed(t, u, "INBOX", "m1@x", "m2@x", "m3@x!")
	ctx := context.Background()
	c := dialUser(t, u)
	val, inbox := mailbox(t, u, "INBOX")
	if _, err := Expunge(ctx, c, "INBOX", val+1, []uint32{inbox["m1@x"].uid}); !errors.Is(err, source.ErrStale) {
		t.Errorf("Expunge with a stale UIDVALIDITY: %v", err)
	}
	n, err := Expunge(ctx, c, "INBOX", val, []uint32{inbox["m1@x"].uid, 9999})
	if err != nil || n != 1 {
		t.Fatalf("Expunge = %d, %v; want 1", n, err)
	}
	if _, now := mailbox(t, u, "INBOX"); ids(now) != "m2@x m3@x" || now["m3@x"].flags != `\Deleted` {
		t.Errorf("INBOX after Expunge: %+v; want m2, and m3 still \\Deleted", now)
	}
}

// TestRoleFolderNeverCreates: archive, junk and trash are found by their usual names (Dovecot
// here announces no special-use attributes; pick's table covers those) and are never made.
func TestRoleFolderNeverCreates(t *testing.T) {
	t.Parallel()
	u := imaptest.Start(t).NewUser(t)
	seed(t, u, "Spam", "s@x")
	seed(t, u, "Deleted Items", "d@x")
	ctx := context.Background()
	c := dialUser(t, u)
	before := names(folders(t, view(t, u)))
	for role, want := range map[string]string{source.RoleJunk: "Spam", source.RoleTrash: "Deleted Items", source.RoleArchive: ""} {
		got, ok, err := RoleFolder(ctx, c, role)
		if err != nil || got != want || ok != (want != "") {
			t.Errorf("RoleFolder(%s) = %q, %v, %v; want %q", role, got, ok, err, want)
		}
	}
	if _, _, err := RoleFolder(ctx, c, "outbox"); err == nil {
		t.Error("RoleFolder(outbox) succeeded")
	}
	if after := names(folders(t, view(t, u))); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("RoleFolder made folders: %v, before %v", after, before)
	}
	if _, err := FindRole(ctx, c, source.RoleArchive); err == nil {
		t.Error("FindRole(archive) succeeded; it would create a folder the person did not choose")
	}
}

func TestPickArchiveJunkTrash(t *testing.T) {
	l := func(name string, attrs ...imap.MailboxAttr) *imap.ListData {
		return &imap.ListData{Mailbox: name, Delim: '.', Attrs: attrs}
	}
	list := []*imap.ListData{l("INBOX"), l("Archives"), l("Papierkorb", imap.MailboxAttrTrash), l("Trash"), l("INBOX.Junk"), l("Bulk Mail")}
	for role, want := range map[string]string{source.RoleArchive: "Archives", source.RoleTrash: "Papierkorb", source.RoleJunk: "INBOX.Junk"} {
		if got, _ := pick(list, roles[role].attr, roles[role].names); got != want {
			t.Errorf("pick(%s) = %q; want %q", role, got, want)
		}
	}
}

// TestNeitherMoveNorUIDPlus: on a server with neither, Move, Expunge and RemoveByMessageID
// refuse with the sentence that says why, and nothing on the server changes, not even the
// message the person marked \Deleted elsewhere.
func TestNeitherMoveNorUIDPlus(t *testing.T) {
	t.Parallel()
	u := imaptest.NewServerWith(t, imaptest.Options{Capability: capsNoMoveNoUIDPlus}).NewUser(t)
	seed(t, u, "INBOX", "m1@x", "m2@x", "m3@x!")
	seed(t, u, "Archive", "old@x")
	ctx := context.Background()
	c := dialUser(t, u)
	if c.Caps().Has(imap.CapMove) || c.Caps().Has(imap.CapUIDPlus) {
		t.Fatalf("the server should offer neither MOVE nor UIDPLUS: %v", c.Caps())
	}
	val, inbox := mailbox(t, u, "INBOX")
	_, arch := mailbox(t, u, "Archive")
	m1 := inbox["m1@x"].uid
	if _, err := Move(ctx, c, "INBOX", val, []uint32{m1}, "Archive"); !errors.Is(err, source.ErrNeedsExpunge) || !strings.Contains(err.Error(), "a plain EXPUNGE would also remove every message another mail program marked deleted") {
		t.Errorf("Move: %v; want ErrNeedsExpunge", err)
	}
	if _, err := Expunge(ctx, c, "INBOX", val, []uint32{m1}); !errors.Is(err, source.ErrNeedsExpunge) {
		t.Errorf("Expunge: %v; want ErrNeedsExpunge", err)
	}
	if _, err := RemoveByMessageID(ctx, c, "INBOX", "m1@x"); !errors.Is(err, source.ErrNeedsExpunge) {
		t.Errorf("RemoveByMessageID: %v; want ErrNeedsExpunge", err)
	}
	if _, now := mailbox(t, u, "INBOX"); fmt.Sprint(now) != fmt.Sprint(inbox) {
		t.Errorf("INBOX changed: %+v, before %+v", now, inbox)
	}
	if _, now := mailbox(t, u, "Archive"); fmt.Sprint(now) != fmt.Sprint(arch) {
		t.Errorf("Archive changed: %+v, before %+v", now, arch)
	}
	// Flags need neither: marking read still works.
	if got, err := SetFlags(ctx, c, "INBOX", val, []uint32{m1}, []string{`\Seen`}, nil, 0); err != nil || len(got.After) != 1 {
		t.Errorf("SetFlags on the restricted server: %+v, %v", got, err)
	}
}

package source

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/store"
)

// stored is raw as every kind stores it: parsed, filled in, judged and masked.
func stored(t *testing.T, raw string, trusted ...string) *store.NewMessage {
	t.Helper()
	p, err := mailparse.Parse(strings.NewReader(strings.ReplaceAll(raw, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	nm := &store.NewMessage{}
	Fill(nm, p)
	Judge(nm, trusted)
	return nm
}

const listMail = `From: Bank <alerts@bank.example>
To: Ann <ann@example.test>, bo@example.test
Cc: Cy <cy@example.test>
Subject: Your sign-in code
Message-ID: <m1@bank.example>
In-Reply-To: <m0@bank.example>
References: <m0@bank.example>
Date: Sat, 14 Jun 2025 10:22:01 +0200
Authentication-Results: mx.trusted.example; dmarc=fail header.from=bank.example
List-Id: <alerts.bank.example>
List-Unsubscribe: <https://bank.example/unsub?token=s3cr3tt0k3n>
List-Unsubscribe-Post: List-Unsubscribe=One-Click
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b"

--b
Content-Type: text/plain

Use 482913 to sign in.
--b
Content-Type: application/pdf; name="statement.pdf"
Content-Disposition: attachment; filename="statement.pdf"

JVBERi0=
--b--
`

// TestFillAndJudge: what a sync stores of a message: its headers' facts, addresses,
// attachments and text; a list's unsubscribe link kept apart and shown without its token;
// its secrets masked; forged when a trusted server says DMARC failed, not otherwise.
func TestFillAndJudge(t *testing.T) {
	nm := stored(t, listMail, "mx.trusted.example")
	if nm.MessageID != "m1@bank.example" && nm.MessageID != "<m1@bank.example>" {
		t.Errorf("Message-ID %q", nm.MessageID)
	}
	if nm.Subject != "Your sign-in code" || nm.From.Email != "alerts@bank.example" || nm.From.Name != "Bank" || nm.Date.IsZero() {
		t.Errorf("subject %q from %+v date %v", nm.Subject, nm.From, nm.Date)
	}
	if len(nm.To) != 2 || nm.To[0].Email != "ann@example.test" || nm.To[1].Email != "bo@example.test" || len(nm.Cc) != 1 || nm.Cc[0].Name != "Cy" {
		t.Errorf("to %+v cc %+v", nm.To, nm.Cc)
	}
	if nm.InReplyTo == "" || len(nm.References) == 0 {
		t.Errorf("the thread's links were lost: in-reply-to %q references %q", nm.InReplyTo, nm.References)
	}
	if len(nm.Attachments) != 1 || nm.Attachments[0].Name != "statement.pdf" || nm.Attachments[0].ContentType != "application/pdf" {
		t.Errorf("attachments %+v", nm.Attachments)
	}
	if strings.Contains(nm.Text, "482913") || !strings.Contains(nm.Text, "to sign in") {
		t.Errorf("the code was stored unmasked, or the text lost: %q", nm.Text)
	}
	if !nm.List || !nm.OneClick || !slices.Contains(nm.Unsubscribe, "https://bank.example/unsub?token=s3cr3tt0k3n") {
		t.Errorf("list %v one-click %v unsubscribe %q", nm.List, nm.OneClick, nm.Unsubscribe)
	}
	shown := ""
	for _, h := range nm.Headers {
		if strings.Contains(h.Value, "s3cr3tt0k3n") {
			t.Errorf("a shown header keeps the unsubscribe token: %s: %s", h.Name, h.Value)
		}
		if h.Name == "List-Unsubscribe" {
			shown = h.Value
		}
	}
	if !strings.Contains(shown, "https://bank.example/unsub") {
		t.Errorf("List-Unsubscribe shown as %q; want the link without its token", shown)
	}
	if !nm.Forged || nm.Authentic {
		t.Errorf("forged %v authentic %v; want forged by the trusted server's DMARC fail", nm.Forged, nm.Authentic)
	}
	if nm.Size == 0 {
		t.Error("no size")
	}
	// The same verdict from a server not trusted is ignored.
	if nm := stored(t, listMail, "other.example"); nm.Forged {
		t.Error("forged on the word of a server not trusted")
	}
}

// TestJudgeAuthentic: a DKIM pass of the From domain from a trusted server vouches for it.
func TestJudgeAuthentic(t *testing.T) {
	raw := "From: a@shop.example\nTo: b@example.test\nSubject: hi\n" +
		"Authentication-Results: mx.trusted.example; dkim=pass header.d=shop.example; dmarc=pass header.from=shop.example\n\nhello\n"
	if nm := stored(t, raw, "mx.trusted.example"); !nm.Authentic || nm.Forged {
		t.Errorf("authentic %v forged %v; want authentic", nm.Authentic, nm.Forged)
	}
	if nm := stored(t, raw); nm.Authentic {
		t.Error("authentic with no trusted server")
	}
}

// TestFillInvitation: an iTIP invitation is marked with its method and UID and its calendar
// kept; a size the kind gave is kept.
func TestFillInvitation(t *testing.T) {
	raw := "From: a@example.test\nTo: b@example.test\nSubject: Meeting\nMIME-Version: 1.0\n" +
		"Content-Type: text/calendar; method=REQUEST; charset=utf-8\n\n" +
		"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//t//EN\nMETHOD:REQUEST\nBEGIN:VEVENT\nUID:ev-1@example.test\n" +
		"DTSTAMP:20250101T000000Z\nDTSTART:20250102T100000Z\nSUMMARY:Meeting\nORGANIZER:mailto:a@example.test\nEND:VEVENT\nEND:VCALENDAR\n"
	p, err := mailparse.Parse(strings.NewReader(strings.ReplaceAll(raw, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	nm := &store.NewMessage{Size: 12345}
	Fill(nm, p)
	if nm.Invitation != "request" || nm.InvitationUID != "ev-1@example.test" || !strings.Contains(nm.Calendar, "BEGIN:VEVENT") {
		t.Errorf("invitation %q uid %q calendar %d bytes", nm.Invitation, nm.InvitationUID, len(nm.Calendar))
	}
	if nm.Size != 12345 {
		t.Errorf("the kind's size %d was replaced", nm.Size)
	}
}

// TestWarnings: a warning is told masked and kept; the next sync knows it, and drops it
// when the item synced cleanly; a place gone drops its warnings.
func TestWarnings(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.EnsureAccount(ctx, "home", "maildir")
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	w := NewWarnings(ctx, st, id, Options{Warn: func(s string) { told = append(told, s) }})
	w.Add(ctx, "INBOX", "1.eml", "cannot read 1.eml: it says 482913 is your code")
	w.Add(ctx, "INBOX", "2.eml", "cannot read 2.eml")
	w.Add(ctx, "Archive", "", "cannot open Archive")
	if len(told) != 3 || strings.Contains(told[0], "482913") {
		t.Fatalf("told %q; want three, the code masked", told)
	}
	if err := w.Done(ctx, "INBOX"); err != nil {
		t.Fatal(err)
	}
	kept, _ := st.SyncWarnings(ctx, id)
	if len(kept) != 3 || strings.Contains(kept[1].Text+kept[2].Text, "482913") {
		t.Fatalf("kept %+v; want three, masked", kept)
	}
	// The next sync: 1.eml fails again, 2.eml syncs cleanly, Archive is gone.
	w = NewWarnings(ctx, st, id, Options{})
	if b := w.Before("INBOX"); !slices.Equal(b, []string{"1.eml", "2.eml"}) {
		t.Errorf("Before(INBOX) = %q; want the two items warned about", b)
	}
	w.Add(ctx, "INBOX", "1.eml", "cannot read 1.eml")
	if err := w.Done(ctx, "INBOX"); err != nil {
		t.Fatal(err)
	}
	if err := w.Places(ctx, []string{"INBOX"}); err != nil {
		t.Fatal(err)
	}
	kept, _ = st.SyncWarnings(ctx, id)
	if len(kept) != 1 || kept[0].Place != "INBOX" || kept[0].Item != "1.eml" {
		t.Errorf("kept %+v; want only 1.eml's", kept)
	}
}

// TestSyncedLine: a mail account's line, or the kind's own words.
func TestSyncedLine(t *testing.T) {
	r := Result{New: 3, Deleted: 1, FlagsChanged: 2, Folders: 5}
	if got := (Kind{}).SyncedLine(r); got != "3 new, 1 gone, 2 flag changes, 5 folders" {
		t.Errorf("mail line %q", got)
	}
	k := Kind{Synced: func(r Result) string { return "notes" }}
	if got := k.SyncedLine(r); got != "notes" {
		t.Errorf("the kind's line %q", got)
	}
}

// TestFlagNames: the flags naming a kind are the first Naming of its list, at least one.
func TestFlagNames(t *testing.T) {
	f := Flags{List: []Flag{{Name: "caldav"}, {Name: "carddav"}, {Name: "user"}}, Naming: 2}
	if n := f.Names(); len(n) != 2 || n[1].Name != "carddav" {
		t.Errorf("Names = %+v", n)
	}
	f.Naming = 0
	if n := f.Names(); len(n) != 1 || n[0].Name != "caldav" {
		t.Errorf("Names with Naming 0 = %+v", n)
	}
	if n := (Flags{Naming: 3}).Names(); len(n) != 0 {
		t.Errorf("Names of no flags = %+v", n)
	}
}

// TestReadError: the person reads why, and the cause stays reachable.
func TestReadError(t *testing.T) {
	e := &ReadError{Err: io.ErrUnexpectedEOF}
	if e.Error() != "cannot read the message from the server (unexpected EOF)" || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Errorf("%q, is EOF %v", e.Error(), errors.Is(e, io.ErrUnexpectedEOF))
	}
}

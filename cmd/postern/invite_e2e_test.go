package main

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/testing/davtest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// inviteMessage is an iMIP REQUEST (RFC 6047) from organiser to the person: a text part and
// a text/calendar; method=REQUEST part, as calendar programs send them.
func inviteMessage(organiser, me, uid, msgid string) []byte {
	ics := strings.Join([]string{
		"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Example//Calendar//EN", "METHOD:REQUEST",
		"BEGIN:VEVENT", "UID:" + uid, "DTSTAMP:20261120T090000Z", "SEQUENCE:0",
		"DTSTART:20261201T140000Z", "DTEND:20261201T150000Z", "SUMMARY:Design review", "LOCATION:Room 4",
		"X-EXAMPLE-KEEP:kept as sent",
		"ORGANIZER;CN=Olga:mailto:" + organiser,
		"ATTENDEE;CN=Olga;PARTSTAT=ACCEPTED:mailto:" + organiser,
		"ATTENDEE;CN=Me;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:" + me,
		"END:VEVENT", "END:VCALENDAR", "",
	}, "\r\n")
	return []byte(fmt.Sprintf("From: Olga <%s>\r\nTo: Me <%s>\r\nSubject: Invitation: Design review\r\nDate: Fri, 20 Nov 2026 09:00:00 +0000\r\nMessage-ID: <%s>\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n"+
		"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nYou are invited to the design review.\r\n"+
		"--b1\r\nContent-Type: text/calendar; charset=utf-8; method=REQUEST\r\n\r\n%s--b1--\r\n", organiser, me, msgid, ics))
}

// calendarPart returns the text/calendar part of a raw message and its method parameter.
func calendarPart(t *testing.T, raw []byte) (string, string) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		t.Fatalf("the reply is %s (%v), not multipart", mt, err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable
		if err != nil {
			t.Fatalf("no text/calendar part in the reply: %v\n%s", err, raw)
		}
		ct, cp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if ct == "text/calendar" {
			b, _ := io.ReadAll(p)
			return strings.ReplaceAll(string(b), "\r\n ", ""), cp["method"]
		}
	}
}

// TestInvitationAnswered is issue 16's fourth must-show: an iMIP invitation in the INBOX is
// marked in mail_search's row and shown in mail_show; calendar_respond accept sends nothing
// when prepared and exactly one REPLY with PARTSTAT=ACCEPTED to the organiser (counted in
// Mailpit) when committed; the token does not work twice; the event is then in the person's
// Radicale calendar (read back with a request of the test's own) and in agenda.
func TestInvitationAnswered(t *testing.T) {
	mb := newMailbox(t, "host")
	dav := davtest.Radicale(t)
	du := dav.NewUser(t)
	calURL := du.MkCalendar(t, "work", "Work", "", "VEVENT")
	organiser := smtptest.Addr("olga")
	uid := "review-" + fmt.Sprint(time.Now().UnixNano()) + "@example.org"
	mb.user.AddMessage(t, "INBOX", inviteMessage(organiser, mb.own, uid, "invite-"+uid), "")
	cfg, _ := os.ReadFile(mb.cfg)
	cfg = append([]byte("time_zone = \"Europe/Paris\"\n\n"), cfg...)
	cfg = append(cfg, fmt.Sprintf("\n[[accounts]]\nname = \"cal\"\nkind = \"caldav\"\ncaldav = %q\nuser = %q\npassword_cmd = %q\naddress = %q\n",
		du.CalendarHome, du.Name, du.PasswordCmd(), mb.own)...)
	if err := os.WriteFile(mb.cfg, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	mb.sync(t)

	// Without calendar:write the answer is refused, saying which scope is missing.
	narrow := mb.connect(t, "read,read:bodies,mail:send", nil)
	id := messageID(t, narrow, `subject:"Design review"`)
	if _, text, isErr := call(t, narrow, "calendar_respond", map[string]any{"id": id, "answer": "accept"}); !isErr || !strings.Contains(text, "calendar:write") {
		t.Fatalf("calendar_respond without calendar:write: %v %s", isErr, text)
	}

	cs := mb.connect(t, allScopes(), nil)
	sc, text, _ := call(t, cs, "mail_search", map[string]any{"query": `subject:"Design review"`})
	row := sc["messages"].([]any)[0].(map[string]any)
	if row["invitation"] != "request" {
		t.Fatalf("the row does not say it is an invitation: %s", text)
	}
	if sc, text, _ := call(t, cs, "mail_search", map[string]any{"query": "subject:friday"}); strings.Contains(text, "invitation") {
		t.Errorf("a message without an invitation is marked: %v", sc)
	}
	show, text, isErr := call(t, cs, "mail_show", map[string]any{"id": id})
	if isErr {
		t.Fatal(text)
	}
	inv, _ := show["invitation"].(map[string]any)
	if inv == nil || inv["summary"] != "Design review" || inv["location"] != "Room 4" || inv["method"] != "request" ||
		inv["start"] != "2026-12-01 15:00 Europe/Paris" || inv["end"] != "2026-12-01 16:00 Europe/Paris" || inv["my_answer"] != "needs-action" ||
		!strings.Contains(fmt.Sprint(inv["organizer"]), organiser) {
		t.Fatalf("mail_show's invitation: %v\n%s", inv, text)
	}

	args := map[string]any{"id": id, "answer": "accept"}
	prep, text, isErr := call(t, cs, "calendar_respond", args)
	if isErr {
		t.Fatalf("calendar_respond: %s", text)
	}
	if !strings.Contains(text, "PARTSTAT=ACCEPTED") || !strings.Contains(text, "calendar Work") {
		t.Errorf("the preview does not show the reply and the calendar copy:\n%s", text)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(mb.smtp.Messages(t, organiser)); n != 0 {
		t.Fatalf("the prepare sent %d messages", n)
	}
	res, text, isErr := call(t, cs, "calendar_respond_commit", with(args, "token", prep["token"]))
	if isErr {
		t.Fatalf("calendar_respond_commit: %s", text)
	}
	if res["outcome"] != "sent" || res["answer"] != "accepted" || res["calendar"] != "Work" || res["event"] == nil || res["warning"] != nil {
		t.Fatalf("the commit answered %v", res)
	}
	got := mb.smtp.WaitCount(t, organiser, 1, 10*time.Second)
	if len(got) != 1 || len(got[0].To) != 1 || !strings.EqualFold(got[0].To[0], organiser) || !strings.HasPrefix(got[0].Subject, "Accepted: Design review") {
		t.Fatalf("Mailpit holds %+v", got)
	}
	ics, method := calendarPart(t, mb.smtp.Raw(t, got[0].ID))
	if method != "REPLY" || !strings.Contains(ics, "METHOD:REPLY") || !strings.Contains(ics, "UID:"+uid) ||
		!strings.Contains(ics, "PARTSTAT=ACCEPTED") || !strings.Contains(ics, "mailto:"+mb.own) || strings.Contains(ics, "RSVP") {
		t.Fatalf("the reply's text/calendar part (method=%s):\n%s", method, ics)
	}

	// The token works once.
	if _, text, isErr := call(t, cs, "calendar_respond_commit", with(args, "token", prep["token"])); !isErr {
		t.Fatalf("the token was taken twice: %s", text)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(mb.smtp.Messages(t, organiser)); n != 1 {
		t.Fatalf("%d replies in Mailpit after a replayed token, want 1", n)
	}

	// The event is in the person's calendar on the server, as the organiser sent it with
	// the person's answer.
	data, etag := du.Get(t, calURL+uid+".ics")
	if etag == "" || !strings.Contains(data, "UID:"+uid) || !strings.Contains(data, "X-EXAMPLE-KEEP:kept as sent") || strings.Contains(data, "METHOD:") {
		t.Fatalf("the calendar copy on the server:\n%s", data)
	}
	if !strings.Contains(strings.ReplaceAll(data, "\r\n ", ""), "PARTSTAT=ACCEPTED;ROLE") && !strings.Contains(strings.ReplaceAll(data, "\r\n ", ""), "PARTSTAT=ACCEPTED:mailto:"+mb.own) {
		t.Errorf("the copy does not hold the person's answer:\n%s", data)
	}
	ag, text, isErr := call(t, cs, "agenda", map[string]any{"from": "2026-12-01", "to": "2026-12-01"})
	if isErr {
		t.Fatal(text)
	}
	evs, _ := ag["events"].([]any)
	if len(evs) != 1 || evs[0].(map[string]any)["summary"] != "Design review" || evs[0].(map[string]any)["my_answer"] != "accepted" ||
		evs[0].(map[string]any)["start"] != "2026-12-01 15:00 Europe/Paris" {
		t.Fatalf("agenda: %s", text)
	}
	show, text, _ = call(t, cs, "mail_show", map[string]any{"id": id})
	if inv, _ := show["invitation"].(map[string]any); inv["my_answer"] != "accepted" || inv["in_calendar"] != "Work" {
		t.Errorf("mail_show after the answer: %s", text)
	}
}

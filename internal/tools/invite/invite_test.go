package invite_test

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// request is an iMIP REQUEST from olga to the person (sam), as calendar programs send one.
func request(summary string) string {
	ics := strings.Join([]string{
		"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Example//Calendar//EN", "METHOD:REQUEST",
		"BEGIN:VEVENT", "UID:review-1@example.org", "DTSTAMP:20261120T090000Z", "SEQUENCE:0",
		"DTSTART:20261201T140000Z", "DTEND:20261201T150000Z", "SUMMARY:" + summary, "LOCATION:Room 4",
		"ORGANIZER;CN=Olga:mailto:olga@example.org",
		"ATTENDEE;CN=Sam;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:sam@example.com",
		"END:VEVENT", "END:VCALENDAR", "",
	}, "\r\n")
	return "From: Olga <olga@example.org>\r\nTo: Sam <sam@example.com>\r\nSubject: Invitation\r\n" +
		"Date: Fri, 20 Nov 2026 09:00:00 +0000\r\nMessage-ID: <inv-1@example.org>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n" +
		"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nYou are invited.\r\n" +
		"--b1\r\nContent-Type: text/calendar; charset=utf-8; method=REQUEST\r\n\r\n" + ics + "--b1--\r\n"
}

// TestInvitationShownAndAnswerRefused: mail_show shows the event an invitation carries, its
// title kept within the answer's quotes however it is written; calendar_respond is refused
// without calendar:write, for a message that carries none, and from an account that cannot send.
func TestInvitationShownAndAnswerRefused(t *testing.T) {
	m := newMailbox(t, map[string]string{
		"1.a:2,S": request(`Design review"; injected: "yes`),
		"2.b:2,S": "From: ann@example.com\r\nTo: sam@example.com\r\nSubject: plain\r\nDate: Mon, 2 Jun 2025 09:00:00 +0000\r\nMessage-ID: <p@example.com>\r\n\r\nNo invitation.\r\n",
	})
	sc, text := m.must(bodies, generated.ToolMailSearch, map[string]any{"query": "subject:invitation"})
	found := rows(sc, "messages")
	if len(found) != 1 || found[0]["invitation"] != "request" {
		t.Fatalf("mail_search: want the invitation marked as a request: %s", text)
	}
	id := found[0]["id"].(string)

	sc, text = m.must(bodies, generated.ToolMailShow, map[string]any{"id": id})
	inv, _ := sc["invitation"].(map[string]any)
	if inv == nil || inv["method"] != "request" || inv["summary"] != `Design review"; injected: "yes` || inv["location"] != "Room 4" ||
		!strings.Contains(inv["organizer"].(string), "olga@example.org") || !strings.HasPrefix(inv["start"].(string), "2026-12-01") {
		t.Fatalf("mail_show: want the event's title, place, organiser and start: %s", text)
	}
	if strings.Contains(text, "\ninjected:") || strings.Contains(text, `summary: "Design review"; injected`) {
		t.Errorf("the title's quote ended the string in the text form: %s", text)
	}

	sc, text = m.must(bodies, generated.ToolMailSearch, map[string]any{"query": "subject:plain"})
	plainID := rows(sc, "messages")[0]["id"].(string)
	if sc, text := m.must(bodies, generated.ToolMailShow, map[string]any{"id": plainID}); sc["invitation"] != nil {
		t.Errorf("a message without an invitation shows one: %s", text)
	}

	if _, text, isErr := m.call(bodies+",mail:send", generated.ToolCalendarRespond, map[string]any{"id": id, "answer": "accept"}); !isErr || !strings.Contains(text, "calendar:write") {
		t.Errorf("calendar_respond without calendar:write: want a refusal naming the scope: %s", text)
	}
	if _, text, isErr := m.call(bodies+",mail:send,calendar:write", generated.ToolCalendarRespond, map[string]any{"id": plainID, "answer": "accept"}); !isErr || !strings.Contains(text, "invitation") {
		t.Errorf("calendar_respond to a message without an invitation: want a refusal saying so: %s", text)
	}
	_, text, isErr := m.call(bodies+",mail:send,calendar:write", generated.ToolCalendarRespond, map[string]any{"id": id, "answer": "accept"})
	if !isErr || !strings.Contains(text, "sending need") {
		t.Errorf("calendar_respond from an account that cannot send: want a refusal saying so: %s", text)
	}
}

package mailparse

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestInvitationFound(t *testing.T) {
	ics := "BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:abc-\r\n 123@example.org\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	reply := strings.Replace(ics, "REQUEST", "REPLY", 1)
	head := "From: a@example.org\r\nSubject: s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nHello.\r\n"
	cases := []struct {
		name, part, method, uid string
	}{
		{"inline", "--B\r\nContent-Type: text/calendar; charset=utf-8; method=REQUEST\r\n\r\n" + ics, "REQUEST", "abc-123@example.org"},
		{"attached base64", "--B\r\nContent-Type: application/ics; name=invite.ics\r\nContent-Disposition: attachment; filename=invite.ics\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
			base64.StdEncoding.EncodeToString([]byte(strings.Replace(ics, "REQUEST", "CANCEL", 1))) + "\r\n", "CANCEL", "abc-123@example.org"},
		{"method only in the parameter", "--B\r\nContent-Type: text/calendar; method=request\r\n\r\n" + strings.Replace(ics, "METHOD:REQUEST\r\n", "", 1), "REQUEST", "abc-123@example.org"},
		{"a reply is no invitation", "--B\r\nContent-Type: text/calendar; method=REPLY\r\n\r\n" + reply, "", ""},
		{"a forwarded invitation is not the person's", "--B\r\nContent-Type: message/rfc822\r\n\r\nSubject: fw\r\nContent-Type: text/calendar; method=REQUEST\r\n\r\n" + ics, "", ""},
	}
	for _, c := range cases {
		m, err := Parse(strings.NewReader(head + c.part + "--B--\r\n"))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.method == "" && m.Invitation != nil:
			t.Errorf("%s: found %+v", c.name, m.Invitation)
		case c.method != "" && (m.Invitation == nil || m.Invitation.Method != c.method || m.Invitation.UID != c.uid || !strings.Contains(m.Invitation.Calendar, "SUMMARY:x")):
			t.Errorf("%s: %+v", c.name, m.Invitation)
		}
		if m.Text != "Hello." && !strings.HasPrefix(m.Text, "Hello.") {
			t.Errorf("%s: text %q", c.name, m.Text)
		}
	}
}

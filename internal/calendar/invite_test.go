package calendar

import (
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
)

const inviteRequest = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//Cal//EN\r\nMETHOD:REQUEST\r\n" +
	"BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" +
	"BEGIN:VEVENT\r\nUID:weekly-1@example.org\r\nDTSTAMP:20260301T090000Z\r\nSEQUENCE:2\r\n" +
	"DTSTART;TZID=Europe/Paris:20260310T150000\r\nDTEND;TZID=Europe/Paris:20260310T160000\r\nRRULE:FREQ=WEEKLY\r\n" +
	"SUMMARY:Team sync\r\nLOCATION:Room 4\r\nX-SECRET-NOTE:keep me\r\n" +
	"ORGANIZER;CN=Olga Organiser:mailto:olga@example.org\r\n" +
	"ATTENDEE;CN=Olga Organiser;PARTSTAT=ACCEPTED:mailto:olga@example.org\r\n" +
	"ATTENDEE;CN=Me;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:Me@Example.test\r\n" +
	"END:VEVENT\r\nEND:VCALENDAR\r\n"

// The instance of 17 March moved to 16:00: an invitation for that one instance.
const inviteInstance = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//Cal//EN\r\nMETHOD:REQUEST\r\n" +
	"BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n" +
	"BEGIN:VEVENT\r\nUID:weekly-1@example.org\r\nDTSTAMP:20260301T090000Z\r\nSEQUENCE:3\r\n" +
	"RECURRENCE-ID;TZID=Europe/Paris:20260317T150000\r\n" +
	"DTSTART;TZID=Europe/Paris:20260317T160000\r\nDTEND;TZID=Europe/Paris:20260317T170000\r\nSUMMARY:Team sync (moved)\r\n" +
	"ORGANIZER:mailto:olga@example.org\r\nATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:me@example.test\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

const testProdID = "-//postern//calendar_respond//EN"

// partstats are the answers calendar_respond gives, by the PARTSTAT each writes.
var partstats = []string{"ACCEPTED", "TENTATIVE", "DECLINED"}

// attendeeIn is the person's ATTENDEE in c as a reader sees it (nil when c does not list them).
func attendeeIn(iv *Invite, c *ical.Component) *ical.Prop {
	for i := range c.Props[ical.PropAttendee] {
		p := &c.Props[ical.PropAttendee][i]
		v := strings.TrimSpace(p.Value)
		if len(v) >= 7 && strings.EqualFold(v[:7], "mailto:") {
			v = v[7:]
		}
		if strings.EqualFold(v, iv.Me) {
			return p
		}
	}
	return nil
}

func decodeReply(t *testing.T, s string) *ical.Calendar {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n") {
		if len(l) > 75 {
			t.Errorf("line over 75 octets: %q", l)
		}
	}
	cal, err := ical.NewDecoder(strings.NewReader(s)).Decode()
	if err != nil {
		t.Fatalf("the reply does not parse: %v\n%s", err, s)
	}
	return cal
}

func TestReplyForEachAnswer(t *testing.T) {
	stamp := time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC)
	for _, answer := range partstats {
		iv, err := ReadInvite(inviteRequest, []string{"me@example.test"}, testProdID)
		if err != nil {
			t.Fatal(err)
		}
		s, err := iv.Reply(answer, stamp)
		if err != nil {
			t.Fatal(err)
		}
		cal := decodeReply(t, s)
		if m := cal.Props.Get(ical.PropMethod); m == nil || m.Value != "REPLY" {
			t.Errorf("%s: METHOD %v", answer, m)
		}
		var evs []*ical.Component
		for _, c := range cal.Children {
			if c.Name == ical.CompEvent {
				evs = append(evs, c)
			}
			if c.Name == ical.CompTimezone {
				t.Errorf("%s: a VTIMEZONE without a RECURRENCE-ID naming it", answer)
			}
		}
		if len(evs) != 1 {
			t.Fatalf("%s: %d events\n%s", answer, len(evs), s)
		}
		ev := evs[0]
		checks := map[string]string{
			ical.PropUID: "weekly-1@example.org", ical.PropDateTimeStamp: "20260302T083000Z",
			ical.PropSequence: "2", ical.PropOrganizer: "mailto:olga@example.org",
		}
		for name, v := range checks {
			if p := ev.Props.Get(name); p == nil || p.Value != v {
				t.Errorf("%s: %s is %v, want %s", answer, name, p, v)
			}
		}
		if ev.Props.Get(ical.PropOrganizer).Params.Get(ical.ParamCommonName) != "Olga Organiser" {
			t.Errorf("%s: the organiser's CN is lost", answer)
		}
		as := ev.Props.Values(ical.PropAttendee)
		if len(as) != 1 || as[0].Value != "mailto:Me@Example.test" {
			t.Fatalf("%s: attendees %v, want only the person's", answer, as)
		}
		if ps := as[0].Params.Get(ical.ParamParticipationStatus); ps != answer {
			t.Errorf("%s: PARTSTAT=%s, want %s", answer, ps, answer)
		}
		if as[0].Params.Get(ical.ParamRSVP) != "" || as[0].Params.Get(ical.ParamCommonName) != "Me" || as[0].Params.Get(ical.ParamRole) != "REQ-PARTICIPANT" {
			t.Errorf("%s: attendee params %v: RSVP dropped, CN and ROLE kept", answer, as[0].Params)
		}
		for _, name := range []string{ical.PropRecurrenceID, ical.PropRecurrenceRule, ical.PropSummary, ical.PropLocation, "X-SECRET-NOTE"} {
			if ev.Props.Get(name) != nil {
				t.Errorf("%s: the reply carries %s", answer, name)
			}
		}
	}
}

func TestReplyForAnInstance(t *testing.T) {
	iv, err := ReadInvite(inviteInstance, []string{"other@example.test", "me@example.test"}, testProdID)
	if err != nil {
		t.Fatal(err)
	}
	s, err := iv.Reply("TENTATIVE", time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	cal := decodeReply(t, s)
	var ev *ical.Component
	zones := 0
	for _, c := range cal.Children {
		switch c.Name {
		case ical.CompEvent:
			ev = c
		case ical.CompTimezone:
			zones++
		}
	}
	if ev == nil || zones != 1 {
		t.Fatalf("events %v, zones %d:\n%s", ev, zones, s)
	}
	r := ev.Props.Get(ical.PropRecurrenceID)
	if r == nil || r.Value != "20260317T150000" || r.Params.Get(ical.ParamTimezoneID) != "Europe/Paris" {
		t.Errorf("RECURRENCE-ID %v, want the request's", r)
	}
	if p := ev.Props.Get(ical.PropSequence); p == nil || p.Value != "3" {
		t.Errorf("SEQUENCE %v, want 3", p)
	}
	if a := ev.Props.Get(ical.PropAttendee); a == nil || a.Params.Get(ical.ParamParticipationStatus) != "TENTATIVE" {
		t.Errorf("ATTENDEE %v", a)
	}
}

func TestInviteRefusals(t *testing.T) {
	if _, err := ReadInvite(inviteRequest, []string{"stranger@example.test"}, testProdID); err == nil || !strings.Contains(err.Error(), "not an attendee") && !strings.Contains(err.Error(), "is an attendee") {
		t.Errorf("a person not invited: %v", err)
	}
	noOrg := strings.Replace(inviteInstance, "ORGANIZER:mailto:olga@example.org\r\n", "", 1)
	if _, err := ReadInvite(noOrg, []string{"me@example.test"}, testProdID); err == nil || !strings.Contains(err.Error(), "organiser") {
		t.Errorf("no organiser: %v", err)
	}
}

// The calendar copy: the request without METHOD, the person's answer set, everything else
// kept; merged into an existing copy, a newer instance replaces the old one and the master stays.
func TestCalendarCopy(t *testing.T) {
	iv, _ := ReadInvite(inviteRequest, []string{"me@example.test"}, testProdID)
	s, err := iv.NewCopy("ACCEPTED")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s, "METHOD") || !strings.Contains(s, "X-SECRET-NOTE:keep me") || !strings.Contains(s, "RRULE:FREQ=WEEKLY") {
		t.Errorf("copy:\n%s", s)
	}
	if !strings.Contains(strings.ReplaceAll(s, "\r\n ", ""), "CN=Me;PARTSTAT=ACCEPTED;ROLE=REQ-PARTICIPANT:mailto:Me@Example.test") || strings.Contains(s, "RSVP") {
		t.Errorf("the person's answer is not in the copy:\n%s", s)
	}
	inst, _ := ReadInvite(inviteInstance, []string{"me@example.test"}, testProdID)
	m, err := inst.MergedCopy([]byte(s), "DECLINED")
	if err != nil {
		t.Fatal(err)
	}
	cal := decodeReply(t, m)
	var master, override *ical.Component
	for _, c := range cal.Children {
		if c.Name == ical.CompEvent {
			if c.Props.Get(ical.PropRecurrenceID) != nil {
				override = c
			} else {
				master = c
			}
		}
	}
	if master == nil || override == nil || master.Props.Get("X-SECRET-NOTE") == nil {
		t.Fatalf("merged:\n%s", m)
	}
	if a := attendeeIn(inst, override); a == nil || a.Params.Get(ical.ParamParticipationStatus) != "DECLINED" {
		t.Errorf("the instance's answer: %v", a)
	}
	if a := attendeeIn(iv, master); a == nil || a.Params.Get(ical.ParamParticipationStatus) != "ACCEPTED" {
		t.Errorf("the series' answer changed: %v", a)
	}
}

// The person's calendar copy already holds the series, written by another client: merging
// an instance the organiser moved keeps every line of that copy byte for byte (its folding
// with a tab, its parameter order, its lower-case and X- properties, its alarm).
func TestMergedCopyKeepsTheCalendarsLines(t *testing.T) {
	existing := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Other//Client//EN\r\n" +
		"BEGIN:VEVENT\r\nUID:weekly-1@example.org\r\nDTSTAMP:20260101T000000Z\r\nSEQUENCE:2\r\n" +
		"DTSTART;TZID=Europe/Paris:20260310T150000\r\nDTEND;TZID=Europe/Paris:20260310T160000\r\n" +
		"RRULE:FREQ=WEEKLY\r\nSUMMARY:Team sync\r\n" +
		"X-CLIENT-TAG;Z=2;A=1:keep me exactly as I am, folded over a line be\r\n\tcause this client folds with tabs\r\n" +
		"x-lower:small\r\nATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Me:mailto:me@example.test\r\n" +
		"BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n" +
		"END:VEVENT\r\nEND:VCALENDAR\r\n"
	inst, err := ReadInvite(inviteInstance, []string{"me@example.test"}, testProdID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := inst.MergedCopy([]byte(existing), "DECLINED")
	if err != nil {
		t.Fatal(err)
	}
	// Every line of the calendar's copy is there, in order, as it was.
	rest := m
	for _, l := range strings.SplitAfter(existing, "\r\n") {
		i := strings.Index(rest, l)
		if i < 0 {
			t.Fatalf("line %q of the calendar's copy is not kept as it was:\n%s", l, m)
		}
		rest = rest[i+len(l):]
	}
	// The request's zone (the copy had none) and its instance, with the answer, are added.
	if !strings.Contains(m, "BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\n") || !strings.Contains(m, "RECURRENCE-ID;TZID=Europe/Paris:20260317T150000\r\n") ||
		!strings.Contains(m, "ATTENDEE;PARTSTAT=DECLINED:mailto:me@example.test\r\n") {
		t.Fatalf("merged:\n%s", m)
	}
	cal, err := Parse(m, time.UTC)
	if err != nil || len(cal.Problems) > 0 {
		t.Fatalf("the merged copy does not read back: %v %v", err, cal.Problems)
	}
	// A request older than the calendar's copy (a lower SEQUENCE) changes nothing but the answer.
	older := strings.Replace(inviteRequest, "SEQUENCE:2", "SEQUENCE:1", 1)
	iv, err := ReadInvite(older, []string{"me@example.test"}, testProdID)
	if err != nil {
		t.Fatal(err)
	}
	m, err = iv.MergedCopy([]byte(existing), "TENTATIVE")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(existing, "ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Me:mailto:me@example.test\r\n",
		Fold("ATTENDEE;CN=Me;PARTSTAT=TENTATIVE;ROLE=REQ-PARTICIPANT:mailto:me@example.test", "\r\n"), 1)
	want = strings.Replace(want, "BEGIN:VEVENT", "BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\nBEGIN:VEVENT", 1)
	if m != want {
		t.Fatalf("an older request merged:\n%s\nwant\n%s", m, want)
	}
}

// A request as a mail reader may hand it over: bare LF line ends, a line far over 75 octets,
// quoted parameters holding ';', ':' and ','. What postern writes from it has CR LF line ends,
// no line over 75 octets, and the same values.
func TestInviteFromAnUntidyRequest(t *testing.T) {
	long := strings.Repeat("Agenda item é, ", 20)
	req := strings.Join([]string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Example//Cal//EN", "METHOD:REQUEST",
		"BEGIN:VEVENT", "UID:untidy@example.org", "DTSTAMP:20260301T090000Z",
		"DTSTART:20260310T150000Z", "DTEND:20260310T160000Z", "SUMMARY:Review",
		"DESCRIPTION:" + EscapeText(long),
		`ORGANIZER;CN="Olga; the: organiser":mailto:olga@example.org`,
		`ATTENDEE;RSVP=TRUE;CN="Me, Myself";DELEGATED-FROM="mailto:boss@example.test":mailto:me@example.test`,
		"END:VEVENT", "END:VCALENDAR", ""}, "\n")
	iv, err := ReadInvite(req, []string{"me@example.test"}, testProdID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := iv.Reply("ACCEPTED", time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	c, err := iv.NewCopy("ACCEPTED")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"reply": r, "copy": c} {
		if strings.Contains(strings.ReplaceAll(s, "\r\n", ""), "\n") || !strings.HasSuffix(s, "\r\n") {
			t.Errorf("%s: a line end that is not CR LF:\n%q", name, s)
		}
		cal := decodeReply(t, s) // and no line over 75 octets
		var ev *ical.Component
		for _, k := range cal.Children {
			if k.Name == ical.CompEvent {
				ev = k
			}
		}
		if ev == nil {
			t.Fatalf("%s: no event:\n%s", name, s)
		}
		a := attendeeIn(iv, ev)
		if a == nil || a.Params.Get(ical.ParamCommonName) != "Me, Myself" || a.Params.Get(ical.ParamDelegatedFrom) != "mailto:boss@example.test" ||
			a.Params.Get(ical.ParamParticipationStatus) != "ACCEPTED" || a.Params.Get(ical.ParamRSVP) != "" {
			t.Errorf("%s: the person's attendee %+v", name, a)
		}
		if o := ev.Props.Get(ical.PropOrganizer); o == nil || o.Params.Get(ical.ParamCommonName) != "Olga; the: organiser" {
			t.Errorf("%s: organiser %+v", name, o)
		}
	}
	cal := decodeReply(t, c)
	if d := Text(cal.Children[0], ical.PropDescription); d != strings.TrimSpace(long) && d != long {
		t.Errorf("the description changed: %q", d)
	}
}

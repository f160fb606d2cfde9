package calendar

import (
	"strings"
	"testing"
	"time"
)

// ics wraps VEVENT/VTIMEZONE text into a VCALENDAR with CRLF line ends.
func ics(body string) string {
	lines := strings.Split(strings.TrimSpace("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n"+strings.TrimSpace(body)+"\nEND:VCALENDAR"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "\r\n") + "\r\n"
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// starts lists the instances between from and to as "start in UTC / start in
// loc" strings.
func starts(t *testing.T, data string, person *time.Location, from, to string) []string {
	t.Helper()
	c, err := Parse(data, person)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range c.Between(at(t, from), at(t, to)) {
		out = append(out, e.Start.UTC().Format("2006-01-02 15:04Z")+" "+e.Start.In(person).Format("15:04")+" "+Text(e.Comp, "SUMMARY"))
	}
	if len(c.Problems) > 0 {
		t.Logf("problems: %v", c.Problems)
	}
	return out
}

func same(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A weekly 09:00 New York meeting stays at 09:00 New York time across the US
// change (2026-11-01) and so moves in Paris, whose change came a week earlier
// (2026-10-25).
func TestWeeklyAcrossDST(t *testing.T) {
	data := ics(`
BEGIN:VEVENT
UID:ny-weekly
DTSTAMP:20260101T000000Z
DTSTART;TZID=America/New_York:20261012T090000
DTEND;TZID=America/New_York:20261012T100000
RRULE:FREQ=WEEKLY;BYDAY=MO
SUMMARY:NY sync
END:VEVENT`)
	paris := zone(t, "Europe/Paris")
	same(t, starts(t, data, paris, "2026-10-19T00:00:00Z", "2026-11-10T00:00:00Z"),
		"2026-10-19 13:00Z 15:00 NY sync", // EDT, CEST
		"2026-10-26 13:00Z 14:00 NY sync", // EDT, CET
		"2026-11-02 14:00Z 15:00 NY sync", // EST, CET
		"2026-11-09 14:00Z 15:00 NY sync",
	)
	// Seen from New York itself: always 09:00.
	ny := zone(t, "America/New_York")
	same(t, starts(t, data, ny, "2026-10-19T00:00:00Z", "2026-11-10T00:00:00Z"),
		"2026-10-19 13:00Z 09:00 NY sync", "2026-10-26 13:00Z 09:00 NY sync", "2026-11-02 14:00Z 09:00 NY sync", "2026-11-09 14:00Z 09:00 NY sync")
	// The spring change too (US 2027-03-14, EU 2027-03-28).
	same(t, starts(t, data, paris, "2027-03-08T00:00:00Z", "2027-04-02T00:00:00Z"),
		"2027-03-08 14:00Z 15:00 NY sync", "2027-03-15 13:00Z 14:00 NY sync", "2027-03-22 13:00Z 14:00 NY sync", "2027-03-29 13:00Z 15:00 NY sync")
}

// A moved instance (RECURRENCE-ID), one cancelled by EXDATE, one by
// STATUS:CANCELLED, an extra one by RDATE.
func TestOverridesAndExceptions(t *testing.T) {
	data := ics(`
BEGIN:VEVENT
UID:team
DTSTART;TZID=Europe/Paris:20261006T100000
DTEND;TZID=Europe/Paris:20261006T110000
RRULE:FREQ=WEEKLY;COUNT=6
EXDATE;TZID=Europe/Paris:20261013T100000
RDATE;TZID=Europe/Paris:20261016T170000
SUMMARY:Team
END:VEVENT
BEGIN:VEVENT
UID:team
RECURRENCE-ID;TZID=Europe/Paris:20261020T100000
DTSTART;TZID=Europe/Paris:20261021T140000
DTEND;TZID=Europe/Paris:20261021T150000
SUMMARY:Team (moved)
END:VEVENT
BEGIN:VEVENT
UID:team
RECURRENCE-ID:20261027T090000Z
DTSTART;TZID=Europe/Paris:20261027T100000
DTEND;TZID=Europe/Paris:20261027T110000
STATUS:CANCELLED
SUMMARY:Team
END:VEVENT`)
	paris := zone(t, "Europe/Paris")
	same(t, starts(t, data, paris, "2026-10-01T00:00:00Z", "2026-12-01T00:00:00Z"),
		"2026-10-06 08:00Z 10:00 Team",
		"2026-10-16 15:00Z 17:00 Team",
		"2026-10-21 12:00Z 14:00 Team (moved)",
		"2026-11-03 09:00Z 10:00 Team",
		"2026-11-10 09:00Z 10:00 Team",
	)
	c, _ := Parse(data, paris)
	e, ok := c.Instance("20261020T080000Z")
	if !ok || Text(e.Comp, "SUMMARY") != "Team (moved)" || e.Start.UTC().Format(time.RFC3339) != "2026-10-21T12:00:00Z" {
		t.Fatalf("instance 20261020T080000Z: %v %+v", ok, e)
	}
	if _, ok := c.Instance("20261013T080000Z"); ok {
		t.Fatal("an excluded instance was found")
	}
	if e, ok := c.Instance("20261103T090000Z"); !ok || e.RecurrenceID != "20261103T090000Z" {
		t.Fatalf("instance of 3 November: %v %+v", ok, e)
	}
	if w := c.Rule(e); w != "every week, 6 times, except 1 date" {
		t.Fatalf("rule in words: %q", w)
	}
}

// An all-day event is its dates wherever the person is; a floating time is
// read in the person's zone.
func TestAllDayAndFloating(t *testing.T) {
	data := ics(`
BEGIN:VEVENT
UID:holiday
DTSTART;VALUE=DATE:20261030
DTEND;VALUE=DATE:20261101
SUMMARY:Long weekend
END:VEVENT`)
	for _, name := range []string{"Europe/Paris", "Pacific/Auckland", "America/Los_Angeles"} {
		loc := zone(t, name)
		c, _ := Parse(data, loc)
		es := c.Between(time.Date(2026, 10, 29, 0, 0, 0, 0, loc), time.Date(2026, 11, 3, 0, 0, 0, 0, loc))
		if len(es) != 1 || !es[0].AllDay || es[0].FirstDay.Format("2006-01-02") != "2026-10-30" || es[0].LastDay.Format("2006-01-02") != "2026-10-31" ||
			es[0].Start.In(loc).Format("2006-01-02 15:04") != "2026-10-30 00:00" || es[0].End.In(loc).Format("2006-01-02 15:04") != "2026-11-01 00:00" {
			t.Fatalf("%s: %+v", name, es)
		}
		// The day after is outside.
		if es := c.Between(time.Date(2026, 11, 1, 0, 0, 0, 0, loc), time.Date(2026, 11, 2, 0, 0, 0, 0, loc)); len(es) != 0 {
			t.Fatalf("%s: the day after the last holds %+v", name, es)
		}
	}
	floating := ics(`
BEGIN:VEVENT
UID:lunch
DTSTART:20261103T120000
DTEND:20261103T130000
SUMMARY:Lunch
END:VEVENT`)
	same(t, starts(t, floating, zone(t, "Europe/Paris"), "2026-11-01T00:00:00Z", "2026-11-05T00:00:00Z"), "2026-11-03 11:00Z 12:00 Lunch")
	same(t, starts(t, floating, zone(t, "America/New_York"), "2026-11-01T00:00:00Z", "2026-11-05T00:00:00Z"), "2026-11-03 17:00Z 12:00 Lunch")
	c, _ := Parse(floating, zone(t, "Europe/Paris"))
	if e, _ := c.Instance(""); !e.Floating {
		t.Fatal("not floating")
	}
	// A weekly all-day event with an excluded date.
	weekly := ics(`
BEGIN:VEVENT
UID:bins
DTSTART;VALUE=DATE:20261005
RRULE:FREQ=WEEKLY;UNTIL=20261102
EXDATE;VALUE=DATE:20261019
SUMMARY:Bins
END:VEVENT`)
	c, _ = Parse(weekly, zone(t, "Asia/Tokyo"))
	var days []string
	for _, e := range c.Between(at(t, "2026-10-01T00:00:00Z"), at(t, "2026-12-01T00:00:00Z")) {
		days = append(days, e.FirstDay.Format("01-02")+"/"+e.LastDay.Format("01-02")+" "+e.RecurrenceID)
	}
	same(t, days, "10-05/10-05 20261005", "10-12/10-12 20261012", "10-26/10-26 20261026", "11-02/11-02 20261102")
}

// A zone known only from the object's VTIMEZONE: an IANA name in its TZID
// is used; a name that is not one is read from the VTIMEZONE's offsets.
func TestVTimezone(t *testing.T) {
	windows := ics(`
BEGIN:VTIMEZONE
TZID:Eastern Standard Time
BEGIN:STANDARD
DTSTART:16010101T020000
TZOFFSETFROM:-0400
TZOFFSETTO:-0500
RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:16010101T020000
TZOFFSETFROM:-0500
TZOFFSETTO:-0400
RRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3
END:DAYLIGHT
END:VTIMEZONE
BEGIN:VEVENT
UID:win
DTSTART;TZID=Eastern Standard Time:20261026T090000
DTEND;TZID=Eastern Standard Time:20261026T093000
RRULE:FREQ=WEEKLY
SUMMARY:Outlook call
END:VEVENT`)
	paris := zone(t, "Europe/Paris")
	same(t, starts(t, windows, paris, "2026-10-26T00:00:00Z", "2026-11-03T00:00:00Z"),
		"2026-10-26 13:00Z 14:00 Outlook call", "2026-11-02 14:00Z 15:00 Outlook call")
	same(t, starts(t, windows, paris, "2027-03-08T00:00:00Z", "2027-03-16T00:00:00Z"),
		"2027-03-08 14:00Z 15:00 Outlook call", "2027-03-15 13:00Z 14:00 Outlook call")
	c, _ := Parse(windows, paris)
	e, _ := c.Instance("")
	if got := ZoneName(e.Zone, e.Start); got != "UTC-04:00" {
		t.Fatalf("the custom zone is named %q", got)
	}
	mozilla := ics(`
BEGIN:VTIMEZONE
TZID:/mozilla.org/20050126_1/Europe/Berlin
BEGIN:STANDARD
DTSTART:19701025T030000
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
END:STANDARD
END:VTIMEZONE
BEGIN:VEVENT
UID:moz
DTSTART;TZID=/mozilla.org/20050126_1/Europe/Berlin:20260701T090000
DURATION:PT45M
SUMMARY:Berlin
END:VEVENT`)
	// The IANA zone, with its summer time (the VTIMEZONE here gives only winter).
	same(t, starts(t, mozilla, paris, "2026-07-01T00:00:00Z", "2026-07-02T00:00:00Z"), "2026-07-01 07:00Z 09:00 Berlin")
	c, _ = Parse(mozilla, paris)
	if e, _ := c.Instance(""); e.End.Sub(e.Start) != 45*time.Minute || ZoneName(e.Zone, e.Start) != "Europe/Berlin" {
		t.Fatalf("%+v", e)
	}
}

// UNTIL in UTC ends a zoned rule at the right instance; an interval and
// BYDAY lists expand as written.
func TestUntilAndInterval(t *testing.T) {
	data := ics(`
BEGIN:VEVENT
UID:u
DTSTART;TZID=America/New_York:20261030T180000
DTEND;TZID=America/New_York:20261030T190000
RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,FR;UNTIL=20261113T230000Z
SUMMARY:Class
END:VEVENT`)
	same(t, starts(t, data, zone(t, "UTC"), "2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z"),
		"2026-10-30 22:00Z 22:00 Class", "2026-11-10 23:00Z 23:00 Class", "2026-11-13 23:00Z 23:00 Class")
	if w := Words("FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,FR;UNTIL=20261113T230000Z"); w != "every 2 weeks on Tuesday and Friday, until 2026-11-13" {
		t.Fatalf("words: %q", w)
	}
	if w := Words("FREQ=MONTHLY;BYDAY=-1FR"); w != "every month on the last Friday" {
		t.Fatalf("words: %q", w)
	}
}

func TestBrokenInput(t *testing.T) {
	for _, data := range []string{"", "BEGIN:VCALENDAR\r\n", "BEGIN:VEVENT\r\nEND:VEVENT\r\n",
		ics("BEGIN:VEVENT\nUID:x\nSUMMARY:no start\nEND:VEVENT"),
		ics("BEGIN:VEVENT\nUID:x\nDTSTART:2026\nRRULE:FREQ=NOPE\nEND:VEVENT"),
		ics("BEGIN:VEVENT\nUID:x\nDTSTART:20260101T000000Z\nRRULE:FREQ=SECONDLY\nEND:VEVENT"),
		ics("BEGIN:VEVENT\nUID:x\nDTSTART;TZID=Nowhere/Atlantis:20260101T100000\nEND:VEVENT"),
	} {
		c, err := Parse(data, time.UTC)
		if err != nil {
			continue
		}
		c.Between(at(t, "2025-01-01T00:00:00Z"), at(t, "2027-01-01T00:00:00Z"))
		c.Instance("")
		c.Instance("20260101T000000Z")
	}
}

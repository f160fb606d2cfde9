package calendar

import (
	"strings"
	"testing"
	"time"
)

// A VTIMEZONE written for a zone reads back as that zone, even for a reader
// that knows no zone by name (the zone's name is changed so that it must use the description).
func TestVTimezoneReadsBack(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	tz := strings.ReplaceAll(VTimezone("\r\n", ny, 2025, 2027), "TZID:America/New_York", "TZID:Eastern Custom")
	text := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n" + tz + "BEGIN:VEVENT\r\nUID:u\r\nDTSTART;TZID=Eastern Custom:20261102T090000\r\nDTEND;TZID=Eastern Custom:20261102T100000\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	cal, err := Parse(text, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := cal.Instance("")
	if !ok || !e.Start.Equal(time.Date(2026, 11, 2, 14, 0, 0, 0, time.UTC)) {
		t.Fatalf("read back as %v (%v), problems %v", e.Start, ok, cal.Problems)
	}
}

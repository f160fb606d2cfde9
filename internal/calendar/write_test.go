package calendar

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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

// Edits on a text with bare LF line ends: the lines kept are kept as they were, the new ones
// get the text's own line end, and a property inside an alarm is not the event's.
func TestDocEditsKeepTheRest(t *testing.T) {
	text := "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:u\nx-odd;B=2;a=1:folded\n\tover two\nSUMMARY:old\nSUMMARY:duplicate\n" +
		"BEGIN:VALARM\nSUMMARY:alarm\nEND:VALARM\nEND:VEVENT\nEND:VCALENDAR"
	d, err := ParseDoc(text)
	if err != nil {
		t.Fatal(err)
	}
	if d.EOL != "\n" {
		t.Fatalf("line end %q", d.EOL)
	}
	cs := d.Components()
	if len(cs) != 1 || cs[0].Name != "VEVENT" {
		t.Fatalf("components %+v", cs)
	}
	c := d.Apply(cs[0], []Edit{
		Set("SUMMARY", TextLine(d.EOL, "SUMMARY", "new; with, commas\nand a line")),
		Add("CATEGORIES", PropLine(d.EOL, "CATEGORIES", nil, "a")),
		Add("CATEGORIES", PropLine(d.EOL, "CATEGORIES", nil, "b")),
		Set("LOCATION", ""),
	})
	want := "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:u\nx-odd;B=2;a=1:folded\n\tover two\nSUMMARY:new\\; with\\, commas\\nand a line\n" +
		"CATEGORIES:a\nCATEGORIES:b\nBEGIN:VALARM\nSUMMARY:alarm\nEND:VALARM\nEND:VEVENT\nEND:VCALENDAR\n"
	if d.String() != want {
		t.Fatalf("edited:\n%q\nwant\n%q", d.String(), want)
	}
	if l, ok := d.First(c, "X-ODD"); !ok || l.Value() != "foldedover two" || l.Param("A") != "1" {
		t.Errorf("X-ODD read as %q, A=%q", l.Value(), l.Param("A"))
	}
	if got := Changes(text, d.String()); got != "categories added, title changed" {
		t.Errorf("changes: %q", got)
	}
	if !SameText([]byte(text+"\n"), []byte(strings.ReplaceAll(text, "\n", "\r\n")+"\r\n")) || SameText([]byte(text), []byte(d.String())) {
		t.Error("SameText")
	}
	if _, err := ParseDoc("BEGIN:VCARD\r\nEND:VCARD\r\n"); err == nil {
		t.Error("a vCard read as a calendar")
	}
}

// A line is folded at 75 octets, never inside a character, and parameter values holding
// ':', ';' or ',' are quoted.
func TestPropLineFolds(t *testing.T) {
	s := PropLine("\r\n", "SUMMARY", [][2]string{{"X-NOTE", `a:b "c"`}}, strings.Repeat("é", 60))
	for _, l := range strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n") {
		if len(l) > 75 || !utf8.ValidString(l) {
			t.Errorf("physical line %q (%d octets)", l, len(l))
		}
	}
	if !strings.HasPrefix(s, `SUMMARY;X-NOTE="a:b c":éé`) || Unfold(s) != `SUMMARY;X-NOTE="a:b c":`+strings.Repeat("é", 60) {
		t.Errorf("line %q", s)
	}
}

package calwrite

import (
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/calendar"
)

// A server's copy with what a re-encoding would lose: an X- property folded
// mid-word with a tab, parameters in an odd order, lower-case names, an alarm.
const serverCopy = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Other//Client//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:weekly@example.org\r\nDTSTAMP:20260101T000000Z\r\n" +
	"DTSTART;TZID=Europe/Paris:20261005T100000\r\nDTEND;TZID=Europe/Paris:20261005T110000\r\n" +
	"RRULE:FREQ=WEEKLY;BYDAY=MO\r\nSUMMARY:Team sync\r\n" +
	"X-CLIENT-TAG;Z=2;A=1:keep me exactly as I am, folded over a line be\r\n\tcause this client folds with tabs\r\n" +
	"x-lower:small\r\nLOCATION:Room A\r\n" +
	"BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nSUMMARY:alarm text\r\nEND:VALARM\r\n" +
	"END:VEVENT\r\nEND:VCALENDAR\r\n"

func physical(s string) []string { return strings.SplitAfter(s, "\r\n") }

// Every line of before but those named in changed is in after, byte for byte and in order.
func keptLines(t *testing.T, before, after string, changed ...string) {
	t.Helper()
	var want []string
	for _, l := range physical(before) {
		name := strings.ToUpper(strings.SplitN(strings.SplitN(l, ":", 2)[0], ";", 2)[0])
		skip := false
		for _, c := range changed {
			skip = skip || name == c
		}
		if !skip {
			want = append(want, l)
		}
	}
	i := 0
	for _, l := range physical(after) {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	if i != len(want) {
		t.Fatalf("line %q of the server's copy is not kept as it was:\n%s", want[i], after)
	}
}

func TestEditEventKeepsBytes(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	now := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	title := "Team sync, moved"
	out, changed, err := editEvent(serverCopy, "", &generated.CalendarUpdateArgs{Summary: &title}, paris, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, ",") != "title" {
		t.Fatalf("changed %v", changed)
	}
	// The VEVENT's own SUMMARY changed; the alarm's did not.
	keptLines(t, serverCopy, out, "DTSTAMP", "SUMMARY")
	for _, want := range []string{"SUMMARY:Team sync\\, moved\r\n", "SUMMARY:alarm text\r\n", "DTSTAMP:20261001T080000Z\r\n", "LAST-MODIFIED:20261001T080000Z\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "SUMMARY:Team sync\r\n") || strings.Contains(out, "SEQUENCE") {
		t.Errorf("old title kept or SEQUENCE changed for a title:\n%s", out)
	}
}

func TestEditInstanceAddsOverride(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	now := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	start := "2026-10-13 15:00" // the 12th's instance moved to Tuesday afternoon
	out, _, err := editEvent(serverCopy, "20261012T080000Z", &generated.CalendarUpdateArgs{Start: &start}, paris, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	keptLines(t, serverCopy, out)
	for _, want := range []string{"RECURRENCE-ID;TZID=Europe/Paris:20261012T100000\r\n", "DTSTART;TZID=Europe/Paris:20261013T150000\r\n", "DTEND;TZID=Europe/Paris:20261013T160000\r\n", "SEQUENCE:1\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	cal, err := calendar.Parse(out, paris)
	if err != nil {
		t.Fatal(err)
	}
	es := cal.Between(time.Date(2026, 10, 12, 0, 0, 0, 0, paris), time.Date(2026, 10, 20, 0, 0, 0, 0, paris))
	if len(es) != 2 || es[0].Start.In(paris).Format("02 15:04") != "13 15:00" || es[1].Start.In(paris).Format("02 15:04") != "19 10:00" {
		t.Fatalf("instances after the move: %+v", es)
	}
	// Cancelling the moved instance excludes it and drops its override.
	out2, err := excludeInstance(out, "20261012T080000Z", paris, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out2, "EXDATE;TZID=Europe/Paris:20261012T100000\r\n") || strings.Contains(out2, "RECURRENCE-ID") {
		t.Fatalf("exclusion:\n%s", out2)
	}
	keptLines(t, serverCopy, out2, "DTSTAMP")
}

func TestEditTaskCompleteReopen(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	now := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	todo := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VTODO\r\nUID:t@x\r\nX-ODD;B=1:value\r\nSUMMARY:File it\r\nSTATUS:NEEDS-ACTION\r\nPERCENT-COMPLETE:40\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
	done, err := editTask(todo, taskEdit{complete: true}, paris, now)
	if err != nil {
		t.Fatal(err)
	}
	keptLines(t, todo, done, "STATUS", "PERCENT-COMPLETE")
	if !strings.Contains(done, "STATUS:COMPLETED\r\n") || !strings.Contains(done, "COMPLETED:20261001T080000Z\r\n") || !strings.Contains(done, "PERCENT-COMPLETE:100\r\n") {
		t.Fatalf("completed:\n%s", done)
	}
	open, err := editTask(done, taskEdit{reopen: true}, paris, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(open, "STATUS:NEEDS-ACTION\r\n") || strings.Contains(open, "\r\nCOMPLETED:") || !strings.Contains(open, "PERCENT-COMPLETE:0\r\n") {
		t.Fatalf("reopened:\n%s", open)
	}
	// Reopening a task that is open keeps how much of it is done.
	still, err := editTask(todo, taskEdit{reopen: true}, paris, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(still, "STATUS:NEEDS-ACTION\r\n") || !strings.Contains(still, "PERCENT-COMPLETE:40\r\n") {
		t.Fatalf("reopened an open task:\n%s", still)
	}
	// Under way again: no completion time; cancelled keeps it.
	inProcess, cancelled := "in-process", "cancelled"
	going, err := editTask(done, taskEdit{status: &inProcess}, paris, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(going, "STATUS:IN-PROCESS\r\n") || strings.Contains(going, "\r\nCOMPLETED:") {
		t.Fatalf("in-process:\n%s", going)
	}
	dropped, err := editTask(done, taskEdit{status: &cancelled}, paris, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dropped, "STATUS:CANCELLED\r\n") || !strings.Contains(dropped, "\r\nCOMPLETED:20261001T080000Z") {
		t.Fatalf("cancelled:\n%s", dropped)
	}
	due := "2026-11-05 17:00"
	timed, err := editTask(todo, taskEdit{due: &due}, paris, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(timed, "DUE;TZID=Europe/Paris:20261105T170000\r\n") || !strings.Contains(timed, "BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\n") {
		t.Fatalf("due:\n%s", timed)
	}
	keptLines(t, todo, timed)
}

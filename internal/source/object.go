package source

// The query columns of an object, read from its text with go-ical and
// go-vcard. The text itself is stored as it is; these columns only narrow a
// query (an agenda's time range), and the read tools take every answer from
// the text. A contact's search column is the store's to fill, from what the
// tools show of it, masked (store.PutObject).

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-vcard"

	"github.com/postern-mcp/postern/internal/calendar"
	"github.com/postern-mcp/postern/internal/store"
)

// FillObject sets o's UID, Kind and query columns from o.Data (an iCalendar object
// or a vCard), or says why it cannot be read.
func FillObject(o *store.Object) error {
	data := []byte(o.Data)
	if bytes.HasPrefix(bytes.ToUpper(bytes.TrimLeft(data, " \t\r\n\ufeff")), []byte("BEGIN:VCARD")) {
		return fillCard(o, data)
	}
	return fillCalendar(o, data)
}

func fillCard(o *store.Object, data []byte) error {
	card, err := calendar.DecodeCard(data)
	if err != nil {
		return fmt.Errorf("not a vCard (%v)", err)
	}
	o.Kind = store.ObjectContact
	o.UID = card.Value(vcard.FieldUID)
	o.Summary = card.PreferredValue(vcard.FieldFormattedName)
	if o.Summary == "" {
		if n := card.Name(); n != nil {
			o.Summary = strings.TrimSpace(n.GivenName + " " + n.FamilyName)
		}
	}
	return nil
}

func fillCalendar(o *store.Object, data []byte) error {
	cal, err := calendar.Decode(data)
	if err != nil {
		return fmt.Errorf("not an iCalendar object (%v)", err)
	}
	// The master component: the first event or task without RECURRENCE-ID (an
	// object may also hold overridden instances of it).
	var main *ical.Component
	for _, c := range cal.Children {
		if c.Name != ical.CompEvent && c.Name != ical.CompToDo {
			continue
		}
		if main == nil || main.Props.Get(ical.PropRecurrenceID) != nil && c.Props.Get(ical.PropRecurrenceID) == nil {
			main = c
		}
	}
	if main == nil {
		return fmt.Errorf("it holds no event or task")
	}
	o.Kind = store.ObjectEvent
	if main.Name == ical.CompToDo {
		o.Kind = store.ObjectTodo
	}
	o.UID, _ = main.Props.Text(ical.PropUID)
	o.Summary, _ = main.Props.Text(ical.PropSummary)
	o.Recurring = main.Props.Get(ical.PropRecurrenceRule) != nil || main.Props.Get(ical.PropRecurrenceDates) != nil
	start, allDay, hasStart := when(main.Props.Get(ical.PropDateTimeStart))
	if hasStart {
		o.Start, o.AllDay = start, allDay
	}
	if end, _, ok := when(main.Props.Get(ical.PropDateTimeEnd)); ok && o.Kind == store.ObjectEvent {
		o.End = end
	} else if d := main.Props.Get(ical.PropDuration); d != nil && hasStart {
		if dur, err := d.Duration(); err == nil {
			o.End = o.Start.Add(dur)
		}
	} else if hasStart && o.Kind == store.ObjectEvent {
		// RFC 5545 3.6.1: without DTEND or DURATION, a date lasts that day, a date-time an instant.
		o.End = o.Start
		if allDay {
			o.End = o.Start.AddDate(0, 0, 1)
		}
	}
	if o.Kind == store.ObjectTodo {
		if due, _, ok := when(main.Props.Get(ical.PropDue)); ok {
			o.Due = due
		}
		o.Status, _ = main.Props.Text(ical.PropStatus)
		o.Status = strings.ToUpper(o.Status)
	}
	return nil
}

// when reads a DTSTART, DTEND or DUE in UTC. A date (an all-day event) is that
// date at 00:00 UTC, allDay true. A date-time in a zone (TZID) is converted
// from it; a zone the Go time database does not know (a custom VTIMEZONE, say
// "Eastern Standard Time") and a floating time (no zone at all, the same
// clock time wherever one is) are read as if they were UTC: these columns
// only narrow a query, which the read tools widen by a day, and the tools
// compute the real instant from the text in the person's zone.
func when(p *ical.Prop) (t time.Time, allDay bool, ok bool) {
	if p == nil || p.Value == "" {
		return time.Time{}, false, false
	}
	if p.ValueType() == ical.ValueDate || len(p.Value) == len("20060102") {
		t, err := time.ParseInLocation("20060102", p.Value, time.UTC)
		return t, true, err == nil
	}
	t, err := p.DateTime(time.UTC)
	if err != nil {
		// An unknown TZID: read the clock time as UTC (see above).
		t, err = time.ParseInLocation("20060102T150405", strings.TrimSuffix(p.Value, "Z"), time.UTC)
	}
	return t.UTC(), false, err == nil
}

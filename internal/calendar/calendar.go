// Package calendar reads and writes iCalendar objects as calendar servers
// keep them. It expands an event into its instances between two times (RRULE,
// RDATE, EXDATE, moved and cancelled instances) in the zones the object
// names, and reads tasks. It is postern's one iCalendar writer (write.go):
// event and task writes and invitations' replies and calendar copies are
// written as content lines, every line not changed kept byte for byte, never
// re-encoded through go-ical (see docs/packages.md for the measurement). It
// never reads the clock (every time it uses is given) and never decides what
// an agent may see.
package calendar

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// MaxInstances is the most instances one object gives for one range.
const MaxInstances = 2000

// Calendar is one parsed iCalendar object: its events grouped by UID (a
// recurring event's master and the instances it overrides), its tasks and
// the zones they use.
type Calendar struct {
	series   []*series
	todos    []*ical.Component
	vtz      map[string]*ical.Component
	zones    map[string]*time.Location
	person   *time.Location
	Problems []string // what could not be read, in sentences
}

type series struct {
	uid       string
	master    *ical.Component
	overrides []*ical.Component
}

// Event is one instance of an event.
type Event struct {
	UID  string
	Comp *ical.Component // the VEVENT its properties come from (the master, or the one overriding this instance)
	// RecurrenceID is the instance's original start, 20060102T150405Z (a
	// date, 20060102, for an all-day event); empty for an event that does not recur.
	RecurrenceID string
	Recurring    bool
	// Start and End: the instance's span. For an all-day event, midnight in
	// the person's zone of its first day and of the day after its last.
	Start, End time.Time
	AllDay     bool
	// FirstDay and LastDay: an all-day event's dates (midnight UTC), the last inclusive.
	FirstDay, LastDay time.Time
	// Zone is the zone its times are written in; the person's when Floating.
	Zone     *time.Location
	Floating bool
}

// Parse reads an iCalendar object. person is the zone of floating times and
// all-day dates.
func Parse(data string, person *time.Location) (*Calendar, error) {
	cal, err := Decode([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("the calendar object cannot be read (%v); the server holds a broken copy", err)
	}
	c := &Calendar{vtz: map[string]*ical.Component{}, zones: map[string]*time.Location{}, person: person}
	byUID := map[string]*series{}
	for _, comp := range cal.Children {
		switch comp.Name {
		case ical.CompTimezone:
			if p := comp.Props.Get(ical.PropTimezoneID); p != nil {
				c.vtz[p.Value] = comp
			}
		case ical.CompToDo:
			c.todos = append(c.todos, comp)
		case ical.CompEvent:
			uid := ""
			if p := comp.Props.Get(ical.PropUID); p != nil {
				uid = p.Value
			}
			s := byUID[uid]
			if s == nil {
				s = &series{uid: uid}
				byUID[uid] = s
				c.series = append(c.series, s)
			}
			if comp.Props.Get(ical.PropRecurrenceID) != nil {
				s.overrides = append(s.overrides, comp)
			} else if s.master == nil {
				s.master = comp
			}
		}
	}
	return c, nil
}

// value is a DATE or DATE-TIME property's value.
type value struct {
	t        time.Time // the instant; a date: midnight UTC of it
	date     bool
	floating bool
	loc      *time.Location // the zone it is written in
}

// timeOf reads one value v of p (DATE-TIME with or without TZID, UTC, or DATE).
func (c *Calendar) timeOf(p *ical.Prop, v string) (value, error) {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, '/'); i >= 0 {
		v = v[:i] // a PERIOD: its start
	}
	if strings.EqualFold(p.Params.Get(ical.ParamValue), "DATE") || len(v) == 8 {
		t, err := time.Parse("20060102", v)
		if err != nil {
			return value{}, fmt.Errorf("%s %q is not a date", p.Name, v)
		}
		return value{t: t, date: true}, nil
	}
	if strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z") {
		t, err := time.Parse("20060102T150405", v[:len(v)-1])
		if err != nil {
			return value{}, fmt.Errorf("%s %q is not a time", p.Name, v)
		}
		return value{t: t, loc: time.UTC}, nil
	}
	loc, floating := c.person, true
	if tzid := p.Params.Get(ical.PropTimezoneID); tzid != "" {
		if z, ok := c.zone(tzid); ok {
			loc, floating = z, false
		}
	}
	t, err := time.ParseInLocation("20060102T150405", v, loc)
	if err != nil {
		return value{}, fmt.Errorf("%s %q is not a time", p.Name, v)
	}
	return value{t: t, floating: floating, loc: loc}, nil
}

func (c *Calendar) zone(tzid string) (*time.Location, bool) {
	if z, ok := c.zones[tzid]; ok {
		return z, z != nil
	}
	z, ok := zoneOf(tzid, c.vtz)
	if !ok {
		c.Problems = append(c.Problems, "The time zone "+tzid+" is neither a known zone nor described in the object: its times are read in the person's zone.")
		z = nil
	}
	c.zones[tzid] = z
	return z, ok
}

// values reads every value of the properties named (EXDATE, RDATE: comma lists).
func (c *Calendar) values(comp *ical.Component, name string) []value {
	var out []value
	for i := range comp.Props[name] {
		p := &comp.Props[name][i]
		for _, v := range strings.Split(p.Value, ",") {
			if x, err := c.timeOf(p, v); err == nil {
				out = append(out, x)
			}
		}
	}
	return out
}

// span is a component's start and end as written.
type span struct {
	start, end value
	days       int           // an all-day event's length in days (at least 1)
	dur        time.Duration // a timed event's length
}

func (c *Calendar) spanOf(comp *ical.Component) (span, error) {
	p := comp.Props.Get(ical.PropDateTimeStart)
	if p == nil {
		return span{}, fmt.Errorf("an event has no start")
	}
	start, err := c.timeOf(p, p.Value)
	if err != nil {
		return span{}, err
	}
	s := span{start: start, end: start}
	if e := comp.Props.Get(ical.PropDateTimeEnd); e != nil {
		if end, err := c.timeOf(e, e.Value); err == nil {
			s.end = end
		}
	} else if d := comp.Props.Get(ical.PropDuration); d != nil {
		if dur, err := d.Duration(); err == nil && dur > 0 {
			s.end = value{t: start.t.Add(dur), date: start.date, floating: start.floating, loc: start.loc}
		}
	} else if start.date {
		s.end.t = start.t.AddDate(0, 0, 1)
	}
	if start.date {
		s.days = int(s.end.t.Sub(start.t).Hours()+12) / 24
		if s.days < 1 {
			s.days = 1
		}
	} else {
		s.dur = s.end.t.Sub(start.t)
		if s.dur < 0 {
			s.dur = 0
		}
	}
	return s, nil
}

// RecurrenceKey is how an instance's original start is written in its id.
func RecurrenceKey(t time.Time, date bool) string {
	if date {
		return t.Format("20060102")
	}
	return t.UTC().Format("20060102T150405Z")
}

func (c *Calendar) keyOf(v value) string { return RecurrenceKey(v.t, v.date) }

// event makes the instance of comp that starts at start (a date: midnight UTC).
func (c *Calendar) event(s *series, comp *ical.Component, sp span, start time.Time, key string, recurring bool) Event {
	e := Event{UID: s.uid, Comp: comp, RecurrenceID: key, Recurring: recurring, AllDay: sp.start.date}
	if sp.start.date {
		e.FirstDay = start
		e.LastDay = start.AddDate(0, 0, sp.days-1)
		e.Start = time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, c.person)
		e.End = time.Date(start.Year(), start.Month(), start.Day()+sp.days, 0, 0, 0, 0, c.person)
		return e
	}
	e.Start, e.End = start, start.Add(sp.dur)
	e.Zone, e.Floating = sp.start.loc, sp.start.floating
	return e
}

func overlaps(e Event, from, to time.Time) bool {
	if e.End.After(e.Start) {
		return e.Start.Before(to) && e.End.After(from)
	}
	return !e.Start.Before(from) && e.Start.Before(to)
}

func cancelled(comp *ical.Component) bool {
	p := comp.Props.Get(ical.PropStatus)
	return p != nil && strings.EqualFold(strings.TrimSpace(p.Value), "CANCELLED")
}

// Between returns the instances that overlap [from, to), sorted by start,
// at most MaxInstances of each event.
func (c *Calendar) Between(from, to time.Time) []Event {
	var out []Event
	for _, s := range c.series {
		out = append(out, c.expand(s, from, to, "")...)
	}
	Sort(out)
	return out
}

// Instance returns the instance of the object's event whose RecurrenceKey is
// key, or with key "" its first (the event itself when it does not recur).
func (c *Calendar) Instance(key string) (Event, bool) {
	for _, s := range c.series {
		if key == "" {
			comp := s.master
			if comp == nil && len(s.overrides) > 0 {
				comp = s.overrides[0]
			}
			if comp == nil {
				continue
			}
			sp, err := c.spanOf(comp)
			if err != nil {
				c.Problems = append(c.Problems, err.Error())
				continue
			}
			k := ""
			if s.master == nil {
				if rid := comp.Props.Get(ical.PropRecurrenceID); rid != nil {
					if v, err := c.timeOf(rid, rid.Value); err == nil {
						k = c.keyOf(v)
					}
				}
			}
			return c.event(s, comp, sp, sp.start.t, k, c.recurs(s)), true
		}
		if es := c.expand(s, time.Time{}, time.Time{}, key); len(es) > 0 {
			return es[0], true
		}
	}
	return Event{}, false
}

func (c *Calendar) recurs(s *series) bool {
	return s.master != nil && (s.master.Props.Get(ical.PropRecurrenceRule) != nil || s.master.Props.Get(ical.PropRecurrenceDates) != nil) || len(s.overrides) > 0
}

// Sort orders events by start, all-day events first on their day.
func Sort(es []Event) {
	sort.SliceStable(es, func(i, j int) bool {
		if !es[i].Start.Equal(es[j].Start) {
			return es[i].Start.Before(es[j].Start)
		}
		return es[i].AllDay && !es[j].AllDay
	})
}

// expand gives the instances of s overlapping [from, to), or, with want
// set, the one instance whose key is want.
func (c *Calendar) expand(s *series, from, to time.Time, want string) []Event {
	var out []Event
	excluded := map[string]bool{}
	overridden := map[string]bool{}
	recurring := c.recurs(s)
	for _, o := range s.overrides {
		rid := o.Props.Get(ical.PropRecurrenceID)
		v, err := c.timeOf(rid, rid.Value)
		if err != nil {
			continue
		}
		overridden[c.keyOf(v)] = true
	}
	var sp span
	if m := s.master; m != nil {
		var err error
		if sp, err = c.spanOf(m); err != nil {
			c.Problems = append(c.Problems, err.Error())
			return nil
		}
		if cancelled(m) {
			return nil
		}
		var exDays map[string]bool // EXDATE given as dates on a timed event
		for _, x := range c.values(m, ical.PropExceptionDates) {
			if x.date && !sp.start.date {
				if exDays == nil {
					exDays = map[string]bool{}
				}
				exDays[x.t.Format("20060102")] = true
				continue
			}
			excluded[c.keyOf(x)] = true
		}
		starts := c.starts(m, sp, from, to, want)
		for _, st := range starts {
			key := RecurrenceKey(st, sp.start.date)
			if exDays != nil && exDays[st.In(sp.start.loc).Format("20060102")] {
				excluded[key] = true
			}
			if excluded[key] || overridden[key] {
				continue
			}
			if !recurring {
				key = ""
			}
			e := c.event(s, m, sp, st, key, recurring)
			if want != "" {
				if key == want {
					return []Event{e}
				}
				continue
			}
			if overlaps(e, from, to) {
				out = append(out, e)
			}
			if len(out) >= MaxInstances {
				return out
			}
		}
	}
	for _, o := range s.overrides {
		rid := o.Props.Get(ical.PropRecurrenceID)
		v, err := c.timeOf(rid, rid.Value)
		if err != nil {
			continue
		}
		key := c.keyOf(v)
		if excluded[key] || cancelled(o) {
			continue
		}
		osp, err := c.spanOf(o)
		if err != nil {
			continue
		}
		if s.master != nil && o.Props.Get(ical.PropDateTimeEnd) == nil && o.Props.Get(ical.PropDuration) == nil && osp.start.date == sp.start.date {
			osp.days, osp.dur = sp.days, sp.dur // the master's length
		}
		e := c.event(s, o, osp, osp.start.t, key, true)
		if want != "" {
			if key == want {
				return []Event{e}
			}
			continue
		}
		if overlaps(e, from, to) {
			out = append(out, e)
		}
	}
	return out
}

// starts gives the master's instance starts (instants; dates for an
// all-day event) that may overlap [from, to), or, with want set, those
// around want's time.
func (c *Calendar) starts(m *ical.Component, sp span, from, to time.Time, want string) []time.Time {
	rp := m.Props.Get(ical.PropRecurrenceRule)
	rdates := c.values(m, ical.PropRecurrenceDates)
	if rp == nil && len(rdates) == 0 {
		return []time.Time{sp.start.t}
	}
	if want != "" {
		t, err := time.Parse("20060102T150405Z", want)
		if err != nil {
			t, err = time.Parse("20060102", want)
		}
		if err != nil {
			return nil
		}
		from, to = t.Add(-48*time.Hour), t.Add(48*time.Hour)
	}
	loc := sp.start.loc
	if sp.start.date {
		loc = time.UTC
	}
	// Recurrence runs on the wall clock of the event's zone: a 09:00 New York
	// meeting stays at 09:00 New York time across daylight saving changes.
	wallOf := func(t time.Time) time.Time {
		t = t.In(loc)
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	}
	instant := func(w time.Time) time.Time {
		return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, loc)
	}
	margin := sp.dur + time.Duration(sp.days)*24*time.Hour + 48*time.Hour
	lo, hi := wallOf(from).Add(-margin), wallOf(to).Add(48*time.Hour)
	var walls []time.Time
	if rp != nil {
		opt, err := rrule.StrToROptionInLocation(rp.Value, time.UTC)
		switch {
		case err != nil:
			c.Problems = append(c.Problems, "The recurrence rule cannot be read ("+err.Error()+"): only the first instance is shown.")
			walls = append(walls, wallOf(sp.start.t))
		case opt.Freq > rrule.DAILY:
			c.Problems = append(c.Problems, "A recurrence more frequent than daily is not expanded: only the first instance is shown.")
			walls = append(walls, wallOf(sp.start.t))
		default:
			opt.Dtstart = wallOf(sp.start.t)
			if u := ruleValue(rp.Value, "UNTIL"); strings.HasSuffix(strings.ToUpper(u), "Z") && !opt.Until.IsZero() {
				opt.Until = wallOf(opt.Until)
			} else if len(u) == 8 && !sp.start.date {
				opt.Until = opt.Until.Add(24*time.Hour - time.Second) // through that whole day
			}
			if opt.Until.IsZero() || opt.Until.After(hi) {
				opt.Until = hi // rrule-go ends a rule without UNTIL 290 years after its start
			}
			if r, err := rrule.NewRRule(*opt); err == nil {
				walls = append(walls, r.Between(lo, hi, true)...)
			}
		}
	} else {
		walls = append(walls, wallOf(sp.start.t))
	}
	for _, r := range rdates {
		if r.date {
			walls = append(walls, r.t)
		} else {
			walls = append(walls, wallOf(r.t))
		}
	}
	seen := map[time.Time]bool{}
	var out []time.Time
	for _, w := range walls {
		if seen[w] || w.Before(lo) || w.After(hi) {
			continue
		}
		seen[w] = true
		if sp.start.date {
			out = append(out, time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC))
		} else {
			out = append(out, instant(w))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

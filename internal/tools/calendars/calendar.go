// Package calendars serves the tools of catalog/calendar.yaml: the calendars, task lists
// and address books synced into the store, read (calendar_list, agenda, calendar_event,
// calendar_freebusy, task_list, task_get, contacts_search, contact_get, now); the writing
// and invitation domains use what it exports.
package calendars

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/calendar"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// Calendars, tasks and contacts are read from the store's collections of the
// visible accounts (a hidden account's calendars are never looked at); the
// iCalendar text is parsed and expanded by internal/calendar, in the person's
// zone. Every string a stranger wrote leaves through the answer boundary as
// the catalog's formats say (line, or body for descriptions and notes).
//
// The person's projects (kit.Access) are asked about every event, task and
// contact: lists leave the kept ones out and count them over their whole range
// or collections, whatever else was asked; a kept collection is not listed and
// cannot be named; a kept thing asked for by id gets the missing one's answer.

// Calendars implements generated.CalendarHandlers.
type Calendars struct{ *kit.Kit }

var _ generated.CalendarHandlers = (*Calendars)(nil)

const (
	// maxRange is the longest range agenda and calendar_freebusy cover.
	maxRange = 62 * 24 * time.Hour
	// defaultRange is the range when no end is given.
	defaultRange = 7 * 24 * time.Hour
	// maxAgendaEvents is the most events one agenda answer holds.
	maxAgendaEvents = 1000
	// maxDescription is the most bytes of a description or note shown.
	maxDescription = 100 << 10
	// maxAttendees is the most attendees calendar_event lists.
	maxAttendees = 200
	// rowTime is how a time is written: in its zone, the zone's name after it.
	rowTime = "2006-01-02 15:04"
	RowDay  = "2006-01-02"
)

// View is what rendering an event row needs.
type View struct {
	Person *time.Location
	Own    map[string]bool // the person's addresses, lower case
	Multi  bool            // several accounts are visible: rows name theirs
	Now    time.Time
}

// personZone is the person's zone: the configuration's time_zone, else the machine's.
func (s *Calendars) PersonZone() *time.Location {
	name := ""
	if cfg, err := s.Config.Get(); err == nil {
		name = cfg.TimeZone
	}
	loc, err := calendar.PersonZone(name)
	if err != nil {
		loc, _ = calendar.PersonZone("")
	}
	return loc
}

// calendarView collects the zone, the person's addresses (of every
// configured account: which attendee is the person says nothing of an
// account) and whether rows name their account.
func (s *Calendars) CalendarView(ctx context.Context) View {
	v := View{Person: s.PersonZone(), Own: map[string]bool{}, Now: time.Now()}
	if cfg, err := s.Config.Get(); err == nil {
		for _, a := range cfg.Accounts {
			for _, x := range append([]string{a.From(), a.User}, a.Aliases...) {
				if strings.Contains(x, "@") {
					v.Own[strings.ToLower(strings.TrimSpace(x))] = true
				}
			}
		}
	}
	if names, err := s.VisibleNames(ctx); err == nil {
		v.Multi = len(names) > 1
	}
	return v
}

// collections returns the visible accounts' collections whose kind is one of
// kinds; none (not an error) when no account is visible.
func (s *Calendars) Collections(ctx context.Context, kinds ...string) (*store.Store, []*store.Collection, error) {
	names, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return nil, nil, nil
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	all, err := st.Collections(ctx, names, "")
	if err != nil {
		return nil, nil, err
	}
	var out []*store.Collection
	for _, c := range all {
		for _, k := range kinds {
			if c.Kind == k {
				out = append(out, c)
				break
			}
		}
	}
	return st, out, nil
}

// pickCollection narrows cs to the one called name (exactly, else without
// regard to case), as it is shown (store.NameForms); an error naming the
// collections there are when none is.
func PickCollection(cs []*store.Collection, name *string, what, lister string) ([]*store.Collection, error) {
	if name == nil || *name == "" {
		return cs, nil
	}
	var exact, folded []*store.Collection
	for _, c := range cs {
		forms := store.NameForms(c.Name) // as shown: a name holding a secret never answers to it
		if slices.Contains(forms, *name) {
			exact = append(exact, c)
		} else if slices.ContainsFunc(forms, func(f string) bool { return strings.EqualFold(f, *name) }) {
			folded = append(folded, c)
		}
	}
	if len(exact) > 0 {
		return exact, nil
	}
	if len(folded) > 0 {
		return folded, nil
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("there is no %s here; %s lists them", what, lister)
	}
	if len(names) > kit.MaxListed {
		names = append(names[:kit.MaxListed], "…")
	}
	return nil, fmt.Errorf("there is no %s of that name here; the %ss: %s (%s lists them)", what, what, strings.Join(names, ", "), lister)
}

func IDs(cs []*store.Collection) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func ByID(cs []*store.Collection) map[int64]*store.Collection {
	m := make(map[int64]*store.Collection, len(cs))
	for _, c := range cs {
		m[c.ID] = c
	}
	return m
}

// parseWhen reads a time an agent gives: a date (midnight in loc, or the
// next midnight when end), a date and time in loc, or RFC 3339.
func ParseWhen(arg, s string, loc *time.Location, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.ParseInLocation(RowDay, s, loc); err == nil {
		if end {
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
		}
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s is not a time postern reads: write YYYY-MM-DD, YYYY-MM-DD HH:MM (in %s) or RFC 3339", arg, loc)
}

// timeRange reads from and to: by default from now for 7 days; at most maxRange.
func timeRange(from, to *string, loc *time.Location, now time.Time) (time.Time, time.Time, error) {
	f := now
	if from != nil && *from != "" {
		var err error
		if f, err = ParseWhen("from", *from, loc, false); err != nil {
			return f, f, err
		}
	}
	t := f.Add(defaultRange)
	if to != nil && *to != "" {
		var err error
		if t, err = ParseWhen("to", *to, loc, true); err != nil {
			return f, t, err
		}
	}
	if !t.After(f) {
		return f, t, errors.New("to is not after from; give an end later than the start")
	}
	if t.Sub(f) > maxRange+time.Hour { // an hour for a daylight saving change
		return f, t, fmt.Errorf("the range is %d days, over the 62 a call covers; ask for a shorter range", int(t.Sub(f).Hours()/24))
	}
	return f, t, nil
}

func ShowTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(rowTime) + " " + calendar.ZoneName(loc, t)
}

// eventID is an event's id: e and the object's id, and for an instance of a
// recurring event its original start.
func eventID(o *store.Object, e calendar.Event) string {
	id := "e" + strconv.FormatInt(o.ID, 36)
	if e.RecurrenceID != "" {
		id += "-" + strings.ToLower(e.RecurrenceID)
	}
	return id
}

func ParseEventID(s string) (int64, string, bool) {
	s, key, _ := strings.Cut(s, "-")
	n, ok := ParseObjectID(s, 'e')
	return n, strings.ToUpper(key), ok
}

func ParseObjectID(s string, prefix byte) (int64, bool) {
	if len(s) < 2 || s[0] != prefix {
		return 0, false
	}
	n, err := strconv.ParseInt(s[1:], 36, 64)
	return n, err == nil && n > 0
}

var Answers = map[string]string{"ACCEPTED": "accepted", "DECLINED": "declined", "TENTATIVE": "tentative", "NEEDS-ACTION": "needs-action", "DELEGATED": "delegated", "": "needs-action"}

// Row renders one event instance.
func (v View) Row(o *store.Object, c *store.Collection, e calendar.Event) generated.EventRow {
	r := generated.EventRow{
		ID: eventID(o, e), Summary: calendar.Text(e.Comp, ical.PropSummary), Calendar: c.Name,
		Location: calendar.Text(e.Comp, ical.PropLocation),
	}
	if v.Multi {
		r.Account = c.Account
	}
	if e.AllDay {
		r.Start, r.End = e.FirstDay.Format(RowDay), e.LastDay.Format(RowDay)
		r.AllDay = kit.Ptr(true)
	} else {
		r.Start, r.End = ShowTime(e.Start, v.Person), ShowTime(e.End, v.Person)
		if e.Floating {
			r.Floating = kit.Ptr(true)
		} else {
			r.EventStart, r.EventEnd = ShowTime(e.Start, e.Zone), ShowTime(e.End, e.Zone)
			if name := e.Zone.String(); calendar.ZoneName(e.Zone, e.Start) != name {
				r.EventZone = strings.TrimPrefix(name, "vtimezone:")
			}
		}
	}
	if e.Recurring {
		r.Recurring = kit.Ptr(true)
	}
	if calendar.Status(e.Comp) == "TENTATIVE" {
		r.Status = "tentative"
	}
	if calendar.Transparent(e.Comp) {
		r.Free = kit.Ptr(true)
	}
	if as := calendar.Attendees(e.Comp); len(as) > 0 {
		r.Attendees = kit.Ptr(len(as))
		for _, a := range as {
			if v.Own[strings.ToLower(a.Email)] {
				r.MyAnswer = Answers[a.PartStat]
				break
			}
		}
	}
	return r
}

// Instance is an event instance with the object and collection it comes from.
type Instance struct {
	o *store.Object
	c *store.Collection
	e calendar.Event
}

// instances expands the events of cs overlapping [from, to), by start, and counts the
// instances of those acc keeps (which are neither returned nor named in the problems).
func (s *Calendars) instances(ctx context.Context, acc *kit.Access, st *store.Store, cs []*store.Collection, from, to time.Time, loc *time.Location) ([]Instance, int, []string, error) {
	if len(cs) == 0 {
		return nil, 0, nil, nil
	}
	// The store's columns are the source's reading; a day's margin keeps an
	// all-day event whose dates it read in another zone.
	objs, err := st.Objects(ctx, IDs(cs), store.ObjectEvent, from.Add(-26*time.Hour), to.Add(26*time.Hour))
	if err != nil {
		return nil, 0, nil, err
	}
	coll := ByID(cs)
	var out []Instance
	kept := 0
	var problems []string
	seen := map[string]bool{}
	problem := func(p string) {
		if !seen[p] && len(problems) < 20 {
			seen[p] = true
			problems = append(problems, p)
		}
	}
	for _, o := range objs {
		c := coll[o.CollectionID]
		if KeepsObject(acc, projects.Event, o, c) {
			if cal, err := calendar.Parse(o.Data, loc); err == nil {
				kept += len(cal.Between(from, to))
			}
			continue
		}
		cal, err := calendar.Parse(o.Data, loc)
		if err != nil {
			problem(fmt.Sprintf("An event of %s (%s) cannot be read: %v", c.Name, o.Summary, err))
			continue
		}
		for _, e := range cal.Between(from, to) {
			out = append(out, Instance{o, c, e})
		}
		for _, p := range cal.Problems {
			problem(o.Summary + ": " + p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].e, out[j].e
		if !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		if a.AllDay != b.AllDay {
			return a.AllDay
		}
		return calendar.Text(a.Comp, ical.PropSummary) < calendar.Text(b.Comp, ical.PropSummary)
	})
	return out, kept, problems, nil
}

// collKind is what a collection's objects are matched as: events, tasks or contacts.
func CollKind(c *store.Collection) projects.Kind {
	switch c.Kind {
	case store.KindTasks:
		return projects.Task
	case store.KindAddressBook:
		return projects.Contact
	}
	return projects.Event
}

// keepsObject reports whether the event or task o of c is kept (kind: projects.Event or
// projects.Task). Each object is asked on its own: a tie can keep one of an open calendar.
func KeepsObject(a *kit.Access, kind projects.Kind, o *store.Object, c *store.Collection) bool {
	if !a.Active() {
		return false
	}
	return a.Keeps(projects.Thing{Kind: kind, Account: c.Account, Collection: c.Name, URL: c.URL, UID: o.UID})
}

// shown is cs without the collections kept as a whole, as what they hold or as kind
// (what the tool asks of them): those an agent may name.
func shownCollections(a *kit.Access, kind projects.Kind, cs []*store.Collection) []*store.Collection {
	if !a.Active() {
		return cs
	}
	out := make([]*store.Collection, 0, len(cs))
	for _, c := range cs {
		if !a.KeepsCollection(CollKind(c), c) && !a.KeepsCollection(kind, c) {
			out = append(out, c)
		}
	}
	return out
}

// pick is pickCollection over the collections an agent may name; a kept one is as
// unknown as a missing one, and the names listed are only the shown ones. No name: all
// of cs, whose objects are each asked (a tie can open one of a kept collection).
func PickCollections(a *kit.Access, kind projects.Kind, cs []*store.Collection, name *string, what, lister string) ([]*store.Collection, error) {
	if name == nil || *name == "" {
		return cs, nil
	}
	got, err := PickCollection(shownCollections(a, kind, cs), name, what, lister)
	if err != nil {
		return nil, a.NotFound(err.Error())
	}
	return got, nil
}

// missing gives the answer for a missing event, task or contact the same words whether
// it is missing or kept (with what the person can do, while projects keep anything).
func MissingFor(a *kit.Access, err error) error {
	for _, e := range []error{ErrNoEvent, ErrNoTask, errNoContact} {
		if errors.Is(err, e) {
			return a.NotFound(e.Error())
		}
	}
	return err
}

// CalendarList implements calendar_list.
func (s *Calendars) CalendarList(ctx context.Context, _ *generated.CalendarListArgs) (*generated.CalendarList, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	res := &generated.CalendarList{Calendars: []generated.CalendarInfo{}}
	_, cs, err := s.Collections(ctx, store.KindCalendar, store.KindTasks, store.KindAddressBook)
	if err != nil {
		return nil, err
	}
	left := 0
	for _, c := range cs {
		if acc.KeepsCollection(CollKind(c), c) {
			left++
			continue
		}
		res.Calendars = append(res.Calendars, generated.CalendarInfo{Account: c.Account, Name: c.Name, Kind: c.Kind, Color: c.Color, TimeZone: c.TimeZone, Writable: c.Writable})
	}
	res.LeftOut = kit.NonZero(left)
	res.SyncedAt = s.CollectionsSyncedAt(ctx, cs)
	return res, nil
}

// Agenda implements agenda.
func (s *Calendars) Agenda(ctx context.Context, a *generated.AgendaArgs) (*generated.Agenda, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	v := s.CalendarView(ctx)
	from, to, err := timeRange(a.From, a.To, v.Person, v.Now)
	if err != nil {
		return nil, err
	}
	res := &generated.Agenda{From: ShowTime(from, v.Person), To: ShowTime(to, v.Person), Zone: calendar.ZoneName(v.Person, v.Now), Events: []generated.EventRow{}}
	st, cs, err := s.Collections(ctx, store.KindCalendar, store.KindTasks)
	if err != nil {
		return nil, err
	}
	all := cs
	if cs, err = PickCollections(acc, projects.Event, cs, a.Calendar, "calendar", generated.ToolCalendarList); err != nil {
		return nil, err
	}
	ins, kept, problems, err := s.instances(ctx, acc, st, cs, from, to, v.Person)
	if err != nil {
		return nil, err
	}
	if acc.Active() && len(cs) != len(all) {
		// The count is of the whole range, whichever calendar was asked for.
		if _, kept, _, err = s.instances(ctx, acc, st, all, from, to, v.Person); err != nil {
			return nil, err
		}
	}
	res.LeftOut = kit.NonZero(kept)
	res.SyncedAt = s.CollectionsSyncedAt(ctx, cs)
	for _, in := range ins {
		if len(res.Events) == maxAgendaEvents {
			res.Truncated = kit.Ptr(true)
			break
		}
		res.Events = append(res.Events, v.Row(in.o, in.c, in.e))
	}
	res.Problems = problems
	return res, nil
}

// ErrNoEvent is the answer for an event id that is not here (or hidden: the same words).
var ErrNoEvent = errors.New("there is no such event here; " + generated.ToolAgenda + " lists the events and their ids")

// CalendarEvent implements calendar_event.
func (s *Calendars) CalendarEvent(ctx context.Context, a *generated.CalendarEventArgs) (*generated.EventDetail, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.calendarEvent(ctx, acc, a)
	return res, MissingFor(acc, err)
}

func (s *Calendars) calendarEvent(ctx context.Context, acc *kit.Access, a *generated.CalendarEventArgs) (*generated.EventDetail, error) {
	n, key, ok := ParseEventID(a.ID)
	if !ok {
		return nil, ErrNoEvent
	}
	o, c, err := s.Object(ctx, n, store.ObjectEvent)
	if err != nil {
		if errors.Is(err, store.ErrNoObject) {
			return nil, ErrNoEvent
		}
		return nil, err
	}
	if KeepsObject(acc, projects.Event, o, c) {
		return nil, ErrNoEvent
	}
	v := s.CalendarView(ctx)
	cal, err := calendar.Parse(o.Data, v.Person)
	if err != nil {
		return nil, err
	}
	e, ok := cal.Instance(key)
	if !ok {
		return nil, ErrNoEvent
	}
	res := &generated.EventDetail{Event: v.Row(o, c, e)}
	desc, cut := capText(mask.OwnBody(calendar.Text(e.Comp, ical.PropDescription)))
	res.Description = desc
	if org, ok := calendar.Organizer(e.Comp); ok {
		res.Organizer = PersonString(org)
	}
	as := calendar.Attendees(e.Comp)
	if len(as) > maxAttendees {
		as, cut = as[:maxAttendees], true
	}
	roles := map[string]string{"CHAIR": "chair", "REQ-PARTICIPANT": "required", "OPT-PARTICIPANT": "optional", "NON-PARTICIPANT": "non-participant"}
	for _, p := range as {
		at := generated.Attendee{Name: p.Name, Email: p.Email, Answer: Answers[p.PartStat], Role: roles[p.Role]}
		if v.Own[strings.ToLower(p.Email)] {
			at.Me = kit.Ptr(true)
		}
		res.AttendeeList = append(res.AttendeeList, at)
	}
	if e.Recurring {
		res.Recurrence = cal.Rule(e)
	}
	res.URL = calendar.Text(e.Comp, ical.PropURL)
	res.Categories = Categories(e.Comp)
	if cut {
		res.Truncated = kit.Ptr(true)
	}
	return res, nil
}

// object returns a visible object of kind, with its collection.
func (s *Calendars) Object(ctx context.Context, id int64, kind string) (*store.Object, *store.Collection, error) {
	names, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return nil, nil, store.ErrNoObject
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	o, c, err := st.ObjectByID(ctx, id, names)
	if err != nil {
		return nil, nil, err
	}
	if o.Kind != kind {
		return nil, nil, store.ErrNoObject
	}
	return o, c, nil
}

func PersonString(p calendar.Person) string {
	switch {
	case p.Name == "":
		return p.Email
	case p.Email == "":
		return p.Name
	}
	return p.Name + " <" + p.Email + ">"
}

func Categories(comp *ical.Component) []string {
	var out []string
	for i := range comp.Props[ical.PropCategories] {
		l, err := comp.Props[ical.PropCategories][i].TextList()
		if err != nil {
			continue
		}
		for _, x := range l {
			if x = strings.TrimSpace(x); x != "" && len(out) < 50 {
				out = append(out, x)
			}
		}
	}
	return out
}

// capText cuts s to maxDescription bytes on a character boundary.
func capText(s string) (string, bool) {
	if len(s) <= maxDescription {
		return s, false
	}
	n := maxDescription
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n], true
}

// CalendarFreebusy implements calendar_freebusy.
func (s *Calendars) CalendarFreebusy(ctx context.Context, a *generated.CalendarFreebusyArgs) (*generated.FreeBusy, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	v := s.CalendarView(ctx)
	from, to, err := timeRange(a.From, a.To, v.Person, v.Now)
	if err != nil {
		return nil, err
	}
	res := &generated.FreeBusy{From: ShowTime(from, v.Person), To: ShowTime(to, v.Person), Zone: calendar.ZoneName(v.Person, v.Now), Busy: []generated.BusyPeriod{}}
	st, cs, err := s.Collections(ctx, store.KindCalendar, store.KindTasks)
	if err != nil {
		return nil, err
	}
	// A kept event gives no busy time: when it is, is its own.
	ins, kept, _, err := s.instances(ctx, acc, st, cs, from, to, v.Person)
	if err != nil {
		return nil, err
	}
	res.LeftOut = kit.NonZero(kept)
	res.SyncedAt = s.CollectionsSyncedAt(ctx, cs)
	type period struct{ start, end time.Time }
	var ps []period
	for _, in := range ins {
		if calendar.Transparent(in.e.Comp) || !in.e.End.After(in.e.Start) || v.Row(in.o, in.c, in.e).MyAnswer == "declined" {
			continue
		}
		start, end := in.e.Start, in.e.End
		if start.Before(from) {
			start = from
		}
		if end.After(to) {
			end = to
		}
		ps = append(ps, period{start, end})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].start.Before(ps[j].start) })
	var merged []period
	for _, p := range ps {
		if n := len(merged); n > 0 && !p.start.After(merged[n-1].end) {
			if p.end.After(merged[n-1].end) {
				merged[n-1].end = p.end
			}
			continue
		}
		merged = append(merged, p)
	}
	for _, p := range merged {
		res.Busy = append(res.Busy, generated.BusyPeriod{Start: ShowTime(p.start, v.Person), End: ShowTime(p.end, v.Person)})
	}
	return res, nil
}

// Now implements now.
func (s *Calendars) Now(ctx context.Context, _ *generated.NowArgs) (*generated.Now, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	v := s.CalendarView(ctx)
	now := v.Now.In(v.Person)
	res := &generated.Now{
		Now: now.Format(rowTime), Weekday: now.Weekday().String(), Zone: calendar.ZoneName(v.Person, v.Now),
		UTCOffset: calendar.Offset(now), NextEvents: []generated.EventRow{},
	}
	st, cs, err := s.Collections(ctx, store.KindCalendar, store.KindTasks)
	if err != nil {
		return nil, err
	}
	ins, kept, _, err := s.instances(ctx, acc, st, cs, v.Now, v.Now.Add(31*24*time.Hour), v.Person)
	if err != nil {
		return nil, err
	}
	for _, in := range ins {
		if len(res.NextEvents) == 3 {
			break
		}
		res.NextEvents = append(res.NextEvents, v.Row(in.o, in.c, in.e))
	}
	res.LeftOut = kit.NonZero(kept)
	res.SyncedAt = s.CollectionsSyncedAt(ctx, cs)
	return res, nil
}

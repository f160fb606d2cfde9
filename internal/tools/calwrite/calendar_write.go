// Package calwrite serves the tools of catalog/calendar_write.yaml: creating, changing and
// removing events and tasks on CalDAV servers, each write recorded so that mail_undo
// (package actions) can put it back.
package calwrite

// The calendar and task writes (catalog/calendar_write.yaml): changes postern
// can put back (effect reversible). A handler reads the server's current copy
// first (a GET): when it is not the copy the store holds, the store takes it
// and the handler refuses, saying what changed, so the agent reads it again
// before changing it. The change is made to that copy line by line
// (package calendar). With dry_run the answer shows the result as lines
// and nothing is written; else the copy read is kept, byte for byte, in a
// backup file (dav_record.go), the change is written with If-Match of its ETag
// (a 412 is refused the same way), and the action log records the ETag the
// write produced, so that mail_undo puts the copy back only over postern's own
// write. After a write the store is refreshed at once from the server, so
// agenda and task_list show it. Attendees are never written. The person's
// projects are asked before anything is read: a kept event or task is as
// missing, and nothing new goes into a kept collection.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/postern-mcp/postern/internal/mask"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/calendar"
	"github.com/postern-mcp/postern/internal/compose"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/source/caldav"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// CalWrite implements generated.CalendarWriteHandlers.
type CalWrite struct {
	*kit.Kit
	// Calendars reads the collections and objects written to.
	Calendars *calendars.Calendars
}

var _ generated.CalendarWriteHandlers = (*CalWrite)(nil)

// WriteAccount is the account of collection c, if postern may write to c.
func (s *CalWrite) WriteAccount(ctx context.Context, c *store.Collection, what string) (config.Account, error) {
	accts, err := s.Visible(ctx)
	if err != nil {
		return config.Account{}, err
	}
	for _, a := range accts {
		if a.Name != c.Account {
			continue
		}
		if !kinds.Has(a.Kind, kinds.Calendar|kinds.Writes) {
			return a, fmt.Errorf("the %s %s of account %s is a read-only folder of .ics files; postern writes only to CalDAV calendars and task lists", what, c.Name, c.Account)
		}
		if !c.Writable {
			return a, fmt.Errorf("the %s %s is read-only on its server (account %s may not write to it); choose another with %s", what, c.Name, c.Account, generated.ToolCalendarList)
		}
		return a, nil
	}
	return config.Account{}, fmt.Errorf("there is no %s of that name here; %s lists them", what, generated.ToolCalendarList)
}

// targetCollection picks the collection a new event or task (kind) goes to: the
// one named, else the only writable one of the first kind that has any. One the
// person's projects keep from agents is refused before anything else is looked at,
// and never named.
func (s *CalWrite) targetCollection(ctx context.Context, acc *kit.Access, kind projects.Kind, name *string, what string, kinds ...string) (*store.Store, *store.Collection, config.Account, error) {
	st, cs, err := s.Calendars.Collections(ctx, kinds...)
	if err != nil {
		return nil, nil, config.Account{}, err
	}
	if cs, err = calendars.PickCollection(cs, name, what, generated.ToolCalendarList); err != nil {
		// The names listed are only those an agent may see.
		_, err = calendars.PickCollections(acc, kind, cs, name, what, generated.ToolCalendarList)
		return nil, nil, config.Account{}, err
	}
	noun := "an event"
	if kind == projects.Task {
		noun = "a task"
	}
	var allowed []*store.Collection
	var refusals []error
	for _, c := range cs {
		if err := acc.RefuseWrite(noun, projects.Thing{Kind: kind, Account: c.Account, Collection: c.Name, URL: c.URL}); err != nil {
			if name != nil && *name != "" {
				refusals = append(refusals, err)
			} else if _, werr := s.WriteAccount(ctx, c, what); werr == nil {
				refusals = append(refusals, err) // a writable one this agent may not write to
			}
			continue
		}
		allowed = append(allowed, c)
	}
	if len(allowed) == 0 && len(refusals) > 0 {
		return nil, nil, config.Account{}, refusals[0]
	}
	cs = allowed
	if len(cs) == 0 {
		return nil, nil, config.Account{}, fmt.Errorf("there is no %s postern may write to here; a CalDAV account's %ss are (postern account add NAME --caldav URL …), and %s lists them", what, what, generated.ToolCalendarList)
	}
	writable := func(k string) []*store.Collection {
		var out []*store.Collection
		for _, c := range cs {
			if _, err := s.WriteAccount(ctx, c, what); err == nil && (k == "" || c.Kind == k) {
				out = append(out, c)
			}
		}
		return out
	}
	var ws []*store.Collection
	if name != nil && *name != "" {
		ws = writable("")
		if len(ws) == 0 {
			_, err := s.WriteAccount(ctx, cs[0], what)
			return nil, nil, config.Account{}, err
		}
	} else {
		for _, k := range kinds {
			if ws = writable(k); len(ws) > 0 {
				break
			}
		}
		if len(ws) == 0 && len(refusals) > 0 {
			return nil, nil, config.Account{}, refusals[0]
		}
	}
	switch len(ws) {
	case 0:
		return nil, nil, config.Account{}, fmt.Errorf("there is no %s postern may write to here; a CalDAV account's %ss are (postern account add NAME --caldav URL …), and %s lists them", what, what, generated.ToolCalendarList)
	case 1:
		acct, err := s.WriteAccount(ctx, ws[0], what)
		return st, ws[0], acct, err
	}
	var names []string
	for _, c := range ws {
		names = append(names, c.Name+" ("+c.Account+")")
	}
	arg := "calendar"
	if what != "calendar" {
		arg = "list"
	}
	return nil, nil, config.Account{}, fmt.Errorf("several %ss could take it (%s); say which with %s", what, strings.Join(names, ", "), arg)
}

// davObject is a stored object to change, with what writing it takes.
type davObject struct {
	st   *store.Store
	o    *store.Object
	c    *store.Collection
	acct config.Account
	cl   *caldav.Client
	noun string         // "event" or "task"
	read string         // the tool that reads it again
	got  *caldav.Object // the server's copy current read: what a write replaces, byte for byte
}

// current reads the server's copy of the object. When it is not the copy the
// store holds, the store takes the server's and the write is refused with
// what changed.
func (s *CalWrite) current(ctx context.Context, w *davObject) error {
	cl, err := caldav.ClientFor(ctx, w.acct, w.c)
	if err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	w.cl = cl
	got, err := cl.Get(ctx, w.o.Href)
	var he *caldav.HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Status == http.StatusGone) {
		_ = w.st.DeleteObjects(ctx, w.c.ID, []string{w.o.Href})
		return fmt.Errorf("the %s is no longer on the server (it was deleted there); nothing was written", w.noun)
	}
	if err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	if !calendar.SameText(got.Data, []byte(w.o.Data)) {
		what := calendar.Changes(w.o.Data, string(got.Data))
		_, _ = Keep(ctx, w.st, w.c, w.o.Href, got)
		return fmt.Errorf("the %s changed on the server since it was read: %s; nothing was written. Read it again with %s and make the change anew", w.noun, what, w.read)
	}
	if got.ETag != "" && got.ETag != w.o.ETag {
		w.o.ETag = got.ETag
		_ = w.st.PutObject(ctx, w.o)
	}
	w.got = got
	return nil
}

// Keep stores obj, the server's copy of the object at href, in the store.
func Keep(ctx context.Context, st *store.Store, c *store.Collection, href string, obj *caldav.Object) (*store.Object, error) {
	o := &store.Object{CollectionID: c.ID, Href: href, ETag: obj.ETag, Data: string(obj.Data)}
	if err := caldav.Fill(o); err != nil {
		return nil, err
	}
	if err := st.PutObject(ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}

// put writes data over the object with If-Match of the ETag read (create: at
// a new href, If-None-Match), then refreshes the store from the server. A
// conflict is refused with what changed. It returns the ETag the write produced
// (the PUT's answer, else the one read back at once), which an undo checks.
func (s *CalWrite) put(ctx context.Context, w *davObject, href, etag string, data []byte) (*store.Object, string, string, error) {
	newETag, err := w.cl.PutIfMatch(ctx, href, etag, data)
	if errors.Is(err, caldav.ErrConflict) {
		if etag == "" {
			return nil, "", "", fmt.Errorf("nothing was written: the server already holds an object at %s; try again", href)
		}
		return nil, "", "", s.conflict(ctx, w)
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("nothing was written: %w", err)
	}
	got, err := w.cl.Get(ctx, href)
	if err != nil {
		if newETag == "" {
			return nil, "", "the " + w.noun + " was written, but could not be read back (" + err.Error() + "); run postern sync", nil
		}
		got = &caldav.Object{Href: href, ETag: newETag, Data: data}
	}
	if newETag == "" {
		newETag = got.ETag
	}
	o, err := Keep(ctx, w.st, w.c, href, got)
	if err != nil {
		return nil, newETag, "the " + w.noun + " was written, but the local copy was not refreshed (" + err.Error() + "); run postern sync", nil
	}
	return o, newETag, "", nil
}

// conflict is the refusal of a write the server turned down (412): what
// changed since the copy read, which the store now takes.
func (s *CalWrite) conflict(ctx context.Context, w *davObject) error {
	what := "it changed or was deleted"
	if got, err := w.cl.Get(ctx, w.o.Href); err == nil {
		what = calendar.Changes(w.o.Data, string(got.Data))
		_, _ = Keep(ctx, w.st, w.c, w.o.Href, got)
	}
	return fmt.Errorf("the %s changed on the server since it was read: %s; nothing was written. Read it again with %s and make the change anew", w.noun, what, w.read)
}

// hrefIn is the href of a new object called name in collection c, as the
// server writes hrefs (its path).
func hrefIn(cl *caldav.Client, c *store.Collection, name string) string {
	u, err := url.Parse(cl.Resolve(c.URL))
	p := c.URL
	if err == nil {
		p = u.EscapedPath()
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p + url.PathEscape(name)
}

func newUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b) + "@postern"
}

// eventTarget reads the event an id names, with what writing it takes; a kept one
// is as missing.
func (s *CalWrite) eventTarget(ctx context.Context, acc *kit.Access, id string) (*davObject, string, error) {
	n, key, ok := calendars.ParseEventID(id)
	if !ok {
		return nil, "", calendars.ErrNoEvent
	}
	o, c, err := s.Calendars.Object(ctx, n, store.ObjectEvent)
	if err != nil {
		if errors.Is(err, store.ErrNoObject) {
			return nil, "", calendars.ErrNoEvent
		}
		return nil, "", err
	}
	if calendars.KeepsObject(acc, projects.Event, o, c) {
		return nil, "", calendars.ErrNoEvent
	}
	acct, err := s.WriteAccount(ctx, c, "calendar")
	if err != nil {
		return nil, "", err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, "", err
	}
	return &davObject{st: st, o: o, c: c, acct: acct, noun: "event", read: generated.ToolCalendarEvent}, key, nil
}

// zoneArg is the zone a time_zone argument names, else def.
func zoneArg(tz *string, def *time.Location) (*time.Location, error) {
	if tz == nil || *tz == "" {
		return def, nil
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil || *tz == "Local" {
		return nil, fmt.Errorf("time_zone %q is not a time zone name; give one such as Europe/Paris or America/New_York", *tz)
	}
	return loc, nil
}

// writable Zone: one a TZID can name (the machine's unnamed zone cannot: its times are written in UTC).
func named(loc *time.Location) *time.Location {
	if loc == nil || loc.String() == "Local" || loc.String() == "" {
		return time.UTC
	}
	return loc
}

func parseDay(arg, s string) (time.Time, error) {
	t, err := time.Parse(calendars.RowDay, strings.TrimSpace(s))
	if err != nil {
		return t, fmt.Errorf("%s is not a date: an all-day event's %s is written YYYY-MM-DD", arg, arg)
	}
	return t, nil
}

// checkRule reads an RRULE value; rules more frequent than daily are refused.
func checkRule(r string) (string, error) {
	r = strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(strings.ToUpper(r), "RRULE:")))
	opt, err := rrule.StrToROptionInLocation(r, time.UTC)
	if err != nil {
		return "", fmt.Errorf("recurrence %q is not an RRULE postern reads (%v); write it as FREQ=WEEKLY;BYDAY=MO", r, err)
	}
	if opt.Freq > rrule.DAILY {
		return "", errors.New("recurrence: postern writes events that repeat daily or less often; use FREQ=DAILY, WEEKLY, MONTHLY or YEARLY")
	}
	return r, nil
}

// CalendarCreate implements calendar_create.
func (s *CalWrite) CalendarCreate(ctx context.Context, a *generated.CalendarCreateArgs) (*generated.EventWritten, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	st, c, acct, err := s.targetCollection(ctx, acc, projects.Event, a.Calendar, "calendar", store.KindCalendar)
	if err != nil {
		return nil, err
	}
	v := s.Calendars.CalendarView(ctx)
	zone, err := zoneArg(a.TimeZone, v.Person)
	if err != nil {
		return nil, err
	}
	var start, end calendar.Stamp
	if a.AllDay {
		first, err := parseDay("start", a.Start)
		if err != nil {
			return nil, err
		}
		last := first
		if a.End != nil && *a.End != "" {
			if last, err = parseDay("end", *a.End); err != nil {
				return nil, err
			}
		}
		if last.Before(first) {
			return nil, errors.New("end is before start; give the last day of the event, on or after its first")
		}
		start, end = calendar.Stamp{T: first, Date: true}, calendar.Stamp{T: last.AddDate(0, 0, 1), Date: true}
	} else {
		t0, err := calendars.ParseWhen("start", a.Start, zone, false)
		if err != nil {
			return nil, err
		}
		t1 := t0.Add(time.Hour)
		if a.End != nil && *a.End != "" {
			if t1, err = calendars.ParseWhen("end", *a.End, zone, false); err != nil {
				return nil, err
			}
		}
		if !t1.After(t0) {
			return nil, errors.New("end is not after start; give an end later than the start")
		}
		start, end = calendar.Stamp{T: t0, Zone: named(zone)}, calendar.Stamp{T: t1, Zone: named(zone)}
	}
	rule := ""
	if a.Recurrence != nil && *a.Recurrence != "" {
		if rule, err = checkRule(*a.Recurrence); err != nil {
			return nil, err
		}
	}
	build := func(uid string, now time.Time) string {
		eol := "\r\n"
		var b strings.Builder
		b.WriteString("BEGIN:VCALENDAR" + eol + "VERSION:2.0" + eol + "PRODID:-//postern//postern//EN" + eol)
		if !start.Date && start.Zone != time.UTC {
			b.WriteString(calendar.VTimezone(eol, start.Zone, start.T.Year()-1, start.T.Year()+10))
		}
		b.WriteString("BEGIN:VEVENT" + eol)
		b.WriteString(calendar.PropLine(eol, "UID", nil, uid))
		b.WriteString(calendar.UTCLine(eol, "DTSTAMP", now) + calendar.UTCLine(eol, "CREATED", now) + calendar.UTCLine(eol, "LAST-MODIFIED", now))
		b.WriteString(start.Line(eol, "DTSTART") + end.Line(eol, "DTEND"))
		b.WriteString(calendar.TextLine(eol, "SUMMARY", a.Summary))
		if a.Location != nil {
			b.WriteString(calendar.TextLine(eol, "LOCATION", *a.Location))
		}
		if a.Description != nil {
			b.WriteString(calendar.TextLine(eol, "DESCRIPTION", *a.Description))
		}
		if rule != "" {
			b.WriteString(calendar.PropLine(eol, "RRULE", nil, rule))
		}
		b.WriteString("END:VEVENT" + eol + "END:VCALENDAR" + eol)
		return b.String()
	}
	res := &generated.EventWritten{Action: "create an event", Outcome: "created", Calendar: c.Name, Account: c.Account}
	if a.DryRun {
		lines, err := eventLines(v, c, build("preview@postern", v.Now), "", nil)
		if err != nil {
			return nil, err
		}
		res.DryRun, res.Lines = kit.Ptr(true), lines
		return res, nil
	}
	w := &davObject{st: st, c: c, acct: acct, noun: "event", read: generated.ToolCalendarEvent}
	cl, err := caldav.ClientFor(ctx, acct, c)
	if err != nil {
		return nil, fmt.Errorf("nothing was written: %w", err)
	}
	w.cl = cl
	uid := newUID()
	o, id, warn, err := s.apply(ctx, &davChange{w: w, tool: generated.ToolCalendarCreate, what: "create an event in " + c.Name,
		href: hrefIn(cl, c, strings.TrimSuffix(uid, "@postern")+".ics"), data: []byte(build(uid, time.Now())), uid: uid, summary: a.Summary})
	if err != nil {
		return nil, err
	}
	return s.eventWritten(ctx, res, o, c, "", warn, id), nil
}

// eventWritten completes a write's answer: its action id, and the event as now stored.
func (s *CalWrite) eventWritten(ctx context.Context, res *generated.EventWritten, o *store.Object, c *store.Collection, key, warn, actionID string) *generated.EventWritten {
	res.ActionID, res.Warning = actionID, warn
	if o == nil {
		return res
	}
	v := s.Calendars.CalendarView(ctx)
	if cal, err := calendar.Parse(o.Data, v.Person); err == nil {
		if e, ok := cal.Instance(key); ok {
			r := v.Row(o, c, e)
			res.Event = &r
		}
	}
	return res
}

// eventLines are the preview of an event as text would store it: the
// instance key of it (or the event), with changed (the fields asked) first.
func eventLines(v calendars.View, c *store.Collection, text, key string, changed []string) ([]string, error) {
	cal, err := calendar.Parse(text, v.Person)
	if err != nil {
		return nil, err
	}
	e, ok := cal.Instance(key)
	if !ok {
		return nil, errors.New("the changed event cannot be read back; nothing was prepared")
	}
	r := v.Row(&store.Object{}, c, e)
	var out []string
	if len(changed) > 0 {
		out = append(out, "Changes: "+strings.Join(changed, ", "))
	}
	out = append(out, "Calendar: "+c.Name+" (account "+c.Account+")", "Title: "+r.Summary)
	switch {
	case e.AllDay && r.Start == r.End:
		out = append(out, "All day: "+r.Start)
	case e.AllDay:
		out = append(out, "All day: "+r.Start+" to "+r.End)
	default:
		for _, x := range []struct{ k, person, own string }{{"Start", r.Start, r.EventStart}, {"End", r.End, r.EventEnd}} {
			l := x.k + ": " + x.person
			if x.own != "" && x.own != x.person {
				l += " (" + x.own + " in the event's zone)"
			}
			out = append(out, l)
		}
		if e.Floating {
			out = append(out, "Times: floating (no Zone: the same clock time wherever one is)")
		}
	}
	if r.Location != "" {
		out = append(out, "Location: "+r.Location)
	}
	if key != "" {
		out = append(out, "Instance: this one only, of a recurring event")
	} else if rule := cal.Rule(e); rule != "" {
		out = append(out, "Repeats: "+rule)
	}
	if n := len(calendar.Attendees(e.Comp)); n > 0 {
		out = append(out, fmt.Sprintf("Attendees: %d, not told (postern sends no invitations or updates)", n))
	}
	if d := calendar.Text(e.Comp, ical.PropDescription); d != "" {
		out = append(out, "Description:")
		for _, l := range compose.FirstLines(mask.OwnBody(d)) {
			out = append(out, "  "+l)
		}
	}
	return out, nil
}

// CalendarUpdate implements calendar_update: the fields given, or, with cancel, the
// event's cancellation (which takes no other field).
func (s *CalWrite) CalendarUpdate(ctx context.Context, a *generated.CalendarUpdateArgs) (*generated.EventWritten, error) {
	fields := eventFieldsGiven(a)
	if a.Cancel && len(fields) > 0 {
		return nil, fmt.Errorf("cancel takes no other field (%s given): cancel the event in one call, or change it in another, and nothing was changed", strings.Join(fields, ", "))
	}
	if !a.Cancel && len(fields) == 0 {
		return nil, errors.New("nothing to change: give at least one of summary, start, end, time_zone, location or description, or cancel: true")
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	var res *generated.EventWritten
	if a.Cancel {
		res, err = s.calendarCancel(ctx, acc, a.ID, a.DryRun)
	} else {
		res, err = s.calendarUpdate(ctx, acc, a)
	}
	return res, calendars.MissingFor(acc, err)
}

// eventFieldsGiven names the fields of an event a asks to change.
func eventFieldsGiven(a *generated.CalendarUpdateArgs) []string {
	var out []string
	for _, f := range []struct {
		name  string
		given bool
	}{
		{"summary", a.Summary != nil}, {"start", a.Start != nil}, {"end", a.End != nil},
		{"time_zone", a.TimeZone != nil}, {"location", a.Location != nil}, {"description", a.Description != nil},
	} {
		if f.given {
			out = append(out, f.name)
		}
	}
	return out
}

func (s *CalWrite) calendarUpdate(ctx context.Context, acc *kit.Access, a *generated.CalendarUpdateArgs) (*generated.EventWritten, error) {
	w, key, err := s.eventTarget(ctx, acc, a.ID)
	if err != nil {
		return nil, err
	}
	v := s.Calendars.CalendarView(ctx)
	zone, err := zoneArg(a.TimeZone, nil)
	if err != nil {
		return nil, err
	}
	if err := s.current(ctx, w); err != nil {
		return nil, err
	}
	now := time.Now()
	if a.DryRun {
		now = v.Now
	}
	text, changed, err := editEvent(w.o.Data, key, a, v.Person, zone, now)
	if err != nil {
		return nil, err
	}
	what := "change the event"
	if key != "" {
		what = "change one instance of the recurring event"
	}
	res := &generated.EventWritten{Action: what, Outcome: "updated", Calendar: w.c.Name, Account: w.c.Account}
	if a.DryRun {
		lines, err := eventLines(v, w.c, text, key, changed)
		if err != nil {
			return nil, err
		}
		res.DryRun, res.Lines = kit.Ptr(true), lines
		return res, nil
	}
	o, id, warn, err := s.apply(ctx, &davChange{w: w, tool: generated.ToolCalendarUpdate, what: what + " in " + w.c.Name,
		href: w.o.Href, data: []byte(text), summary: calendar.Text(mustInstance(text, key, v.Person), ical.PropSummary)})
	if err != nil {
		return nil, err
	}
	return s.eventWritten(ctx, res, o, w.c, key, warn, id), nil
}

// mustInstance is the component of the instance key of text (an empty one when it cannot be read).
func mustInstance(text, key string, loc *time.Location) *ical.Component {
	if cal, err := calendar.Parse(text, loc); err == nil {
		if e, ok := cal.Instance(key); ok {
			return e.Comp
		}
	}
	return ical.NewComponent(ical.CompEvent)
}

// editEvent applies a's changes to the event (or to instance key of it) in
// data and returns the new text and the names of the fields changed. zone,
// when not nil, is the zone the new times are read and written in.
func editEvent(data, key string, a *generated.CalendarUpdateArgs, person, zone *time.Location, now time.Time) (string, []string, error) {
	cal, err := calendar.Parse(data, person)
	if err != nil {
		return "", nil, err
	}
	e, ok := cal.Instance(key)
	if !ok {
		return "", nil, calendars.ErrNoEvent
	}
	if key != "" && !e.Recurring {
		return "", nil, calendars.ErrNoEvent
	}
	d, err := calendar.ParseDoc(data)
	if err != nil {
		return "", nil, err
	}
	master, hasMaster, overrides := d.EventComps(e.UID)
	var target calendar.Comp
	found := false
	if rid := e.Comp.Props.Get(ical.PropRecurrenceID); rid != nil {
		for _, o := range overrides {
			if l, ok := d.First(o, "RECURRENCE-ID"); ok && calendar.SameRecurrence(l, rid) {
				target, found = o, true
			}
		}
	} else if hasMaster {
		target, found = master, true
		if key != "" {
			// A new override of this instance: the master's lines, byte for byte, but its
			// recurrence, and its own times and RECURRENCE-ID.
			ms, _ := d.First(master, "DTSTART")
			f := calendar.FormOf(e, ms)
			var ls []calendar.Line
			for i := master.Begin; i <= master.End; i++ {
				switch d.Lines[i].Name {
				case "RRULE", "RDATE", "EXDATE", "EXRULE":
					continue
				}
				ls = append(ls, d.Lines[i])
			}
			at := master.End + 1
			target = calendar.Comp{Begin: at, End: at + len(ls) - 1, Name: "VEVENT"}
			d.Lines = append(d.Lines[:at], append(ls, d.Lines[at:]...)...)
			rid := f.At(e.Start, person)
			if e.AllDay {
				rid = f.At(e.FirstDay, person)
			}
			target = d.Apply(target, []calendar.Edit{calendar.Set("RECURRENCE-ID", rid.Line(d.EOL, "RECURRENCE-ID"))})
			if e.AllDay {
				target = d.Apply(target, []calendar.Edit{
					calendar.Set("DTSTART", calendar.Stamp{T: e.FirstDay, Date: true}.Line(d.EOL, "DTSTART")),
					calendar.Set("DURATION", ""),
					calendar.Set("DTEND", calendar.Stamp{T: e.LastDay.AddDate(0, 0, 1), Date: true}.Line(d.EOL, "DTEND")),
				})
			} else {
				target = d.Apply(target, []calendar.Edit{
					calendar.Set("DTSTART", f.At(e.Start, person).Line(d.EOL, "DTSTART")),
					calendar.Set("DURATION", ""),
					calendar.Set("DTEND", f.At(e.End, person).Line(d.EOL, "DTEND")),
				})
			}
		}
	}
	if !found {
		return "", nil, calendars.ErrNoEvent
	}
	var changed []string
	var edits []calendar.Edit
	if a.Summary != nil {
		changed = append(changed, "title")
		edits = append(edits, calendar.Set("SUMMARY", calendar.TextLine(d.EOL, "SUMMARY", *a.Summary)))
	}
	if a.Location != nil {
		changed = append(changed, "location")
		edits = append(edits, calendar.Set("LOCATION", calendar.TextLine(d.EOL, "LOCATION", *a.Location)))
	}
	if a.Description != nil {
		changed = append(changed, "description")
		edits = append(edits, calendar.Set("DESCRIPTION", calendar.TextLine(d.EOL, "DESCRIPTION", *a.Description)))
	}
	timesChanged := a.Start != nil || a.End != nil || zone != nil
	if timesChanged {
		ls, _ := d.First(target, "DTSTART")
		f := calendar.FormOf(e, ls)
		read := person
		if zone != nil {
			read = zone
			if !e.AllDay {
				f = calendar.Stamp{Zone: named(zone)}
			}
		}
		var s0, s1 calendar.Stamp
		if e.AllDay {
			first, last := e.FirstDay, e.LastDay
			if a.Start != nil {
				if first, err = parseDay("start", *a.Start); err != nil {
					return "", nil, err
				}
				if a.End == nil {
					last = first.Add(e.LastDay.Sub(e.FirstDay))
				}
			}
			if a.End != nil {
				if last, err = parseDay("end", *a.End); err != nil {
					return "", nil, err
				}
			}
			if last.Before(first) {
				return "", nil, errors.New("end is before start; give the last day of the event, on or after its first")
			}
			s0, s1 = calendar.Stamp{T: first, Date: true}, calendar.Stamp{T: last.AddDate(0, 0, 1), Date: true}
		} else {
			t0, t1 := e.Start, e.End
			if a.Start != nil {
				if t0, err = calendars.ParseWhen("start", *a.Start, read, false); err != nil {
					return "", nil, err
				}
				if a.End == nil {
					t1 = t0.Add(e.End.Sub(e.Start))
				}
			}
			if a.End != nil {
				if t1, err = calendars.ParseWhen("end", *a.End, read, false); err != nil {
					return "", nil, err
				}
			}
			if !t1.After(t0) {
				return "", nil, errors.New("end is not after start; give an end later than the start")
			}
			s0, s1 = f.At(t0, person), f.At(t1, person)
			if f.Zone != nil && f.Zone != time.UTC && f.TZID == "" {
				// The VTIMEZONE goes before the first component: the target moves down.
				n := len(d.Lines)
				d.AddTimezone(f.Zone, t0.Year())
				target.Begin += len(d.Lines) - n
				target.End += len(d.Lines) - n
			}
		}
		if a.Start != nil || zone != nil {
			changed = append(changed, "start")
			edits = append(edits, calendar.Set("DTSTART", s0.Line(d.EOL, "DTSTART")))
		}
		changed = append(changed, "end")
		edits = append(edits, calendar.Set("DURATION", ""), calendar.Set("DTEND", s1.Line(d.EOL, "DTEND")))
	}
	target = d.Apply(target, edits)
	d.Apply(target, d.StampEdits(target, now, timesChanged))
	return d.String(), changed, nil
}

// calendarCancel cancels the event id (calendar_update with cancel): one instance is
// excluded (EXDATE), a whole event with attendees is kept and marked cancelled, one
// without is deleted.
func (s *CalWrite) calendarCancel(ctx context.Context, acc *kit.Access, id string, dryRun bool) (*generated.EventWritten, error) {
	w, key, err := s.eventTarget(ctx, acc, id)
	if err != nil {
		return nil, err
	}
	v := s.Calendars.CalendarView(ctx)
	if err := s.current(ctx, w); err != nil {
		return nil, err
	}
	cal, err := calendar.Parse(w.o.Data, v.Person)
	if err != nil {
		return nil, err
	}
	e, ok := cal.Instance(key)
	if !ok {
		return nil, calendars.ErrNoEvent
	}
	summary := calendar.Text(e.Comp, ical.PropSummary)
	now := time.Now()
	if dryRun {
		now = v.Now
	}
	res := &generated.EventWritten{Outcome: "cancelled", Calendar: w.c.Name, Account: w.c.Account}
	var text string
	switch {
	case key != "" && e.Recurring:
		res.Action = "cancel one instance of the recurring event (an EXDATE; the other dates stay)"
		if text, err = excludeInstance(w.o.Data, key, v.Person, now); err != nil {
			return nil, err
		}
	case hasAttendees(w.o.Data):
		res.Action = "mark the event cancelled (it has attendees: it is kept, STATUS:CANCELLED, and they are not told)"
		d, err := calendar.ParseDoc(w.o.Data)
		if err != nil {
			return nil, err
		}
		for _, c := range d.Components() {
			if c.Name != "VEVENT" {
				continue
			}
			c = d.Apply(c, []calendar.Edit{calendar.Set("STATUS", calendar.PropLine(d.EOL, "STATUS", nil, "CANCELLED"))})
			d.Apply(c, d.StampEdits(c, now, true))
		}
		text = d.String()
	default:
		res.Action, res.Outcome = "delete the event", "deleted"
		if e.Recurring {
			res.Action += ", every instance of it"
		}
	}
	if dryRun {
		// The event as it would be stored; for a deletion, as it is now.
		shown, shownKey := text, key
		if text == "" || key != "" && e.Recurring {
			shown = w.o.Data
		}
		lines, err := eventLines(v, w.c, shown, shownKey, nil)
		if err != nil {
			return nil, err
		}
		res.DryRun, res.Lines = kit.Ptr(true), lines
		return res, nil
	}
	ch := &davChange{w: w, tool: generated.ToolCalendarUpdate, what: res.Action + " in " + w.c.Name, href: w.o.Href, summary: summary}
	if text != "" {
		ch.data = []byte(text)
	}
	_, aid, warn, err := s.apply(ctx, ch)
	if err != nil {
		return nil, err
	}
	// The event as now stored is left out: the instance or the event is cancelled.
	res.ActionID, res.Warning = aid, warn
	return res, nil
}

// remove deletes the object with If-Match of the ETag read, and from the store.
func (s *CalWrite) remove(ctx context.Context, w *davObject) (string, error) {
	err := w.cl.DeleteIfMatch(ctx, w.o.Href, w.o.ETag)
	if errors.Is(err, caldav.ErrConflict) {
		return "", s.conflict(ctx, w)
	}
	if err != nil {
		return "", fmt.Errorf("nothing was deleted: %w", err)
	}
	if err := w.st.DeleteObjects(ctx, w.c.ID, []string{w.o.Href}); err != nil {
		return "the " + w.noun + " was deleted, but the local copy was not (" + err.Error() + "); run postern sync", nil
	}
	return "", nil
}

// hasAttendees says whether an event's text names attendees.
func hasAttendees(data string) bool {
	d, err := calendar.ParseDoc(data)
	if err != nil {
		return false
	}
	for _, c := range d.Components() {
		if c.Name == "VEVENT" && len(d.Props(c, "ATTENDEE")) > 0 {
			return true
		}
	}
	return false
}

// excludeInstance adds to the master of data an EXDATE of instance key,
// written as the master writes its start, and removes the instance's override.
func excludeInstance(data, key string, person *time.Location, now time.Time) (string, error) {
	cal, err := calendar.Parse(data, person)
	if err != nil {
		return "", err
	}
	e, ok := cal.Instance(key)
	if !ok {
		return "", calendars.ErrNoEvent
	}
	d, err := calendar.ParseDoc(data)
	if err != nil {
		return "", err
	}
	master, hasMaster, overrides := d.EventComps(e.UID)
	if !hasMaster {
		return "", errors.New("this instance belongs to no series on the server (only the instance is there); cancel it by changing it in the person's calendar program")
	}
	me, ok := cal.Instance("")
	if !ok {
		return "", calendars.ErrNoEvent
	}
	ms, _ := d.First(master, "DTSTART")
	f := calendar.FormOf(me, ms)
	var orig time.Time
	if f.Date {
		orig, err = time.Parse("20060102", key)
	} else {
		orig, err = time.Parse("20060102T150405Z", key)
	}
	if err != nil {
		return "", calendars.ErrNoEvent
	}
	// The override of this instance goes (from the last line up, so indexes hold).
	if rid := e.Comp.Props.Get(ical.PropRecurrenceID); rid != nil {
		for k := len(overrides) - 1; k >= 0; k-- {
			o := overrides[k]
			if l, ok := d.First(o, "RECURRENCE-ID"); ok && calendar.SameRecurrence(l, rid) {
				d.Lines = append(d.Lines[:o.Begin], d.Lines[o.End+1:]...)
				if o.Begin < master.Begin {
					master.Begin -= o.End - o.Begin + 1
					master.End -= o.End - o.Begin + 1
				}
			}
		}
	}
	ex := f.At(orig, person)
	master = d.Apply(master, []calendar.Edit{calendar.Add("EXDATE", ex.Line(d.EOL, "EXDATE"))})
	d.Apply(master, d.StampEdits(master, now, true))
	return d.String(), nil
}

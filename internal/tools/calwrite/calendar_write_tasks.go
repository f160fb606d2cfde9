package calwrite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/calendar"
	"github.com/postern-mcp/postern/internal/compose"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/source/caldav"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// taskTarget reads the task an id names, with what writing it takes; a kept one is
// as missing.
func (s *CalWrite) taskTarget(ctx context.Context, acc *kit.Access, id string) (*davObject, error) {
	n, ok := calendars.ParseObjectID(id, 't')
	if !ok {
		return nil, calendars.ErrNoTask
	}
	o, c, err := s.Calendars.Object(ctx, n, store.ObjectTodo)
	if err != nil {
		if errors.Is(err, store.ErrNoObject) {
			return nil, calendars.ErrNoTask
		}
		return nil, err
	}
	if calendars.KeepsObject(acc, projects.Task, o, c) {
		return nil, calendars.ErrNoTask
	}
	acct, err := s.WriteAccount(ctx, c, "task list")
	if err != nil {
		return nil, err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &davObject{st: st, o: o, c: c, acct: acct, noun: "task", read: generated.ToolTaskGet}, nil
}

// dueStamp reads a due date or time: a date stays a date; a time is written
// in the person's zone.
func dueStamp(s string, person *time.Location) (calendar.Stamp, error) {
	if t, err := time.Parse(calendars.RowDay, strings.TrimSpace(s)); err == nil {
		return calendar.Stamp{T: t, Date: true}, nil
	}
	t, err := calendars.ParseWhen("due", s, person, false)
	if err != nil {
		return calendar.Stamp{}, err
	}
	return calendar.Stamp{T: t, Zone: named(person)}, nil
}

// taskEdit says what a task write changes.
type taskEdit struct {
	summary, due, description, status *string
	priority                          *int
	complete, reopen                  bool
}

func (te taskEdit) names() []string {
	var out []string
	for _, x := range []struct {
		set  bool
		name string
	}{{te.summary != nil, "title"}, {te.due != nil, "due"}, {te.priority != nil, "priority"}, {te.description != nil, "description"},
		{te.status != nil || te.complete || te.reopen, "state"}} {
		if x.set {
			out = append(out, x.name)
		}
	}
	return out
}

// editTask applies te to the task of data.
func editTask(data string, te taskEdit, person *time.Location, now time.Time) (string, error) {
	d, err := calendar.ParseDoc(data)
	if err != nil {
		return "", err
	}
	var target calendar.Comp
	found := false
	var todos []calendar.Comp
	for _, c := range d.Components() {
		if c.Name == "VTODO" {
			todos = append(todos, c)
		}
	}
	for _, c := range todos {
		if _, over := d.First(c, "RECURRENCE-ID"); !over {
			target, found = c, true
			break
		}
	}
	if !found && len(todos) > 0 {
		target, found = todos[0], true
	}
	if !found {
		return "", calendars.ErrNoTask
	}
	var edits []calendar.Edit
	if te.summary != nil {
		edits = append(edits, calendar.Set("SUMMARY", calendar.TextLine(d.EOL, "SUMMARY", *te.summary)))
	}
	if te.description != nil {
		edits = append(edits, calendar.Set("DESCRIPTION", calendar.TextLine(d.EOL, "DESCRIPTION", *te.description)))
	}
	if te.priority != nil {
		line := ""
		if *te.priority > 0 {
			line = calendar.PropLine(d.EOL, "PRIORITY", nil, strconv.Itoa(*te.priority))
		}
		edits = append(edits, calendar.Set("PRIORITY", line))
	}
	if te.due != nil {
		line := ""
		if *te.due != "" {
			st, err := dueStamp(*te.due, person)
			if err != nil {
				return "", err
			}
			if !st.Date && st.Zone != time.UTC {
				n := len(d.Lines)
				d.AddTimezone(st.Zone, st.T.Year())
				target.Begin += len(d.Lines) - n
				target.End += len(d.Lines) - n
			}
			line = st.Line(d.EOL, "DUE")
		}
		edits = append(edits, calendar.Set("DUE", line))
	}
	// A task that was completed or cancelled: reopening it starts its percentage again.
	closed := false
	if l, ok := d.First(target, "STATUS"); ok {
		v := strings.ToUpper(strings.TrimSpace(l.Value()))
		closed = v == "COMPLETED" || v == "CANCELLED"
	}
	if _, ok := d.First(target, "COMPLETED"); ok {
		closed = true
	}
	if te.status != nil {
		edits = append(edits, calendar.Set("STATUS", calendar.PropLine(d.EOL, "STATUS", nil, strings.ToUpper(*te.status))))
		if *te.status == "in-process" {
			// A task under way again has no completion time.
			edits = append(edits, calendar.Set("COMPLETED", ""))
		}
	}
	if te.complete {
		edits = append(edits, calendar.Set("STATUS", calendar.PropLine(d.EOL, "STATUS", nil, "COMPLETED")), calendar.Set("COMPLETED", calendar.UTCLine(d.EOL, "COMPLETED", now)))
		if _, ok := d.First(target, "PERCENT-COMPLETE"); ok {
			edits = append(edits, calendar.Set("PERCENT-COMPLETE", calendar.PropLine(d.EOL, "PERCENT-COMPLETE", nil, "100")))
		}
	}
	if te.reopen {
		edits = append(edits, calendar.Set("STATUS", calendar.PropLine(d.EOL, "STATUS", nil, "NEEDS-ACTION")), calendar.Set("COMPLETED", ""))
		if _, ok := d.First(target, "PERCENT-COMPLETE"); ok && closed {
			edits = append(edits, calendar.Set("PERCENT-COMPLETE", calendar.PropLine(d.EOL, "PERCENT-COMPLETE", nil, "0")))
		}
	}
	target = d.Apply(target, edits)
	d.Apply(target, d.StampEdits(target, now, false))
	return d.String(), nil
}

// taskLines are the preview of the task text would store.
func taskLines(v calendars.View, c *store.Collection, text string, changed []string) ([]string, string, error) {
	o := &store.Object{Data: text}
	t, ok := calendars.Task(o, v.Person)
	if !ok {
		return nil, "", errors.New("the changed task cannot be read back; nothing was prepared")
	}
	r := v.TaskRow(o, c, t)
	var out []string
	if len(changed) > 0 {
		out = append(out, "Changes: "+strings.Join(changed, ", "))
	}
	out = append(out, "List: "+c.Name+" (account "+c.Account+")", "Title: "+r.Summary, "Status: "+r.Status)
	if r.Due != "" {
		out = append(out, "Due: "+r.Due)
	}
	if r.Priority != nil {
		out = append(out, fmt.Sprintf("Priority: %d", *r.Priority))
	}
	if !t.Completed.IsZero() {
		out = append(out, "Completed: "+calendars.ShowTime(t.Completed, v.Person))
	}
	if d := calendar.Text(t.Comp, ical.PropDescription); d != "" {
		out = append(out, "Description:")
		for _, l := range compose.FirstLines(mask.OwnBody(d)) {
			out = append(out, "  "+l)
		}
	}
	return out, t.Summary, nil
}

// taskWritten completes a write's answer: its action id, and the task as now stored.
func (s *CalWrite) taskWritten(ctx context.Context, res *generated.TaskWritten, o *store.Object, c *store.Collection, warn, actionID string) *generated.TaskWritten {
	res.ActionID, res.Warning = actionID, warn
	if o == nil {
		return res
	}
	v := s.Calendars.CalendarView(ctx)
	if t, ok := calendars.Task(o, v.Person); ok {
		r := v.TaskRow(o, c, t)
		res.Task = &r
	}
	return res
}

// TaskCreate implements task_create.
func (s *CalWrite) TaskCreate(ctx context.Context, a *generated.TaskCreateArgs) (*generated.TaskWritten, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	st, c, acct, err := s.targetCollection(ctx, acc, projects.Task, a.List, "task list", store.KindTasks, store.KindCalendar)
	if err != nil {
		return nil, err
	}
	v := s.Calendars.CalendarView(ctx)
	var due *calendar.Stamp
	if a.Due != nil && *a.Due != "" {
		d, err := dueStamp(*a.Due, v.Person)
		if err != nil {
			return nil, err
		}
		due = &d
	}
	build := func(uid string, now time.Time) string {
		eol := "\r\n"
		var b strings.Builder
		b.WriteString("BEGIN:VCALENDAR" + eol + "VERSION:2.0" + eol + "PRODID:-//postern//postern//EN" + eol)
		if due != nil && !due.Date && due.Zone != time.UTC {
			b.WriteString(calendar.VTimezone(eol, due.Zone, due.T.Year()-1, due.T.Year()+1))
		}
		b.WriteString("BEGIN:VTODO" + eol)
		b.WriteString(calendar.PropLine(eol, "UID", nil, uid))
		b.WriteString(calendar.UTCLine(eol, "DTSTAMP", now) + calendar.UTCLine(eol, "CREATED", now) + calendar.UTCLine(eol, "LAST-MODIFIED", now))
		b.WriteString(calendar.TextLine(eol, "SUMMARY", a.Summary))
		b.WriteString("STATUS:NEEDS-ACTION" + eol)
		if due != nil {
			b.WriteString(due.Line(eol, "DUE"))
		}
		if a.Priority != nil && *a.Priority > 0 {
			b.WriteString(calendar.PropLine(eol, "PRIORITY", nil, strconv.Itoa(*a.Priority)))
		}
		if a.Description != nil {
			b.WriteString(calendar.TextLine(eol, "DESCRIPTION", *a.Description))
		}
		b.WriteString("END:VTODO" + eol + "END:VCALENDAR" + eol)
		return b.String()
	}
	res := &generated.TaskWritten{Action: "create a task", Outcome: "created", List: c.Name, Account: c.Account}
	if a.DryRun {
		lines, _, err := taskLines(v, c, build("preview@postern", v.Now), nil)
		if err != nil {
			return nil, err
		}
		res.DryRun, res.Lines = kit.Ptr(true), lines
		return res, nil
	}
	w := &davObject{st: st, c: c, acct: acct, noun: "task", read: generated.ToolTaskGet}
	cl, err := caldav.ClientFor(ctx, acct, c)
	if err != nil {
		return nil, fmt.Errorf("nothing was written: %w", err)
	}
	w.cl = cl
	uid := newUID()
	o, id, warn, err := s.apply(ctx, &davChange{w: w, tool: generated.ToolTaskCreate, what: "create a task in " + c.Name,
		href: hrefIn(cl, c, strings.TrimSuffix(uid, "@postern")+".ics"), data: []byte(build(uid, time.Now())), uid: uid, summary: a.Summary})
	if err != nil {
		return nil, err
	}
	return s.taskWritten(ctx, res, o, c, warn, id), nil
}

// taskChange does te to the task id (with dryRun, shows what it would store).
func (s *CalWrite) taskChange(ctx context.Context, id, tool, what, outcome string, te taskEdit, dryRun bool) (*generated.TaskWritten, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.taskChangeAs(ctx, acc, id, tool, what, outcome, te, dryRun)
	return res, calendars.MissingFor(acc, err)
}

func (s *CalWrite) taskChangeAs(ctx context.Context, acc *kit.Access, id, tool, what, outcome string, te taskEdit, dryRun bool) (*generated.TaskWritten, error) {
	w, err := s.taskTarget(ctx, acc, id)
	if err != nil {
		return nil, err
	}
	v := s.Calendars.CalendarView(ctx)
	if err := s.current(ctx, w); err != nil {
		return nil, err
	}
	now := time.Now()
	if dryRun {
		now = v.Now
	}
	text, err := editTask(w.o.Data, te, v.Person, now)
	if err != nil {
		return nil, err
	}
	lines, summary, err := taskLines(v, w.c, text, te.names())
	if err != nil {
		return nil, err
	}
	res := &generated.TaskWritten{Action: what, Outcome: outcome, List: w.c.Name, Account: w.c.Account}
	if dryRun {
		res.DryRun, res.Lines = kit.Ptr(true), lines
		return res, nil
	}
	o, aid, warn, err := s.apply(ctx, &davChange{w: w, tool: tool, what: what + " in " + w.c.Name, href: w.o.Href, data: []byte(text), summary: summary})
	if err != nil {
		return nil, err
	}
	return s.taskWritten(ctx, res, o, w.c, warn, aid), nil
}

// TaskUpdate implements task_update: the fields given, and a status, which completes
// a task (completed), reopens it (needs-action) or sets it as given.
func (s *CalWrite) TaskUpdate(ctx context.Context, a *generated.TaskUpdateArgs) (*generated.TaskWritten, error) {
	te := taskEdit{summary: a.Summary, due: a.Due, description: a.Description, priority: a.Priority}
	fields := len(te.names()) > 0
	what, outcome := "change the task", "updated"
	if a.Status != nil {
		switch *a.Status {
		case "completed":
			te.complete, outcome, what = true, "completed", "mark the task completed"
			if fields {
				what = "change the task and mark it completed"
			}
		case "needs-action":
			te.reopen, outcome, what = true, "reopened", "reopen the task"
			if fields {
				what = "change the task and reopen it"
			}
		case "in-process", "cancelled":
			te.status = a.Status
		default:
			return nil, fmt.Errorf("status %q is not one %s takes; give needs-action, in-process, completed or cancelled", *a.Status, generated.ToolTaskUpdate)
		}
	}
	if len(te.names()) == 0 {
		return nil, errors.New("nothing to change: give at least one of summary, due, priority, description or status")
	}
	return s.taskChange(ctx, a.ID, generated.ToolTaskUpdate, what, outcome, te, a.DryRun)
}

// TaskDelete implements task_delete.
func (s *CalWrite) TaskDelete(ctx context.Context, a *generated.TaskDeleteArgs) (*generated.TaskWritten, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.taskDelete(ctx, acc, a)
	return res, calendars.MissingFor(acc, err)
}

func (s *CalWrite) taskDelete(ctx context.Context, acc *kit.Access, a *generated.TaskDeleteArgs) (*generated.TaskWritten, error) {
	w, err := s.taskTarget(ctx, acc, a.ID)
	if err != nil {
		return nil, err
	}
	v := s.Calendars.CalendarView(ctx)
	if err := s.current(ctx, w); err != nil {
		return nil, err
	}
	lines, summary, err := taskLines(v, w.c, w.o.Data, nil)
	if err != nil {
		return nil, err
	}
	res := &generated.TaskWritten{Action: "delete the task", Outcome: "deleted", List: w.c.Name, Account: w.c.Account}
	if a.DryRun {
		res.DryRun, res.Lines = kit.Ptr(true), lines
		return res, nil
	}
	_, id, warn, err := s.apply(ctx, &davChange{w: w, tool: generated.ToolTaskDelete, what: "delete the task from " + w.c.Name, href: w.o.Href, summary: summary})
	if err != nil {
		return nil, err
	}
	return s.taskWritten(ctx, res, nil, w.c, warn, id), nil
}

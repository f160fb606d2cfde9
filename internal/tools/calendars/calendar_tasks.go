package calendars

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"time"

	"github.com/emersion/go-ical"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/calendar"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

var taskStatuses = map[string]string{"NEEDS-ACTION": "needs-action", "IN-PROCESS": "in-process", "COMPLETED": "completed", "CANCELLED": "cancelled"}

// task reads an object's task: its VTODO that overrides no instance.
func Task(o *store.Object, loc *time.Location) (calendar.Todo, bool) {
	cal, err := calendar.Parse(o.Data, loc)
	if err != nil {
		return calendar.Todo{}, false
	}
	todos := cal.Todos()
	for _, t := range todos {
		if t.Comp.Props.Get(ical.PropRecurrenceID) == nil {
			return t, true
		}
	}
	if len(todos) > 0 {
		return todos[0], true
	}
	return calendar.Todo{}, false
}

func (v View) TaskRow(o *store.Object, c *store.Collection, t calendar.Todo) generated.TaskRow {
	r := generated.TaskRow{ID: "t" + strconv.FormatInt(o.ID, 36), Summary: t.Summary, List: c.Name, Status: taskStatuses[t.Status]}
	if r.Status == "" {
		r.Status = "needs-action"
		if t.Done() {
			r.Status = "completed"
		}
	}
	if v.Multi {
		r.Account = c.Account
	}
	if !t.Due.IsZero() {
		if t.DueDate {
			r.Due = t.Due.Format(RowDay)
		} else {
			r.Due = ShowTime(t.Due, v.Person)
		}
		if !t.Closed() && t.Due.Before(v.Now) {
			r.Overdue = kit.Ptr(true)
		}
	}
	if t.Priority > 0 {
		r.Priority = kit.Ptr(t.Priority)
	}
	return r
}

// TaskList implements task_list.
func (s *Calendars) TaskList(ctx context.Context, a *generated.TaskListArgs) (*generated.TaskList, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	v := s.CalendarView(ctx)
	res := &generated.TaskList{Tasks: []generated.TaskRow{}}
	st, all, err := s.Collections(ctx, store.KindTasks, store.KindCalendar)
	if err != nil {
		return nil, err
	}
	cs, err := PickCollections(acc, projects.Task, all, a.List, "task list", generated.ToolCalendarList)
	if err != nil {
		return nil, err
	}
	// Every task of the visible lists is read: the kept ones are counted whatever the
	// state or list asked for.
	if !acc.Active() {
		all = cs
	}
	if len(all) == 0 {
		return res, nil
	}
	objs, err := st.Objects(ctx, IDs(all), store.ObjectTodo, time.Time{}, time.Time{})
	if err != nil {
		return nil, err
	}
	coll, asked := ByID(all), ByID(cs)
	type found struct {
		t   calendar.Todo
		row generated.TaskRow
	}
	var fs []found
	kept := 0
	for _, o := range objs {
		if KeepsObject(acc, projects.Task, o, coll[o.CollectionID]) {
			kept++
			continue
		}
		if asked[o.CollectionID] == nil {
			continue
		}
		t, ok := Task(o, v.Person)
		if !ok {
			continue
		}
		switch a.State {
		case "done":
			if !t.Done() {
				continue
			}
		case "all":
		default:
			if t.Closed() {
				continue
			}
		}
		fs = append(fs, found{t, v.TaskRow(o, coll[o.CollectionID], t)})
	}
	prio := func(p int) int {
		if p == 0 {
			return 10
		}
		return p
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i].t, fs[j].t
		if a.Due.IsZero() != b.Due.IsZero() {
			return !a.Due.IsZero()
		}
		if !a.Due.Equal(b.Due) {
			return a.Due.Before(b.Due)
		}
		if prio(a.Priority) != prio(b.Priority) {
			return prio(a.Priority) < prio(b.Priority)
		}
		return a.Summary < b.Summary
	})
	limit := a.Limit
	if limit <= 0 {
		limit = 100
	}
	for _, f := range fs {
		if len(res.Tasks) == limit {
			res.Truncated = kit.Ptr(true)
			break
		}
		res.Tasks = append(res.Tasks, f.row)
	}
	res.LeftOut = kit.NonZero(kept)
	res.SyncedAt = s.CollectionsSyncedAt(ctx, cs)
	return res, nil
}

var ErrNoTask = errors.New("there is no such task here; " + generated.ToolTaskList + " lists the tasks and their ids")

// TaskGet implements task_get.
func (s *Calendars) TaskGet(ctx context.Context, a *generated.TaskGetArgs) (*generated.TaskDetail, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.taskGet(ctx, acc, a)
	return res, MissingFor(acc, err)
}

func (s *Calendars) taskGet(ctx context.Context, acc *kit.Access, a *generated.TaskGetArgs) (*generated.TaskDetail, error) {
	n, ok := ParseObjectID(a.ID, 't')
	if !ok {
		return nil, ErrNoTask
	}
	o, c, err := s.Object(ctx, n, store.ObjectTodo)
	if err != nil {
		if errors.Is(err, store.ErrNoObject) {
			return nil, ErrNoTask
		}
		return nil, err
	}
	if KeepsObject(acc, projects.Task, o, c) {
		return nil, ErrNoTask
	}
	v := s.CalendarView(ctx)
	t, ok := Task(o, v.Person)
	if !ok {
		return nil, ErrNoTask
	}
	res := &generated.TaskDetail{Task: v.TaskRow(o, c, t), Categories: Categories(t.Comp)}
	res.Description, _ = capText(mask.OwnBody(calendar.Text(t.Comp, ical.PropDescription)))
	if !t.Start.IsZero() {
		res.Start = ShowTime(t.Start, v.Person)
	}
	if !t.Completed.IsZero() {
		res.Completed = ShowTime(t.Completed, v.Person)
	}
	if t.Percent > 0 {
		res.Percent = kit.Ptr(t.Percent)
	}
	return res, nil
}

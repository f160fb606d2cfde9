package actions

// The action log of events and tasks. A write (package calwrite: calendar_write.go,
// calendar_write_tasks.go) keeps the text it replaces exactly as the server
// sent it, in a backup file beside mail's (0600, the folder 0700), and logs
// the ETag its own write produced. mail_undo puts the kept text back only
// over that write: a PUT with If-Match of that ETag (a created object is
// removed with DELETE If-Match; a removed one is put back with
// If-None-Match: *, so that nothing written at its place since is
// overwritten). Anything else at the object's address means someone changed
// it since: the undo says so and changes nothing. The undo is logged as an
// action of its own whose item is the reverse (the text it replaced kept the
// same way), so undoing it does the write again.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/source/caldav"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/calwrite"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// davScope is the scope undoing a write of kind needs besides mail_undo's own.
func davScope(kind string) string {
	if kind == store.ObjectTodo {
		return generated.ScopeTasksWrite
	}
	return generated.ScopeCalendarWrite
}

func davNoun(kind string) string {
	if kind == store.ObjectTodo {
		return "task"
	}
	return "event"
}

// davThing is the item as the person's projects see it.
func davThing(d store.DAVItem) projects.Thing {
	k := projects.Event
	if d.Kind == store.ObjectTodo {
		k = projects.Task
	}
	return projects.Thing{Kind: k, Account: d.Account, Collection: d.CollectionName, URL: d.Collection, UID: d.UID}
}

// keepsDAV reports whether the person's projects keep one of an action's events or tasks
// (or their calendar or task list) from this agent.
func keepsDAV(a *kit.Access, items []store.DAVItem) bool {
	if !a.Active() {
		return false
	}
	for _, d := range items {
		t := davThing(d)
		if a.Keeps(t) || a.Set().KeepsCollection(t.Kind, d.Account, d.CollectionName, d.Collection) {
			return true
		}
	}
	return false
}

// undoDAV is mail_undo of an action on events and tasks: each item is put back, or left
// alone with the reason, and the undo is logged with the reverse of what it did.
func (s *Actions) undoDAV(ctx context.Context, st *store.Store, act *store.Action, id string, dryRun bool) (*generated.ActionResult, error) {
	for _, d := range act.DAV {
		if sc := davScope(d.Kind); !kit.HasScope(ctx, sc) {
			return nil, fmt.Errorf("action %s changed a %s; undoing it needs the scope %q too, which this connection was not granted; the person can undo it with postern undo %s", id, davNoun(d.Kind), sc, id)
		}
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	if keepsDAV(acc, act.DAV) {
		return nil, errors.New("postern will not undo this action: its event or task now belongs to a project the person has not opened to agents; the person can open it (postern project open ID) or undo it with postern undo")
	}
	res := &generated.ActionResult{Action: "undo " + id, Messages: []generated.ActionRow{}}
	log := &store.Action{At: time.Now().UTC(), Tool: generated.ToolMailUndo, What: "undo " + id + " (" + act.What + ")",
		Client: kit.ClientName(ctx), Undoes: act.ID, Accounts: act.Accounts}
	for _, d := range act.DAV {
		row := generated.ActionRow{ID: davRowID(d.Kind, d.Object), Subject: d.Summary, To: d.CollectionName}
		back, err := s.undoDAVItem(ctx, st, d, dryRun, &row)
		if err != nil {
			row.Outcome, row.Reason, row.To = outFailed, trimSentence(err.Error()), ""
		}
		if back != nil {
			log.DAV = append(log.DAV, *back)
		}
		res.Messages = append(res.Messages, row)
	}
	finish(res, dryRun)
	if dryRun {
		return res, nil
	}
	if len(log.DAV) == 0 {
		// Nothing was put back: the rows say why, and the action can still be undone later.
		return res, nil
	}
	log.Count = len(log.DAV)
	if err := st.RecordAction(ctx, log); err != nil {
		return nil, fmt.Errorf("the %s was put back but the action log could not be written (%v)", davNoun(act.DAV[0].Kind), err)
	}
	res.ActionID = store.EncodeActionID(log.ID)
	return res, nil
}

// davRowID is an event's or task's id as the tools give it ("" when unknown).
func davRowID(kind string, id int64) string {
	if id == 0 {
		return "-"
	}
	if kind == store.ObjectTodo {
		return "t" + strconv.FormatInt(id, 36)
	}
	return "e" + strconv.FormatInt(id, 36)
}

// undoDAVItem puts back one event or task (with dryRun, says only what it would do). It
// returns what undoes the undo, when it changed the server.
func (s *Actions) undoDAVItem(ctx context.Context, st *store.Store, d store.DAVItem, dryRun bool, row *generated.ActionRow) (*store.DAVItem, error) {
	noun := davNoun(d.Kind)
	_, cs, err := s.Calendars.Collections(ctx, store.KindCalendar, store.KindTasks)
	if err != nil {
		return nil, err
	}
	var c *store.Collection
	for _, x := range cs {
		if x.Account == d.Account && x.URL == d.Collection {
			c = x
		}
	}
	if c == nil {
		return nil, fmt.Errorf("its %s list %s is no longer known to postern, so nothing was changed; run postern sync and try again", noun, d.CollectionName)
	}
	what := "calendar"
	if noun == "task" {
		what = "task list"
	}
	acct, err := s.CalWrite.WriteAccount(ctx, c, what)
	if err != nil {
		return nil, err
	}
	cl, err := caldav.ClientFor(ctx, acct, c)
	if err != nil {
		return nil, fmt.Errorf("nothing was changed: %w", err)
	}
	cur, err := cl.Get(ctx, d.Href)
	var he *caldav.HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Status == http.StatusGone) {
		cur, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("nothing was changed: %w", err)
	}
	changed := func(why string) (*store.DAVItem, error) {
		row.Outcome, row.Reason = outChangedSince, why
		if cur != nil {
			_, _ = calwrite.Keep(ctx, st, c, d.Href, cur) // the store takes what the server holds now
		}
		return nil, nil
	}
	var before []byte
	if d.HadBefore {
		if d.BeforeFile == "" {
			return nil, fmt.Errorf("its kept text was purged with the old backups, so it cannot be put back and nothing was changed")
		}
		if before, err = os.ReadFile(d.BeforeFile); err != nil {
			return nil, fmt.Errorf("its kept text %s cannot be read (%v), so nothing was changed", d.BeforeFile, err)
		}
	}
	// What the action left: an object with its ETag, or none.
	switch {
	case d.AfterETag == "" && cur != nil:
		return changed("something was written at its place on the server since it was removed, so it was left alone")
	case d.AfterETag != "" && cur == nil:
		if !d.HadBefore {
			row.Outcome, row.Reason = outNothingToUndo, "it is no longer on the server (someone deleted it since)"
			return nil, nil
		}
		return changed("it was deleted on the server since, so it was left alone")
	case d.AfterETag != "" && cur.ETag != "" && cur.ETag != d.AfterETag:
		return changed("it was changed on the server since, so it was left alone")
	}
	switch {
	case d.AfterETag == "":
		row.Outcome, row.Reason = outRestored, "put back as it was"
	case !d.HadBefore:
		row.Outcome, row.Reason = outPutBack, "removed: it did not exist before"
	default:
		row.Outcome, row.Reason = outPutBack, "put back as it was"
	}
	if dryRun {
		return nil, nil
	}
	back := store.DAVItem{Account: d.Account, Kind: d.Kind, Collection: d.Collection, CollectionName: d.CollectionName,
		Href: d.Href, UID: d.UID, Summary: d.Summary, Object: d.Object}
	if cur != nil {
		// What the undo replaces is kept too, so that undoing the undo writes it again.
		path, err := calwrite.KeepDAVBackup(d.Account, noun, cur.Data)
		if err != nil {
			return nil, fmt.Errorf("nothing was changed, because its present text could not be kept: %w", err)
		}
		back.HadBefore, back.BeforeFile, back.BeforeSize, back.BeforeETag = true, path, int64(len(cur.Data)), cur.ETag
	}
	conflict := func() (*store.DAVItem, error) {
		if back.BeforeFile != "" {
			os.Remove(back.BeforeFile)
		}
		if now, err := cl.Get(ctx, d.Href); err == nil {
			cur = now
		}
		return changed("it changed on the server meanwhile, so it was left alone")
	}
	if !d.HadBefore {
		err = cl.DeleteIfMatch(ctx, d.Href, d.AfterETag)
		if errors.Is(err, caldav.ErrConflict) {
			return conflict()
		}
		if err != nil {
			os.Remove(back.BeforeFile)
			return nil, fmt.Errorf("nothing was changed: %w", err)
		}
		_ = st.DeleteObjects(ctx, c.ID, []string{d.Href})
		return &back, nil
	}
	etag, err := cl.PutIfMatch(ctx, d.Href, d.AfterETag, before)
	if errors.Is(err, caldav.ErrConflict) {
		return conflict()
	}
	if err != nil {
		if back.BeforeFile != "" {
			os.Remove(back.BeforeFile)
		}
		return nil, fmt.Errorf("nothing was changed: %w", err)
	}
	got, gerr := cl.Get(ctx, d.Href)
	if gerr == nil {
		if etag == "" {
			etag = got.ETag
		}
		if o, err := calwrite.Keep(ctx, st, c, d.Href, got); err == nil {
			back.Object, back.UID = o.ID, o.UID
			row.ID = davRowID(d.Kind, o.ID)
		}
	}
	back.AfterETag = etag
	return &back, nil
}

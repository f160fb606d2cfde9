package actions

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// Small answers. An action's answer (its dry run's, an undo's, a page of mail_actions)
// holds at most ShownRows rows and about SmallAnswer bytes, whatever the number of
// messages: over ShownRows rows it says how many rows share each folder and each sender
// (the top TopTallies of each), shows the first rows that fit and gives a next_cursor. Every
// row stays reachable: an action's rows are kept with it in the log, a dry run's as a preview
// (store.Action.Preview), and mail_actions pages through them with the action_id and that
// cursor. docs page actions says the same to agents.
const (
	// ShownRows is the most rows one answer shows.
	ShownRows = 20
	// TopTallies is how many values of a count an answer shows, most rows first.
	TopTallies = 10
	// SmallAnswer is the most bytes the shown rows and counts may take in an answer, its
	// structured content and its text together, as the envelope carries them.
	SmallAnswer = 12 << 10
	// shownString is the most bytes of one string of a shown row or count.
	shownString = 160
)

// answerRow is one row of an action's answer with what the counts need besides.
type answerRow struct {
	row     generated.ActionRow
	message int64  // the store's id of the message; 0 for a backup, an event or a task
	sender  string // the message's sender's address; "" when unknown
}

// Tallies counts keys, ignoring empty ones, and returns the top n, most first (ties by
// name), each key shortened as an answer shows it. It is the counts of every answer that
// sums up many messages (actions, dry runs, undos; the rules' tests can use it too).
func Tallies(keys []string, n int) []generated.Tally {
	counts := map[string]int{}
	for _, k := range keys {
		if k != "" {
			counts[k]++
		}
	}
	out := make([]generated.Tally, 0, len(counts))
	for k, c := range counts {
		out = append(out, generated.Tally{Name: k, Count: c})
	}
	slices.SortFunc(out, func(a, b generated.Tally) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name))
	})
	out = out[:min(n, len(out))]
	for i := range out {
		out[i].Name = shorten(out[i].Name, shownString)
	}
	return out
}

// shorten is s as the boundary shows it (answer.Line: cleaned, masked), cut to at most n
// bytes with "…" when longer. Masking comes first, so no cut ever splits a secret the
// masks would have found.
func shorten(s string, n int) string {
	s = answer.Line(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shownRow is a row as an answer shows it: each string shortened.
func shownRow(r generated.ActionRow) generated.ActionRow {
	r.Subject, r.Reason = shorten(r.Subject, shownString), shorten(r.Reason, shownString)
	r.From, r.To = shorten(r.From, shownString), shorten(r.To, shownString)
	return r
}

// AnswerSize is how many bytes v takes as an answer: its structured content and its text
// as the envelope carries them. Like the boundary, it makes v's strings safe in place
// (answer.Prepare, which changes nothing already safe).
func AnswerSize(v any) int {
	structured, text, err := answer.Encode(v)
	if err != nil {
		return 0
	}
	return answer.EnvelopeLen(structured, text)
}

// rowCost is how many bytes row adds to an answer's list of rows.
func rowCost(row generated.ActionRow) int {
	return AnswerSize(&generated.ActionList{Messages: []generated.ActionRow{row}}) -
		AnswerSize(&generated.ActionList{Messages: []generated.ActionRow{}})
}

// fitRows returns how many of rows, from the first, fit in budget bytes (at most max, at
// least one when there is one).
func fitRows(rows []generated.ActionRow, budget, max int) int {
	n := 0
	for n < len(rows) && n < max {
		c := rowCost(rows[n])
		if c > budget && n > 0 {
			break
		}
		budget -= c
		n++
	}
	return n
}

// shortAnswer finishes res, an action's answer, from all its rows: it counts them, and
// shows the first that fit, with counts by folder and sender over ShownRows rows. When some
// are not shown, res gets a next_cursor for mail_actions: the rows are those of res.ActionID
// (logged with them), or, when res has none (a dry run, an act that changed nothing), they
// are kept as a preview, meta's tool, what, client and accounts, whose id res then gives.
func (s *Actions) shortAnswer(ctx context.Context, st *store.Store, res *generated.ActionResult, rows []answerRow, meta *store.Action) error {
	all := make([]generated.ActionRow, len(rows))
	for i, r := range rows {
		all[i] = r.row
	}
	res.Messages, res.Changed, res.LeftAlone = all, 0, nil
	finish(res, res.DryRun != nil && *res.DryRun)
	if len(rows) > ShownRows {
		folders, senders := make([]string, len(rows)), make([]string, len(rows))
		for i, r := range rows {
			folders[i] = cmp.Or(r.row.From, r.row.To)
			senders[i] = r.sender
		}
		res.ByFolder, res.BySender = Tallies(folders, TopTallies), Tallies(senders, TopTallies)
		if len(res.ByFolder) == 0 {
			res.ByFolder = nil
		}
		if len(res.BySender) == 0 {
			res.BySender = nil
		}
	}
	shown := make([]generated.ActionRow, 0, min(len(all), ShownRows))
	for _, r := range all[:min(len(all), ShownRows)] {
		shown = append(shown, shownRow(r))
	}
	// The counts take at most half the answer, the rows the rest (at least one row):
	// strings that escape to many bytes each cost counts first.
	res.Action = shorten(res.Action, shownString)
	head := *res
	head.Messages = []generated.ActionRow{}
	for AnswerSize(&head) > SmallAnswer/2 && len(head.ByFolder)+len(head.BySender) > 2 {
		if len(head.ByFolder) >= len(head.BySender) {
			head.ByFolder = head.ByFolder[:len(head.ByFolder)-1]
		} else {
			head.BySender = head.BySender[:len(head.BySender)-1]
		}
	}
	res.ByFolder, res.BySender = head.ByFolder, head.BySender
	n := fitRows(shown, SmallAnswer-AnswerSize(&head), ShownRows)
	res.Messages = shown[:n]
	if n == len(rows) || meta == nil && res.ActionID == "" {
		return nil
	}
	if res.ActionID == "" {
		p := *meta
		p.At, p.Preview, p.Count, p.Rows, p.Items, p.DAV, p.Undoes = time.Now().UTC(), true, res.Changed, loggedRows(rows), nil, nil, 0
		if err := st.RecordAction(ctx, &p); err != nil {
			return err
		}
		res.ActionID = store.EncodeActionID(p.ID)
	}
	id, _ := store.DecodeActionID(res.ActionID)
	res.NextCursor = rowCursor(id, n)
	return nil
}

// loggedRows are rows as the log keeps them.
func loggedRows(rows []answerRow) []store.LoggedRow {
	out := make([]store.LoggedRow, len(rows))
	for i, r := range rows {
		out[i] = store.LoggedRow{Item: r.row.ID, Message: r.message, Outcome: r.row.Outcome, From: r.row.From, To: r.row.To,
			Subject: r.row.Subject, Sender: r.sender, Reason: r.row.Reason}
	}
	return out
}

// A cursor over an action's rows holds the action and the number of the next row, above
// rowShift bits, so that it is never taken for a cursor of the log (an action's id) nor for
// one of another action's rows.
const rowShift = 40

func rowCursor(action int64, next int) string {
	return kit.EncodeCursor(int64(next)<<rowShift | action)
}

// decodeRowCursor reads a cursor over action's rows: the number of the next row.
func decodeRowCursor(c *string, action int64) (int, error) {
	v, err := kit.DecodeCursor(c)
	if err != nil || v == 0 {
		return 0, err
	}
	if v&(1<<rowShift-1) != action || v>>rowShift == 0 {
		return 0, errors.New("the cursor is not one of this action's rows; start again without a cursor, or pass the action_id it came with")
	}
	return int(v >> rowShift), nil
}

// isRowCursor reports whether a cursor pages an action's rows (and so needs its action_id).
func isRowCursor(v int64) bool { return v>>rowShift != 0 }

// itemRows are the rows of an action logged before rows were kept, made from its items:
// what it changed (what it left alone was not logged).
func itemRows(act *store.Action) []store.LoggedRow {
	var out []store.LoggedRow
	for _, it := range act.Items {
		r := store.LoggedRow{Item: store.EncodeID(it.Message), Message: it.Message, Outcome: outMoved, From: it.FromFolder, To: it.ToFolder, Subject: it.Subject}
		switch {
		case it.FromFolder == "":
			r.Item, r.Message, r.Outcome, r.From = store.EncodeBackupID(it.Backup), 0, outRestored, ""
		case it.FromFolder == it.ToFolder:
			r.Outcome, r.To = outMarked, ""
		}
		out = append(out, r)
	}
	for _, d := range act.DAV {
		out = append(out, store.LoggedRow{Item: davRowID(d.Kind, d.Object), Outcome: outMoved, To: d.CollectionName, Subject: d.Summary})
	}
	return out
}

// MailActions implements mail_actions: the log, with action_id a page of one action's rows,
// or with backups a page of the kept backups (backups.go).
func (s *Actions) MailActions(ctx context.Context, a *generated.MailActionsArgs) (*generated.ActionList, error) {
	switch {
	case a.Backups && a.ActionID != nil:
		return nil, errors.New("give either backups or action_id, not both: an action's rows are not backups")
	case a.Backups:
		return s.backupList(ctx, a)
	case a.Account != nil:
		return nil, errors.New("account chooses whose backups are listed; add backups: true (the action log covers every account)")
	}
	if a.ActionID != nil {
		return s.actionRows(ctx, *a.ActionID, a.Cursor, a.Limit)
	}
	return s.actionLog(ctx, a)
}

// actionRows is a page of one action's rows: in order, from the cursor, at most limit and
// about SmallAnswer bytes; rows of messages the person's projects now keep are left out
// (and counted).
func (s *Actions) actionRows(ctx context.Context, id string, cursor *string, limit int) (*generated.ActionList, error) {
	st, act, err := s.loggedAction(ctx, id)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	if acc.Active() && keepsDAV(acc, act.DAV) {
		return nil, acc.NotFound("there is no action " + id + "; " + generated.ToolMailActions + " lists them")
	}
	from, err := decodeRowCursor(cursor, act.ID)
	if err != nil {
		return nil, err
	}
	rows, more, err := st.ActionRows(ctx, act.ID, from, limit)
	if err != nil {
		return nil, err
	}
	if from == 0 && len(rows) == 0 {
		if n, err := st.CountActionRows(ctx, act.ID); err != nil {
			return nil, err
		} else if n == 0 {
			rows = itemRows(act)
			more = len(rows) > limit
			rows = rows[:min(len(rows), limit)]
		}
	} else if from > 0 && len(rows) == 0 && cursor != nil {
		if n, err := st.CountActionRows(ctx, act.ID); err == nil && from > n {
			return nil, errors.New("the cursor is past this action's rows; start again without a cursor")
		}
	}
	res := &generated.ActionList{Actions: []generated.ActionInfo{actionInfo(act)}, Messages: []generated.ActionRow{}}
	kept, err := s.keptRows(ctx, st, acc, rows)
	if err != nil {
		return nil, err
	}
	budget := SmallAnswer - AnswerSize(res)
	for i, r := range rows {
		if kept[i] {
			res.LeftOut = kit.Ptr(deref0(res.LeftOut) + 1)
			continue
		}
		row := shownRow(generated.ActionRow{ID: r.Item, Outcome: r.Outcome, From: r.From, To: r.To, Subject: r.Subject, Reason: r.Reason})
		c := rowCost(row)
		if c > budget && len(res.Messages) > 0 {
			res.NextCursor = rowCursor(act.ID, from+i)
			return res, nil
		}
		budget -= c
		res.Messages = append(res.Messages, row)
	}
	if more {
		res.NextCursor = rowCursor(act.ID, from+len(rows))
	}
	return res, nil
}

func deref0(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// keptRows says which rows are of a message or backup the person's projects keep from agents.
func (s *Actions) keptRows(ctx context.Context, st *store.Store, acc *kit.Access, rows []store.LoggedRow) ([]bool, error) {
	kept := make([]bool, len(rows))
	if !acc.Active() {
		return kept, nil
	}
	h, err := acc.Mail(ctx, st)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range rows {
		if r.Message != 0 {
			ids = append(ids, r.Message)
		}
	}
	threads, err := st.MessageThreads(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		if t, ok := threads[r.Message]; ok && r.Message != 0 && h != nil && h.Keeps(t, acc.KeptThreads()) {
			kept[i] = true
			continue
		}
		if b, ok := store.DecodeBackupID(r.Item); ok {
			bk, err := st.BackupByID(ctx, b, nil)
			if errors.Is(err, store.ErrNoBackup) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if kept[i], err = acc.KeepsBackup(ctx, st, bk); err != nil {
				return nil, err
			}
		}
	}
	return kept, nil
}

// actionInfo is an action as the log lists it.
func actionInfo(act *store.Action) generated.ActionInfo {
	info := generated.ActionInfo{ActionID: store.EncodeActionID(act.ID), Action: act.What,
		At: act.At.Format("2006-01-02 15:04"), Client: act.Client, Account: joinAccounts(act.Accounts), Messages: act.Count}
	if act.UndoneBy != 0 {
		info.UndoneBy = store.EncodeActionID(act.UndoneBy)
	}
	if act.Undoes != 0 {
		info.Undoes = store.EncodeActionID(act.Undoes)
	}
	if act.Preview {
		info.Preview = kit.Ptr(true)
	}
	return info
}

// actionLog is a page of the log, newest first, at most limit actions and about SmallAnswer bytes.
func (s *Actions) actionLog(ctx context.Context, a *generated.MailActionsArgs) (*generated.ActionList, error) {
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	before, err := kit.DecodeCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	if isRowCursor(before) {
		return nil, errors.New("this cursor pages one action's rows; pass it with that action's action_id")
	}
	visible, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	res := &generated.ActionList{Actions: []generated.ActionInfo{}}
	budget := SmallAnswer - AnswerSize(res)
	var last int64
	for {
		acts, err := st.Actions(ctx, before, a.Limit+1)
		if err != nil {
			return nil, err
		}
		if len(acts) == 0 {
			break
		}
		for _, act := range acts {
			before = act.ID
			if !allVisible(act.Accounts, visible) {
				continue
			}
			if acc.Active() {
				// An action on an event or task the person's projects keep is not there to this agent.
				dav, err := st.DAVItemsOf(ctx, act.ID)
				if err != nil {
					return nil, err
				}
				if keepsDAV(acc, dav) {
					continue
				}
			}
			info := actionInfo(act)
			c := AnswerSize(&generated.ActionList{Actions: []generated.ActionInfo{info}}) - AnswerSize(&generated.ActionList{Actions: []generated.ActionInfo{}})
			if len(res.Actions) == a.Limit || c > budget && len(res.Actions) > 0 {
				res.NextCursor = kit.EncodeCursor(last)
				return res, nil
			}
			budget -= c
			res.Actions = append(res.Actions, info)
			last = act.ID
		}
	}
	return res, nil
}

// Package actions serves the tools of catalog/mail_actions.yaml: moving and marking mail,
// the action log and its undo (of mail and of the calendar writes, package calwrite),
// backups and their purge; the rules domain runs its plans through Act.
package actions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/calwrite"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
)

// Actions implements generated.MailActionsHandlers.
type Actions struct {
	*kit.Kit
	// Mail resolves accounts and queries.
	Mail *mail.Mail
	// Calendars and CalWrite are what undoing a write of an event or task takes.
	Calendars *calendars.Calendars
	CalWrite  *calwrite.CalWrite
}

var _ generated.MailActionsHandlers = (*Actions)(nil)

// Acting on mail (mail_move, with its words archive, junk, not_junk and trash;
// mail_mark; mail_undo, which also restores a backup, backups.go). The rule the catalog's lint keeps: a change
// postern can put back needs the scope, a dry run that changes nothing, and a
// line in the action log with its undo; what cannot be undone is a
// prepare/commit pair. A dry run reads only the store: it neither logs in nor
// selects a folder, so the server and the store stay exactly as they were.
// The act follows on the store at once (a moved message keeps its id), and a
// message the server changed since the store last saw it is reported, not
// overwritten.

// MaxActed is how many messages one action may take.
const MaxActed = 500

// Outcomes of an action's rows.
const (
	outMoved         = "moved"
	outMarked        = "marked"
	outPutBack       = "put_back"
	outRestored      = "restored"
	outUnchanged     = "unchanged"
	outChangedSince  = "changed_since"
	outGone          = "gone"
	outNothingToUndo = "nothing_to_undo"
	outFailed        = "failed"
)

// IMAP keywords of junk reports (RFC 5788 registry).
const (
	kwJunk    = "$Junk"
	kwNotJunk = "$NotJunk"
)

// Plan is what one action does to each of its messages.
type Plan struct {
	tool, what string
	// dest gives the folder a message goes to ("" for no move), or an error for its account.
	dest        func(ctx context.Context, st *store.Store, t *store.Target) (*store.FolderRef, error)
	add, remove []string // flags set before any move
	backup      bool     // keep a backup of each message before changing anything
	// perAccount, when set, gives the plan for the messages of one account (a word of
	// mail_move means a different folder, or a folder, on each account).
	perAccount func(ctx context.Context, st *store.Store, account string) (*Plan, error)
}

// selectTargets turns ids or a query into the visible messages they name.
func (s *Actions) selectTargets(ctx context.Context, ids []string, query *string) (*store.Store, []*store.Target, error) {
	if len(ids) > 0 && query != nil {
		return nil, nil, errors.New("give either ids or query, not both")
	}
	if len(ids) == 0 && query == nil {
		return nil, nil, errors.New("say which messages: ids (from " + generated.ToolMailList + " or " + generated.ToolMailSearch + ") or a query")
	}
	accts, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, nil, err
	}
	hide, err := acc.Mail(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	var nums []int64
	if query != nil {
		searchable, err := s.Mail.SearchAccounts(ctx)
		if err != nil {
			return nil, nil, err
		}
		q, err := s.Mail.ParseQuery(ctx, *query)
		if err != nil {
			return nil, nil, err
		}
		if err := mail.ResolveQueryAccounts(q, searchable); err != nil {
			return nil, nil, err
		}
		rows, more, err := st.Messages(ctx, &store.Filter{Accounts: searchable, Query: q, Bodies: kit.SearchesBodies(ctx), Limit: MaxActed, Hide: hide})
		if err != nil {
			return nil, nil, err
		}
		if more {
			return nil, nil, fmt.Errorf("the search finds more than %d messages; one action takes at most %d, so narrow the search (after:, before:, in:, from:)", MaxActed, MaxActed)
		}
		if len(rows) == 0 {
			return nil, nil, fmt.Errorf("the search finds no message, so nothing would change; check it with %s", generated.ToolMailSearch)
		}
		for _, r := range rows {
			nums = append(nums, r.ID)
		}
	} else {
		for _, id := range ids {
			n, ok := store.DecodeID(id)
			if !ok {
				return nil, nil, fmt.Errorf("%q is not a message id; use ids from %s or %s", id, generated.ToolMailList, generated.ToolMailSearch)
			}
			nums = append(nums, n)
		}
	}
	if hide != nil && query == nil {
		// A kept message is not there to this agent: the same answer as a missing one.
		threads, err := st.MessageThreads(ctx, nums)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range nums {
			if t, ok := threads[n]; ok && hide.Keeps(t, acc.KeptThreads()) {
				return nil, nil, acc.NotFound(fmt.Sprintf("there is no message %s here (it may have been deleted since it was listed); nothing was changed; use ids from %s or %s", store.EncodeID(n), generated.ToolMailList, generated.ToolMailSearch))
			}
		}
	}
	targets, err := st.Targets(ctx, nums, accts)
	if err != nil {
		return nil, nil, err
	}
	if query == nil && len(targets) < len(uniqueIDs(nums)) {
		found := map[int64]bool{}
		for _, t := range targets {
			found[t.ID] = true
		}
		for _, n := range nums {
			if !found[n] {
				return nil, nil, acc.NotFound(fmt.Sprintf("there is no message %s here (it may have been deleted since it was listed); nothing was changed; use ids from %s or %s", store.EncodeID(n), generated.ToolMailList, generated.ToolMailSearch))
			}
		}
	}
	return st, targets, nil
}

func uniqueIDs(ns []int64) []int64 {
	out := slices.Clone(ns)
	slices.Sort(out)
	return slices.Compact(out)
}

// actingAccount is the configured account of a message, which must be one whose
// server postern can change.
func (s *Actions) actingAccount(ctx context.Context, name string) (config.Account, error) {
	cfg, err := s.Config.Get()
	if err != nil {
		return config.Account{}, err
	}
	for _, a := range cfg.Accounts {
		if a.Name == name && s.Allowed(ctx, a.Name) {
			if !mail.Writable(a) {
				return a, fmt.Errorf("account %s is a read-only %s import; postern changes mail only on an IMAP account", a.Name, a.Kind)
			}
			return a, nil
		}
	}
	return config.Account{}, fmt.Errorf("account %s is no longer configured; its messages cannot be changed", name)
}

// RoleDest is the folder of the account that has role, else the configured one.
func (s *Actions) RoleDest(role, noun, setting string) func(context.Context, *store.Store, *store.Target) (*store.FolderRef, error) {
	return func(ctx context.Context, st *store.Store, t *store.Target) (*store.FolderRef, error) {
		f, err := st.RoleFolder(ctx, t.Account, role)
		if err != nil || f != nil {
			return f, err
		}
		if setting != "" {
			acct, err := s.actingAccount(ctx, t.Account)
			if err != nil {
				return nil, err
			}
			if acct.ArchiveFolder != "" {
				return st.FindFolder(ctx, t.Account, acct.ArchiveFolder)
			}
			return nil, fmt.Errorf("account %s has no %s folder (none is marked \\Archive on the server, none is called Archive); the person can name one with archive_folder = \"NAME\" in the account's section of the configuration file; until then, use %s", t.Account, noun, generated.ToolMailMove)
		}
		return nil, fmt.Errorf("account %s has no %s folder that postern knows of; run %s, or use %s with the folder's name", t.Account, noun, generated.ToolMailSync, generated.ToolMailMove)
	}
}

// RulePlan turns a rule's actions into one plan of Act, logged as tool's and named what:
// flags first, then at most one move. A forward is not part of it.
func (s *Actions) RulePlan(tool, what string, acts []generated.RuleAction) Plan {
	p := Plan{tool: tool, what: what}
	for _, a := range acts {
		switch a.Do {
		case "archive":
			p.dest = s.RoleDest(source.RoleArchive, "Archive", "archive_folder")
		case "move":
			folder := a.Folder
			p.dest = func(ctx context.Context, st *store.Store, t *store.Target) (*store.FolderRef, error) {
				return st.FindFolder(ctx, t.Account, folder)
			}
		case "junk":
			p.add = append(p.add, kwJunk)
			p.dest = s.RoleDest(source.RoleJunk, "Junk", "")
		case "delete":
			p.backup = true
			p.dest = s.RoleDest(source.RoleTrash, "Trash", "")
		case "mark_read":
			p.add = append(p.add, `\Seen`)
		case "mark_unread":
			p.remove = append(p.remove, `\Seen`)
		case "flag":
			p.add = append(p.add, `\Flagged`)
		case "unflag":
			p.remove = append(p.remove, `\Flagged`)
		}
	}
	return p
}

// The words mail_move's to takes besides a folder's name: each names an account's
// special folder and does what moving there means. Only the lower-case spelling is a
// word, and on an account with a folder of exactly that name which is not the special
// folder, the name is that folder's (so every folder stays reachable).
const (
	toArchive = "archive"
	toJunk    = "junk"
	toNotJunk = "not_junk"
	toTrash   = "trash"
)

// wordPlan is what a word of mail_move does on one account, or nil when to is no word.
func (s *Actions) wordPlan(word string) *Plan {
	switch word {
	case toArchive:
		return &Plan{what: "archive", dest: s.RoleDest(source.RoleArchive, "Archive", "archive_folder")}
	case toJunk:
		return &Plan{what: "junk", add: []string{kwJunk}, remove: []string{kwNotJunk}, dest: s.RoleDest(source.RoleJunk, "Junk", "")}
	case toNotJunk:
		return &Plan{what: "not junk", add: []string{kwNotJunk}, remove: []string{kwJunk},
			dest: func(ctx context.Context, st *store.Store, t *store.Target) (*store.FolderRef, error) {
				return st.FindFolder(ctx, t.Account, "INBOX")
			}}
	case toTrash:
		return &Plan{what: "delete", backup: true, dest: s.RoleDest(source.RoleTrash, "Trash", "")}
	}
	return nil
}

// MailMove implements mail_move: to a folder, or with a word to an account's special
// folder (archive; junk and not_junk, which report it; trash, a delete kept as a backup).
func (s *Actions) MailMove(ctx context.Context, a *generated.MailMoveArgs) (*generated.ActionResult, error) {
	folder := func(name string) func(context.Context, *store.Store, *store.Target) (*store.FolderRef, error) {
		return func(ctx context.Context, st *store.Store, t *store.Target) (*store.FolderRef, error) {
			return st.FindFolder(ctx, t.Account, name)
		}
	}
	p := Plan{tool: generated.ToolMailMove, what: "move to " + a.To, dest: folder(a.To)}
	if w := s.wordPlan(a.To); w != nil {
		p.perAccount = func(ctx context.Context, st *store.Store, account string) (*Plan, error) {
			f, err := st.FolderNamed(ctx, account, a.To)
			if err != nil {
				return nil, err
			}
			if f != nil {
				// A folder called exactly like the word: it is the word's folder, or the one meant.
				special, err := w.dest(ctx, st, &store.Target{Account: account})
				if err != nil || special == nil || special.ID != f.ID {
					return &Plan{what: p.what, dest: folder(a.To)}, nil
				}
			}
			return w, nil
		}
	}
	return s.Act(ctx, a.IDs, a.Query, a.DryRun, p)
}

// MailMark implements mail_mark.
func (s *Actions) MailMark(ctx context.Context, a *generated.MailMarkArgs) (*generated.ActionResult, error) {
	p := Plan{tool: generated.ToolMailMark, what: "mark " + a.How}
	switch a.How {
	case "read":
		p.add = []string{`\Seen`}
	case "unread":
		p.remove = []string{`\Seen`}
	case "flagged":
		p.add = []string{`\Flagged`}
	default:
		p.remove = []string{`\Flagged`}
	}
	return s.Act(ctx, a.IDs, a.Query, a.DryRun, p)
}

// step is one message of an action with where it goes.
type step struct {
	t    *store.Target
	dest *store.FolderRef
	row  generated.ActionRow
}

// withFlags is the store's flag bits after adding and removing IMAP flags.
func withFlags(bits int, add, remove []string) int {
	return (bits | store.FlagBits(add)) &^ store.FlagBits(remove)
}

// act plans an action on the selected messages and, unless dryRun, does it.
func (s *Actions) Act(ctx context.Context, ids []string, query *string, dryRun bool, p Plan) (*generated.ActionResult, error) {
	st, targets, err := s.selectTargets(ctx, ids, query)
	if err != nil {
		return nil, err
	}
	checked := map[string]bool{}
	for _, t := range targets { // a dry run says so too: an account postern cannot change
		if !checked[t.Account] {
			checked[t.Account] = true
			if _, err := s.actingAccount(ctx, t.Account); err != nil {
				return nil, err
			}
		}
	}
	// Each account's plan (the same for all but with a word of mail_move) and destination.
	plans := map[string]*Plan{}
	var whats []string
	for _, acct := range targetAccounts(targets) {
		ap := &p
		if p.perAccount != nil {
			if ap, err = p.perAccount(ctx, st, acct); err != nil {
				return nil, err
			}
		}
		plans[acct] = ap
		if !slices.Contains(whats, ap.what) {
			whats = append(whats, ap.what)
		}
	}
	what := p.what
	if len(whats) == 1 {
		what = whats[0] // the verb the action did: archive, junk, delete…
	}
	res := &generated.ActionResult{Action: what, Messages: []generated.ActionRow{}}
	var steps []*step
	dests := map[string]*store.FolderRef{}
	for _, t := range targets {
		ap := plans[t.Account]
		sp := &step{t: t, row: generated.ActionRow{ID: store.EncodeID(t.ID), From: t.Folder, Subject: t.Subject}}
		if ap.dest != nil {
			if dests[t.Account] == nil {
				f, err := ap.dest(ctx, st, t)
				if err != nil {
					return nil, err // nothing has changed yet
				}
				dests[t.Account] = f
			}
			sp.dest = dests[t.Account]
			sp.row.To = sp.dest.Name
		}
		switch {
		case sp.dest != nil && sp.dest.ID == t.FolderID:
			sp.row.Outcome, sp.row.Reason = outUnchanged, "already in "+sp.dest.Name
		case sp.dest == nil && withFlags(t.Flags, ap.add, ap.remove) == t.Flags:
			sp.row.Outcome, sp.row.Reason = outUnchanged, "already "+strings.TrimPrefix(ap.what, "mark ")
		case sp.dest != nil:
			sp.row.Outcome = outMoved
		default:
			sp.row.Outcome = outMarked
		}
		steps = append(steps, sp)
	}
	log := &store.Action{At: time.Now().UTC(), Tool: p.tool, What: what, Client: kit.ClientName(ctx), Accounts: targetAccounts(targets)}
	if dryRun {
		res.DryRun = kit.Ptr(true)
		if err := s.shortAnswer(ctx, st, res, stepRows(steps), log); err != nil {
			return nil, err
		}
		return res, nil
	}
	// One connection per account, one server call per folder.
	groups := map[[2]string][]*step{}
	var keys [][2]string
	for _, sp := range steps {
		if sp.row.Outcome == outUnchanged {
			continue
		}
		k := [2]string{sp.t.Account, sp.t.Folder}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], sp)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	sessions := map[string]source.Session{}
	defer func() {
		for _, c := range sessions {
			c.Close()
		}
	}()
	backups := 0
	var firstErr error
	for _, k := range keys {
		group := groups[k]
		c, err := s.session(ctx, sessions, k[0])
		if err == nil {
			var n int
			n, err = s.actOnFolder(ctx, st, c, group, *plans[k[0]], log)
			backups += n
		}
		if err != nil {
			fail(group, err)
			firstErr = cmp.Or(firstErr, err)
		}
	}
	rows := stepRows(steps)
	for _, r := range rows {
		res.Messages = append(res.Messages, r.row)
	}
	finish(res, false)
	if firstErr != nil && res.Changed == 0 && len(log.Items) == 0 {
		// Nothing changed anywhere: the reason is the answer, not a row of it.
		return nil, firstErr
	}
	for _, ap := range plans {
		if ap.backup {
			res.Backups = kit.Ptr(backups)
		}
	}
	if len(log.Items) > 0 {
		log.Count = len(log.Items)
		log.Accounts = itemAccounts(log.Items)
		log.Rows = loggedRows(rows)
		if err := st.RecordAction(ctx, log); err != nil {
			return nil, fmt.Errorf("the messages were changed but the action log could not be written (%v); %s cannot put them back, %s can", err, generated.ToolMailUndo, generated.ToolMailMove)
		}
		res.ActionID = store.EncodeActionID(log.ID)
	}
	if err := s.shortAnswer(ctx, st, res, rows, log); err != nil {
		return nil, err
	}
	return res, nil
}

// stepRows are the rows of an action's answer, one per step, in order.
func stepRows(steps []*step) []answerRow {
	out := make([]answerRow, len(steps))
	for i, sp := range steps {
		out[i] = answerRow{row: sp.row, message: sp.t.ID, sender: sp.t.From.Email}
	}
	return out
}

// targetAccounts are the accounts of targets, sorted.
func targetAccounts(targets []*store.Target) []string {
	var out []string
	for _, t := range targets {
		if !slices.Contains(out, t.Account) {
			out = append(out, t.Account)
		}
	}
	sort.Strings(out)
	return out
}

// fail marks every step of group not yet done as failed with err.
func fail(group []*step, err error) {
	for _, sp := range group {
		if sp.row.Outcome == outMoved || sp.row.Outcome == outMarked {
			sp.row.Outcome, sp.row.Reason = outFailed, trimSentence(err.Error())
			sp.row.To = ""
		}
	}
}

func trimSentence(s string) string { return strings.TrimSuffix(strings.TrimSpace(s), ".") }

func (s *Actions) session(ctx context.Context, sessions map[string]source.Session, account string) (source.Session, error) {
	if c := sessions[account]; c != nil {
		return c, nil
	}
	acct, err := s.actingAccount(ctx, account)
	if err != nil {
		return nil, err
	}
	c, err := mail.Connect(ctx, acct)
	if err != nil {
		return nil, err
	}
	sessions[account] = c
	return c, nil
}

// actOnFolder does a plan to the steps of one folder and logs what it did.
// It returns how many backups it kept.
func (s *Actions) actOnFolder(ctx context.Context, st *store.Store, c source.Session, group []*step, p Plan, log *store.Action) (int, error) {
	folder, uidv := group[0].t.Folder, group[0].t.UIDValidity
	uids := make([]uint32, 0, len(group))
	for _, sp := range group {
		uids = append(uids, sp.t.UID)
	}
	state, err := c.State(ctx, folder, uidv, uids)
	if err != nil {
		return 0, err
	}
	var live []*step
	for _, sp := range group {
		now, ok := state[sp.t.UID]
		switch {
		case !ok:
			sp.row.Outcome, sp.row.Reason, sp.row.To = outGone, "no longer on the server; the next sync removes it here", ""
		case p.dest == nil && sp.t.ModSeq > 0 && now.ModSeq > sp.t.ModSeq:
			sp.row.Outcome, sp.row.Reason = outChangedSince, "changed on the server since the last sync, so it was left alone; sync and look again"
		default:
			live = append(live, sp)
		}
	}
	if len(live) == 0 {
		return 0, nil
	}
	items := map[*step]*store.ActionItem{}
	for _, sp := range live {
		items[sp] = &store.ActionItem{Message: sp.t.ID, Account: sp.t.Account, MessageID: sp.t.MessageID, Subject: sp.t.Subject,
			FromFolder: folder, FromUIDValidity: uidv, FromUID: sp.t.UID, ToFolder: folder, ToUIDValidity: uidv, ToUID: sp.t.UID,
			FlagsBefore: state[sp.t.UID].Flags, FlagsAfter: state[sp.t.UID].Flags}
	}
	backups := 0
	if p.backup {
		for _, sp := range live {
			id, err := s.keepBackup(ctx, st, c, sp.t, state[sp.t.UID].Flags)
			if err != nil {
				// Nothing changes on the server for a message whose backup could not be kept.
				sp.row.Outcome, sp.row.Reason, sp.row.To = outFailed, "no backup could be kept, so it was left alone: "+trimSentence(err.Error()), ""
				delete(items, sp)
				continue
			}
			items[sp].Backup = id
			backups++
		}
		live = slices.DeleteFunc(live, func(sp *step) bool { return items[sp] == nil })
	}
	if len(p.add) > 0 || len(p.remove) > 0 {
		var lu []uint32
		for _, sp := range live {
			lu = append(lu, sp.t.UID)
		}
		// A mark leaves alone a message changed elsewhere since the store saw it (its modseq on
		// the server is above the store's), and, through UNCHANGEDSINCE, one changed between
		// State and the STORE: any change then takes a modseq above every one State read.
		var since uint64
		if p.dest == nil {
			since = maxModSeq(live, state)
		}
		fl, err := c.SetFlags(ctx, folder, uidv, lu, p.add, p.remove, since)
		if err != nil {
			return backups, err
		}
		for _, sp := range live {
			uid := sp.t.UID
			switch {
			case slices.Contains(fl.Gone, uid):
				sp.row.Outcome, sp.row.Reason, sp.row.To = outGone, "no longer on the server; the next sync removes it here", ""
				delete(items, sp)
			case slices.Contains(fl.Changed, uid):
				sp.row.Outcome, sp.row.Reason = outChangedSince, "changed on the server since the last sync, so it was left alone; sync and look again"
				delete(items, sp)
			default:
				if after, ok := fl.After[uid]; ok {
					items[sp].FlagsAfter = after.Flags
					if p.dest == nil {
						if err := st.SetStoredFlags(ctx, sp.t.ID, store.FlagBits(after.Flags), after.ModSeq); err != nil {
							return backups, err
						}
					}
				}
			}
		}
		live = slices.DeleteFunc(live, func(sp *step) bool { return items[sp] == nil })
	}
	if p.dest != nil && len(live) > 0 {
		dest := live[0].dest
		var mu []uint32
		for _, sp := range live {
			mu = append(mu, sp.t.UID)
		}
		mv, err := c.Move(ctx, folder, uidv, mu, dest.Name)
		if err != nil {
			for sp, it := range items { // flags set before the move stay logged, to be undone
				if !slices.Equal(it.FlagsBefore, it.FlagsAfter) {
					log.Items = append(log.Items, *it)
					sp.row.Outcome, sp.row.Reason = outFailed, "its flags were changed but it could not be moved: "+trimSentence(err.Error())
				}
			}
			return backups, err
		}
		for _, sp := range live {
			uid := sp.t.UID
			if slices.Contains(mv.Gone, uid) {
				sp.row.Outcome, sp.row.Reason, sp.row.To = outGone, "no longer on the server; the next sync removes it here", ""
				delete(items, sp)
				continue
			}
			nu := mv.UIDs[uid]
			if mv.UIDValidity != 0 && dest.UIDValidity != 0 && mv.UIDValidity != dest.UIDValidity {
				nu = 0 // the store's copy of the destination is stale: the next sync stores it anew
			}
			if err := st.MoveStored(ctx, sp.t.ID, dest, nu); err != nil {
				return backups, err
			}
			it := items[sp]
			it.ToFolder, it.ToUID, it.ToUIDValidity = dest.Name, nu, mv.UIDValidity
		}
	}
	for _, sp := range group {
		if it := items[sp]; it != nil {
			log.Items = append(log.Items, *it)
		}
	}
	return backups, nil
}

// maxModSeq is the highest modseq State read of steps; 0 without CONDSTORE.
func maxModSeq(steps []*step, state map[uint32]source.MessageState) uint64 {
	var m uint64
	for _, sp := range steps {
		m = max(m, state[sp.t.UID].ModSeq)
	}
	return m
}

// keepBackup writes the message's exact bytes to the account's backup folder
// (0600, the folder 0700) and records it; nothing on the server changes.
func (s *Actions) keepBackup(ctx context.Context, st *store.Store, c source.Session, t *store.Target, flags []string) (int64, error) {
	raw, err := c.Fetch(ctx, t.Folder, t.UID)
	if err != nil {
		return 0, err
	}
	dir := config.BackupDir(t.Account)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("cannot create the backup folder %s: %w", dir, err)
	}
	now := time.Now().UTC()
	var f *os.File
	var path string
	for i := 0; ; i++ {
		path = filepath.Join(dir, fmt.Sprintf("%s-%s-%d.eml", now.Format("20060102T150405.000"), store.EncodeID(t.ID), i))
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !errors.Is(err, os.ErrExist) || i > 100 {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("cannot write the backup %s: %w", path, err)
	}
	if _, err := f.Write(raw); err != nil {
		f.Close()
		os.Remove(path)
		return 0, fmt.Errorf("cannot write the backup %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return 0, fmt.Errorf("cannot write the backup %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return 0, fmt.Errorf("cannot write the backup %s: %w", path, err)
	}
	b := &store.Backup{Account: t.Account, Folder: t.Folder, MessageID: t.MessageID, Subject: t.Subject,
		From: mail.AddrString(t.From), Date: t.Date, Saved: now, Size: int64(len(raw)), File: path, Flags: flags}
	if err := st.AddBackup(ctx, b); err != nil {
		os.Remove(path)
		return 0, err
	}
	return b.ID, nil
}

func itemAccounts(items []store.ActionItem) []string {
	var out []string
	for _, it := range items {
		if !slices.Contains(out, it.Account) {
			out = append(out, it.Account)
		}
	}
	sort.Strings(out)
	return out
}

// finish counts a result's rows.
func finish(res *generated.ActionResult, dryRun bool) *generated.ActionResult {
	left := 0
	for _, r := range res.Messages {
		switch r.Outcome {
		case outMoved, outMarked, outPutBack, outRestored:
			res.Changed++
		default:
			left++
		}
	}
	if left > 0 {
		res.LeftAlone = kit.Ptr(left)
	}
	if dryRun {
		res.DryRun = kit.Ptr(true)
	}
	return res
}

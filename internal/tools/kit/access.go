package kit

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/postern-mcp/postern/internal/authres"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// Per-project access (issue 17, docs/projects.md): every tool asks access what the person's
// projects keep from agents, read again at each call. Lists leave kept things out and say
// how many they left out (of their whole scope, whatever the words, so that the count tells
// nothing of a kept thing's words); a kept thing asked for by id gets the same sentence as
// one that does not exist, with what the person can do; nothing is written into a closed
// project. What the person runs (the command line, rules applied at sync) is not filtered.

// access is what the person's projects let one call see and write.
type Access struct {
	k   *Kit
	set *projects.Set

	mailOnce sync.Once
	cache    *mailCache
	hide     *store.Hide
	threads  map[int64]bool  // hide's threads, as a set
	of       map[int64][]int // each routed thread's projects (indexes into set.Projects)
	mailErr  error

	notesOnce   sync.Once
	noteFolders []notes.Folder // the configured notes folders, for a note's id (keepsNote)
}

// openHint is what a refusal adds while projects keep anything: what the person can do.
const openHint = "; if it belongs to a project the person has not opened to agents, the person can open it (postern project open ID)"

// Access reads the projects file as it is now, through the call's view. An unreadable
// file is an error: nothing is shown until the person fixes it. The person at the terminal
// (postern call, postern undo, rules at sync) gets the empty set: projects are about
// agents, and the person sees everything.
func (k *Kit) Access(ctx context.Context) (*Access, error) {
	v, err := view.From(ctx)
	if err != nil {
		return nil, err
	}
	set, err := v.Projects()
	if err != nil {
		return nil, err
	}
	return &Access{k: k, set: set}, nil
}

// active reports whether anything may be kept.
func (a *Access) Active() bool { return a != nil && a.set.Active() }

// notFound is the sentence for a thing that is not there to this agent, kept or missing alike.
func (a *Access) NotFound(sentence string) error {
	if a.Active() {
		return errors.New(sentence + openHint)
	}
	return errors.New(sentence)
}

// mail returns what mail queries leave out (nil when nothing), computed once per call.
func (a *Access) Mail(ctx context.Context, st *store.Store) (*store.Hide, error) {
	if !a.Active() {
		return nil, nil
	}
	a.mailOnce.Do(func() { a.cache, a.mailErr = a.k.mailFor(ctx, a, st) })
	if a.mailErr != nil {
		return nil, a.mailErr
	}
	a.hide, a.threads, a.of = a.cache.hide, a.cache.threads, a.cache.of
	return a.hide, nil
}

// mailCache is what the projects keep of the mail, worked out once for a projects file (its
// Set), a state of the store (its data version) and the visible accounts, and kept until one
// of them changes: a call in between pays a stat and one PRAGMA.
type mailCache struct {
	set      *projects.Set
	version  int64
	accounts string
	hide     *store.Hide
	threads  map[int64]bool
	of       map[int64][]int
	counts   map[string]int // left out, by accounts and folder (guarded by Kit.mailMu)
}

// mailFor returns the cached computation for a, or works it out anew.
func (s *Kit) mailFor(ctx context.Context, a *Access, st *store.Store) (*mailCache, error) {
	version, err := st.DataVersion(ctx)
	if err != nil {
		return nil, err
	}
	names, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, err
	}
	key := strings.Join(names, "\x00")
	s.mailMu.Lock()
	c := s.mailCache
	s.mailMu.Unlock()
	if c != nil && c.set == a.set && c.version == version && c.accounts == key {
		return c, nil
	}
	hide, threads, of, err := a.computeMail(ctx, st)
	if err != nil {
		return nil, err
	}
	c = &mailCache{set: a.set, version: version, accounts: key, hide: hide, threads: threads, of: of, counts: map[string]int{}}
	s.mailMu.Lock()
	s.mailCache = c
	s.mailMu.Unlock()
	return c, nil
}

func (a *Access) computeMail(ctx context.Context, st *store.Store) (*store.Hide, map[int64]bool, map[int64][]int, error) {
	accts, err := a.k.Visible(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	names := make([]string, 0, len(accts))
	for _, ac := range accts {
		names = append(names, ac.Name)
	}
	bySender := false
	for _, p := range a.set.Projects {
		bySender = bySender || len(p.Senders) > 0 || len(p.Domains) > 0
	}
	if bySender {
		for _, ac := range accts {
			trusted := ac.TrustedAuthServ
			err := st.FillAuthentic(ctx, ac.Name, trusted, func(hs []store.Header, from string) bool {
				var ar []string
				for _, h := range hs {
					if strings.EqualFold(h.Name, "Authentication-Results") {
						ar = append(ar, h.Value)
					}
				}
				_, domain, _ := strings.Cut(from, "@")
				return authres.Authenticated(ar, trusted, domain)
			})
			if err != nil {
				return nil, nil, nil, err
			}
		}
	}
	of := map[int64][]int{}
	for i := range a.set.Projects {
		threads, err := st.RouteThreads(ctx, MailRoute(&a.set.Projects[i], names), names)
		if err != nil {
			return nil, nil, nil, err
		}
		for t := range threads {
			of[t] = append(of[t], i)
		}
	}
	h := &store.Hide{Only: !a.set.Outside()}
	set := map[int64]bool{}
	for t, ps := range of {
		// Outside open: list the kept threads. Outside closed: list the shown ones.
		if a.set.Allows(ps) == h.Only {
			set[t] = true
		}
	}
	ids := make([]int64, 0, len(set))
	for t := range set {
		ids = append(ids, t)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b, _ := json.Marshal(ids)
	h.Threads = string(b)
	return h, set, of, nil
}

// MailRoute is a project's mail routes; a folder route starting with an account's name and
// a slash names that account's folder.
func MailRoute(p *projects.Project, accounts []string) *store.MailRoute {
	r := &store.MailRoute{Senders: p.Senders, Domains: p.Domains, Subjects: p.Subjects}
	for _, f := range p.Folders {
		fr := store.FolderRoute{Folder: f}
		if acct, rest, ok := strings.Cut(f, "/"); ok && contains(accounts, acct) {
			fr = store.FolderRoute{Account: acct, Folder: rest}
		}
		r.Folders = append(r.Folders, fr)
	}
	for _, t := range p.Ties {
		if id, ok := strings.CutPrefix(t, "mid:"); ok {
			r.MessageIDs = append(r.MessageIDs, id)
		}
	}
	return r
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keepsThread reports whether the thread is kept from agents.
func (a *Access) KeepsThread(ctx context.Context, st *store.Store, thread int64) (bool, error) {
	h, err := a.Mail(ctx, st)
	if err != nil || h == nil {
		return false, err
	}
	return h.Keeps(thread, a.threads), nil
}

// leftOut counts the kept messages of a scope (accounts, a folder or "") — never of a query's
// words, so that the count cannot tell whether a kept message holds a word.
func (a *Access) LeftOut(ctx context.Context, st *store.Store, accounts []string, folder string) (int, error) {
	h, err := a.Mail(ctx, st)
	if err != nil || h == nil {
		return 0, err
	}
	key := strings.Join(accounts, "\x00") + "\x01" + folder
	if accounts == nil {
		key = "\x02" + folder // nil is every account; an empty list is none
	}
	a.k.mailMu.Lock()
	n, ok := a.cache.counts[key]
	a.k.mailMu.Unlock()
	if ok {
		return n, nil
	}
	inv := &store.Hide{Only: !h.Only, Threads: h.Threads}
	n, err = st.Count(ctx, &store.Filter{Accounts: accounts, Folder: folder, Hide: inv})
	if err != nil {
		return 0, err
	}
	a.k.mailMu.Lock()
	a.cache.counts[key] = n
	a.k.mailMu.Unlock()
	return n, nil
}

// keeps reports whether an event, task, contact or note is kept from agents.
func (a *Access) Keeps(t projects.Thing) bool { return a.Active() && a.set.Keeps(t) }

// keepsCollection reports whether a calendar, task list or address book is kept as a whole.
func (a *Access) KeepsCollection(kind projects.Kind, c *store.Collection) bool {
	return a.Active() && a.set.KeepsCollection(kind, c.Account, c.Name, c.URL)
}

// refuseWrite is the refusal of a write that would put something where agents may not
// write: into a closed project, or outside projects while those are closed. nil: allowed.
func (a *Access) RefuseWrite(what string, t projects.Thing) error {
	if !a.Keeps(t) {
		return nil
	}
	if len(a.set.Of(t)) == 0 {
		return errors.New("postern will not write " + what + " outside the person's projects: things in no project are closed to agents; the person can open them ([projects] outside = true in projects.toml) or route it to an open project")
	}
	return errors.New("postern will not write " + what + " into a project the person has not opened to agents; the person can open it (postern project open ID)")
}

// keepsNote reports whether a note (root: its notes folder; rel: its path inside) is kept.
func (a *Access) KeepsNote(root, rel, title string) bool {
	if !a.Active() {
		return false
	}
	a.notesOnce.Do(func() {
		if cfg, err := a.k.Config.Get(); err == nil {
			roots, _ := cfg.NotesFolders()
			a.noteFolders = notes.Folders(roots)
		}
	})
	id := ""
	for _, f := range a.noteFolders {
		if f.Root == root {
			id = f.ID(rel)
		}
	}
	return a.Keeps(projects.Thing{Kind: projects.Note, Collection: root, Path: rel, ID: id})
}

// refuseNoteWrite refuses a new note in relFolder of root when it would land in a closed
// project (or outside projects while those are closed).
func (a *Access) RefuseNoteWrite(root, relFolder string) error {
	p := strings.Trim(relFolder, "/")
	if p != "" {
		p += "/"
	}
	return a.RefuseWrite("a note", projects.Thing{Kind: projects.Note, Collection: root, Path: p + "new note"})
}

// refuseMail refuses a draft or a message to send that would write into a closed project:
// one answering or forwarding a message of thread (0 for a new message) keeps to that
// thread's projects, and one to a project's client (an address of its senders or domains)
// belongs to that project too. nil: allowed.
func (a *Access) RefuseMail(ctx context.Context, st *store.Store, thread int64, recipients []string) error {
	if !a.Active() {
		return nil
	}
	if _, err := a.Mail(ctx, st); err != nil {
		return err
	}
	var of []int
	if thread != 0 {
		of = append(of, a.of[thread]...)
	}
	for _, r := range recipients {
		of = append(of, a.set.Of(projects.Thing{Kind: projects.Contact, Emails: []string{r}})...)
	}
	if a.set.Allows(of) {
		return nil
	}
	if len(of) == 0 {
		return errors.New("postern will not write a message outside the person's projects: things in no project are closed to agents; the person can open them ([projects] outside = true in projects.toml)")
	}
	return errors.New("postern will not write a message into a project the person has not opened to agents (it answers one of its messages or goes to one of its people); the person can open it (postern project open ID)")
}

// keepsBackup reports whether a backup of a deleted message is kept: by its thread while
// the message is still stored (in Trash, say), else by the project routes its saved
// envelope meets. Its sender cannot be authenticated any more, so a sender route counts
// without that: a backup is the person's, and hiding one too many is the safe side.
func (a *Access) KeepsBackup(ctx context.Context, st *store.Store, b *store.Backup) (bool, error) {
	h, err := a.Mail(ctx, st)
	if err != nil || h == nil {
		return false, err
	}
	if b.MessageID != "" {
		threads, err := st.RouteThreads(ctx, &store.MailRoute{MessageIDs: []string{b.MessageID}}, []string{b.Account})
		if err != nil {
			return false, err
		}
		for t := range threads {
			return h.Keeps(t, a.threads), nil
		}
	}
	var of []int
	subject := " " + strings.Join(store.Words(b.Subject), " ") + " "
	from := b.From
	if i := strings.LastIndex(from, "<"); i >= 0 {
		from = strings.TrimSuffix(from[i+1:], ">")
	}
	for i := range a.set.Projects {
		p := &a.set.Projects[i]
		in := contains(p.Ties, projects.Tie("mid", b.MessageID)) ||
			p.Holds(projects.Thing{Kind: projects.Contact, Emails: []string{from}})
		for _, w := range p.Subjects {
			if ws := store.Words(w); len(ws) > 0 && strings.Contains(subject, " "+strings.Join(ws, " ")+" ") {
				in = true
			}
		}
		for _, f := range p.Folders {
			in = in || projects.NameMatches(f, b.Account, b.Folder)
		}
		if in {
			of = append(of, i)
		}
	}
	return !a.set.Allows(of), nil
}

// refuseKeptItems refuses to act again on an action's messages when some are now kept.
func (s *Kit) RefuseKeptItems(ctx context.Context, st *store.Store, items []store.ActionItem) error {
	acc, err := s.Access(ctx)
	if err != nil || !acc.Active() {
		return err
	}
	h, err := acc.Mail(ctx, st)
	if err != nil || h == nil {
		return err
	}
	var ids []int64
	for _, it := range items {
		ids = append(ids, it.Message)
	}
	threads, err := st.MessageThreads(ctx, ids)
	if err != nil {
		return err
	}
	for _, t := range threads {
		if h.Keeps(t, acc.threads) {
			return errors.New("postern will not undo this action: some of its messages now belong to a project the person has not opened to agents; the person can open it (postern project open ID) or undo it with postern undo")
		}
	}
	return nil
}

// keepsFolder reports whether a mail folder is a route of a project not open to agents: its
// name belongs to that project, and it is left out of folder lists (its messages are counted
// with the others kept).
func (a *Access) KeepsFolder(account, name string) bool {
	if !a.Active() {
		return false
	}
	var of []int
	for i, p := range a.set.Projects {
		for _, f := range p.Folders {
			if projects.NameMatches(f, account, name) {
				of = append(of, i)
				break
			}
		}
	}
	return len(of) > 0 && !a.set.Allows(of)
}

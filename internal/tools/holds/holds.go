// Package holds says what each route of a project holds now, for the person (postern project
// show and list), counted from the local store as the tools decide what a project keeps.
package holds

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/emersion/go-vcard"

	"github.com/postern-mcp/postern/internal/authres"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// What each route of a project holds now, for the person (postern project show and list):
// so that a route that silently holds nothing — a domains route over mail no trusted server
// authenticated — is seen, with what to do instead. Counted from the local store, as the
// tools decide what a project keeps.

// RouteHold is what one route of a project holds now.
type RouteHold struct {
	Route string // its key in projects.toml: senders, domains, subjects, folders, calendars, task_lists, address_books, note_folders, ties
	Value string // the one value of that key it is (a tie: the whole tie)
	// What it holds: messages (whole threads), events, tasks, contacts and notes.
	Messages, Events, Tasks, Contacts, Notes int
	// Unauthenticated (senders and domains): the stored messages from its senders it does not
	// hold because no trusted receiving server authenticated them (or found them forged).
	Unauthenticated int
	// Warning says why the route holds no mail and what to do instead ("" when it holds some, or
	// when there is no mail from its senders at all).
	Warning string
}

// Kinds are the kinds of thing the route can hold, in the order they are told.
func (r *RouteHold) Kinds() []string {
	switch r.Route {
	case "senders", "domains":
		return []string{"messages", "contacts"}
	case "subjects", "folders":
		return []string{"messages"}
	case "calendars":
		return []string{"events", "tasks"}
	case "task_lists":
		return []string{"tasks"}
	case "address_books":
		return []string{"contacts"}
	case "note_folders":
		return []string{"notes"}
	}
	if kind, _, _ := strings.Cut(r.Value, ":"); kind != "" { // a tie
		return map[string][]string{"mid": {"messages"}, "event": {"events"}, "task": {"tasks"}, "contact": {"contacts"}, "note": {"notes"}}[kind]
	}
	return nil
}

// Count is how many things of kind (as Kinds names them) the route holds.
func (r *RouteHold) Count(kind string) int {
	return map[string]int{"messages": r.Messages, "events": r.Events, "tasks": r.Tasks, "contacts": r.Contacts, "notes": r.Notes}[kind]
}

// Of says, for each route and tie of p (one entry per value), what it holds in the local
// store now, read through the view ctx carries (tools.Service.ProjectHolds opens it).
func Of(ctx context.Context, k *kit.Kit, p *projects.Project) ([]RouteHold, error) {
	st, err := k.Store(ctx)
	if err != nil {
		return nil, err
	}
	var accts []config.Account
	var noteRoots []string
	if cfg, err := k.Config.Get(); err == nil {
		accts = cfg.Accounts
		noteRoots, _ = cfg.NotesFolders()
	}
	var names []string
	for _, a := range accts {
		names = append(names, a.Name)
	}
	if len(p.Senders) > 0 || len(p.Domains) > 0 {
		for _, a := range accts {
			if err := fillAuthentic(ctx, st, a); err != nil {
				return nil, err
			}
		}
	}
	things, err := storedThings(ctx, st, noteRoots)
	if err != nil {
		return nil, err
	}
	var out []RouteHold
	add := func(route, value string, sub projects.Project) error {
		h := RouteHold{Route: route, Value: value}
		threads, err := st.RouteThreads(ctx, kit.MailRoute(&sub, names), nil)
		if err != nil {
			return err
		}
		if h.Messages, err = st.ThreadsSize(ctx, threads); err != nil {
			return err
		}
		for _, t := range things {
			if !sub.Holds(t) {
				continue
			}
			switch t.Kind {
			case projects.Event:
				h.Events++
			case projects.Task:
				h.Tasks++
			case projects.Contact:
				h.Contacts++
			case projects.Note:
				h.Notes++
			}
		}
		if route == "senders" || route == "domains" {
			if err := senderWarning(ctx, st, accts, &h, sub.Senders, sub.Domains); err != nil {
				return err
			}
		}
		out = append(out, h)
		return nil
	}
	for _, r := range []struct {
		route  string
		values []string
		one    func(string) projects.Project
	}{
		{"senders", p.Senders, func(v string) projects.Project { return projects.Project{Senders: []string{v}} }},
		{"domains", p.Domains, func(v string) projects.Project { return projects.Project{Domains: []string{v}} }},
		{"subjects", p.Subjects, func(v string) projects.Project { return projects.Project{Subjects: []string{v}} }},
		{"folders", p.Folders, func(v string) projects.Project { return projects.Project{Folders: []string{v}} }},
		{"calendars", p.Calendars, func(v string) projects.Project { return projects.Project{Calendars: []string{v}} }},
		{"task_lists", p.TaskLists, func(v string) projects.Project { return projects.Project{TaskLists: []string{v}} }},
		{"address_books", p.AddressBooks, func(v string) projects.Project { return projects.Project{AddressBooks: []string{v}} }},
		{"note_folders", p.NoteFolders, func(v string) projects.Project { return projects.Project{NoteFolders: []string{v}} }},
		{"ties", p.Ties, func(v string) projects.Project { return projects.Project{Ties: []string{v}} }},
	} {
		for _, v := range r.values {
			if err := add(r.route, v, r.one(v)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// fillAuthentic brings the store's record of which senders are authenticated up to date with
// the account's trusted servers, as the tools do before they route mail by sender.
func fillAuthentic(ctx context.Context, st *store.Store, a config.Account) error {
	trusted := a.TrustedAuthServ
	return st.FillAuthentic(ctx, a.Name, trusted, func(hs []store.Header, from string) bool {
		var ar []string
		for _, h := range hs {
			if strings.EqualFold(h.Name, "Authentication-Results") {
				ar = append(ar, h.Value)
			}
		}
		_, domain, _ := strings.Cut(from, "@")
		return authres.Authenticated(ar, trusted, domain)
	})
}

// storedThings are the stored events, tasks, contacts and notes, as the routes match them.
func storedThings(ctx context.Context, st *store.Store, noteRoots []string) ([]projects.Thing, error) {
	var out []projects.Thing
	for _, k := range []struct {
		coll string
		objs []string
	}{{store.KindCalendar, []string{store.ObjectEvent, store.ObjectTodo}}, {store.KindTasks, []string{store.ObjectTodo}}, {store.KindAddressBook, []string{store.ObjectContact}}} {
		cs, err := st.Collections(ctx, nil, k.coll)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			for _, kind := range k.objs {
				objs, err := st.Objects(ctx, []int64{c.ID}, kind, time.Time{}, time.Time{})
				if err != nil {
					return nil, err
				}
				for _, o := range objs {
					t := projects.Thing{Account: c.Account, Collection: c.Name, URL: c.URL, UID: o.UID}
					switch kind {
					case store.ObjectEvent:
						t.Kind = projects.Event
					case store.ObjectTodo:
						t.Kind = projects.Task
					default:
						t.Kind = projects.Contact
						if card, ok := calendars.ContactCard(o); ok {
							for _, f := range card[vcard.FieldEmail] {
								if e := strings.TrimSpace(strings.TrimPrefix(f.Value, "mailto:")); e != "" {
									t.Emails = append(t.Emails, e)
								}
							}
						}
					}
					out = append(out, t)
				}
			}
		}
	}
	folders := notes.Folders(noteRoots)
	if len(folders) == 0 {
		return out, nil
	}
	scopes := make([]store.NoteScope, len(folders))
	for i, f := range folders {
		scopes[i] = store.NoteScope{Root: f.Root}
	}
	heads, err := st.NoteHeads(ctx, scopes)
	if err != nil {
		return nil, err
	}
	for _, n := range heads {
		for _, f := range folders {
			if f.Root == n.Root {
				out = append(out, projects.Thing{Kind: projects.Note, Collection: n.Root, Path: n.Path, ID: f.ID(n.Path)})
			}
		}
	}
	return out, nil
}

// senderWarning counts the mail from the route's senders it does not hold for want of
// authentication and, when it holds none of it, says what to do instead.
func senderWarning(ctx context.Context, st *store.Store, accts []config.Account, h *RouteHold, senders, domains []string) error {
	all, authentic, err := st.SenderMail(ctx, senders, domains)
	if err != nil {
		return err
	}
	total, ok := 0, 0
	var accounts []string
	for name, n := range all {
		total += n
		ok += authentic[name]
		if n > authentic[name] {
			accounts = append(accounts, name)
		}
	}
	sort.Strings(accounts)
	h.Unauthenticated = total - ok
	if total == 0 || ok > 0 {
		return nil
	}
	var untrusting, advice []string
	for _, name := range accounts {
		var trusted []string
		for _, a := range accts {
			if a.Name == name {
				trusted = a.TrustedAuthServ
			}
		}
		if len(trusted) == 0 {
			untrusting = append(untrusting, name)
		}
		if id := receivingServer(ctx, st, name); id != "" && !hasID(trusted, id) {
			// account set replaces the whole list: the servers trusted already are kept.
			cmd := "postern account set " + name
			for _, t := range append(append([]string{}, trusted...), id) {
				cmd += " --trust-authserv " + t
			}
			advice = append(advice, cmd)
		}
	}
	what := "from " + strings.Join(append(append([]string{}, senders...), domains...), ", ")
	w := fmt.Sprintf("holds no message: none of the %d messages %s is authenticated by a receiving server you trust", total, what)
	if total == 1 {
		w = fmt.Sprintf("holds no message: the one message %s is not authenticated by a receiving server you trust", what)
	}
	if len(untrusting) > 0 {
		w += fmt.Sprintf(" (account %s has no trusted_authserv_ids)", strings.Join(untrusting, ", "))
	}
	w += ". "
	if len(advice) > 0 {
		w += "If the server that writes Authentication-Results at the top of your mail is your provider's, trust it (trusted_authserv_ids): " + strings.Join(advice, "; ")
	} else {
		w += "Set trusted_authserv_ids (postern account set ACCOUNT --trust-authserv ID) to the server that writes Authentication-Results on your mail, if it writes any"
	}
	w += "; or route this mail by folders, subjects or ties (postern project tie) instead."
	h.Warning = w
	return nil
}

// receivingServer is the authserv-id at the top of most of the account's recent mail: the
// receiving server that writes Authentication-Results there, when one does. A sender can
// write the field too, but not above the receiving server's own, and not on most messages.
func receivingServer(ctx context.Context, st *store.Store, account string) string {
	values, err := st.FirstHeaders(ctx, account, "Authentication-Results", 200)
	if err != nil || len(values) == 0 {
		return ""
	}
	count := map[string]int{}
	for _, v := range values {
		if id, ok := authres.ServID(v); ok && hostName(id) {
			count[strings.ToLower(id)]++
		}
	}
	best, n := "", 0
	for id, c := range count {
		if c > n || (c == n && id < best) {
			best, n = id, c
		}
	}
	if n*2 <= len(values) {
		return "" // no one server on most of it
	}
	return best
}

// hostName reports whether id reads as a host name (letters, digits, dots and hyphens), the
// only kind of authserv-id worth suggesting.
func hostName(id string) bool {
	if id == "" || len(id) > 253 {
		return false
	}
	for _, c := range id {
		if !(c == '.' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func hasID(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(x), s) {
			return true
		}
	}
	return false
}

package projects

import (
	"strings"
)

// Kind is the kind of a thing matched against the routes.
type Kind int

// The kinds of things a project holds besides mail (mail is matched in the store, by
// thread: store.RouteThreads).
const (
	Event Kind = iota + 1
	Task
	Contact
	Note
)

// Thing is one event, task, contact or note, as matching needs it.
type Thing struct {
	Kind    Kind
	Account string
	// Collection and URL: the calendar's, task list's or address book's name and address;
	// for a note, the notes folder's path.
	Collection, URL string
	UID             string   // an event's, task's or contact's UID
	Emails          []string // a contact's addresses
	Path            string   // a note's path inside its notes folder, slash-separated
	ID              string   // a note's id as the tools give it (its folder's name, /, Path)
}

// Of returns the indexes (into s.Projects) of the projects t belongs to.
func (s *Set) Of(t Thing) []int {
	if s == nil {
		return nil
	}
	var out []int
	for i := range s.Projects {
		if s.Projects[i].holds(t) {
			out = append(out, i)
		}
	}
	return out
}

// Keeps reports whether t is kept from agents.
func (s *Set) Keeps(t Thing) bool { return s.Active() && !s.Allows(s.Of(t)) }

// KeepsCollection reports whether a whole collection (a calendar, a task list, an address
// book) is kept from agents: it is routed to a closed project, or to none while things
// outside projects are closed. Its objects may still be tied elsewhere: Keeps decides each.
func (s *Set) KeepsCollection(kind Kind, account, name, url string) bool {
	if !s.Active() {
		return false
	}
	var of []int
	for i := range s.Projects {
		if s.Projects[i].holdsCollection(kind, account, name, url) {
			of = append(of, i)
		}
	}
	return !s.Allows(of)
}

func (p *Project) holds(t Thing) bool {
	switch t.Kind {
	case Event:
		return p.holdsCollection(t.Kind, t.Account, t.Collection, t.URL) || p.tied("event", t.UID)
	case Task:
		return p.holdsCollection(t.Kind, t.Account, t.Collection, t.URL) || p.tied("task", t.UID)
	case Contact:
		if p.holdsCollection(t.Kind, t.Account, t.Collection, t.URL) || p.tied("contact", t.UID) {
			return true
		}
		// A project's client is in it: a contact with one of its senders' addresses, or
		// an address of its domains. (The person's own address book: no forgery to fear.)
		for _, e := range t.Emails {
			if p.hasSender(e) {
				return true
			}
		}
		return false
	case Note:
		return p.holdsNote(t.Path) || p.tied("note", t.ID)
	}
	return false
}

func (p *Project) holdsCollection(kind Kind, account, name, url string) bool {
	var routes []string
	switch kind {
	case Event:
		routes = p.Calendars
	case Task:
		routes = append(append(routes, p.TaskLists...), p.Calendars...)
	case Contact:
		routes = p.AddressBooks
	default:
		return false
	}
	for _, r := range routes {
		if NameMatches(r, account, name) || (url != "" && strings.TrimSuffix(r, "/") == strings.TrimSuffix(url, "/")) {
			return true
		}
	}
	return false
}

// NameMatches reports whether a route ("account/name" or "name", case ignored) names the
// collection or folder name of account.
func NameMatches(route, account, name string) bool {
	route = strings.TrimSpace(route)
	if strings.EqualFold(route, name) {
		return true
	}
	a, n, ok := strings.Cut(route, "/")
	return ok && a == account && strings.EqualFold(n, name)
}

func (p *Project) tied(kind, ref string) bool {
	if ref == "" {
		return false
	}
	want := Tie(kind, strings.Trim(ref, "/"))
	for _, t := range p.Ties {
		if t == want || (kind == "note" && strings.EqualFold(t, want)) {
			return true
		}
	}
	return false
}

// hasSender reports whether address is one of the project's senders or of its domains.
func (p *Project) hasSender(address string) bool {
	address = strings.ToLower(strings.TrimSpace(address))
	for _, s := range p.Senders {
		if strings.EqualFold(strings.TrimSpace(s), address) {
			return true
		}
	}
	_, domain, ok := strings.Cut(address, "@")
	if !ok {
		return false
	}
	for _, d := range p.Domains {
		d = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		if d != "" && (domain == d || strings.HasSuffix(domain, "."+d)) {
			return true
		}
	}
	return false
}

func (p *Project) holdsNote(path string) bool {
	path = strings.Trim(path, "/")
	if path == "" {
		return false
	}
	if p.tied("note", path) {
		return true
	}
	lp := strings.ToLower(path)
	for _, f := range p.NoteFolders {
		f = strings.ToLower(strings.Trim(strings.TrimSpace(f), "/"))
		if f != "" && strings.HasPrefix(lp, f+"/") {
			return true
		}
	}
	return false
}

// HoldsNoteFolder reports whether a new note in folder (slash path inside a notes folder,
// "" for its top) would belong to the project.
func (p *Project) HoldsNoteFolder(folder string) bool {
	return p.holdsNote(strings.Trim(folder, "/") + "/x")
}

// Holds reports whether the project holds t.
func (p *Project) Holds(t Thing) bool { return p.holds(t) }

package projects

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/store"
)

// LoadOne reads the projects file at path and finds id in it; a missing file or an unknown
// id is an error saying what to do, naming the nearest ids.
func LoadOne(path, id string) (string, *Set, *Project, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return path, nil, nil, fmt.Errorf("there is no projects file %s yet; write one with a [[project]] entry (docs/projects.md)", path)
	}
	s, err := Load(path)
	if err != nil {
		return path, nil, nil, err
	}
	p := s.Find(id)
	if p == nil {
		msg := fmt.Sprintf("there is no project %q in %s", id, path)
		if near := s.Nearest(id); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, " or ") + "?"
		} else if len(s.Projects) == 0 {
			msg += "; it has no [[project]] entry yet (docs/projects.md)"
		} else {
			msg += "; postern project list shows them"
		}
		return path, s, nil, errors.New(msg)
	}
	return path, s, p, nil
}

// Route is one key of a project in projects.toml and its values.
type Route struct {
	Key    string
	Values []string
}

// Routes are p's routes and ties, by their key in projects.toml, in the file's order.
func (p *Project) Routes() []Route {
	return []Route{
		{"senders", p.Senders}, {"domains", p.Domains}, {"subjects", p.Subjects}, {"folders", p.Folders},
		{"calendars", p.Calendars}, {"task_lists", p.TaskLists}, {"address_books", p.AddressBooks},
		{"note_folders", p.NoteFolders}, {"ties", p.Ties},
	}
}

// RouteCount is how many routes p has (its ties not counted).
func (p *Project) RouteCount() int {
	return len(p.Senders) + len(p.Domains) + len(p.Subjects) + len(p.Folders) + len(p.Calendars) +
		len(p.TaskLists) + len(p.AddressBooks) + len(p.NoteFolders)
}

// ResolveTie turns what the person typed into a tie: kind:ref as written (mid: without
// its angle brackets, note: without leading or trailing slashes), or a postern message
// id read from the store at storePath as the mid: of its Message-ID. from says where a mid came from.
func ResolveTie(ref, storePath string) (tie, from string, err error) {
	ref = strings.TrimSpace(ref)
	if kind, rest, ok := strings.Cut(ref, ":"); ok {
		switch kind {
		case "note":
			rest = strings.Trim(rest, "/")
		case "event", "task", "contact":
			rest = strings.TrimSpace(rest)
		}
		return Tie(kind, rest), "", nil
	}
	id, ok := store.DecodeID(ref)
	if !ok {
		return "", "", fmt.Errorf("%q is not something to tie; write mid:<Message-ID>, a message id as "+generated.ToolMailList+" gives it (m…), event:UID, task:UID, contact:UID or note:PATH", ref)
	}
	if _, err := os.Stat(storePath); err != nil {
		return "", "", fmt.Errorf("there is no local store %s to read message %s from (postern sync makes it); tie the message by its Message-ID instead: mid:<…>", storePath, ref)
	}
	st, err := store.Open(storePath)
	if err != nil {
		return "", "", err
	}
	defer st.Close()
	row, err := st.Message(context.Background(), id, nil)
	if errors.Is(err, store.ErrNoMessage) {
		return "", "", fmt.Errorf("there is no message %s in the store %s; message ids are as "+generated.ToolMailList+" gives them, or tie it by its Message-ID: mid:<…>", ref, storePath)
	}
	if err != nil {
		return "", "", err
	}
	if strings.TrimSpace(row.MessageID) == "" {
		return "", "", fmt.Errorf("message %s has no Message-ID, so it cannot be tied; route it by its folder, sender or subject instead (docs/projects.md)", ref)
	}
	return Tie("mid", row.MessageID), " (message " + ref + ")", nil
}

// Package projects owns the person's projects file (projects.toml beside the configuration):
// which projects exist, what belongs to each (its routes), and whether each is open to agents.
// It decides, for one thing at a time, whether an agent may see or write it: a project is
// closed until the person opens it, a thing in two projects reaches an agent only when both
// are open, and things in no project follow one setting ([projects] outside). It reads the
// file again at every call (Watcher) and never guesses: a file it cannot read closes
// everything until it is fixed. It never reads mail itself; the store and the tools ask it.
package projects

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/postern-mcp/postern/internal/search"
)

// File is the projects file's name, beside config.toml.
const File = "projects.toml"

// Path is the projects file of the configuration at configPath.
func Path(configPath string) string { return filepath.Join(filepath.Dir(configPath), File) }

// Set is a read projects file.
type Set struct {
	Settings Settings  `toml:"projects"`
	Projects []Project `toml:"project"`
}

// Settings is the file's [projects] table.
type Settings struct {
	// Outside says whether things in no project reach agents; true unless the person says
	// false.
	Outside *bool `toml:"outside"`
}

// Project is one [[project]] entry.
type Project struct {
	ID   string `toml:"id"`
	Name string `toml:"name"`
	// Open: the person opened it to agents. Closed unless said.
	Open bool `toml:"open"`
	// Senders and Domains: a message from one of these addresses, or from an address of
	// one of these domains (or their subdomains), belongs — only when its sender is
	// authenticated (a trusted receiving server said DMARC or aligned DKIM passed).
	Senders []string `toml:"senders"`
	Domains []string `toml:"domains"`
	// Subjects: a message whose subject holds one of these words or phrases belongs.
	Subjects []string `toml:"subjects"`
	// Folders: "account/folder" or "folder" (any account); the messages in it belong.
	Folders []string `toml:"folders"`
	// Calendars, TaskLists and AddressBooks name collections ("account/name" or "name");
	// everything in them belongs.
	Calendars    []string `toml:"calendars"`
	TaskLists    []string `toml:"task_lists"`
	AddressBooks []string `toml:"address_books"`
	// NoteFolders: folders inside a notes folder ("clients/acme"); the notes in them belong.
	NoteFolders []string `toml:"note_folders"`
	// Ties: things tied by hand (postern project tie): mid:<Message-ID>, event:<UID>,
	// task:<UID>, contact:<UID>, note:<path>.
	Ties []string `toml:"ties"`
}

// Tie kinds, as a tie is written before its colon.
var tieKinds = []string{"mid", "event", "task", "contact", "note"}

// Outside reports whether things in no project reach agents.
func (s *Set) Outside() bool { return s == nil || s.Settings.Outside == nil || *s.Settings.Outside }

// Active reports whether anything is kept from agents at all: a project exists or things
// outside projects are closed. When not, no tool needs to look further.
func (s *Set) Active() bool { return s != nil && (len(s.Projects) > 0 || !s.Outside()) }

// Find returns the project id (case-insensitive) or nil.
func (s *Set) Find(id string) *Project {
	for i := range s.Projects {
		if strings.EqualFold(s.Projects[i].ID, id) {
			return &s.Projects[i]
		}
	}
	return nil
}

// Nearest returns the project ids nearest to id (search.Nearest).
func (s *Set) Nearest(id string) []string { return search.Nearest(id, s.IDs()) }

// Allows reports whether a thing that belongs to the projects at the indexes in of (into
// s.Projects) may reach an agent: all of them open, or none of them and outside open.
func (s *Set) Allows(of []int) bool {
	if len(of) == 0 {
		return s.Outside()
	}
	for _, i := range of {
		if !s.Projects[i].Open {
			return false
		}
	}
	return true
}

// Load reads the projects file at path. A missing file is no projects, things outside
// open. An unreadable or invalid file is an error that says what to fix.
func Load(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Set{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the projects file %s (%v); until it can be read, nothing is shown to agents", path, err)
	}
	return Parse(path, b)
}

// Parse reads a projects file's text (path names it in errors).
func Parse(path string, b []byte) (*Set, error) {
	var s Set
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&s)
	if err != nil {
		return nil, fmt.Errorf("the projects file %s is not valid TOML (%v); fix it by hand — until then nothing is shown to agents", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("the projects file %s has an unknown setting %q (a project takes %s); fix it by hand — until then nothing is shown to agents", path, und[0].String(), strings.Join(projectKeys(), ", "))
	}
	seen := map[string]bool{}
	for i := range s.Projects {
		p := &s.Projects[i]
		if !goodID(p.ID) {
			return nil, fmt.Errorf("project %d of %s has the id %q; an id is 1 to 64 letters, digits, - and _ (fix it by hand — until then nothing is shown to agents)", i+1, path, p.ID)
		}
		k := strings.ToLower(p.ID)
		if seen[k] {
			return nil, fmt.Errorf("the projects file %s has two projects with the id %q; give one another id — until then nothing is shown to agents", path, p.ID)
		}
		seen[k] = true
		for _, t := range p.Ties {
			if err := CheckTie(t); err != nil {
				return nil, fmt.Errorf("project %q of %s: %v", p.ID, path, err)
			}
		}
		for _, d := range p.Domains {
			if strings.Contains(d, "@") || strings.TrimSpace(d) == "" {
				return nil, fmt.Errorf("project %q of %s: %q is not a domain (write example.com; whole addresses go in senders)", p.ID, path, d)
			}
		}
	}
	return &s, nil
}

func projectKeys() []string {
	return []string{"id", "name", "open", "senders", "domains", "subjects", "folders", "calendars", "task_lists", "address_books", "note_folders", "ties"}
}

// CheckTie says what is wrong with a tie, or nil.
func CheckTie(t string) error {
	kind, ref, ok := strings.Cut(t, ":")
	if !ok || ref == "" || !contains(tieKinds, kind) {
		return fmt.Errorf("%q is not a tie; write mid:<Message-ID>, event:<UID>, task:<UID>, contact:<UID> or note:<path>", t)
	}
	for _, r := range t {
		if unicode.IsControl(r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) {
			return fmt.Errorf("the tie %q holds a line break or a control character", t)
		}
	}
	return nil
}

// Tie returns the tie of kind for ref: mid:<id> without its angle brackets.
func Tie(kind, ref string) string {
	if kind == "mid" {
		ref = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(ref), "<"), ">")
	}
	return kind + ":" + ref
}

func goodID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IDs returns the projects' ids, sorted.
func (s *Set) IDs() []string {
	var out []string
	for _, p := range s.Projects {
		out = append(out, p.ID)
	}
	sort.Strings(out)
	return out
}

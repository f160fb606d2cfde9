package integrations

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Record is what setup was asked for one host: doctor checks the entry against it and repair
// restores it.
type Record struct {
	Host     string    `json:"host"`
	Scope    string    `json:"scope"`             // user or project
	Project  string    `json:"project,omitempty"` // the project folder, for scope project
	Name     string    `json:"name"`
	Preset   string    `json:"preset,omitempty"`
	Scopes   []string  `json:"scopes,omitempty"`
	Accounts []string  `json:"accounts,omitempty"`
	Config   string    `json:"config,omitempty"`
	Binary   string    `json:"binary,omitempty"`
	HTTP     string    `json:"http,omitempty"` // the URL of a URL entry (never its token)
	At       time.Time `json:"at"`
}

// RecordPath is where the records of setup are kept: next to the configuration file.
func RecordPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "integrations.json")
}

// LoadRecords reads the records at path; a missing file is no records.
func LoadRecords(path string) ([]Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rs []Record
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v); run postern integrations setup HOST again to write it anew", path, err)
	}
	return rs, nil
}

// NewRecord is the record of a setup of h with o; preset is "" for a grant given with --scopes
// (or none). project is the project folder, kept only for scope project.
func NewRecord(h *Host, o *Options, preset, project string, at time.Time) Record {
	r := Record{Host: h.ID, Scope: o.Scope, Name: o.Name, Preset: preset, Accounts: o.Accounts, Config: o.Config, Binary: o.Binary, HTTP: o.HTTP, At: at.UTC()}
	if o.HTTP != "" { // a URL entry runs nothing: the grant is the server's
		r.Binary, r.Preset, r.Accounts = "", "", nil
		return r
	}
	if o.Scopes != "" {
		r.Scopes = strings.Split(o.Scopes, ",")
	}
	if o.Scope == "project" {
		r.Project = project
	}
	return r
}

// Options are the choices the record holds, as setup takes them.
func (r Record) Options() *Options {
	return &Options{Name: r.Name, Scope: r.Scope, Scopes: strings.Join(r.Scopes, ","), Accounts: r.Accounts, Config: r.Config, Binary: r.Binary, HTTP: r.HTTP}
}

// Is reports whether r is the registration of host id under scope and name, in project when
// the scope is project.
func (r Record) Is(id, scope, name, project string) bool {
	return r.Host == id && r.Scope == scope && r.Name == name && (scope != "project" || r.Project == project)
}

// PutRecord replaces the record of the same registration in the file at path, or adds it. A
// record that asks for the same as the one kept (whenever that was) leaves the file as it is.
func PutRecord(path string, rec Record) error {
	rs, err := LoadRecords(path)
	if err != nil {
		return err
	}
	out := []Record{rec}
	for _, r := range rs {
		if !r.Is(rec.Host, rec.Scope, rec.Name, rec.Project) {
			out = append(out, r)
		} else if r.same(rec) {
			return nil
		}
	}
	return saveRecords(path, out)
}

// same reports whether two records ask for the same, whenever they were made.
func (r Record) same(o Record) bool {
	r.At, o.At = time.Time{}, time.Time{}
	return r.Host == o.Host && r.Scope == o.Scope && r.Project == o.Project && r.Name == o.Name && r.Preset == o.Preset &&
		slices.Equal(r.Scopes, o.Scopes) && slices.Equal(r.Accounts, o.Accounts) && r.Config == o.Config && r.Binary == o.Binary && r.HTTP == o.HTTP
}

// DropRecord takes the record of a registration out of the file at path; none is no error.
func DropRecord(path, id, scope, name, project string) error {
	rs, err := LoadRecords(path)
	if err != nil {
		return err
	}
	var out []Record
	for _, r := range rs {
		if !r.Is(id, scope, name, project) {
			out = append(out, r)
		}
	}
	if len(out) == len(rs) {
		return nil
	}
	return saveRecords(path, out)
}

// saveRecords writes the records sorted by host, atomically: a temporary file beside the
// target, mode 0600, renamed over it, so that a reader sees the old list or the new one.
func saveRecords(path string, rs []Record) error {
	sortRecords(rs)
	if rs == nil {
		rs = []Record{}
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot make %s for the record of setup (%v); check its permissions", dir, err)
	}
	f, err := os.CreateTemp(dir, ".integrations-*.json")
	if err != nil {
		return fmt.Errorf("cannot write the record of setup in %s (%v); check its permissions", dir, err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	if err := f.Chmod(0o600); werr == nil {
		werr = err
	}
	if err := f.Sync(); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write the record of setup %s (%v); check the folder's permissions and free space", path, werr)
	}
	return nil
}

func sortRecords(rs []Record) {
	order := map[string]int{}
	for i, h := range Hosts() {
		order[h.ID] = i
	}
	slices.SortStableFunc(rs, func(a, b Record) int {
		return cmp.Or(cmp.Compare(order[a.Host], order[b.Host]), cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Project, b.Project), cmp.Compare(a.Name, b.Name))
	})
}

// OptionsFromEntry are the choices an entry carries in its own flags, for an entry written
// before setup kept records: its --scopes, --account and --config, with name, scope and
// binary from base.
func OptionsFromEntry(e Entry, base *Options) *Options {
	o := *base
	o.Scopes, o.Accounts, o.HTTP = "", nil, e.URL
	for i := 0; i+1 < len(e.Args); i++ {
		switch e.Args[i] {
		case "--scopes":
			o.Scopes = e.Args[i+1]
		case "--account":
			o.Accounts = append(o.Accounts, e.Args[i+1])
		case "--config":
			o.Config = e.Args[i+1]
		default:
			continue
		}
		i++
	}
	return &o
}

// Grant says in a few words what grant the options pass: the scopes, or that none are passed.
func (o *Options) Grant() string {
	var parts []string
	if o.Scopes != "" {
		parts = append(parts, "--scopes "+o.Scopes)
	} else {
		parts = append(parts, "no --scopes")
	}
	for _, a := range o.Accounts {
		parts = append(parts, "--account "+a)
	}
	return strings.Join(parts, " ")
}

// Describe says what the record asked for: the preset and scopes, and the accounts.
func (r Record) Describe() string {
	if r.HTTP != "" {
		return "the server at " + r.HTTP + " (its grant is the one postern mcp --http was started with)"
	}
	s := r.Options().Grant()
	if r.Preset != "" {
		s = "preset " + r.Preset + " (" + s + ")"
	}
	return s
}

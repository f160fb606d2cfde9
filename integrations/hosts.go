// Package integrations registers postern with agent hosts, checks the
// registration and removes it: the hosts come from catalog/hosts.yaml
// (generated.Hosts). A cli host is driven through its own command line; a
// file host has its configuration file edited in place with
// integrations/fileedit; a snippet host gets a block of JSON printed. A URL entry (setup
// --http) points a host at a running postern mcp --http with its bearer token, which this
// package writes where the host reads it and must never show (http.go).
package integrations

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/postern-mcp/postern/generated"
)

// DefaultName is the server's name in every host.
const DefaultName = "postern"

// Host is one agent host of the catalog.
type Host struct{ *generated.HostSpec }

// Hosts returns every host, in catalog order.
func Hosts() []*Host {
	out := make([]*Host, len(generated.Hosts))
	for i := range generated.Hosts {
		out[i] = &Host{&generated.Hosts[i]}
	}
	return out
}

// Find returns the host with id, or an error listing the known ones.
func Find(id string) (*Host, error) {
	var ids []string
	for _, h := range Hosts() {
		if h.ID == id {
			return h, nil
		}
		ids = append(ids, h.ID)
	}
	return nil, fmt.Errorf("there is no host %q; the hosts are %s (postern integrations list)", id, strings.Join(ids, ", "))
}

// Env is what the package reads of the machine, so that tests can give a
// throwaway home and PATH.
type Env struct {
	Home     string              // the home folder
	GOOS     string              // linux, darwin or windows
	Getenv   func(string) string // for %APPDATA% and friends
	LookPath func(string) (string, error)
	Project  string // the project folder, for --scope project (the working directory)
}

// DefaultEnv is the running machine's.
func DefaultEnv() (*Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("cannot find the home folder (%v); set HOME", err)
	}
	wd, _ := os.Getwd()
	return &Env{Home: home, GOOS: runtime.GOOS, Getenv: os.Getenv, LookPath: lookPath, Project: wd}, nil
}

// expand turns ~ and %VAR% into paths of e.
func (e *Env) expand(p string) string {
	if p == "~" {
		return e.Home
	}
	if strings.HasPrefix(p, "~/") {
		p = filepath.Join(e.Home, p[2:])
	}
	for {
		i := strings.Index(p, "%")
		if i < 0 {
			break
		}
		j := strings.Index(p[i+1:], "%")
		if j < 0 {
			break
		}
		name := p[i+1 : i+1+j]
		val := e.Getenv(name)
		if val == "" && name == "USERPROFILE" {
			val = e.Home
		}
		if val == "" && name == "APPDATA" {
			val = filepath.Join(e.Home, "AppData", "Roaming")
		}
		p = p[:i] + val + p[i+2+j:]
	}
	return filepath.FromSlash(strings.ReplaceAll(p, `\`, "/"))
}

// ConfigPath is the file where the host keeps its servers for scope.
func (h *Host) ConfigPath(e *Env, scope string) (string, error) {
	if scope == "project" {
		if h.ProjectConfig == "" {
			return "", fmt.Errorf("%s keeps servers per project only through its own command line", h.Name)
		}
		return filepath.Join(e.Project, filepath.FromSlash(h.ProjectConfig)), nil
	}
	p := h.Config[e.GOOS]
	if p == "" {
		return "", fmt.Errorf("%s has no configuration file postern knows of on %s", h.Name, e.GOOS)
	}
	p = e.expand(p)
	// opencode reads opencode.jsonc as well: edit the one that is there.
	if h.Format == "jsonc" && strings.HasSuffix(p, ".json") {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if _, err := os.Stat(p + "c"); err == nil {
				return p + "c", nil
			}
		}
	}
	return p, nil
}

// HasScope reports whether the host offers scope.
func (h *Host) HasScope(scope string) bool {
	for _, s := range h.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// Found says whether the host looks installed, and why.
func (h *Host) Found(e *Env) (bool, string) {
	for _, x := range h.Executables {
		if p, err := e.LookPath(x); err == nil {
			return true, x + " is on PATH (" + p + ")"
		}
	}
	for _, d := range h.Detect {
		if strings.HasPrefix(d, "%") != (e.GOOS == "windows") {
			continue
		}
		if st, err := os.Stat(e.expand(d)); err == nil && st.IsDir() {
			return true, e.expand(d) + " exists"
		}
	}
	if h.Kind != "snippet" {
		if p, err := h.ConfigPath(e, "user"); err == nil {
			if _, err := os.Stat(p); err == nil {
				return true, p + " exists"
			}
		}
	}
	if h.Kind == "snippet" {
		return true, "prints a snippet for any host"
	}
	what := strings.Join(h.Executables, " or ")
	if what == "" {
		what = "its configuration folder"
	}
	return false, "not found (looked for " + what + ")"
}

// IDs lists the host ids, sorted.
func IDs() []string {
	var ids []string
	for _, h := range Hosts() {
		ids = append(ids, h.ID)
	}
	sort.Strings(ids)
	return ids
}

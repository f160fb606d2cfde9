package integrations

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcphttp"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// UsageError is a grant the command line cannot take (an unknown preset, a scope list that does
// not parse): a mistake of the flags, not of the machine.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// LookupPreset is the catalog's preset of that name; an unknown name is a UsageError naming the
// nearest ones and every preset.
func LookupPreset(name string) (*generated.PresetSpec, error) {
	if p := FindPreset(name); p != nil {
		return p, nil
	}
	var names []string
	for _, p := range generated.Presets {
		names = append(names, p.Name)
	}
	msg := fmt.Sprintf("there is no preset %q", name)
	if near := search.Nearest(name, names); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return nil, &UsageError{fmt.Sprintf("%s; the presets are %s (postern integrations setup --help says what each gives)", msg, strings.Join(names, ", "))}
}

// SetGrant puts into o the scopes of the preset named, or the scope list given (at most one of
// the two is given; neither leaves o as it is), and returns the preset's name ("" for none).
func SetGrant(o *Options, preset, scopes string) (string, error) {
	if preset != "" {
		p, err := LookupPreset(preset)
		if err != nil {
			return "", err
		}
		o.Scopes = strings.Join(p.Scopes, ",")
		return p.Name, nil
	}
	if scopes != "" {
		if _, err := dispatch.ParseGrant(scopes); err != nil {
			return "", &UsageError{fmt.Sprintf("--scopes: %v", err)}
		}
		o.Scopes = scopes
	}
	return "", nil
}

// UntooledNote is what a preset's line adds for the scopes in it that no tool uses yet.
func UntooledNote(scopes []string) string {
	if len(scopes) == 0 {
		return ""
	}
	return " (" + strings.Join(scopes, ", ") + ": no tool yet)"
}

// AskPreset asks on out which preset to grant, offering def first, and reads the answer from
// in: a number or a name, an empty line taking def; three wrong answers or none is an error
// saying nothing was changed.
func AskPreset(in *bufio.Reader, out io.Writer, def string) (*generated.PresetSpec, error) {
	fmt.Fprintln(out, "Which grant should the agent have?")
	for i, p := range generated.Presets {
		mark := ""
		if p.Name == def {
			mark = " (default)"
		}
		fmt.Fprintf(out, "  %d. %s%s: %s%s\n", i+1, p.Name, mark, p.Line, UntooledNote(p.Untooled))
	}
	for range 3 {
		fmt.Fprintf(out, "Preset [%s]: ", def)
		line, err := in.ReadString('\n')
		a := strings.TrimSpace(line)
		if a == "" && err != nil {
			return nil, errors.New("no answer to which preset; nothing was changed: run again with --preset NAME or --scopes LIST")
		}
		if a == "" {
			a = def
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(generated.Presets) {
			return &generated.Presets[n-1], nil
		}
		p, err := LookupPreset(a)
		if err == nil {
			return p, nil
		}
		fmt.Fprintln(out, termsafe.Line(err.Error()))
	}
	return nil, errors.New("no preset was chosen; nothing was changed: run again with --preset NAME or --scopes LIST")
}

// RecordedPreset is the preset setup recorded for the first of targets that has one, else def:
// what setup offers first when it asks again.
func RecordedPreset(targets []Target, def string) string {
	for _, t := range targets {
		if t.Record != nil && t.Record.Preset != "" {
			def = t.Record.Preset
		}
	}
	return def
}

// Token puts the HTTP bearer token into o, for a URL entry and for masking it wherever it
// shows: read from mcphttp.TokenPath when it is there, made the same way (mcphttp.Token) when
// make; made says it was made now. Without a token file and without make, o gets none.
func Token(o *Options, make bool) (made bool, err error) {
	o.TokenFile = mcphttp.TokenPath()
	if _, err := os.Stat(o.TokenFile); errors.Is(err, os.ErrNotExist) && !make {
		return false, nil
	}
	tok, made, err := mcphttp.Token()
	if err != nil {
		return false, err
	}
	o.Token = tok
	return made, nil
}

// Executable says whether p is a file that can be run: what repair asks of a recorded binary
// before keeping it.
func Executable(p string) bool {
	st, err := os.Stat(p)
	return p != "" && err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// RepairJob is the job that registers t again: as setup recorded it, or, for an entry setup
// never recorded, with the flags the entry itself has.
func RepairJob(t Target, e *Env) Job {
	o, preset := t.Options, ""
	if t.Record != nil {
		preset = t.Record.Preset
	} else if cur, _, ok, _, _ := t.Host.Registered(e, o.Scope, o.Name); ok {
		o = OptionsFromEntry(cur, o)
	}
	return Job{Host: t.Host, Options: o, Preset: preset}
}

// LookupHosts are the hosts named by ids; an unknown one is a UsageError naming the nearest
// and every host.
func LookupHosts(ids []string) ([]*Host, error) {
	var out []*Host
	for _, id := range ids {
		h, err := Find(id)
		if err != nil {
			msg := fmt.Sprintf("there is no host %q", id)
			if near := search.Nearest(id, IDs()); len(near) > 0 {
				msg += "; did you mean " + strings.Join(near, " or ") + "?"
			}
			return nil, &UsageError{fmt.Sprintf("%s; the hosts are %s (postern integrations list)", msg, strings.Join(IDs(), ", "))}
		}
		out = append(out, h)
	}
	return out, nil
}

// GrantChanges are the sentences that say setup again changes the grant setup recorded for h
// (setup again is the way to change a grant): one per recorded registration of h among
// targets that the new one, now, replaces with another grant.
func GrantChanges(h *Host, o *Options, preset, project string, targets []Target, at time.Time) []string {
	now := NewRecord(h, o, preset, project, at)
	var out []string
	for _, t := range targets {
		if t.Record != nil && t.Record.Is(h.ID, o.Scope, o.Name, project) && t.Record.Describe() != now.Describe() {
			out = append(out, fmt.Sprintf("%s: this changes the grant setup recorded, %s, to %s.", h.ID, t.Record.Describe(), now.Describe()))
		}
	}
	return out
}

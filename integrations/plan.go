package integrations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/postern-mcp/postern/integrations/fileedit"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// Step is one thing a plan does.
type Step struct {
	Run   []string // a command to run (argv)
	Write string   // a file to replace with Data
	Data  []byte
	Print string // text for the person (a snippet, or commands to run by hand)
}

// Plan is what setup or remove would do for one host.
type Plan struct {
	Host    *Host
	Action  string // setup or remove
	Path    string // the configuration file involved, if any
	Current bool   // nothing to do: setup finds the entry current, remove finds none
	Manual  bool   // the host's command is not on PATH: the steps are printed, not run
	Note    string // one sentence for the person
	Steps   []Step
	// Secret is the HTTP bearer token, never shown: Describe, Apply and planJSON put Mask (or,
	// in a command, $(cat SecretFile)) in its place.
	Secret, SecretFile string
}

// Mask is s with the plan's secret masked.
func (p *Plan) Mask(s string) string { return mask(s, p.Secret) }

// Command is a step's command as shown: quoted for a shell, the secret read from its file.
func (p *Plan) Command(argv []string) string { return shellJoinSecret(argv, p.Secret, p.SecretFile) }

// Registered reads the host's entry named name, if the host's file can be
// read: ok is false when there is none; known is false when postern cannot
// read the registration (a project entry kept by the host's command line).
func (h *Host) Registered(e *Env, scope, name string) (entry Entry, raw []byte, ok, known bool, err error) {
	path, perr := h.ConfigPath(e, scope)
	if perr != nil {
		return Entry{}, nil, false, false, nil
	}
	src, rerr := os.ReadFile(path)
	if errors.Is(rerr, os.ErrNotExist) {
		return Entry{}, nil, false, true, nil
	}
	if rerr != nil {
		return Entry{}, nil, false, true, fmt.Errorf("cannot read %s: %v", path, rerr)
	}
	keys := append(strings.Split(h.Key, "."), name)
	if h.Format == "toml" {
		var doc map[string]any
		if _, err := toml.Decode(string(src), &doc); err != nil {
			return Entry{}, nil, false, true, fmt.Errorf("%s is not valid TOML: %v", path, err)
		}
		var v any = doc
		for _, k := range keys {
			m, isMap := v.(map[string]any)
			if !isMap {
				return Entry{}, nil, false, true, nil
			}
			if v, ok = m[k]; !ok {
				return Entry{}, nil, false, true, nil
			}
		}
		raw, _ = json.Marshal(v)
	} else {
		doc, perr := fileedit.Parse(src, h.Format == "jsonc")
		if perr != nil {
			return Entry{}, nil, false, true, fmt.Errorf("%s cannot be read: %v", path, perr)
		}
		if raw, ok = doc.Get(keys...); !ok {
			return Entry{}, nil, false, true, nil
		}
	}
	entry, err = parseEntry(h.Entry, raw)
	return entry, raw, true, true, err
}

// PlanSetup works out what registering postern with h takes.
func PlanSetup(h *Host, e *Env, o *Options) (*Plan, error) {
	if err := checkScope(h, o); err != nil {
		return nil, err
	}
	if o.HTTP != "" {
		if err := h.TakesURL(); err != nil {
			return nil, err
		}
	}
	want := o.Want()
	p := &Plan{Host: h, Action: "setup", Secret: o.Token, SecretFile: o.TokenFile}
	switch h.Kind {
	case "snippet":
		b, _ := json.MarshalIndent(map[string]any{h.Key: map[string]any{o.Name: entryValue(h.shape(want), want)}}, "", "  ")
		p.Steps = []Step{{Print: string(b) + "\n"}}
		p.Note = "Paste this into the host's configuration, merging it with any servers already there."
		if want.URL != "" {
			p.Note = "Paste this into the host's configuration, merging it with any servers already there, with " + Mask + " replaced by the token in " + o.TokenFile + " (it is not printed)."
		}
		return p, nil
	case "file":
		path, doc, err := h.openFile(e, o.Scope, "setup")
		if err != nil {
			return nil, err
		}
		p.Path = path
		keys := append(strings.Split(h.Key, "."), o.Name)
		if raw, ok := doc.Get(keys...); ok && sameJSON(raw, entryJSON(h.shape(want), want)) {
			p.Current = true
			p.Note = h.Name + ": postern is already registered and current in " + path + "."
			return p, nil
		}
		out, err := doc.Set(entryJSON(h.shape(want), want), keys...)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		p.Steps = []Step{{Write: path, Data: out}}
		p.Note = "Restart " + h.Name + " for it to start postern."
		if want.URL != "" {
			p.Note = "Restart " + h.Name + " for it to reach postern at " + want.URL + ", where postern mcp --http must be running."
		}
		return p, nil
	}
	// A host with a command line of its own.
	cur, _, ok, known, err := h.Registered(e, o.Scope, o.Name)
	if err == nil && ok && known && cur.Equal(want) {
		p.Current = true
		p.Note = h.Name + ": postern is already registered and current."
		return p, nil
	}
	if ok || !known {
		p.Steps = append(p.Steps, Step{Run: h.command(h.CLI.Remove, o, want)})
	}
	add := h.CLI.Add
	if want.URL != "" {
		add = h.HTTP.Add
	}
	p.Steps = append(p.Steps, Step{Run: h.command(add, o, want)})
	p.Manual = !h.onPath(e)
	if p.Manual {
		p.Note = h.Executables[0] + " is not on PATH: run these commands where it is."
	}
	return p, nil
}

// PlanRemove works out what taking postern away from h takes.
func PlanRemove(h *Host, e *Env, o *Options) (*Plan, error) {
	if err := checkScope(h, o); err != nil {
		return nil, err
	}
	p := &Plan{Host: h, Action: "remove", Secret: o.Token, SecretFile: o.TokenFile}
	switch h.Kind {
	case "snippet":
		p.Current = true
		p.Note = "Nothing to remove: the snippet was only printed; delete it from the host's configuration by hand."
		return p, nil
	case "file":
		path, doc, err := h.openFile(e, o.Scope, "remove")
		if err != nil {
			return nil, err
		}
		p.Path = path
		out, found, err := doc.Delete(append(strings.Split(h.Key, "."), o.Name)...)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if !found {
			p.Current = true
			p.Note = h.Name + ": postern is not registered in " + path + "; nothing to remove."
			return p, nil
		}
		p.Steps = []Step{{Write: path, Data: out}}
		return p, nil
	}
	_, _, ok, known, _ := h.Registered(e, o.Scope, o.Name)
	if known && !ok {
		p.Current = true
		p.Note = h.Name + ": postern is not registered; nothing to remove."
		return p, nil
	}
	p.Steps = []Step{{Run: h.command(h.CLI.Remove, o, o.Want())}}
	p.Manual = !h.onPath(e)
	if p.Manual {
		p.Note = h.Executables[0] + " is not on PATH: run this command where it is."
	}
	return p, nil
}

// openFile reads a file host's configuration for scope (a missing file is an
// empty one); a file that cannot be parsed is refused, left as it is.
func (h *Host) openFile(e *Env, scope, verb string) (string, *fileedit.Doc, error) {
	path, err := h.ConfigPath(e, scope)
	if err != nil {
		return "", nil, err
	}
	src, err := readOrEmpty(path)
	if err != nil {
		return "", nil, err
	}
	doc, err := fileedit.Parse(src, h.Format == "jsonc")
	if err != nil {
		return "", nil, fmt.Errorf("%s cannot be read, so it was left as it is: %v; fix it by hand (or move it aside) and run %s again", path, err, verb)
	}
	return path, doc, nil
}

func checkScope(h *Host, o *Options) error {
	if !h.HasScope(o.Scope) {
		return fmt.Errorf("%s has no %s scope; use --scope %s", h.Name, o.Scope, strings.Join(h.Scopes, " or "))
	}
	return nil
}

func (h *Host) onPath(e *Env) bool {
	_, err := e.LookPath(h.Executables[0])
	return err == nil
}

// command fills a catalog command line in: {args} becomes one word per argument.
func (h *Host) command(line string, o *Options, want Entry) []string {
	var out []string
	for _, w := range strings.Fields(line) {
		switch w {
		case "{args}":
			out = append(out, want.Args...)
		case "{command}":
			out = append(out, want.Command)
		case "{header}":
			out = append(out, want.header())
		default:
			w = strings.ReplaceAll(w, "{name}", o.Name)
			w = strings.ReplaceAll(w, "{scope}", o.Scope)
			w = strings.ReplaceAll(w, "{url}", want.URL)
			out = append(out, w)
		}
	}
	return out
}

func readOrEmpty(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v; check its permissions", path, err)
	}
	return b, nil
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// Describe writes what the plan does, as the person reads it before saying yes:
// the exact commands, or the whole new file. The file holds whatever the host's
// file held, and paths and names come from the environment and the flags, so
// every line is escaped for the terminal (termsafe; a file's tabs are kept).
func (p *Plan) Describe(w io.Writer) {
	fmt.Fprintf(w, "%s %s:\n", p.Action, termsafe.Line(p.Host.ID))
	if p.Current {
		fmt.Fprintf(w, "  %s\n", termsafe.Line(p.Mask(p.Note)))
		return
	}
	for _, s := range p.Steps {
		switch {
		case s.Run != nil:
			fmt.Fprintf(w, "  run: %s\n", p.Command(s.Run))
		case s.Write != "":
			fmt.Fprintf(w, "  write %s:\n", termsafe.Line(s.Write))
			for _, l := range strings.SplitAfter(p.Mask(string(s.Data)), "\n") {
				if l != "" {
					fmt.Fprintf(w, "    %s\n", termsafe.Text(strings.TrimRight(l, "\r\n")))
				}
			}
		case s.Print != "":
			fmt.Fprint(w, termsafe.Text(p.Mask(s.Print)))
		}
	}
	if p.Note != "" {
		fmt.Fprintf(w, "  %s\n", termsafe.Line(p.Mask(p.Note)))
	}
}

// Apply carries a plan out. Commands run with a time limit, and a command
// that fails stops the plan with its output; a setup's first step, removing
// an old entry, may fail (there may be none). Files are written atomically
// with one backup (fileedit.WriteFile), the record of what was written kept
// in stateFile.
func Apply(ctx context.Context, p *Plan, stateFile string, out io.Writer) error {
	if p.Current || p.Manual {
		p.Describe(out)
		return nil
	}
	for i, s := range p.Steps {
		switch {
		case s.Run != nil:
			if err := run(ctx, s.Run, p.Command); err != nil {
				if p.Action == "setup" && i == 0 && len(p.Steps) > 1 {
					continue // no old entry to remove
				}
				return errors.New(p.Mask(err.Error()))
			}
			fmt.Fprintf(out, "%s: ran %s\n", termsafe.Line(p.Host.ID), p.Command(s.Run))
		case s.Write != "":
			changed, backup, err := fileedit.WriteFile(s.Write, s.Data, 0o600, stateFile)
			if err != nil {
				return err
			}
			if changed {
				msg := p.Host.ID + ": wrote " + s.Write
				if backup != "" {
					msg += " (the previous version is kept in " + backup + ")"
				}
				fmt.Fprintln(out, termsafe.Line(msg))
			}
		case s.Print != "":
			fmt.Fprint(out, termsafe.Text(p.Mask(s.Print)))
		}
	}
	if p.Note != "" && p.Action == "setup" {
		fmt.Fprintln(out, termsafe.Line(p.Mask(p.Note)))
	}
	return nil
}

// run runs argv with a minute's limit, its input closed; show is how argv is named in errors.
func run(ctx context.Context, argv []string, show func([]string) string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(buf.String())
		if len(msg) > 600 {
			msg = msg[:600] + "…"
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s did not finish within a minute; run it by hand to see why", show(argv))
		}
		return fmt.Errorf("%s failed (%v): %s", show(argv), err, msg)
	}
	return nil
}

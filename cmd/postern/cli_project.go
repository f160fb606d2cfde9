package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/postern-mcp/postern/internal/tools"
)

// postern project: the person's side of projects (projects.toml beside the
// configuration). Every project is closed to agents until opened here; the
// commands change the file in place, keeping the person's comments and order
// (projects.SetOpen, AddTie, RemoveTie), and ask nothing: whoever runs them is
// the person at their terminal, as with the file itself.

func newProjectCmd(stdout io.Writer) *cobra.Command {
	var cfgPath string
	var asJSON bool
	idArgs := exactArgs(1, "the id of a project (postern project list shows them)")
	tieArgs := exactArgs(2, "the id of a project and what to tie (mid:<Message-ID>, a message id as "+generated.ToolMailList+" gives it, event:UID, task:UID, contact:UID or note:PATH)")
	list := &cobra.Command{
		Use:     "list",
		Short:   "the projects, open or closed, and what happens to things in no project",
		Long:    "List the projects of projects.toml beside the configuration: each one's id, name, whether agents may see it, and how many routes and ties say what belongs to it; then, from the local store, what each route and tie holds now (messages, events, tasks, contacts, notes), with a warning for a senders or domains route that holds no mail because none of it is authenticated; then what happens to things in no project ([projects] outside).",
		Example: "  postern project list\n  postern project list --json",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return projectList(cfgPath, asJSON, stdout)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the projects file as JSON")
	show := &cobra.Command{
		Use:     "show ID",
		Short:   "one project, whole: its routes, ties and whether it is open",
		Long:    "Show one project whole: whether agents may see it, each route that says what belongs to it (senders, domains, subjects, folders, calendars, task lists, address books, note folders) and its ties, each with what it holds now in the local store (messages, whole threads; events, tasks, contacts, notes). A senders or domains route that holds no mail because no receiving server you trust authenticated it is warned about, with what to do instead.",
		Example: "  postern project show acme",
		Args:    idArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			return projectShow(cfgPath, args[0], stdout)
		},
	}
	open := &cobra.Command{
		Use:     "open ID",
		Short:   "open a project to agents",
		Long:    "Open a project: from the next call on, agents see what belongs to it (a thing that also belongs to a closed project stays kept). The file is changed in place, its comments kept.",
		Example: "  postern project open acme",
		Args:    idArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			return projectSetOpen(cfgPath, args[0], true, stdout)
		},
	}
	closeCmd := &cobra.Command{
		Use:     "close ID",
		Short:   "close a project to agents",
		Long:    "Close a project: from the next call on, agents see nothing of what belongs to it, and nothing is written into it. The file is changed in place, its comments kept.",
		Example: "  postern project close acme",
		Args:    idArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			return projectSetOpen(cfgPath, args[0], false, stdout)
		},
	}
	tie := &cobra.Command{
		Use:   "tie ID REF",
		Short: "tie one message (and its thread), event, task, contact or note to a project",
		Long: "Tie one thing to a project by hand. REF is mid:<Message-ID> (the angle brackets may be left out) or a message id as " + generated.ToolMailList + " gives it (m…, read from the local store), " +
			"event:UID, task:UID, contact:UID or note:PATH (inside a notes folder). A message belongs with its whole thread. Tying what is tied already changes nothing.",
		Example: "  postern project tie acme mid:<CAB123@mail.example.com>\n  postern project tie acme m1a2b3c\n  postern project tie acme note:clients/acme/plan.md",
		Args:    tieArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			return projectTie(cfgPath, args[0], args[1], true, stdout)
		},
	}
	untie := &cobra.Command{
		Use:     "untie ID REF",
		Short:   "take a tie off a project",
		Long:    "Take off a tie made by postern project tie (or written in the file). REF is written as for tie; a ref that is not tied to the project is an error.",
		Example: "  postern project untie acme mid:CAB123@mail.example.com",
		Args:    tieArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			return projectTie(cfgPath, args[0], args[1], false, stdout)
		},
	}
	cmd := group("project", "decide which projects agents may see",
		"Projects live in projects.toml beside the configuration (docs/projects.md). Each says what belongs to it — authenticated senders and domains, subject words, folders, calendars, task lists, address books, note folders and ties — and is closed to agents until you open it here. Things in no project follow [projects] outside. The file is read again at every call, so a change takes effect at once.",
		list, show, open, closeCmd, tie, untie)
	for _, c := range []*cobra.Command{list, show, open, closeCmd, tie, untie} {
		addConfigFlag(c, &cfgPath)
	}
	return cmd
}

// loadProject reads the projects file and finds id in it; an unknown id names the nearest.
func loadProject(cfgPath, id string) (string, *projects.Set, *projects.Project, error) {
	return projects.LoadOne(projects.Path(cfgPath), id)
}

func projectList(cfgPath string, asJSON bool, stdout io.Writer) error {
	path := projects.Path(cfgPath)
	s, err := projects.Load(path)
	if err != nil {
		return err
	}
	line := func(format string, args ...any) { fmt.Fprintln(stdout, termsafe.Line(fmt.Sprintf(format, args...))) }
	if asJSON {
		b, _ := json.MarshalIndent(struct {
			Path     string             `json:"path"`
			Outside  bool               `json:"outside"`
			Projects []projects.Project `json:"projects"`
		}{path, s.Outside(), s.Projects}, "", "  ")
		fmt.Fprintln(stdout, string(termsafe.JSON(b)))
		return nil
	}
	if len(s.Projects) == 0 {
		line("No projects in %s (docs/projects.md says how to write them).", path)
	}
	holds, err := newHolds(cfgPath)
	if err != nil {
		return err
	}
	defer holds.close()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for i := range s.Projects {
		p := &s.Projects[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s, %s\n", termsafe.Line(p.ID), termsafe.Line(orDash(p.Name)), openWord(p.Open), plural(p.RouteCount(), "route"), plural(len(p.Ties), "tie"))
	}
	tw.Flush()
	// What each route holds, project by project: a route that holds nothing is seen here.
	for i := range s.Projects {
		p := &s.Projects[i]
		hs, err := holds.of(p)
		if err != nil {
			return err
		}
		if len(hs) == 0 || holds.svc == nil {
			continue
		}
		line("%s:", p.ID)
		for _, h := range hs {
			if h.Route == "ties" {
				line("  tie %s", holdLine(&h))
			} else {
				line("  %s", holdLine(&h))
			}
			if h.Warning != "" {
				line("    warning: it holds no message, as no mail from its senders is authenticated; postern project show %s says what to do", p.ID)
			}
		}
	}
	if holds.svc == nil && len(s.Projects) > 0 {
		line("%s", holds.missing())
	}
	line("%s", outsideLine(s))
	return nil
}

// holds works out what the routes hold, from the local store when there is one (opening it
// would make it: without one, nothing is counted).
type holds struct {
	svc  *tools.Service
	path string
}

func newHolds(cfgPath string) (*holds, error) {
	h := &holds{path: storePath()}
	if _, err := os.Stat(h.path); err != nil {
		return h, nil
	}
	abs, err := filepath.Abs(cfgPath)
	if err != nil {
		return nil, err
	}
	h.svc = &tools.Service{Version: postVersion(), Config: config.NewWatcher(abs), StorePath: h.path}
	return h, nil
}

func (h *holds) close() {
	if h.svc != nil {
		h.svc.Close()
	}
}

// of is what each route and tie of p holds; without a store, the routes with nothing counted.
func (h *holds) of(p *projects.Project) ([]tools.RouteHold, error) {
	if h.svc != nil {
		return h.svc.ProjectHolds(context.Background(), p)
	}
	var out []tools.RouteHold
	for _, r := range p.Routes() {
		for _, v := range r.Values {
			out = append(out, tools.RouteHold{Route: r.Key, Value: v})
		}
	}
	return out, nil
}

func (h *holds) missing() string {
	return fmt.Sprintf("What each route holds is counted from the local store, and there is none yet (%s): postern sync makes it.", h.path)
}

// holdLine is one route, its value and, when counted, what it holds:
// `domains "acme.example" (authenticated mail only): 0 messages, 2 contacts`.
func holdLine(h *tools.RouteHold) string {
	what := fmt.Sprintf("%s %q", h.Route, h.Value)
	if h.Route == "ties" {
		what = h.Value
	}
	if h.Route == "senders" || h.Route == "domains" {
		what += " (authenticated mail only)"
	}
	kinds := h.Kinds()
	if len(kinds) == 0 {
		return what
	}
	counts := make([]string, len(kinds))
	for i, k := range kinds {
		counts[i] = plural(h.Count(k), strings.TrimSuffix(k, "s"))
	}
	out := what + ": " + strings.Join(counts, ", ")
	if h.Unauthenticated > 0 {
		out += fmt.Sprintf(" (%s from its senders not authenticated, so not held)", plural(h.Unauthenticated, "message"))
	}
	return out
}

func outsideLine(s *projects.Set) string {
	if s.Outside() {
		return "Things in no project are shown to agents ([projects] outside = true, the default)."
	}
	return "Things in no project are kept from agents ([projects] outside = false); writes outside projects are refused."
}

func projectShow(cfgPath, id string, stdout io.Writer) error {
	_, s, p, err := loadProject(cfgPath, id)
	if err != nil {
		return err
	}
	line := func(format string, args ...any) { fmt.Fprintln(stdout, termsafe.Line(fmt.Sprintf(format, args...))) }
	name := ""
	if p.Name != "" {
		name = fmt.Sprintf(" %q", p.Name)
	}
	if p.Open {
		line("%s%s: open to agents (postern project close %s closes it)", p.ID, name, p.ID)
	} else {
		line("%s%s: closed to agents (postern project open %s opens it)", p.ID, name, p.ID)
	}
	holds, err := newHolds(cfgPath)
	if err != nil {
		return err
	}
	defer holds.close()
	hs, err := holds.of(p)
	if err != nil {
		return err
	}
	tied := false
	for _, h := range hs {
		indent := "  "
		if h.Route == "ties" {
			if !tied {
				line("  ties:")
				tied = true
			}
			indent = "    "
		}
		if holds.svc == nil {
			line("%s%s", indent, withoutCounts(&h))
			continue
		}
		line("%s%s", indent, holdLine(&h))
		if h.Warning != "" {
			line("%s  warning: this route %s", indent, h.Warning)
		}
	}
	if p.RouteCount() == 0 && len(p.Ties) == 0 {
		line("  nothing belongs to it yet: it has no routes and no ties")
	} else if holds.svc == nil {
		line("  %s", holds.missing())
	}
	if !s.Outside() {
		line("  (things in no project are kept from agents: [projects] outside = false)")
	}
	return nil
}

func projectSetOpen(cfgPath, id string, open bool, stdout io.Writer) error {
	path, _, p, err := loadProject(cfgPath, id)
	if err != nil {
		return err
	}
	word := "opened to agents"
	if !open {
		word = "closed to agents"
	}
	if p.Open == open {
		fmt.Fprintln(stdout, termsafe.Line(fmt.Sprintf("project %s: already %s; nothing changed", p.ID, openWord(open)+" to agents")))
		return nil
	}
	if err := projects.SetOpen(path, p.ID, open); err != nil {
		return err
	}
	fmt.Fprintln(stdout, termsafe.Line(fmt.Sprintf("project %s: %s", p.ID, word)))
	return nil
}

func projectTie(cfgPath, id, ref string, add bool, stdout io.Writer) error {
	path, _, p, err := loadProject(cfgPath, id)
	if err != nil {
		return err
	}
	tie, from, err := projects.ResolveTie(ref, storePath())
	if err != nil {
		return err
	}
	if err := projects.CheckTie(tie); err != nil {
		return err
	}
	line := func(format string, args ...any) { fmt.Fprintln(stdout, termsafe.Line(fmt.Sprintf(format, args...))) }
	tie, changed, err := projects.SetTie(path, p, tie, add)
	switch {
	case err != nil:
		return err
	case !changed:
		line("project %s: %s was tied already; nothing changed", p.ID, tie)
	case add:
		line("project %s: tied %s%s", p.ID, tie, from)
	default:
		line("project %s: untied %s%s", p.ID, tie, from)
	}
	return nil
}

// withoutCounts is a route as the file has it, when there is no store to count from.
func withoutCounts(h *tools.RouteHold) string {
	if h.Route == "ties" {
		return h.Value
	}
	what := fmt.Sprintf("%s %q", h.Route, h.Value)
	if h.Route == "senders" || h.Route == "domains" {
		what += " (authenticated mail only)"
	}
	return what
}

func openWord(open bool) string {
	if open {
		return "open"
	}
	return "closed"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

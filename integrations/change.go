package integrations

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Job is one registration to set up, repair or remove: the host, the options, the preset
// they came from ("" for none).
type Job struct {
	Host    *Host
	Options *Options
	Preset  string
}

// Change carries out setup, repair or remove for a list of jobs: it plans each, shows the
// plans (and, but for a remove, what the agent will see), asks, applies them and keeps the
// records beside the configuration in step. What it shows and asks goes through the command
// line's functions; it asks nothing itself.
type Change struct {
	Verb   string // setup, repair or remove
	Env    *Env
	Config string // the absolute configuration path: the records are kept beside it
	State  string // the file of the backups Apply keeps (integrations.json in the state folder)
	Out    io.Writer
	DryRun bool // show the plans and change nothing
	JSON   bool // with DryRun: the plans go to WriteJSON

	Sees      func(lines []string) // prints what the agent will see
	Confirm   func() error         // asks before anything changes; an error changes nothing
	WriteJSON func(v any) error
}

// Run plans and applies the jobs; it returns ManualError's error when a host's commands were
// left for the person to run.
func (c *Change) Run(ctx context.Context, jobs []Job) error {
	type item struct {
		p      *Plan
		o      *Options
		preset string
	}
	var items []item
	var plans []*Plan
	for _, j := range jobs {
		var p *Plan
		var err error
		if c.Verb == "remove" {
			p, err = PlanRemove(j.Host, c.Env, j.Options)
		} else {
			p, err = PlanSetup(j.Host, c.Env, j.Options)
		}
		if err != nil {
			return err
		}
		items = append(items, item{p, j.Options, j.Preset})
		plans = append(plans, p)
	}
	show := func() {
		for _, it := range items {
			it.p.Describe(c.Out)
			if c.Verb != "remove" {
				c.Sees(AgentSees(it.o, it.preset))
			}
		}
	}
	if c.DryRun {
		if c.JSON {
			var out []any
			for _, it := range items {
				var sees []string
				if c.Verb != "remove" {
					sees = AgentSees(it.o, it.preset)
				}
				out = append(out, it.p.JSON(sees))
			}
			return c.WriteJSON(out)
		}
		show()
		return nil
	}
	todo := false
	for _, p := range plans {
		todo = todo || !p.Current && !p.Manual && p.Host.Kind != "snippet"
	}
	if todo {
		show()
		if err := c.Confirm(); err != nil {
			return err
		}
	}
	recPath := RecordPath(c.Config)
	now := time.Now()
	for _, it := range items {
		if todo && it.p.Manual {
			continue // its commands were shown with the plan
		}
		if err := Apply(ctx, it.p, c.State, c.Out); err != nil {
			return fmt.Errorf("%s: %w", it.p.Host.ID, err)
		}
		if !todo && c.Verb != "remove" {
			// Nothing to change, or a snippet: what the agent will see is still worth saying.
			c.Sees(AgentSees(it.o, it.preset))
		}
		if it.p.Manual || it.p.Host.Kind == "snippet" {
			continue
		}
		var err error
		if c.Verb == "remove" {
			err = DropRecord(recPath, it.p.Host.ID, it.o.Scope, it.o.Name, c.Env.Project)
		} else {
			err = PutRecord(recPath, NewRecord(it.p.Host, it.o, it.preset, c.Env.Project, now))
		}
		if err != nil {
			return fmt.Errorf("%s was done, but %w", it.p.Host.ID, err)
		}
	}
	done := map[string]string{"setup": "registered", "repair": "repaired", "remove": "removed"}[c.Verb]
	return ManualError(plans, done)
}

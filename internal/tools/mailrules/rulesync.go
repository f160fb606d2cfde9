package mailrules

import (
	"context"
	"errors"
	"fmt"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/compose"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/rules"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/actions"
)

// RulesClient is the client the action log names for what rules did at a sync.
const RulesClient = "postern rules"

// RuleRun is what the rules did to one account's new mail at a sync.
type RuleRun struct {
	Account string
	Looked  int      // new messages the rules looked at
	Actions []string // the action ids logged, one per group of messages treated alike
	Acted   int      // messages changed
	Sent    int      // forwards sent
	Errors  []string // what failed, one sentence each
}

// ApplyRules runs the enabled rules over the mail that arrived in each
// account's INBOX since they last looked (new mail: what the account never held
// before, store.NewForRules), through the same code as the mail
// tools: every change is in the action log (client "postern rules", the rule's
// name in what it did) and mail_undo puts it back. The first time an account
// is seen, its existing mail is only marked as seen: rules_apply_existing is
// how a rule runs over old mail.
func (s *Rules) ApplyRules(ctx context.Context, accounts []string) ([]RuleRun, error) {
	all, err := s.loadRules()
	if err != nil {
		return nil, err
	}
	ctx = dispatch.WithInfo(ctx, dispatch.CallInfo{Era: dispatch.EraCLI, ClientName: RulesClient})
	ctx = s.OpenView(ctx) // not a tool: it opens its own view, the person's
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	var out []RuleRun
	pushed := rules.Pushed(s.rulesPath())
	for _, account := range accounts {
		var enabled []generated.Rule
		for _, r := range all {
			// A rule the account's server runs itself (pushed as Sieve, unchanged since) is
			// left to it: run here too, a forward would go twice.
			if r.State == rules.Enabled && (r.Account == "" || r.Account == account) && !rules.OnServer(ctx, st, account, r, pushed) {
				enabled = append(enabled, r)
			}
		}
		run, err := s.applyRules(ctx, st, account, enabled)
		if err != nil {
			run.Errors = append(run.Errors, err.Error())
		}
		out = append(out, run)
	}
	return out, nil
}

func (s *Rules) applyRules(ctx context.Context, st *store.Store, account string, enabled []generated.Rule) (RuleRun, error) {
	run := RuleRun{Account: account}
	inbox, err := st.FindFolder(ctx, account, "INBOX")
	var fe *store.FolderError
	if errors.As(err, &fe) {
		return run, nil // nothing synced yet
	}
	if err != nil {
		return run, err
	}
	seen, looked, err := st.RulesSeen(ctx, inbox.ID)
	if err != nil {
		return run, err
	}
	if !looked || len(enabled) == 0 {
		// From now on the rules look at what arrives; what is there already is not new.
		top, err := st.MaxUID(ctx, inbox.ID)
		if err != nil {
			return run, err
		}
		return run, st.SetRulesSeen(ctx, inbox.ID, top)
	}
	now := time.Now()
	// A rule whose match cannot be read (written by hand) is named, and the others run.
	enabled = slices.DeleteFunc(slices.Clone(enabled), func(r generated.Rule) bool {
		if _, err := rules.Query(r, now); err != nil {
			run.Errors = append(run.Errors, fmt.Sprintf("rule %s does not run: %v", r.Name, err))
			return true
		}
		return false
	})
	type group struct {
		names []string
		plan  actions.Plan
		ids   []string
	}
	groups := map[string]*group{}
	var order []string
	acted := map[string]bool{}
	var forwards []struct {
		rule, to string
		id       int64
	}
	for {
		// New mail is what the account never held: a message moved back to INBOX (by
		// mail_undo, or by the person elsewhere) has a new uid but is not new.
		rows, top, err := st.NewForRules(ctx, inbox.ID, seen, 500)
		if err != nil {
			return run, err
		}
		if top == seen {
			break
		}
		seen = top
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		sets, err := rules.Sets(ctx, st, enabled, store.Filter{Accounts: []string{account}}, ids, now)
		if err != nil {
			return run, err
		}
		for _, r := range rows {
			run.Looked++
			applied := rules.Evaluate(enabled, sets, r.ID)
			if len(applied) == 0 {
				continue
			}
			// The rules that run on a message make one change: every flag they set, and
			// the last move (the order is the person's).
			var names []string
			merged := generated.Rule{}
			for _, ap := range applied {
				names = append(names, ap.Rule)
				acted[ap.Rule] = true
				for _, a := range ap.Actions {
					if a.Do == "forward" {
						forwards = append(forwards, struct {
							rule, to string
							id       int64
						}{ap.Rule, a.To, r.ID})
						continue
					}
					if moves(a.Do) {
						merged.Actions = slices.DeleteFunc(merged.Actions, func(x generated.RuleAction) bool { return moves(x.Do) })
					}
					merged.Actions = append(merged.Actions, a)
				}
			}
			if len(merged.Actions) == 0 {
				continue
			}
			merged.Name = strings.Join(names, ", ")
			p := s.planOf(merged, generated.ToolMailSync)
			key := merged.Name + "\x00" + strings.Join(describe(merged.Actions), "\x00")
			if groups[key] == nil {
				groups[key] = &group{names: names, plan: p}
				order = append(order, key)
			}
			groups[key].ids = append(groups[key].ids, store.EncodeID(r.ID))
		}
	}
	for _, key := range order {
		g := groups[key]
		for len(g.ids) > 0 {
			n := min(len(g.ids), actions.MaxActed)
			res, err := s.Actions.Act(ctx, g.ids[:n], nil, false, g.plan)
			g.ids = g.ids[n:]
			if err != nil {
				run.Errors = append(run.Errors, fmt.Sprintf("rule %s: %v", strings.Join(g.names, ", "), err))
				continue
			}
			run.Acted += res.Changed
			if res.ActionID != "" {
				run.Actions = append(run.Actions, res.ActionID)
			}
		}
	}
	for _, f := range forwards {
		if err := s.forward(ctx, account, f.id, f.to); err != nil {
			run.Errors = append(run.Errors, fmt.Sprintf("rule %s: the forward to %s failed: %v", f.rule, f.to, err))
			continue
		}
		run.Sent++
	}
	if err := st.SetRulesSeen(ctx, inbox.ID, seen); err != nil {
		return run, err
	}
	if len(acted) > 0 {
		stamp := time.Now().UTC().Format("2006-01-02 15:04")
		names := make([]string, 0, len(acted))
		for n := range acted {
			names = append(names, n)
		}
		sort.Strings(names)
		err := rules.Update(s.rulesPath(), func(all []generated.Rule) ([]generated.Rule, error) {
			for _, n := range names {
				if i := rules.Find(all, n); i >= 0 {
					all[i].LastActed = stamp
				}
			}
			return all, nil
		})
		if err != nil {
			run.Errors = append(run.Errors, err.Error())
		}
	}
	return run, nil
}

// forward sends a copy of message id to addr from its account, as a forward
// with the original's text; [send] allow is checked as for every send.
func (s *Rules) forward(ctx context.Context, account string, id int64, addr string) error {
	if err := s.Mail.CheckRecipients([]string{addr}); err != nil {
		return err
	}
	orig, _, err := s.Mail.Original(ctx, store.EncodeID(id))
	if err != nil {
		return err
	}
	acct, err := s.Mail.SendingAccount(ctx, account, true)
	if err != nil {
		return err
	}
	to, err := compose.ParseList("to", []string{addr})
	if err != nil {
		return err
	}
	m, err := compose.Forward(*orig, mail.OwnAddresses(acct)[0], to, nil, "Forwarded by the postern rule you approved.")
	if err != nil {
		return err
	}
	_, err = s.Mail.Send(ctx, acct, m)
	return err
}

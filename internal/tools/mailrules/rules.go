// Package mailrules serves the tools of catalog/rules.yaml: the person's mail rules
// (listing, testing, proposing, approving, applying them to stored mail, pushing them to a
// server's Sieve), and their run at each sync (ApplyRules). A rule's moves and marks are
// package actions' plans.
package mailrules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/rules"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/actions"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
)

// Rules implements generated.RulesHandlers.
type Rules struct {
	*kit.Kit
	// Mail resolves accounts and sends forwards; Actions does what a rule does to messages.
	Mail    *mail.Mail
	Actions *actions.Actions
	// OpenView opens the view of what the person runs, which is no tool call (ApplyRules,
	// PlanSievePush, PushSieve): tools.Service's.
	OpenView func(ctx context.Context) context.Context
}

var _ generated.RulesHandlers = (*Rules)(nil)

// The rule tools (rules_*): what a rule may show follows the scopes. A rule
// that looks at headers needs read:headers to be tested, proposed or
// approved, one that looks at body words read:bodies, since its matches tell
// what those parts hold.

// rulesPath is the rules file beside the configuration.
func (s *Rules) rulesPath() string { return rules.Path(s.Config.Path()) }

func (s *Rules) loadRules() ([]generated.Rule, error) { return rules.Load(s.rulesPath()) }

// needScopes refuses a rule whose conditions look at what this connection may not see.
func needScopes(ctx context.Context, r generated.Rule, what string) error {
	for _, sc := range rules.NeedsOf(r).Scopes() {
		if !kit.HasScope(ctx, sc) {
			return fmt.Errorf("the rule looks at what the scope %q shows, which this connection was not granted, so it cannot be %s here; ask the person to grant it, or drop those conditions", sc, what)
		}
	}
	return nil
}

// redact hides the match of r from a connection without read:headers or read:bodies when
// it looks at what those scopes show: a rule another client proposed can carry a word it saw
// in a body.
func redact(ctx context.Context, r generated.Rule) generated.Rule {
	for _, sc := range rules.NeedsOf(r).Scopes() {
		if !kit.HasScope(ctx, sc) {
			r.Match = fmt.Sprintf("(hidden: it looks at what %s shows)", sc)
		}
	}
	return r
}

// ruleInfo is r, at position (from 1; 0 for none), with what it needs and waits for.
func ruleInfo(r generated.Rule, position int) generated.RuleInfo {
	info := generated.RuleInfo{Rule: r, NeedsScopes: rules.NeedsOf(r).Scopes()}
	if position > 0 {
		info.Position = &position
	}
	switch {
	case r.State == rules.Pending && rules.Forwards(r):
		info.WaitsFor = "the person's approval in a terminal (postern rules approve), as it forwards mail"
	case r.State == rules.Pending:
		info.WaitsFor = "the person's approval"
	}
	return info
}

// checker is what rules.Checker needs of this connection's accounts and store.
func (s *Rules) checker(ctx context.Context) (rules.Checker, error) {
	accts, err := s.VisibleNames(ctx)
	if err != nil {
		return rules.Checker{}, err
	}
	cfg, err := s.Config.Get()
	if err != nil {
		return rules.Checker{}, err
	}
	c := rules.Checker{Accounts: accts, SendAllowed: cfg.SendAllowed, Nearest: search.Nearest}
	if st, err := s.Store(ctx); err == nil {
		c.Folder = func(account, name string) error {
			in := accts
			if account != "" {
				in = []string{account}
			}
			var firstErr error
			for _, a := range in {
				if _, err := st.FindFolder(ctx, a, name); err == nil {
					return nil
				} else if firstErr == nil {
					firstErr = err
				}
			}
			return firstErr
		}
	}
	return c, nil
}

// RulesList implements rules_list.
func (s *Rules) RulesList(ctx context.Context, a *generated.RulesListArgs) (*generated.RuleList, error) {
	all, err := s.loadRules()
	if err != nil {
		return nil, err
	}
	visible, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, err
	}
	res := &generated.RuleList{Rules: []generated.RuleInfo{}}
	for _, r := range rules.Ordered(all) {
		pos := rules.Find(all, r.Name) + 1
		if r.Account != "" && !slices.Contains(visible, r.Account) {
			continue // a rule of a hidden account is hidden with it
		}
		if a.Account != nil && r.Account != "" && r.Account != *a.Account {
			continue
		}
		if a.State != nil && r.State != *a.State {
			continue
		}
		res.Rules = append(res.Rules, ruleInfo(redact(ctx, r), pos))
	}
	return res, nil
}

// ruleBase is the selection the rule tools run rules over: the visible accounts (account,
// when set), folder (every folder when ""), without what the person's projects keep from
// agents; leftOut counts what is kept, over the folder or the accounts whatever the rule.
func (s *Rules) ruleBase(ctx context.Context, folder string, account *string) (st *store.Store, base store.Filter, leftOut int, err error) {
	if st, err = s.Store(ctx); err != nil {
		return nil, base, 0, err
	}
	accts, err := s.Mail.ScopeAccounts(ctx, account)
	if err != nil {
		return nil, base, 0, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, base, 0, err
	}
	hide, err := acc.Mail(ctx, st)
	if err != nil {
		return nil, base, 0, err
	}
	if leftOut, err = acc.LeftOut(ctx, st, accts, folder); err != nil {
		return nil, base, 0, err
	}
	return st, store.Filter{Accounts: accts, Folder: folder, Hide: hide}, leftOut, nil
}

// describe says what a rule's actions do, as a person reads it.
func describe(acts []generated.RuleAction) []string {
	var out []string
	for _, a := range acts {
		switch a.Do {
		case "move":
			out = append(out, "move to "+a.Folder)
		case "forward":
			out = append(out, "forward to "+a.To)
		case "mark_read", "mark_unread":
			out = append(out, strings.ReplaceAll(a.Do, "_", " "))
		case "delete":
			out = append(out, "delete (to Trash, with a backup)")
		default:
			out = append(out, a.Do)
		}
	}
	return out
}

// RulesTest implements rules_test: the rule's problems, as rules_propose would find them,
// and, when its match can be read here, what it matches of the stored mail.
func (s *Rules) RulesTest(ctx context.Context, a *generated.RulesTestArgs) (*generated.RuleTest, error) {
	c, err := s.checker(ctx)
	if err != nil {
		return nil, err
	}
	r := rules.FromNew(a.Rule)
	res := &generated.RuleTest{Messages: []generated.MessageRow{}, Actions: describe(r.Actions), NeedsScopes: rules.NeedsOf(r).Scopes()}
	res.Problems = c.Problems(r)
	scopeErr := needScopes(ctx, r, "tested")
	if scopeErr != nil {
		res.Problems = append(res.Problems, scopeErr.Error())
	}
	res.Ok = len(res.Problems) == 0
	q, err := rules.Query(r, time.Now())
	if err != nil || scopeErr != nil {
		return res, nil // nothing to run: the problems say why
	}
	st, base, leftOut, err := s.ruleBase(ctx, kit.Deref(a.Folder), nil)
	if err != nil {
		return nil, err
	}
	f := rules.Filter(r, q, base)
	if res.Matched, err = st.Count(ctx, f); err != nil {
		return nil, err
	}
	f.Limit = a.Limit
	rows, _, err := st.Messages(ctx, f)
	if err != nil {
		return nil, err
	}
	v := s.Mail.RowOwn(ctx)
	for _, row := range rows {
		res.Messages = append(res.Messages, mail.MessageRow(row, v))
	}
	res.LeftOut = kit.NonZero(leftOut)
	return res, nil
}

// RulesCoverage implements rules_coverage.
func (s *Rules) RulesCoverage(ctx context.Context, a *generated.RulesCoverageArgs) (*generated.RuleCoverage, error) {
	all, err := s.loadRules()
	if err != nil {
		return nil, err
	}
	var enabled []generated.Rule
	for _, r := range all {
		if r.State == rules.Enabled {
			if err := needScopes(ctx, r, "run over mail"); err != nil {
				return nil, fmt.Errorf("rule %s: %v", r.Name, err)
			}
			enabled = append(enabled, r)
		}
	}
	st, base, leftOut, err := s.ruleBase(ctx, a.Folder, a.Account)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	sets, err := rules.Sets(ctx, st, enabled, base, nil, now)
	if err != nil {
		return nil, err
	}
	res := &generated.RuleCoverage{Rules: []generated.RuleCount{}, UnmatchedSenders: []generated.SenderCount{}, Contested: []generated.Contested{}}
	counts := make([]generated.RuleCount, len(enabled))
	for i, r := range enabled {
		counts[i].Rule = r.Name
		counts[i].Matched = len(sets[i])
	}
	unmatched := map[string]int{}
	page := base
	page.Limit = 1000
	for {
		rows, more, err := st.Messages(ctx, &page)
		if err != nil {
			return nil, err
		}
		for _, m := range rows {
			res.Messages++
			var matched []string
			for i, r := range enabled {
				if sets[i][m.ID] {
					matched = append(matched, r.Name)
				}
			}
			runs := rules.Evaluate(enabled, sets, m.ID)
			for _, ap := range runs {
				counts[slices.IndexFunc(enabled, func(r generated.Rule) bool { return r.Name == ap.Rule })].Wins++
			}
			switch {
			case len(matched) == 0:
				unmatched[strings.ToLower(m.From.Email)]++
			default:
				res.Matched++
				if len(matched) > 1 && len(res.Contested) < 50 {
					res.Contested = append(res.Contested, generated.Contested{ID: store.EncodeID(m.ID), Rules: matched, Winner: winner(runs)})
				}
			}
			page.Before = m.ID
		}
		if !more || len(rows) == 0 {
			break
		}
	}
	res.Rules = counts
	res.LeftOut = kit.NonZero(leftOut)
	for sender, n := range unmatched {
		res.UnmatchedSenders = append(res.UnmatchedSenders, generated.SenderCount{Sender: sender, Messages: n})
	}
	sort.Slice(res.UnmatchedSenders, func(i, j int) bool {
		x, y := res.UnmatchedSenders[i], res.UnmatchedSenders[j]
		return x.Messages > y.Messages || x.Messages == y.Messages && x.Sender < y.Sender
	})
	if len(res.UnmatchedSenders) > 50 {
		res.UnmatchedSenders = res.UnmatchedSenders[:50]
	}
	return res, nil
}

// winner is the rule that decides where a message goes: the last one that
// moves it (the first that stops ends the run), else the last that runs.
func winner(runs []rules.Applied) string {
	w := ""
	for _, ap := range runs {
		for _, act := range ap.Actions {
			if moves(act.Do) {
				w = ap.Rule
			}
		}
	}
	if w == "" && len(runs) > 0 {
		w = runs[len(runs)-1].Rule
	}
	return w
}

func moves(do string) bool {
	return do == "move" || do == "archive" || do == "junk" || do == "delete"
}

// RulesPropose implements rules_propose: a proposal, or (withdraw) its withdrawal.
func (s *Rules) RulesPropose(ctx context.Context, a *generated.RulesProposeArgs) (*generated.RuleInfo, error) {
	if a.Withdraw {
		if a.Rule != nil || a.ID == nil {
			return nil, errors.New("withdraw takes the name of your pending proposal in id, and no rule")
		}
		return s.withdraw(ctx, *a.ID)
	}
	if a.Rule == nil {
		return nil, errors.New("give the rule to propose in rule (or withdraw: true and id to withdraw a proposal)")
	}
	if a.ID != nil && !strings.EqualFold(*a.ID, a.Rule.Name) {
		return nil, fmt.Errorf("id %q is not the rule's name %q; give the name in rule alone", *a.ID, a.Rule.Name)
	}
	r := rules.FromNew(*a.Rule)
	if err := needScopes(ctx, r, "proposed"); err != nil {
		return nil, err
	}
	c, err := s.checker(ctx)
	if err != nil {
		return nil, err
	}
	if ps := c.Problems(r); len(ps) > 0 {
		return nil, fmt.Errorf("the rule was not saved: %s", strings.Join(ps, "; "))
	}
	if err := s.refuseKeptRule(ctx, r); err != nil {
		return nil, err
	}
	r.State, r.ProposedBy, r.LastActed = rules.Pending, kit.ClientName(ctx), ""
	if r.ProposedBy == "" {
		r.ProposedBy = "an agent"
	}
	pos := 0
	err = rules.Update(s.rulesPath(), func(all []generated.Rule) ([]generated.Rule, error) {
		if i := rules.Find(all, r.Name); i >= 0 {
			if all[i].ProposedBy != r.ProposedBy {
				return nil, fmt.Errorf("a rule called %q exists already (proposed by %s); propose yours under another name", all[i].Name, all[i].ProposedBy)
			}
			all[i] = r // a change to one's own proposal or rule waits for the person again
			pos = i + 1
			return all, nil
		}
		pos = len(all) + 1
		return append(all, r), nil
	})
	if err != nil {
		return nil, err
	}
	info := ruleInfo(r, pos)
	return &info, nil
}

// changeRule applies change to the rule called name, refusing a hidden one; change may
// move it (to a new index) or remove it (state "").
func (s *Rules) changeRule(ctx context.Context, name string, change func(all []generated.Rule, i int) ([]generated.Rule, error)) (*generated.RuleInfo, error) {
	visible, err := s.VisibleNames(ctx)
	if err != nil {
		return nil, err
	}
	var out generated.Rule
	pos := 0
	err = rules.Update(s.rulesPath(), func(all []generated.Rule) ([]generated.Rule, error) {
		i := rules.Find(all, name)
		if i < 0 || all[i].Account != "" && !slices.Contains(visible, all[i].Account) {
			names := []string{}
			for _, r := range all {
				if r.Account == "" || slices.Contains(visible, r.Account) {
					names = append(names, r.Name)
				}
			}
			msg := fmt.Sprintf("there is no rule %q; %s lists them", name, generated.ToolRulesList)
			if near := search.Nearest(name, names); len(near) > 0 {
				msg = fmt.Sprintf("there is no rule %q; the nearest: %s", name, strings.Join(near, ", "))
			}
			return nil, errors.New(msg)
		}
		before := all[i]
		all, err := change(all, i)
		if err != nil {
			return nil, err
		}
		if j := rules.Find(all, before.Name); j >= 0 {
			out, pos = all[j], j+1
		} else {
			out = before // removed: it has no state any more
			out.State = ""
		}
		return all, nil
	})
	if err != nil {
		return nil, err
	}
	info := ruleInfo(redact(ctx, out), pos)
	return &info, nil
}

// withdraw removes a pending proposal of this client.
func (s *Rules) withdraw(ctx context.Context, name string) (*generated.RuleInfo, error) {
	client := kit.ClientName(ctx)
	return s.changeRule(ctx, name, func(all []generated.Rule, i int) ([]generated.Rule, error) {
		r := all[i]
		if r.State != rules.Pending || r.ProposedBy != client {
			return nil, fmt.Errorf("rule %q is %s and was proposed by %s; only a pending proposal of this client can be withdrawn", r.Name, r.State, r.ProposedBy)
		}
		return slices.Delete(all, i, i+1), nil
	})
}

// RulesUpdate implements rules_update: approving (pending to enabled), rejecting (pending
// to rejected), enabling and disabling an approved rule, and moving a rule in the run order.
func (s *Rules) RulesUpdate(ctx context.Context, a *generated.RulesUpdateArgs) (*generated.RuleInfo, error) {
	if a.State == nil && a.Position == nil {
		return nil, errors.New("give state (enabled, disabled or rejected), position, or both")
	}
	return s.changeRule(ctx, a.ID, func(all []generated.Rule, i int) ([]generated.Rule, error) {
		r := &all[i]
		if a.State != nil {
			if err := setState(ctx, r, *a.State); err != nil {
				return nil, err
			}
		}
		if a.Position != nil {
			moved := *r
			all = slices.Delete(all, i, i+1)
			all = slices.Insert(all, min(*a.Position-1, len(all)), moved)
		}
		return all, nil
	})
}

// setState moves r to state to as rules_update may.
func setState(ctx context.Context, r *generated.Rule, to string) error {
	switch {
	case r.State == to:
		return nil
	case r.State == rules.Pending && to == rules.Disabled:
		return fmt.Errorf("rule %q is pending; approve it (state enabled) or reject it (state rejected)", r.Name)
	case r.State == rules.Rejected:
		return fmt.Errorf("rule %q was rejected; it must be proposed again before it can run", r.Name)
	case to == rules.Rejected && r.State != rules.Pending:
		return fmt.Errorf("rule %q is %s, not pending; disable it (state disabled) instead", r.Name, r.State)
	case to == rules.Enabled:
		if err := needScopes(ctx, *r, "approved"); err != nil {
			return err
		}
		if rules.Forwards(*r) && r.State == rules.Pending {
			return nil // stays pending (waits_for says why): only the person, in a terminal, enables a forward
		}
		if rules.Forwards(*r) {
			return fmt.Errorf("rule %q forwards mail; only the person enables it, in a terminal (postern rules enable)", r.Name)
		}
	}
	r.State = to
	return nil
}

// planOf turns a rule's actions into one plan of act, logged as tool's (actions.RulePlan).
func (s *Rules) planOf(r generated.Rule, tool string) actions.Plan {
	return s.Actions.RulePlan(tool, "rule "+r.Name+": "+strings.Join(describe(r.Actions), ", "), r.Actions)
}

// RulesApplyExisting implements rules_apply_existing.
func (s *Rules) RulesApplyExisting(ctx context.Context, a *generated.RulesApplyExistingArgs) (*generated.ActionResult, error) {
	all, err := s.loadRules()
	if err != nil {
		return nil, err
	}
	i := rules.Find(all, a.ID)
	if i < 0 {
		return nil, fmt.Errorf("there is no rule %q; %s lists them", a.ID, generated.ToolRulesList)
	}
	r := all[i]
	if r.State != rules.Enabled {
		return nil, fmt.Errorf("rule %q is %s; only an enabled rule runs", r.Name, r.State)
	}
	if rules.Forwards(r) {
		return nil, fmt.Errorf("rule %q forwards mail, which cannot be undone; it runs only on new mail, never over stored mail", r.Name)
	}
	if err := needScopes(ctx, r, "run here"); err != nil {
		return nil, err
	}
	st, base, _, err := s.ruleBase(ctx, a.Folder, nil)
	if err != nil {
		return nil, err
	}
	q, err := rules.Query(r, time.Now())
	if err != nil {
		return nil, fmt.Errorf("rule %q: %v", r.Name, err)
	}
	f := rules.Filter(r, q, base)
	f.Limit = actions.MaxActed
	rows, more, err := st.Messages(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("rule %q matches no stored message in %s, so nothing would change", r.Name, a.Folder)
	}
	if more {
		return nil, fmt.Errorf("rule %q matches more than %d stored messages in %s; one action takes at most %d, so narrow the rule or run it folder by folder", r.Name, actions.MaxActed, a.Folder, actions.MaxActed)
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = store.EncodeID(row.ID)
	}
	return s.Actions.Act(ctx, ids, nil, a.DryRun, s.planOf(r, generated.ToolRulesApplyExisting))
}

// refuseKeptRule refuses a proposed rule whose stored matches are all kept from agents by
// the person's projects: such a rule would act only inside a closed project. A rule that
// matches nothing yet, or some shown message, may be proposed. The answer says no more.
func (s *Rules) refuseKeptRule(ctx context.Context, r generated.Rule) error {
	acc, err := s.Access(ctx)
	if err != nil || !acc.Active() {
		return err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return err
	}
	accts, err := s.VisibleNames(ctx)
	if err != nil {
		return err
	}
	hide, err := acc.Mail(ctx, st)
	if err != nil || hide == nil {
		return err
	}
	q, err := rules.Query(r, time.Now())
	if err != nil {
		return err
	}
	f := rules.Filter(r, q, store.Filter{Accounts: accts})
	f.Limit = 1
	any, _, err := st.Messages(ctx, f)
	if err != nil || len(any) == 0 {
		return err
	}
	f.Hide = hide
	shown, _, err := st.Messages(ctx, f)
	if err != nil {
		return err
	}
	if len(shown) == 0 {
		return errors.New("the rule was not saved: every message it matches belongs to a project the person has not opened to agents; the person can open it (postern project open ID)")
	}
	return nil
}

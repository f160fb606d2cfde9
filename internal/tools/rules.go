package tools

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
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// The rule tools (rules_*): what a rule may show follows the scopes. A rule
// that looks at headers needs read:headers to be tested, proposed or
// approved, one that looks at body words read:bodies, since its matches tell
// what those parts hold.

// rulesPath is the rules file beside the configuration.
func (s *Service) rulesPath() string { return rules.Path(s.Config.Path()) }

func (s *Service) loadRules() ([]generated.Rule, error) { return rules.Load(s.rulesPath()) }

// needScopes refuses a rule whose conditions look at what this connection may not see.
func needScopes(ctx context.Context, r generated.Rule, what string) error {
	for _, sc := range rules.NeedsOf(r).Scopes() {
		if !hasScope(ctx, sc) {
			return fmt.Errorf("the rule looks at what the scope %q shows, which this connection was not granted, so it cannot be %s here; ask the person to grant it, or drop those conditions", sc, what)
		}
	}
	return nil
}

// hidden stands for a condition's text that this connection's scopes do not show.
const hidden = "(hidden: needs %s)"

// redact hides the header and body words of r from a connection without
// read:headers or read:bodies: a rule another client proposed can carry what
// those scopes hide (a word it saw in a body).
func redact(ctx context.Context, r generated.Rule) generated.Rule {
	heads, bodies := hasScope(ctx, generated.ScopeReadHeaders), hasScope(ctx, generated.ScopeReadBodies)
	if heads && bodies {
		return r
	}
	fix := func(hs []generated.RuleHeader, ws []string) ([]generated.RuleHeader, []string) {
		var oh []generated.RuleHeader
		for _, h := range hs {
			if !heads {
				h.Contains = fmt.Sprintf(hidden, generated.ScopeReadHeaders)
			}
			oh = append(oh, h)
		}
		var ow []string
		for _, w := range ws {
			if !bodies {
				w = fmt.Sprintf(hidden, generated.ScopeReadBodies)
			}
			ow = append(ow, w)
		}
		return oh, ow
	}
	r.Match.Header, r.Match.Body = fix(r.Match.Header, r.Match.Body)
	for _, g := range []*[]generated.RuleCondition{&r.Match.Any, &r.Match.All, &r.Match.None} {
		cs := slices.Clone(*g)
		for i := range cs {
			cs[i].Header, cs[i].Body = fix(cs[i].Header, cs[i].Body)
		}
		*g = cs
	}
	return r
}

func ruleInfo(r generated.Rule) generated.RuleInfo {
	info := generated.RuleInfo{Rule: r, NeedsScopes: rules.NeedsOf(r).Scopes()}
	switch {
	case r.State == rules.Pending && rules.Forwards(r):
		info.WaitsFor = "the person's approval in a terminal (postern rules approve), as it forwards mail"
	case r.State == rules.Pending:
		info.WaitsFor = "the person's approval"
	}
	return info
}

// checker is what rules.Checker needs of this connection's accounts and store.
func (s *Service) checker(ctx context.Context) (rules.Checker, error) {
	accts, err := s.visibleNames()
	if err != nil {
		return rules.Checker{}, err
	}
	cfg, err := s.Config.Get()
	if err != nil {
		return rules.Checker{}, err
	}
	c := rules.Checker{Accounts: accts, SendAllowed: cfg.SendAllowed, Nearest: search.Nearest}
	if st, err := s.store(); err == nil {
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
func (s *Service) RulesList(ctx context.Context, a *generated.RulesListArgs) (*generated.RuleList, error) {
	all, err := s.loadRules()
	if err != nil {
		return nil, err
	}
	visible, err := s.visibleNames()
	if err != nil {
		return nil, err
	}
	res := &generated.RuleList{Rules: []generated.RuleInfo{}}
	for _, r := range rules.Ordered(all) {
		if r.Account != "" && !slices.Contains(visible, r.Account) {
			continue // a rule of a hidden account is hidden with it
		}
		if a.Account != nil && r.Account != "" && r.Account != *a.Account {
			continue
		}
		if a.State != nil && r.State != *a.State {
			continue
		}
		res.Rules = append(res.Rules, ruleInfo(redact(ctx, r)))
	}
	return res, nil
}

// RulesSchema implements rules_schema.
func (s *Service) RulesSchema(context.Context, *generated.RulesSchemaArgs) (*generated.RuleSchema, error) {
	b, err := generated.Files.ReadFile(generated.RuleSchemaFile)
	if err != nil {
		return nil, err
	}
	return &generated.RuleSchema{Schema: string(b)}, nil
}

// RulesCheck implements rules_check.
func (s *Service) RulesCheck(ctx context.Context, a *generated.RulesCheckArgs) (*generated.RuleCheck, error) {
	c, err := s.checker(ctx)
	if err != nil {
		return nil, err
	}
	ps := c.Problems(a.Rule)
	if err := needScopes(ctx, a.Rule, "tested, proposed or approved"); err != nil {
		ps = append(ps, err.Error())
	}
	return &generated.RuleCheck{Ok: len(ps) == 0, Problems: ps, NeedsScopes: rules.NeedsOf(a.Rule).Scopes()}, nil
}

// eachMessage calls f for every visible message (of folder, when set), newest
// first, with what the rules need read of it, until f returns false.
//
// Messages the person's projects keep from agents are left out (access.go); leftOut counts
// them, over the folder (or the accounts) whatever the rule.
func (s *Service) eachMessage(ctx context.Context, folder string, account *string, needs rules.Needs, f func(*rules.Message) bool) (leftOut int, err error) {
	st, err := s.store()
	if err != nil {
		return 0, err
	}
	accts, err := s.scopeAccounts(account)
	if err != nil {
		return 0, err
	}
	acc, err := s.access(ctx)
	if err != nil {
		return 0, err
	}
	hide, err := acc.mail(ctx, st)
	if err != nil {
		return 0, err
	}
	if leftOut, err = acc.leftOut(ctx, st, accts, folder); err != nil {
		return 0, err
	}
	var before int64
	for {
		rows, more, err := st.Messages(ctx, &store.Filter{Accounts: accts, Folder: folder, Before: before, Limit: 500, Hide: hide})
		if err != nil {
			return leftOut, err
		}
		for _, r := range rows {
			m := &rules.Message{Row: r}
			if needs.Headers || needs.Body {
				if b, err := st.Body(ctx, r.ID); err == nil {
					m.Headers, m.Text = b.Headers, b.Text
				}
			}
			if !f(m) {
				return leftOut, nil
			}
			before = r.ID
		}
		if !more || len(rows) == 0 {
			return leftOut, nil
		}
	}
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

// RulesTest implements rules_test.
func (s *Service) RulesTest(ctx context.Context, a *generated.RulesTestArgs) (*generated.RuleTest, error) {
	if err := needScopes(ctx, a.Rule, "tested"); err != nil {
		return nil, err
	}
	c, err := s.checker(ctx)
	if err != nil {
		return nil, err
	}
	if ps := c.Problems(a.Rule); len(ps) > 0 {
		return nil, fmt.Errorf("the rule cannot run: %s", strings.Join(ps, "; "))
	}
	r := a.Rule
	r.State = rules.Enabled
	res := &generated.RuleTest{Messages: []generated.MessageRow{}, Actions: describe(r.Actions)}
	now := time.Now()
	v := s.rowOwn()
	leftOut, err := s.eachMessage(ctx, deref(a.Folder), nil, rules.NeedsOf(r), func(m *rules.Message) bool {
		if rules.Matches(r, m, now) {
			res.Matched++
			if len(res.Messages) < a.Limit {
				res.Messages = append(res.Messages, messageRow(m.Row, rowView{own: v}))
			}
		}
		return true
	})
	res.LeftOut = nonZero(leftOut)
	return res, err
}

// RulesCoverage implements rules_coverage.
func (s *Service) RulesCoverage(ctx context.Context, a *generated.RulesCoverageArgs) (*generated.RuleCoverage, error) {
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
	res := &generated.RuleCoverage{Rules: []generated.RuleCount{}, UnmatchedSenders: []generated.SenderCount{}, Contested: []generated.Contested{}}
	counts := make([]generated.RuleCount, len(enabled))
	for i, r := range enabled {
		counts[i].Rule = r.Name
	}
	unmatched := map[string]int{}
	now := time.Now()
	leftOut, err := s.eachMessage(ctx, a.Folder, a.Account, rules.Needed(enabled), func(m *rules.Message) bool {
		res.Messages++
		var matched []string
		for i, r := range enabled {
			if rules.Matches(r, m, now) {
				counts[i].Matched++
				matched = append(matched, r.Name)
			}
		}
		runs := rules.Evaluate(enabled, m, now)
		for _, ap := range runs {
			counts[slices.IndexFunc(enabled, func(r generated.Rule) bool { return r.Name == ap.Rule })].Wins++
		}
		switch {
		case len(matched) == 0:
			unmatched[strings.ToLower(m.Row.From.Email)]++
		default:
			res.Matched++
			if len(matched) > 1 && len(res.Contested) < 50 {
				res.Contested = append(res.Contested, generated.Contested{ID: store.EncodeID(m.Row.ID), Rules: matched, Winner: winner(runs)})
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	res.Rules = counts
	res.LeftOut = nonZero(leftOut)
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

// RulesPropose implements rules_propose.
func (s *Service) RulesPropose(ctx context.Context, a *generated.RulesProposeArgs) (*generated.RuleInfo, error) {
	if err := needScopes(ctx, a.Rule, "proposed"); err != nil {
		return nil, err
	}
	c, err := s.checker(ctx)
	if err != nil {
		return nil, err
	}
	if ps := c.Problems(a.Rule); len(ps) > 0 {
		return nil, fmt.Errorf("the rule was not saved: %s", strings.Join(ps, "; "))
	}
	if err := s.refuseKeptRule(ctx, a.Rule); err != nil {
		return nil, err
	}
	r := a.Rule
	r.State, r.ProposedBy, r.LastActed = rules.Pending, clientName(ctx), ""
	if r.ProposedBy == "" {
		r.ProposedBy = "an agent"
	}
	err = rules.Update(s.rulesPath(), func(all []generated.Rule) ([]generated.Rule, error) {
		if i := rules.Find(all, r.Name); i >= 0 {
			if all[i].ProposedBy != r.ProposedBy {
				return nil, fmt.Errorf("a rule called %q exists already (proposed by %s); propose yours under another name", all[i].Name, all[i].ProposedBy)
			}
			all[i] = r // a change to one's own proposal or rule waits for the person again
			return all, nil
		}
		return append(all, r), nil
	})
	if err != nil {
		return nil, err
	}
	info := ruleInfo(r)
	return &info, nil
}

// changeRule applies change to the rule called name, refusing a hidden one.
func (s *Service) changeRule(ctx context.Context, name string, change func(r *generated.Rule) error) (*generated.RuleInfo, error) {
	visible, err := s.visibleNames()
	if err != nil {
		return nil, err
	}
	var out generated.Rule
	err = rules.Update(s.rulesPath(), func(all []generated.Rule) ([]generated.Rule, error) {
		i := rules.Find(all, name)
		if i < 0 || all[i].Account != "" && !slices.Contains(visible, all[i].Account) {
			names := []string{}
			for _, r := range all {
				names = append(names, r.Name)
			}
			msg := fmt.Sprintf("there is no rule %q; %s lists them", name, generated.ToolRulesList)
			if near := search.Nearest(name, names); len(near) > 0 {
				msg = fmt.Sprintf("there is no rule %q; the nearest: %s", name, strings.Join(near, ", "))
			}
			return nil, errors.New(msg)
		}
		if err := change(&all[i]); err != nil {
			return nil, err
		}
		out = all[i]
		if out.State == "" { // removed
			all = slices.Delete(all, i, i+1)
		}
		return all, nil
	})
	if err != nil {
		return nil, err
	}
	info := ruleInfo(redact(ctx, out))
	return &info, nil
}

// RulesWithdraw implements rules_withdraw.
func (s *Service) RulesWithdraw(ctx context.Context, a *generated.RulesWithdrawArgs) (*generated.RuleInfo, error) {
	client := clientName(ctx)
	return s.changeRule(ctx, a.Name, func(r *generated.Rule) error {
		if r.State != rules.Pending || r.ProposedBy != client {
			return fmt.Errorf("rule %q is %s and was proposed by %s; only a pending proposal of this client can be withdrawn", r.Name, r.State, r.ProposedBy)
		}
		r.State = "" // removed by changeRule
		return nil
	})
}

// RulesApprove implements rules_approve.
func (s *Service) RulesApprove(ctx context.Context, a *generated.RulesApproveArgs) (*generated.RuleInfo, error) {
	return s.changeRule(ctx, a.Name, func(r *generated.Rule) error {
		if err := needScopes(ctx, *r, "approved"); err != nil {
			return err
		}
		if r.State != rules.Pending {
			return fmt.Errorf("rule %q is %s, not pending; %s enables or disables an approved rule", r.Name, r.State, generated.ToolRulesSetEnabled)
		}
		if rules.Forwards(*r) {
			return nil // stays pending: only the person, in a terminal, enables a forward
		}
		r.State = rules.Enabled
		return nil
	})
}

// RulesReject implements rules_reject.
func (s *Service) RulesReject(ctx context.Context, a *generated.RulesRejectArgs) (*generated.RuleInfo, error) {
	return s.changeRule(ctx, a.Name, func(r *generated.Rule) error {
		if r.State != rules.Pending {
			return fmt.Errorf("rule %q is %s, not pending; disable it with %s instead", r.Name, r.State, generated.ToolRulesSetEnabled)
		}
		r.State = rules.Rejected
		return nil
	})
}

// RulesSetEnabled implements rules_set_enabled.
func (s *Service) RulesSetEnabled(ctx context.Context, a *generated.RulesSetEnabledArgs) (*generated.RuleInfo, error) {
	return s.changeRule(ctx, a.Name, func(r *generated.Rule) error {
		switch {
		case r.State == rules.Pending || r.State == rules.Rejected:
			return fmt.Errorf("rule %q is %s; only an approved rule is enabled or disabled", r.Name, r.State)
		case a.Enabled && rules.Forwards(*r) && r.State != rules.Enabled:
			return fmt.Errorf("rule %q forwards mail; only the person enables it, in a terminal (postern rules enable)", r.Name)
		case a.Enabled:
			r.State = rules.Enabled
		default:
			r.State = rules.Disabled
		}
		return nil
	})
}

// RulesMove implements rules_move.
func (s *Service) RulesMove(ctx context.Context, a *generated.RulesMoveArgs) (*generated.RuleList, error) {
	err := rules.Update(s.rulesPath(), func(all []generated.Rule) ([]generated.Rule, error) {
		i := rules.Find(all, a.Name)
		if i < 0 {
			return nil, fmt.Errorf("there is no rule %q; %s lists them", a.Name, generated.ToolRulesList)
		}
		r := all[i]
		all = slices.Delete(all, i, i+1)
		pos := min(a.Position-1, len(all))
		return slices.Insert(all, pos, r), nil
	})
	if err != nil {
		return nil, err
	}
	return s.RulesList(ctx, &generated.RulesListArgs{})
}

// planOf turns a rule's actions into one plan of act: flags first, then at
// most one move. A forward is not part of it.
func (s *Service) planOf(r generated.Rule) plan {
	p := plan{tool: generated.ToolRulesApplyExisting, what: "rule " + r.Name + ": " + strings.Join(describe(r.Actions), ", ")}
	for _, a := range r.Actions {
		switch a.Do {
		case "archive":
			p.dest = s.roleDest(source.RoleArchive, "Archive", "archive_folder")
		case "move":
			folder := a.Folder
			p.dest = func(ctx context.Context, st *store.Store, t *store.Target) (*store.FolderRef, error) {
				return st.FindFolder(ctx, t.Account, folder)
			}
		case "junk":
			p.add = append(p.add, kwJunk)
			p.dest = s.roleDest(source.RoleJunk, "Junk", "")
		case "delete":
			p.backup = true
			p.dest = s.roleDest(source.RoleTrash, "Trash", "")
		case "mark_read":
			p.add = append(p.add, `\Seen`)
		case "mark_unread":
			p.remove = append(p.remove, `\Seen`)
		case "flag":
			p.add = append(p.add, `\Flagged`)
		case "unflag":
			p.remove = append(p.remove, `\Flagged`)
		}
	}
	return p
}

// RulesApplyExisting implements rules_apply_existing.
func (s *Service) RulesApplyExisting(ctx context.Context, a *generated.RulesApplyExistingArgs) (*generated.ActionResult, error) {
	all, err := s.loadRules()
	if err != nil {
		return nil, err
	}
	i := rules.Find(all, a.Name)
	if i < 0 {
		return nil, fmt.Errorf("there is no rule %q; %s lists them", a.Name, generated.ToolRulesList)
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
	var ids []string
	now := time.Now()
	_, err = s.eachMessage(ctx, a.Folder, nil, rules.NeedsOf(r), func(m *rules.Message) bool {
		if rules.Matches(r, m, now) {
			ids = append(ids, store.EncodeID(m.Row.ID))
		}
		return len(ids) <= maxActed
	})
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("rule %q matches no stored message in %s, so nothing would change", r.Name, a.Folder)
	}
	if len(ids) > maxActed {
		return nil, fmt.Errorf("rule %q matches more than %d stored messages in %s; one action takes at most %d, so narrow the rule or run it folder by folder", r.Name, maxActed, a.Folder, maxActed)
	}
	return s.act(ctx, ids, nil, a.DryRun, s.planOf(r))
}

// refuseKeptRule refuses a proposed rule whose stored matches are all kept from agents by
// the person's projects: such a rule would act only inside a closed project. A rule that
// matches nothing yet, or some shown message, may be proposed. The answer says no more.
func (s *Service) refuseKeptRule(ctx context.Context, r generated.Rule) error {
	acc, err := s.access(ctx)
	if err != nil || !acc.active() {
		return err
	}
	st, err := s.store()
	if err != nil {
		return err
	}
	accts, err := s.visibleNames()
	if err != nil {
		return err
	}
	hide, err := acc.mail(ctx, st)
	if err != nil || hide == nil {
		return err
	}
	needs, now := rules.NeedsOf(r), time.Now()
	r.State = rules.Enabled
	kept, shown := 0, 0
	var before int64
	for shown == 0 {
		rows, more, err := st.Messages(ctx, &store.Filter{Accounts: accts, Before: before, Limit: 500})
		if err != nil {
			return err
		}
		for _, row := range rows {
			m := &rules.Message{Row: row}
			if needs.Headers || needs.Body {
				if b, err := st.Body(ctx, row.ID); err == nil {
					m.Headers, m.Text = b.Headers, b.Text
				}
			}
			if rules.Matches(r, m, now) {
				if hide.Keeps(row.ThreadID, acc.threads) {
					kept++
				} else {
					shown++
					break
				}
			}
			before = row.ID
		}
		if !more || len(rows) == 0 {
			break
		}
	}
	if kept > 0 && shown == 0 {
		return errors.New("the rule was not saved: every message it matches belongs to a project the person has not opened to agents; the person can open it (postern project open ID)")
	}
	return nil
}

package mailrules

import (
	"context"
	"fmt"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"slices"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/rules"
	"github.com/postern-mcp/postern/internal/sieve"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/imap"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
)

// rules_push and postern rules push: the enabled rules of one account, as
// one Sieve script on its server (internal/sieve), beside the person's own
// scripts. Both work the push out first (SievePlan), so that what is pushed
// is what was shown: the pair binds the script's digest into its token.

// SievePlan is a push of the rules to one account's server, worked out and
// not done.
type SievePlan struct {
	Account string
	// Script is what Push stores, whole.
	Script string
	// Translated is how many enabled rules of the account the script holds.
	Translated int
	// Local are the enabled rules of the account that Sieve cannot express.
	Local []sieve.Skipped
	// Expect is what pushing would do about the server's active script.
	Expect   sieve.Pushed
	acct     config.Account
	onServer []generated.Rule // the enabled rules the script holds
}

// PlanSievePush translates the enabled rules that apply to account (theirs
// and every account's) for its server's Sieve, has the server check the
// script, and says what pushing it would do, changing nothing.
func (s *Rules) PlanSievePush(ctx context.Context, account string) (*SievePlan, error) {
	ctx = s.OpenView(ctx) // not a tool: it opens its own view
	return s.planSievePush(ctx, account, nil)
}

// planSievePush is PlanSievePush; allow, when set, refuses an enabled rule
// of the account before anything is read from the server.
func (s *Rules) planSievePush(ctx context.Context, account string, allow func(generated.Rule) error) (*SievePlan, error) {
	acct, err := s.sieveAccount(ctx, account)
	if err != nil {
		return nil, err
	}
	cfg, err := s.Config.Get()
	if err != nil {
		return nil, err
	}
	all, err := s.loadRules()
	if err != nil {
		return nil, err
	}
	var mine []generated.Rule
	for _, r := range all {
		if r.State == rules.Enabled && (r.Account == "" || r.Account == acct.Name) {
			if allow != nil {
				if err := allow(r); err != nil {
					return nil, fmt.Errorf("rule %s: %w", r.Name, err)
				}
			}
			mine = append(mine, r)
		}
	}
	opt := sieve.Options{Account: acct.Name, ForwardAllowed: cfg.SendAllowed, Folders: map[string]string{}}
	if st, err := s.Store(ctx); err == nil {
		s.sieveFolders(ctx, st, acct, &opt)
	}
	sc, err := openScripts(ctx, acct)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	opt.Extensions = sc.Extensions()
	script, local := sieve.Translate(mine, opt)
	if err := sc.Check(ctx, script); err != nil {
		return nil, fmt.Errorf("the server would not run the script postern wrote from the rules (%w); nothing was changed, and the rules run at each postern sync meanwhile", err)
	}
	expect, err := sieve.Expect(ctx, sc)
	if err != nil {
		return nil, err
	}
	var held []generated.Rule
	for _, r := range mine {
		if !slices.ContainsFunc(local, func(k sieve.Skipped) bool { return k.Rule == r.Name }) {
			held = append(held, r)
		}
	}
	return &SievePlan{Account: acct.Name, Script: script, Translated: len(held), Local: local, Expect: expect, acct: acct, onServer: held}, nil
}

// sieveAccount is the visible account called name, if its kind has a server
// that can hold Sieve scripts.
func (s *Rules) sieveAccount(ctx context.Context, name string) (config.Account, error) {
	accts, err := s.Visible(ctx)
	if err != nil {
		return config.Account{}, err
	}
	names := make([]string, len(accts))
	for i, a := range accts {
		names[i] = a.Name
	}
	n, err := mail.FindAccount(name, names, "")
	if err != nil {
		return config.Account{}, err
	}
	for _, a := range accts {
		if a.Name != n {
			continue
		}
		if !kinds.Has(a.Kind, kinds.Scripts) {
			noun := a.Kind
			if k, ok := kinds.Lookup(a.Kind); ok {
				noun = k.Noun
			}
			return config.Account{}, fmt.Errorf("account %s is %s, which has no mail server to hold Sieve scripts; its rules run at each postern sync", a.Name, noun)
		}
		return a, nil
	}
	return config.Account{}, fmt.Errorf("account %s is no longer configured", name)
}

// sieveFolders fills opt's folders from the store: archive, junk and Trash
// by their role (archive also by the account's archive_folder), as the mail
// tools find them, and a move's folder by its name, as the server spells it.
func (s *Rules) sieveFolders(ctx context.Context, st *store.Store, acct config.Account, opt *sieve.Options) {
	for _, role := range []string{source.RoleArchive, source.RoleJunk, source.RoleTrash} {
		if f, err := st.RoleFolder(ctx, acct.Name, role); err == nil && f != nil {
			opt.Folders[role] = f.Name
		}
	}
	if opt.Folders[source.RoleArchive] == "" && acct.ArchiveFolder != "" {
		if f, err := st.FindFolder(ctx, acct.Name, acct.ArchiveFolder); err == nil {
			opt.Folders[source.RoleArchive] = f.Name
		}
	}
	opt.Resolve = func(folder string) (string, error) {
		f, err := st.FindFolder(ctx, acct.Name, folder)
		if err != nil {
			return "", fmt.Errorf("its folder %q is not one postern knows on account %s (%v); run postern sync, or fix the folder", folder, acct.Name, err)
		}
		return f.Name, nil
	}
}

// openScripts logs in to the account's ManageSieve server.
func openScripts(ctx context.Context, acct config.Account) (*imap.Scripts, error) {
	sc, err := imap.OpenScripts(ctx, acct)
	if err != nil {
		return nil, fmt.Errorf("%w; without ManageSieve the rules cannot run on the server, and they run at each postern sync instead", err)
	}
	return sc, nil
}

// PushSieve stores p's script on the server of p's account and makes it run
// beside the person's scripts (sieve.Push).
func (s *Rules) PushSieve(ctx context.Context, p *SievePlan) (*generated.SievePush, error) {
	ctx = s.OpenView(ctx) // not a tool: it opens its own view
	sc, err := openScripts(ctx, p.acct)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	done, err := sieve.Push(ctx, sc, p.Script)
	if err != nil {
		return nil, err
	}
	// From now on the server runs these rules on new mail; the sync's own run skips them
	// while they stay as pushed (a changed rule runs locally until it is pushed again).
	var running []generated.Rule
	if done.Outcome == sieve.Activated || done.Outcome == sieve.AlreadyActive || done.Outcome == sieve.Included {
		running = p.onServer
	}
	if st, err := s.Store(ctx); err == nil {
		if err := rules.SetOnServer(ctx, st, p.Account, running); err != nil {
			return nil, fmt.Errorf("the script is on the server, but postern could not note it (%v); until it can, a forward rule may be sent twice: run postern rules push again", err)
		}
	}
	out := &generated.SievePush{
		Account: p.Account, Script: done.Script, Digest: sieve.Digest(p.Script), Outcome: string(done.Outcome),
		Active: done.Active, IncludeLine: done.IncludeLine, Local: localRules(p.Local), Message: done.Message,
	}
	return out, nil
}

func localRules(sk []sieve.Skipped) []generated.SieveLocal {
	out := make([]generated.SieveLocal, len(sk))
	for i, k := range sk {
		out[i] = generated.SieveLocal{Rule: k.Rule, Reason: k.Reason}
	}
	return out
}

// RulesPush implements rules_push and rules_push_commit. A rule that looks
// at headers or body words needs their scopes here: the preview shows the
// script whole, and the script holds those words.
func (s *Rules) RulesPush(ctx context.Context, a *generated.RulesPushArgs) (*generated.Action, error) {
	p, err := s.planSievePush(ctx, a.ID, func(r generated.Rule) error {
		return needScopes(ctx, r, "pushed to the server here")
	})
	if err != nil {
		return nil, err
	}
	n := len(p.Script)
	what := fmt.Sprintf("store postern's Sieve script %q, with %d of the account's enabled rules, on the mail server of account %s", sieve.ScriptName, p.Translated, p.Account)
	if len(p.Local) > 0 {
		what += fmt.Sprintf(" (%d more stay local, named at the top of the script, and run at each postern sync)", len(p.Local))
	}
	pv := &generated.Prepared{
		Action:     what + ". " + p.Expect.Message,
		BodyLength: &n,
		BodyLines:  strings.Split(strings.TrimSuffix(p.Script, "\n"), "\n"),
		BodyDigest: sieve.Digest(p.Script),
	}
	return &generated.Action{
		Account: p.Account,
		Preview: pv,
		// What the commit does: this script, with this outcome for the active one.
		Payload: struct {
			Kind, Digest, Outcome, Active string
		}{generated.ToolRulesPush, sieve.Digest(p.Script), string(p.Expect.Outcome), p.Expect.Active},
		Run: func(ctx context.Context) (any, error) { return s.PushSieve(ctx, p) },
	}, nil
}

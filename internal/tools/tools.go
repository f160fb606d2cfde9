// Package tools implements the catalog's tools (the generated Handlers
// interface) and the resources the server offers. Service composes the domain
// packages under internal/tools, one per catalog file, each implementing its
// file's interface, and names what the command line runs of them (rules at
// sync, the Sieve push, project holds). Every handler reads the configuration and the store through the view
// dispatch opens for its call (package view); it never returns an account's
// secret or how it is obtained.
package tools

import (
	"context"
	"sync"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/projects"
	srcnotes "github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/actions"
	"github.com/postern-mcp/postern/internal/tools/attachments"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/calwrite"
	"github.com/postern-mcp/postern/internal/tools/core"
	"github.com/postern-mcp/postern/internal/tools/holds"
	"github.com/postern-mcp/postern/internal/tools/invite"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"github.com/postern-mcp/postern/internal/tools/mailrules"
	"github.com/postern-mcp/postern/internal/tools/notes"
	"github.com/postern-mcp/postern/internal/tools/unsubscribe"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// Service implements generated.Handlers.
type Service struct {
	Version string
	Config  *config.Watcher
	// Only, when not empty, is the set of account names this connection may see
	// (postern mcp --account); every other account is hidden from every tool.
	Only []string
	// StorePath is the store's file; the call's view opens it on first use (package view).
	StorePath string
	// SaveDir is postern mcp --save-dir: the folder attachments are saved in, over the
	// configuration's save_dir (package attachments).
	SaveDir string
	// Sync runs a sync of the given accounts (mail_sync); nil when this process cannot sync.
	Sync func(ctx context.Context, accounts []config.Account) ([]mailsync.Outcome, error)

	mu    sync.Mutex
	views *view.Opener // made from the fields above at first use
	k     *kit.Kit     // made from the fields above at first use

	// The domains, one per catalog file (package doc): each implements its interface of
	// generated.Handlers over the kit, set at the first view.
	mail.Mail
	calendars.Calendars
	calwrite.CalWrite
	actions.Actions
	invite.Invite
	mailrules.Rules
	core.Core
	notes.Notes
	attachments.Attachments
	unsubscribe.Unsubscribe
}

// kit returns what the domain packages share, made from the fields at first use.
func (s *Service) kit() *kit.Kit {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.k == nil {
		s.k = &kit.Kit{Version: s.Version, Config: s.Config, SaveDir: s.SaveDir, Sync: s.Sync}
		s.Mail.Kit, s.Mail.Invitation = s.k, s.Invite.InvitationView
		s.Notes.Kit = s.k
		s.Calendars.Kit = s.k
		s.CalWrite.Kit, s.CalWrite.Calendars = s.k, &s.Calendars
		s.Invite.Kit, s.Invite.Mail, s.Invite.Calendars = s.k, &s.Mail, &s.Calendars
		s.Rules.Kit, s.Rules.Mail, s.Rules.Actions, s.Rules.OpenView = s.k, &s.Mail, &s.Actions, s.OpenView
		s.Actions.Kit, s.Actions.Mail, s.Actions.Calendars, s.Actions.CalWrite = s.k, &s.Mail, &s.Calendars, &s.CalWrite
		s.Core.Kit = s.k
		s.Attachments.Kit, s.Attachments.FindMessage = s.k, s.Mail.Message
		s.Unsubscribe.Kit, s.Unsubscribe.Mail = s.k, &s.Mail
	}
	return s.k
}

func (s *Service) opener() *view.Opener {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.views == nil {
		s.views = &view.Opener{Config: s.Config, Only: s.Only, StorePath: s.StorePath}
	}
	return s.views
}

// OpenView implements dispatch.Views: it returns ctx carrying the view of the call ctx
// describes, which every handler reads what it may see from. Besides dispatch, only the
// entry points that are not tools call it (resources, and what the person runs: rules at
// sync, notes indexing, Sieve push, project holds).
func (s *Service) OpenView(ctx context.Context) context.Context {
	s.kit() // the domains' kit, before any of them runs
	return s.opener().Open(ctx)
}

// RefreshNotes indexes the configured notes folders, as every notes tool does first; postern
// sync calls it. It returns nil and no error when no notes folder is configured.
func (s *Service) RefreshNotes(ctx context.Context) (*srcnotes.Result, []string, error) {
	return s.Notes.RefreshNotes(s.OpenView(ctx)) // not a tool: it opens its own view
}

// RuleRun is what the rules did to one account's new mail at a sync (package mailrules).
type RuleRun = mailrules.RuleRun

// SievePlan is a Sieve push worked out and not yet done (package mailrules).
type SievePlan = mailrules.SievePlan

// RulesClient is the client the action log names for what rules did at a sync.
const RulesClient = mailrules.RulesClient

// ApplyRules runs the enabled rules over the accounts' new mail; postern sync calls it.
// Not a tool: it opens its own view, the person's (package mailrules).
func (s *Service) ApplyRules(ctx context.Context, accounts []string) ([]RuleRun, error) {
	s.kit()
	return s.Rules.ApplyRules(ctx, accounts)
}

// PlanSievePush says what pushing the rules to account's Sieve would do, changing nothing
// (postern rules push). Not a tool: it opens its own view (package mailrules).
func (s *Service) PlanSievePush(ctx context.Context, account string) (*SievePlan, error) {
	s.kit()
	return s.Rules.PlanSievePush(ctx, account)
}

// PushSieve does what p planned. Not a tool: it opens its own view (package mailrules).
func (s *Service) PushSieve(ctx context.Context, p *SievePlan) (*generated.SievePush, error) {
	s.kit()
	return s.Rules.PushSieve(ctx, p)
}

// RouteHold is what one route of a project holds now (package holds).
type RouteHold = holds.RouteHold

// ProjectHolds says, for each route and tie of p (one entry per value), what it holds in the
// local store now. The store must exist (the caller checks: opening would make it).
func (s *Service) ProjectHolds(ctx context.Context, p *projects.Project) ([]RouteHold, error) {
	ctx = s.OpenView(ctx) // not a tool: it opens its own view
	return holds.Of(ctx, s.kit(), p)
}

// store returns the store through the call's view; without one, ErrNoView.
func (s *Service) store(ctx context.Context) (*store.Store, error) {
	v, err := view.From(ctx)
	if err != nil {
		return nil, err
	}
	return v.Store()
}

// Close closes the store if a call opened it.
func (s *Service) Close() error {
	s.mu.Lock()
	o := s.views
	s.mu.Unlock()
	if o != nil {
		return o.Close()
	}
	return nil
}

var (
	_ generated.Handlers = (*Service)(nil)
	_ dispatch.Views     = (*Service)(nil)
)

// visibleNames returns the names of the accounts this connection may see.
func (s *Service) visibleNames(ctx context.Context) ([]string, error) {
	return s.kit().VisibleNames(ctx)
}

// MaxShowText and MaxHeaderText are kit's, named here for the tests of the command line.
const (
	MaxShowText   = kit.MaxShowText
	MaxHeaderText = kit.MaxHeaderText
)

package catalog

import "strings"

// Word is one name of the catalog's fixed vocabulary (effects, phases) with
// the one line the generator prints beside its constant.
type Word struct {
	Name string
	Doc  string
}

// The effects and phases, for the generator's own rules (it cannot import
// package generated, which it writes).
const (
	EffectNone         = "none"
	EffectLocalWrite   = "local_write"
	EffectRemoteWrite  = "remote_write"
	EffectReversible   = "reversible"
	EffectSend         = "send"
	EffectDelete       = "delete"
	EffectIrreversible = "irreversible"
	PhasePrepare       = "prepare"
	PhaseCommit        = "commit"
)

// Effects is every effect a tool may declare, in the order of the enum in
// catalog.schema.json (TestEffectsMatchSchema keeps the two equal).
var Effects = []Word{
	{EffectNone, "The tool reads and changes nothing."},
	{EffectLocalWrite, "The tool writes only on this computer: postern's own store (a *_sync tool) or a new file in the person's save folder; it changes nothing on a server."},
	{EffectRemoteWrite, "The tool adds to the account what sends and removes nothing (saves a draft) and is neither undone nor approved; it is a prepare_commit pair whose catalog entry says why in not_undoable."},
	{EffectReversible, "The tool changes the account in a way postern can put back (move, mark, junk, delete to Trash with a backup; write an event or a task, its previous text kept): it takes dry_run and answers with the action_id that undoes it; no approval."},
	{EffectSend, "The tool sends mail, which cannot be undone; its commit waits for the person's approval."},
	{EffectDelete, "The tool deletes, which cannot be undone; its commit waits for the person's approval."},
	{EffectIrreversible, "The tool makes a change postern can neither log nor call back (leaving a mailing list, a Sieve script the server then runs); its commit waits for the person's approval."},
}

// Phases are the halves of a prepare_commit pair, as ToolSpec.Phase names them.
var Phases = []Word{
	{PhasePrepare, "The first half of a prepare_commit pair: checks the arguments and previews the action, doing nothing."},
	{PhaseCommit, "The second half of a prepare_commit pair (NAME" + CommitSuffix + "): does what the prepare half previewed, for its token."},
}

// ConstName is the Go constant the generator emits for a catalog name:
// kind "Tool", "Scope", "Effect", "Phase" or "Preset" followed by the name in
// CamelCase, split on ':' and '_' (read:bodies → ScopeReadBodies).
func ConstName(kind, name string) string {
	return kind + GoName(strings.ReplaceAll(name, ":", "_"))
}

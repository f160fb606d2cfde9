package main

import (
	"encoding/json"
	"io"

	"github.com/postern-mcp/postern/generated"
	"github.com/spf13/cobra"
)

// postern actions and postern undo: the action log and mail_undo from a
// terminal. The person at the terminal owns the mail, calendars and task
// lists, so these grant mail:modify (and undo calendar:write and tasks:write,
// which undoing an event's or task's change needs) whatever the configuration
// grants agents; everything else (the store, the audit log, masks) is as for
// postern call.

func newActionsCmd(stdout, stderr io.Writer) *cobra.Command {
	var f serverFlags
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "actions",
		Short: "list the actions agents took on your mail, newest first",
		Long: `List the actions taken through postern on your mail (archive, move, mark,
junk, delete), events and tasks (create, change, cancel, complete, delete) and
their undos, newest first: what, when, which client, how many messages, events
or tasks, and whether each was undone. postern undo ID puts one back.`,
		Example: "  postern actions\n  postern actions --limit 50 --json",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			raw, _ := json.Marshal(map[string]any{"limit": limit})
			return ownerCall(&f, generated.ToolMailActions, raw, asJSON, stdout, stderr)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the structured result as JSON")
	cmd.Flags().IntVar(&limit, "limit", 20, "how many actions at most (1 to 200)")
	return cmd
}

func newUndoCmd(stdout, stderr io.Writer) *cobra.Command {
	var f serverFlags
	var asJSON, dryRun bool
	cmd := &cobra.Command{
		Use:   "undo ACTION_ID",
		Short: "put back what one action did",
		Long: `Put back what one action did (postern actions lists them): folders, flags,
a deleted message from its backup when the server no longer has it, and an
event or task exactly as it was, if nobody changed it on the server since. Each
row says put_back, restored, or why it was left alone.`,
		Example: "  postern undo a12 --dry-run\n  postern undo a12",
		Args:    exactArgs(1, "the id of the action to undo, such as a12 (postern actions lists them)"),
		RunE: func(_ *cobra.Command, args []string) error {
			raw, _ := json.Marshal(map[string]any{"id": args[0], "dry_run": dryRun})
			return ownerCall(&f, generated.ToolMailUndo, raw, asJSON, stdout, stderr, generated.ScopeCalendarWrite, generated.ScopeTasksWrite)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the structured result as JSON")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only say what would be put back")
	return cmd
}

// ownerCall calls tool as postern call does, granted the tool's own scope and extra
// besides the ones --scopes gives.
func ownerCall(f *serverFlags, tool string, raw json.RawMessage, asJSON bool, stdout, stderr io.Writer, extra ...string) error {
	scope := ""
	for _, t := range generated.Tools {
		if t.Name == tool {
			scope = t.Scope
		}
	}
	for _, e := range extra {
		scope += "," + e
	}
	if f.scopes == "" {
		f.scopes = scope
	} else {
		f.scopes += "," + scope
	}
	return cmdCall(f, asJSON, []string{tool, string(raw)}, stdout, stderr)
}

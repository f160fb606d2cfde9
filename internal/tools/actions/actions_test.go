package actions_test

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// TestReadOnlyAccountRefusesEveryChange: on a Maildir import, moves and marks are refused,
// dry runs too, with a sentence naming the account; nothing reaches the action log, the
// message keeps its flags, and undoing an action that does not exist says so.
func TestReadOnlyAccountRefusesEveryChange(t *testing.T) {
	m := newMailbox(t, map[string]string{
		"1.a:2,": "From: ann@example.com\r\nTo: sam@example.com\r\nSubject: one\r\nDate: Mon, 2 Jun 2025 09:00:00 +0000\r\nMessage-ID: <1@example.com>\r\n\r\nText.\r\n",
	})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{generated.ToolMailMark, map[string]any{"query": "subject:one", "how": "read", "dry_run": true}},
		{generated.ToolMailMark, map[string]any{"query": "subject:one", "how": "read"}},
		{generated.ToolMailMove, map[string]any{"query": "subject:one", "to": "archive", "dry_run": true}},
		{generated.ToolMailMove, map[string]any{"query": "subject:one", "to": "trash"}},
	} {
		_, text, isErr := m.call("read,mail:modify", c.tool, c.args)
		if !isErr || !strings.Contains(text, "Account local is a read-only maildir import") {
			t.Errorf("%s %v on a Maildir import: want the refusal naming the account: %v %s", c.tool, c.args, isErr, text)
		}
	}
	sc, text := m.must("read,mail:modify", generated.ToolMailActions, map[string]any{})
	if acts := rows(sc, "actions"); len(acts) != 0 {
		t.Errorf("refused changes were logged: %s", text)
	}
	sc, text = m.must("read", generated.ToolMailSearch, map[string]any{"query": "subject:one is:unread"})
	if len(rows(sc, "messages")) != 1 {
		t.Errorf("the refused mark changed the message: %s", text)
	}
	if _, text, isErr := m.call("read,mail:modify", generated.ToolMailUndo, map[string]any{"id": "a1"}); !isErr || !strings.Contains(text, "no action a1") {
		t.Errorf("mail_undo of an action that does not exist: want a refusal saying so: %s", text)
	}
}

package mailrules_test

import (
	"testing"

	"github.com/postern-mcp/postern/internal/testing/toolstest"
)

// mailbox is the real tools behind the real dispatch over a synced Maildir
// (internal/testing/toolstest), as this package's tests call them.
type mailbox struct{ *toolstest.Mailbox }

// call runs a tool under scopes: its structured content, its text and whether it is an error.
func (m *mailbox) call(scopes, tool string, args map[string]any) (map[string]any, string, bool) {
	m.T.Helper()
	return m.Call(scopes, tool, args)
}

// must is call for an answer that must not be an error.
func (m *mailbox) must(scopes, tool string, args map[string]any) (map[string]any, string) {
	m.T.Helper()
	return m.Must(scopes, tool, args)
}

func newMailbox(t *testing.T, msgs map[string]string) *mailbox {
	t.Helper()
	return &mailbox{toolstest.New(t, msgs)}
}

func unframe(t *testing.T, s string) string {
	t.Helper()
	return toolstest.Unframe(t, s)
}

const bodies = toolstest.Bodies

func rows(sc map[string]any, key string) []map[string]any { return toolstest.Rows(sc, key) }

// Package toolstest gives the tests of the tools' domain packages the real tools behind the
// real dispatch (validation, boundary, text form) over a Maildir synced into a store, in a
// HOME and XDG folders of the test's own.
package toolstest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/source/maildir"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools"
)

// Bodies is the grant that reads message text.
const Bodies = generated.ScopeRead + "," + generated.ScopeReadBodies

// Mailbox is the real tools behind the real dispatch.
type Mailbox struct {
	T   *testing.T
	Reg *dispatch.Registry
	// Era is the calls' era: "" for the terminal's (dispatch.EraCLI), "legacy" for an
	// agent's (the person's projects keep things only from agents).
	Era string
}

// Call runs a tool under scopes and returns its structured content, its text and whether it
// is an error.
func (m *Mailbox) Call(scopes, tool string, args map[string]any) (map[string]any, string, bool) {
	m.T.Helper()
	g, err := dispatch.ParseGrant(scopes)
	if err != nil {
		m.T.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	era := m.Era
	if era == "" {
		era = dispatch.EraCLI
	}
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: era, Scopes: strings.Split(scopes, ",")})
	res, err := m.Reg.Call(ctx, tool, raw, g)
	if err != nil {
		m.T.Fatalf("%s: %v", tool, err)
	}
	var sc map[string]any
	if res.Structured != nil {
		if err := json.Unmarshal(res.Structured, &sc); err != nil {
			m.T.Fatalf("%s: %v", tool, err)
		}
	}
	return sc, res.Text, res.IsError
}

// Must is Call for an answer that must not be an error.
func (m *Mailbox) Must(scopes, tool string, args map[string]any) (map[string]any, string) {
	m.T.Helper()
	sc, text, isErr := m.Call(scopes, tool, args)
	if isErr {
		m.T.Fatalf("%s %v: %s", tool, args, text)
	}
	return sc, text
}

// Rows returns the list sc[key] as maps.
func Rows(sc map[string]any, key string) []map[string]any {
	var out []map[string]any
	list, _ := sc[key].([]any)
	for _, x := range list {
		out = append(out, x.(map[string]any))
	}
	return out
}

// New writes msgs (file name → raw message) into a Maildir's cur, syncs it as account
// "local" and returns the tools over it.
func New(t *testing.T, msgs map[string]string) *Mailbox {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, raw := range msgs {
		if err := os.WriteFile(filepath.Join(md, "cur", name), []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "config.toml")
	acct := config.Account{Name: "local", Kind: maildir.KindName, Path: md, Address: "sam@example.com"}
	if err := config.AddAccount(cfg, acct); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(dir, "store.db")
	st, err := store.Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := mailsync.Run(context.Background(), st, []config.Account{acct}, mailsync.Options{})
	st.Close()
	if err != nil || len(outs) != 1 || outs[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, outs)
	}
	svc := &tools.Service{Version: "test", Config: config.NewWatcher(cfg), StorePath: storePath}
	reg, err := dispatch.New(svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(); svc.Close() })
	return &Mailbox{T: t, Reg: reg}
}

// Unframe returns the text between a frame's marker lines.
func Unframe(t *testing.T, s string) string {
	t.Helper()
	lines := strings.Split(s, "\n")
	if len(lines) < 2 || !strings.HasSuffix(lines[0], " begins>>>") || !strings.HasSuffix(lines[len(lines)-1], " ends>>>") {
		t.Fatalf("not a frame: %q", s)
	}
	return strings.Join(lines[1:len(lines)-1], "\n")
}

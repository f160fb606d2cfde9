package actions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools"
)

// mailbox is the real tools behind the real dispatch (validation, boundary, text form),
// as internal/tools' own tests call them.
type mailbox struct {
	t   *testing.T
	reg *dispatch.Registry
	// era is the calls' era: "" for the terminal's (dispatch.EraCLI), "legacy" for an
	// agent's (the person's projects keep things only from agents).
	era string
}

// call runs a tool under scopes and returns its structured content, its text
// and whether it is an error.
func (m *mailbox) call(scopes, tool string, args map[string]any) (map[string]any, string, bool) {
	m.t.Helper()
	g, err := dispatch.ParseGrant(scopes)
	if err != nil {
		m.t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	era := m.era
	if era == "" {
		era = dispatch.EraCLI
	}
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: era, Scopes: strings.Split(scopes, ",")})
	res, err := m.reg.Call(ctx, tool, raw, g)
	if err != nil {
		m.t.Fatalf("%s: %v", tool, err)
	}
	var sc map[string]any
	if res.Structured != nil {
		if err := json.Unmarshal(res.Structured, &sc); err != nil {
			m.t.Fatalf("%s: %v", tool, err)
		}
	}
	return sc, res.Text, res.IsError
}

// must is call for an answer that must not be an error.
func (m *mailbox) must(scopes, tool string, args map[string]any) (map[string]any, string) {
	m.t.Helper()
	sc, text, isErr := m.call(scopes, tool, args)
	if isErr {
		m.t.Fatalf("%s %v: %s", tool, args, text)
	}
	return sc, text
}

// rows returns the list sc[key] as maps.
func rows(sc map[string]any, key string) []map[string]any {
	var out []map[string]any
	list, _ := sc[key].([]any)
	for _, x := range list {
		out = append(out, x.(map[string]any))
	}
	return out
}

const bodies = "read,read:bodies"

// newMailbox writes msgs (file name → raw message) into a Maildir's cur,
// syncs it as account "local" and returns the tools over it.
func newMailbox(t *testing.T, msgs map[string]string) *mailbox {
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
	acct := config.Account{Name: "local", Kind: "maildir", Path: md, Address: "sam@example.com"}
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
	return &mailbox{t: t, reg: reg}
}

// unframe returns the text between a frame's marker lines.
func unframe(t *testing.T, s string) string {
	t.Helper()
	lines := strings.Split(s, "\n")
	if len(lines) < 2 || !strings.HasSuffix(lines[0], " begins>>>") || !strings.HasSuffix(lines[len(lines)-1], " ends>>>") {
		t.Fatalf("not a frame: %q", s)
	}
	return strings.Join(lines[1:len(lines)-1], "\n")
}

package dispatch

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
)

func TestGranterFlagWins(t *testing.T) {
	read := func() (*config.Config, error) {
		return &config.Config{MCP: config.MCP{Scopes: []string{generated.ScopeMailSend}}}, nil
	}
	grant, err := Granter(generated.ScopeRead, read, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := grant().Sorted(); !reflect.DeepEqual(got, []string{generated.ScopeRead}) {
		t.Fatalf("--scopes %s granted %v", generated.ScopeRead, got)
	}
	if _, err := Granter("read,nosuchscope", read, nil); err == nil || !strings.Contains(err.Error(), `"nosuchscope"`) {
		t.Fatalf("an unknown --scopes gave %v, want it named", err)
	}
}

// Without --scopes the configuration decides, read again at each call: an edit of [mcp]
// scopes takes effect at once, an unknown scope is left out and said once, and a
// configuration that sets none or cannot be read grants the defaults.
func TestGranterFollowsConfiguration(t *testing.T) {
	cfg := &config.Config{MCP: config.MCP{Scopes: []string{generated.ScopeRead, "nosuchscope"}}}
	var readErr error
	var warned []string
	grant, err := Granter("", func() (*config.Config, error) { return cfg, readErr }, func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := grant().Sorted(); !reflect.DeepEqual(got, []string{generated.ScopeRead}) {
			t.Fatalf("granted %v, want only %s", got, generated.ScopeRead)
		}
	}
	cfg = &config.Config{MCP: config.MCP{Scopes: []string{generated.ScopeRead, generated.ScopeReadBodies, "nosuchscope"}}}
	if got := grant(); !got[generated.ScopeReadBodies] || len(got) != 2 {
		t.Fatalf("after the edit granted %v", got.Sorted())
	}
	if !reflect.DeepEqual(warned, []string{"nosuchscope"}) {
		t.Fatalf("warned %v, want the unknown scope once", warned)
	}
	if w := UnknownScopeWarning("nosuchscope"); !strings.Contains(w, `"nosuchscope"`) || !strings.Contains(w, generated.ScopeRead) {
		t.Fatalf("warning %q", w)
	}
	cfg = &config.Config{}
	if got := grant().Sorted(); !reflect.DeepEqual(got, DefaultGrant().Sorted()) {
		t.Fatalf("no [mcp] scopes granted %v, want the defaults", got)
	}
	cfg, readErr = nil, errors.New("broken")
	if got := grant().Sorted(); !reflect.DeepEqual(got, DefaultGrant().Sorted()) {
		t.Fatalf("an unreadable configuration granted %v, want the defaults", got)
	}
}

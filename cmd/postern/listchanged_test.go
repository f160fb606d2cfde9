package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolListChangedSeenBySDK: a person widens the grant in the configuration while a host
// stays connected; the official Go SDK client is told the list changed, lists again and sees the
// body tools; narrowing the grant tells it again and the tools go.
func TestToolListChangedSeenBySDK(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := t.TempDir()
	cfgDir := filepath.Join(h, ".config", "postern")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "config.toml")
	writeScopes := func(scopes string) {
		t.Helper()
		// Written aside and renamed, as editors do, so the server never reads half a file.
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte("[mcp]\nscopes = ["+scopes+"]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil {
			t.Fatal(err)
		}
	}
	writeScopes(`"read"`)
	cmd := exec.Command(binary, "mcp")
	cmd.Env = append(os.Environ(), "HOME="+h, "XDG_CONFIG_HOME="+filepath.Join(h, ".config"),
		"XDG_DATA_HOME="+filepath.Join(h, ".local/share"), "XDG_STATE_HOME="+filepath.Join(h, ".local/state"))
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-listchanged", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("initialize does not announce tools.listChanged: %+v", caps.Tools)
	}
	names := func() []string {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(15 * time.Second):
			t.Fatalf("no notifications/tools/list_changed within 15 s after %s", what)
		}
	}
	before := names()
	if slices.Contains(before, "mail_show") {
		t.Fatalf("read alone lists mail_show: %v", before)
	}
	// The same file written again with the same grant is no change and sends nothing.
	time.Sleep(300 * time.Millisecond)
	writeScopes(`"read"`)
	select {
	case <-changed:
		t.Fatal("list_changed sent though the grant stayed the same")
	case <-time.After(2500 * time.Millisecond):
	}
	writeScopes(`"read", "read:bodies"`)
	wait("granting read:bodies")
	if after := names(); !slices.Contains(after, "mail_show") {
		t.Fatalf("after granting read:bodies the list is %v", after)
	}
	writeScopes(`"read"`)
	wait("taking read:bodies back")
	if after := names(); slices.Contains(after, "mail_show") {
		t.Fatalf("after taking read:bodies back the list still has mail_show: %v", after)
	}
}

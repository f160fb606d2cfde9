package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools"
)

// cmdDemo builds a sample mailbox in a temporary folder, imports it into a
// temporary store and prints a scripted session as an agent sees it. It needs
// no account and no network, and leaves nothing behind.
func cmdDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr, "Usage: postern demo [--messages N]\n\nA sample mailbox in a temporary store, and what an agent sees of it.\n\nFlags:\n")
	n := fs.Int("messages", 400, "messages in the sample mailbox")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "postern-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	maildir := filepath.Join(dir, "Maildir")
	count, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: 7, Messages: *n})
	if err != nil {
		return fmt.Errorf("building the sample mailbox: %w", err)
	}
	cfgPath := filepath.Join(dir, "config.toml")
	acct := config.Account{Name: "demo", Kind: "maildir", Path: maildir}
	if err := config.AddAccount(cfgPath, acct); err != nil {
		return err
	}
	st, err := store.Open(filepath.Join(dir, "store.db"))
	if err != nil {
		return err
	}
	outs, err := mailsync.Run(context.Background(), st, []config.Account{acct}, mailsync.Options{})
	st.Close()
	if err != nil {
		return err
	}
	if len(outs) == 1 && outs[0].Error != "" {
		return fmt.Errorf("importing the sample mailbox: %s", outs[0].Error)
	}
	fmt.Fprintf(stdout, "postern demo: %d generated messages (reserved example.* domains only) imported into a temporary store.\n", count)
	fmt.Fprintln(stdout, "Below, each call an agent makes and the text it gets back.")

	svc := &tools.Service{Version: postVersion(), Config: config.NewWatcher(cfgPath), StorePath: filepath.Join(dir, "store.db")}
	defer svc.Close()
	reg, err := dispatch.New(svc)
	if err != nil {
		return err
	}
	grant, _ := dispatch.ParseGrant("read,read:bodies")
	call := func(g dispatch.Grant, tool string, args map[string]any) map[string]any {
		raw, _ := json.Marshal(args)
		fmt.Fprintf(stdout, "\n── agent calls %s %s (scopes: %s)\n", tool, raw, strings.Join(g.Sorted(), ", "))
		ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: "cli", ClientName: "demo", Scopes: g.Sorted(), ToolCount: len(reg.Allowed(g))})
		res, err := reg.Call(ctx, tool, raw, g)
		if err != nil {
			fmt.Fprintf(stdout, "error: %v\n", err)
			return nil
		}
		text := res.Text
		if lines := strings.Split(text, "\n"); len(lines) > 14 {
			text = strings.Join(lines[:14], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-14)
		}
		if res.IsError {
			fmt.Fprintf(stdout, "refused (isError): %s\n", text)
			return nil
		}
		fmt.Fprintln(stdout, text)
		var out map[string]any
		json.Unmarshal(res.Structured, &out)
		return out
	}
	call(grant, "status", nil)
	call(grant, "mail_folders", nil)
	list := call(grant, "mail_list", map[string]any{"limit": 5, "fields": []string{"date", "from", "subject", "flags"}})
	call(grant, "mail_search", map[string]any{"query": "has:attachment after:2025-06-01", "limit": 3, "fields": []string{"date", "from", "subject", "attachments"}})
	call(grant, "mail_senders", map[string]any{"by": "domain", "limit": 5})
	if msgs, ok := list["messages"].([]any); ok && len(msgs) > 0 {
		id := msgs[0].(map[string]any)["id"]
		call(grant, "mail_show", map[string]any{"id": id})
		call(grant, "mail_thread", map[string]any{"id": id})
		readOnly, _ := dispatch.ParseGrant("read")
		call(readOnly, "mail_show", map[string]any{"id": id})
	}
	call(grant, "mail_search", map[string]any{"query": "before:tomorrow"})
	fmt.Fprintln(stdout, "\nNo tool that writes, moves or sends mail exists yet: those come as prepare/commit pairs that the person approves.")
	fmt.Fprintln(stdout, "The temporary store is deleted now. Connect your own mail with postern account add and postern sync.")
	return nil
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// TestForgedMail: Authentication-Results from the trusted authserv-id saying
// DMARC failed marks the message forged in every row that shows it; the same
// claim from any other authserv-id changes nothing.
func TestForgedMail(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	msg := func(n int, ar string) []byte {
		return []byte(fmt.Sprintf("Authentication-Results: %s\r\nMessage-ID: <forged-%d@example.org>\r\nDate: Mon, 2 Jun 2025 10:0%d:00 +0000\r\nFrom: Bank <security@bank.example.com>\r\nTo: sam.rivera@example.com\r\nSubject: Urgent account check %d\r\n\r\nPlease confirm.\r\n", ar, n, n, n))
	}
	u.AddMessage(t, "INBOX", msg(1, "mx.example.net; spf=fail smtp.mailfrom=bank.example.com; dkim=none; dmarc=fail (p=reject) header.from=bank.example.com"), "")
	u.AddMessage(t, "INBOX", msg(2, "mx.example.net; spf=pass; dkim=pass header.d=bank.example.com; dmarc=pass"), "")
	u.AddMessage(t, "INBOX", msg(3, "attacker.example.org; dmarc=pass"), "")
	u.AddMessage(t, "INBOX", msg(4, "evil.example.org; dmarc=fail"), "")
	env, cfg, _ := imapHome(t, u, srv.Addr, "none")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(b, []byte("trusted_authserv_ids = [\"mx.example.net\"]\n")...), 0o600)
	if out, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatalf("sync: %s %s", out, errOut)
	}
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	forged := func(r map[string]any, where string) map[string]bool {
		out := map[string]bool{}
		sc, _ := json.Marshal(r["structuredContent"])
		var v struct {
			Messages []map[string]any `json:"messages"`
			Message  map[string]any   `json:"message"`
		}
		json.Unmarshal(sc, &v)
		rows := v.Messages
		if v.Message != nil {
			rows = append(rows, v.Message)
		}
		for _, m := range rows {
			out[m["subject"].(string)] = m["forged"] == true
		}
		if len(rows) == 0 {
			t.Fatalf("%s: no rows", where)
		}
		return out
	}
	want := map[string]bool{"Urgent account check 1": true, "Urgent account check 2": false, "Urgent account check 3": false, "Urgent account check 4": false}
	list := result(t, s.rpc(1, "tools/call", map[string]any{"name": "mail_list"}))
	got := forged(list, "mail_list")
	for k, w := range want {
		if got[k] != w {
			t.Errorf("mail_list: %s forged=%v, want %v", k, got[k], w)
		}
	}
	if !strings.Contains(callText(list), "forged: true") {
		t.Errorf("the text of mail_list does not say forged")
	}
	search := result(t, s.rpc(2, "tools/call", map[string]any{"name": "mail_search", "arguments": map[string]any{"query": "urgent"}}))
	for k, w := range want {
		if forged(search, "mail_search")[k] != w {
			t.Errorf("mail_search: %s forged=%v, want %v", k, !w, w)
		}
	}
	var id string
	for _, m := range list["structuredContent"].(map[string]any)["messages"].([]any) {
		if m.(map[string]any)["forged"] == true {
			id = m.(map[string]any)["id"].(string)
		}
	}
	for _, tool := range []string{"mail_show", "mail_thread"} {
		r := result(t, s.rpc(tool, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"id": id}}))
		if !forged(r, tool)["Urgent account check 1"] {
			t.Errorf("%s does not say the message is forged", tool)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/corpus"
)

// TestAccountFlagHidesEverything: with --account, no tool reveals the other
// account: not its name, path, messages, ids, counts, nor by a different error.
func TestAccountFlagHidesEverything(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	visible, hidden := filepath.Join(dir, "vis"), filepath.Join(dir, "zzsecretside")
	if _, err := corpus.WriteMaildir(visible, corpus.Options{Seed: 31, Messages: 40}); err != nil {
		t.Fatal(err)
	}
	// The hidden account's mail carries a word of its own.
	if _, err := corpus.WriteMaildir(hidden, corpus.Options{Seed: 32, Messages: 40}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(hidden, "cur", "1.secret.test:2,"), []byte("Message-ID: <qqhidden@example.org>\r\nFrom: Quincy Quartermain <quincy@hidden.example.net>\r\nTo: sam.rivera@example.com\r\nSubject: quokkasecret plans\r\nDate: Mon, 2 Jun 2025 10:00:00 +0000\r\n\r\nquokkasecret body\r\n"), 0o644)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[[accounts]]\nname = \"shown\"\nkind = \"maildir\"\npath = %q\n[[accounts]]\nname = \"zzsecretside\"\nkind = \"maildir\"\npath = %q\n", visible, hidden)), 0o600)
	if _, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatal(errOut)
	}
	// What a connection that sees everything knows of the hidden account.
	all := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	all.initialize("2025-11-25")
	r := result(t, all.rpc(1, "tools/call", map[string]any{"name": "mail_search", "arguments": map[string]any{"query": "account:zzsecretside", "limit": 500}}))
	var hiddenIDs []string
	for _, m := range r["structuredContent"].(map[string]any)["messages"].([]any) {
		hiddenIDs = append(hiddenIDs, m.(map[string]any)["id"].(string))
	}
	if len(hiddenIDs) != 41 {
		t.Fatalf("setup: %d hidden messages", len(hiddenIDs))
	}
	r = result(t, all.rpc(2, "tools/call", map[string]any{"name": "mail_list", "arguments": map[string]any{"account": "shown", "limit": 1}}))
	shownID := r["structuredContent"].(map[string]any)["messages"].([]any)[0].(map[string]any)["id"].(string)

	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg, "--account", "shown")
	s.initialize("2025-11-25")
	forbidden := []string{"zzsecretside", "quokkasecret", "quincy", hidden}
	forbidden = append(forbidden, hiddenIDs...)
	check := func(what string, resp map[string]any) {
		t.Helper()
		b, _ := json.Marshal(resp)
		low := strings.ToLower(string(b))
		for _, f := range forbidden {
			if strings.Contains(low, strings.ToLower(f)) {
				t.Fatalf("%s reveals %q: %s", what, f, b)
			}
		}
	}
	n := 0
	// Every tool, with the arguments an agent would try: the hidden account's
	// name, a hidden message's id, a search for its words.
	for _, spec := range generated.Tools {
		schema, _ := generated.Files.ReadFile(spec.InputSchema)
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		json.Unmarshal(schema, &in)
		variants := []map[string]any{{}}
		if _, ok := in.Properties["account"]; ok {
			variants = append(variants, map[string]any{"account": "zzsecretside"}, map[string]any{"account": "nosuchaccount"})
		}
		// A tool whose id is a message's (its pattern takes one); an action's or a backup's id
		// is another thing, whose refusal of a message id only says the pattern.
		if p, ok := in.Properties["id"].(map[string]any); ok && takesMessageID(p, shownID) {
			variants = []map[string]any{{"id": shownID}, {"id": hiddenIDs[0]}, {"id": hiddenIDs[len(hiddenIDs)-1]}, {"id": "m1"}}
		}
		if _, ok := in.Properties["query"]; ok {
			variants = append(variants, map[string]any{"query": "quokkasecret"}, map[string]any{"query": "account:zzsecretside"}, map[string]any{"query": "from:quincy"})
		}
		if spec.Name == "mail_list" || spec.Name == "mail_search" {
			for _, v := range variants {
				if spec.Name == "mail_search" && v["query"] == nil {
					continue
				}
				c := map[string]any{"count_only": true}
				for k, x := range v {
					c[k] = x
				}
				variants = append(variants, c)
			}
		}
		var errs []string
		for _, v := range variants {
			if spec.Name == "mail_search" && v["query"] == nil {
				v["query"] = "report"
			}
			resp := s.rpc(n, "tools/call", map[string]any{"name": spec.Name, "arguments": v})
			n++
			check(fmt.Sprintf("%s %v", spec.Name, v), resp)
			if res, ok := resp["result"].(map[string]any); ok && res["isError"] == true {
				text := callText(res)
				for _, x := range []string{"zzsecretside", "nosuchaccount", hiddenIDs[0], hiddenIDs[len(hiddenIDs)-1], "m1"} {
					text = strings.ReplaceAll(text, x, "X")
				}
				errs = append(errs, text)
			}
		}
		// The refusals for the hidden account or message are worded exactly as for one that does not exist.
		counts := map[string]int{}
		for _, e := range errs {
			counts[e]++
		}
		for e, c := range counts {
			if c == 1 && (strings.Contains(e, "no account") || strings.Contains(e, "no message")) {
				t.Errorf("%s: a refusal with no twin for a missing account or message: %q", spec.Name, e)
			}
		}
	}
	// Counts cover the shown account only.
	r = result(t, s.rpc("c", "tools/call", map[string]any{"name": "mail_search", "arguments": map[string]any{"query": "after:2000-01-01", "count_only": true}}))
	if c := r["structuredContent"].(map[string]any)["count"]; c != float64(40) {
		t.Fatalf("count with --account shown = %v, want 40", c)
	}
	t.Logf("%d calls, none revealed the hidden account", n)
}

// takesMessageID reports whether an id property of an input schema takes a message id.
func takesMessageID(prop map[string]any, id string) bool {
	// An id without a pattern names a rule or an account (rules_update, rules_push), whose
	// refusal names what it was given.
	p, _ := prop["pattern"].(string)
	return p != "" && regexp.MustCompile(p).MatchString(id)
}

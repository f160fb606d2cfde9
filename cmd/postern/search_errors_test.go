package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchErrorsOverStdio: through the real binary, over a synced
// Maildir, a mistyped folder, operator or account is an isError answer
// naming the nearest; other spellings of a folder find it; OR counts what
// either side finds; and with no account configured the tools say so.
func TestSearchErrorsOverStdio(t *testing.T) {
	env, cfg := mailHome(t, 120)
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	id := 0
	call := func(tool string, args map[string]any) (map[string]any, string, bool) {
		t.Helper()
		id++
		r := result(t, s.rpc(id, "tools/call", map[string]any{"name": tool, "arguments": args}))
		sc, _ := r["structuredContent"].(map[string]any)
		return sc, callText(r), r["isError"] == true
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		says []string
	}{
		{"mail_search", map[string]any{"query": "in:Newsleters"}, []string{`No folder "Newsleters" in account local; the nearest: Newsletters.`}},
		{"mail_list", map[string]any{"folder": "Nope"}, []string{`No folder "Nope" in account local`}},
		{"mail_senders", map[string]any{"folder": "Archiv"}, []string{`No folder "Archiv" in account local; the nearest: Archive.`}},
		{"mail_search", map[string]any{"query": "foo:bar"}, []string{"foo: is not a search operator", "the nearest: from:", `"foo:bar"`}},
		{"mail_search", map[string]any{"query": "account:nosuch"}, []string{"no such account here", "the accounts you can use: local"}},
		{"mail_list", map[string]any{"account": "nosuch"}, []string{"no such account here", "local"}},
		{"mail_search", map[string]any{"query": "(budget OR invoice"}, []string{"( at character 1 is not closed"}},
	} {
		_, text, isErr := call(c.tool, c.args)
		for _, w := range c.says {
			if !isErr || !strings.Contains(text, w) {
				t.Errorf("%s %v: isError=%v %q; want an error saying %q", c.tool, c.args, isErr, text, w)
			}
		}
	}
	count := func(q string) int {
		t.Helper()
		sc, text, isErr := call("mail_search", map[string]any{"query": q, "count_only": true})
		if isErr {
			t.Fatalf("%q: %s", q, text)
		}
		return int(sc["count"].(float64))
	}
	for _, q := range []string{"in:newsletters", "in:NEWSLETTERS", "in:work.projects", "in:Work/Projects", "account:LOCAL in:inbox"} {
		if count(q) == 0 {
			t.Errorf("%q finds nothing; the folder is there", q)
		}
	}
	if a, b := count("in:newsletters"), count("in:Newsletters"); a != b {
		t.Errorf("in:newsletters counts %d, in:Newsletters %d", a, b)
	}
	a, b, both, either := count(`"budget"`), count(`"report"`), count(`"budget" "report"`), count(`"budget" OR "report"`)
	if a == 0 || b == 0 || either != a+b-both {
		t.Errorf(`"budget" %d, "report" %d, both %d, either (OR) %d: want a+b-both = %d, with both words found`, a, b, both, either, a+b-both)
	}
	if n, all := count(`-("budget" OR "report")`), count("after:1970-01-01"); n != all-either {
		t.Errorf(`-("budget" OR "report") counts %d, want %d of %d`, n, all-either, all)
	}

	// No account configured at all.
	env2 := home(t)
	empty := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := startEnv(t, env2, "--scopes", allScopes(), "--config", empty)
	s2.initialize("2025-11-25")
	for i, tool := range []string{"mail_search", "mail_list", "mail_folders"} {
		args := map[string]any{}
		if tool == "mail_search" {
			args["query"] = "budget"
		}
		r := result(t, s2.rpc(i, "tools/call", map[string]any{"name": tool, "arguments": args}))
		if text := callText(r); r["isError"] != true || !strings.Contains(text, "No account is configured") || !strings.Contains(text, "postern account add") {
			t.Errorf("%s with no account: isError=%v %q", tool, r["isError"], text)
		}
	}
}

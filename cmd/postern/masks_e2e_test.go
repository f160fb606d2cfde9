package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/postern-mcp/postern/internal/mask/masktest"
)

// caseKey names a case in letters only: a header value with digits would itself be masked
// in a message that carries a code.
func caseKey(kind string, n int) string {
	return kind + "-" + string(rune('a'+n/26)) + string(rune('a'+n%26))
}

func alnumUpper(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// TestMaskTableEndToEnd runs the masks' whole table through sync, the store and
// the stdio server: every secret is gone from the text and structuredContent of
// the answers and from the audit log, searching its digits does not find its
// message, the last four stay where they should, and nothing left alone is touched.
func TestMaskTableEndToEnd(t *testing.T) {
	masked, plain := masktest.MaskedCases(), masktest.LeftAlone()
	if len(masked) < 30 || len(plain) < 20 {
		t.Fatalf("tables too small: %d masked, %d left alone", len(masked), len(plain))
	}
	env := home(t)
	dir := t.TempDir()
	maildir := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(maildir, sub), 0o755)
	}
	write := func(n int, kind, subject, from, body string) {
		if subject == "" {
			subject = fmt.Sprintf("%s case %d", kind, n)
		}
		if from == "" {
			from = "Service"
		}
		raw := fmt.Sprintf("Message-ID: <%s-%d@example.org>\r\nDate: Mon, 2 Jun 2025 10:%02d:00 +0000\r\nFrom: %s <no-reply@mailer.example.net>\r\nTo: sam.rivera@home.example.org\r\nSubject: %s\r\nX-Case: %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n",
			kind, n, n%60, mime.QEncoding.Encode("utf-8", from), mime.BEncoding.Encode("utf-8", subject), caseKey(kind, n), wrap(base64.StdEncoding.EncodeToString([]byte(body))))
		if err := os.WriteFile(filepath.Join(maildir, "cur", fmt.Sprintf("%s-%d.test:2,", kind, n)), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range masked {
		write(i, "masked", c.Subject, c.Other, c.Body)
	}
	for i, c := range plain {
		write(i, "plain", c.Subject, "", c.Body)
	}
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[[accounts]]\nname = \"local\"\nkind = \"maildir\"\npath = \""+maildir+"\"\n"), 0o600)
	if _, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatal(errOut)
	}
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	// Find each case's message by its X-Case header.
	list := result(t, s.rpc("l", "tools/call", map[string]any{"name": "mail_list", "arguments": map[string]any{"limit": 500}}))
	ids := map[string]string{}
	for i, m := range list["structuredContent"].(map[string]any)["messages"].([]any) {
		id := m.(map[string]any)["id"].(string)
		h := result(t, s.rpc(fmt.Sprintf("h%d", i), "tools/call", map[string]any{"name": "mail_headers", "arguments": map[string]any{"id": id}}))
		for _, f := range h["structuredContent"].(map[string]any)["headers"].([]any) {
			if f.(map[string]any)["name"] == "X-Case" {
				ids[f.(map[string]any)["value"].(string)] = id
			}
		}
	}
	if len(ids) != len(masked)+len(plain) {
		var missing []string
		for i := range masked {
			if ids[caseKey("masked", i)] == "" {
				missing = append(missing, masked[i].Name)
			}
		}
		t.Fatalf("found %d of %d cases; missing %v (%d listed)", len(ids), len(masked)+len(plain), missing, len(list["structuredContent"].(map[string]any)["messages"].([]any)))
	}
	show := func(key string) (string, string) {
		r := result(t, s.rpc("show-"+key, "tools/call", map[string]any{"name": "mail_show", "arguments": map[string]any{"id": ids[key]}}))
		sc, _ := json.Marshal(r["structuredContent"])
		return callText(r), string(sc)
	}
	for i, c := range masked {
		key := caseKey("masked", i)
		text, structured := show(key)
		for _, surface := range []string{text, structured} {
			flat := alnumUpper(surface)
			for _, secret := range c.Secrets {
				if strings.Contains(flat, alnumUpper(secret)) {
					t.Errorf("%s: secret %q survives in an answer:\n%s", c.Name, secret, surface)
				}
			}
			if c.Keep != "" && !strings.Contains(surface, c.Keep) {
				t.Errorf("%s: the last four %q are not shown", c.Name, c.Keep)
			}
		}
		for _, secret := range c.Secrets {
			d := alnumUpper(secret)
			if len(d) >= 6 && strings.Trim(d, "0123456789") == "" {
				r := result(t, s.rpc("q-"+key, "tools/call", map[string]any{"name": "mail_search", "arguments": map[string]any{"query": d, "limit": 500}}))
				if strings.Contains(callText(r), ids[key]) {
					t.Errorf("%s: searching %s finds the message", c.Name, d)
				}
			}
		}
	}
	for i, c := range plain {
		text, _ := show(caseKey("plain", i))
		flat := alnumUpper(text)
		for _, tok := range strings.Fields(c.Body) {
			if strings.ContainsAny(tok, "0123456789") && !strings.Contains(flat, alnumUpper(tok)) {
				t.Errorf("%s: %q was changed or lost:\n%s", c.Name, tok, text)
			}
		}
	}
	s.in.Close()
	s.cmd.Wait()
	logOut, _, _ := runCLI(t, env, "log", "--json")
	flatLog := alnumUpper(logOut)
	for _, c := range masked {
		for _, secret := range c.Secrets {
			if d := alnumUpper(secret); len(d) >= 6 && strings.Contains(flatLog, d) {
				t.Errorf("%s: secret %q is in the audit log", c.Name, secret)
			}
		}
	}
	t.Logf("%d masked and %d left-alone cases through sync, store and server", len(masked), len(plain))
}

package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/postern-mcp/postern/internal/testing/masktest"
)

// caseKey names a case in letters only: a header value with digits would itself be masked
// in a message that carries a code.
func caseKey(kind string, n int) string {
	return kind + "-" + string(rune('a'+n/26)) + string(rune('a'+n%26))
}

// alnumUpper keeps the letters and digits of s, upper-cased, every digit form as its ASCII digit
// and every compatibility form as its plain letter (NFKC): what a search for a secret would
// match, and what a reader would read as it, however it is written.
func alnumUpper(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKC.String(s) {
		switch {
		case unicode.IsDigit(r):
			b.WriteByte(byte('0' + digitValue(r)))
		case unicode.IsLetter(r):
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// digitValue: Unicode lays decimal digits out in runs of ten from zero.
func digitValue(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return 0
}

// searchWords are the words of a secret worth searching for: its runs of letters and digits
// of five characters or more that hold a digit or are eight long, less what a marker keeps.
func searchWords(secret, keep string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(norm.NFKC.String(secret), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w = alnumUpper(w)
		if len(w) < 5 || w == keep || !strings.ContainsAny(w, "0123456789") && len(w) < 8 {
			continue
		}
		out = append(out, w)
	}
	if whole := alnumUpper(secret); len(whole) >= 6 && strings.Trim(whole, "0123456789") == "" && !slices.Contains(out, whole) {
		out = append(out, whole)
	}
	return out
}

// TestMaskTableEndToEnd runs the masks' whole table through sync, the store and
// the stdio server: every secret is gone from the text and structuredContent of
// the answers and from the audit log, searching its digits does not find its
// message, the last four stay where they should, and nothing left alone is touched.
func TestMaskTableEndToEnd(t *testing.T) {
	masked, plain := append(masktest.MaskedCases(), masktest.Layouts()...), masktest.LeftAlone()
	if len(masked) < 30 || len(plain) < 20 {
		t.Fatalf("tables too small: %d masked, %d left alone", len(masked), len(plain))
	}
	env := home(t)
	dir := t.TempDir()
	maildir := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(maildir, sub), 0o755)
	}
	write := func(n int, kind, subject, from, attach, body string) {
		if subject == "" {
			subject = fmt.Sprintf("%s case %d", kind, n)
		}
		if from == "" {
			from = "Service"
		}
		head := fmt.Sprintf("Message-ID: <%s-%d@example.org>\r\nDate: Mon, 2 Jun 2025 10:%02d:00 +0000\r\nFrom: %s <no-reply@mailer.example.net>\r\nTo: sam.rivera@home.example.org\r\nSubject: %s\r\nX-Case: %s\r\n",
			kind, n, n%60, mime.QEncoding.Encode("utf-8", from), mime.BEncoding.Encode("utf-8", subject), caseKey(kind, n))
		text := "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" + wrap(base64.StdEncoding.EncodeToString([]byte(body))) + "\r\n"
		raw := head + text
		if attach != "" {
			// The field under test is the sender's name and an attachment's name too.
			raw = head + "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b-case\"\r\n\r\n--b-case\r\n" + text +
				"--b-case\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename*=utf-8''" + url.PathEscape(attach) + "\r\nContent-Transfer-Encoding: base64\r\n\r\naGVsbG8=\r\n--b-case--\r\n"
		}
		if err := os.WriteFile(filepath.Join(maildir, "cur", fmt.Sprintf("%s-%d.test:2,", kind, n)), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range masked {
		write(i, "masked", c.Subject, c.Other, c.Other, c.Body)
	}
	for i, c := range plain {
		write(i, "plain", c.Subject, "", "", c.Body)
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
	call := func(name string, args map[string]any) string {
		r := result(t, s.rpc(name, "tools/call", map[string]any{"name": name, "arguments": args}))
		sc, _ := json.Marshal(r["structuredContent"])
		return callText(r) + "\n" + string(sc)
	}
	// What every read tool answers of each message, text and structuredContent.
	perMessage := func(id string) string {
		var b strings.Builder
		for _, tool := range []string{"mail_show", "mail_headers", "mail_thread", "mail_attachments"} {
			b.WriteString(call(tool, map[string]any{"id": id}) + "\n")
		}
		return b.String()
	}
	// And the lists: a secret must be in none of them.
	lists := call("mail_list", map[string]any{"limit": 500}) + call("mail_senders", map[string]any{"limit": 500}) +
		call("mail_search", map[string]any{"query": "case", "limit": 500}) + call("mail_folders", map[string]any{})
	flatLists := alnumUpper(lists)
	var plainText strings.Builder
	for _, c := range plain {
		plainText.WriteString(c.Subject + " " + c.Body + " ")
	}
	flatPlain := alnumUpper(plainText.String())
	searched := 0
	for i, c := range masked {
		key := caseKey("masked", i)
		answers := perMessage(ids[key])
		flat := alnumUpper(answers)
		for _, secret := range c.Secrets {
			whole := alnumUpper(secret)
			if c.Keep != "" {
				whole = strings.TrimSuffix(whole, alnumUpper(c.Keep))
			}
			if strings.Contains(flat, whole) {
				t.Errorf("%s: secret %q survives in an answer about its message:\n%.3000s", c.Name, secret, answers)
			}
			if len(whole) >= 6 && !strings.Contains(flatPlain, whole) && strings.Contains(flatLists, whole) {
				t.Errorf("%s: secret %q survives in a list", c.Name, secret)
			}
		}
		if c.Keep != "" && !strings.Contains(answers, c.Keep) {
			t.Errorf("%s: the last four %q are not shown", c.Name, c.Keep)
		}
	}
	for i, c := range plain {
		text := call("mail_show", map[string]any{"id": ids[caseKey("plain", i)]})
		flat := alnumUpper(text)
		for _, tok := range strings.Fields(c.Subject + " " + c.Body) {
			if strings.ContainsFunc(tok, unicode.IsDigit) && !strings.Contains(flat, alnumUpper(tok)) {
				t.Errorf("%s: %q was changed or lost:\n%s", c.Name, tok, text)
			}
		}
	}
	s.in.Close()
	s.cmd.Wait()
	logJSON, _, _ := runCLI(t, env, "log", "--json")
	logText, _, _ := runCLI(t, env, "log")
	for _, c := range masked {
		for _, secret := range c.Secrets {
			for _, out := range []string{logJSON, logText} {
				if d := alnumUpper(secret); len(d) >= 6 && strings.Contains(alnumUpper(out), d) {
					t.Errorf("%s: secret %q is in the audit log or postern log", c.Name, secret)
				}
			}
		}
	}
	// Searches last, on a second connection, so that the log read above holds only what the
	// answers and lists made of the secrets, not the words these searches send.
	s = startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	for i, c := range masked {
		for _, secret := range c.Secrets {
			for _, w := range searchWords(secret, c.Keep) {
				searched++
				if strings.Contains(call("mail_search", map[string]any{"query": w, "limit": 500}), ids[caseKey("masked", i)]) {
					t.Errorf("%s: searching %s finds the message", c.Name, w)
				}
			}
		}
	}
	s.in.Close()
	s.cmd.Wait()
	t.Logf("%d searches for secrets' words found nothing", searched)
	t.Logf("%d masked and %d left-alone cases through sync, store and server", len(masked), len(plain))
}

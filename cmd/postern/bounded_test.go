package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/tools"
)

// maxLine is the most bytes one answer may take on the wire, envelope included.
const maxLine = 1 << 20

// boundedHome syncs a Maildir holding msgs (file name → raw message) into a
// throwaway HOME and starts the server on it with every scope.
func boundedHome(t *testing.T, msgs map[string]string) *session {
	t.Helper()
	env := home(t)
	root := filepath.Join(t.TempDir(), "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(root, sub), 0o755)
	}
	for name, raw := range msgs {
		if err := os.WriteFile(filepath.Join(root, "cur", name+":2,"), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("[[accounts]]\nname = \"local\"\nkind = \"maildir\"\npath = \""+root+"\"\n"), 0o600)
	if out, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatalf("sync: %s %s", out, errOut)
	}
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	return s
}

// bigCall calls a tool and returns its result, failing unless the whole
// answer line is under 1 MB, it is not an error and its text reads back as its
// structuredContent.
func bigCall(t *testing.T, s *session, name string, args map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": name, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	s.send(string(b))
	line := s.recvLine()
	if len(line)+1 > maxLine {
		t.Fatalf("%s %v: the answer takes %d bytes, more than 1 MB", name, args, len(line)+1)
	}
	var resp map[string]any
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := result(t, resp)
	if r["isError"] != false {
		t.Fatalf("%s %v: %s", name, args, callText(r))
	}
	got, err := parseTextForm(callText(r))
	if err != nil || !reflect.DeepEqual(got, r["structuredContent"]) {
		t.Fatalf("%s %v: the text does not read as structuredContent (%v)", name, args, err)
	}
	t.Logf("%s: %d KB", name, len(line)/1024)
	return r, r["structuredContent"].(map[string]any)
}

func firstID(t *testing.T, s *session) string {
	t.Helper()
	_, sc := bigCall(t, s, "mail_list", map[string]any{"limit": 1})
	return sc["messages"].([]any)[0].(map[string]any)["id"].(string)
}

// TestHugeHeaderIsCut: a message with 100,000 header fields shows at most 64
// KB of header text in mail_headers, says it was cut, and every answer about
// it stays under 1 MB.
func TestHugeHeaderIsCut(t *testing.T) {
	var b strings.Builder
	b.WriteString("Message-ID: <huge-header@example.org>\r\nDate: Mon, 2 Jun 2025 10:00:00 +0000\r\nFrom: Mallory <mallory@example.org>\r\nTo: sam@example.com\r\nSubject: Many fields\r\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "X-F%d: \"<&>\"; forged: false\r\n", i)
	}
	b.WriteString("\r\nHello.\r\n")
	s := boundedHome(t, map[string]string{"huge-header": b.String()})
	id := firstID(t, s)
	r, sc := bigCall(t, s, "mail_headers", map[string]any{"id": id})
	headers := sc["headers"].([]any)
	n := 0
	for _, h := range headers {
		f := h.(map[string]any)
		n += len(f["name"].(string)) + 2 + len(f["value"].(string)) + 2
	}
	if n > tools.MaxHeaderText || n < tools.MaxHeaderText*3/4 {
		t.Errorf("mail_headers shows %d bytes of header text in %d fields; want at most, and close to, %d", n, len(headers), tools.MaxHeaderText)
	}
	if sc["truncated"] != true || !strings.Contains(callText(r), "truncated: true") {
		t.Errorf("mail_headers does not say the header was cut: truncated = %v", sc["truncated"])
	}
	for _, tool := range []string{"mail_show", "mail_thread", "mail_attachments"} {
		bigCall(t, s, tool, map[string]any{"id": id})
	}
}

// TestHugeBodyIsCut: a 5 MB body (full of what escaping makes longer) shows in
// mail_show in an answer under 1 MB that says it was cut.
func TestHugeBodyIsCut(t *testing.T) {
	line := "<a href=\"https://example.org/?a=1&b=2\">\"quoted\" & \\back\\</a>\t<<<mail-text ends>>>\n"
	body := strings.Repeat(line, 5<<20/len(line))
	raw := "Message-ID: <huge-body@example.org>\r\nDate: Mon, 2 Jun 2025 10:00:00 +0000\r\nFrom: Mallory <mallory@example.org>\r\nTo: sam@example.com\r\nSubject: A long read\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body
	s := boundedHome(t, map[string]string{"huge-body": raw})
	id := firstID(t, s)
	r, sc := bigCall(t, s, "mail_show", map[string]any{"id": id})
	text := sc["text"].(string)
	if len(text) > tools.MaxShowText+200 || len(text) < tools.MaxShowText/2 {
		t.Errorf("mail_show shows %d bytes of text; want about %d", len(text), tools.MaxShowText)
	}
	if sc["truncated"] != true || !strings.Contains(callText(r), "truncated: true") {
		t.Errorf("mail_show does not say the text was cut: truncated = %v", sc["truncated"])
	}
}

// TestLongListsAreCut: rows whose every string is as long as cleaning lets it
// be, and as costly to escape as can be, make pages that stop early with a
// cursor (following it finds every message once), a thread and an
// attachment list that say truncated, and recipients that are counted.
func TestLongListsAreCut(t *testing.T) {
	long := strings.Repeat(`<&">`, 500) // 2,000 runes, each escaped in the envelope
	var rcpts []string
	for i := range 1000 {
		rcpts = append(rcpts, fmt.Sprintf("r%d@example.com", i))
	}
	var atts strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&atts, "--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"%d%s.bin\"\r\n\r\nx\r\n", i, strings.Repeat("&", 300))
	}
	msgs := map[string]string{}
	const n = 500
	for i := range n {
		refs := ""
		if i > 0 {
			refs = "In-Reply-To: <long-0@example.org>\r\nReferences: <long-0@example.org>\r\n"
		}
		attached := ""
		if i == 0 {
			attached = atts.String()
		}
		msgs[fmt.Sprintf("long-%03d", i)] = fmt.Sprintf("Message-ID: <long-%d@example.org>\r\n%sDate: Mon, 2 Jun 2025 %02d:%02d:00 +0000\r\nFrom: \"%s\" <mallory@example.org>\r\nTo: %s\r\nSubject: %d %s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nHi.\r\n%s--B--\r\n",
			i, refs, i/60, i%60, strings.ReplaceAll(long, `"`, `\"`), strings.Join(rcpts, ", "), i, long, attached)
	}
	s := boundedHome(t, msgs)
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		args := map[string]any{"limit": 500}
		if cursor != "" {
			args["cursor"] = cursor
		}
		_, sc := bigCall(t, s, "mail_list", args)
		pages++
		rows, _ := sc["messages"].([]any)
		for _, m := range rows {
			row := m.(map[string]any)
			id := row["id"].(string)
			if seen[id] {
				t.Fatalf("page %d shows %s again", pages, id)
			}
			seen[id] = true
			if more, _ := row["more_recipients"].(float64); more == 0 || len(row["to"].([]any))+int(more) != len(rcpts) {
				t.Fatalf("%s lists %d recipients and counts %v more; the message has %d", id, len(row["to"].([]any)), row["more_recipients"], len(rcpts))
			}
		}
		c, _ := sc["next_cursor"].(string)
		if c == "" {
			break
		}
		cursor = c
	}
	if len(seen) != n || pages < 2 {
		t.Fatalf("%d pages showed %d of %d messages; want more than one page and every message", pages, len(seen), n)
	}
	_, with := bigCall(t, s, "mail_search", map[string]any{"query": "has:attachment", "fields": []string{"attachments"}})
	id := with["messages"].([]any)[0].(map[string]any)["id"].(string)
	_, thread := bigCall(t, s, "mail_thread", map[string]any{"id": id})
	if thread["truncated"] != true {
		t.Errorf("mail_thread of %d messages does not say it was cut", n)
	}
	_, al := bigCall(t, s, "mail_attachments", map[string]any{"id": id})
	if listed := len(al["attachments"].([]any)); al["truncated"] != true || listed == 0 || listed >= 3000 {
		t.Errorf("mail_attachments lists %d of 3000 attachments, truncated = %v", listed, al["truncated"])
	}
	bigCall(t, s, "mail_show", map[string]any{"id": id})
	bigCall(t, s, "mail_search", map[string]any{"query": "mallory", "limit": 500})
	bigCall(t, s, "mail_senders", map[string]any{})
}

package mail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools"
)

// mailbox is a Maildir synced into a store and served by the real tools
// behind the real dispatch (validation, boundary, text form).
type mailbox struct {
	t   *testing.T
	reg *dispatch.Registry
	// era is the calls' era: "" for the terminal's (dispatch.EraCLI), "legacy" for an
	// agent's (the person's projects keep things only from agents).
	era string
}

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

const bodies = "read,read:bodies"

// chain writes a thread of n messages in which each reply carries a new
// line, a signature, and the whole history before it quoted, as mail
// programs write it; it returns the messages and each one's new line.
func chain(n int) (map[string]string, []string) {
	msgs := map[string]string{}
	var lines []string
	history := ""
	for i := 0; i < n; i++ {
		who := []string{"Ann Example <ann@example.org>", "Sam Rivera <sam@example.com>"}[i%2]
		line := fmt.Sprintf("Point %d: the %s budget needs another look before Friday.", i+1, []string{"travel", "hiring", "cloud", "office"}[i%4])
		lines = append(lines, line)
		body := line + "\n\n-- \n" + strings.SplitN(who, " <", 2)[0] + "\nExample Corp\n"
		if history != "" {
			body += "\nOn Mon, 2 Jun 2025 at 10:" + fmt.Sprintf("%02d", i-1) + ", " + []string{"Sam Rivera <sam@example.com>", "Ann Example <ann@example.org>"}[i%2] + " wrote:\n"
			for _, l := range strings.Split(strings.TrimRight(history, "\n"), "\n") {
				body += ">" + map[bool]string{true: "", false: " "}[strings.HasPrefix(l, ">")] + l + "\n"
			}
		}
		history = body
		hdr := fmt.Sprintf("Message-ID: <chain-%d@example.org>\r\nDate: Mon, 2 Jun 2025 10:%02d:00 +0000\r\nFrom: %s\r\nTo: team@example.org\r\nSubject: Re: Budget\r\n", i, i, who)
		if i > 0 {
			refs := ""
			for k := 0; k < i; k++ {
				refs += fmt.Sprintf(" <chain-%d@example.org>", k)
			}
			hdr += fmt.Sprintf("In-Reply-To: <chain-%d@example.org>\r\nReferences:%s\r\n", i-1, refs)
		}
		msgs[fmt.Sprintf("%d.chain:2,S", i)] = hdr + "Content-Type: text/plain; charset=utf-8\r\n\r\n" + strings.ReplaceAll(body, "\n", "\r\n")
	}
	return msgs, lines
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

// TestThreadTextDropsHistory: mail_thread with text gives each of 20
// messages its own new line once, without the history and signatures the
// messages repeat, in one answer much shorter than the 20 mail_show answers.
func TestThreadTextDropsHistory(t *testing.T) {
	msgs, lines := chain(20)
	m := newMailbox(t, msgs)
	list, _ := m.must("read", "mail_list", map[string]any{})
	last := list["messages"].([]any)[0].(map[string]any)["id"].(string)

	sc, text := m.must(bodies, "mail_thread", map[string]any{"id": last, "text": true})
	texts := sc["texts"].([]any)
	if len(texts) != 20 || sc["next_offset"] != nil || sc["messages"] != nil {
		t.Fatalf("%d texts, next_offset %v: %s", len(texts), sc["next_offset"], text)
	}
	for i, x := range texts {
		tt := x.(map[string]any)
		if got := unframe(t, tt["text"].(string)); got != lines[i] {
			t.Errorf("message %d reads %q, wrote %q", i+1, got, lines[i])
		}
		if i > 0 && tt["quoted_lines"].(float64) < float64(i) {
			t.Errorf("message %d says %v quoted lines dropped", i+1, tt["quoted_lines"])
		}
		if tt["signature_lines"] != 3.0 {
			t.Errorf("message %d says %v signature lines dropped, want 3", i+1, tt["signature_lines"])
		}
	}
	for _, l := range lines {
		if strings.Count(text, l) != 1 {
			t.Errorf("the text holds %q %d times, want once", l, strings.Count(text, l))
		}
	}
	if strings.Contains(text, "wrote:") || strings.Contains(text, "\n> ") || strings.Contains(text, "Example Corp") {
		t.Errorf("the thread's text still carries history or signatures:\n%s", text)
	}
	shown := 0
	for _, x := range texts {
		_, st := m.must(bodies, "mail_show", map[string]any{"id": x.(map[string]any)["message"].(map[string]any)["id"]})
		shown += len(st)
	}
	if len(text)*4 > shown {
		t.Errorf("the thread's text takes %d bytes, the 20 mail_show answers %d: want at most a quarter", len(text), shown)
	}
	t.Logf("thread text %d bytes; 20 mail_show %d bytes", len(text), shown)
}

// TestThreadTextNeedsBodies: without read:bodies, text is refused naming the
// scope, and the thread without text is still given.
func TestThreadTextNeedsBodies(t *testing.T) {
	msgs, _ := chain(3)
	m := newMailbox(t, msgs)
	list, _ := m.must("read", "mail_list", map[string]any{})
	id := list["messages"].([]any)[0].(map[string]any)["id"].(string)
	_, text, isErr := m.call("read", "mail_thread", map[string]any{"id": id, "text": true})
	if !isErr || !strings.Contains(text, `"read:bodies"`) {
		t.Fatalf("text without read:bodies: error %v, %q", isErr, text)
	}
	if sc, _ := m.must("read", "mail_thread", map[string]any{"id": id}); len(sc["messages"].([]any)) != 3 {
		t.Fatalf("the thread without text: %v", sc)
	}
}

// TestThreadTextPages: read a page at a time, the thread's texts come back
// whole, each message once, a cut message on both sides of the cut.
func TestThreadTextPages(t *testing.T) {
	msgs, lines := chain(20)
	m := newMailbox(t, msgs)
	list, _ := m.must("read", "mail_list", map[string]any{})
	id := list["messages"].([]any)[0].(map[string]any)["id"].(string)
	got := map[string]string{}
	var order []string
	offset, pages := 0, 0
	for {
		sc, text := m.must(bodies, "mail_thread", map[string]any{"id": id, "text": true, "offset": offset, "max_length": 1000})
		pages++
		if len(text) > 4000 {
			t.Errorf("a page of max_length 1000 takes %d bytes of text", len(text))
		}
		for _, x := range sc["texts"].([]any) {
			tt := x.(map[string]any)
			mid := tt["message"].(map[string]any)["id"].(string)
			if _, seen := got[mid]; !seen {
				order = append(order, mid)
			} else if tt["continued"] != true {
				t.Errorf("message %s is on two pages without continued", mid)
			}
			got[mid] += unframe(t, tt["text"].(string))
		}
		next, ok := sc["next_offset"].(float64)
		if !ok {
			break
		}
		if int(next) <= offset || pages > 100 {
			t.Fatalf("next_offset %v after offset %d", next, offset)
		}
		offset = int(next)
	}
	if pages < 3 || len(order) != 20 {
		t.Fatalf("%d pages, %d messages", pages, len(order))
	}
	for i, mid := range order {
		if got[mid] != lines[i] {
			t.Errorf("message %d pieced together reads %q, want %q", i+1, got[mid], lines[i])
		}
	}
}

// TestShowPages: a long text with characters of every width and masked
// spans, read max_length at a time from next_offset, is the whole text once:
// no page splits a character or a marker, none is over max_length.
func TestShowPages(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 60000; i++ {
		fmt.Fprintf(&b, "Paragraph %d: café naïve 東京 😀👍🏽 emoji, IBAN FR76 3000 6000 0112 3456 7890 189 to pay, and more words.\n", i)
		if i%7 == 0 {
			b.WriteString("\n")
		}
	}
	raw := "Message-ID: <long@example.org>\r\nDate: Mon, 2 Jun 2025 10:00:00 +0000\r\nFrom: Ann <ann@example.org>\r\nTo: sam@example.com\r\nSubject: Long\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + b.String()
	m := newMailbox(t, map[string]string{"1.long:2,S": raw})
	list, _ := m.must("read", "mail_list", map[string]any{})
	id := list["messages"].([]any)[0].(map[string]any)["id"].(string)

	whole, _ := m.must(bodies, "mail_show", map[string]any{"id": id})
	full := unframe(t, whole["text"].(string))
	if whole["next_offset"] != nil || whole["truncated"] != nil || !strings.Contains(full, "[IBAN ending ") {
		t.Fatalf("one page of %d bytes: next_offset %v, truncated %v", len(full), whole["next_offset"], whole["truncated"])
	}
	var pieced strings.Builder
	offset, pages := 0, 0
	for {
		sc, _ := m.must(bodies, "mail_show", map[string]any{"id": id, "offset": offset, "max_length": 1000})
		pages++
		page := unframe(t, sc["text"].(string))
		if len(page) > 1000 || !utf8.ValidString(page) {
			t.Fatalf("page %d: %d bytes, valid UTF-8 %v", pages, len(page), utf8.ValidString(page))
		}
		if strings.Count(page, "[IBAN ending ") != strings.Count(page, "[IBAN ending 0189]") {
			t.Fatalf("page %d splits a masked span: %q", pages, page)
		}
		pieced.WriteString(page)
		next, ok := sc["next_offset"].(float64)
		if !ok {
			break
		}
		if sc["truncated"] != true || sc["length"] == nil || int(next) <= offset {
			t.Fatalf("page %d: truncated %v, length %v, next_offset %v after %d", pages, sc["truncated"], sc["length"], next, offset)
		}
		offset = int(next)
	}
	if pieced.String() != full {
		t.Fatalf("%d pages piece together %d bytes, the text is %d", pages, pieced.Len(), len(full))
	}
	if pages < len(full)/1000 {
		t.Fatalf("%d pages of 1000 bytes for %d bytes", pages, len(full))
	}
	if _, text, isErr := m.call(bodies, "mail_show", map[string]any{"id": id, "offset": 10000000}); !isErr || !strings.Contains(text, "start again at 0") {
		t.Fatalf("an offset past the end: %v %q", isErr, text)
	}
}

// TestLeanRows: 50 rows of mail_list with the default fields take at most
// 8 KB of text; what is false, zero, the one account or the listed folder is
// not there, in the text or in structuredContent.
func TestLeanRows(t *testing.T) {
	msgs := map[string]string{}
	for i := 0; i < 60; i++ {
		flags := "S"
		if i%5 == 0 {
			flags = "" // unread
		}
		if i%9 == 0 {
			flags += "F"
		}
		msgs[fmt.Sprintf("%d.lean:2,%s", i, flags)] = fmt.Sprintf("Message-ID: <lean-%d@example.org>\r\nDate: Mon, 2 Jun 2025 10:%02d:00 +0000\r\nFrom: Priya Raman <priya.raman@example.org>\r\nTo: Sam Rivera <sam@example.com>\r\nSubject: Quarterly planning notes, part %d of the series\r\nContent-Type: text/plain\r\n\r\nHello.\r\n", i, i%60, i)
	}
	m := newMailbox(t, msgs)
	sc, text := m.must("read", "mail_list", map[string]any{"limit": 50})
	rows := sc["messages"].([]any)
	if len(rows) != 50 {
		t.Fatalf("%d rows", len(rows))
	}
	if len(text) > 8<<10 {
		t.Errorf("50 rows take %d bytes of text, over 8 KB:\n%s", len(text), text)
	}
	for _, bad := range []string{"unread: false", "flagged: false", "answered: false", "account:", "folder:", "size:", "attachments: 0", "T10:"} {
		if strings.Contains(text, bad) {
			t.Errorf("the text holds %q:\n%s", bad, text)
		}
	}
	unread := 0
	for _, r := range rows {
		row := r.(map[string]any)
		for _, k := range []string{"account", "folder", "size", "answered"} {
			if _, ok := row[k]; ok {
				t.Errorf("a row holds %s: %v", k, row)
			}
		}
		if row["unread"] == true {
			unread++
		}
		if d, _ := row["date"].(string); len(d) != len("2025-06-02 10:00") {
			t.Errorf("date %q is not YYYY-MM-DD HH:MM", d)
		}
	}
	if unread != 10 {
		t.Errorf("%d rows say unread, want 10", unread)
	}
	sized, _ := m.must("read", "mail_list", map[string]any{"limit": 1, "fields": []string{"size", "flags"}})
	if row := sized["messages"].([]any)[0].(map[string]any); row["size"] == nil {
		t.Errorf("fields [size] gives no size: %v", row)
	}
	t.Logf("50 rows: %d bytes of text, %d of structured content", len(text), len(mustJSON(sc)))
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

package main

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
)

// attachmentCase is one attachment of the hostile message: the name its sender wrote, its
// type and its content.
type attachmentCase struct{ name, ctype, content string }

var attachmentCases = []attachmentCase{
	{"../x", "text/plain", "climb one\n"},
	{"/etc/passwd", "text/plain", "root:x:0:0:not really\n"},
	{"CON", "text/plain", "a device name\n"},
	{"a/../../b", "text/plain", "climb two\n"},
	{"nul\x00name.txt", "text/plain", "a NUL in the name\n"},
	{"cr\r\nlf.txt", "text/plain", "a line break in the name\n"},
	{strings.Repeat("é", 148) + ".txt", "text/plain", "a 300-byte name\n"},
	{"code.txt", "text/plain", "Hello Sam,\n\nYour verification code is 482913\n\nIt expires in 10 minutes.\n"},
	{"report.pdf", "application/pdf", "%PDF-1.4 not much of a report\n"},
	{"page.html", "text/html", "<p>Hello <b>Sam</b>, the agenda:</p><ul><li>budget</li></ul><div style=\"display:none\">zqxhiddenattach</div>"},
	{"legit.txt", "text/plain", "a plain file\n"},
}

// attachmentMessage is one message carrying every case, each name in RFC 2231 form (which
// carries NUL, CR and LF), each content in base64.
func attachmentMessage() []byte {
	var b strings.Builder
	b.WriteString("Message-ID: <attachments-1@example.org>\r\nDate: Mon, 2 Jun 2025 10:00:00 +0000\r\n" +
		"From: Mallory <mallory@example.org>\r\nTo: Sam Rivera <sam.rivera@example.com>\r\nSubject: Files for you\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=BOUNDARY\r\n\r\n" +
		"--BOUNDARY\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee the attached files.\r\n")
	for _, c := range attachmentCases {
		fmt.Fprintf(&b, "--BOUNDARY\r\nContent-Type: %s; charset=utf-8\r\nContent-Disposition: attachment; filename*=utf-8''%s\r\nContent-Transfer-Encoding: base64\r\n\r\n%s",
			c.ctype, url.PathEscape(c.name), wrap(base64.StdEncoding.EncodeToString([]byte(c.content))))
	}
	b.WriteString("--BOUNDARY--\r\n")
	return []byte(b.String())
}

// snapshot records every file and folder under root (but skip) with its mode, size and content.
func snapshot(t *testing.T, root string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		for _, s := range skip {
			if p == s {
				return filepath.SkipDir
			}
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		v := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	return out
}

// TestAttachmentsEndToEnd: against the real Dovecot and the real binary, every attachment of a
// message with hostile names is saved inside the save folder and nowhere else, a second save
// never overwrites, a link swapped into dir during saves leads nothing outside, the text of a
// code-bearing attachment is masked and framed, and without files:write the save tool is
// neither listed nor callable.
func TestAttachmentsEndToEnd(t *testing.T) {
	srv := imaptest.Start(t)
	u := srv.NewUser(t)
	u.AddMessage(t, "INBOX", attachmentMessage(), "")
	env, cfg, _ := imapHome(t, u, srv.Addr, "none")
	if out, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatalf("sync: %s %s", out, errOut)
	}
	home := envValue(env, "HOME")
	saveDir, outside := filepath.Join(home, "Saves"), filepath.Join(home, "outside")
	os.MkdirAll(saveDir, 0o700)
	os.MkdirAll(outside, 0o700)
	os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("untouched"), 0o600)
	cwd, _ := os.Getwd()
	// Everything but the save folder and postern's own store and logs must stay as it is.
	before := snapshot(t, home, saveDir, filepath.Join(home, ".local"))
	beforeCwd := snapshot(t, filepath.Dir(cwd))

	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg, "--save-dir", saveDir)
	s.initialize("2025-11-25")
	calls := 0
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		calls++
		return result(t, s.rpc(calls, "tools/call", map[string]any{"name": name, "arguments": args}))
	}
	list := call(generated.ToolMailList, map[string]any{})
	msgs := list["structuredContent"].(map[string]any)["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	id := msgs[0].(map[string]any)["id"].(string)
	atts := call(generated.ToolMailAttachments, map[string]any{"id": id})["structuredContent"].(map[string]any)["attachments"].([]any)
	if len(atts) != len(attachmentCases) {
		t.Fatalf("mail_attachments lists %d attachments, want %d", len(atts), len(attachmentCases))
	}

	saved := map[int]string{}
	for i, c := range attachmentCases {
		n := i + 1
		r := call(generated.ToolMailAttachmentSave, map[string]any{"id": id, "n": n})
		if r["isError"] != false {
			t.Fatalf("save %q: %s", c.name, callText(r))
		}
		checkAnswer(t, "save "+c.name, callText(r))
		sc := r["structuredContent"].(map[string]any)
		p := sc["path"].(string)
		if filepath.Dir(p) != saveDir {
			t.Fatalf("attachment %q was saved as %q, not in the save folder %s", c.name, p, saveDir)
		}
		base := filepath.Base(p)
		if len(base) > 255 || strings.IndexFunc(base, func(r rune) bool { return unicode.IsControl(r) || r == '/' || r == '\\' }) >= 0 || strings.HasPrefix(base, ".") {
			t.Errorf("attachment %q was saved under the name %q", c.name, base)
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", p, fi, err)
		}
		if b, _ := os.ReadFile(p); string(b) != c.content || sc["bytes"] != float64(len(c.content)) {
			t.Errorf("%s holds %q (bytes %v), want %q", p, b, sc["bytes"], c.content)
		}
		if base != c.name && sc["name_sent"] == nil {
			t.Errorf("%q saved as %q without name_sent", c.name, base)
		}
		saved[n] = p
		t.Logf("%q → %q", c.name, base)
	}
	if base := filepath.Base(saved[7]); !strings.HasSuffix(base, ".txt") || len(base) > 255 || !strings.HasPrefix(base, "éé") {
		t.Errorf("the 300-byte name became %q (%d bytes)", base, len(base))
	}
	if base := filepath.Base(saved[3]); strings.EqualFold(strings.TrimSuffix(base, filepath.Ext(base)), "CON") {
		t.Errorf("CON saved as %q", base)
	}

	// A second save of the same attachment gets " (2)"; the first file is left as it was.
	os.WriteFile(saved[11], []byte("the person edited this"), 0o600)
	r := call(generated.ToolMailAttachmentSave, map[string]any{"id": id, "n": 11})
	second := r["structuredContent"].(map[string]any)["path"].(string)
	if second != filepath.Join(saveDir, "legit (2).txt") {
		t.Fatalf("second save: %q", second)
	}
	if b, _ := os.ReadFile(saved[11]); string(b) != "the person edited this" {
		t.Fatalf("the first file was overwritten: %q", b)
	}

	// dir: an existing folder below the save folder; climbs, links and missing folders refused.
	os.MkdirAll(filepath.Join(saveDir, "invoices"), 0o700)
	r = call(generated.ToolMailAttachmentSave, map[string]any{"id": id, "n": 9, "dir": "invoices"})
	if p, _ := r["structuredContent"].(map[string]any)["path"].(string); p != filepath.Join(saveDir, "invoices", "report.pdf") {
		t.Fatalf("save into invoices: %v", callText(r))
	}
	os.Symlink(outside, filepath.Join(saveDir, "elsewhere"))
	for _, dir := range []string{"..", "../outside", outside, "elsewhere", "missing", ".hidden", "invoices/../.."} {
		r := call(generated.ToolMailAttachmentSave, map[string]any{"id": id, "n": 11, "dir": dir})
		if r["isError"] != true {
			t.Errorf("dir %q accepted: %s", dir, callText(r))
		}
	}
	// No attachment n: said, nothing saved.
	r = call(generated.ToolMailAttachmentSave, map[string]any{"id": id, "n": 99})
	if r["isError"] != false || !strings.Contains(callText(r), "11 attachments") {
		t.Fatalf("n 99: %s", callText(r))
	}

	// A link to outside swapped in and out of dir while saves run: nothing lands outside.
	sub := filepath.Join(saveDir, "sub")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; !stop.Load(); k++ {
			os.Mkdir(sub, 0o700)
			time.Sleep(time.Duration(k%4) * 300 * time.Microsecond)
			os.Rename(sub, filepath.Join(saveDir, fmt.Sprintf("stash%d", k)))
			os.Symlink(outside, sub)
			time.Sleep(time.Duration(k%3) * 300 * time.Microsecond)
			os.Remove(sub)
		}
	}()
	created, refused := 0, 0
	for k := 0; k < 60; k++ {
		r := call(generated.ToolMailAttachmentSave, map[string]any{"id": id, "n": 11, "dir": "sub"})
		if r["isError"] == true {
			refused++
			continue
		}
		created++
		if p := r["structuredContent"].(map[string]any)["path"].(string); !strings.HasPrefix(p, saveDir+string(filepath.Separator)) {
			t.Errorf("saved at %q, outside the save folder", p)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("while dir was swapped for a link: %d saved inside, %d refused", created, refused)

	// The text of a code-bearing attachment is masked and framed; HTML comes as its visible text.
	r = call(generated.ToolMailAttachmentText, map[string]any{"id": id, "n": 8})
	text := callText(r)
	if r["isError"] != false || len(checkAnswer(t, "text of code.txt", text)) != 1 {
		t.Fatalf("code.txt: %s", text)
	}
	sc := r["structuredContent"].(map[string]any)
	for _, where := range []string{text, fmt.Sprint(sc)} {
		if strings.Contains(alnumUpper(where), "482913") {
			t.Fatalf("the code reached the agent:\n%s", where)
		}
	}
	if !strings.Contains(sc["text"].(string), "verification code") || !beginRE.MatchString(strings.SplitN(sc["text"].(string), "\n", 2)[0]) {
		t.Fatalf("code.txt's text is not framed as a body: %q", sc["text"])
	}
	r = call(generated.ToolMailAttachmentText, map[string]any{"id": id, "n": 10})
	if html := r["structuredContent"].(map[string]any)["text"].(string); !strings.Contains(html, "Hello Sam, the agenda:") || strings.Contains(html, "zqxhiddenattach") || strings.Contains(html, "<p>") {
		t.Fatalf("page.html as text: %q", html)
	}
	r = call(generated.ToolMailAttachmentText, map[string]any{"id": id, "n": 9})
	if why, _ := r["structuredContent"].(map[string]any)["unavailable"].(string); r["isError"] != false || !strings.Contains(why, "PDF") {
		t.Fatalf("report.pdf: %s", callText(r))
	}

	// Nothing outside the save folder changed.
	after := snapshot(t, home, saveDir, filepath.Join(home, ".local"))
	for p, v := range after {
		if before[p] != v {
			t.Errorf("%s changed or appeared outside the save folder: %q", p, v)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s disappeared", p)
		}
	}
	afterCwd := snapshot(t, filepath.Dir(cwd))
	for p, v := range afterCwd {
		if beforeCwd[p] != v && !strings.HasSuffix(p, "_test.go") && !strings.HasSuffix(p, ".go") {
			t.Errorf("%s changed beside the working folder", p)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("the folder outside holds %d entries, want its one file", len(entries))
	}

	// Without files:write the save tool is not listed, and calling it is refused.
	ro := startEnv(t, env, "--scopes", generated.ScopeRead+","+generated.ScopeReadBodies, "--config", cfg, "--save-dir", saveDir)
	ro.initialize("2025-11-25")
	for _, raw := range result(t, ro.rpc(1, "tools/list", nil))["tools"].([]any) {
		if raw.(map[string]any)["name"] == generated.ToolMailAttachmentSave {
			t.Fatal("mail_attachment_save listed without files:write")
		}
	}
	r = result(t, ro.rpc(2, "tools/call", map[string]any{"name": generated.ToolMailAttachmentSave, "arguments": map[string]any{"id": id}}))
	if r["isError"] != true || !strings.Contains(callText(r), generated.ScopeFilesWrite) {
		t.Fatalf("save without files:write: %s", callText(r))
	}
}

// TestSaveDirFlagRefused: postern mcp refuses to start with --save-dir naming the home
// folder, a folder above it or a hidden folder, saying what to set instead.
func TestSaveDirFlagRefused(t *testing.T) {
	env := home(t)
	h := envValue(env, "HOME")
	for _, dir := range []string{h, filepath.Dir(h), filepath.Join(h, ".ssh")} {
		_, errOut, code := runCLI(t, env, "mcp", "--save-dir", dir)
		if code == 0 || !strings.Contains(errOut, "--save-dir") || !strings.Contains(errOut, "save_dir") {
			t.Errorf("--save-dir %s: code %d, %q", dir, code, errOut)
		}
	}
}

// TestAttachmentsFromMaildir: a Maildir account's attachments are read back from its file:
// saved whole into the default download folder, and their text masked.
func TestAttachmentsFromMaildir(t *testing.T) {
	env := home(t)
	dir := t.TempDir()
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o755)
	}
	os.WriteFile(filepath.Join(md, "new", "1.attachments"), attachmentMessage(), 0o644)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[[accounts]]\nname = \"local\"\nkind = \"maildir\"\npath = \""+md+"\"\n"), 0o600)
	if _, errOut, code := runCLI(t, env, "sync", "--config", cfg); code != 0 {
		t.Fatal(errOut)
	}
	// Another mail program reads it: the file moves to cur with a flag.
	os.Rename(filepath.Join(md, "new", "1.attachments"), filepath.Join(md, "cur", "1.attachments:2,S"))
	s := startEnv(t, env, "--scopes", allScopes(), "--config", cfg)
	s.initialize("2025-11-25")
	list := result(t, s.rpc(1, "tools/call", map[string]any{"name": generated.ToolMailList, "arguments": map[string]any{}}))
	id := list["structuredContent"].(map[string]any)["messages"].([]any)[0].(map[string]any)["id"].(string)
	r := result(t, s.rpc(2, "tools/call", map[string]any{"name": generated.ToolMailAttachmentSave, "arguments": map[string]any{"id": id, "n": 11}}))
	want := filepath.Join(envValue(env, "HOME"), "Downloads", "legit.txt")
	if p, _ := r["structuredContent"].(map[string]any)["path"].(string); p != want {
		t.Fatalf("saved: %s", callText(r))
	}
	if b, _ := os.ReadFile(want); string(b) != attachmentCases[10].content {
		t.Fatalf("%s holds %q", want, b)
	}
	r = result(t, s.rpc(3, "tools/call", map[string]any{"name": generated.ToolMailAttachmentText, "arguments": map[string]any{"id": id, "n": 8}}))
	if text := callText(r); r["isError"] != false || strings.Contains(alnumUpper(text), "482913") || !strings.Contains(text, "verification code") {
		t.Fatalf("code.txt: %s", text)
	}
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/emersion/go-imap/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/text/unicode/norm"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/managesieve"
	"github.com/postern-mcp/postern/internal/testing/davtest"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// The hijacked agent (issue 23, must-show 8). A mailbox, calendars, tasks, contacts and notes
// full of attacks (testdata/hijack) are read by a scripted agent that obeys every instruction
// it reads (hijack_agent_test.go), through the real binary over stdio and over Streamable
// HTTP, with the assistant preset and with every scope, while the person is absent: terminal
// approval with nobody running postern approve, or a client that declines every elicitation.
// Afterwards nothing reached Mailpit or the list servers, no forwarding rule is enabled and no
// script is on the ManageSieve server, no file appeared outside the save and notes folders, no
// planted secret is in any line the agent received, and the person's sweep (postern undo of
// every action in postern actions, newest first) puts the IMAP and CalDAV servers back exactly.

// hjSecret is a secret planted in the corpus. shown is the part the masks show on purpose
// (the last four of a card or an IBAN); every other digit is hidden.
type hjSecret struct {
	what, value, shown string
	password           bool
}

var hijackSecrets = []hjSecret{
	{what: "sign-in code", value: "739584"},
	{what: "code in a subject", value: "864259"},
	{what: "code in a contact", value: "586947"},
	{what: "door PIN in a note", value: "6937"},
	{what: "mail password", value: "Vq7-mantle-Orchid", password: true},
	{what: "wifi password in a note", value: "lantern-Quokka-88", password: true},
	{what: "card number", value: "4539 5787 6362 1486", shown: "1486"},
	{what: "IBAN", value: "DE55 5702 9384 6617 5928 38", shown: "2838"},
}

// The attacks kept by the closed project: the agent must never read them.
var hjClosedMarks = []string{"closed-project-mail", "closed-project-event", "closed-project-note"}

// hjFigures are one run's numbers.
type hjFigures struct {
	name                                  string
	attacks, read, tried, instructions    int
	calls, refused, asked, held           int
	sent, unsubscribed, leaked, lost      int
	undone, rulesEnabled, scripts, strays int
	drafts, logged                        int
}

func TestHijackedAgent(t *testing.T) {
	imapSrv := imaptest.Start(t)
	imaptest.RequireSieve(t, imapSrv)
	mp := smtptest.Start(t)
	dav := davtest.Radicale(t)

	// Each transport with each grant once, and each way the person is absent with both
	// transports and both grants: four runs, two at a time.
	var mu sync.Mutex
	var figures []hjFigures
	t.Run("runs", func(t *testing.T) {
		for _, run := range [][3]string{
			{"stdio", generated.PresetAssistant, "terminal"},
			{"stdio", "all", "decline"},
			{"http", generated.PresetAssistant, "decline"},
			{"http", "all", "terminal"},
		} {
			name := strings.Join(run[:], "-")
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				w := newHJWorld(t, imapSrv, mp, dav)
				f := w.hijack(t, run[0], run[1], run[2])
				f.name = name
				mu.Lock()
				figures = append(figures, f)
				mu.Unlock()
			})
		}
	})
	sort.Slice(figures, func(i, j int) bool { return figures[i].name < figures[j].name })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-28s %7s %5s %6s %6s %6s %7s %6s %5s %5s %7s %6s %5s %6s\n", "run", "attacks", "read", "tried", "calls", "refus.", "elicit.", "held", "sent", "unsub", "leaked", "undone", "lost", "rules")
	for _, f := range figures {
		fmt.Fprintf(&sb, "%-28s %7d %5d %6d %6d %6d %7d %6d %5d %5d %7d %6d %5d %6d\n", f.name, f.attacks, f.read, f.tried, f.calls, f.refused, f.asked, f.held, f.sent, f.unsubscribed, f.leaked, f.undone, f.lost, f.rulesEnabled)
	}
	t.Logf("the hijacked agent, figures:\n%s", sb.String())
	fmt.Print("hijacked agent figures:\n" + sb.String())
}

// hjWorld is one run's HOME, servers' users and corpus.
type hjWorld struct {
	root, home, xdg, cwd, save, notes string
	env                               []string
	cfg                               string
	imap                              *imaptest.Server
	user                              *imaptest.User
	mp                                *smtptest.Server
	du                                *davtest.User
	tag, attacker, own, leave         string
	https, plain                      *hjListServer
	attacks                           []string // every mark in the corpus
	actionsLog                        string   // postern actions --json before the sweep
}

// hjListServer is a list's web server on loopback that counts every request it gets.
type hjListServer struct {
	*httptest.Server
	n atomic.Int64
}

func newHJListServer(t *testing.T, tlsOn bool) *hjListServer {
	ls := &hjListServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ls.n.Add(1)
		io.Copy(io.Discard, r.Body)
		fmt.Fprintln(w, "You are unsubscribed.")
	})
	if tlsOn {
		ls.Server = httptest.NewTLSServer(h)
	} else {
		ls.Server = httptest.NewServer(h)
	}
	t.Cleanup(ls.Close)
	return ls
}

func hjLetters(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	return string(b)
}

func newHJWorld(t *testing.T, imapSrv *imaptest.Server, mp *smtptest.Server, dav *davtest.Server) *hjWorld {
	t.Helper()
	root, err := os.MkdirTemp("", "hijack")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	w := &hjWorld{root: root, home: filepath.Join(root, "home"), xdg: filepath.Join(root, "xdg"), cwd: filepath.Join(root, "cwd"),
		imap: imapSrv, mp: mp, tag: hjLetters(10)}
	w.save, w.notes = filepath.Join(w.home, "Downloads"), filepath.Join(w.home, "Notes")
	w.attacker = "claims.desk." + w.tag + "@outside.example"
	w.own = "sam." + w.tag + "@home.example"
	w.leave = "leave." + w.tag + "@lists.example"
	for _, d := range []string{w.save, w.notes, w.cwd, filepath.Join(w.xdg, "config", "postern"), filepath.Join(w.xdg, "data"), filepath.Join(w.xdg, "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// What a HOME holds before: the files an attack wants to replace.
	for name, text := range map[string]string{".bashrc": "# Sam's shell\nalias ll='ls -l'\n", ".profile": "# Sam's profile\n"} {
		if err := os.WriteFile(filepath.Join(w.home, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.https, w.plain = newHJListServer(t, true), newHJListServer(t, false)
	mailpitCert, err := os.ReadFile(filepath.Join(mp.Dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := filepath.Join(root, "roots.pem")
	listCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.https.Certificate().Raw})
	if err := os.WriteFile(roots, append(append(mailpitCert, '\n'), listCert...), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = append(os.Environ(),
		"HOME="+w.home,
		"XDG_CONFIG_HOME="+filepath.Join(w.xdg, "config"),
		"XDG_DATA_HOME="+filepath.Join(w.xdg, "data"),
		"XDG_STATE_HOME="+filepath.Join(w.xdg, "state"),
		"XDG_DOWNLOAD_DIR="+w.save,
		"POSTERN_WATCH=off",
		"SSL_CERT_FILE="+roots,
	)
	fill := strings.NewReplacer("@@ATTACKER@@", w.attacker, "@@OWN@@", w.own, "@@LEAVE@@", w.leave, "@@TAG@@", w.tag,
		"@@UNSUB_HTTPS@@", w.https.URL, "@@UNSUB_HTTP@@", w.plain.URL)
	corpus := filepath.Join("testdata", "hijack")

	// Mail, by APPEND on Dovecot.
	w.user = imapSrv.NewUser(t)
	c := w.user.Login(t, nil)
	for _, f := range []string{"Archive", "Drafts", "Sent", "Junk", "Trash"} {
		c.Create(f, nil).Wait() // an existing folder is fine
	}
	files, _ := filepath.Glob(filepath.Join(corpus, "mail", "*.eml"))
	if len(files) < 20 {
		t.Fatalf("the corpus has %d messages", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		folder, flags, raw := hjMessage(fill.Replace(string(b)))
		w.attacks = append(w.attacks, marksIn(raw)...)
		cmd := c.Append(folder, int64(len(raw)), &imap.AppendOptions{Flags: flags})
		if _, err := cmd.Write(raw); err != nil {
			t.Fatalf("APPEND %s: %v", f, err)
		}
		if err := cmd.Close(); err != nil {
			t.Fatalf("APPEND %s: %v", f, err)
		}
		if _, err := cmd.Wait(); err != nil {
			t.Fatalf("APPEND %s to %s: %v", f, folder, err)
		}
	}
	c.Logout()

	// Calendars, tasks, contacts and the closed project's calendar, by PUT on Radicale.
	w.du = dav.NewUser(t)
	colls := map[string]string{
		"calendar": w.du.MkCalendar(t, "personal", "Personal", "", "VEVENT"),
		"tasks":    w.du.MkCalendar(t, "todo", "To do", "", "VTODO"),
		"contacts": w.du.MkAddressBook(t, "contacts", "Contacts"),
		"acme":     w.du.MkCalendar(t, "acme", "Acme", "", "VEVENT"),
	}
	for dir, coll := range colls {
		objs, _ := filepath.Glob(filepath.Join(corpus, dir, "*"))
		for _, f := range objs {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text := davtest.CRLF(fill.Replace(string(b)))
			w.attacks = append(w.attacks, marksIn([]byte(unfold(text)))...)
			w.du.Put(t, coll+filepath.Base(f), text)
		}
	}

	// Notes.
	err = filepath.WalkDir(filepath.Join(corpus, "notes"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(corpus, "notes"), p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := fill.Replace(string(b))
		w.attacks = append(w.attacks, marksIn([]byte(text))...)
		dst := filepath.Join(w.notes, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(text), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}

	// The configuration: terminal approval that waits 1 s, the project acme closed.
	pw := filepath.Join(root, "pw")
	spw := filepath.Join(root, "smtp-pw")
	os.WriteFile(pw, []byte(w.user.Password+"\n"), 0o600)
	os.WriteFile(spw, []byte(mp.Password+"\n"), 0o600)
	w.cfg = filepath.Join(w.xdg, "config", "postern", "config.toml")
	cfg := fmt.Sprintf(`time_zone = "Europe/Paris"
save_dir = %q

[approval]
mode = "terminal"
wait = "1s"

[notes]
folder = %q

[[accounts]]
name = "work"
kind = "imap"
server = %q
user = %q
password_cmd = "cat %s"
tls = "none"
address = %q
display_name = "Sam"
smtp = %q
smtp_tls = "starttls"
smtp_user = %q
smtp_password_cmd = "cat %s"
sieve = %q
`, w.save, w.notes, imapSrv.Addr, w.user.Name, pw, w.own, mp.SMTP, mp.User, spw, imapSrv.ManageSieveAddr)
	if err := os.WriteFile(w.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := w.cli(t, "account", "add", "cal", "--caldav", dav.URL, "--carddav", dav.URL,
		"--user", w.du.Name, "--password-cmd", w.du.PasswordCmd(), "--config", w.cfg); code != 0 {
		t.Fatalf("account add: %d %s %s", code, out, errOut)
	}
	projects := fmt.Sprintf(`[[project]]
id = "acme"
name = "Acme"
open = false
subjects = ["Project Falcon"]
calendars = [%q]
note_folders = ["clients/acme"]
`, colls["acme"])
	if err := os.WriteFile(filepath.Join(filepath.Dir(w.cfg), "projects.toml"), []byte(projects), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := w.cli(t, "sync", "--config", w.cfg); code != 0 {
		t.Fatalf("postern sync: %d %s %s", code, out, errOut)
	}
	return w
}

// hjMessage takes the test's own fields off a corpus message and makes its line ends CRLF.
func hjMessage(s string) (folder string, flags []imap.Flag, raw []byte) {
	folder = "INBOX"
	head, body, _ := strings.Cut(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n")
	var keep []string
	for _, l := range strings.Split(head, "\n") {
		if v, ok := strings.CutPrefix(l, "X-Hijack-Folder:"); ok {
			folder = strings.TrimSpace(v)
			continue
		}
		if v, ok := strings.CutPrefix(l, "X-Hijack-Flags:"); ok {
			for _, f := range strings.Fields(v) {
				flags = append(flags, imap.Flag(f))
			}
			continue
		}
		keep = append(keep, l)
	}
	return folder, flags, []byte(strings.ReplaceAll(strings.Join(keep, "\n")+"\n\n"+body, "\n", "\r\n"))
}

// unfold joins iCalendar and vCard continuation lines.
func unfold(s string) string { return strings.ReplaceAll(s, "\r\n ", "") }

func marksIn(b []byte) []string {
	var out []string
	for _, m := range hjMarkRE.FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// cli runs postern in the world's HOME and working folder.
func (w *hjWorld) cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env, cmd.Dir = w.env, w.cwd
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// hjRecorder keeps every byte the agent received, as lines.
type hjRecorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *hjRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *hjRecorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Split(r.buf.String(), "\n")
}

// hjRecordingTransport tees every HTTP answer body (JSON or SSE) into the recorder.
type hjRecordingTransport struct {
	next http.RoundTripper
	rec  *hjRecorder
}

func (rt hjRecordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(resp.Body, rt.rec), resp.Body}
	}
	return resp, err
}

type hjReadCloser struct {
	io.Reader
	io.Closer
}

// connect starts the real binary for one run and connects the agent's client.
func (w *hjWorld) connect(t *testing.T, transport, scopes string, grantInConfig bool, decline func() int, rec *hjRecorder) (*mcp.ClientSession, *bytes.Buffer) {
	t.Helper()
	args := []string{"mcp", "--config", w.cfg}
	if !grantInConfig {
		args = append(args, "--scopes", scopes)
	}
	var opts *mcp.ClientOptions
	if decline != nil {
		opts = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			decline()
			return &mcp.ElicitResult{Action: "decline"}, nil
		}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "hijacked-agent", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stderr := &syncBuffer{}
	if transport == "stdio" {
		cmd := exec.Command(binary, args...)
		cmd.Env, cmd.Dir, cmd.Stderr = w.env, w.cwd, stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			in.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Errorf("postern mcp did not exit within 10 s of stdin closing")
			}
		})
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: hjReadCloser{io.TeeReader(out, rec), out}, Writer: in},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect over stdio: %v\n%s", err, stderr)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, &stderr.Buffer
	}
	cmd := exec.Command(binary, append(args, "--http", "127.0.0.1:0")...)
	cmd.Env, cmd.Dir, cmd.Stderr = w.env, w.cwd, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("postern mcp --http did not end within 10 s of SIGTERM")
		}
	})
	var endpoint string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && endpoint == ""; time.Sleep(20 * time.Millisecond) {
		if m := servingLine.FindStringSubmatch(stderr.String()); m != nil {
			endpoint = m[1]
		}
	}
	if endpoint == "" {
		t.Fatalf("postern mcp --http did not say where it serves; stderr:\n%s", stderr)
	}
	tok, err := os.ReadFile(filepath.Join(w.xdg, "config", "postern", "http-token"))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: hjRecordingTransport{bearer{strings.TrimSpace(string(tok)), http.DefaultTransport}, rec}}
	// The SDK's own era (2026-07-28): the person is asked with input_required there.
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, &stderr.Buffer
}

type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.String()
}

// hijack is one run: snapshot, the agent, the checks, the person's sweep, the comparison.
func (w *hjWorld) hijack(t *testing.T, transport, grant, person string) hjFigures {
	var scopes []string
	if grant == generated.PresetAssistant {
		for _, p := range generated.Presets {
			if p.Name == grant {
				scopes = p.Scopes
			}
		}
		// [mcp] scopes as a dotted key at the top, before the [[accounts]] tables.
		b, _ := os.ReadFile(w.cfg)
		q, _ := json.Marshal(scopes)
		if err := os.WriteFile(w.cfg, append([]byte("mcp.scopes = "+string(q)+"\n"), b...), 0o600); err != nil {
			t.Fatal(err)
		}
	} else {
		scopes = strings.Split(allScopes(), ",")
	}
	granted := map[string]bool{}
	for _, s := range scopes {
		granted[s] = true
	}

	imapBefore := hjIMAPState(t, w.user)
	davBefore := hjDAVState(t, w.du)
	homeBefore := hjTree(t, w.home)
	xdgBefore := hjTree(t, w.xdg)
	cwdBefore := hjTree(t, w.cwd)
	scriptsBefore := hjSieveScripts(t, w)

	var asked atomic.Int64
	var decline func() int
	if person == "decline" {
		decline = func() int { return int(asked.Add(1)) }
	}
	rec := &hjRecorder{}
	cs, stderr := w.connect(t, transport, strings.Join(scopes, ","), grant == generated.PresetAssistant, decline, rec)
	a := newHJAgent(t, cs)
	for _, s := range scopes {
		if s == generated.ScopeMailModify {
			if _, ok := a.tools[generated.ToolMailUndo]; !ok {
				t.Fatalf("mail:modify granted but mail_undo not listed: %v", a.tools)
			}
		}
	}
	start := time.Now()
	a.run()
	t.Logf("%s over %s, %s, person %s: %d tool calls in %v", grant, transport, strings.Join(scopes, ","), person, a.calls, time.Since(start).Round(time.Millisecond))

	f := hjFigures{calls: a.calls, refused: a.refused, asked: int(asked.Load()), instructions: a.instrRun}
	f.held = strings.Count(stderr.String(), "waits for your approval")

	// The agent read every attack it can see, and none the closed project keeps.
	open := map[string]bool{}
	for _, m := range w.attacks {
		if !slices.Contains(hjClosedMarks, m) {
			open[m] = true
		}
	}
	f.attacks = len(open)
	for m := range a.marks {
		if slices.Contains(hjClosedMarks, m) {
			t.Errorf("the agent read the attack %q that the closed project keeps", m)
		} else {
			f.read++
		}
	}
	for m := range a.tried {
		if !slices.Contains(hjClosedMarks, m) {
			f.tried++
		}
	}
	var unread []string
	for m := range open {
		if !a.marks[m] {
			unread = append(unread, m)
		}
	}
	sort.Strings(unread)
	if len(unread) > 0 {
		t.Logf("attacks the agent never read (postern did not show them): %v", unread)
	}
	if f.read < f.attacks/2 || f.tried == 0 {
		t.Fatalf("the agent read %d of %d attacks and carried out %d: the test is not testing", f.read, f.attacks, f.tried)
	}
	if person == "decline" && granted[generated.ScopeMailSend] && f.asked == 0 {
		t.Errorf("the client declares elicitation and sends were asked for, yet the person was never asked")
	}

	// Nothing left: Mailpit and the list servers got nothing.
	f.sent = hjMailpitCount(t, w.mp, w.tag)
	if f.sent != 0 {
		t.Errorf("Mailpit received %d messages from the hijacked agent (searched for the run's tag %s)", f.sent, w.tag)
	}
	f.unsubscribed = int(w.https.n.Load() + w.plain.n.Load())
	if f.unsubscribed != 0 {
		t.Errorf("the list servers got %d unsubscribe requests (https %d, http %d)", f.unsubscribed, w.https.n.Load(), w.plain.n.Load())
	}

	// Rules: no forward enabled, nothing enabled without rules:write, no script on the server.
	out, errOut, code := w.cli(t, "rules", "list", "--json", "--config", w.cfg)
	if code != 0 {
		t.Fatalf("postern rules list: %s %s", out, errOut)
	}
	var rules []map[string]any
	json.Unmarshal([]byte(out), &rules)
	for _, r := range rules {
		if r["state"] != "enabled" {
			continue
		}
		f.rulesEnabled++
		if !granted[generated.ScopeRulesWrite] {
			t.Errorf("without rules:write the agent got the rule %q enabled", r["name"])
		}
		for _, act := range asList(r["actions"]) {
			if !slices.Contains([]string{"archive", "move", "mark_read", "mark_unread", "flag", "unflag", "junk", "delete"}, fmt.Sprint(act["do"])) {
				t.Errorf("the enabled rule %q does %v, which cannot be undone: %v", r["name"], act["do"], r)
			}
		}
	}
	scriptsAfter := hjSieveScripts(t, w)
	f.scripts = len(scriptsAfter) - len(scriptsBefore)
	if !slices.Equal(scriptsAfter, scriptsBefore) {
		t.Errorf("the ManageSieve server holds scripts %v after the agent, %v before: a script was pushed with nobody approving", scriptsAfter, scriptsBefore)
	}

	// Files: nothing new in HOME outside the save and notes folders, nothing changed there at
	// all, nothing new in the working folder, postern's own files only in its own folders.
	homeAfter := hjTree(t, w.home)
	for p, sum := range homeAfter {
		before, had := homeBefore[p]
		inside := hjUnder(filepath.Join(w.home, p), w.save) || hjUnder(filepath.Join(w.home, p), w.notes)
		switch {
		case had && before != sum:
			t.Errorf("the file ~/%s changed", p)
			f.strays++
		case !had && !inside:
			t.Errorf("a new file ~/%s outside the save and notes folders", p)
			f.strays++
		}
	}
	for p := range homeBefore {
		if _, ok := homeAfter[p]; !ok {
			t.Errorf("the file ~/%s is gone", p)
			f.strays++
		}
	}
	for p := range hjTree(t, w.cwd) {
		if _, ok := cwdBefore[p]; !ok {
			t.Errorf("a new file %s in postern's working folder", p)
			f.strays++
		}
	}
	for p := range hjTree(t, w.xdg) {
		if _, ok := xdgBefore[p]; !ok && !strings.HasPrefix(p, filepath.Join("config", "postern")+"/") &&
			!strings.HasPrefix(p, filepath.Join("data", "postern")+"/") && !strings.HasPrefix(p, filepath.Join("state", "postern")+"/") {
			t.Errorf("a new file %s in the XDG folders outside postern's own", p)
			f.strays++
		}
	}
	// ~/.bashrc and ~/.profile are checked byte for byte above; the folders around HOME too.
	for _, p := range []string{filepath.Join(w.root, ".bashrc"), filepath.Join(w.root, ".profile"), filepath.Join(w.xdg, ".bashrc")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("a file at %s", p)
			f.strays++
		}
	}

	// Leaks: no planted secret, in any form, in any line the agent received.
	lines := rec.lines()
	for _, l := range lines {
		for _, why := range hjLeaks(l) {
			f.leaked++
			if f.leaked <= 10 {
				t.Errorf("a secret reached the agent: %s\n  in: %.400s", why, l)
			}
		}
	}
	if f.leaked > 10 {
		t.Errorf("… %d leaks in all", f.leaked)
	}
	if len(lines) < a.calls {
		t.Errorf("recorded %d lines for %d calls: the recorder missed answers", len(lines), a.calls)
	}

	// The person's sweep: the log shows the calls; every action is undone, newest first.
	cs.Close()
	out, errOut, code = w.cli(t, "log", "--json")
	if code != 0 {
		t.Fatalf("postern log: %s %s", out, errOut)
	}
	f.logged = strings.Count(out, "\n")
	if toolCalls := a.calls - a.byTool["resources/read"]; f.logged < toolCalls {
		t.Errorf("postern log lists %d calls; the agent made %d tool calls", f.logged, toolCalls)
	}
	f.undone = w.sweep(t)

	imapAfter := hjIMAPState(t, w.user)
	davAfter := hjDAVState(t, w.du)
	var drafts int
	f.lost, drafts = hjCompareIMAP(t, imapBefore, imapAfter)
	if n := hjCompare(t, "CalDAV/CardDAV", davBefore, davAfter); n > 0 {
		f.lost += n
		t.Errorf("%d calendar, task or contact objects are not as before after the sweep; the agent's writes there that postern answered as done: %v; postern actions listed: %s",
			n, a.writes, w.actionsLog)
	}
	f.drafts = drafts
	t.Logf("calls by tool: %v", a.byTool)
	if p := os.Getenv("POSTERN_HIJACK_TRACE"); p != "" {
		os.WriteFile(p+"."+transport+"-"+grant+"-"+person, []byte(strings.Join(a.trace, "\n")+"\n\nactions:\n"+w.actionsLog+"\n"), 0o600)
	}
	return f
}

// sweep is the person at the terminal: postern actions, then postern undo for each action
// not undone yet (and not itself an undo), newest first. It returns how many it undid.
func (w *hjWorld) sweep(t *testing.T) int {
	t.Helper()
	out, errOut, code := w.cli(t, "actions", "--json", "--limit", "200", "--config", w.cfg)
	if code != 0 {
		t.Fatalf("postern actions: %d %s %s", code, out, errOut)
	}
	w.actionsLog = out
	var list struct {
		Actions []map[string]any `json:"actions"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("postern actions --json: %v\n%s", err, out)
	}
	n := 0
	for _, act := range list.Actions { // newest first
		if act["undone_by"] != nil || act["undoes"] != nil {
			continue
		}
		id := fmt.Sprint(act["action_id"])
		out, errOut, code := w.cli(t, "undo", id, "--json", "--config", w.cfg)
		if code != 0 {
			t.Errorf("postern undo %s (%v): %d %s %s", id, act["action"], code, out, errOut)
			continue
		}
		n++
		var res map[string]any
		json.Unmarshal([]byte(out), &res)
		for _, row := range asList(res["messages"]) {
			if o := row["outcome"]; o != "put_back" && o != "restored" && o != "nothing_to_undo" {
				t.Errorf("postern undo %s (%v): message %v %v: %v", id, act["action"], row["subject"], o, row["reason"])
			}
		}
	}
	return n
}

// hjIMAPState is every folder as a second IMAP client sees it: each message's Message-ID,
// flags and the SHA-256 of its bytes.
func hjIMAPState(t *testing.T, u *imaptest.User) map[string]string {
	t.Helper()
	c := u.Login(t, nil)
	defer c.Logout()
	boxes, err := c.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, mb := range boxes {
		sel, err := c.Select(mb.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		if sel.NumMessages > 0 {
			body := &imap.FetchItemBodySection{Peek: true}
			msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{Flags: true, BodySection: []*imap.FetchItemBodySection{body}}).Collect()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				raw := m.FindBodySection(body)
				var flags []string
				for _, f := range m.Flags {
					if f != `\Recent` {
						flags = append(flags, string(f))
					}
				}
				sort.Strings(flags)
				mid := ""
				if mm := regexp.MustCompile(`(?im)^Message-ID:\s*(\S+)`).FindSubmatch(raw); mm != nil {
					mid = string(mm[1])
				}
				sum := sha256.Sum256(raw)
				rows = append(rows, fmt.Sprintf("%s %v sha256:%s", mid, flags, hex.EncodeToString(sum[:6])))
			}
		}
		sort.Strings(rows)
		out[mb.Mailbox] = strings.Join(rows, "\n")
	}
	return out
}

var hjHrefRE = regexp.MustCompile(`<(?:[A-Za-z]+:)?href>([^<]+)</(?:[A-Za-z]+:)?href>`)

// hjDAVState is every collection and object of the user's home by raw PROPFIND and GET.
func hjDAVState(t *testing.T, u *davtest.User) map[string]string {
	t.Helper()
	propfind := func(url string) []string {
		st, _, body := u.Do(t, "PROPFIND", url, map[string]string{"Depth": "1", "Content-Type": "application/xml"},
			`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/></D:prop></D:propfind>`)
		if st != 207 {
			t.Fatalf("PROPFIND %s: %d", url, st)
		}
		var out []string
		for _, m := range hjHrefRE.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	base, _ := url.Parse(u.CalendarHome)
	abs := func(href string) string { r, _ := base.Parse(href); return r.String() }
	out := map[string]string{}
	for _, coll := range propfind(u.CalendarHome) {
		if abs(coll) == u.CalendarHome || !strings.HasSuffix(coll, "/") {
			continue
		}
		out[coll] = "collection"
		for _, obj := range propfind(abs(coll)) {
			if strings.HasSuffix(obj, "/") {
				continue
			}
			data, _ := u.Get(t, abs(obj))
			out[obj] = data
		}
	}
	return out
}

// hjCompareIMAP says (and counts) each message not in its folder with its flags and bytes as
// before. New drafts in Drafts are counted apart: adding a draft sends and removes nothing, and
// is the one write that neither waits for the person nor enters the action log (docs/design.md).
func hjCompareIMAP(t *testing.T, before, after map[string]string) (lost, drafts int) {
	t.Helper()
	rows := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, r := range strings.Split(s, "\n") {
			if r != "" {
				m[r] = true
			}
		}
		return m
	}
	for folder, b := range before {
		now := rows(after[folder])
		for r := range rows(b) {
			if !now[r] {
				t.Errorf("IMAP: %s is no longer in %s as it was (Message-ID, flags, SHA-256) after the sweep; %s holds:\n%s", r, folder, folder, after[folder])
				lost++
			}
		}
	}
	for folder, a := range after {
		was := rows(before[folder])
		for r := range rows(a) {
			switch {
			case was[r]:
			case folder == "Drafts" && strings.Contains(r, `\Draft`):
				drafts++
			default:
				t.Errorf("IMAP: %s is new in %s after the sweep", r, folder)
				lost++
			}
		}
	}
	return lost, drafts
}

// hjCompare says (and counts) what differs between two states.
func hjCompare(t *testing.T, what string, before, after map[string]string) int {
	t.Helper()
	n := 0
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			t.Errorf("%s: %s is gone after the sweep (it held:\n%.600s)", what, k, b)
			n++
		case a != b:
			t.Errorf("%s: %s differs after the sweep:\nbefore:\n%.1500s\nafter:\n%.1500s", what, k, b, a)
			n++
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok && a != "" {
			t.Errorf("%s: %s is new after the sweep:\n%.600s", what, k, a)
			n++
		}
	}
	return n
}

// hjTree is every file below dir (relative path → mode and SHA-256).
func hjTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		info, _ := d.Info()
		sum := ""
		if b, err := os.ReadFile(p); err == nil {
			s := sha256.Sum256(b)
			sum = hex.EncodeToString(s[:8])
		}
		out[rel] = fmt.Sprintf("%v %s", info.Mode(), sum)
		return nil
	})
	return out
}

func hjUnder(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// hjSieveScripts lists the user's scripts on the ManageSieve server with the test's own client.
func hjSieveScripts(t *testing.T, w *hjWorld) []string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", w.imap.ManageSieveAddr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := managesieve.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Logout()
	if err := c.StartTLS(&tls.Config{RootCAs: w.imap.CertPool(t), ServerName: "127.0.0.1"}); err != nil {
		t.Fatalf("STARTTLS: %v", err)
	}
	if err := c.AuthenticatePlain(w.user.Name, w.user.Password); err != nil {
		t.Fatalf("AUTHENTICATE: %v", err)
	}
	list, err := c.ListScripts()
	if err != nil {
		t.Fatalf("LISTSCRIPTS: %v", err)
	}
	var out []string
	for _, s := range list {
		out = append(out, fmt.Sprintf("%s active=%v", s.Name, s.Active))
	}
	sort.Strings(out)
	return out
}

// hjMailpitCount is how many messages either Mailpit instance holds that name the run's tag:
// every address of the corpus and the person's own hold it, so any message sent holds it.
func hjMailpitCount(t *testing.T, mp *smtptest.Server, tag string) int {
	t.Helper()
	hc := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{Proxy: nil}}
	n := 0
	for _, api := range []string{mp.API, mp.SMTPSAPI} {
		for _, q := range []string{"addressed:" + tag, tag} {
			resp, err := hc.Get(api + "/api/v1/search?" + url.Values{"query": {q}, "limit": {"1000"}}.Encode())
			if err != nil {
				t.Fatalf("Mailpit search: %v", err)
			}
			var res struct {
				MessagesCount int `json:"messages_count"`
				Messages      []struct {
					Subject string `json:"Subject"`
				} `json:"messages"`
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &res) != nil {
				t.Fatalf("Mailpit search %s: %d %s", q, resp.StatusCode, b)
			}
			if len(res.Messages) > n {
				n = len(res.Messages)
			}
		}
	}
	return n
}

// hjFold is a line as a reader sees it: compatibility forms folded (fullwidth, mathematical
// digits), every decimal digit of any script as its ASCII digit, characters nobody sees
// (format, private use, marks, the Braille blank) dropped, lower case.
func hjFold(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Nd, r):
			b.WriteByte(byte('0' + digitValue(r)))
		case unicode.In(r, unicode.Cf, unicode.Co, unicode.Mn, unicode.Me) || r == 0x2800:
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

var (
	hjTokenRE = regexp.MustCompile(`[a-z0-9_-]{20,}`)
	hjRunRE   = regexp.MustCompile(`[0-9]{3,}`)
	hjWordRE  = regexp.MustCompile(`[a-z]{5,}`)
)

func hjAlnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hjLeaks says which planted secrets a line shows: whole (with any separators, or none, between
// its characters), a run of three or more of its hidden digits standing on its own, or a word
// of a password. Every string of a JSON line is read decoded too.
// hjNumberField: the text form's "name: " before a bare number; a string value is always quoted.
var hjNumberField = regexp.MustCompile(`(^|[\n;{] ?|- )[a-z_]+: $`)

func hjLeaks(line string) []string {
	if strings.TrimSpace(line) == "" {
		return nil
	}
	texts := []string{line}
	var v any
	if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v) == nil {
		var walk func(any)
		walk = func(x any) {
			switch y := x.(type) {
			case map[string]any:
				for k, e := range y {
					texts = append(texts, k)
					walk(e)
				}
			case []any:
				for _, e := range y {
					walk(e)
				}
			case string:
				texts = append(texts, y)
			}
		}
		walk(v)
	}
	var out []string
	for n, text := range texts {
		raw := n == 0 && len(texts) > 1 // a JSON line as sent: its numbers (ids) are not text shown
		folded := hjFold(text)
		flat := hjAlnum(folded)
		noTokens := hjTokenRE.ReplaceAllString(folded, " ")
		for _, s := range hijackSecrets {
			whole := strings.ToLower(hjAlnum(s.value))
			if len(whole) >= 6 && strings.Contains(flat, whole) {
				out = append(out, fmt.Sprintf("the %s whole", s.what))
				continue
			}
			if raw {
				continue
			}
			if s.password {
				for _, word := range hjWordRE.FindAllString(strings.ToLower(s.value), -1) {
					if regexp.MustCompile(`\b` + word + `\b`).MatchString(folded) {
						out = append(out, fmt.Sprintf("the word %q of the %s", word, s.what))
					}
				}
				continue
			}
			hidden := strings.TrimSuffix(hjDigitsOf(s.value), s.shown)
			for _, loc := range hjRunRE.FindAllStringIndex(noTokens, -1) {
				if loc[0] > 0 && hjWordChar(noTokens[loc[0]-1]) || loc[1] < len(noTokens) && hjWordChar(noTokens[loc[1]]) {
					continue // part of an id or a word, not a number shown
				}
				if hjNumberField.MatchString(noTokens[:loc[0]]) {
					continue // a number field of the text form (size: 661): postern's count, not text; strings are quoted
				}
				if run := noTokens[loc[0]:loc[1]]; strings.Contains(hidden, run) {
					out = append(out, fmt.Sprintf("the digits %s of the %s", run, s.what))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func hjDigitsOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hjWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
}

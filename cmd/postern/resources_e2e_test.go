package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/corpus"
	pmcp "github.com/postern-mcp/postern/internal/mcp"
)

// resHome is a person with a Maildir (two threads of their own beside a corpus) and a
// folder of .ics files with two events today, synced, read by the real binary.
type resHome struct {
	env     []string
	maildir string
	ics     string
}

// write writes one message into the Maildir's INBOX.
func (h *resHome) write(t *testing.T, name, msgID, inReplyTo, subject, body string, date time.Time) {
	t.Helper()
	hdr := "Date: " + date.Format(time.RFC1123Z) + "\r\nFrom: Ada Quill <ada@example.org>\r\nTo: " + corpus.OwnerEmail +
		"\r\nSubject: " + subject + "\r\nMessage-ID: <" + msgID + ">\r\n"
	if inReplyTo != "" {
		hdr += "In-Reply-To: <" + inReplyTo + ">\r\nReferences: <" + inReplyTo + ">\r\n"
	}
	raw := hdr + "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n"
	p := filepath.Join(h.maildir, "cur", fmt.Sprintf("%d.%s.postern:2,S", date.Unix(), name))
	if err := os.WriteFile(p, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newResHome(t *testing.T) *resHome {
	t.Helper()
	env := home(t)
	dir := t.TempDir()
	h := &resHome{env: env, maildir: filepath.Join(dir, "Maildir")}
	if _, err := corpus.WriteMaildir(h.maildir, corpus.Options{Seed: 3, Messages: 12}); err != nil {
		t.Fatal(err)
	}
	base := time.Now().UTC().Add(-48 * time.Hour)
	h.write(t, "harbour1", "harbour-1@example.org", "", "Harbour plans", "Shall we meet at the quay?", base)
	h.write(t, "harbour2", "harbour-2@example.org", "harbour-1@example.org", "Re: Harbour plans", "Yes, at noon.", base.Add(time.Hour))
	h.write(t, "kiln1", "kiln-1@example.org", "", "Kiln repair", "The kiln is cracked.", base.Add(2*time.Hour))
	ics := filepath.Join(dir, "cal")
	h.ics = ics
	if err := os.MkdirAll(ics, 0o755); err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Format("20060102")
	h.event(t, "allday", "Lighthouse open day", ";VALUE=DATE:"+day, ";VALUE=DATE:"+time.Now().UTC().AddDate(0, 0, 1).Format("20060102"))
	h.event(t, "tide", "Tide table review", ":"+day+"T120000Z", ":"+day+"T130000Z")
	cfgDir := filepath.Join(lastEnv(env, "XDG_CONFIG_HOME"), "postern")
	os.MkdirAll(cfgDir, 0o700)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("time_zone = \"UTC\"\n\n[mcp]\nscopes = [\"read\", \"read:bodies\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"account", "add", "mail", "--maildir", h.maildir}, {"account", "add", "cal", "--ics", ics}, {"sync"}} {
		if _, errOut, code := runCLI(t, env, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	return h
}

// event writes one event into the .ics folder as NAME.ics.
func (h *resHome) event(t *testing.T, name, summary, start, end string) {
	t.Helper()
	ics := strings.ReplaceAll("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//postern test//EN\nBEGIN:VEVENT\nUID:"+name+"-today"+
		"\nDTSTAMP:20260101T000000Z\nDTSTART"+start+"\nDTEND"+end+"\nSUMMARY:"+summary+"\nEND:VEVENT\nEND:VCALENDAR\n", "\n", "\r\n")
	if err := os.WriteFile(filepath.Join(h.ics, name+".ics"), []byte(ics), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lastEnv is the last value of key in env.
func lastEnv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, x, ok := strings.Cut(kv, "="); ok && k == key {
			v = x
		}
	}
	return v
}

func (h *resHome) connect(t *testing.T, ctx context.Context, version string, opts *mcp.ClientOptions, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp"}, args...)...)
	cmd.Env = h.env
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-resources", Version: "1"}, opts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, so)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// frameMark is the fresh mark of a framed text; two answers differ only there.
var frameMark = regexp.MustCompile(`(<<<[a-z-]+ )[0-9a-f]{8,}( (?:begins|ends)>>>)`)

func unmarked(s string) string { return frameMark.ReplaceAllString(s, "${1}MARK${2}") }

func toolText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s %v: %+v", name, args, res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text, res
}

func readResourceText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(r.Contents) != 1 || r.Contents[0].URI != uri {
		t.Fatalf("read %s: %+v", uri, r.Contents)
	}
	return r.Contents[0].Text
}

// idOf returns the id and thread of the row whose subject is subject in a mail_search answer.
func idOf(t *testing.T, res *mcp.CallToolResult, subject string) (id, thread string) {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var list struct {
		Messages []struct{ ID, Thread, Subject string } `json:"messages"`
	}
	json.Unmarshal(b, &list)
	for _, m := range list.Messages {
		if m.Subject == subject {
			if m.Thread == "" {
				m.Thread = m.ID
			}
			return m.ID, m.Thread
		}
	}
	t.Fatalf("no row %q in %s", subject, b)
	return "", ""
}

// TestResourcesGoSDK: the official Go SDK client lists the templates and reads each one's
// resource, in both eras; each read is the tool's text; tool answers link what they name.
func TestResourcesGoSDK(t *testing.T) {
	h := newResHome(t)
	for _, version := range []string{pmcp.LatestLegacy, ""} {
		t.Run("era-"+map[string]string{"": "modern"}[version]+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs := h.connect(t, ctx, version, nil)
			tl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tm := range tl.ResourceTemplates {
				names = append(names, tm.Name)
			}
			var want []string
			for _, r := range generated.Resources {
				want = append(want, r.Name) // read and read:bodies: every template
			}
			if !slices.Equal(names, want) {
				t.Fatalf("templates %v, want %v", names, want)
			}
			rl, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rl.Resources, func(r *mcp.Resource) bool { return r.URI == "postern://agenda/today" }) {
				t.Fatalf("resources/list without postern://agenda/today though a calendar is synced: %+v", rl.Resources)
			}

			_, found := toolText(t, ctx, cs, generated.ToolMailSearch, map[string]any{"query": "harbour"})
			id, thread := idOf(t, found, "Re: Harbour plans")
			// Every id the answer names comes back as a link after the text.
			var links []string
			for _, c := range found.Content[1:] {
				l, ok := c.(*mcp.ResourceLink)
				if !ok {
					t.Fatalf("after the text, content %T", c)
				}
				links = append(links, l.URI)
			}
			for _, u := range []string{"postern://message/" + id, "postern://thread/" + thread} {
				if !slices.Contains(links, u) {
					t.Fatalf("mail_search links %v, not %s", links, u)
				}
			}

			showText, _ := toolText(t, ctx, cs, generated.ToolMailShow, map[string]any{"id": id})
			msg := readResourceText(t, ctx, cs, "postern://message/"+id)
			if unmarked(msg) != unmarked(showText) || !strings.Contains(msg, "Yes, at noon.") {
				t.Fatalf("the message resource is not mail_show's text:\n%s\n---\n%s", msg, showText)
			}
			threadText, _ := toolText(t, ctx, cs, generated.ToolMailThread, map[string]any{"id": id})
			thr := readResourceText(t, ctx, cs, "postern://thread/"+thread)
			if thr != threadText || !strings.Contains(thr, "Harbour plans") || !strings.Contains(thr, "Re: Harbour plans") {
				t.Fatalf("the thread resource is not mail_thread's text:\n%s\n---\n%s", thr, threadText)
			}
			today := time.Now().UTC().Format(time.DateOnly)
			agendaText, _ := toolText(t, ctx, cs, generated.ToolAgenda, map[string]any{"from": today, "to": today})
			ag := readResourceText(t, ctx, cs, "postern://agenda/today")
			if ag != agendaText || !strings.Contains(ag, "Lighthouse open day") || !strings.Contains(ag, "Tide table review") {
				t.Fatalf("the agenda resource is not the agenda's text:\n%s\n---\n%s", ag, agendaText)
			}
			if readResourceText(t, ctx, cs, "postern://agenda/"+today) != ag {
				t.Fatal("postern://agenda/DATE of today differs from postern://agenda/today")
			}
			if !strings.Contains(readResourceText(t, ctx, cs, "postern://docs/guide"), "postern") {
				t.Fatal("the guide reads empty")
			}

			// A missing id, a malformed URI and a note that is not there: not found, the tool's sentence.
			code := pmcp.CodeResourceNotFound
			if version == "" {
				code = -32602
			}
			_, missing := mailShowRefusal(t, ctx, cs)
			for uri, sentence := range map[string]string{
				"postern://message/mzzzzzz":          missing,
				"postern://message/not-an-id":        missing,
				"postern://thread/mzzzzzz":           missing,
				"postern://agenda/someday":           "",
				"postern://note/nothing.md":          "",
				"postern://message/":                 "",
				"postern://nowhere/x":                "",
				"mailto:ada@example.org":             "",
				"postern://message/m1/../../etc":     "",
				"postern://docs/no-such-page-at-all": "",
			} {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || int(werr.Code) != code {
					t.Fatalf("read %s: want error %d, got %v", uri, code, err)
				}
				if sentence != "" && werr.Message != sentence {
					t.Fatalf("read %s: message %q, want the tool's %q", uri, werr.Message, sentence)
				}
			}
		})
	}

	// read alone: no message template, and a message is not readable; the thread is.
	t.Run("scope", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs := h.connect(t, ctx, pmcp.LatestLegacy, nil, "--scopes", generated.ScopeRead)
		tl, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tm := range tl.ResourceTemplates {
			if tm.Name == generated.ResourceMessage {
				t.Fatalf("read alone lists the message template: %+v", tm)
			}
		}
		_, found := toolText(t, ctx, cs, generated.ToolMailSearch, map[string]any{"query": "harbour"})
		id, thread := idOf(t, found, "Re: Harbour plans")
		for _, c := range found.Content[1:] {
			if l := c.(*mcp.ResourceLink); strings.HasPrefix(l.URI, "postern://message/") {
				t.Fatalf("read alone links a message it cannot read: %s", l.URI)
			}
		}
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "postern://message/" + id})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != pmcp.CodeResourceNotFound || !strings.Contains(werr.Message, generated.ScopeReadBodies) {
			t.Fatalf("a message under read alone: %v", err)
		}
		readResourceText(t, ctx, cs, "postern://thread/"+thread)
	})
}

// mailShowRefusal is mail_show's sentence for an id that is not here.
func mailShowRefusal(t *testing.T, ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: generated.ToolMailShow, Arguments: map[string]any{"id": "mzzzzzz"}})
	if err != nil || !res.IsError {
		t.Fatalf("mail_show of a missing id: %v %+v", err, res)
	}
	return res, res.Content[0].(*mcp.TextContent).Text
}

// TestResourceUpdatedAfterSync: a client reads a thread and subscribes to it; a sync in another
// process (postern sync) brings a reply to it and one to another thread; the client is told
// that its thread changed, and nothing about the other one. Legacy resources/subscribe and
// 2026-07-28 subscriptions/listen, both through the Go SDK client.
func TestResourceUpdatedAfterSync(t *testing.T) {
	for _, version := range []string{pmcp.LatestLegacy, ""} {
		t.Run("era-"+map[string]string{"": "modern"}[version]+version, func(t *testing.T) {
			h := newResHome(t)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			updated := make(chan string, 16)
			cs := h.connect(t, ctx, version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
			})
			if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
				t.Fatalf("the server does not announce resources.subscribe: %+v", caps.Resources)
			}
			_, found := toolText(t, ctx, cs, generated.ToolMailSearch, map[string]any{"query": "harbour OR kiln"})
			_, harbour := idOf(t, found, "Re: Harbour plans")
			_, kiln := idOf(t, found, "Kiln repair")
			uri := "postern://thread/" + harbour
			before := readResourceText(t, ctx, cs, uri)
			agenda := "postern://agenda/today"
			readResourceText(t, ctx, cs, agenda)
			for _, u := range []string{uri, agenda} {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: u}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(1500 * time.Millisecond) // a look or two with nothing new: nothing is told
			select {
			case u := <-updated:
				t.Fatalf("told %s changed before any sync", u)
			default:
			}
			later := time.Now().UTC().Add(-time.Hour)
			h.write(t, "harbour3", "harbour-3@example.org", "harbour-2@example.org", "Re: Harbour plans", "Bring the charts.", later)
			h.write(t, "kiln2", "kiln-2@example.org", "kiln-1@example.org", "Re: Kiln repair", "A new one comes Monday.", later)
			h.event(t, "ferry", "Ferry timetable", ":"+time.Now().UTC().Format("20060102")+"T150000Z", ":"+time.Now().UTC().Format("20060102")+"T153000Z")
			if _, errOut, code := runCLI(t, h.env, "sync"); code != 0 {
				t.Fatalf("sync: %s", errOut)
			}
			told := map[string]bool{}
			for len(told) < 2 {
				select {
				case u := <-updated:
					if u != uri && u != agenda {
						t.Fatalf("told %s changed, want %s and %s", u, uri, agenda)
					}
					told[u] = true
				case <-time.After(20 * time.Second):
					t.Fatalf("within 20 s of the sync, notifications/resources/updated only for %v, want %s and %s", told, uri, agenda)
				}
			}
			if !strings.Contains(readResourceText(t, ctx, cs, agenda), "Ferry timetable") {
				t.Fatal("the agenda reads without the new event after the update")
			}
			after := readResourceText(t, ctx, cs, uri)
			if after == before || strings.Count(after, "Re: Harbour plans") < 2 {
				t.Fatalf("the thread reads the same after the sync:\n%s", after)
			}
			time.Sleep(1500 * time.Millisecond)
			for len(updated) > 0 {
				if u := <-updated; u == "postern://thread/"+kiln {
					t.Fatalf("told about %s, which no one subscribed to", u)
				}
			}
			if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

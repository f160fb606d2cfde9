package main

// The agent mode (-agent): what an agent reads, in bytes, through the real
// postern binary over stdio. See BENCHMARKS.md, "What an agent reads".

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/corpus"
)

var (
	agentMode     = flag.Bool("agent", false, "measure what an agent reads (bytes of tools/list per preset, 50 "+generated.ToolMailList+" rows, a 20-message thread) over a generated Maildir (see BENCHMARKS.md)")
	agentMessages = flag.Int("agent-messages", 2000, "-agent: messages in the generated Maildir, besides the 20-message thread")
	agentBaseline = flag.String("baseline", "", "-agent: an earlier postern binary to measure beside (tools/list, "+generated.ToolMailList+", "+generated.ToolMailShow+"; it needs no "+generated.ToolMailThread+" text)")
)

const (
	threadLen = 20 // messages in the measured thread

	// Targets stated in BENCHMARKS.md.
	targetListText  = 8 << 10 // 50 mail_list rows, default fields: text bytes at most
	targetThreadPct = 25      // mail_thread text:true: at most this % of the text of 20 mail_show
)

// sizes is what one answer gives an agent: the text, structuredContent as
// sent, and the whole JSON-RPC line.
type sizes struct {
	Text       int `json:"text_bytes"`
	Structured int `json:"structured_bytes"`
	Wire       int `json:"wire_bytes"`
}

func (s *sizes) add(o sizes) { s.Text += o.Text; s.Structured += o.Structured; s.Wire += o.Wire }

type listSizes struct {
	Preset       string   `json:"preset"`
	Scopes       []string `json:"scopes"`
	Tools        int      `json:"tools"`
	Descriptions int      `json:"description_bytes"`   // names, titles and descriptions
	InputSchema  int      `json:"input_schema_bytes"`  // inputSchema objects
	OutputSchema int      `json:"output_schema_bytes"` // outputSchema objects
	Wire         int      `json:"wire_bytes"`          // the tools/list answer line(s)
}

type agentReport struct {
	Machine  machineInfo `json:"machine"`
	Messages int         `json:"messages"`
	Seed     int64       `json:"seed"`
	ToolList []listSizes `json:"tools_list"`
	List50   sizes       `json:"mail_list_50"`
	Rows     int         `json:"mail_list_rows"`
	Thread   sizes       `json:"mail_thread_text"`
	Shows    sizes       `json:"mail_show_20"`
	Baseline *struct {
		Path     string      `json:"path"`
		ToolList []listSizes `json:"tools_list"`
		List50   sizes       `json:"mail_list_50"`
		Shows    sizes       `json:"mail_show_20"`
	} `json:"baseline,omitempty"`
	Targets struct {
		ListTextMax    int  `json:"mail_list_text_max"`
		ListWithin     bool `json:"mail_list_within"`
		ThreadPctMax   int  `json:"thread_vs_show_pct_max"`
		ThreadPct      int  `json:"thread_vs_show_pct"`
		ThreadWithin   bool `json:"thread_within"`
		ThreadComplete bool `json:"thread_complete"` // every message's own line is in the thread's text
	} `json:"targets"`
}

func runAgent(posternPath string, asJSON bool, limit time.Duration) {
	time.AfterFunc(limit, func() { fail(fmt.Errorf("the run took longer than -timeout %v", limit)) })
	tmp, posternPath, env := binaryRun("agent", posternPath)

	var r agentReport
	r.Machine, r.Messages, r.Seed = machine(), *agentMessages, *mailSeed
	maildir := filepath.Join(tmp, "Maildir")
	if _, err := corpus.WriteMaildir(maildir, corpus.Options{Seed: *mailSeed, Messages: *agentMessages}); err != nil {
		fail(err)
	}
	lines, err := writeChain(maildir, threadLen)
	if err != nil {
		fail(err)
	}
	cfg := filepath.Join(tmp, "config.toml")
	toml := fmt.Sprintf("[[accounts]]\nname = \"bench\"\nkind = \"maildir\"\npath = %q\naddress = %q\n", maildir, corpus.OwnerEmail)
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		fail(err)
	}
	if _, err := run(context.Background(), stepTimeout, env, posternPath, "sync", "--config", cfg); err != nil {
		fail(err)
	}

	r.ToolList = measureLists(posternPath, env, cfg)

	c := agentConn(posternPath, env, cfg, presetScopes(generated.PresetReader))
	sc, s := c.call(generated.ToolMailList, map[string]any{"limit": 50})
	r.List50 = s
	r.Rows = len(gjsonArray(sc, "messages"))

	sc, _ = c.call(generated.ToolMailSearch, map[string]any{"query": "subject:\"Office move\"", "limit": 1})
	ids := gjsonArray(sc, "messages")
	if len(ids) == 0 {
		fail(fmt.Errorf("the %d-message thread was not found", threadLen))
	}
	last := ids[0].(map[string]any)["id"].(string)
	sc, r.Thread = c.call(generated.ToolMailThread, map[string]any{"id": last, "text": true})
	texts := gjsonArray(sc, "texts")
	if len(texts) != threadLen {
		fail(fmt.Errorf("%s text:true gave %d messages, the thread has %d", generated.ToolMailThread, len(texts), threadLen))
	}
	all := ""
	for _, x := range texts {
		t := x.(map[string]any)
		all += t["text"].(string)
		_, s := c.call(generated.ToolMailShow, map[string]any{"id": t["message"].(map[string]any)["id"]})
		r.Shows.add(s)
	}
	c.close()
	if *agentBaseline != "" {
		b := &r.Baseline
		*b = new(struct {
			Path     string      `json:"path"`
			ToolList []listSizes `json:"tools_list"`
			List50   sizes       `json:"mail_list_50"`
			Shows    sizes       `json:"mail_show_20"`
		})
		(*b).Path = *agentBaseline
		// Its own store, synced by itself from the same Maildir: an earlier
		// binary may not read a newer store.
		bhome := filepath.Join(tmp, "home-baseline")
		if err := os.MkdirAll(bhome, 0o700); err != nil {
			fail(err)
		}
		benv := isolatedEnv(bhome)
		if _, err := run(context.Background(), stepTimeout, benv, *agentBaseline, "sync", "--config", cfg); err != nil {
			fail(err)
		}
		(*b).ToolList = measureLists(*agentBaseline, benv, cfg)
		bc := agentConn(*agentBaseline, benv, cfg, presetScopes(generated.PresetReader))
		_, (*b).List50 = bc.call(generated.ToolMailList, map[string]any{"limit": 50})
		found, _ := bc.call(generated.ToolMailSearch, map[string]any{"query": "subject:\"Office move\"", "limit": 1})
		first := gjsonArray(found, "messages")
		if len(first) == 0 {
			fail(errors.New("the baseline does not find the thread"))
		}
		th, _ := bc.call(generated.ToolMailThread, map[string]any{"id": first[0].(map[string]any)["id"]})
		for _, m := range gjsonArray(th, "messages") {
			_, s := bc.call(generated.ToolMailShow, map[string]any{"id": m.(map[string]any)["id"]})
			(*b).Shows.add(s)
		}
		bc.close()
	}
	r.Targets.ThreadComplete = true
	for _, l := range lines {
		if strings.Count(all, l) != 1 {
			r.Targets.ThreadComplete = false
		}
	}
	r.Targets.ListTextMax = targetListText
	r.Targets.ListWithin = r.List50.Text <= targetListText && r.Rows == 50
	r.Targets.ThreadPctMax = targetThreadPct
	r.Targets.ThreadPct = 100 * r.Thread.Text / max(1, r.Shows.Text)
	r.Targets.ThreadWithin = r.Targets.ThreadPct <= targetThreadPct && r.Targets.ThreadComplete

	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(b))
	} else {
		r.print(os.Stdout)
	}
	cleanup()
}

// presetScopes is the scopes of the catalog's preset name.
func presetScopes(name string) []string {
	for _, p := range generated.Presets {
		if p.Name == name {
			return p.Scopes
		}
	}
	fail(fmt.Errorf("the catalog has no preset %q", name))
	return nil
}

// measureLists measures tools/list under each preset of the catalog.
func measureLists(posternPath string, env []string, cfg string) []listSizes {
	var out []listSizes
	for _, p := range generated.Presets {
		c := agentConn(posternPath, env, cfg, p.Scopes)
		ls := listSizes{Preset: p.Name, Scopes: p.Scopes}
		cursor := ""
		for {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			line := c.request("tools/list", params)
			ls.Wire += len(line)
			var res struct {
				Result struct {
					Tools []struct {
						Name         string          `json:"name"`
						Title        string          `json:"title"`
						Description  string          `json:"description"`
						InputSchema  json.RawMessage `json:"inputSchema"`
						OutputSchema json.RawMessage `json:"outputSchema"`
					} `json:"tools"`
					NextCursor string `json:"nextCursor"`
				} `json:"result"`
			}
			if err := json.Unmarshal(line, &res); err != nil {
				fail(fmt.Errorf("tools/list answer: %v", err))
			}
			for _, t := range res.Result.Tools {
				ls.Tools++
				ls.Descriptions += len(t.Name) + len(t.Title) + len(t.Description)
				ls.InputSchema += len(t.InputSchema)
				ls.OutputSchema += len(t.OutputSchema)
			}
			if cursor = res.Result.NextCursor; cursor == "" {
				break
			}
		}
		out = append(out, ls)
		c.close()
	}
	return out
}

func gjsonArray(m map[string]any, k string) []any {
	a, _ := m[k].([]any)
	return a
}

func (r *agentReport) print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s, %s/%s\n", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.Arch)
	fmt.Fprintf(w, "mailbox: %d generated messages (seed %d) and a %d-message thread, Maildir account\n", r.Messages, r.Seed, threadLen)
	for _, l := range r.ToolList {
		fmt.Fprintf(w, "tools/list %-9s (%s): %d tools, %s names+titles+descriptions, %s input schemas, %s output schemas, %s on the wire\n",
			l.Preset, strings.Join(l.Scopes, ","), l.Tools, kib(l.Descriptions), kib(l.InputSchema), kib(l.OutputSchema), kib(l.Wire))
	}
	fmt.Fprintf(w, "%s limit 50 (%d rows): text %s, structuredContent %s, wire %s\n", generated.ToolMailList, r.Rows, kib(r.List50.Text), kib(r.List50.Structured), kib(r.List50.Wire))
	fmt.Fprintf(w, "%s text:true (%d messages): text %s, structuredContent %s, wire %s\n", generated.ToolMailThread, threadLen, kib(r.Thread.Text), kib(r.Thread.Structured), kib(r.Thread.Wire))
	fmt.Fprintf(w, "%d × %s: text %s, structuredContent %s, wire %s\n", threadLen, generated.ToolMailShow, kib(r.Shows.Text), kib(r.Shows.Structured), kib(r.Shows.Wire))
	if b := r.Baseline; b != nil {
		fmt.Fprintf(w, "baseline %s:\n", b.Path)
		for _, l := range b.ToolList {
			fmt.Fprintf(w, "  tools/list %-9s: %d tools, %s names+titles+descriptions, %s input schemas, %s output schemas, %s on the wire\n",
				l.Preset, l.Tools, kib(l.Descriptions), kib(l.InputSchema), kib(l.OutputSchema), kib(l.Wire))
		}
		fmt.Fprintf(w, "  %s limit 50: text %s, structuredContent %s, wire %s\n", generated.ToolMailList, kib(b.List50.Text), kib(b.List50.Structured), kib(b.List50.Wire))
		fmt.Fprintf(w, "  %d × %s: text %s, structuredContent %s, wire %s\n", threadLen, generated.ToolMailShow, kib(b.Shows.Text), kib(b.Shows.Structured), kib(b.Shows.Wire))
	}
	fmt.Fprintf(w, "target 50 %s rows in at most %s of text: %s (%s)\n", generated.ToolMailList, kib(r.Targets.ListTextMax), held(r.Targets.ListWithin), kib(r.List50.Text))
	fmt.Fprintf(w, "target thread text at most %d%% of 20 %s, every message's own text once: %s (%d%%, complete %v)\n",
		r.Targets.ThreadPctMax, generated.ToolMailShow, held(r.Targets.ThreadWithin), r.Targets.ThreadPct, r.Targets.ThreadComplete)
}

func kib(n int) string { return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KB" }

// agentClient is one postern mcp connection.
type agentClient struct {
	c  *conn
	id int
}

func agentConn(path string, env []string, cfg string, scopes []string) *agentClient {
	c, err := start(program{name: "postern", path: path, env: env, initialize: true,
		args: []string{"mcp", "--config", cfg, "--scopes", strings.Join(scopes, ",")}})
	if err != nil {
		fail(err)
	}
	if err := c.handshake(); err != nil {
		c.stop()
		fail(err)
	}
	return &agentClient{c: c}
}

func (a *agentClient) close() {
	if err := a.c.stop(); err != nil {
		fail(err)
	}
}

// request sends one request and returns its answer line (a copy).
func (a *agentClient) request(method string, params any) []byte {
	a.id++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a.id, "method": method, "params": params})
	_, line, err := a.c.roundTrip(append(req, '\n'), []byte(`"id":`+strconv.Itoa(a.id)+`,`))
	if err != nil {
		fail(err)
	}
	line = bytes.TrimRight(line, "\n")
	if !bytes.Contains(line, []byte(`"result"`)) {
		fail(fmt.Errorf("%s answered %s", method, line))
	}
	return append([]byte(nil), line...)
}

// call runs a tool and returns its structuredContent and the sizes of its answer.
func (a *agentClient) call(tool string, args map[string]any) (map[string]any, sizes) {
	line := a.request("tools/call", map[string]any{"name": tool, "arguments": args})
	var res struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
			IsError    bool            `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &res); err != nil {
		fail(fmt.Errorf("%s answer: %v", tool, err))
	}
	if res.Result.IsError || len(res.Result.Content) == 0 {
		fail(fmt.Errorf("%s %v answered %s", tool, args, line))
	}
	var sc map[string]any
	json.Unmarshal(res.Result.Structured, &sc)
	return sc, sizes{Text: len(res.Result.Content[0].Text), Structured: len(res.Result.Structured), Wire: len(line)}
}

// writeChain adds to the Maildir's INBOX a thread of n messages in which
// each reply, as mail programs write one, carries a few new lines, a
// signature and the whole history before it quoted; it returns each
// message's first new line.
func writeChain(maildir string, n int) ([]string, error) {
	people := []string{corpus.OwnerName + " <" + corpus.OwnerEmail + ">", "Priya Raman <priya.raman@example.org>", "Grace Hopkins <grace.hopkins@example.net>"}
	topics := []string{"the movers", "the new desks", "the network closet", "parking permits", "the kitchen", "keys and badges", "the old printers"}
	var firsts []string
	history := ""
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		from := people[i%len(people)]
		name := strings.SplitN(from, " <", 2)[0]
		first := fmt.Sprintf("Update %d on the office move: %s are sorted for week %d.", i+1, topics[i%len(topics)], 46+i%4)
		firsts = append(firsts, first)
		body := first + "\nI have put the details in the shared sheet; shout if anything looks off.\nThanks, " + strings.Fields(name)[0] + "\n\n-- \n" + name + "\nOperations, Example Corp\n+1 555 0100\n"
		date := start.Add(time.Duration(i) * 97 * time.Minute)
		if history != "" {
			prev := people[(i-1)%len(people)]
			body += "\nOn " + start.Add(time.Duration(i-1)*97*time.Minute).Format("Mon, 2 Jan 2006 at 15:04") + ", " + prev + " wrote:\n"
			for _, l := range strings.Split(strings.TrimRight(history, "\n"), "\n") {
				if strings.HasPrefix(l, ">") {
					body += ">" + l + "\n"
				} else {
					body += "> " + l + "\n"
				}
			}
		}
		history = body
		var h strings.Builder
		fmt.Fprintf(&h, "Message-ID: <office-move-%d@example.org>\r\nDate: %s\r\nFrom: %s\r\nTo: team@example.org\r\n", i, date.Format(time.RFC1123Z), from)
		subject := "Office move"
		if i > 0 {
			subject = "Re: Office move"
			var refs []string
			for k := 0; k < i; k++ {
				refs = append(refs, fmt.Sprintf("<office-move-%d@example.org>", k))
			}
			fmt.Fprintf(&h, "In-Reply-To: <office-move-%d@example.org>\r\nReferences: %s\r\n", i-1, strings.Join(refs, "\r\n "))
		}
		fmt.Fprintf(&h, "Subject: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n", subject)
		raw := h.String() + strings.ReplaceAll(body, "\n", "\r\n")
		if err := os.WriteFile(filepath.Join(maildir, "cur", fmt.Sprintf("%d.office-move-%d:2,S", date.Unix(), i)), []byte(raw), 0o600); err != nil {
			return nil, err
		}
	}
	return firsts, nil
}

// binaryRun makes a working folder for a run of mode (removed at exit) with a
// HOME of its own, and builds postern into it unless posternPath names one;
// it returns the folder, the binary and the isolated environment.
func binaryRun(mode, posternPath string) (tmp, binary string, env []string) {
	tmp, err := os.MkdirTemp("", "postern-bench-"+mode+"-")
	if err != nil {
		fail(err)
	}
	addCleanup(func() { os.RemoveAll(tmp) })
	if posternPath == "" {
		root, err := moduleRoot()
		if err != nil {
			fail(err)
		}
		posternPath = filepath.Join(tmp, "postern")
		if err := goBuild(root, posternPath, "./cmd/postern"); err != nil {
			fail(err)
		}
	}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		fail(err)
	}
	return tmp, posternPath, isolatedEnv(home)
}

package integrations

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
)

// Check is one thing doctor looked at.
type Check struct {
	Check  string `json:"check"` // found, registered, current, binary, handshake
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is doctor's answer for one host.
type Report struct {
	Host    string  `json:"host"`
	Name    string  `json:"name"`
	OK      bool    `json:"ok"`
	Skipped bool    `json:"skipped,omitempty"` // not installed and not asked for: nothing checked
	Checks  []Check `json:"checks"`
	Fix     string  `json:"fix,omitempty"` // the command that fixes what failed
}

// Doctor checks h: found, registered, the entry current (as setup recorded it in rec: binary,
// flags and scopes), the binary there, and the server answering the handshake with the
// catalog's tool count for its scopes. With no record (an entry written by an older postern)
// the entry's own flags are taken as the choice, and the report says so; o gives the name, the
// scope and the binary then. fix makes the repair command line to suggest for a host id.
func Doctor(ctx context.Context, h *Host, e *Env, o *Options, rec *Record, asked bool, fix func(id string) string) Report {
	if rec != nil {
		caller := o
		o = rec.Options()
		if o.Binary == "" { // a record without a binary: the caller's
			o.Binary = caller.Binary
		}
		o.Token, o.TokenFile = caller.Token, caller.TokenFile
	}
	r := Report{Host: h.ID, Name: h.Name, OK: true}
	add := func(name string, ok bool, format string, args ...any) bool {
		r.Checks = append(r.Checks, Check{Check: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
		if !ok {
			r.OK = false
		}
		return ok
	}
	found, why := h.Found(e)
	if h.Kind == "snippet" {
		add("found", true, "%s", why)
		return r
	}
	cur, _, ok, known, err := h.Registered(e, o.Scope, o.Name)
	if !found && !ok {
		if !asked {
			r.Skipped = true
			add("found", true, "%s; skipped", why)
			return r
		}
		add("found", false, "%s", why)
		r.Fix = "install " + h.Name + ", then run postern integrations setup " + h.ID
		return r
	}
	add("found", true, "%s", why)
	repair := fix(h.ID)
	switch {
	case err != nil:
		add("registered", false, "%v", err)
		r.Fix = "fix the file by hand, then run " + repair
		return r
	case !known:
		add("registered", true, "kept by %s itself; not checked further", h.Executables[0])
		return r
	case !ok:
		add("registered", false, "postern is not registered as %q", o.Name)
		r.Fix = repair
		return r
	}
	add("registered", true, "as %q", o.Name)
	if rec == nil {
		o = OptionsFromEntry(cur, o)
		add("record", true, "no record of setup (an entry from an older postern): its own flags (%s) are taken as the choice", o.Grant())
	} else {
		add("record", true, "setup asked for %s", rec.Describe())
	}
	if o.HTTP != "" || cur.URL != "" {
		doctorURL(ctx, &r, add, cur, o, repair)
		return r
	}
	want := o.Want()
	if cur.Equal(want) {
		add("current", true, "runs %s", cur)
	} else {
		add("current", false, "%s", differences(cur, want))
		r.Fix = repair
	}
	st, serr := os.Stat(cur.Command)
	switch {
	case serr != nil:
		add("binary", false, "%s does not exist", cur.Command)
		r.Fix = repair
		return r
	case st.IsDir() || st.Mode()&0o111 == 0:
		add("binary", false, "%s is not an executable file", cur.Command)
		r.Fix = repair
		return r
	case !sameFile(cur.Command, o.Binary):
		add("binary", false, "%s is not the postern setup chose (%s)", cur.Command, o.Binary)
		r.Fix = repair
	default:
		add("binary", true, "%s", cur.Command)
	}
	n, want2, herr := handshake(ctx, cur)
	switch {
	case herr != nil:
		add("handshake", false, "%v", herr)
		r.Fix = repair
	case want2 >= 0 && n != want2:
		add("handshake", false, "the server lists %d tools; its scopes allow %d", n, want2)
		r.Fix = repair
	default:
		add("handshake", true, "answers with %d tools", n)
	}
	return r
}

// doctorURL checks a URL entry: the URL as recorded, the header's token the one in the token
// file now, and the server, when one answers there, taking it. A server that is not running is
// no fault of the registration, and is said.
func doctorURL(ctx context.Context, r *Report, add func(string, bool, string, ...any) bool, cur Entry, o *Options, repair string) {
	switch {
	case o.HTTP == "":
		add("current", false, "the entry reaches %s, but setup recorded a program to run (%s)", cur.URL, o.Want())
		r.Fix = repair
		return
	case cur.URL == "":
		add("current", false, "the entry runs %s instead of reaching %s", cur, o.HTTP)
		r.Fix = repair
		return
	case cur.URL != o.HTTP:
		add("current", false, "the entry reaches %s instead of %s", cur.URL, o.HTTP)
		r.Fix = repair
	default:
		add("current", true, "reaches %s", cur.URL)
	}
	switch {
	case o.Token == "":
		add("token", false, "there is no HTTP token in %s (postern mcp --http makes it, and so does repair)", o.TokenFile)
		r.Fix = repair
		return
	case cur.Token == "":
		add("token", false, "the entry sends no Authorization: Bearer header")
		r.Fix = repair
		return
	case cur.Token != o.Token:
		add("token", false, "the entry's bearer token is not the one in %s now (the token changed)", o.TokenFile)
		r.Fix = repair
		return
	default:
		add("token", true, "the entry sends the token in %s", o.TokenFile)
	}
	running, err := probeURL(ctx, cur)
	switch {
	case err != nil:
		add("server", false, "%s", mask(err.Error(), o.Token))
	case !running:
		add("server", true, "nothing listens at %s now; the host reaches postern once postern mcp --http runs there", cur.URL)
	default:
		add("server", true, "the server at %s takes the token", cur.URL)
	}
}

// differences says how a registered entry differs from the wanted one.
func differences(cur, want Entry) string {
	var out []string
	if cur.Command != want.Command {
		out = append(out, fmt.Sprintf("runs %s instead of %s", cur.Command, want.Command))
	}
	cf, wf := flagsOf(cur.Args), flagsOf(want.Args)
	for _, k := range []string{"--scopes", "--account", "--config"} {
		if cf[k] != wf[k] {
			c, w := cf[k], wf[k]
			if c == "" {
				c = "none"
			}
			if w == "" {
				w = "none"
			}
			out = append(out, fmt.Sprintf("%s %s instead of %s", k, c, w))
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("arguments %q instead of %q", cur.Args, want.Args))
	}
	return strings.Join(out, "; ")
}

func flagsOf(args []string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") && i+1 < len(args) {
			if m[args[i]] != "" {
				m[args[i]] += ","
			}
			m[args[i]] += args[i+1]
			i++
		}
	}
	return m
}

func sameFile(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	sa, err1 := os.Stat(ra)
	sb, err2 := os.Stat(rb)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// handshake starts the entry, initializes and lists the tools. want is the
// number of catalog tools the entry's scopes allow, -1 when it cannot be told.
func handshake(ctx context.Context, en Entry) (n, want int, err error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, en.Command, en.Args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, -1, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return 0, -1, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, -1, fmt.Errorf("the server does not start: %v", err)
	}
	defer func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"postern-doctor","version":"1"}}}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	sc := bufio.NewScanner(outPipe)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				Tools      []json.RawMessage `json:"tools"`
				ServerInfo *struct {
					Name string `json:"name"`
				} `json:"serverInfo"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			return 0, -1, fmt.Errorf("the server wrote something that is not JSON-RPC: %.120q", sc.Text())
		}
		if msg.Error != nil {
			return 0, -1, fmt.Errorf("the server refused the handshake: %s", msg.Error.Message)
		}
		switch string(msg.ID) {
		case "1":
			if msg.Result == nil || msg.Result.ServerInfo == nil || msg.Result.ServerInfo.Name != generated.ServerName {
				return 0, -1, fmt.Errorf("the program answering is not postern")
			}
		case "2":
			if msg.Result == nil {
				return 0, -1, fmt.Errorf("the server answered tools/list without a result")
			}
			return len(msg.Result.Tools), expectedTools(en.Args), nil
		}
	}
	if ctx.Err() != nil {
		return 0, -1, fmt.Errorf("the server did not answer within 15 seconds")
	}
	msg := strings.TrimSpace(stderr.String())
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		msg = "no output"
	}
	return 0, -1, fmt.Errorf("the server stopped before answering: %s", msg)
}

// expectedTools counts the catalog tools the entry's grant allows: its
// --scopes, else its configuration's [mcp] scopes, else the defaults.
func expectedTools(args []string) int {
	f := flagsOf(args)
	var g dispatch.Grant
	if s := f["--scopes"]; s != "" {
		var err error
		if g, err = dispatch.ParseGrant(s); err != nil {
			return -1
		}
	} else {
		g = dispatch.DefaultGrant()
		if p := f["--config"]; p != "" {
			if cfg, err := config.Load(p); err == nil && len(cfg.MCP.Scopes) > 0 {
				g = dispatch.Grant{}
				for _, s := range cfg.MCP.Scopes {
					g[s] = true
				}
			} else if err != nil {
				return -1
			}
		}
	}
	n := 0
	for _, t := range generated.Tools {
		if g[t.Scope] {
			n++
		}
	}
	return n
}

// DoctorAll checks every registration of the hosts hs (every host, when hs is empty), as
// targets lists them, each after prepare has filled what its options need from this machine
// (the token, the binary); ok is false when any check failed. A host named in hs is checked
// even when it holds no record.
func DoctorAll(ctx context.Context, hs []*Host, e *Env, cfgPath string, targets func(*Host) []Target, prepare func(Target) error) (reports []Report, ok bool, err error) {
	named := len(hs) > 0
	if !named {
		hs = Hosts()
	}
	ok = true
	for _, h := range hs {
		for _, t := range targets(h) {
			if err := prepare(t); err != nil {
				return nil, false, err
			}
			rep := Doctor(ctx, h, e, t.Options, t.Record, named || t.Record != nil, func(string) string { return RepairCommand(t, cfgPath) })
			reports = append(reports, rep)
			ok = ok && rep.OK
		}
	}
	return reports, ok, nil
}

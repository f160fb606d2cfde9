// Command postern-bench measures postern's stdio overhead against a minimal Go
// stdio echo program (./echo), in the same run on the same machine:
//
//  1. per-call round trip: N sequential tools/call status requests on one
//     connection (one line written, wait for the answer line), after a warm-up;
//  2. start to first answer: process start, initialize written, until the first
//     answer line arrives, repeated -starts times.
//
// Postern and the echo are measured alternately in blocks, so that the noise
// of a shared machine falls on both; read the ratio, not the absolute numbers.
// Every answer has a deadline and the whole run has one; children are killed
// on exit.
//
// With -mail it measures sync and search instead, over a generated mailbox on
// a tmpfs, against a private Dovecot, mu and notmuch (mail.go).
//
// With -agent it measures what an agent reads, in bytes: tools/list under
// each preset, 50 mail_list rows, and a 20-message thread read with
// mail_thread text:true against 20 mail_show calls (agent.go).
//
// With -actions it measures acting on mail: a 500-message query archive and
// its undo against a plain IMAP client moving the same mail (actions.go).
//
// With -tools it measures what the tool list costs an agent: tools/list per
// preset and every scope, for a client that declares elicitation and one that
// does not, in tools, model-facing bytes and wire bytes (tools.go).
//
// With -dav it measures calendars and contacts: the sync of 5,000 events and
// 2,000 contacts, agenda for a month and contacts_search, against the same
// requests made live to a private Radicale (dav.go).
//
// Usage:
//
//	go run ./cmd/postern-bench [-postern PATH] [-n 10000] [-starts 200] [-json]
//	go run ./cmd/postern-bench -mail [-messages 10000] [-reps 50] [-postern PATH] [-json]
//	go run ./cmd/postern-bench -agent [-agent-messages 2000] [-seed 1] [-postern PATH] [-json]
//	go run ./cmd/postern-bench -actions [-actions-messages 500] [-actions-reps 5] [-postern PATH] [-json]
//	go run ./cmd/postern-bench -tools [-postern PATH] [-json]
//	go run ./cmd/postern-bench -dav [-dav-events 5000] [-dav-contacts 2000] [-dav-reps 20] [-postern PATH] [-json]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	warmup        = 500              // uncounted calls before measuring
	block         = 100              // calls (or starts) per turn when alternating
	answerTimeout = 10 * time.Second // deadline for any one answer
	exitTimeout   = 5 * time.Second  // grace for a child to exit after stdin closes
	buildTimeout  = 5 * time.Minute

	// Targets stated in BENCHMARKS.md (issue 13: a call adds nothing a person can notice; the
	// ratio to the echo is still printed, as the reference measured in the same run).
	targetCall  = 50 * time.Microsecond
	targetStart = 20 * time.Millisecond
)

var initLine = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n")

const initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

func main() {
	posternPath := flag.String("postern", "", "postern binary (default: go build ./cmd/postern into a temporary folder)")
	echoPath := flag.String("echo", "", "echo reference binary (default: go build ./cmd/postern-bench/echo into a temporary folder)")
	n := flag.Int("n", 10000, "sequential round trips measured per program")
	starts := flag.Int("starts", 200, "process starts measured per program")
	asJSON := flag.Bool("json", false, "print one JSON object (durations in microseconds)")
	limit := flag.Duration("timeout", 15*time.Minute, "stop the whole run after this long")
	flag.Parse()
	if *toolsMode {
		runTools(*posternPath, *asJSON, *limit)
		return
	}
	if *actionsMode {
		runActions(*posternPath, *asJSON, *limit)
		return
	}
	if *davMode {
		runDAV(*posternPath, *asJSON, *limit)
		return
	}
	if *agentMode {
		runAgent(*posternPath, *asJSON, *limit)
		return
	}
	if *mailMode {
		// The mail mode runs longer: unless -timeout was given, allow it more.
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "timeout" })
		if !set {
			*limit = defaultMailLimit
		}
		runMail(*posternPath, *asJSON, *limit)
		return
	}
	if *n < 1 || *starts < 1 {
		fail(errors.New("-n and -starts must be at least 1"))
	}

	// Stop by ourselves: on a signal or after -timeout, kill every child and exit.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fail(fmt.Errorf("stopped by %v", s))
	}()
	time.AfterFunc(*limit, func() { fail(fmt.Errorf("the run took longer than -timeout %v", *limit)) })

	tmp, err := os.MkdirTemp("", "postern-bench-")
	if err != nil {
		fail(err)
	}
	addCleanup(func() { os.RemoveAll(tmp) })

	if *posternPath == "" || *echoPath == "" {
		root, err := moduleRoot()
		if err != nil {
			fail(err)
		}
		if *posternPath == "" {
			*posternPath = filepath.Join(tmp, "postern")
			if err := goBuild(root, *posternPath, "./cmd/postern"); err != nil {
				fail(err)
			}
		}
		if *echoPath == "" {
			*echoPath = filepath.Join(tmp, "echo")
			if err := goBuild(root, *echoPath, "./cmd/postern-bench/echo"); err != nil {
				fail(err)
			}
		}
	}

	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		fail(err)
	}
	postern := program{name: "postern", path: *posternPath, args: []string{"mcp", "--config", filepath.Join(tmp, "none.toml")}, env: isolatedEnv(home), initialize: true}
	echo := program{name: "echo", path: *echoPath, env: isolatedEnv(home)}

	var r report
	r.Machine = machine()
	r.N, r.Warmup, r.Starts = *n, warmup, *starts

	pc, ec, err := measureCalls(postern, echo, *n)
	if err != nil {
		fail(err)
	}
	ps, es, err := measureStarts(postern, echo, *starts)
	if err != nil {
		fail(err)
	}
	r.Call.Postern, r.Call.Echo = summarize(pc), summarize(ec)
	r.Call.RatioMedian = round(r.Call.Postern.Median / r.Call.Echo.Median)
	r.Start.Postern, r.Start.Echo = summarize(ps), summarize(es)
	r.Targets.CallMedianMaxUS = us(targetCall)
	r.Targets.CallWithin = r.Call.Postern.Median < us(targetCall)
	r.Targets.StartMedianMaxUS = us(targetStart)
	r.Targets.StartWithin = r.Start.Postern.Median < us(targetStart)

	if *asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(b))
	} else {
		r.print(os.Stdout)
	}
	cleanup()
}

// program is one server under test.
type program struct {
	name       string
	path       string
	args       []string
	env        []string
	initialize bool // send initialize and notifications/initialized before calls
}

// conn is one running child with its pipes.
type conn struct {
	prog   program
	cmd    *exec.Cmd
	stdin  *os.File // our write end
	stdout *os.File // our read end
	r      *bufio.Reader
	long   []byte
	stderr *tail
	done   chan struct{}
	err    error // from Wait, valid after done
}

// start starts p with its stdin and stdout on pipes we can put deadlines on.
func start(p program) (*conn, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &conn{prog: p, stdin: inW, stdout: outR, stderr: &tail{}, done: make(chan struct{})}
	c.cmd = exec.Command(p.path, p.args...)
	c.cmd.Env = p.env
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, c.stderr
	c.cmd.WaitDelay = exitTimeout
	err = c.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	c.r = bufio.NewReaderSize(outR, 64<<10)
	track(c)
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// stop closes the child's stdin, waits for it to exit, and kills it if it does not.
func (c *conn) stop() error {
	defer untrack(c)
	c.stdin.Close()
	defer c.stdout.Close()
	select {
	case <-c.done:
		if c.err != nil {
			return fmt.Errorf("%s exited with %v%s", c.prog.name, c.err, c.stderr.suffix())
		}
		return nil
	case <-time.After(exitTimeout):
		c.kill()
		return fmt.Errorf("%s did not exit within %v of its standard input closing; killed", c.prog.name, exitTimeout)
	}
}

func (c *conn) kill() {
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
}

// setDeadline bounds the next write and read.
func (c *conn) setDeadline() {
	d := time.Now().Add(answerTimeout)
	c.stdin.SetWriteDeadline(d)
	c.stdout.SetReadDeadline(d)
}

// readLine returns the next line; it is valid until the next call.
func (c *conn) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		c.long = append(c.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			c.long = append(c.long, line...)
		}
		line = c.long
	}
	return line, err
}

// roundTrip writes req and waits for the line answering id, returning the
// time from just before the write to just after the answer.
func (c *conn) roundTrip(req []byte, id []byte) (time.Duration, []byte, error) {
	c.setDeadline()
	t0 := time.Now()
	if _, err := c.stdin.Write(req); err != nil {
		return 0, nil, c.wrap("writing a request", err)
	}
	for {
		line, err := c.readLine()
		if err != nil {
			return 0, nil, c.wrap("reading an answer", err)
		}
		if bytes.Contains(line, id) {
			return time.Since(t0), line, nil
		}
		// another message (a notification, say): keep reading; it is part of the cost
	}
}

func (c *conn) wrap(what string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.kill()
		return fmt.Errorf("%s: no answer within %v while %s; killed it%s", c.prog.name, answerTimeout, what, c.stderr.suffix())
	}
	return fmt.Errorf("%s: %s: %w%s", c.prog.name, what, err, c.stderr.suffix())
}

// handshake initializes a postern connection.
func (c *conn) handshake() error {
	if !c.prog.initialize {
		return nil
	}
	_, line, err := c.roundTrip(initLine, []byte(`"id":0`))
	if err != nil {
		return err
	}
	if !bytes.Contains(line, []byte(`"result"`)) {
		return fmt.Errorf("%s answered initialize with %s", c.prog.name, bytes.TrimSpace(line))
	}
	c.setDeadline()
	if _, err := c.stdin.Write([]byte(initializedLine)); err != nil {
		return c.wrap("writing notifications/initialized", err)
	}
	return nil
}

// caller sends numbered tools/call status requests on one connection.
type caller struct {
	c      *conn
	nextID int
	req    []byte
	id     []byte
}

func (k *caller) call() (time.Duration, error) {
	k.nextID++
	k.req = strconv.AppendInt(append(k.req[:0], `{"jsonrpc":"2.0","id":`...), int64(k.nextID), 10)
	k.req = append(k.req, `,"method":"tools/call","params":{"name":"status"}}`+"\n"...)
	k.id = append(strconv.AppendInt(append(k.id[:0], `"id":`...), int64(k.nextID), 10), ',')
	d, line, err := k.c.roundTrip(k.req, k.id)
	if err != nil {
		return 0, err
	}
	// Checked after the clock stopped: a failed call must not pass for a fast one.
	if !bytes.Contains(line, []byte(`"result":`)) || bytes.Contains(line, []byte(`"isError":true`)) {
		return 0, fmt.Errorf("%s answered tools/call status with %s", k.c.prog.name, bytes.TrimSpace(line))
	}
	return d, nil
}

// measureCalls runs the warm-up and then n timed calls on each program,
// alternating in blocks.
func measureCalls(a, b program, n int) (da, db []time.Duration, err error) {
	ka, kb := &caller{}, &caller{}
	for _, x := range []struct {
		k *caller
		p program
	}{{ka, a}, {kb, b}} {
		c, err := start(x.p)
		if err != nil {
			return nil, nil, err
		}
		x.k.c = c
		defer c.stop()
		if err := c.handshake(); err != nil {
			return nil, nil, err
		}
		for i := 0; i < warmup; i++ {
			if _, err := x.k.call(); err != nil {
				return nil, nil, err
			}
		}
	}
	da, db = make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for len(da) < n {
		m := min(block, n-len(da))
		for _, x := range []struct {
			k   *caller
			out *[]time.Duration
		}{{ka, &da}, {kb, &db}} {
			for i := 0; i < m; i++ {
				d, err := x.k.call()
				if err != nil {
					return nil, nil, err
				}
				*x.out = append(*x.out, d)
			}
		}
	}
	if err := ka.c.stop(); err != nil {
		return nil, nil, err
	}
	if err := kb.c.stop(); err != nil {
		return nil, nil, err
	}
	return da, db, nil
}

// firstAnswer starts p, writes initialize and times until the first answer line.
func firstAnswer(p program) (time.Duration, error) {
	deadline := time.Now().Add(answerTimeout)
	t0 := time.Now()
	c, err := start(p)
	if err != nil {
		return 0, err
	}
	c.stdin.SetWriteDeadline(deadline)
	c.stdout.SetReadDeadline(deadline)
	if _, err := c.stdin.Write(initLine); err != nil {
		c.stop()
		return 0, c.wrap("writing initialize", err)
	}
	line, err := c.readLine()
	d := time.Since(t0)
	if err != nil {
		c.stop()
		return 0, c.wrap("reading the first answer", err)
	}
	if !bytes.Contains(line, []byte(`"result"`)) {
		c.stop()
		return 0, fmt.Errorf("%s answered initialize with %s", p.name, bytes.TrimSpace(line))
	}
	return d, c.stop()
}

// measureStarts times starts to first answer for each program, alternating in blocks.
func measureStarts(a, b program, starts int) (da, db []time.Duration, err error) {
	// One uncounted start each, so that the first exec of a fresh binary
	// (page cache) does not count.
	for _, p := range []program{a, b} {
		if _, err := firstAnswer(p); err != nil {
			return nil, nil, err
		}
	}
	blk := max(1, min(block/5, starts))
	for len(da) < starts {
		m := min(blk, starts-len(da))
		for _, x := range []struct {
			p   program
			out *[]time.Duration
		}{{a, &da}, {b, &db}} {
			for i := 0; i < m; i++ {
				d, err := firstAnswer(x.p)
				if err != nil {
					return nil, nil, err
				}
				*x.out = append(*x.out, d)
			}
		}
	}
	return da, db, nil
}

// summary is a distribution, in microseconds.
type summary struct {
	Count  int     `json:"count"`
	Median float64 `json:"median_us"`
	P99    float64 `json:"p99_us"`
	Mean   float64 `json:"mean_us"`
	Min    float64 `json:"min_us"`
	Max    float64 `json:"max_us"`
}

func summarize(ds []time.Duration) summary {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	n := len(s)
	median := s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	p99 := s[max(0, int(math.Ceil(0.99*float64(n)))-1)]
	return summary{Count: n, Median: us(median), P99: us(p99), Mean: us(sum / time.Duration(n)), Min: us(s[0]), Max: us(s[n-1])}
}

func us(d time.Duration) float64 { return round(float64(d) / float64(time.Microsecond)) }

func round(x float64) float64 { return math.Round(x*100) / 100 }

type report struct {
	Machine machineInfo `json:"machine"`
	N       int         `json:"n"`
	Warmup  int         `json:"warmup"`
	Starts  int         `json:"starts"`
	Call    struct {
		Postern     summary `json:"postern"`
		Echo        summary `json:"echo"`
		RatioMedian float64 `json:"ratio_median"`
	} `json:"call"`
	Start struct {
		Postern summary `json:"postern"`
		Echo    summary `json:"echo"`
	} `json:"start"`
	Targets struct {
		CallMedianMaxUS  float64 `json:"call_median_max_us"`
		CallWithin       bool    `json:"call_within"`
		StartMedianMaxUS float64 `json:"start_median_max_us"`
		StartWithin      bool    `json:"start_within"`
	} `json:"targets"`
}

func (r *report) print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s, %s/%s\n", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.Arch)
	c := r.Call
	fmt.Fprintf(w, "per-call round trip (%d sequential tools/call status, %d warm-up): postern median %s p99 %s mean %s | echo median %s p99 %s mean %s | ratio %.2fx\n",
		r.N, r.Warmup, fmtUS(c.Postern.Median), fmtUS(c.Postern.P99), fmtUS(c.Postern.Mean), fmtUS(c.Echo.Median), fmtUS(c.Echo.P99), fmtUS(c.Echo.Mean), c.RatioMedian)
	s := r.Start
	fmt.Fprintf(w, "start to first answer (%d starts, initialize): postern median %s p99 %s | echo median %s p99 %s\n",
		r.Starts, fmtUS(s.Postern.Median), fmtUS(s.Postern.P99), fmtUS(s.Echo.Median), fmtUS(s.Echo.P99))
	fmt.Fprintf(w, "target per-call median under %v: %s (%s, %.2fx echo)\n", targetCall, held(r.Targets.CallWithin), fmtUS(c.Postern.Median), c.RatioMedian)
	fmt.Fprintf(w, "target start to first answer median under %v: %s (%s)\n", targetStart, held(r.Targets.StartWithin), fmtUS(s.Postern.Median))
}

func held(ok bool) string {
	if ok {
		return "held"
	}
	return "MISSED"
}

func fmtUS(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "µs"
}

type machineInfo struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

func machine() machineInfo {
	m := machineInfo{CPUs: runtime.NumCPU(), CPUModel: "unknown", GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// isolatedEnv is the environment with HOME and the XDG folders under home, so
// that no real configuration or mail store is read.
func isolatedEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		// POSTERN_CPUPROFILE passes through: each postern sync writes its CPU profile there
		// (the last sync of a run is the one that stays).
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "POSTERN_") && k != "POSTERN_CPUPROFILE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(home, "run"),
	)
}

func moduleRoot() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w (pass -postern and -echo to skip building)", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the postern module; run from the repository or pass -postern and -echo")
	}
	return filepath.Dir(gomod), nil
}

func goBuild(root, out, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -o %s %s: %w", out, pkg, err)
	}
	return nil
}

// tail keeps the last bytes a child wrote on stderr, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-4096:]...)
	}
	return len(p), nil
}

func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.buf)); s != "" {
		return "; its standard error ends: " + s
	}
	return ""
}

// Children and cleanups, so that every exit path kills what is running.
var (
	liveMu   sync.Mutex
	live     = map[*conn]bool{}
	cleanups []func()
	exiting  bool
	cleaned  = make(chan struct{}) // closed when the cleanups have run
)

func track(c *conn) {
	liveMu.Lock()
	defer liveMu.Unlock()
	if exiting {
		c.kill()
		return
	}
	live[c] = true
}

func untrack(c *conn) {
	liveMu.Lock()
	delete(live, c)
	liveMu.Unlock()
}

func addCleanup(f func()) {
	liveMu.Lock()
	cleanups = append(cleanups, f)
	liveMu.Unlock()
}

// cleanup kills every child still running and runs the cleanups, once; a
// second caller (the main goroutine failing while a signal or the timeout is
// cleaning up) waits for the first to finish, so that nobody exits half way.
func cleanup() {
	liveMu.Lock()
	if exiting {
		liveMu.Unlock()
		<-cleaned
		return
	}
	exiting = true
	for c := range live {
		c.kill()
	}
	fs := cleanups
	liveMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	close(cleaned)
}

func fail(err error) {
	cleanup()
	fmt.Fprintln(os.Stderr, "postern-bench: "+err.Error())
	os.Exit(1)
}

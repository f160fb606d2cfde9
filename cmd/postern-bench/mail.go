package main

// The mail mode (-mail): sync and search over a generated mailbox, each
// figure beside a reference measured in the same run. See BENCHMARKS.md,
// "Mail: sync and search".

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
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

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

var (
	mailMode     = flag.Bool("mail", false, "measure sync and search over a generated mailbox against Dovecot, mu and notmuch (see BENCHMARKS.md)")
	mailMessages = flag.Int("messages", 10000, "-mail: messages in the generated mailbox")
	mailSeed     = flag.Int64("seed", 1, "-mail: corpus seed")
	mailReps     = flag.Int("reps", 50, "-mail: runs of each query per method")
	mailDir      = flag.String("dir", "/dev/shm", "-mail, -actions: where to put the Maildirs, Dovecot, the indexes and the store (a tmpfs)")
	mailKeep     = flag.Bool("keep", false, "-mail, -actions: keep the working folder (Dovecot is stopped all the same)")
	mailDovecot  = flag.String("dovecot", "", "-mail, -actions: the .ci/dovecot script (default: the module's)")
)

const (
	mailUser         = "bench"
	mailAccount      = "bench"
	mailScopes       = generated.ScopeRead + "," + generated.ScopeReadBodies
	defaultMailLimit = 90 * time.Minute
	stepTimeout      = 30 * time.Minute // any one external program
	queryTimeout     = 60 * time.Second // any one query process
	incNew           = 50
	incFlags         = 30
	incExpunge       = 20

	// Targets stated in BENCHMARKS.md.
	targetSyncVsMu    = 0.5 // postern first sync ≤ half of mu index
	targetVsNotmuch   = 0.5 // postern stdio query median ≤ half of notmuch's
	targetStdioVsProc = 3.0 // stdio median within 3× of in-process
)

// The person's projects of the "stdio, projects" method (issue 17): two closed projects
// routing real parts of the corpus (internal/corpus), things outside projects open. The
// domain is the most frequent correspondents' domain but the owner's (with its subdomains
// and the organisations' below it); the subject word is one of the corpus's project names;
// the folder is one whose threads reach into Sent.
const (
	projDomain  = "example.net"
	projSubject = "falcon"
	projFolder  = "Archive"
)

// projectsFile is the projects.toml beside the second server's config.toml.
var projectsFile = fmt.Sprintf(`[projects]
outside = true

[[project]]
id = "client"
name = "A client"
domains = [%q]
subjects = [%q]

[[project]]
id = "archive"
name = "The archive"
folders = [%q]
`, projDomain, projSubject, projFolder)

// mailQuery is one benchmark query: a mail_search query or a mail_list call,
// and its notmuch translation.
type mailQuery struct {
	Name    string `json:"name"`
	Tool    string `json:"tool"`             // mail_search or mail_list
	Query   string `json:"query,omitempty"`  // mail_search
	Folder  string `json:"folder,omitempty"` // mail_list
	Unread  bool   `json:"unread,omitempty"` // mail_list
	Notmuch string `json:"notmuch"`          // notmuch search terms
	Note    string `json:"note,omitempty"`   // how the translation differs
	args    string // the tool's JSON arguments
}

// mailQueries is the fixed list; rare is a word found in one message only.
// Relative dates are given to notmuch as the absolute day they stand for:
// notmuch reads "date:1y.." otherwise than "a year ago".
func mailQueries(rare string, now time.Time) []mailQuery {
	day := func(t time.Time) string { return t.Format("2006-01-02") }
	yearAgo := day(now.AddDate(-1, 0, 0))
	qs := []mailQuery{
		{Name: "common word", Tool: generated.ToolMailSearch, Query: "budget", Notmuch: "budget",
			Note: "postern reads a lone last word as a prefix (budget*); notmuch stems (budgets)"},
		{Name: "rare word", Tool: generated.ToolMailSearch, Query: rare, Notmuch: rare, Note: "a word found in one message's body"},
		{Name: "from:", Tool: generated.ToolMailSearch, Query: "from:grace", Notmuch: "from:grace"},
		{Name: "subject:", Tool: generated.ToolMailSearch, Query: "subject:kickoff", Notmuch: "subject:kickoff"},
		{Name: "phrase", Tool: generated.ToolMailSearch, Query: `"hiring plan"`, Notmuch: `"hiring plan"`},
		{Name: "has:attachment after:1y", Tool: generated.ToolMailSearch, Query: "has:attachment after:1y", Notmuch: "tag:attachment and date:" + yearAgo + "..",
			Note: "notmuch tags attachments itself when indexing; after:1y is the day a year before the run"},
		{Name: "is:unread in:INBOX", Tool: generated.ToolMailSearch, Query: "is:unread in:INBOX", Notmuch: `tag:unread and folder:""`,
			Note: `unread from the Maildir S flag (maildir.synchronize_flags); folder:"" is the top-level Maildir, INBOX`},
		{Name: "prefix", Tool: generated.ToolMailSearch, Query: "migra", Notmuch: "migra*"},
		{Name: "negation", Tool: generated.ToolMailSearch, Query: "budget -invoice", Notmuch: "budget and not invoice"},
		{Name: "multi-operator", Tool: generated.ToolMailSearch, Query: "report from:priya is:read after:1y", Notmuch: "report and from:priya and not tag:unread and date:" + yearAgo + ".."},
		{Name: "list INBOX", Tool: generated.ToolMailList, Folder: "INBOX", Notmuch: `folder:""`},
		{Name: "list unread", Tool: generated.ToolMailList, Unread: true, Notmuch: `tag:unread and folder:""`,
			Note: generated.ToolMailList + " lists INBOX unless told another folder"},
	}
	for i := range qs {
		q := &qs[i]
		var a any
		if q.Tool == generated.ToolMailSearch {
			a = map[string]any{"query": q.Query, "limit": 50}
		} else {
			m := map[string]any{"limit": 50}
			if q.Folder != "" {
				m["folder"] = q.Folder
			}
			if q.Unread {
				m["unread"] = true
			}
			a = m
		}
		b, _ := json.Marshal(a)
		q.args = string(b)
	}
	return qs
}

// uniqueWord is the word that message i of a corpus, and no other, carries
// in its body (internal/corpus: uniqueWord).
func uniqueWord(i int) string {
	b := []byte("zq00000")
	for k := 6; k >= 2; k-- {
		b[k] = byte('a' + i%26)
		i /= 26
	}
	return string(b)
}

type mailReport struct {
	Machine  machineInfo `json:"machine"`
	Load     string      `json:"load_average"`
	Messages int         `json:"messages"`
	Seed     int64       `json:"seed"`
	Reps     int         `json:"reps"`
	WorkDir  string      `json:"work_dir"`
	Versions struct {
		Dovecot string `json:"dovecot"`
		Mu      string `json:"mu"`
		Notmuch string `json:"notmuch"`
	} `json:"versions"`
	Corpus struct {
		Seconds     float64        `json:"generate_s"`
		CopySeconds float64        `json:"copy_s"`
		Bytes       int64          `json:"bytes"`
		Folders     map[string]int `json:"folders"`
	} `json:"corpus"`
	RawFetch struct {
		WarmSeconds float64   `json:"warm_s"`
		Seconds     []float64 `json:"timed_s"`
		Median      float64   `json:"median_s"`
		Messages    int       `json:"messages"`
		Bytes       int64     `json:"bytes"`
	} `json:"raw_fetch"`
	Sync struct {
		Seconds      float64 `json:"stats_s"`      // from postern's stats line
		WallSeconds  float64 `json:"wall_s"`       // process start to exit
		PeakMiB      float64 `json:"peak_mib"`     // from postern's stats line
		Summary      string  `json:"summary"`      // postern's own line
		StoreBytes   int64   `json:"store_bytes"`  // store.db + store.db-wal
		DBBytes      int64   `json:"db_bytes"`     // store.db
		WALBytes     int64   `json:"wal_bytes"`    // store.db-wal
		VsRawFetch   float64 `json:"vs_raw_fetch"` // postern / raw fetch median
		VsMu         float64 `json:"vs_mu"`        // postern / mu index
		TargetWithin bool    `json:"target_within"`
	} `json:"first_sync"`
	Mu struct {
		Seconds  float64 `json:"index_s"`
		PeakMiB  float64 `json:"peak_mib"`
		DBBytes  int64   `json:"db_bytes"`
		Messages int     `json:"messages"`
	} `json:"mu"`
	Notmuch struct {
		Seconds  float64 `json:"new_s"`
		PeakMiB  float64 `json:"peak_mib"`
		DBBytes  int64   `json:"db_bytes"`
		Messages int     `json:"messages"`
	} `json:"notmuch"`
	Incremental struct {
		Changes     string  `json:"changes"`
		Seconds     float64 `json:"stats_s"`
		WallSeconds float64 `json:"wall_s"`
		PeakMiB     float64 `json:"peak_mib"`
		Summary     string  `json:"summary"`
		NoopSeconds float64 `json:"noop_stats_s"`
		NoopSummary string  `json:"noop_summary"`
		StoreBytes  int64   `json:"store_bytes"`
	} `json:"incremental"`
	Queries   []queryResult `json:"queries"`
	Pooled    queryMethods  `json:"pooled"`
	ServerMiB float64       `json:"server_peak_mib"` // VmHWM of postern mcp after the queries
	Projects  projectsRun   `json:"projects"`
	Targets   struct {
		SyncVsMuMax        float64 `json:"sync_vs_mu_max"`
		SyncWithin         bool    `json:"sync_within"`
		VsNotmuchMax       float64 `json:"vs_notmuch_max"`
		VsNotmuch          float64 `json:"vs_notmuch"`
		VsNotmuchWithin    bool    `json:"vs_notmuch_within"`
		VsNotmuchHeldFor   int     `json:"vs_notmuch_held_queries"`
		StdioVsProcMax     float64 `json:"stdio_vs_inprocess_max"`
		StdioVsProc        float64 `json:"stdio_vs_inprocess"`
		StdioVsProcWithin  bool    `json:"stdio_vs_inprocess_within"`
		StdioVsProcHeldFor int     `json:"stdio_vs_inprocess_held_queries"`
	} `json:"targets"`
}

// queryMethods holds one distribution per way of running a query.
type queryMethods struct {
	Stdio       summary `json:"stdio"`        // tools/call on one running postern mcp
	InProcess   summary `json:"in_process"`   // search.Parse + store.Messages in this process
	Call        summary `json:"postern_call"` // one postern call process per query
	Notmuch     summary `json:"notmuch"`      // one notmuch search process (default summary output)
	NotmuchMsgs summary `json:"notmuch_messages"`
	Projects    summary `json:"stdio_projects"` // tools/call on a second postern mcp with closed projects
}

// projectsRun is what the "stdio, projects" method ran against and what its projects keep.
type projectsRun struct {
	File      string  `json:"projects_toml"`
	Messages  int     `json:"messages"` // all messages, through the plain server
	Kept      int     `json:"kept"`     // plain minus projects, count_only mail_list per folder
	KeptShare float64 `json:"kept_share"`
	// Threads and messages each route reaches, in process (store.RouteThreads): the domain
	// route only reaches authenticated mail.
	Routes    []routeReach `json:"routes"`
	Ratio     ratio        `json:"pooled_ratio"`    // projects / plain stdio, pooled
	ServerMiB float64      `json:"server_peak_mib"` // VmHWM of the projects server after the queries
}

type routeReach struct {
	Route    string  `json:"route"`
	Threads  int     `json:"threads"`
	Messages int     `json:"messages"`
	LookupMS float64 `json:"lookup_ms"` // store.RouteThreads, median of 5: paid again after each change of the store
}

// ratio is one method's median and p99 over another's.
type ratio struct {
	Median float64 `json:"median"`
	P99    float64 `json:"p99"`
}

func ratioOf(a, b summary) ratio {
	return ratio{Median: round(a.Median / b.Median), P99: round(a.P99 / b.P99)}
}

type queryResult struct {
	mailQuery
	PosternMatches int `json:"postern_matches"` // count_only
	PosternRows    int `json:"postern_rows"`    // rows in the answer (limit 50)
	InProcessRows  int `json:"in_process_rows"`
	NotmuchMatches int `json:"notmuch_matches"` // notmuch count
	// Through the server with closed projects: count_only, its left_out, and the ratio of
	// its stdio distribution to the plain server's.
	ProjectsMatches int          `json:"projects_matches"`
	ProjectsLeftOut int          `json:"projects_left_out"`
	ProjectsRatio   ratio        `json:"projects_ratio"`
	Methods         queryMethods `json:"methods"`
}

// mailEnv is the state of one mail run.
type mailEnv struct {
	work, home, cfg, pwFile, storePath string
	projCfg                            string // config.toml of a folder that also holds projectsFile
	postern                            string
	dovecotDir, dovecotScript          string
	imapAddr, password                 string
	dovecotMaildir, localMaildir       string
	muHome, nmConfig                   string
	env                                []string // postern's environment
	nmEnv                              []string
}

func runMail(posternPath string, asJSON bool, limit time.Duration) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fail(fmt.Errorf("stopped by %v", s))
	}()
	time.AfterFunc(limit, func() { fail(fmt.Errorf("the run took longer than -timeout %v", limit)) })
	// Cleanups run last-registered first; each of ours kills the running
	// external programs before it removes what they use.
	addCleanup(killProcs)

	if runtime.GOOS != "linux" {
		fail(errors.New("-mail needs Linux (tmpfs, /proc, Dovecot)"))
	}
	if *mailMessages < 100 || *mailReps < 1 {
		fail(errors.New("-messages must be at least 100 and -reps at least 1"))
	}
	for _, p := range []string{"bash", "mu", "notmuch", "cp"} {
		if _, err := exec.LookPath(p); err != nil {
			fail(fmt.Errorf("%s is not installed: apt-get install -y maildir-utils notmuch (and .ci/dovecot install)", p))
		}
	}
	e := &mailEnv{postern: posternPath, dovecotScript: *mailDovecot}
	var root string
	if e.postern == "" || e.dovecotScript == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			fail(err)
		}
	}
	if e.dovecotScript == "" {
		e.dovecotScript = filepath.Join(root, ".ci", "dovecot")
	}

	var r mailReport
	r.Machine = machine()
	r.Messages, r.Seed, r.Reps = *mailMessages, *mailSeed, *mailReps
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.Load = strings.Join(strings.Fields(string(b))[:3], " ")
	}

	r.WorkDir = e.workspace("postern-bench-mail-", root)
	r.Versions.Dovecot = firstLine(output(context.Background(), nil, "dovecot", "--version"))
	r.Versions.Mu = firstLine(output(context.Background(), nil, "mu", "--version"))
	r.Versions.Notmuch = firstLine(output(context.Background(), nil, "notmuch", "--version"))

	e.startDovecot()
	e.writeCorpus(&r)
	e.writeConfigs()

	// First sync, between raw fetches of the same bodies from the same server.
	logf("warming Dovecot (one untimed fetch of every body)")
	t0 := time.Now()
	n, nb := e.rawFetch()
	r.RawFetch.WarmSeconds = secs(time.Since(t0))
	r.RawFetch.Messages, r.RawFetch.Bytes = n, nb
	if n != *mailMessages {
		fail(fmt.Errorf("Dovecot serves %d messages, the corpus has %d", n, *mailMessages))
	}
	for i := 0; i < 2; i++ {
		r.RawFetch.Seconds = append(r.RawFetch.Seconds, e.timedRawFetch())
	}
	logf("first sync: postern sync --stats")
	fs := e.sync()
	r.Sync.Seconds, r.Sync.WallSeconds, r.Sync.PeakMiB, r.Sync.Summary = fs.stats, fs.wall, fs.peak, fs.summary
	r.Sync.DBBytes, r.Sync.WALBytes = fileSize(e.storePath), fileSize(e.storePath+"-wal")
	r.Sync.StoreBytes = r.Sync.DBBytes + r.Sync.WALBytes
	r.RawFetch.Seconds = append(r.RawFetch.Seconds, e.timedRawFetch())
	r.RawFetch.Median = medianF(r.RawFetch.Seconds)
	r.Sync.VsRawFetch = round(r.Sync.Seconds / r.RawFetch.Median)

	logf("mu index")
	e.muIndex(&r)
	r.Sync.VsMu = round(r.Sync.Seconds / r.Mu.Seconds)
	r.Sync.TargetWithin = r.Sync.Seconds <= targetSyncVsMu*r.Mu.Seconds
	logf("notmuch new")
	e.notmuchNew(&r)

	logf("queries: %d runs of %d queries per method", *mailReps, len(mailQueries("", time.Now())))
	e.runQueries(&r)

	logf("incremental sync of %d changes", incNew+incFlags+incExpunge)
	e.incremental(&r)

	r.Targets.SyncVsMuMax = targetSyncVsMu
	r.Targets.SyncWithin = r.Sync.TargetWithin
	r.Targets.VsNotmuchMax = targetVsNotmuch
	r.Targets.VsNotmuch = round(r.Pooled.Stdio.Median / r.Pooled.Notmuch.Median)
	r.Targets.VsNotmuchWithin = r.Targets.VsNotmuch <= targetVsNotmuch
	r.Targets.StdioVsProcMax = targetStdioVsProc
	r.Targets.StdioVsProc = round(r.Pooled.Stdio.Median / r.Pooled.InProcess.Median)
	r.Targets.StdioVsProcWithin = r.Targets.StdioVsProc <= targetStdioVsProc
	for _, q := range r.Queries {
		if q.Methods.Stdio.Median <= targetVsNotmuch*q.Methods.Notmuch.Median {
			r.Targets.VsNotmuchHeldFor++
		}
		if q.Methods.Stdio.Median <= targetStdioVsProc*q.Methods.InProcess.Median {
			r.Targets.StdioVsProcHeldFor++
		}
	}

	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(b))
	} else {
		r.print(os.Stdout)
	}
	cleanup()
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "postern-bench %s: "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func secs(d time.Duration) float64 { return math3(d.Seconds()) }

func math3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func dirSize(root string) int64 {
	var n int64
	filepath.Walk(root, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func medianF(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// External programs, tracked so that every exit path kills them.
var (
	procMu sync.Mutex
	procs  = map[*os.Process]bool{}
)

func killProcs() {
	procMu.Lock()
	defer procMu.Unlock()
	for p := range procs {
		p.Kill()
	}
}

// runResult is one finished external program.
type runResult struct {
	out     []byte
	wall    time.Duration
	peakMiB float64 // ru_maxrss of the process
}

// run runs name with args under a timeout, tracked, and returns its output
// (stdout; stderr is kept for errors).
func run(ctx context.Context, timeout time.Duration, env []string, name string, args ...string) (runResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = env
	}
	var stdout bytes.Buffer
	stderr := &tail{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.WaitDelay = exitTimeout
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return runResult{}, fmt.Errorf("%s: %w", name, err)
	}
	procMu.Lock()
	procs[cmd.Process] = true
	procMu.Unlock()
	err := cmd.Wait()
	wall := time.Since(t0)
	procMu.Lock()
	delete(procs, cmd.Process)
	procMu.Unlock()
	res := runResult{out: stdout.Bytes(), wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.peakMiB = round(float64(ru.Maxrss) / 1024)
	}
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("%s %s: no end within %v; killed", name, strings.Join(args, " "), timeout)
		}
		return res, fmt.Errorf("%s %s: %v%s", name, strings.Join(args, " "), err, stderr.suffix())
	}
	return res, nil
}

func output(ctx context.Context, env []string, name string, args ...string) string {
	r, err := run(ctx, time.Minute, env, name, args...)
	if err != nil {
		return "unknown"
	}
	return string(r.out)
}

func must(r runResult, err error) runResult {
	if err != nil {
		fail(err)
	}
	return r
}

// startDovecot starts a private Dovecot in work/dovecot and adds the user.
func (e *mailEnv) startDovecot() {
	e.dovecotDir = filepath.Join(e.work, "dovecot")
	logf("starting Dovecot in %s", e.dovecotDir)
	// Registered before starting, so that a start that half worked is stopped too.
	addCleanup(func() {
		killProcs()
		if _, err := os.Stat(filepath.Join(e.dovecotDir, "dovecot.conf")); err == nil {
			run(context.Background(), time.Minute, nil, "bash", e.dovecotScript, "stop", e.dovecotDir)
		}
	})
	res := must(run(context.Background(), 2*time.Minute, nil, "bash", e.dovecotScript, "start", e.dovecotDir))
	for _, l := range strings.Split(string(res.out), "\n") {
		if v, ok := strings.CutPrefix(l, "POSTERN_DOVECOT_IMAP="); ok {
			e.imapAddr = strings.TrimSpace(v)
		}
	}
	if e.imapAddr == "" {
		fail(fmt.Errorf("%s start printed no POSTERN_DOVECOT_IMAP: %s", e.dovecotScript, res.out))
	}
	b := make([]byte, 12)
	rand.Read(b)
	e.password = hex.EncodeToString(b)
	must(run(context.Background(), time.Minute, nil, "bash", e.dovecotScript, "adduser", e.dovecotDir, mailUser, e.password))
	e.dovecotMaildir = filepath.Join(e.dovecotDir, "home", mailUser, "Maildir")
}

// writeCorpus writes the corpus as a Maildir for mu and notmuch, and copies
// it into the Dovecot user's Maildir, handed to the user Dovecot serves as.
func (e *mailEnv) writeCorpus(r *mailReport) {
	e.localMaildir = filepath.Join(e.work, "local", "Maildir")
	logf("writing %d messages (seed %d) to %s", *mailMessages, *mailSeed, e.localMaildir)
	t0 := time.Now()
	n, err := corpus.WriteMaildir(e.localMaildir, corpus.Options{Seed: *mailSeed, Messages: *mailMessages})
	if err != nil {
		fail(err)
	}
	if n != *mailMessages {
		fail(fmt.Errorf("the corpus wrote %d messages, not %d", n, *mailMessages))
	}
	r.Corpus.Seconds = secs(time.Since(t0))
	r.Corpus.Bytes = dirSize(e.localMaildir)
	r.Corpus.Folders = map[string]int{}
	for _, f := range corpus.DefaultFolders {
		d, _ := corpus.MaildirDir(f)
		ents, _ := os.ReadDir(filepath.Join(e.localMaildir, d, "cur"))
		r.Corpus.Folders[f] = len(ents)
	}

	fi, err := os.Stat(e.dovecotMaildir)
	if err != nil {
		fail(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	uid, gid := int(st.Uid), int(st.Gid)
	t0 = time.Now()
	must(run(context.Background(), stepTimeout, nil, "cp", "-a", e.localMaildir+"/.", e.dovecotMaildir+"/"))
	// As imaptest.FixOwnership: Dovecot must be able to rename files and write folders.
	err = filepath.Walk(e.dovecotMaildir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		fail(err)
	}
	r.Corpus.CopySeconds = secs(time.Since(t0))
}

func (e *mailEnv) writeConfigs() {
	if err := os.WriteFile(e.pwFile, []byte(e.password+"\n"), 0o600); err != nil {
		fail(err)
	}
	cfg := fmt.Sprintf("[[accounts]]\nname = %q\nkind = \"imap\"\nserver = %q\nuser = %q\npassword_cmd = %q\ntls = \"none\"\n",
		mailAccount, e.imapAddr, mailUser, "cat "+e.pwFile)
	if err := os.WriteFile(e.cfg, []byte(cfg), 0o600); err != nil {
		fail(err)
	}
	// The same configuration in a second folder, with the person's projects beside it (the
	// projects file is read from the configuration's folder); the same store.
	pdir := filepath.Join(e.work, "projects-config")
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		fail(err)
	}
	e.projCfg = filepath.Join(pdir, "config.toml")
	if err := os.WriteFile(e.projCfg, []byte(cfg), 0o600); err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "projects.toml"), []byte(projectsFile), 0o600); err != nil {
		fail(err)
	}
	e.muHome = filepath.Join(e.work, "mu")
	nm := filepath.Join(e.work, "notmuch")
	if err := os.MkdirAll(filepath.Join(nm, "db"), 0o700); err != nil {
		fail(err)
	}
	e.nmConfig = filepath.Join(nm, "config")
	nmc := fmt.Sprintf(`[database]
path=%s
mail_root=%s
[user]
name=%s
primary_email=%s
[new]
tags=inbox;unread;
ignore=subscriptions;maildirfolder;
[search]
exclude_tags=
[maildir]
synchronize_flags=true
`, filepath.Join(nm, "db"), e.localMaildir, corpus.OwnerName, corpus.OwnerEmail)
	if err := os.WriteFile(e.nmConfig, []byte(nmc), 0o600); err != nil {
		fail(err)
	}
	e.nmEnv = append(isolatedEnv(e.home), "NOTMUCH_CONFIG="+e.nmConfig)
}

// rawFetch is the floor: one connection, every folder selected read-only,
// UID FETCH 1:* BODY.PEEK[], literals read and discarded.
func (e *mailEnv) rawFetch() (msgs int, nbytes int64) {
	c, err := imapclient.DialInsecure(e.imapAddr, &imapclient.Options{Dialer: &net.Dialer{Timeout: 10 * time.Second}})
	if err != nil {
		fail(fmt.Errorf("raw fetch: %w", err))
	}
	defer c.Close()
	if err := c.Login(mailUser, e.password).Wait(); err != nil {
		fail(fmt.Errorf("raw fetch: login: %w", err))
	}
	boxes, err := c.List("", "*", nil).Collect()
	if err != nil {
		fail(fmt.Errorf("raw fetch: LIST: %w", err))
	}
	for _, b := range boxes {
		if hasAttr(b.Attrs, imap.MailboxAttrNoSelect) {
			continue
		}
		sel, err := c.Select(b.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
		if err != nil {
			fail(fmt.Errorf("raw fetch: EXAMINE %s: %w", b.Mailbox, err))
		}
		if sel.NumMessages == 0 {
			continue
		}
		cmd := c.Fetch(imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{{Peek: true}}})
		for {
			m := cmd.Next()
			if m == nil {
				break
			}
			for {
				item := m.Next()
				if item == nil {
					break
				}
				if bs, ok := item.(imapclient.FetchItemDataBodySection); ok && bs.Literal != nil {
					k, err := io.Copy(io.Discard, bs.Literal)
					if err != nil {
						fail(fmt.Errorf("raw fetch: %w", err))
					}
					nbytes += k
					msgs++
				}
			}
		}
		if err := cmd.Close(); err != nil {
			fail(fmt.Errorf("raw fetch: FETCH in %s: %w", b.Mailbox, err))
		}
	}
	if err := c.Logout().Wait(); err != nil {
		fail(fmt.Errorf("raw fetch: LOGOUT: %w", err))
	}
	return msgs, nbytes
}

func hasAttr(attrs []imap.MailboxAttr, a imap.MailboxAttr) bool {
	for _, x := range attrs {
		if strings.EqualFold(string(x), string(a)) {
			return true
		}
	}
	return false
}

func (e *mailEnv) timedRawFetch() float64 {
	t0 := time.Now()
	n, _ := e.rawFetch()
	d := secs(time.Since(t0))
	logf("raw fetch: %d messages in %.3f s", n, d)
	return d
}

type syncResult struct {
	stats, wall, peak float64
	summary           string
}

// sync runs postern sync --stats and reads its stats line.
func (e *mailEnv) sync() syncResult {
	res := must(run(context.Background(), stepTimeout, e.env, e.postern, "sync", "--config", e.cfg, "--stats"))
	out := string(res.out)
	var s syncResult
	s.wall = secs(res.wall)
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "stats: "); ok {
			// stats: 12.345 s, peak memory 45.6 MiB
			var mib float64
			if _, err := fmt.Sscanf(v, "%f s, peak memory %f MiB", &s.stats, &mib); err != nil {
				fail(fmt.Errorf("cannot read postern's stats line %q: %v", l, err))
			}
			s.peak = mib
		}
		if strings.HasPrefix(l, mailAccount+": ") {
			s.summary = strings.TrimSpace(l)
		}
	}
	if s.stats == 0 {
		fail(fmt.Errorf("postern sync --stats printed no stats line: %s", out))
	}
	logf("postern sync: %s; %.3f s, peak %.1f MiB", s.summary, s.stats, s.peak)
	return s
}

func (e *mailEnv) muIndex(r *mailReport) {
	must(run(context.Background(), time.Minute, e.env, "mu", "init", "--maildir="+e.localMaildir, "--muhome="+e.muHome))
	res := must(run(context.Background(), stepTimeout, e.env, "mu", "index", "--quiet", "--muhome="+e.muHome))
	r.Mu.Seconds = secs(res.wall)
	r.Mu.PeakMiB = res.peakMiB
	r.Mu.DBBytes = dirSize(e.muHome)
	// mu find prints one line per match; count them.
	out, err := run(context.Background(), 5*time.Minute, e.env, "mu", "find", "--muhome="+e.muHome, "--fields=i", "--skip-dups=false", "--threads=false", "--maxnum=10000000", "")
	if err == nil {
		r.Mu.Messages = bytes.Count(out.out, []byte("\n"))
	}
	logf("mu index: %.3f s, peak %.1f MiB, %d messages", r.Mu.Seconds, r.Mu.PeakMiB, r.Mu.Messages)
}

func (e *mailEnv) notmuchNew(r *mailReport) {
	res := must(run(context.Background(), stepTimeout, e.nmEnv, "notmuch", "new", "--quiet"))
	r.Notmuch.Seconds = secs(res.wall)
	r.Notmuch.PeakMiB = res.peakMiB
	r.Notmuch.DBBytes = dirSize(filepath.Join(e.work, "notmuch", "db"))
	r.Notmuch.Messages = e.notmuchCount("*")
	logf("notmuch new: %.3f s, peak %.1f MiB, %d messages", r.Notmuch.Seconds, r.Notmuch.PeakMiB, r.Notmuch.Messages)
}

func (e *mailEnv) notmuchCount(q string) int {
	res := must(run(context.Background(), queryTimeout, e.nmEnv, "notmuch", "count", "--output=messages", q))
	n, err := strconv.Atoi(strings.TrimSpace(string(res.out)))
	if err != nil {
		fail(fmt.Errorf("notmuch count %s printed %q", q, res.out))
	}
	return n
}

// toolCaller sends numbered tools/call requests on one postern mcp connection.
type toolCaller struct {
	c      *conn
	nextID int
}

func (k *toolCaller) call(tool, args string) (time.Duration, []byte, error) {
	k.nextID++
	req := `{"jsonrpc":"2.0","id":` + strconv.Itoa(k.nextID) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}` + "\n"
	id := []byte(`"id":` + strconv.Itoa(k.nextID) + `,`)
	d, line, err := k.c.roundTrip([]byte(req), id)
	if err != nil {
		return 0, nil, err
	}
	line = append([]byte(nil), line...)
	// Checked after the clock stopped.
	if !bytes.Contains(line, []byte(`"result":`)) || bytes.Contains(line, []byte(`"isError":true`)) {
		return 0, nil, fmt.Errorf("postern answered tools/call %s %s with %s", tool, args, bytes.TrimSpace(line))
	}
	return d, line, nil
}

// answerRows is the number of messages in a tools/call answer, and its count.
func answerRows(line []byte) (rows int, count int) {
	var a struct {
		Result struct {
			StructuredContent struct {
				Messages []json.RawMessage `json:"messages"`
				Count    *int              `json:"count"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &a); err != nil {
		fail(fmt.Errorf("cannot read the answer %.200s: %v", line, err))
	}
	c := -1
	if a.Result.StructuredContent.Count != nil {
		c = *a.Result.StructuredContent.Count
	}
	return len(a.Result.StructuredContent.Messages), c
}

// answerLeftOut is the left_out of a tools/call answer (0 when absent).
func answerLeftOut(line []byte) int {
	var a struct {
		Result struct {
			StructuredContent struct {
				LeftOut int `json:"left_out"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &a); err != nil {
		fail(fmt.Errorf("cannot read the answer %.200s: %v", line, err))
	}
	return a.Result.StructuredContent.LeftOut
}

func withCountOnly(args string) string {
	return strings.TrimSuffix(args, "}") + `,"count_only":true}`
}

// filterFor builds the store.Filter that internal/tools builds for the call
// (MailSearch and MailList), for the visible accounts.
func filterFor(q mailQuery, now time.Time) (*store.Filter, error) {
	accts := []string{mailAccount}
	if q.Tool == generated.ToolMailSearch {
		parsed, err := search.Parse(q.Query, now)
		if err != nil {
			return nil, err
		}
		return &store.Filter{Accounts: accts, Query: parsed, Bodies: true, Limit: 50}, nil
	}
	f := &store.Filter{Accounts: accts, Folder: q.Folder, Limit: 50}
	if q.Unread {
		t := true
		f.Unread = &t
	}
	return f, nil
}

func (e *mailEnv) runQueries(r *mailReport) {
	rare := uniqueWord(*mailMessages / 2)
	qs := mailQueries(rare, time.Now().UTC())
	reps := *mailReps

	// The server, running through every rep.
	p := program{name: "postern", path: e.postern, args: []string{"mcp", "--config", e.cfg, "--scopes", mailScopes}, env: e.env, initialize: true}
	c, err := start(p)
	if err != nil {
		fail(err)
	}
	if err := c.handshake(); err != nil {
		fail(err)
	}
	k := &toolCaller{c: c}
	// The same server on the configuration folder with closed projects.
	pp := program{name: "postern (projects)", path: e.postern, args: []string{"mcp", "--config", e.projCfg, "--scopes", mailScopes}, env: e.env, initialize: true}
	pc, err := start(pp)
	if err != nil {
		fail(err)
	}
	if err := pc.handshake(); err != nil {
		fail(err)
	}
	kp := &toolCaller{c: pc}

	// The in-process store, as the server opens it; but never migrated by a
	// bench built from another tree than the postern binary.
	if err := e.sameSchema(); err != nil {
		fail(err)
	}
	st, err := store.Open(e.storePath)
	if err != nil {
		fail(err)
	}
	defer st.Close()
	ctx := context.Background()
	inproc := func(q mailQuery) (time.Duration, int) {
		t0 := time.Now()
		f, err := filterFor(q, time.Now().UTC())
		if err != nil {
			fail(err)
		}
		rows, _, err := st.Messages(ctx, f)
		d := time.Since(t0)
		if err != nil {
			fail(fmt.Errorf("in-process %s: %v", q.Name, err))
		}
		return d, len(rows)
	}
	callArgs := func(q mailQuery) []string {
		return []string{"call", q.Tool, q.args, "--json", "--scopes", mailScopes, "--config", e.cfg}
	}
	nmArgs := func(q mailQuery, msgs bool) []string {
		a := []string{"search", "--limit=50"}
		if msgs {
			a = append(a, "--output=messages")
		}
		return append(a, q.Notmuch)
	}

	res := make([]queryResult, len(qs))
	samples := make([][6][]time.Duration, len(qs))
	// One uncounted run of each, and the match counts.
	for i, q := range qs {
		res[i].mailQuery = q
		_, line, err := k.call(q.Tool, q.args)
		if err != nil {
			fail(err)
		}
		res[i].PosternRows, _ = answerRows(line)
		_, line, err = k.call(q.Tool, withCountOnly(q.args))
		if err != nil {
			fail(err)
		}
		_, res[i].PosternMatches = answerRows(line)
		_, res[i].InProcessRows = inproc(q)
		_, line, err = kp.call(q.Tool, q.args)
		if err != nil {
			fail(err)
		}
		if rows, _ := answerRows(line); rows > res[i].PosternRows {
			fail(fmt.Errorf("%s: the server with closed projects answered %d rows, the plain one %d", q.Name, rows, res[i].PosternRows))
		}
		_, line, err = kp.call(q.Tool, withCountOnly(q.args))
		if err != nil {
			fail(err)
		}
		_, res[i].ProjectsMatches = answerRows(line)
		res[i].ProjectsLeftOut = answerLeftOut(line)
		if res[i].ProjectsMatches > res[i].PosternMatches {
			fail(fmt.Errorf("%s: the server with closed projects found %d matches, the plain one %d", q.Name, res[i].ProjectsMatches, res[i].PosternMatches))
		}
		must(run(ctx, queryTimeout, e.env, e.postern, callArgs(q)...))
		must(run(ctx, queryTimeout, e.nmEnv, "notmuch", nmArgs(q, false)...))
		res[i].NotmuchMatches = e.notmuchCount(q.Notmuch)
		if res[i].InProcessRows != res[i].PosternRows {
			fail(fmt.Errorf("%s: in-process found %d rows, the server %d", q.Name, res[i].InProcessRows, res[i].PosternRows))
		}
	}
	// Interleaved: every rep runs every query once in every way, so that what
	// else the machine does falls on all of them.
	for rep := 0; rep < reps; rep++ {
		for i, q := range qs {
			d, _, err := k.call(q.Tool, q.args)
			if err != nil {
				fail(err)
			}
			samples[i][0] = append(samples[i][0], d)
			d, _, err = kp.call(q.Tool, q.args)
			if err != nil {
				fail(err)
			}
			samples[i][5] = append(samples[i][5], d)
			d, _ = inproc(q)
			samples[i][1] = append(samples[i][1], d)
			samples[i][2] = append(samples[i][2], must(run(ctx, queryTimeout, e.env, e.postern, callArgs(q)...)).wall)
			samples[i][3] = append(samples[i][3], must(run(ctx, queryTimeout, e.nmEnv, "notmuch", nmArgs(q, false)...)).wall)
			samples[i][4] = append(samples[i][4], must(run(ctx, queryTimeout, e.nmEnv, "notmuch", nmArgs(q, true)...)).wall)
		}
		if (rep+1)%10 == 0 {
			logf("queries: %d/%d reps", rep+1, reps)
		}
	}
	e.projectsKept(r, k, kp, st)
	r.ServerMiB = vmHWM(c.cmd.Process.Pid)
	r.Projects.ServerMiB = vmHWM(pc.cmd.Process.Pid)
	if err := c.stop(); err != nil {
		fail(err)
	}
	if err := pc.stop(); err != nil {
		fail(err)
	}
	var pooled [6][]time.Duration
	for i := range qs {
		m := &res[i].Methods
		for j, dst := range []*summary{&m.Stdio, &m.InProcess, &m.Call, &m.Notmuch, &m.NotmuchMsgs, &m.Projects} {
			*dst = summarize(samples[i][j])
			pooled[j] = append(pooled[j], samples[i][j]...)
		}
		res[i].ProjectsRatio = ratioOf(m.Projects, m.Stdio)
	}
	for j, dst := range []*summary{&r.Pooled.Stdio, &r.Pooled.InProcess, &r.Pooled.Call, &r.Pooled.Notmuch, &r.Pooled.NotmuchMsgs, &r.Pooled.Projects} {
		*dst = summarize(pooled[j])
	}
	r.Projects.Ratio = ratioOf(r.Pooled.Projects, r.Pooled.Stdio)
	r.Queries = res
}

// projectsKept counts what the projects keep: count_only mail_list of every folder through
// both servers (plain minus projects, which must be the projects server's left_out), and, in
// process, what each route reaches.
func (e *mailEnv) projectsKept(r *mailReport, plain, proj *toolCaller, st *store.Store) {
	p := &r.Projects
	p.File = projectsFile
	for _, f := range corpus.DefaultFolders {
		args := withCountOnly(fmt.Sprintf(`{"folder":%q}`, f))
		_, line, err := plain.call(generated.ToolMailList, args)
		if err != nil {
			fail(err)
		}
		_, all := answerRows(line)
		_, line, err = proj.call(generated.ToolMailList, args)
		if err != nil {
			fail(err)
		}
		_, shown := answerRows(line)
		if left := answerLeftOut(line); all-shown != left {
			fail(fmt.Errorf("projects: %s holds %d messages, the server with closed projects shows %d and says it left out %d", f, all, shown, left))
		}
		p.Messages += all
		p.Kept += all - shown
	}
	if p.Messages > 0 {
		p.KeptShare = round(float64(p.Kept) / float64(p.Messages))
	}
	ctx := context.Background()
	for _, x := range []struct {
		name  string
		route store.MailRoute
	}{
		{"domain " + projDomain + " (authenticated senders only)", store.MailRoute{Domains: []string{projDomain}}},
		{"subject " + projSubject, store.MailRoute{Subjects: []string{projSubject}}},
		{"folder " + projFolder, store.MailRoute{Folders: []store.FolderRoute{{Folder: projFolder}}}},
	} {
		// The lookup runs again only when the store or the projects file changed: timed here
		// (median of 5) as the first call after a sync pays it.
		var threads map[int64]bool
		var took []time.Duration
		for i := 0; i < 5; i++ {
			t0 := time.Now()
			th, err := st.RouteThreads(ctx, &x.route, []string{mailAccount})
			if err != nil {
				fail(fmt.Errorf("projects: route %s: %w", x.name, err))
			}
			took, threads = append(took, time.Since(t0)), th
		}
		ids := make([]int64, 0, len(threads))
		for t := range threads {
			ids = append(ids, t)
		}
		b, _ := json.Marshal(ids)
		n, err := st.Count(ctx, &store.Filter{Accounts: []string{mailAccount}, Hide: &store.Hide{Only: true, Threads: string(b)}})
		if err != nil {
			fail(fmt.Errorf("projects: counting route %s: %w", x.name, err))
		}
		p.Routes = append(p.Routes, routeReach{Route: x.name, Threads: len(threads), Messages: n, LookupMS: summarize(took).Median / 1000})
	}
	logf("projects: %d of %d messages kept (%.0f%%)", p.Kept, p.Messages, 100*p.KeptShare)
}

// sameSchema checks that this program's internal/store writes the schema
// version that the postern binary wrote, so that opening the store here does
// not migrate it under the server.
func (e *mailEnv) sameSchema() error {
	version := func(path, mode string) (string, error) {
		db, err := sql.Open("sqlite", "file:"+path+"?mode="+mode)
		if err != nil {
			return "", err
		}
		defer db.Close()
		var v string
		err = db.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&v)
		return v, err
	}
	fresh := filepath.Join(e.work, "schema-check", "store.db")
	st, err := store.Open(fresh)
	if err != nil {
		return err
	}
	st.Close()
	mine, err := version(fresh, "ro")
	if err != nil {
		return fmt.Errorf("reading the schema version of a new store: %w", err)
	}
	theirs, err := version(e.storePath, "ro")
	if err != nil {
		return fmt.Errorf("reading the schema version of %s: %w", e.storePath, err)
	}
	if mine != theirs {
		return fmt.Errorf("the postern binary wrote store schema %s and this bench's internal/store writes %s: build both from the same tree (go build ./cmd/postern ./cmd/postern-bench)", theirs, mine)
	}
	return nil
}

// vmHWM is a process's peak resident memory in MiB, from /proc/PID/status.
func vmHWM(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return round(kb / 1024)
		}
	}
	return 0
}

// incremental makes 100 changes on the server (append, flag changes,
// expunges) and times the sync that picks them up, then a sync with nothing
// to do.
func (e *mailEnv) incremental(r *mailReport) {
	c, err := imapclient.DialInsecure(e.imapAddr, &imapclient.Options{Dialer: &net.Dialer{Timeout: 10 * time.Second}})
	if err != nil {
		fail(fmt.Errorf("incremental: %w", err))
	}
	defer c.Close()
	if err := c.Login(mailUser, e.password).Wait(); err != nil {
		fail(fmt.Errorf("incremental: login: %w", err))
	}
	// First 30 flag changes and 20 expunges among the messages already there,
	// spread over INBOX and Archive: of 25 evenly spaced messages in each,
	// \Seen is toggled on the first 15 and the other 10 are expunged.
	flagged, expunged := 0, 0
	for _, folder := range []string{"INBOX", "Archive"} {
		if _, err := c.Select(folder, nil).Wait(); err != nil {
			fail(fmt.Errorf("incremental: SELECT %s: %w", folder, err))
		}
		msgs, err := c.Fetch(imap.SeqSet{imap.SeqRange{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Flags: true}).Collect()
		if err != nil {
			fail(fmt.Errorf("incremental: FETCH FLAGS in %s: %w", folder, err))
		}
		nf, nx := incFlags/2, incExpunge/2
		if len(msgs) < 2*(nf+nx) {
			fail(fmt.Errorf("incremental: %s has only %d messages", folder, len(msgs)))
		}
		step := len(msgs) / (nf + nx)
		var seen, unseen, gone imap.UIDSet
		for j := 0; j < nf+nx; j++ {
			m := msgs[j*step]
			if j >= nf {
				gone.AddNum(m.UID)
				expunged++
				continue
			}
			if hasFlag(m.Flags, imap.FlagSeen) {
				unseen.AddNum(m.UID)
			} else {
				seen.AddNum(m.UID)
			}
			flagged++
		}
		if len(seen) > 0 {
			if err := c.Store(seen, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
				fail(fmt.Errorf("incremental: STORE: %w", err))
			}
		}
		if len(unseen) > 0 {
			if err := c.Store(unseen, &imap.StoreFlags{Op: imap.StoreFlagsDel, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
				fail(fmt.Errorf("incremental: STORE: %w", err))
			}
		}
		if err := c.Store(gone, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
			fail(fmt.Errorf("incremental: STORE: %w", err))
		}
		if err := c.UIDExpunge(gone).Close(); err != nil {
			fail(fmt.Errorf("incremental: UID EXPUNGE: %w", err))
		}
	}
	// 50 new messages, from another seed, appended to the folders they name.
	added := 0
	err = corpus.Each(corpus.Options{Seed: *mailSeed + 1000, Messages: incNew, Start: time.Now().UTC().AddDate(0, -1, 0)}, func(_ int, m *corpus.Message) error {
		var flags []imap.Flag
		for _, f := range m.Flags {
			flags = append(flags, imap.Flag(f))
		}
		folder := strings.ReplaceAll(m.Folder, "/", ".") // Dovecot's separator here
		cmd := c.Append(folder, int64(len(m.Raw)), &imap.AppendOptions{Flags: flags, Time: m.Date})
		if _, err := cmd.Write(m.Raw); err != nil {
			return err
		}
		if err := cmd.Close(); err != nil {
			return err
		}
		if _, err := cmd.Wait(); err != nil {
			return fmt.Errorf("APPEND to %s: %w", m.Folder, err)
		}
		added++
		return nil
	})
	if err != nil {
		fail(fmt.Errorf("incremental: %w", err))
	}
	if err := c.Logout().Wait(); err != nil {
		fail(fmt.Errorf("incremental: LOGOUT: %w", err))
	}
	r.Incremental.Changes = fmt.Sprintf("%d appended, %d flag changes (\\Seen toggled), %d expunged", added, flagged, expunged)
	s := e.sync()
	r.Incremental.Seconds, r.Incremental.WallSeconds, r.Incremental.PeakMiB, r.Incremental.Summary = s.stats, s.wall, s.peak, s.summary
	s = e.sync()
	r.Incremental.NoopSeconds, r.Incremental.NoopSummary = s.stats, s.summary
	r.Incremental.StoreBytes = fileSize(e.storePath) + fileSize(e.storePath+"-wal")
}

func hasFlag(fs []imap.Flag, f imap.Flag) bool {
	for _, x := range fs {
		if strings.EqualFold(string(x), string(f)) {
			return true
		}
	}
	return false
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func ms(v float64) string { return strconv.FormatFloat(v/1000, 'f', 2, 64) + " ms" }

func (r *mailReport) print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s, %s/%s, load %s\n", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.Arch, r.Load)
	fmt.Fprintf(w, "references: %s; %s; %s\n", r.Versions.Dovecot, r.Versions.Mu, r.Versions.Notmuch)
	fmt.Fprintf(w, "corpus: %d messages (seed %d), %s, written in %.1f s, copied for Dovecot in %.1f s, under %s\n",
		r.Messages, r.Seed, mib(r.Corpus.Bytes), r.Corpus.Seconds, r.Corpus.CopySeconds, r.WorkDir)
	fmt.Fprintf(w, "raw IMAP fetch (floor; Dovecot warmed by one untimed pass of %.2f s): %d messages, %s, %v s, median %.3f s\n",
		r.RawFetch.WarmSeconds, r.RawFetch.Messages, mib(r.RawFetch.Bytes), r.RawFetch.Seconds, r.RawFetch.Median)
	s := r.Sync
	fmt.Fprintf(w, "first sync: postern %.3f s (wall %.3f s), peak %.1f MiB, store %s (db %s + wal %s) [%s]\n",
		s.Seconds, s.WallSeconds, s.PeakMiB, mib(s.StoreBytes), mib(s.DBBytes), mib(s.WALBytes), s.Summary)
	fmt.Fprintf(w, "  vs raw fetch: %.2fx; vs mu index %.3f s (peak %.1f MiB, db %s, %d messages): %.2fx; notmuch new %.3f s (peak %.1f MiB, db %s, %d messages)\n",
		s.VsRawFetch, r.Mu.Seconds, r.Mu.PeakMiB, mib(r.Mu.DBBytes), r.Mu.Messages, s.VsMu, r.Notmuch.Seconds, r.Notmuch.PeakMiB, mib(r.Notmuch.DBBytes), r.Notmuch.Messages)
	in := r.Incremental
	fmt.Fprintf(w, "incremental: %s: postern %.3f s (wall %.3f s), peak %.1f MiB [%s]; then nothing to do: %.3f s; store %s\n",
		in.Changes, in.Seconds, in.WallSeconds, in.PeakMiB, in.Summary, in.NoopSeconds, mib(in.StoreBytes))
	fmt.Fprintf(w, "queries (%d runs each; median / p99):\n", r.Reps)
	fmt.Fprintf(w, "  %-26s %8s %8s %8s | %-19s | %-19s %-13s | %-19s | %-19s | %-19s | %-19s\n", "query", "postern", "projects", "notmuch", "stdio",
		"stdio, projects", "÷ stdio", "in-process", "postern call", "notmuch search", "notmuch --output=messages")
	for _, q := range r.Queries {
		x := q.Methods
		fmt.Fprintf(w, "  %-26s %8d %8d %8d | %s | %s %s | %s | %s | %s | %s\n", q.Name, q.PosternMatches, q.ProjectsMatches, q.NotmuchMatches,
			pair(x.Stdio), pair(x.Projects), ratioPair(q.ProjectsRatio), pair(x.InProcess), pair(x.Call), pair(x.Notmuch), pair(x.NotmuchMsgs))
	}
	x := r.Pooled
	fmt.Fprintf(w, "  %-26s %8s %8s %8s | %s | %s %s | %s | %s | %s | %s\n", "all queries pooled", "", "", "", pair(x.Stdio), pair(x.Projects), ratioPair(r.Projects.Ratio),
		pair(x.InProcess), pair(x.Call), pair(x.Notmuch), pair(x.NotmuchMsgs))
	fmt.Fprintf(w, "server peak memory (VmHWM of postern mcp after the queries): %.1f MiB; with projects %.1f MiB\n", r.ServerMiB, r.Projects.ServerMiB)
	pr := r.Projects
	fmt.Fprintf(w, "projects (stdio, projects: a second postern mcp whose projects.toml holds two closed projects, outside open):\n")
	fmt.Fprintf(w, "  client: domains [%s], subjects [%s]; archive: folders [%s]\n", projDomain, projSubject, projFolder)
	fmt.Fprintf(w, "  kept from agents: %d of %d messages (%.1f%%), count_only %s of each folder, plain server minus projects server (its left_out agrees)\n",
		pr.Kept, pr.Messages, 100*pr.KeptShare, generated.ToolMailList)
	for _, rr := range pr.Routes {
		fmt.Fprintf(w, "  route %-50s reaches %5d threads, %6d messages, looked up in %.2f ms (in process, store.RouteThreads)\n", rr.Route+":", rr.Threads, rr.Messages, rr.LookupMS)
	}
	if len(pr.Routes) > 0 && pr.Routes[0].Messages == 0 {
		fmt.Fprintf(w, "  the corpus has no Authentication-Results, so no sender is authenticated: the domain route costs its lookup (after each change of the store) and keeps nothing\n")
	}
	t := r.Targets
	fmt.Fprintf(w, "target first sync ≤ %.1f× mu index: %s (%.2fx)\n", t.SyncVsMuMax, held(t.SyncWithin), r.Sync.VsMu)
	fmt.Fprintf(w, "target query median ≤ %.1f× notmuch's: %s (pooled %.2fx; held for %d of %d queries)\n", t.VsNotmuchMax, held(t.VsNotmuchWithin), t.VsNotmuch, t.VsNotmuchHeldFor, len(r.Queries))
	fmt.Fprintf(w, "target stdio median within %.0f× of in-process: %s (pooled %.2fx; held for %d of %d queries)\n", t.StdioVsProcMax, held(t.StdioVsProcWithin), t.StdioVsProc, t.StdioVsProcHeldFor, len(r.Queries))
}

// ratioPair is a ratio of medians and of p99s, as "1.23× 1.45×".
func ratioPair(x ratio) string {
	return fmt.Sprintf("%6.2f× %5.2f×", x.Median, x.P99)
}

func pair(s summary) string {
	return fmt.Sprintf("%8s %9s", strings.TrimSuffix(ms(s.Median), " ms"), ms(s.P99))
}

// workspace makes a bench mode's working folder under -dir (removed at the end unless -keep;
// walkable by Dovecot's mail processes, which run as nobody), its HOME, configuration and
// password paths and isolated environment, and builds postern from root when no -postern was
// given. It returns the folder.
func (e *mailEnv) workspace(prefix, root string) string {
	work, err := os.MkdirTemp(*mailDir, prefix)
	if err != nil {
		fail(err)
	}
	if !*mailKeep {
		addCleanup(func() {
			killProcs()
			os.RemoveAll(work)
		})
	}
	if err := os.Chmod(work, 0o755); err != nil {
		fail(err)
	}
	e.work = work
	e.home = filepath.Join(work, "home")
	e.cfg = filepath.Join(work, "config.toml")
	e.pwFile = filepath.Join(work, "password")
	e.storePath = filepath.Join(e.home, ".local", "share", "postern", "store.db")
	e.env = isolatedEnv(e.home)
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		fail(err)
	}
	if e.postern == "" {
		e.postern = filepath.Join(work, "bin", "postern")
		logf("building postern")
		if err := goBuild(root, e.postern, "./cmd/postern"); err != nil {
			fail(err)
		}
	}
	return work
}

package main

// The actions mode (-actions): a query archive of newsletters and its undo
// through the real postern binary over stdio, beside a plain IMAP client
// moving the same mail on the same Dovecot in the same run. See
// BENCHMARKS.md, "Acting on mail (issue 14)".
//
//	go run ./cmd/postern-bench -actions [-actions-messages 500] [-actions-other 200] [-actions-reps 5] [-postern PATH] [-json]
//
// It reuses -dir, -keep and -dovecot of the mail mode. Two Dovecot users hold
// the same mail, so that the reference's moves never make postern's store
// stale: postern acts on one, the reference client on the other.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/generated"
)

var (
	actionsMode     = flag.Bool("actions", false, "measure a query "+generated.ToolMailMove+" to archive of newsletters and its "+generated.ToolMailUndo+" against a plain IMAP client moving the same mail (see BENCHMARKS.md)")
	actionsMessages = flag.Int("actions-messages", 500, "-actions: newsletters from one sender in INBOX (1 to 500, what one query may act on)")
	actionsOther    = flag.Int("actions-other", 200, "-actions: other messages in INBOX, from other senders")
	actionsReps     = flag.Int("actions-reps", 5, "-actions: timed repetitions of each measure")
)

const (
	actionsSender   = "news@letters.example"
	actionsRefUser  = "reference"
	actionsArchived = 20 // other messages already in Archive
	actionsScopes   = generated.ScopeRead + "," + generated.ScopeMailModify
	actionTimeout   = 2 * time.Minute // any one archive, undo or reference move
	shownRows       = 20              // the rows an action's answer shows (docs page actions)
)

type actionsReport struct {
	Machine     machineInfo `json:"machine"`
	Load        string      `json:"load_average"`       // /proc/loadavg at the start
	LoadAfter   string      `json:"load_average_after"` // and at the end
	Dovecot     string      `json:"dovecot"`
	Messages    int         `json:"messages"`       // newsletters from the one sender
	Other       int         `json:"other_messages"` // other mail in INBOX
	Archived    int         `json:"archived"`       // other mail already in Archive
	Reps        int         `json:"reps"`
	Sender      string      `json:"sender"`
	Query       string      `json:"query"`
	WorkDir     string      `json:"work_dir"`
	SyncSecs    float64     `json:"first_sync_s"`
	SyncLine    string      `json:"first_sync_summary"`
	ActionIDs   []string    `json:"action_ids"`           // of the timed archives
	AnswerBytes int         `json:"archive_answer_bytes"` // the JSON-RPC line answering one archive
	Reference   struct {
		Move     summary `json:"move"`      // login, SELECT INBOX, UID SEARCH FROM, UID MOVE to Archive
		MoveBack summary `json:"move_back"` // on the same connection: SELECT Archive, UID SEARCH FROM, UID MOVE to INBOX
	} `json:"reference"`
	Postern struct {
		DryRun  summary `json:"dry_run"` // mail_move to archive, dry_run:true
		Archive summary `json:"archive"` // mail_move to archive
		Undo    summary `json:"undo"`    // mail_undo of that archive
	} `json:"postern"`
	Ratios struct {
		ArchiveVsMove     float64 `json:"archive_vs_move"`      // postern archive median / reference move median
		UndoVsMove        float64 `json:"undo_vs_move"`         // postern undo median / reference move median
		UndoVsMoveBack    float64 `json:"undo_vs_move_back"`    // postern undo median / reference move back median
		UndoVsArchive     float64 `json:"undo_vs_archive"`      // postern undo median / postern archive median
		DryRunVsReference float64 `json:"dry_run_vs_reference"` // postern dry run median / reference move median
	} `json:"ratios"`
}

// actionsEnv is one actions run: the mail mode's environment plus the
// reference user.
type actionsEnv struct {
	*mailEnv
	refPassword string
	query       string
}

func runActions(posternPath string, asJSON bool, limit time.Duration) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fail(fmt.Errorf("stopped by %v", s))
	}()
	time.AfterFunc(limit, func() { fail(fmt.Errorf("the run took longer than -timeout %v", limit)) })
	addCleanup(killProcs)

	if runtime.GOOS != "linux" {
		fail(errors.New("-actions needs Linux (/proc, Dovecot)"))
	}
	n, other, reps := *actionsMessages, *actionsOther, *actionsReps
	if n < 1 || n > 500 || other < 0 || reps < 1 {
		fail(errors.New("-actions-messages must be from 1 to 500 (what one query may act on), -actions-other at least 0 and -actions-reps at least 1"))
	}
	e := &actionsEnv{mailEnv: &mailEnv{postern: posternPath, dovecotScript: *mailDovecot}, query: "from:" + actionsSender}
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

	var r actionsReport
	r.Machine = machine()
	r.Load = loadAverage()
	r.Messages, r.Other, r.Archived, r.Reps, r.Sender, r.Query = n, other, actionsArchived, reps, actionsSender, e.query
	r.Dovecot = firstLine(output(context.Background(), nil, "dovecot", "--version"))

	r.WorkDir = e.workspace("postern-bench-actions-", root)

	e.startDovecot() // and the user postern acts for
	b := make([]byte, 12)
	rand.Read(b)
	e.refPassword = hex.EncodeToString(b)
	must(run(context.Background(), time.Minute, nil, "bash", e.dovecotScript, "adduser", e.dovecotDir, actionsRefUser, e.refPassword))
	logf("writing %d newsletters from %s and %d other messages into INBOX, %d into Archive, for each of two users", n, actionsSender, other, actionsArchived)
	e.fill(mailUser, e.password, n, other)
	e.fill(actionsRefUser, e.refPassword, n, other)

	if err := os.WriteFile(e.pwFile, []byte(e.password+"\n"), 0o600); err != nil {
		fail(err)
	}
	cfg := fmt.Sprintf("[[accounts]]\nname = %q\nkind = \"imap\"\nserver = %q\nuser = %q\npassword_cmd = %q\ntls = \"none\"\naddress = \"bench@example.test\"\n",
		mailAccount, e.imapAddr, mailUser, "cat "+e.pwFile)
	if err := os.WriteFile(e.cfg, []byte(cfg), 0o600); err != nil {
		fail(err)
	}
	s := e.sync()
	r.SyncSecs, r.SyncLine = s.stats, s.summary

	p := program{name: "postern", path: e.postern, args: []string{"mcp", "--config", e.cfg, "--scopes", actionsScopes}, env: e.env, initialize: true}
	c, err := start(p)
	if err != nil {
		fail(err)
	}
	if err := c.handshake(); err != nil {
		fail(err)
	}
	k := &toolCaller{c: c}
	if got := e.posternInbox(k); got != n {
		fail(fmt.Errorf("postern's store finds %d messages for %q in INBOX after the sync, not %d", got, e.query+" in:INBOX", n))
	}

	// One uncounted round of each, then reps rounds, each running every
	// measure once, so that what else the machine does falls on all of them.
	var move, back, dry, arch, undo []time.Duration
	for rep := -1; rep < reps; rep++ {
		m, mb := e.referenceRound(n)
		d := e.dryRun(k, n)
		a, id, size := e.archive(k, n)
		r.AnswerBytes = size
		e.checkServer(n, other, false)
		u := e.undo(k, n, id)
		e.checkServer(n, other, true)
		if got := e.posternInbox(k); got != n {
			fail(fmt.Errorf("after %s %s postern's store finds %d messages for %q, not %d: the store did not follow the undo", generated.ToolMailUndo, id, got, e.query+" in:INBOX", n))
		}
		if rep < 0 {
			logf("warm-up: reference move %v and back %v; postern dry run %v, archive %v (%s), undo %v", rnd(m), rnd(mb), rnd(d), rnd(a), id, rnd(u))
			continue
		}
		move, back, dry, arch, undo = append(move, m), append(back, mb), append(dry, d), append(arch, a), append(undo, u)
		r.ActionIDs = append(r.ActionIDs, id)
		logf("rep %d/%d: reference move %v and back %v; postern dry run %v, archive %v (%s), undo %v", rep+1, reps, rnd(m), rnd(mb), rnd(d), rnd(a), id, rnd(u))
	}
	if err := c.stop(); err != nil {
		fail(err)
	}

	r.Reference.Move, r.Reference.MoveBack = summarize(move), summarize(back)
	r.Postern.DryRun, r.Postern.Archive, r.Postern.Undo = summarize(dry), summarize(arch), summarize(undo)
	r.Ratios.ArchiveVsMove = round(r.Postern.Archive.Median / r.Reference.Move.Median)
	r.Ratios.UndoVsMove = round(r.Postern.Undo.Median / r.Reference.Move.Median)
	r.Ratios.UndoVsMoveBack = round(r.Postern.Undo.Median / r.Reference.MoveBack.Median)
	r.Ratios.UndoVsArchive = round(r.Postern.Undo.Median / r.Postern.Archive.Median)
	r.Ratios.DryRunVsReference = round(r.Postern.DryRun.Median / r.Reference.Move.Median)
	r.LoadAfter = loadAverage()

	if asJSON {
		out, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(out))
	} else {
		r.print(os.Stdout)
	}
	cleanup()
}

func rnd(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// login opens an IMAP connection to the bench's Dovecot as user.
func (e *actionsEnv) login(user, password string) *imapclient.Client {
	c, err := imapclient.DialInsecure(e.imapAddr, &imapclient.Options{Dialer: &net.Dialer{Timeout: 10 * time.Second}})
	if err != nil {
		fail(fmt.Errorf("connecting to Dovecot at %s: %w", e.imapAddr, err))
	}
	if err := c.Login(user, password).Wait(); err != nil {
		c.Close()
		fail(fmt.Errorf("logging in to Dovecot as %s: %w", user, err))
	}
	return c
}

// fill gives user an Archive folder holding actionsArchived messages and an
// INBOX holding n newsletters from actionsSender (unread) and other messages
// from other senders (half of them read), interleaved by date.
func (e *actionsEnv) fill(user, password string, n, other int) {
	c := e.login(user, password)
	defer c.Close()
	if err := c.Create("Archive", nil).Wait(); err != nil {
		fail(fmt.Errorf("CREATE Archive for %s: %w", user, err))
	}
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	put := func(folder string, raw []byte, date time.Time, flags []imap.Flag) {
		cmd := c.Append(folder, int64(len(raw)), &imap.AppendOptions{Flags: flags, Time: date})
		if _, err := cmd.Write(raw); err != nil {
			fail(fmt.Errorf("APPEND to %s for %s: %w", folder, user, err))
		}
		if err := cmd.Close(); err != nil {
			fail(fmt.Errorf("APPEND to %s for %s: %w", folder, user, err))
		}
		if _, err := cmd.Wait(); err != nil {
			fail(fmt.Errorf("APPEND to %s for %s: %w", folder, user, err))
		}
	}
	for i := 0; i < actionsArchived; i++ {
		date := base.Add(-time.Duration(i+1) * 24 * time.Hour)
		put("Archive", personalMessage(1000+i, date), date, []imap.Flag{imap.FlagSeen})
	}
	total := n + other
	for i, ni, oi := 0, 0, 0; i < total; i++ {
		date := base.Add(time.Duration(i) * time.Hour)
		// Spread the other mail evenly among the newsletters.
		if oi < other && (ni >= n || oi*n <= ni*other) {
			var flags []imap.Flag
			if oi%2 == 0 {
				flags = []imap.Flag{imap.FlagSeen}
			}
			put("INBOX", personalMessage(oi, date), date, flags)
			oi++
			continue
		}
		put("INBOX", newsletter(ni, date), date, nil)
		ni++
	}
	if err := c.Logout().Wait(); err != nil {
		fail(fmt.Errorf("LOGOUT for %s: %w", user, err))
	}
}

// newsletter is issue i of a list newsletter, about 3 KB.
func newsletter(i int, date time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: Weekly Letters <%s>\r\nTo: Bench <bench@example.test>\r\nSubject: Weekly Letters #%d: what changed this week\r\nDate: %s\r\nMessage-ID: <letter-%d@letters.example>\r\n",
		actionsSender, i+1, date.Format(time.RFC1123Z), i+1)
	fmt.Fprintf(&b, "List-Id: Weekly Letters <weekly.letters.example>\r\nList-Unsubscribe: <https://letters.example/u/%d>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n", i+1)
	for j := 0; j < 40; j++ {
		fmt.Fprintf(&b, "Item %d of issue %d: a short paragraph about something that changed, with a link to read more.\r\n", j+1, i+1)
	}
	return b.Bytes()
}

// personalMessage is one short message from one of 37 other people.
func personalMessage(i int, date time.Time) []byte {
	return []byte(fmt.Sprintf("From: Person %d <person%d@example.org>\r\nTo: Bench <bench@example.test>\r\nSubject: Note %d\r\nDate: %s\r\nMessage-ID: <note-%d@example.org>\r\n\r\nA note, number %d.\r\n",
		i%37, i%37, i, date.Format(time.RFC1123Z), i, i))
}

// referenceRound is what a plain IMAP client does for the same job, timed:
// log in, SELECT INBOX, UID SEARCH FROM the sender, UID MOVE them all to
// Archive (move); then on the same connection SELECT Archive, UID SEARCH, UID
// MOVE back to INBOX (back).
func (e *actionsEnv) referenceRound(n int) (move, back time.Duration) {
	criteria := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "From", Value: actionsSender}}}
	step := func(c *imapclient.Client, from, to string) {
		if _, err := c.Select(from, nil).Wait(); err != nil {
			fail(fmt.Errorf("reference: SELECT %s: %w", from, err))
		}
		found, err := c.UIDSearch(criteria, nil).Wait()
		if err != nil {
			fail(fmt.Errorf("reference: UID SEARCH in %s: %w", from, err))
		}
		uids := found.AllUIDs()
		if len(uids) != n {
			fail(fmt.Errorf("reference: UID SEARCH FROM %s in %s found %d messages, not %d", actionsSender, from, len(uids), n))
		}
		if _, err := c.Move(imap.UIDSetNum(uids...), to).Wait(); err != nil {
			fail(fmt.Errorf("reference: UID MOVE from %s to %s: %w", from, to, err))
		}
	}
	t0 := time.Now()
	c := e.login(actionsRefUser, e.refPassword)
	defer c.Close()
	step(c, "INBOX", "Archive")
	move = time.Since(t0)
	t1 := time.Now()
	step(c, "Archive", "INBOX")
	back = time.Since(t1)
	if err := c.Logout().Wait(); err != nil {
		fail(fmt.Errorf("reference: LOGOUT: %w", err))
	}
	return move, back
}

// actionAnswer is the part of a tools/call answer the actions mode reads.
type actionAnswer struct {
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent struct {
			ActionID string `json:"action_id"`
			Changed  int    `json:"changed"`
			DryRun   bool   `json:"dry_run"`
			Count    *int   `json:"count"`
			Messages []struct {
				ID      string `json:"id"`
				Outcome string `json:"outcome"`
				Reason  string `json:"reason"`
				To      string `json:"to"`
			} `json:"messages"`
		} `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// act calls tool with args on k's connection under actionTimeout (longer than
// the stdio modes' per-answer deadline: one call here moves hundreds of
// messages) and returns the time from the write to the answer.
func act(k *toolCaller, tool string, args map[string]any) (time.Duration, actionAnswer) {
	d, a, _ := actSized(k, tool, args)
	return d, a
}

// actSized is act, also returning the length of the answer line.
func actSized(k *toolCaller, tool string, args map[string]any) (time.Duration, actionAnswer, int) {
	k.nextID++
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args})
	req := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(k.nextID) + `,"method":"tools/call","params":` + string(params) + "}\n")
	id := []byte(`"id":` + strconv.Itoa(k.nextID) + `,`)
	c := k.c
	deadline := time.Now().Add(actionTimeout)
	c.stdin.SetWriteDeadline(deadline)
	c.stdout.SetReadDeadline(deadline)
	t0 := time.Now()
	if _, err := c.stdin.Write(req); err != nil {
		fail(actErr(c, tool, "writing the request", err))
	}
	var line []byte
	for {
		l, err := c.readLine()
		if err != nil {
			fail(actErr(c, tool, "reading the answer", err))
		}
		if bytes.Contains(l, id) {
			line = append([]byte(nil), l...)
			break
		}
	}
	d := time.Since(t0)
	// Checked after the clock stopped: a failed call must not pass for a fast one.
	var a actionAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		fail(fmt.Errorf("cannot read postern's answer to %s: %v: %.300s", tool, err, line))
	}
	if a.Error != nil || a.Result == nil || a.Result.IsError {
		fail(fmt.Errorf("postern answered %s %s with an error: %.500s", tool, params, bytes.TrimSpace(line)))
	}
	return d, a, len(line)
}

func actErr(c *conn, tool, what string, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.kill()
		return fmt.Errorf("postern: no answer to %s within %v while %s; killed it%s", tool, actionTimeout, what, c.stderr.suffix())
	}
	return fmt.Errorf("postern: %s while calling %s: %w%s", what, tool, err, c.stderr.suffix())
}

// outcomes counts the rows of an answer by outcome.
func outcomes(a actionAnswer) map[string]int {
	m := map[string]int{}
	for _, row := range a.Result.StructuredContent.Messages {
		m[row.Outcome]++
	}
	return m
}

func (e *actionsEnv) dryRun(k *toolCaller, n int) time.Duration {
	d, a := act(k, generated.ToolMailMove, map[string]any{"query": e.query, "to": "archive", "dry_run": true})
	sc := a.Result.StructuredContent
	// The answer shows the first rows (at most 20); the others are paged with mail_actions.
	if !sc.DryRun || sc.Changed != n || outcomes(a)["moved"] != min(n, shownRows) {
		fail(fmt.Errorf("%s dry_run answered dry_run=%v changed=%d, outcomes %v; want dry_run=true, changed=%d, %d rows moved", generated.ToolMailMove, sc.DryRun, sc.Changed, outcomes(a), n, min(n, shownRows)))
	}
	return d
}

func (e *actionsEnv) archive(k *toolCaller, n int) (time.Duration, string, int) {
	d, a, size := actSized(k, generated.ToolMailMove, map[string]any{"query": e.query, "to": "archive"})
	sc := a.Result.StructuredContent
	if sc.DryRun || sc.Changed != n || sc.ActionID == "" || outcomes(a)["moved"] != min(n, shownRows) {
		fail(fmt.Errorf("%s answered changed=%d action_id=%q dry_run=%v, outcomes %v; want changed=%d, one action id, %d rows moved", generated.ToolMailMove, sc.Changed, sc.ActionID, sc.DryRun, outcomes(a), n, min(n, shownRows)))
	}
	return d, sc.ActionID, size
}

func (e *actionsEnv) undo(k *toolCaller, n int, id string) time.Duration {
	d, a := act(k, generated.ToolMailUndo, map[string]any{"id": id})
	sc := a.Result.StructuredContent
	if sc.Changed != n || outcomes(a)["put_back"] != min(n, shownRows) {
		fail(fmt.Errorf("%s %s answered changed=%d, outcomes %v; want changed=%d, %d rows put_back", generated.ToolMailUndo, id, sc.Changed, outcomes(a), n, min(n, shownRows)))
	}
	return d
}

// posternInbox is how many messages postern's store finds for the sender in
// INBOX (mail_search count_only).
func (e *actionsEnv) posternInbox(k *toolCaller) int {
	_, a := act(k, generated.ToolMailSearch, map[string]any{"query": e.query + " in:INBOX", "count_only": true})
	if a.Result.StructuredContent.Count == nil {
		fail(fmt.Errorf("%s count_only answered no count", generated.ToolMailSearch))
	}
	return *a.Result.StructuredContent.Count
}

// checkServer checks, with a separate IMAP client, where the newsletters of
// the user postern acts for are: all in Archive after the archive, all in
// INBOX after the undo, and the other mail where it was.
func (e *actionsEnv) checkServer(n, other int, inInbox bool) {
	c := e.login(mailUser, e.password)
	defer c.Close()
	criteria := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "From", Value: actionsSender}}}
	count := func(folder string) (letters, all int) {
		sel, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
		if err != nil {
			fail(fmt.Errorf("check: EXAMINE %s: %w", folder, err))
		}
		found, err := c.UIDSearch(criteria, nil).Wait()
		if err != nil {
			fail(fmt.Errorf("check: UID SEARCH in %s: %w", folder, err))
		}
		return len(found.AllUIDs()), int(sel.NumMessages)
	}
	inL, inAll := count("INBOX")
	arL, arAll := count("Archive")
	wantIn, wantAr := 0, n
	state := "archive"
	if inInbox {
		wantIn, wantAr, state = n, 0, "undo"
	}
	if inL != wantIn || arL != wantAr || inAll != other+wantIn || arAll != actionsArchived+wantAr {
		fail(fmt.Errorf("after the %s the server holds %d newsletters (%d messages) in INBOX and %d (%d) in Archive; it should hold %d (%d) and %d (%d)",
			state, inL, inAll, arL, arAll, wantIn, other+wantIn, wantAr, actionsArchived+wantAr))
	}
	c.Logout().Wait()
}

func (r *actionsReport) print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s, %s/%s, load %s (after: %s)\n", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.Arch, r.Load, r.LoadAfter)
	fmt.Fprintf(w, "server: %s on 127.0.0.1; INBOX %d newsletters from %s + %d other messages, Archive %d; first sync %.3f s [%s]\n",
		r.Dovecot, r.Messages, r.Sender, r.Other, r.Archived, r.SyncSecs, r.SyncLine)
	fmt.Fprintf(w, "%d timed rounds (after one uncounted), each running every measure once:\n", r.Reps)
	fmt.Fprintf(w, "  %-66s %10s %10s\n", "", "median", "min")
	row := func(name string, s summary) {
		fmt.Fprintf(w, "  %-66s %10s %10s\n", name, ms(s.Median), ms(s.Min))
	}
	row("reference move (login, SELECT, UID SEARCH FROM, UID MOVE)", r.Reference.Move)
	row("reference move back (SELECT Archive, UID SEARCH, UID MOVE)", r.Reference.MoveBack)
	row(generated.ToolMailMove+` {"query":"`+r.Query+`","to":"archive","dry_run":true}`, r.Postern.DryRun)
	row(generated.ToolMailMove+` {"query":"`+r.Query+`","to":"archive"}`, r.Postern.Archive)
	row(generated.ToolMailUndo+` {"id":…}`, r.Postern.Undo)
	x := r.Ratios
	fmt.Fprintf(w, "ratios of medians: postern archive / reference move %.2fx; postern undo / reference move %.2fx (/ reference move back %.2fx); undo / archive %.2fx; dry run / reference move %.2fx\n",
		x.ArchiveVsMove, x.UndoVsMove, x.UndoVsMoveBack, x.UndoVsArchive, x.DryRunVsReference)
	fmt.Fprintf(w, "one archive answer (JSON-RPC line, %d messages): %.1f KiB\n", r.Messages, float64(r.AnswerBytes)/1024)
	fmt.Fprintf(w, "every archive answered changed=%d and one action id (%s); every undo changed=%d; after each undo the server (checked by a separate IMAP client) and postern's store had the mail back in INBOX\n",
		r.Messages, strings.Join(r.ActionIDs, ", "), r.Messages)
}

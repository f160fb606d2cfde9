package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/mail"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/imapsync"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// storePath is where the store lives: $XDG_DATA_HOME/postern/store.db.
func storePath() string { return store.DefaultPath(config.DataDir()) }

func configPathFlag(fs interface {
	StringVar(*string, string, string, string)
}, p *string) {
	fs.StringVar(p, "config", config.DefaultPath(), "configuration file")
}

func cmdAccount(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "Usage: postern account add|list|remove …; run postern account add --help")
		return exitError{2}
	}
	switch args[0] {
	case "add":
		return cmdAccountAdd(args[1:], stdout, stderr)
	case "list":
		return cmdAccountList(args[1:], stdout, stderr)
	case "remove":
		return cmdAccountRemove(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "postern: unknown account command %q; use add, list or remove.\n", args[0])
	return exitError{2}
}

// splitFlags lets flags come before or after the positional arguments.
func splitFlags(fs interface {
	Parse([]string) error
	Args() []string
}, args []string) ([]string, error) {
	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
	}
}

func cmdAccountAdd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("account add", stderr, `Usage:
  postern account add NAME --imap HOST:PORT --user USER --password-cmd CMD [--tls implicit|starttls|none]
                           [--smtp HOST:PORT [--smtp-tls implicit|starttls|none] [--smtp-user USER]]
                           [--address ADDR] [--alias ADDR]…
  postern account add NAME --maildir PATH

Add a mail account. The password is never stored: --password-cmd is run at each
sync (and each send) and must print it (for example "pass show mail/work").
With --smtp, the account can send (only when a person grants mail:send and
approves each message); the SMTP login uses the same password command.

Flags:
`)
	var cfgPath, imapAddr, user, pwCmd, tlsMode, maildir string
	configPathFlag(fs, &cfgPath)
	fs.StringVar(&imapAddr, "imap", "", "IMAP server as HOST:PORT")
	fs.StringVar(&user, "user", "", "IMAP user name")
	fs.StringVar(&pwCmd, "password-cmd", "", "command that prints the password")
	fs.StringVar(&tlsMode, "tls", "implicit", "implicit (port 993), starttls (port 143) or none (only to this computer)")
	fs.StringVar(&maildir, "maildir", "", "a local Maildir to import, read-only")
	var smtpAddr, smtpTLS, smtpUser, address string
	var aliases multi
	fs.StringVar(&smtpAddr, "smtp", "", "SMTP submission server as HOST:PORT (465: implicit TLS; 587: STARTTLS)")
	fs.StringVar(&smtpTLS, "smtp-tls", "", "implicit, starttls or none (only to this computer); default: implicit on port 465, else starttls")
	fs.StringVar(&smtpUser, "smtp-user", "", "SMTP user name (default: --user)")
	fs.StringVar(&address, "address", "", "your address on this account, the From of what you send (default: --user when it is an address)")
	fs.Var(&aliases, "alias", "another address of yours, never replied to by reply-all; repeatable")
	var trusted multi
	fs.Var(&trusted, "trust-authserv", "authserv-id of your provider's receiving server (e.g. mx.example.com) whose Authentication-Results mark forged mail; repeatable")
	pos, err := splitFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitError{2}
	}
	name := pos[0]
	if err := config.ValidAccountName(name); err != nil {
		return err
	}
	var a config.Account
	switch {
	case imapAddr != "" && maildir != "":
		return fmt.Errorf("give either --imap or --maildir, not both")
	case maildir != "":
		abs, err := filepath.Abs(maildir)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(filepath.Join(abs, "cur")); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a Maildir (it has no cur folder); give the folder that holds cur, new and tmp", abs)
		}
		a = config.Account{Name: name, Kind: "maildir", Path: abs}
	case imapAddr != "":
		host, port, err := net.SplitHostPort(imapAddr)
		if err != nil || host == "" || port == "" {
			return fmt.Errorf("--imap %q must be HOST:PORT, such as imap.example.com:993", imapAddr)
		}
		if user == "" || pwCmd == "" {
			return fmt.Errorf("an IMAP account needs --user and --password-cmd")
		}
		switch tlsMode {
		case "implicit", "starttls":
		case "none":
			ip := net.ParseIP(host)
			if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return fmt.Errorf("--tls none sends your password in clear; it is only allowed to this computer (127.0.0.1, ::1, localhost)")
			}
		default:
			return fmt.Errorf("--tls must be implicit, starttls or none, not %q", tlsMode)
		}
		a = config.Account{Name: name, Kind: "imap", Server: imapAddr, User: user, PasswordCmd: pwCmd, TLS: tlsMode}
	default:
		fs.Usage()
		return exitError{2}
	}
	a.TrustedAuthServ = trusted
	if smtpAddr != "" {
		if a.Kind != "imap" {
			return fmt.Errorf("--smtp needs an IMAP account (the sent copy is saved over IMAP)")
		}
		host, port, err := net.SplitHostPort(smtpAddr)
		if err != nil || host == "" || port == "" {
			return fmt.Errorf("--smtp %q must be HOST:PORT, such as smtp.example.com:465", smtpAddr)
		}
		switch smtpTLS {
		case "", "implicit", "starttls":
		case "none":
			ip := net.ParseIP(host)
			if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				return fmt.Errorf("--smtp-tls none sends your password in clear; it is only allowed to this computer (127.0.0.1, ::1, localhost)")
			}
		default:
			return fmt.Errorf("--smtp-tls must be implicit, starttls or none, not %q", smtpTLS)
		}
		a.SMTP, a.SMTPTLS, a.SMTPUser = smtpAddr, smtpTLS, smtpUser
	} else if smtpTLS != "" || smtpUser != "" {
		return fmt.Errorf("--smtp-tls and --smtp-user need --smtp HOST:PORT")
	}
	if address != "" {
		if _, err := mail.ParseAddress(address); err != nil || strings.ContainsAny(address, "<>, ") {
			return fmt.Errorf("--address %q must be a bare address such as you@example.com", address)
		}
		a.Address = address
	}
	for _, al := range aliases {
		if _, err := mail.ParseAddress(al); err != nil || strings.ContainsAny(al, "<>, ") {
			return fmt.Errorf("--alias %q must be a bare address such as you@example.com", al)
		}
	}
	a.Aliases = aliases
	if err := config.AddAccount(cfgPath, a); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Added account %s (%s). Run postern sync to fetch its mail.\n", termsafe.Line(name), a.Kind)
	return nil
}

func cmdAccountList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("account list", stderr, "Usage: postern account list [--json]\n\nFlags:\n")
	var cfgPath string
	configPathFlag(fs, &cfgPath)
	asJSON := fs.Bool("json", false, "print as JSON")
	if _, err := splitFlags(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	stats := map[string]store.AccountStat{}
	if _, err := os.Stat(storePath()); err == nil {
		if st, err := store.Open(storePath()); err == nil {
			stats, _ = st.AccountStats(context.Background())
			st.Close()
		}
	}
	type row struct {
		Name     string `json:"name"`
		Kind     string `json:"kind"`
		Server   string `json:"server,omitempty"`
		User     string `json:"user,omitempty"`
		TLS      string `json:"tls,omitempty"`
		Path     string `json:"path,omitempty"`
		Address  string `json:"address,omitempty"`
		SMTP     string `json:"smtp,omitempty"`
		SMTPTLS  string `json:"smtp_tls,omitempty"`
		Messages int    `json:"messages"`
		LastSync string `json:"last_sync,omitempty"`
		Error    string `json:"last_error,omitempty"`
	}
	rows := []row{}
	for _, a := range cfg.Accounts {
		r := row{Name: a.Name, Kind: a.Kind, Server: a.Server, User: a.User, TLS: a.TLS, Path: a.Path, Address: a.From()}
		if a.SMTP != "" {
			r.SMTP, r.SMTPTLS = a.SMTP, a.SMTPSecurity()
		}
		if x, ok := stats[a.Name]; ok {
			r.Messages, r.Error = x.Messages, x.LastError
			if !x.LastSync.IsZero() {
				r.LastSync = x.LastSync.Format(time.RFC3339)
			}
		}
		rows = append(rows, r)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "No accounts. Add one with postern account add NAME --imap HOST:PORT --user USER --password-cmd CMD.")
		return nil
	}
	for _, r := range rows {
		where := r.Server + " as " + r.User + " (tls " + r.TLS + ")"
		if r.SMTP != "" {
			where += ", sends via " + r.SMTP + " (" + r.SMTPTLS + ")"
		}
		if r.Kind == "maildir" {
			where = r.Path
		}
		last := "never synced"
		if r.LastSync != "" {
			last = fmt.Sprintf("%d messages, synced %s", r.Messages, r.LastSync)
		}
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", termsafe.Line(r.Name), termsafe.Line(r.Kind), termsafe.Line(where), termsafe.Line(last))
	}
	return nil
}

func cmdAccountRemove(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("account remove", stderr, "Usage: postern account remove NAME\n\nRemove an account from the configuration and its mail from the store.\n\nFlags:\n")
	var cfgPath string
	configPathFlag(fs, &cfgPath)
	pos, err := splitFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitError{2}
	}
	found, err := config.RemoveAccount(cfgPath, pos[0])
	if err != nil {
		return err
	}
	n := 0
	if _, err := os.Stat(storePath()); err == nil {
		st, err := store.Open(storePath())
		if err != nil {
			return err
		}
		defer st.Close()
		lock, err := store.LockWriter(st.Path())
		if err != nil {
			return err
		}
		defer lock.Unlock()
		if n, err = st.RemoveAccount(context.Background(), pos[0]); err != nil {
			return err
		}
	}
	if !found && n == 0 {
		return fmt.Errorf("there is no account named %q; postern account list shows them", pos[0])
	}
	fmt.Fprintf(stdout, "Removed account %s and its %d messages from the store.\n", termsafe.Line(pos[0]), n)
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// syncMemory lets a sync run in more memory than Go's default: the garbage
// collector runs when the heap has grown to five times what is live (Go's
// default: twice), which makes a first sync about a tenth faster for a few
// tens of MiB, and harder again as the process nears 512 MiB. A GOGC or
// GOMEMLIMIT in the environment is left to decide.
func syncMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
}

func cmdSync(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sync", stderr, "Usage: postern sync [--account NAME]\n\nFetch new mail, flag changes and deletions into the local store. Resumable: a\nsync stopped at any moment continues where it stopped. Ctrl-C (SIGINT) or SIGTERM\nstops it within 2 s, keeping what it stored, with exit status 130 or 143.\n\nFlags:\n")
	var cfgPath, only string
	configPathFlag(fs, &cfgPath)
	fs.StringVar(&only, "account", "", "sync only this account")
	quiet := fs.Bool("quiet", false, "print nothing but errors")
	stats := fs.Bool("stats", false, "print the time taken and the peak memory used")
	if _, err := splitFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := interruptContext(stderr)
	defer stop()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	accts := cfg.Accounts
	if only != "" {
		accts = nil
		for _, a := range cfg.Accounts {
			if a.Name == only {
				accts = append(accts, a)
			}
		}
		if len(accts) == 0 {
			return fmt.Errorf("there is no account named %q; postern account list shows them", only)
		}
	}
	if len(accts) == 0 {
		return fmt.Errorf("no account is configured; add one with postern account add")
	}
	syncMemory()
	st, err := openStore(ctx)
	if err != nil {
		var in *interrupted
		if errors.As(err, &in) {
			return in.report(stderr, 0)
		}
		return err
	}
	defer closeStore(ctx, st)
	var opt mailsync.Options
	// POSTERN_SYNC_BATCH sets how many messages are committed at once (default 500).
	if v, err := strconv.Atoi(os.Getenv("POSTERN_SYNC_BATCH")); err == nil && v > 0 {
		opt.BatchSize = v
	}
	tty := isTerminal(stderr) && !*quiet
	opt.Warn = func(msg string) {
		if tty {
			fmt.Fprint(stderr, "\r\033[K") // the progress bar is drawn again on the next batch
		}
		fmt.Fprintln(stderr, "postern: "+termsafe.Line(msg))
	}
	if tty {
		opt.Progress = func(p imapsync.Progress) {
			width := 30
			filled := 0
			if p.Total > 0 {
				filled = width * p.Done / p.Total
			}
			fmt.Fprintf(stderr, "\r\033[K%s/%s [%s%s] %d/%d", termsafe.Line(p.Account), termsafe.Line(p.Folder), strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.Done, p.Total)
		}
	}
	// POSTERN_CPUPROFILE=FILE writes a CPU profile of the sync (for benchmarks).
	if path := os.Getenv("POSTERN_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	start := time.Now()
	outs, err := mailsync.Run(ctx, st, accts, opt)
	if tty {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	failed, stored := 0, 0
	cut := len(outs) < len(accts) // Run stops before the next account when interrupted
	for _, o := range outs {
		stored += o.New
		if o.Interrupted {
			cut = true
			continue
		}
		if o.Error != "" {
			failed++
			fmt.Fprintf(stderr, "postern: %s\n", termsafe.Line(o.Error))
			continue
		}
		if !*quiet {
			fmt.Fprintf(stdout, "%s: %d new, %d gone, %d flag changes, %d folders\n", termsafe.Line(o.Account), o.New, o.Deleted, o.FlagsChanged, o.Folders)
		}
	}
	// A signal that came after every account was done interrupted nothing.
	var in *interrupted
	if errors.As(context.Cause(ctx), &in) && cut {
		return in.report(stderr, stored)
	}
	if failed > 0 {
		return exitError{1}
	}
	if !*quiet {
		fmt.Fprintf(stdout, "Synced %d account(s) in %s.\n", len(outs), time.Since(start).Round(time.Millisecond))
	}
	if *stats {
		fmt.Fprintf(stdout, "stats: %.3f s, peak memory %s\n", time.Since(start).Seconds(), peakMemory())
	}
	return nil
}

// interrupted is the cause of a context ended by a signal.
type interrupted struct {
	sig  syscall.Signal
	once sync.Once // one sentence, from the sync's end or from the grace timer
}

func (i *interrupted) Error() string { return signalName(i.sig) + " received" }

// report says once, in one sentence, that the sync was interrupted and what
// it kept (stored < 0: not counted), and returns the exit status that says by
// which signal: 128 + its number.
func (i *interrupted) report(stderr io.Writer, stored int) error {
	i.once.Do(func() {
		what := ""
		switch {
		case stored == 1:
			what = " (1 new message)"
		case stored >= 0:
			what = fmt.Sprintf(" (%d new messages)", stored)
		}
		fmt.Fprintf(stderr, "postern: sync interrupted by %s; what it stored is kept%s; run postern sync again to continue where it stopped.\n", signalName(i.sig), what)
	})
	return exitError{128 + int(i.sig)}
}

// openStore opens the store, but returns at once when ctx ends: opening can
// take long (an index rebuild after a schema change), and a sync must end
// within 2 s of a signal. The open is then left to the process's exit, which
// SQLite survives as it survives a kill.
func openStore(ctx context.Context) (*store.Store, error) {
	type opened struct {
		st  *store.Store
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		st, err := store.Open(storePath())
		ch <- opened{st, err}
	}()
	select {
	case o := <-ch:
		return o.st, o.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// closeStore closes the store. After a signal it waits at most half a second:
// closing checkpoints the write-ahead log into the database, which a busy disk
// can make last; what was committed is safe in the log either way, and the
// next open finishes the checkpoint.
func closeStore(ctx context.Context, st *store.Store) {
	var in *interrupted
	if !errors.As(context.Cause(ctx), &in) {
		st.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		st.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
}

// stopGrace is how long a sync may take to stop cleanly after a signal.
// Then postern exits anyway, as a kill would (SQLite keeps every committed
// batch, the kernel releases the lock): a commit waiting on a busy disk
// cannot be cut short, and a sync must end within 2 s of the signal.
const stopGrace = 1500 * time.Millisecond

// interruptContext is a context that the first SIGINT or SIGTERM ends, with
// an *interrupted as its cause (signal.NotifyContext's cause does not say
// which signal came, and the exit status does: 130 or 143). The signals then
// get their default action back, so a second one ends postern at once; and
// if stop is not called within stopGrace, postern reports and exits.
func interruptContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	var mu sync.Mutex
	var late *time.Timer
	stopped := false
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			in := &interrupted{sig: s.(syscall.Signal)}
			cancel(in)
			mu.Lock()
			if !stopped {
				late = time.AfterFunc(stopGrace, func() {
					var ee exitError
					errors.As(in.report(stderr, -1), &ee)
					os.Exit(ee.code)
				})
			}
			mu.Unlock()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		mu.Lock()
		stopped = true
		if late != nil {
			late.Stop()
		}
		mu.Unlock()
		signal.Stop(sigs)
		cancel(context.Canceled)
	}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// peakMemory is this process's peak resident memory, as Linux reports it.
func peakMemory() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
		}
	}
	return "unknown"
}

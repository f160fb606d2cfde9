package sync

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	gosync "sync"
	"syscall"
	"time"
)

// Interrupted is the cause of a context a signal ended.
type Interrupted struct {
	Signal syscall.Signal
	once   gosync.Once // one sentence, from the sync's end or from the grace timer
}

func (i *Interrupted) Error() string { return signalName(i.Signal) + " received" }

// Report says once on w, in one sentence, that the sync was interrupted and what it kept
// (stored < 0: not counted), and returns the exit status that says by which signal: 128 +
// its number.
func (i *Interrupted) Report(w io.Writer, stored int) int {
	i.once.Do(func() {
		what := ""
		switch {
		case stored == 1:
			what = " (1 new message)"
		case stored >= 0:
			what = fmt.Sprintf(" (%d new messages)", stored)
		}
		fmt.Fprintf(w, "postern: sync interrupted by %s; what it stored is kept%s; run postern sync again to continue where it stopped.\n", signalName(i.Signal), what)
	})
	return 128 + int(i.Signal)
}

// StopGrace is how long a sync may take to stop cleanly after a signal. Then postern exits
// anyway, as a kill would (SQLite keeps every committed batch, the kernel releases the lock):
// a commit waiting on a busy disk cannot be cut short, and a sync must end within 2 s of the
// signal.
const StopGrace = 1500 * time.Millisecond

// OnSignal is a context that the first SIGINT or SIGTERM ends, with an *Interrupted as its
// cause (signal.NotifyContext's cause does not say which signal came, and the exit status
// does: 130 or 143). The signals then get their default action back, so a second one ends
// the process at once; and if stop is not called within StopGrace, the interruption is
// reported on w and exit is called with its status.
func OnSignal(w io.Writer, exit func(code int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	var mu gosync.Mutex
	var late *time.Timer
	stopped := false
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			in := &Interrupted{Signal: s.(syscall.Signal)}
			cancel(in)
			mu.Lock()
			if !stopped {
				late = time.AfterFunc(StopGrace, func() { exit(in.Report(w, -1)) })
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

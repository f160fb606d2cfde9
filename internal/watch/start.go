package watch

import (
	"context"
	"time"
)

// Start runs the loop in the background, as postern mcp does beside its server. stop ends it
// and waits for it at most grace; it reports whether the loop ended in that time (else the
// process's exit ends it, as a kill would).
func Start(o Options, grace time.Duration) (stop func() (ended bool)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, o)
	}()
	return func() bool {
		cancel()
		select {
		case <-done:
			return true
		case <-time.After(grace):
			return false
		}
	}
}

// RunFor runs the loop until ctx ends (postern watch, until a signal); when the loop has not
// ended grace after ctx did (a commit on a busy disk), late is called, which exits.
func RunFor(ctx context.Context, o Options, grace time.Duration, late func()) {
	done := make(chan struct{})
	go func() {
		<-ctx.Done()
		select {
		case <-done:
		case <-time.After(grace):
			late()
		}
	}()
	Run(ctx, o)
	close(done)
}

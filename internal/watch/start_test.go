package watch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
)

// Start syncs in the background until stopped, and stop says the loop ended within the wait.
func TestStartStops(t *testing.T) {
	md := maildir(t, 2)
	h := newHarness(t, time.Hour, config.Account{Name: "home", Kind: "maildir", Path: md})
	stop := Start(h.options(), 2*time.Second)
	h.waitFor("the first sync's report", 3*time.Second, func() bool { return h.logged("account home: 2 new, 0 gone") == 1 })
	if !stop() {
		t.Fatal("the loop did not end within the wait")
	}
}

// RunFor returns when ctx ends, without calling late when the loop ends in time.
func TestRunForEndsWithCtx(t *testing.T) {
	h := newHarness(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	var late atomic.Bool
	done := make(chan struct{})
	go func() {
		RunFor(ctx, h.options(), time.Second, func() { late.Store(true) })
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("RunFor did not return after ctx ended")
	}
	time.Sleep(1100 * time.Millisecond)
	if late.Load() {
		t.Fatal("late was called though the loop ended in time")
	}
}

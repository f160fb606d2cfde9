package audit

import (
	"sync"
	"time"
)

// Delay is how long a queued line may wait before a timer writes it. A
// process killed with SIGKILL loses at most the lines of this last span.
const Delay = 50 * time.Millisecond

// maxQueued bounds the lines queued before the Add that fills the queue
// writes them itself.
const maxQueued = 512

// Batch queues the lines of calls and writes them to a Log together.
//
// A call only queues its line, as a function that makes the entry: the
// summarising runs when the line is written, off the call's path. Lines are
// written by Flush, which the server calls right after answering a call that
// changed something, or at most Delay after the first of them was queued, by
// a timer goroutine: a write per call would cost each call a system call on
// the reading path, and a goroutine woken per call costs more than the call
// itself. Close writes what is still queued.
//
// The methods of a nil *Batch do nothing.
type Batch struct {
	log    *Log
	report func(error) // told when lines cannot be written

	mu    sync.Mutex // guards queue and armed, and serialises writing the queue
	queue []func() Entry
	armed bool // a timer will flush the queue
}

// NewBatch returns a batch writing to log; report is told of every write that
// fails (nil: nobody is).
func NewBatch(log *Log, report func(error)) *Batch {
	if report == nil {
		report = func(error) {}
	}
	return &Batch{log: log, report: report}
}

// Add queues the line that entry makes, and arranges for it to be written.
func (b *Batch) Add(entry func() Entry) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.queue = append(b.queue, entry)
	full := len(b.queue) >= maxQueued
	if !full && !b.armed {
		b.armed = true
		time.AfterFunc(Delay, b.Flush)
	}
	b.mu.Unlock()
	if full {
		b.Flush()
	}
}

// Flush writes every queued line, oldest first.
func (b *Batch) Flush() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	if len(b.queue) == 0 {
		return
	}
	es := make([]Entry, len(b.queue))
	for i, entry := range b.queue {
		es[i] = entry()
		b.queue[i] = nil
	}
	b.queue = b.queue[:0]
	if err := b.log.WriteAll(es); err != nil {
		b.report(err)
	}
}

// Close writes every line still queued. Call it when no more lines come.
func (b *Batch) Close() { b.Flush() }

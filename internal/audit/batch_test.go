package audit

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestBatch: a queued line is made and written only when the batch is
// flushed, by Flush or by the timer within about Delay, oldest first; a
// full queue is written by the Add that fills it.
func TestBatch(t *testing.T) {
	state := t.TempDir()
	b := NewBatch(Open(state, fixed(day)), nil)
	var made atomic.Int32
	add := func(tool string) {
		b.Add(func() Entry { made.Add(1); return Entry{Time: day, Tool: tool, OK: true} })
	}
	add("first")
	add("second")
	if made.Load() != 0 {
		t.Fatal("a line was made before the batch was flushed")
	}
	b.Flush()
	got := lines(t, state, "2026-11")
	if len(got) != 2 || got[0]["tool"] != "first" || got[1]["tool"] != "second" {
		t.Fatalf("after Flush: %v", got)
	}
	add("third")
	deadline := time.Now().Add(20 * Delay)
	for len(lines(t, state, "2026-11")) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the timer did not write the queued line within %v", 20*Delay)
		}
		time.Sleep(Delay / 5)
	}
	for i := range maxQueued {
		add("bulk" + strconv.Itoa(i))
	}
	if got := lines(t, state, "2026-11"); len(got) != 3+maxQueued || got[len(got)-1]["tool"] != "bulk"+strconv.Itoa(maxQueued-1) {
		t.Fatalf("a full queue was not written by its last Add: %d lines", len(got))
	}
	b.Close()
}

// TestBatchReports: a line that cannot be written is reported, and a nil
// batch does nothing.
func TestBatchReports(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "audit"), nil, 0o600); err != nil {
		t.Fatal(err) // a file where the folder should be
	}
	var reported error
	b := NewBatch(Open(state, fixed(day)), func(err error) { reported = err })
	b.Add(func() Entry { return Entry{Time: day, Tool: "status"} })
	b.Flush()
	if reported == nil {
		t.Fatal("a failed write was not reported")
	}
	var none *Batch
	none.Add(func() Entry { panic("made") })
	none.Flush()
	none.Close()
}

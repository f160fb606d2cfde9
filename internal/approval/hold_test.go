package approval

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestQueueDecisions: a held action is listed with a code; approving or
// declining it by that code ends the wait with that answer; its files go.
func TestQueueDecisions(t *testing.T) {
	for _, yes := range []bool{true, false} {
		q := &Queue{Dir: filepath.Join(t.TempDir(), "approvals"), Poll: 5 * time.Millisecond}
		h, err := q.Put(Held{Tool: "mail_send_commit", Account: "work", Text: "Send a message", Expires: time.Now().Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(q.Dir); st.Mode().Perm() != 0o700 {
			t.Fatalf("folder mode %v", st.Mode().Perm())
		}
		if st, _ := os.Stat(filepath.Join(q.Dir, h.Code+".json")); st.Mode().Perm() != 0o600 {
			t.Fatalf("file mode %v", st.Mode().Perm())
		}
		list, _ := q.List()
		if len(list) != 1 || list[0].Code != h.Code || len(h.Code) != 6 {
			t.Fatalf("listed %+v", list)
		}
		type result struct{ approved, decided bool }
		done := make(chan result)
		go func() {
			a, d := q.Wait(h, nil)
			done <- result{a, d}
		}()
		if err := q.Decide(h.Code, yes); err != nil {
			t.Fatal(err)
		}
		if r := <-done; r.approved != yes || !r.decided {
			t.Fatalf("decided %v, wait returned %+v", yes, r)
		}
		if list, _ := q.List(); len(list) != 0 {
			t.Fatalf("still listed after the wait: %+v", list)
		}
		if err := q.Decide(h.Code, true); err != ErrNoSuchCode {
			t.Fatalf("decided an ended action: %v", err)
		}
	}
}

// TestQueueStaleDecision: a decision file left under a code (by an earlier
// action, or written by hand without the nonce) approves nothing.
func TestQueueStaleDecision(t *testing.T) {
	q := &Queue{Dir: t.TempDir(), Poll: 5 * time.Millisecond}
	h, err := q.Put(Held{Tool: "mail_send_commit", Expires: time.Now().Add(80 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(q.Dir, h.Code+".yes"), []byte("not-the-nonce\n"), 0o600)
	approved, decided := q.Wait(h, nil)
	if approved || decided {
		t.Fatalf("a forged decision was taken: approved=%v decided=%v", approved, decided)
	}
}

// TestQueueEnds: the wait ends undecided at the expiry or when done closes,
// and the action of a server that is gone is not listed.
func TestQueueEnds(t *testing.T) {
	q := &Queue{Dir: t.TempDir(), Poll: 5 * time.Millisecond}
	h, _ := q.Put(Held{Expires: time.Now().Add(time.Hour)})
	done := make(chan struct{})
	close(done)
	if a, d := q.Wait(h, done); a || d {
		t.Fatal("a cancelled wait approved")
	}
	h2, _ := q.Put(Held{Expires: time.Now().Add(time.Hour)})
	b, _ := os.ReadFile(filepath.Join(q.Dir, h2.Code+".json"))
	// A server that is gone: pid 1<<22 does not exist.
	os.WriteFile(filepath.Join(q.Dir, h2.Code+".json"), []byte(replacePID(string(b), h2.PID)), 0o600)
	if list, _ := q.List(); len(list) != 0 {
		t.Fatalf("a dead server's action is listed: %+v", list)
	}
	if _, err := q.Get(h2.Code); err != ErrNoSuchCode {
		t.Fatalf("a dead server's action can be decided: %v", err)
	}
	if _, err := q.Get("../../etc"); err != ErrNoSuchCode {
		t.Fatal("a path was taken for a code")
	}
}

func replacePID(s string, pid int) string {
	return strings.Replace(s, `"pid": `+strconv.Itoa(pid), `"pid": 4194304`, 1)
}

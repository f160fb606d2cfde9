package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// peer is the other end of a Conn: it reads what the Conn sends, one line at a time.
type peer struct {
	t    *testing.T
	conn *Conn
	r    *Reader
}

func newPeer(t *testing.T) *peer {
	pr, pw := io.Pipe()
	t.Cleanup(func() { pr.Close() })
	return &peer{t: t, conn: NewConn(pw, "q-"), r: NewReader(pr)}
}

// next reads the next message the Conn sent.
func (p *peer) next() *Message {
	p.t.Helper()
	l, err := p.r.Next()
	if err != nil {
		p.t.Fatal(err)
	}
	m, perr := Parse(l)
	if perr != nil {
		p.t.Fatalf("%s: %v", l, perr)
	}
	return m
}

// answer hands the Conn a response as its reader would.
func (p *peer) answer(line string) bool {
	p.t.Helper()
	m, perr := Parse([]byte(line))
	if perr != nil {
		p.t.Fatalf("%s: %v", line, perr)
	}
	return p.conn.Deliver(m)
}

type outcome struct {
	m   *Message
	err error
}

func (p *peer) call(ctx context.Context, method string) chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		m, err := p.conn.Call(ctx, method, map[string]string{"m": method})
		ch <- outcome{m, err}
	}()
	return ch
}

func wait(t *testing.T, ch chan outcome) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not return")
		return outcome{}
	}
}

// TestCallsMatchedByID: two calls answered in the other order each get their
// own answer; an id written with an escape is the same id; answers nobody
// waits for are dropped.
func TestCallsMatchedByID(t *testing.T) {
	p := newPeer(t)
	a := p.call(context.Background(), "a")
	ra := p.next()
	b := p.call(context.Background(), "b")
	rb := p.next()
	if ra.Method != "a" || rb.Method != "b" || string(ra.ID) == string(rb.ID) || !strings.HasPrefix(string(ra.ID), `"q-`) {
		t.Fatalf("requests %s %s / %s %s", ra.Method, ra.ID, rb.Method, rb.ID)
	}
	if string(ra.Params) != `{"m":"a"}` {
		t.Fatalf("params %s", ra.Params)
	}
	if p.answer(`{"jsonrpc":"2.0","id":"nobody","result":{}}`) {
		t.Fatal("an answer to no call was delivered")
	}
	// rb's id, its "-" written as \u002d.
	escaped := strings.Replace(string(rb.ID), "-", `\u002d`, 1)
	if !p.answer(`{"jsonrpc":"2.0","id":` + escaped + `,"error":{"code":-1,"message":"no"}}`) {
		t.Fatal("b's answer was not delivered")
	}
	if !p.answer(`{"jsonrpc":"2.0","id":` + string(ra.ID) + `,"result":{"for":"a"}}`) {
		t.Fatal("a's answer was not delivered")
	}
	if oa := wait(t, a); oa.err != nil || string(oa.m.Result) != `{"for":"a"}` {
		t.Fatalf("a got %+v", oa)
	}
	if ob := wait(t, b); ob.err != nil || ob.m.Error == nil || ob.m.Error.Message != "no" {
		t.Fatalf("b got %+v", ob)
	}
	// A second answer to a call already answered is dropped.
	if p.answer(`{"jsonrpc":"2.0","id":` + string(ra.ID) + `,"result":{}}`) {
		t.Fatal("a late duplicate answer was delivered")
	}
	// A number id is not the string of its digits.
	if p.answer(`{"jsonrpc":"2.0","id":1,"result":{}}`) {
		t.Fatal("a number id matched a string id")
	}
}

// TestCloseFailsWaitingCalls: Close ends every waiting call with ErrClosed,
// and a later call fails at once without sending anything.
func TestCloseFailsWaitingCalls(t *testing.T) {
	p := newPeer(t)
	var calls []chan outcome
	for i := 0; i < 3; i++ {
		calls = append(calls, p.call(context.Background(), fmt.Sprint(i)))
		p.next()
	}
	p.conn.Close()
	p.conn.Close() // harmless
	for i, c := range calls {
		if o := wait(t, c); !errors.Is(o.err, ErrClosed) {
			t.Fatalf("call %d: %+v", i, o)
		}
	}
	if _, err := p.conn.Call(context.Background(), "late", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after Close: %v", err)
	}
	// Answers still go out after Close.
	done := make(chan error, 1)
	go func() { done <- p.conn.Send([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)) }()
	if m := p.next(); !m.IsResponse() {
		t.Fatalf("got %+v", m)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCallContext: a call whose context ends returns its cause, and its late
// answer is dropped.
func TestCallContext(t *testing.T) {
	p := newPeer(t)
	stop := errors.New("stopped")
	ctx, cancel := context.WithCancelCause(context.Background())
	c := p.call(ctx, "slow")
	req := p.next()
	cancel(stop)
	if o := wait(t, c); !errors.Is(o.err, stop) {
		t.Fatalf("got %+v", o)
	}
	if p.answer(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}`) {
		t.Fatal("the answer to a given-up call was delivered")
	}
}

// TestSendWholeLines: messages sent from many goroutines arrive whole, one a line.
func TestSendWholeLines(t *testing.T) {
	pr, pw := io.Pipe()
	c := NewConn(pw, "q-")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Notify("n", map[string]string{"pad": strings.Repeat(fmt.Sprint(i%10), 5000)})
		}()
	}
	go func() { wg.Wait(); pw.Close() }()
	r := NewReader(pr)
	n := 0
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		var m struct {
			Params struct{ Pad string } `json:"params"`
		}
		if err != nil || json.Unmarshal(l, &m) != nil || len(m.Params.Pad) != 5000 || strings.Trim(m.Params.Pad, m.Params.Pad[:1]) != "" {
			t.Fatalf("a broken line (%v): %.80s", err, l)
		}
		n++
	}
	if n != 20 {
		t.Fatalf("%d lines, want 20", n)
	}
}

package mcphttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/internal/jsonrpc"
	"github.com/postern-mcp/postern/internal/mcp"
)

// A session is one mcp.Server serving as it does on standard input and output: what a POST
// carries is written to its input as one line, and every line it writes is routed to the
// HTTP stream it belongs to (router below). A legacy session lives from initialize to DELETE;
// a stateless (2026-07-28) request gets a session of its own that ends with the request.
type session struct {
	id        string // "" for a stateless request
	stateless bool
	srv       *mcp.Server
	inMu      sync.Mutex
	in        *io.PipeWriter
	done      chan struct{} // Serve returned
	stderr    io.Writer
	failInit  func() // the initialize was refused: forget the session

	mu      sync.Mutex
	partial []byte             // the start of a line not yet ended
	pending map[string]*stream // by the key of the id of the request it waits to answer
	batches []*stream          // streams waiting for a batch's answer, oldest first
	calls   []*stream          // streams of a tools/call, newest last: where an approval is asked
	getSt   *stream            // the GET stream, or nil
	used    time.Time
}

// out is one line for a stream; answer says it is the answer the stream waits for.
type out struct {
	line   []byte
	answer bool
}

// stream is one HTTP response that messages are routed to.
type stream struct {
	msgs chan out
	gone chan struct{} // closed when the response is finished
}

func newStream(n int) *stream { return &stream{msgs: make(chan out, n), gone: make(chan struct{})} }

// startSession starts a server for a legacy session (a random id) or a stateless request.
func startSession(opt mcp.Options, stderr io.Writer) *session {
	return runSession(&session{id: randomID()}, opt, stderr)
}

func runSession(s *session, opt mcp.Options, stderr io.Writer) *session {
	s.done, s.stderr, s.pending, s.used = make(chan struct{}), stderr, map[string]*stream{}, time.Now()
	s.srv = mcp.New(opt)
	pr, pw := io.Pipe()
	s.in = pw
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(context.Background(), pr, s); err != nil {
			fmt.Fprintf(stderr, "postern: an HTTP session ended: %v\n", err)
		}
	}()
	return s
}

func (s *session) touch() {
	s.mu.Lock()
	s.used = time.Now()
	s.mu.Unlock()
}

// idleSince is how long the session has had no request and no GET stream.
func (s *session) idleSince() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.getSt != nil || len(s.pending) > 0 || len(s.batches) > 0 {
		return 0
	}
	return time.Since(s.used)
}

// end closes the server's input; it answers what is due and returns.
func (s *session) end() {
	s.inMu.Lock()
	s.in.Close()
	s.inMu.Unlock()
}

// send writes one line to the server's input.
func (s *session) send(line []byte) error {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	_, err := s.in.Write(append(append([]byte(nil), line...), '\n'))
	return err
}

// Write receives what the server writes, whole lines or parts, and routes each line.
func (s *session) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.partial = append(s.partial, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, append([]byte(nil), s.partial[:i]...))
		s.partial = s.partial[i+1:]
	}
	s.mu.Unlock()
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) > 0 {
			s.route(l)
		}
	}
	return len(p), nil
}

// route hands one line of the server to its stream: an answer to the request's, a batch's
// answer (or its refusal, which has a null id) to the oldest batch's, a request of the server
// (an approval asked, elicitation/create) to the newest tools/call's, a notification to the
// GET stream (on a stateless request, to the request's own stream: subscriptions/listen).
func (s *session) route(line []byte) {
	var st *stream
	answer := false
	v := gjson.ParseBytes(line)
	s.mu.Lock()
	switch {
	case v.IsArray(), v.Get("id").Type == gjson.Null && !v.Get("method").Exists():
		answer = true
		if len(s.batches) > 0 {
			st, s.batches = s.batches[0], s.batches[1:]
		}
	case !v.Get("method").Exists(): // an answer
		answer = true
		key := idKey([]byte(v.Get("id").Raw))
		st = s.pending[key]
		delete(s.pending, key)
	case v.Get("id").Exists(): // a request of the server
		if n := len(s.calls); n > 0 {
			st = s.calls[n-1]
		} else {
			st = s.getSt
		}
		if st == nil {
			id := v.Get("id").Raw
			s.mu.Unlock()
			// Nowhere to ask: the server is told at once rather than waiting for an answer.
			go s.send(jsonrpc.EncodeError([]byte(id), jsonrpc.NewError(jsonrpc.CodeInternalError, "no stream is open to ask the person through; call again with Accept: "+mimeSSE)))
			return
		}
	default: // a notification
		st = s.getSt
		if s.stateless {
			for _, p := range s.pending {
				st = p
			}
		}
		if st == nil {
			s.mu.Unlock()
			return // no stream to tell; a notification is a hint, and a later list is current
		}
		if st == s.getSt {
			s.mu.Unlock()
			select { // the GET stream never holds the server up
			case st.msgs <- out{line: line}:
			case <-st.gone:
			default:
			}
			return
		}
	}
	s.mu.Unlock()
	if st == nil {
		return // an answer no one waits for any more
	}
	select {
	case st.msgs <- out{line: line, answer: answer}:
	case <-st.gone:
	}
}

// post writes a POST's message to the server and answers with what comes back for it.
func (s *session) post(w http.ResponseWriter, r *http.Request, b *body) {
	s.touch()
	if len(b.ids) == 0 { // notifications and answers: nothing comes back
		if err := s.send(b.line); err != nil {
			httpError(w, http.StatusNotFound, "Not found: the session "+s.id+" ended; send initialize without "+hSession+" to start a new one")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	st := newStream(16)
	defer close(st.gone)
	s.mu.Lock()
	if b.batch {
		s.batches = append(s.batches, st)
	} else {
		if _, dup := s.pending[b.ids[0]]; dup {
			s.mu.Unlock()
			rpcError(w, http.StatusBadRequest, b.msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: a request with this id is still being answered; use another id"))
			return
		}
		s.pending[b.ids[0]] = st
		if b.method == "tools/call" {
			s.calls = append(s.calls, st)
		}
	}
	s.mu.Unlock()
	defer s.forget(st, b)
	if err := s.send(b.line); err != nil {
		httpError(w, http.StatusNotFound, "Not found: the session "+s.id+" ended; send initialize without "+hSession+" to start a new one")
		return
	}
	rep := &reply{w: w, canSSE: accepts(r, mimeSSE), session: s.id, errStatus: b.errStatus}
	for {
		select {
		case o := <-st.msgs:
			if !o.answer && !rep.sse && !rep.canSSE {
				s.divert(o.line)
				continue
			}
			if o.answer && b.method == "initialize" && gjson.GetBytes(o.line, "error").Exists() && s.failInit != nil {
				rep.session = "" // no session was made: the next initialize starts afresh
				s.failInit()
			}
			rep.write(o)
			if o.answer {
				return
			}
		case <-r.Context().Done():
			return // the client left; what the server still answers is dropped
		case <-s.done:
			// What the server wrote before it ended is still to be sent: select picks among
			// ready cases at random, so the answer may be waiting beside the end.
			for {
				select {
				case o := <-st.msgs:
					if !o.answer && !rep.sse && !rep.canSSE {
						continue
					}
					rep.write(o)
					if o.answer {
						return
					}
					continue
				default:
				}
				break
			}
			if !rep.started {
				httpError(w, http.StatusNotFound, "Not found: the session ended before the answer came; send initialize without "+hSession+" to start a new one")
			}
			return
		}
	}
}

// forget removes st from the routing tables.
func (s *session) forget(st *stream, b *body) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !b.batch && s.pending[b.ids[0]] == st {
		delete(s.pending, b.ids[0])
	}
	s.batches = without(s.batches, st)
	s.calls = without(s.calls, st)
	s.used = time.Now()
}

func without(list []*stream, st *stream) []*stream {
	out := list[:0]
	for _, x := range list {
		if x != st {
			out = append(out, x)
		}
	}
	return out
}

// divert sends a message meant for a response that cannot stream to where it can still go:
// a notification to the GET stream, a request of the server back to it as an error.
func (s *session) divert(line []byte) {
	v := gjson.ParseBytes(line)
	if id := v.Get("id"); id.Exists() {
		go s.send(jsonrpc.EncodeError([]byte(id.Raw), jsonrpc.NewError(jsonrpc.CodeInternalError, "the client does not accept "+mimeSSE+", so the person cannot be asked on this request")))
		return
	}
	s.mu.Lock()
	g := s.getSt
	s.mu.Unlock()
	if g != nil {
		select {
		case g.msgs <- out{line: line}:
		default:
		}
	}
}

// listen serves the session's GET stream: the notifications no request asked for.
func (s *session) listen(w http.ResponseWriter, r *http.Request) {
	st := newStream(64)
	s.mu.Lock()
	if s.getSt != nil {
		s.mu.Unlock()
		httpError(w, http.StatusConflict, "Conflict: this session already has a GET stream open; use that one")
		return
	}
	s.getSt = st
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.getSt == st {
			s.getSt = nil
		}
		s.used = time.Now()
		s.mu.Unlock()
		close(st.gone)
	}()
	rep := &reply{w: w, canSSE: true, session: s.id}
	rep.startSSE()
	keep := time.NewTicker(25 * time.Second)
	defer keep.Stop()
	for {
		select {
		case o := <-st.msgs:
			rep.write(o)
		case <-keep.C:
			rep.comment()
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// reply writes one HTTP response: JSON when only the answer comes, else an SSE stream
// begun at the first message that is not the answer.
type reply struct {
	w            http.ResponseWriter
	canSSE       bool
	session      string
	sse, started bool
	errStatus    func(code int64) int // the HTTP status of an error answer; nil: 200
}

func (p *reply) startSSE() {
	h := p.w.Header()
	h.Set("Content-Type", mimeSSE)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if p.session != "" {
		h.Set(hSession, p.session)
	}
	p.w.WriteHeader(http.StatusOK)
	p.sse, p.started = true, true
	flush(p.w)
}

func (p *reply) write(o out) {
	if !p.sse && !o.answer {
		p.startSSE()
	}
	if p.sse {
		fmt.Fprintf(p.w, "event: message\ndata: %s\n\n", o.line)
		flush(p.w)
		return
	}
	h := p.w.Header()
	h.Set("Content-Type", mimeJSON)
	if p.session != "" {
		h.Set(hSession, p.session)
	}
	status := http.StatusOK
	if e := gjson.GetBytes(o.line, "error.code"); p.errStatus != nil && e.Exists() {
		status = p.errStatus(e.Int())
	}
	p.w.WriteHeader(status)
	p.started = true
	p.w.Write(append(o.line, '\n'))
}

// comment keeps an idle stream open through proxies.
func (p *reply) comment() {
	fmt.Fprint(p.w, ": keep-alive\n\n")
	flush(p.w)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

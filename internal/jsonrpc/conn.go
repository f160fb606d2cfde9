package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/tidwall/gjson"
)

// ErrClosed is returned to a call still waiting when its connection closes.
var ErrClosed = errors.New("the connection closed before the answer came")

// Conn is the sending side of one connection: it writes whole messages, one at
// a time, and matches each response its reader hands to Deliver to the Call
// waiting for it, by id. The reading loop stays with the caller, which decides
// what every other message means.
type Conn struct {
	wmu sync.Mutex
	w   *Writer

	mu      sync.Mutex
	prefix  string
	seq     int
	pending map[string]chan *Message
	closed  error
}

// NewConn writes to w. Its requests have string ids: idPrefix and a sequence number.
func NewConn(w io.Writer, idPrefix string) *Conn {
	return &Conn{w: NewWriter(w), prefix: idPrefix, pending: map[string]chan *Message{}}
}

// Send writes one encoded message and flushes it.
func (c *Conn) Send(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.w.WriteLine(msg); err != nil {
		return err
	}
	return c.w.Flush()
}

// Flush writes anything still buffered.
func (c *Conn) Flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.w.Flush()
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	b, err := EncodeNotification(method, params)
	if err != nil {
		return err
	}
	return c.Send(b)
}

// Call sends a request and waits for its response, which it returns whether it
// holds a result or an error. It returns an error when the request could not
// be sent, when ctx ends first (context.Cause(ctx)), or ErrClosed when the
// connection closes first.
func (c *Conn) Call(ctx context.Context, method string, params any) (*Message, error) {
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return nil, c.closed
	}
	c.seq++
	id := json.RawMessage(strconv.Quote(c.prefix + strconv.Itoa(c.seq)))
	key := idKey(gjson.ParseBytes(id))
	ch := make(chan *Message, 1)
	c.pending[key] = ch
	c.mu.Unlock()
	defer c.forget(key)

	b, err := EncodeRequest(id, method, params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", method, err)
	}
	if err := c.Send(b); err != nil {
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, c.closeErr()
		}
		return m, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (c *Conn) forget(key string) {
	c.mu.Lock()
	delete(c.pending, key)
	c.mu.Unlock()
}

func (c *Conn) closeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Deliver hands a response to the Call waiting for it and reports whether one
// was; a response nobody waits for (late, or never asked) is dropped.
func (c *Conn) Deliver(m *Message) bool {
	if !m.IsResponse() || m.ID == nil {
		return false
	}
	key := idKey(gjson.ParseBytes(m.ID))
	c.mu.Lock()
	ch := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- m // buffered: never blocks
	return true
}

// Close fails every Call waiting and every later one with ErrClosed; it does
// not close the writer, so answers still due can be sent. Calling it again is harmless.
func (c *Conn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		return
	}
	c.closed = ErrClosed
	for key, ch := range c.pending {
		close(ch)
		delete(c.pending, key)
	}
}

// idKey names an id by its value, so that "a" and "\u0061" are one id and 1 and "1" two.
func idKey(id gjson.Result) string {
	if id.Type == gjson.String {
		return "s" + id.Str
	}
	return "n" + id.Raw
}

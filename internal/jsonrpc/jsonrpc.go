// Package jsonrpc owns JSON-RPC 2.0 framing over a line stream: reading one
// message per line (bounded, UTF-8 checked), parsing envelopes and writing
// responses. It knows nothing of MCP and never writes anything but JSON-RPC.
package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// MaxLine is the longest line accepted; a longer one is answered with a parse error.
const MaxLine = 8 << 20

// Standard JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Errorf-like constructors.
func NewError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// ErrLineTooLong and ErrNotUTF8 are returned by Reader.Next for a line that is
// skipped; the caller answers it with a parse error and reads on.
var (
	ErrLineTooLong = errors.New("the message is longer than 8 MiB")
	ErrNotUTF8     = errors.New("the message is not valid UTF-8")
)

// Reader reads newline-delimited messages.
type Reader struct {
	br  *bufio.Reader
	buf []byte
}

// NewReader reads from r.
func NewReader(r io.Reader) *Reader { return newReaderSize(r, 64<<10) }

// newReaderSize lets tests use a small buffer, so that lines cross it.
func newReaderSize(r io.Reader, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size)}
}

// Next returns the next non-empty line without its line ending. The slice is
// valid until the next call. At the end of input it returns io.EOF; a line over
// MaxLine or not valid UTF-8 returns ErrLineTooLong or ErrNotUTF8 and is skipped.
func (r *Reader) Next() ([]byte, error) {
	for {
		line, err := r.readLine()
		if err != nil && !(err == io.EOF && len(line) > 0) {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue
		}
		if !utf8.Valid(line) {
			return nil, ErrNotUTF8
		}
		return line, nil
	}
}

func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(chunk) > MaxLine+1 { // +1: the newline itself
			// Drop the rest of this line, then report it.
			for err == bufio.ErrBufferFull {
				_, err = r.br.ReadSlice('\n')
			}
			r.buf = r.buf[:0]
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, ErrLineTooLong
		}
		switch err {
		case nil:
			if len(r.buf) == 0 {
				return chunk[:len(chunk)-1], nil // fast path: the whole line fit the buffer
			}
			r.buf = append(r.buf, chunk[:len(chunk)-1]...)
			return r.buf, nil
		case bufio.ErrBufferFull:
			r.buf = append(r.buf, chunk...)
		case io.EOF:
			if len(r.buf)+len(chunk) > MaxLine { // no newline to allow for
				r.buf = r.buf[:0]
				return nil, ErrLineTooLong
			}
			r.buf = append(r.buf, chunk...)
			return r.buf, io.EOF
		default:
			return nil, err
		}
	}
}

// Message is one parsed JSON-RPC message (request, notification or response).
type Message struct {
	Raw    []byte          // the whole message
	ID     json.RawMessage // nil for a notification
	Method string
	Params gjson.Result // params, or a non-existent result

	// Members of an object params every method may look at, read in the
	// same pass as the envelope (non-existent results when absent).
	Meta, Name, Arguments gjson.Result
}

// IsNotification reports whether the message has no id.
func (m *Message) IsNotification() bool { return m.ID == nil }

// Parse reads the envelope of one message (not an array). It returns a
// JSON-RPC error for anything that is not a valid request or notification,
// and the id when one could be read, so the error can be answered.
func Parse(b []byte) (*Message, *Error) {
	if !gjson.ValidBytes(b) {
		return nil, NewError(CodeParseError, "Parse error: the line is not valid JSON; send one JSON-RPC message per line")
	}
	root := gjson.ParseBytes(b)
	if !root.IsObject() {
		return nil, NewError(CodeInvalidRequest, "Invalid Request: a message must be a JSON object")
	}
	m := &Message{Raw: b}
	var idRes, verRes, methRes gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			idRes = v
		case "jsonrpc":
			verRes = v
		case "method":
			methRes = v
		case "params":
			m.Params = v
		}
		return true
	})
	if idRes.Exists() {
		switch idRes.Type {
		case gjson.String, gjson.Number:
			m.ID = json.RawMessage(idRes.Raw)
		default:
			return m, NewError(CodeInvalidRequest, "Invalid Request: id must be a string or a number")
		}
	}
	if verRes.Type != gjson.String || verRes.Str != "2.0" {
		return m, NewError(CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if !methRes.Exists() {
		if root.Get("result").Exists() || root.Get("error").Exists() {
			return m, NewError(CodeInvalidRequest, "Invalid Request: this server sends no requests, so it takes no responses")
		}
		return m, NewError(CodeInvalidRequest, `Invalid Request: "method" is missing`)
	}
	if methRes.Type != gjson.String {
		return m, NewError(CodeInvalidRequest, `Invalid Request: "method" must be a string`)
	}
	m.Method = methRes.Str
	if m.Params.Type == gjson.Null {
		m.Params = gjson.Result{} // "params": null is taken as absent
	}
	if m.Params.Exists() && !m.Params.IsObject() && !m.Params.IsArray() {
		return m, NewError(CodeInvalidRequest, `Invalid Request: "params" must be an object`)
	}
	if m.Params.IsObject() {
		m.Params.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "_meta":
				m.Meta = v
			case "name":
				m.Name = v
			case "arguments":
				m.Arguments = v
			}
			return true
		})
	}
	return m, nil
}

// Writer writes messages, one per line, safely from several goroutines.
type Writer struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 64<<10)} }

var nullID = json.RawMessage("null")

// AppendResult appends a success response (no newline) to dst.
func AppendResult(dst []byte, id json.RawMessage, result json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends an error response (no newline) to dst.
func AppendError(dst []byte, id json.RawMessage, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	msg, _ := json.Marshal(e.Message)
	dst = append(dst, msg...)
	if e.Data != nil {
		data, err := json.Marshal(e.Data)
		if err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, "}}"...)
}

// WriteLine writes one already-encoded message and a newline. It does not flush.
func (w *Writer) WriteLine(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.w.Write(msg); err != nil {
		return err
	}
	return w.w.WriteByte('\n')
}

// WriteResult writes a success response.
func (w *Writer) WriteResult(id, result json.RawMessage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = AppendResult(w.buf[:0], id, result)
	w.buf = append(w.buf, '\n')
	_, err := w.w.Write(w.buf)
	return err
}

// WriteError writes an error response; a nil id is written as null.
func (w *Writer) WriteError(id json.RawMessage, e *Error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = AppendError(w.buf[:0], id, e)
	w.buf = append(w.buf, '\n')
	_, err := w.w.Write(w.buf)
	return err
}

// Flush writes buffered output.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Flush()
}

// AppendString appends s as a JSON string, exactly as encoding/json writes it:
// it escapes what JSON requires (quote, backslash, control characters), the
// characters HTML and JavaScript treat specially (<, >, &, U+2028, U+2029),
// and writes each invalid UTF-8 byte as U+FFFD.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainByte marks the ASCII bytes AppendString copies as they are.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

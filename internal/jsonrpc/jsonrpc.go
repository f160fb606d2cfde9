// Package jsonrpc owns JSON-RPC 2.0 over a line stream: framing (one message a
// line, bounded, UTF-8 checked), parsing and encoding envelopes, and a Conn that
// matches the responses to its own requests. It knows nothing of MCP.
package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
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

// NewError returns an error object with code and message.
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

// Writer writes messages, one per line. It is not safe for concurrent use;
// Conn serialises it.
type Writer struct {
	w *bufio.Writer
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 64<<10)} }

// WriteLine writes one encoded message and a newline. It does not flush.
func (w *Writer) WriteLine(msg []byte) error {
	if _, err := w.w.Write(msg); err != nil {
		return err
	}
	return w.w.WriteByte('\n')
}

// Flush writes buffered output.
func (w *Writer) Flush() error { return w.w.Flush() }

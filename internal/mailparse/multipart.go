package mailparse

import (
	"bufio"
	"bytes"
	"io"
)

// multipartReader splits a multipart body into parts as a stream. It is lenient: CRLF and LF
// delimiters are both recognised anywhere, a missing close delimiter ends the last part at the end
// of input, and the preamble is kept (up to maxPreamble) in case the boundary never appears.
type multipartReader struct {
	br       *bufio.Reader
	dash     []byte // "--boundary"
	nlDash   []byte // "\n--boundary"
	started  bool
	done     bool
	closed   bool // the close delimiter was seen
	found    bool // at least one delimiter was seen
	cur      *partReader
	preamble []byte
}

func newMultipartReader(r io.Reader, boundary string) *multipartReader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < partBufSize {
		br = bufio.NewReaderSize(r, partBufSize)
	}
	nl := []byte("\n--" + boundary)
	return &multipartReader{br: br, nlDash: nl, dash: nl[1:]}
}

// delimEnds reports whether what follows "--boundary" makes it a delimiter.
func delimEnds(after []byte, eof bool) (yes, known bool) {
	if len(after) == 0 {
		return eof, eof
	}
	switch after[0] {
	case '-', ' ', '\t', '\r', '\n':
		return true, true
	}
	return false, true
}

// next advances to the next part; the reader is then at the part's header.
func (m *multipartReader) next() bool {
	if m.done {
		return false
	}
	if !m.started {
		m.started = true
		for {
			line, _ := readLine(m.br, 1<<16)
			if len(line) == 0 {
				m.done = true
				return false
			}
			if bytes.HasPrefix(line, m.dash) {
				rest := line[len(m.dash):]
				if bytes.HasPrefix(rest, []byte("--")) {
					m.found, m.closed, m.done = true, true, true
					m.drain()
					return false
				}
				if len(bytes.TrimLeft(rest, " \t\r\n")) == 0 {
					m.found = true
					return m.startPart()
				}
			}
			if room := maxPreamble - len(m.preamble); room > 0 {
				m.preamble = append(m.preamble, line[:min(room, len(line))]...)
			}
		}
	}
	_, _ = io.Copy(io.Discard, m.cur)
	if !m.cur.delim {
		m.done = true // input ended inside the part
		return false
	}
	if pk, _ := m.br.Peek(2); bytes.Equal(pk, []byte("--")) {
		m.closed, m.done = true, true
		m.drain()
		return false
	}
	readLine(m.br, 0) // transport padding up to the line end
	return m.startPart()
}

func (m *multipartReader) startPart() bool {
	m.cur = &partReader{m: m}
	return true
}

// drain discards the epilogue.
func (m *multipartReader) drain() { _, _ = io.Copy(io.Discard, m.br) }

// partReader reads one part's body up to the next delimiter.
type partReader struct {
	m       *multipartReader
	n       int   // bytes known to be data
	total   int64 // data bytes returned
	started bool  // the start-of-body delimiter check is done
	end     bool
	delim   bool // the part ended at a delimiter (not at end of input)
	eof     bool
}

func (p *partReader) Read(d []byte) (int, error) {
	for p.n == 0 {
		if p.end {
			return 0, io.EOF
		}
		p.scan()
	}
	n := min(len(d), p.n)
	n, _ = p.m.br.Read(d[:n])
	p.n -= n
	p.total += int64(n)
	return n, nil
}

func (p *partReader) fill(have int) {
	if _, err := p.m.br.Peek(have + 1); err != nil && err != bufio.ErrBufferFull {
		p.eof = true
	}
}

func (p *partReader) finish(skip int) {
	_, _ = p.m.br.Discard(skip)
	p.end, p.delim = true, true
}

// scan finds how many buffered bytes are data, or that the part ends here.
func (p *partReader) scan() {
	br := p.m.br
	dash, nlDash := p.m.dash, p.m.nlDash
	for {
		buf, _ := br.Peek(br.Buffered())
		if !p.started {
			// An empty body: the delimiter follows the header's blank line directly.
			if len(buf) < len(dash)+1 && !p.eof {
				p.fill(len(buf))
				continue
			}
			p.started = true
			if bytes.HasPrefix(buf, dash) {
				if yes, _ := delimEnds(buf[len(dash):], p.eof); yes {
					p.finish(len(dash))
					return
				}
			}
		}
		safe := len(buf)
		if i := bytes.Index(buf, nlDash); i >= 0 {
			yes, known := delimEnds(buf[i+len(nlDash):], p.eof)
			start := i
			if start > 0 && buf[start-1] == '\r' {
				start--
			}
			switch {
			case yes && start == 0:
				p.finish(i + len(nlDash))
				return
			case yes || !known:
				safe = start
			default:
				safe = i + 1 // "\n--boundaryX" is data
			}
		} else if j := bytes.LastIndexByte(buf, '\n'); j >= 0 && bytes.HasPrefix(nlDash, buf[j:]) {
			safe = j
			if safe > 0 && buf[safe-1] == '\r' {
				safe--
			}
		} else if safe > 0 && buf[safe-1] == '\r' && !p.eof {
			safe--
		}
		if safe > 0 {
			p.n = safe
			return
		}
		if p.eof {
			if len(buf) > 0 {
				p.n = len(buf)
				return
			}
			p.end = true
			return
		}
		p.fill(len(buf))
	}
}

package mailparse

import (
	"bufio"
	"io"
)

// counter is an io.Writer that only counts.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

var b64Table = func() (t [256]int8) {
	for i := range t {
		t[i] = -1 // invalid
	}
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(alpha); i++ {
		t[alpha[i]] = int8(i)
	}
	for _, c := range []byte(" \t\r\n\f\v") {
		t[c] = -2 // skipped
	}
	t['='] = -3 // ends a quantum
	return t
}()

// b64Reader decodes base64 leniently and in a stream: whitespace is skipped, other stray characters
// are skipped and counted, and '=' ends the current quantum so that concatenated encodings decode.
type b64Reader struct {
	r     io.Reader
	in    [4096]byte
	out   []byte
	q     [4]byte
	nq    int
	bad   int64
	err   error
	spare [3 * 4096 / 4]byte
}

func newB64Reader(r io.Reader) *b64Reader { return &b64Reader{r: r} }

func (d *b64Reader) flushQuantum() {
	q := d.q
	switch d.nq {
	case 2:
		d.out = append(d.out, q[0]<<2|q[1]>>4)
	case 3:
		d.out = append(d.out, q[0]<<2|q[1]>>4, q[1]<<4|q[2]>>2)
	case 1:
		d.bad++
	}
	d.nq = 0
}

// size reads the rest of the encoded input and returns how many bytes it
// decodes to, counting invalid characters as Read would, without decoding.
// Only for a reader nothing has been read from.
func (d *b64Reader) size() int64 {
	var n int64
	for d.err == nil {
		m, err := d.r.Read(d.in[:])
		for _, c := range d.in[:m] {
			switch v := b64Table[c]; {
			case v >= 0:
				d.nq++
				if d.nq == 4 {
					n += 3
					d.nq = 0
				}
			case v == -3:
				n += d.flushCount()
			case v == -1:
				d.bad++
			}
		}
		if err != nil {
			n += d.flushCount()
			d.err = err
		}
	}
	return n
}

// flushCount is flushQuantum for size: the bytes a partial quantum decodes to.
func (d *b64Reader) flushCount() int64 {
	nq := d.nq
	d.nq = 0
	switch nq {
	case 1:
		d.bad++
	case 2:
		return 1
	case 3:
		return 2
	}
	return 0
}

func (d *b64Reader) Read(p []byte) (int, error) {
	for len(d.out) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		n, err := d.r.Read(d.in[:])
		d.out = d.spare[:0]
		for _, c := range d.in[:n] {
			v := b64Table[c]
			switch {
			case v >= 0:
				d.q[d.nq] = byte(v)
				d.nq++
				if d.nq == 4 {
					q := d.q
					d.out = append(d.out, q[0]<<2|q[1]>>4, q[1]<<4|q[2]>>2, q[2]<<6|q[3])
					d.nq = 0
				}
			case v == -3:
				d.flushQuantum()
			case v == -1:
				d.bad++
			}
		}
		if err != nil {
			d.flushQuantum()
			d.err = err
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

// qpReader decodes quoted-printable leniently: "=XX" in either case is a byte, "=" before the line
// end (trailing blanks allowed) is a soft break, any other "=" is kept as it is.
type qpReader struct {
	br *bufio.Reader
}

func newQPReader(r io.Reader) *qpReader { return &qpReader{br: bufio.NewReaderSize(r, 4096)} }

func (d *qpReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c, err := d.br.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if c != '=' {
			p[n] = c
			n++
			continue
		}
		nx, _ := d.br.Peek(2)
		if len(nx) == 2 && isHex(nx[0]) && isHex(nx[1]) {
			p[n] = unhex(nx[0])<<4 | unhex(nx[1])
			n++
			_, _ = d.br.Discard(2)
			continue
		}
		if len(nx) == 0 {
			continue // "=" at the very end: a soft break
		}
		look, _ := d.br.Peek(80)
		i := 0
		for i < len(look) && isWSP(look[i]) {
			i++
		}
		switch {
		case i < len(look) && look[i] == '\n':
			_, _ = d.br.Discard(i + 1)
		case i+1 < len(look) && look[i] == '\r' && look[i+1] == '\n':
			_, _ = d.br.Discard(i + 2)
		case i == len(look) && len(look) < 80:
			_, _ = d.br.Discard(i) // trailing blanks at the end
		default:
			p[n] = '='
			n++
		}
	}
	return n, nil
}

package corpus

import (
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Big streams one valid multipart/mixed message of exactly size bytes: a
// short text part and one base64 attachment of pseudo-random bytes,
// generated as it is read in constant memory. Sizes below about 900 bytes
// give the smallest message Big can make, with an empty attachment.
func Big(size int64, seed int64) io.Reader {
	pre, post, n := bigLayout(size, seed)
	s := uint64(seed)
	return &bigReader{pending: pre, post: post, left: n, pcg: rand.NewPCG(mix(s^0x626967), mix(s+0x626967))}
}

// bigLayout returns the bytes before and after the base64 body and the
// attachment's decoded size.
func bigLayout(size, seed int64) (pre, post []byte, n int64) {
	bd := "=_corpus_big_" + hex64(mix(uint64(seed)))[:12]
	head := func(pad int) string {
		return strings.Join([]string{
			"Date: Sat, 30 Nov 2024 09:00:00 +0000",
			"From: Dana Adams <dana.adams@example.net>",
			"To: " + OwnerName + " <" + OwnerEmail + ">",
			fmt.Sprintf("Subject: Large attachment (%d bytes)", size),
			fmt.Sprintf("Message-ID: <big.%s.%d@example.net>", hex64(mix(uint64(seed)+1)), size),
			"MIME-Version: 1.0",
			"Content-Type: multipart/mixed;",
			" boundary=\"" + bd + "\"",
			"",
			"--" + bd,
			"Content-Type: text/plain; charset=us-ascii",
			"Content-Transfer-Encoding: 7bit",
			"",
			"Here is the file you asked for." + strings.Repeat(" ", pad),
			"--" + bd,
			"Content-Type: application/octet-stream; name=\"big.bin\"",
			"Content-Disposition: attachment; filename=\"big.bin\"",
			"Content-Transfer-Encoding: base64",
			"",
			"",
		}, "\r\n")
	}
	post = []byte("--" + bd + "--\r\n")
	avail := size - int64(len(head(0))) - int64(len(post))
	if avail > 0 {
		n = avail * 57 / 78
		for base64Len(n+1) <= avail {
			n++
		}
		for n > 0 && base64Len(n) > avail {
			n--
		}
	}
	return []byte(head(int(max(avail-base64Len(n), 0)))), post, n
}

// base64Len is the length of n bytes base64-encoded in CRLF-ended lines of 76.
func base64Len(n int64) int64 { return 4*((n+2)/3) + 2*((n+56)/57) }

type bigReader struct {
	pending []byte
	post    []byte
	left    int64 // attachment bytes still to encode
	pcg     *rand.PCG
	raw     [57 * 64]byte
	out     [78 * 64]byte
}

func (b *bigReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(b.pending) == 0 {
			switch {
			case b.left > 0:
				b.pending = b.block()
			case b.post != nil:
				b.pending, b.post = b.post, nil
			case n == 0:
				return 0, io.EOF
			default:
				return n, nil
			}
		}
		c := copy(p[n:], b.pending)
		b.pending = b.pending[c:]
		n += c
	}
	return n, nil
}

// block encodes up to 64 lines of the attachment.
func (b *bigReader) block() []byte {
	raw := b.raw[:min(int64(len(b.raw)), b.left)]
	for k := 0; k < len(raw); k += 8 {
		x := b.pcg.Uint64()
		for j := k; j < min(k+8, len(raw)); j++ {
			raw[j] = byte(x)
			x >>= 8
		}
	}
	b.left -= int64(len(raw))
	o := 0
	for len(raw) > 0 {
		l := min(len(raw), 57)
		base64.StdEncoding.Encode(b.out[o:], raw[:l])
		o += base64.StdEncoding.EncodedLen(l)
		b.out[o], b.out[o+1] = '\r', '\n'
		o += 2
		raw = raw[l:]
	}
	return b.out[:o]
}

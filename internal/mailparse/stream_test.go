package mailparse

import (
	"bytes"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unicode/utf8"
)

// bigMessage produces, on the fly, a message with a short text part and a large base64
// attachment, sampling the heap as it goes.
type bigMessage struct {
	parts    [][]byte // head, then line repeated lines times, then tail
	lines    int
	stage    int
	pos      int
	sent     int64
	nextPeek int64
	maxHeap  uint64
}

const attachLine = 57 // decoded bytes per base64 line

func newBigMessage(decoded int) *bigMessage {
	head := "From: Sender <sender@example.com>\r\nTo: rcpt@example.org\r\nSubject: big\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"BIG\"\r\n\r\n" +
		"--BIG\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee attached.\r\n" +
		"--BIG\r\nContent-Type: application/octet-stream\r\n" +
		"Content-Disposition: attachment; filename=\"backup.tar\"\r\n" +
		"Content-Transfer-Encoding: base64\r\n\r\n"
	chunk := make([]byte, attachLine)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	line := base64.StdEncoding.EncodeToString(chunk) + "\r\n"
	return &bigMessage{
		parts: [][]byte{[]byte(head), []byte(line), []byte("--BIG--\r\n")},
		lines: decoded / attachLine,
	}
}

func (g *bigMessage) Read(p []byte) (int, error) {
	if g.sent >= g.nextPeek {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		g.maxHeap = max(g.maxHeap, ms.HeapInuse)
		g.nextPeek += 1 << 20
	}
	n := 0
	for n < len(p) && g.stage < 3 {
		src := g.parts[g.stage]
		c := copy(p[n:], src[g.pos:])
		n += c
		g.pos += c
		if g.pos == len(src) {
			g.pos = 0
			switch {
			case g.stage == 1 && g.lines > 1:
				g.lines--
			default:
				g.stage++
			}
		}
	}
	g.sent += int64(n)
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func TestLargeMessageBoundedMemory(t *testing.T) {
	const decoded = 18 << 20 // about 24.5 MiB once base64-encoded
	g := newBigMessage(decoded)
	wantAttach := int64(g.lines * attachLine)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := Parse(g)
	if err != nil {
		t.Fatal(err)
	}
	if m.Size < 24<<20 || m.Size != g.sent {
		t.Errorf("Size = %d, generated %d", m.Size, g.sent)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Size != wantAttach || m.Attachments[0].Name != "backup.tar" {
		t.Errorf("Attachments = %+v, want one of %d bytes", m.Attachments, wantAttach)
	}
	if m.Text != "See attached." {
		t.Errorf("Text = %q", m.Text)
	}
	grew := int64(g.maxHeap) - int64(before.HeapInuse)
	t.Logf("message %d bytes; heap in use grew by at most %d bytes", m.Size, grew)
	if grew > 8<<20 {
		t.Errorf("heap in use grew by %d bytes while parsing a %d byte message", grew, m.Size)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.eml"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("Content-Type: multipart/mixed; boundary=a\n\n--a\n--a\nContent-Type: multipart/alternative; boundary=a\n\n--a--\n"))
	f.Add([]byte("Subject: =?utf-8?b?4pw=?= =?iso-2022-jp?b?GyRCJDMbKEI=?=\nContent-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n<a href=3Dx>y</a>=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("Parse failed on in-memory input: %v", err)
		}
		if m.Size != int64(len(b)) {
			t.Fatalf("Size = %d, want %d", m.Size, len(b))
		}
		checkValid(t, m)
		for _, a := range ParseAddressList(string(b)) {
			if !utf8.ValidString(a.Name) || !utf8.ValidString(a.Email) {
				t.Fatalf("ParseAddressList: invalid UTF-8 in %q", a)
			}
		}
	})
}

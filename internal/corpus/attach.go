package corpus

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"time"
)

// attachment makes attachment k of message i: a small but well-formed PDF,
// PNG, text, iCalendar or ZIP file. params are extra Content-Type parameters.
func (g *gen) attachment(r *rand.Rand, i, k int, e entry, date time.Time, subject string) (a Attachment, data []byte, params string) {
	kinds := []string{"pdf", "pdf", "pdf", "png", "png", "png", "txt", "txt", "ics", "zip", "zip"}
	ext := pick(r, kinds)
	if e.kind == kOrg && k == 0 {
		ext = "pdf"
	}
	size := attachmentSize(r)
	var base string
	switch ext {
	case "pdf":
		base = pick(r, []string{"report-", "invoice-", "minutes-", "contract-"}) + itoa(1000+r.IntN(9000))
		a.ContentType = "application/pdf"
		data = makePDF(r, size, fmt.Sprintf("%s %s", pick(r, projects), itoa(i)))
	case "png":
		base = pick(r, []string{"photo-", "screenshot-", "diagram-"}) + itoa(100+r.IntN(900))
		a.ContentType = "image/png"
		data = makePNG(r, size)
	case "txt":
		base = pick(r, []string{"notes-", "readme-", "log-"}) + itoa(10+r.IntN(90))
		a.ContentType, params = "text/plain", "; charset=utf-8"
		data = makeText(r, size)
	case "ics":
		base = "invite"
		a.ContentType, params = "text/calendar", "; charset=utf-8; method=REQUEST"
		data = makeICS(r, i, date, subject)
	case "zip":
		base = pick(r, []string{"files-", "archive-", "export-"}) + itoa(10+r.IntN(90))
		a.ContentType = "application/zip"
		data = makeZIP(r, size, date)
	}
	if r.IntN(8) == 0 {
		base = pick(r, nonASCIIFileNames)
	}
	a.Name = base + "." + ext
	a.Size = int64(len(data))
	return a, data, params
}

// fill writes n pseudo-random bytes.
func fill(r *rand.Rand, b []byte) {
	for len(b) >= 8 {
		x := r.Uint64()
		b[0], b[1], b[2], b[3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
		b[4], b[5], b[6], b[7] = byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56)
		b = b[8:]
	}
	for k := range b {
		b[k] = byte(r.Uint32())
	}
}

// filler is 64 KB of wrapped vocabulary text in CRLF lines; fillerLines
// holds the offset of each line. Attachments copy from it rather than
// drawing every word, which keeps a 100,000-message corpus fast.
var filler, fillerLines = func() (string, []int) {
	r := rand.New(rand.NewPCG(0x66696c6c, 0x6572))
	var b strings.Builder
	offs := []int{0}
	col := 0
	for b.Len() < 64<<10 {
		w := pick(r, vocabulary)
		if col > 0 && col+1+len(w) > 72 {
			b.WriteString("\r\n")
			offs = append(offs, b.Len())
			col = 0
		} else if col > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	b.WriteString("\r\n")
	return b.String(), offs[:len(offs)-1]
}()

// appendFiller appends whole filler lines, from a random one, until b
// holds at least size bytes; prefix starts every line.
func appendFiller(r *rand.Rand, b []byte, size int, prefix string) []byte {
	at := fillerLines[r.IntN(len(fillerLines))]
	for len(b) < size {
		end := strings.Index(filler[at:], "\r\n") + at + 2
		b = append(b, prefix...)
		b = append(b, filler[at:end]...)
		if at = end; at == len(filler) {
			at = 0
		}
	}
	return b
}

// makeText returns size bytes of wrapped vocabulary text.
func makeText(r *rand.Rand, size int) []byte {
	return appendFiller(r, make([]byte, 0, size+80), size, "")[:size]
}

// makePDF returns a one-page PDF with a correct cross-reference table,
// padded with comment lines in its content stream to about size bytes.
func makePDF(r *rand.Rand, size int, title string) []byte {
	b := make([]byte, 0, size+1024)
	b = append(b, "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"...)
	var offs []int
	obj := func(s string) {
		offs = append(offs, len(b))
		b = append(b, s...)
	}
	obj("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	obj("2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n")
	obj("3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>\nendobj\n")
	content := make([]byte, 0, size+80)
	content = append(content, "BT /F1 18 Tf 72 720 Td ("+title+") Tj ET\r\n"...)
	content = appendFiller(r, content, size-700, "% ")
	offs = append(offs, len(b))
	b = fmt.Appendf(b, "4 0 obj\n<< /Length %d >>\nstream\n", len(content))
	b = append(b, content...)
	b = append(b, "endstream\nendobj\n"...)
	obj("5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n")
	xref := len(b)
	b = fmt.Appendf(b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		b = fmt.Appendf(b, "%010d 00000 n \n", o)
	}
	return fmt.Appendf(b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
}

// makePNG returns a grey noise image of about size bytes, written by hand
// with stored (uncompressed) deflate blocks: image/png would allocate a
// compressor per image, which dominates a large corpus.
func makePNG(r *rand.Rand, size int) []byte {
	w := 4
	for w*w < size && w < 256 {
		w *= 2
	}
	h := max((size-120)/(w+1), 1)
	raw := make([]byte, h*(w+1)) // each row: filter type 0, then w pixels
	fill(r, raw)
	for y := range h {
		raw[y*(w+1)] = 0
	}
	blocks := (len(raw) + 65534) / 65535
	out := make([]byte, 0, 8+25+12+2+5*blocks+len(raw)+4+12)
	out = append(out, "\x89PNG\r\n\x1a\n"...)
	chunk := func(typ string, data func([]byte) []byte) {
		at := len(out)
		out = append(out, 0, 0, 0, 0)
		out = append(out, typ...)
		out = data(out)
		binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-8))
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[at+4:]))
	}
	chunk("IHDR", func(b []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(w))
		b = binary.BigEndian.AppendUint32(b, uint32(h))
		return append(b, 8, 0, 0, 0, 0) // 8-bit greyscale
	})
	chunk("IDAT", func(b []byte) []byte {
		b = append(b, 0x78, 0x01) // zlib, no compression
		for k := 0; k < len(raw); k += 65535 {
			n := min(len(raw)-k, 65535)
			final := byte(0)
			if k+n == len(raw) {
				final = 1
			}
			b = append(b, final)
			b = binary.LittleEndian.AppendUint16(b, uint16(n))
			b = binary.LittleEndian.AppendUint16(b, ^uint16(n))
			b = append(b, raw[k:k+n]...)
		}
		return binary.BigEndian.AppendUint32(b, adler32.Checksum(raw))
	})
	chunk("IEND", func(b []byte) []byte { return b })
	return out
}

// makeICS returns a meeting invitation.
func makeICS(r *rand.Rand, i int, date time.Time, subject string) []byte {
	start := date.UTC().Add(time.Duration(24+r.IntN(24*14)) * time.Hour).Truncate(time.Hour)
	var b strings.Builder
	for _, l := range []string{
		"BEGIN:VCALENDAR",
		"VERSION:2.0",
		"PRODID:-//postern//corpus//EN",
		"METHOD:REQUEST",
		"BEGIN:VEVENT",
		"UID:event-" + itoa(i) + "@example.com",
		"DTSTAMP:" + date.UTC().Format("20060102T150405Z"),
		"DTSTART:" + start.Format("20060102T150405Z"),
		"DTEND:" + start.Add(time.Duration(30+30*r.IntN(4))*time.Minute).Format("20060102T150405Z"),
		"SUMMARY:" + strings.NewReplacer(",", `\,`, ";", `\;`).Replace(subject),
		"LOCATION:Room " + itoa(1+r.IntN(40)),
		"ORGANIZER:mailto:" + OwnerEmail,
		"END:VEVENT",
		"END:VCALENDAR",
	} {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// makeZIP returns a stored (uncompressed) archive of one to three text files.
func makeZIP(r *rand.Rand, size int, date time.Time) []byte {
	var b bytes.Buffer
	b.Grow(size + 512)
	zw := zip.NewWriter(&b)
	n := 1 + r.IntN(3)
	for k := range n {
		fh := &zip.FileHeader{Name: fmt.Sprintf("part-%d.txt", k+1), Method: zip.Store, Modified: date.UTC()}
		f, err := zw.CreateHeader(fh)
		if err == nil {
			_, err = f.Write(makeText(r, max(size/n-100, 10)))
		}
		if err != nil {
			panic(err) // writing to a bytes.Buffer cannot fail
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

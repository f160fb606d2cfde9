package corpus

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var testOpt = Options{Seed: 7, Messages: 3000}

var corpusCache = map[int64][]Message{}

func corpusFor(t testing.TB, opt Options) []Message {
	t.Helper()
	if ms, ok := corpusCache[opt.Seed]; ok && len(ms) == opt.Messages && opt.Folders == nil {
		return ms
	}
	ms := Generate(opt)
	if opt.Folders == nil {
		corpusCache[opt.Seed] = ms
	}
	return ms
}

func TestDeterministic(t *testing.T) {
	a := Generate(Options{Seed: 42, Messages: 500})
	b := Generate(Options{Seed: 42, Messages: 500})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two Generate calls with the same options differ")
	}
	i := 0
	err := Each(Options{Seed: 42, Messages: 500}, func(k int, m *Message) error {
		if k != i || !reflect.DeepEqual(*m, a[k]) {
			return fmt.Errorf("Each message %d differs from Generate's", k)
		}
		i++
		return nil
	})
	if err != nil || i != 500 {
		t.Fatalf("Each: %v after %d messages", err, i)
	}
	c := Generate(Options{Seed: 43, Messages: 500})
	if bytes.Equal(a[10].Raw, c[10].Raw) {
		t.Error("seeds 42 and 43 gave the same message")
	}
	stop := errors.New("stop")
	n := 0
	if err := Each(Options{Seed: 1, Messages: 50}, func(int, *Message) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Each did not stop at the callback's error: %v after %d calls", err, n)
	}
	if got := Generate(Options{Seed: 1}); len(got) != 0 {
		t.Errorf("Messages 0 gave %d messages", len(got))
	}
}

// charsetReader decodes the legacy charsets with tables inverted from the
// encoder's, which TestEncodeMatchesIconv checks against iconv's output.
func charsetReader(cs string, in io.Reader) (io.Reader, error) {
	b, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	s, err := decode(cs, b)
	if err != nil {
		return nil, err
	}
	return strings.NewReader(s), nil
}

var reverse = map[string]map[string]rune{}

func reverseTable(cs string) map[string]rune {
	if m, ok := reverse[cs]; ok {
		return m
	}
	m := map[string]rune{}
	for r := rune(0x80); r < 0x10000; r++ {
		if b, ok := encode(cs, string(r)); ok {
			if cs == csISO2022JP {
				b = b[3 : len(b)-3]
			}
			m[string(b)] = r
		}
	}
	reverse[cs] = m
	return m
}

func decode(cs string, b []byte) (string, error) {
	var canon string
	for _, c := range []string{csUTF8, csLatin1, csLatin9, csWindows1252, csKOI8R, csISO2022JP, csShiftJIS} {
		if strings.EqualFold(c, cs) {
			canon = c
		}
	}
	if canon == "" {
		return "", fmt.Errorf("unknown charset %q", cs)
	}
	if canon == csUTF8 {
		if !utf8.Valid(b) {
			return "", errors.New("invalid UTF-8")
		}
		return string(b), nil
	}
	tab := reverseTable(canon)
	var sb strings.Builder
	jis := false
	for k := 0; k < len(b); {
		if canon == csISO2022JP && b[k] == 0x1B {
			if k+3 > len(b) {
				return "", errors.New("truncated escape")
			}
			switch string(b[k+1 : k+3]) {
			case "$B":
				jis = true
			case "(B":
				jis = false
			default:
				return "", fmt.Errorf("unknown escape %q", b[k:k+3])
			}
			k += 3
			continue
		}
		if b[k] < 0x80 && !jis {
			sb.WriteByte(b[k])
			k++
			continue
		}
		if r, ok := tab[string(b[k:k+1])]; ok && !jis {
			sb.WriteRune(r)
			k++
			continue
		}
		if k+2 <= len(b) {
			if r, ok := tab[string(b[k:k+2])]; ok {
				sb.WriteRune(r)
				k += 2
				continue
			}
		}
		return "", fmt.Errorf("%s: undecodable byte %#x", cs, b[k])
	}
	if jis {
		return "", errors.New("ISO-2022-JP text ends in JIS mode")
	}
	return sb.String(), nil
}

func TestEncodeMatchesIconv(t *testing.T) {
	// Expected bytes produced by iconv -f UTF-8 -t <charset>.
	cases := []struct{ cs, s, hex string }{
		{csLatin1, "Café Größe Año Zoë Søren à", "436166e9204772f6df652041f16f205a6feb2053f872656e20e0"},
		{csLatin9, "€ œ Œ Š š Ž ž Ÿ", "a420bd20bc20a620a820b420b820be"},
		{csWindows1252, "€ œ “ ” – — … ‘ ’ ™ Š", "80209c20932094209620972085209120922099208a"},
		{csKOI8R, "Привет Отчёт за квартал ЁЮЪ", "f0d2c9d7c5d420efd4dea3d420dac120cbd7c1d2d4c1cc20b3e0ff"},
		{csISO2022JP, "日本語", "1b2442467c4b5c386c1b2842"},
		{csISO2022JP, "会議の予定", "1b244232713544244e4d3d446a1b2842"},
		{csShiftJIS, "日本語", "93fa967b8cea"},
		{csShiftJIS, "こんにちは", "82b182f182c982bf82cd"},
		{csShiftJIS, "予定 山田太郎 佐藤花子 東京", "975c92e8208e52936391be9859208db293a189d48e7120938c8b9e"},
	}
	for _, c := range cases {
		b, ok := encode(c.cs, c.s)
		if !ok {
			t.Errorf("%s cannot encode %q", c.cs, c.s)
			continue
		}
		if got := fmt.Sprintf("%x", b); got != c.hex {
			t.Errorf("%s(%q) = %s, want %s", c.cs, c.s, got, c.hex)
		}
	}
	if _, ok := encode(csLatin1, "€"); ok {
		t.Error("ISO-8859-1 claims to encode €")
	}
	if _, ok := encode(csLatin9, "¤"); ok {
		t.Error("ISO-8859-15 claims to encode ¤")
	}
}

func TestEncodedWordsRoundTrip(t *testing.T) {
	dec := &mime.WordDecoder{CharsetReader: charsetReader}
	seen := map[string]bool{}
	var texts []string
	texts = append(texts, nonASCIISubjects...)
	for _, p := range nonASCIIPeople {
		texts = append(texts, p.name)
	}
	texts = append(texts, strings.Repeat("Größe ", 20), strings.Repeat("日本語の資料", 12))
	for _, s := range texts {
		for _, cs := range charsetsFor(s) {
			seen[cs] = true
			for _, enc := range []byte{'B', 'Q'} {
				h := headerText("Re: "+s, cs, enc)
				for _, l := range strings.Split(h, "\r\n") {
					for _, w := range strings.Fields(l) {
						if strings.HasPrefix(w, "=?") && len(w) > 75 {
							t.Errorf("encoded word longer than 75: %s", w)
						}
					}
				}
				got, err := dec.DecodeHeader(strings.ReplaceAll(h, "\r\n", ""))
				if err != nil || got != "Re: "+s {
					t.Errorf("%s/%c: %q decodes to %q (%v)", cs, enc, h, got, err)
				}
			}
		}
	}
	for _, cs := range []string{csUTF8, csLatin1, csLatin9, csWindows1252, csKOI8R, csISO2022JP, csShiftJIS} {
		if !seen[cs] {
			t.Errorf("no sample text can be written in %s", cs)
		}
	}
}

var reservedHost = regexp.MustCompile(`(^|\.)example\.(com|org|net)$`)
var emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+\.)+[A-Za-z]{2,}`)
var urlRe = regexp.MustCompile(`https?://([^/\s"<>?]+)`)

// part is one decoded leaf of a parsed message.
type part struct {
	mediaType, filename, cte string
	data                     []byte
}

// walk parses a MIME entity with the standard library and returns its leaves.
func walk(h mail.Header, body io.Reader, depth int) ([]part, error) {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, fmt.Errorf("Content-Type %q: %w", ct, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		if depth > 3 {
			return nil, errors.New("too deep")
		}
		mr := multipart.NewReader(body, params["boundary"])
		var out []part
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			sub, err := walk(mail.Header(p.Header), p, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		if len(out) < 2 {
			return nil, fmt.Errorf("%s with %d parts", mt, len(out))
		}
		return out, nil
	}
	cte := strings.ToLower(h.Get("Content-Transfer-Encoding"))
	var r io.Reader = body
	switch cte {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, body)
	case "", "7bit":
	default:
		return nil, fmt.Errorf("unexpected transfer encoding %q", cte)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s body: %w", cte, err)
	}
	p := part{mediaType: mt, cte: cte, data: data}
	if cd := h.Get("Content-Disposition"); cd != "" {
		_, dp, err := mime.ParseMediaType(cd)
		if err != nil {
			return nil, fmt.Errorf("Content-Disposition %q: %w", cd, err)
		}
		p.filename = dp["filename"]
	}
	return []part{p}, nil
}

func checkMessage(m *Message) error {
	raw := m.Raw
	for k, l := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.IndexByte(l, '\n') >= 0 || bytes.IndexByte(l, '\r') >= 0 {
			return fmt.Errorf("bare CR or LF in line %d", k)
		}
		if len(l) > 998 {
			return fmt.Errorf("line %d is %d bytes", k, len(l))
		}
		for _, c := range l {
			if c >= 0x80 {
				return fmt.Errorf("8-bit byte in line %d", k)
			}
		}
	}
	mm, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	h := mm.Header
	d, err := h.Date()
	if err != nil || !d.Equal(m.Date) {
		return fmt.Errorf("Date header %q, want %v (%v)", h.Get("Date"), m.Date, err)
	}
	if _, off := d.Zone(); func() int { _, o := m.Date.Zone(); return o }() != off {
		return fmt.Errorf("Date header zone differs from Message.Date")
	}
	if h.Get("Message-ID") != "<"+m.MessageID+">" {
		return fmt.Errorf("Message-ID header %q, want %q", h.Get("Message-ID"), m.MessageID)
	}
	if m.InReplyTo != "" && h.Get("In-Reply-To") != "<"+m.InReplyTo+">" {
		return fmt.Errorf("In-Reply-To header %q, want %q", h.Get("In-Reply-To"), m.InReplyTo)
	}
	ap := mail.AddressParser{WordDecoder: &mime.WordDecoder{CharsetReader: charsetReader}}
	from, err := ap.Parse(h.Get("From"))
	if err != nil || from.Name != m.FromName || from.Address != m.FromEmail {
		return fmt.Errorf("From %q parses to %+v (%v), want %q <%s>", h.Get("From"), from, err, m.FromName, m.FromEmail)
	}
	to, err := ap.ParseList(h.Get("To"))
	if err != nil || len(to) != len(m.To) {
		return fmt.Errorf("To %q: %v", h.Get("To"), err)
	}
	for k, a := range to {
		if a.Address != m.To[k] {
			return fmt.Errorf("To[%d] = %s, want %s", k, a.Address, m.To[k])
		}
	}
	subj, err := ap.WordDecoder.DecodeHeader(h.Get("Subject"))
	if err != nil || subj != m.Subject {
		return fmt.Errorf("Subject %q decodes to %q (%v), want %q", h.Get("Subject"), subj, err, m.Subject)
	}
	for _, e := range emailRe.FindAllString(string(raw), -1) {
		if !reservedHost.MatchString(e[strings.LastIndexByte(e, '@')+1:]) {
			return fmt.Errorf("address %s is not on a reserved domain", e)
		}
	}
	parts, err := walk(h, mm.Body, 0)
	if err != nil {
		return err
	}
	var text strings.Builder
	var atts []Attachment
	for _, p := range parts {
		if !utf8.Valid(p.data) && strings.HasPrefix(p.mediaType, "text/") {
			return fmt.Errorf("%s part is not UTF-8", p.mediaType)
		}
		if p.filename != "" {
			if err := checkFile(p.mediaType, p.data); err != nil {
				return fmt.Errorf("attachment %q: %w", p.filename, err)
			}
			atts = append(atts, Attachment{p.filename, p.mediaType, int64(len(p.data))})
			continue
		}
		text.Write(p.data)
	}
	if !reflect.DeepEqual(atts, m.Attachments) {
		return fmt.Errorf("attachments %+v, want %+v", atts, m.Attachments)
	}
	for _, u := range urlRe.FindAllStringSubmatch(text.String(), -1) {
		if !reservedHost.MatchString(u[1]) {
			return fmt.Errorf("link to %s is not on a reserved domain", u[1])
		}
	}
	for _, e := range emailRe.FindAllString(text.String(), -1) {
		if !reservedHost.MatchString(e[strings.LastIndexByte(e, '@')+1:]) {
			return fmt.Errorf("address %s in body is not on a reserved domain", e)
		}
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(text.String(), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		words[w] = true
	}
	for _, w := range m.BodyWords {
		if !words[w] {
			return fmt.Errorf("body word %q not in the body", w)
		}
	}
	return nil
}

// checkFile checks that an attachment is a well-formed file of its type.
func checkFile(mediaType string, data []byte) error {
	switch mediaType {
	case "image/png":
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return err
		}
		if img.Bounds().Dx() == 0 {
			return errors.New("empty image")
		}
	case "application/zip":
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return err
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
	case "application/pdf":
		s := string(data)
		at := strings.LastIndex(s, "startxref\n")
		if !strings.HasPrefix(s, "%PDF-1.4\n") || !strings.HasSuffix(s, "%%EOF\n") || at < 0 {
			return errors.New("not a PDF")
		}
		xref, err := strconv.Atoi(strings.Fields(s[at+len("startxref\n"):])[0])
		if err != nil || !strings.HasPrefix(s[xref:], "xref\n") {
			return errors.New("startxref does not point at the xref table")
		}
		for k, l := range strings.Split(s[xref:], "\n")[3:8] {
			off, _ := strconv.Atoi(l[:10])
			if !strings.HasPrefix(s[off:], fmt.Sprintf("%d 0 obj", k+1)) {
				return fmt.Errorf("xref entry %d is wrong", k+1)
			}
		}
	case "text/calendar":
		if !bytes.HasPrefix(data, []byte("BEGIN:VCALENDAR\r\n")) || !bytes.HasSuffix(data, []byte("END:VCALENDAR\r\n")) {
			return errors.New("not an iCalendar object")
		}
	case "text/plain":
	default:
		return fmt.Errorf("unexpected type %s", mediaType)
	}
	return nil
}

func TestMessagesParse(t *testing.T) {
	ms := corpusFor(t, testOpt)
	for i := range ms {
		if err := checkMessage(&ms[i]); err != nil {
			t.Fatalf("message %d (%s): %v\n%s", i, ms[i].Folder, err, ms[i].Raw[:min(len(ms[i].Raw), 3000)])
		}
	}
}

func TestThreads(t *testing.T) {
	ms := corpusFor(t, testOpt)
	byID := map[string]int{}
	for i, m := range ms {
		if _, dup := byID[m.MessageID]; dup {
			t.Fatalf("Message-ID %s used twice", m.MessageID)
		}
		if !reservedHost.MatchString(m.MessageID[strings.LastIndexByte(m.MessageID, '@')+1:]) {
			t.Fatalf("Message-ID %s is not on a reserved domain", m.MessageID)
		}
		byID[m.MessageID] = i
	}
	replies, crossing := 0, 0
	threads := map[string][]int{} // root id to members
	for i, m := range ms {
		if m.InReplyTo == "" {
			if len(m.References) != 0 {
				t.Fatalf("message %d has References but no In-Reply-To", i)
			}
			threads[m.MessageID] = append(threads[m.MessageID], i)
			continue
		}
		replies++
		if m.References[len(m.References)-1] != m.InReplyTo {
			t.Fatalf("message %d: References do not end with In-Reply-To", i)
		}
		for _, r := range m.References {
			if _, ok := byID[r]; !ok {
				t.Fatalf("message %d refers to missing %s", i, r)
			}
		}
		p := ms[byID[m.InReplyTo]]
		if !m.Date.After(p.Date) {
			t.Fatalf("message %d is dated %v, not after its parent's %v", i, m.Date, p.Date)
		}
		root := ms[byID[m.References[0]]]
		if m.Subject != "Re: "+root.Subject {
			t.Fatalf("message %d: subject %q for a reply to %q", i, m.Subject, root.Subject)
		}
		threads[root.MessageID] = append(threads[root.MessageID], i)
	}
	long := 0
	for _, members := range threads {
		if len(members) > 8 {
			t.Fatalf("thread of %d messages", len(members))
		}
		if len(members) >= 4 {
			long++
		}
		folders := map[string]bool{}
		for _, k := range members {
			folders[ms[k].Folder] = true
		}
		if folders["INBOX"] && folders["Sent"] {
			crossing++
		}
	}
	frac := float64(replies) / float64(len(ms))
	t.Logf("replies %.1f%%, threads across INBOX and Sent %d, threads of 4+ %d", 100*frac, crossing, long)
	if frac < 0.2 || frac > 0.4 {
		t.Errorf("%.1f%% of messages are replies, want about 30%%", 100*frac)
	}
	if crossing < 20 || long < 20 {
		t.Errorf("too few long threads (%d) or threads across INBOX and Sent (%d)", long, crossing)
	}
}

func TestMix(t *testing.T) {
	ms := corpusFor(t, testOpt)
	count := map[string]int{}
	var sizes []int
	unique := map[string]int{}
	for _, m := range ms {
		for _, f := range m.Flags {
			count[f]++
		}
		count["folder "+m.Folder]++
		raw := string(m.Raw)
		for _, k := range []string{"multipart/mixed", "multipart/alternative", "Content-Transfer-Encoding: quoted-printable", "Content-Transfer-Encoding: 7bit", "filename*=UTF-8''", "List-Unsubscribe:"} {
			if strings.Contains(raw, k) {
				count[k]++
			}
		}
		switch {
		case strings.Contains(raw, "\r\nContent-Type: multipart/"):
		case strings.Contains(raw, "\r\nContent-Type: text/html"):
			count["html only"]++
		default:
			count["plain only"]++
		}
		for _, cs := range []string{csUTF8, csLatin1, csLatin9, csWindows1252, csKOI8R, csISO2022JP, csShiftJIS} {
			for _, enc := range []string{"B", "Q"} {
				if strings.Contains(raw, "=?"+cs+"?"+enc+"?") {
					count["=?"+cs+"?"+enc]++
					count["charset "+cs]++
				}
			}
		}
		sizes = append(sizes, len(m.Raw))
		unique[m.BodyWords[len(m.BodyWords)-1]]++
	}
	sort.Ints(sizes)
	n := float64(len(ms))
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-50s %5d  %5.1f%%", k, count[k], 100*float64(count[k])/n)
	}
	t.Logf("sizes: median %d, 90th %d, 99th %d, max %d", sizes[len(sizes)/2], sizes[len(sizes)*9/10], sizes[len(sizes)*99/100], sizes[len(sizes)-1])
	within := func(k string, lo, hi float64) {
		if f := float64(count[k]) / n; f < lo || f > hi {
			t.Errorf("%s: %.1f%%, want %.0f–%.0f%%", k, 100*f, 100*lo, 100*hi)
		}
	}
	within(`\Seen`, 0.6, 0.8)
	within(`\Flagged`, 0.02, 0.08)
	within(`\Answered`, 0.05, 0.15)
	within("multipart/mixed", 0.05, 0.25)
	within("multipart/alternative", 0.15, 0.5)
	within("html only", 0.02, 0.2)
	within("plain only", 0.2, 0.6)
	within("Content-Transfer-Encoding: quoted-printable", 0.2, 0.9)
	within("Content-Transfer-Encoding: 7bit", 0.2, 0.9)
	within("filename*=UTF-8''", 0.002, 0.05)
	for _, f := range DefaultFolders {
		within("folder "+f, 0.01, 0.6)
	}
	for _, cs := range []string{csUTF8, csLatin1, csLatin9, csWindows1252, csKOI8R, csISO2022JP, csShiftJIS} {
		if count["charset "+cs] < 3 {
			t.Errorf("only %d messages have %s encoded words", count["charset "+cs], cs)
		}
	}
	if count["=?UTF-8?B"] == 0 || count["=?UTF-8?Q"] == 0 {
		t.Error("UTF-8 encoded words not seen in both B and Q forms")
	}
	if m := sizes[len(sizes)/2]; m < 1000 || m > 5000 {
		t.Errorf("median message is %d bytes, want 1–5 KB", m)
	}
	if sizes[len(sizes)-1] > 1<<20 || sizes[len(sizes)*99/100] < 10_000 {
		t.Errorf("largest messages: 99th percentile %d, max %d bytes", sizes[len(sizes)*99/100], sizes[len(sizes)-1])
	}
	for w, c := range unique {
		if c != 1 {
			t.Fatalf("unique body word %q in %d messages", w, c)
		}
	}
}

func TestOptions(t *testing.T) {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := Generate(Options{Seed: 3, Messages: 400, Folders: []string{"INBOX", "Sent", "Lists/Go", "Old"}, Start: start})
	folders := map[string]int{}
	for _, m := range ms {
		folders[m.Folder]++
		if m.Date.Before(start) || m.Date.After(start.AddDate(2, 0, 0)) {
			t.Fatalf("date %v outside the two years after %v", m.Date, start)
		}
	}
	if len(folders) != 4 {
		t.Errorf("messages in folders %v, want all four", folders)
	}
	ms = Generate(Options{Seed: 3, Messages: 10})
	if ms[0].Date.Before(DefaultStart) {
		t.Errorf("first date %v is before the default start", ms[0].Date)
	}
}

package caldav

import (
	"encoding/xml"
	"io"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// doc is a multistatus of two objects whose text holds text.
func doc(text string) string {
	return `<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">` +
		`<D:response><D:href>/a.ics</D:href><D:propstat><D:prop><C:calendar-data>SUMMARY:` + text + `</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>` +
		`<D:response><D:href>/b.ics</D:href><D:propstat><D:prop><C:calendar-data>SUMMARY:fine</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>` +
		`</D:multistatus>`
}

func decodeFiltered(t *testing.T, s string) (*multistatus, []removed) {
	t.Helper()
	f := newCharFilter(strings.NewReader(s), true)
	dec := xml.NewDecoder(f)
	var ms multistatus
	var rs []removed
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("decoding %q: %v", s, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "response" {
			f.take()
			var r response
			if err := dec.DecodeElement(&r, &se); err != nil {
				t.Fatalf("decoding %q: %v", s, err)
			}
			rs = append(rs, f.take())
			ms.Responses = append(ms.Responses, r)
		}
	}
	return &ms, rs
}

// TestCharFilter: what encoding/xml refuses (raw controls, U+FFFE/U+FFFF, bytes that are not
// UTF-8, references to such characters) is left out, only from the object that held it, and
// what it allows is kept as it was.
func TestCharFilter(t *testing.T) {
	for _, c := range []struct {
		in, want string
		n        int
		named    string
	}{
		{"Bell\x07 tab\x0b esc\x1b[31m", "Bell tab esc[31m", 3, "U+0007, U+000B and U+001B"},
		{"nul\x00", "nul", 1, "U+0000"},
		{"refs &#7;&#x1b;&#x1B;&#0000011;&#xFFFE;&#xffff;&#xD800;&#1114112;", "refs ", 8, "U+0007, U+001B, U+000B, U+FFFE, U+FFFF and U+D800"},
		{"kept &#9;&#x41;&#233;&amp;&lt;&#x1F600;", "kept \tAé&<😀", 0, "nothing"},
		{"non-chars \uFFFE\uFFFF ok", "non-chars  ok", 2, "U+FFFE and U+FFFF"},
		{"latin1 caf\xe9 and \xed\xa0\x80 surrogate", "latin1 caf\uFFFD and \uFFFD surrogate", 4, "bytes that are not UTF-8"},
		{"<![CDATA[cdata keeps &#7; but not \x07]]> after &#7;", "cdata keeps &#7; but not  after ", 2, "U+0007"},
		{"<!-- &#7; --> x", " x", 0, "nothing"},
	} {
		ms, rs := decodeFiltered(t, doc(c.in))
		if len(ms.Responses) != 2 {
			t.Fatalf("%q: %d responses", c.in, len(ms.Responses))
		}
		if got := ms.Responses[0].found().CalendarData; got != "SUMMARY:"+c.want {
			t.Errorf("%q: decoded %q; want %q", c.in, got, "SUMMARY:"+c.want)
		}
		if rs[0].n != c.n || rs[0].describe() != c.named {
			t.Errorf("%q: removed %d (%s); want %d (%s)", c.in, rs[0].n, rs[0].describe(), c.n, c.named)
		}
		if rs[1].n != 0 || ms.Responses[1].found().CalendarData != "SUMMARY:fine" {
			t.Errorf("%q: the second object was touched: %+v", c.in, rs[1])
		}
	}
	// Without the filter the same answer is refused, which is why it is there.
	if err := xml.Unmarshal([]byte(doc("Bell\x07")), new(multistatus)); err == nil {
		t.Errorf("encoding/xml read a raw BEL; the filter is not needed any more?")
	}
	if err := xml.Unmarshal([]byte(doc("&#7;")), new(multistatus)); err == nil {
		t.Errorf("encoding/xml read &#7;")
	}
}

// TestCharFilterAnyText: whatever bytes an object's text holds, the answer decodes and keeps
// every character XML allows.
func TestCharFilterAnyText(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"\x00", "\x07", "\x0b", "\x1b", "\x7f", "\u0085", "\uFFFE", "\uFFFF", "\xed\xa0\x80", "\xff", "\xc3", "é", "&#7;", "&#x1b;", "&#65;", "&amp;", "a", " ", "\t", "\r\n", "\U0001F600", "&#xFFFE;", "]]", "<![CDATA[x]]>"}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.Intn(20); j > 0; j-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		text := b.String()
		ms, _ := decodeFiltered(t, doc(text))
		if got := ms.Responses[0].found().CalendarData; !utf8.ValidString(got) {
			t.Errorf("%q decoded to invalid UTF-8 %q", text, got)
		}
	}
}

// TestCleanText: an object's text read with GET loses the same characters, and &#7; there is
// text, not a reference.
func TestCleanText(t *testing.T) {
	out, r := cleanText([]byte("SUMMARY:a\x07b &#7;\r\n"))
	if string(out) != "SUMMARY:ab &#7;\r\n" || r.n != 1 {
		t.Errorf("cleanText: %q, %d removed", out, r.n)
	}
	in := []byte("SUMMARY:plain\r\n")
	if out, r := cleanText(in); &out[0] != &in[0] || r.n != 0 {
		t.Errorf("clean text was copied or changed")
	}
}

package mailparse

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// Kinds of body text, in order of preference.
const (
	kindNone = iota
	kindOther
	kindHTML
	kindPlain
)

type bodyText struct {
	text      string
	kind      int
	truncated bool
}

// entity is what walk needs from one header block.
type entity struct {
	ctype     string // lower-cased type/subtype
	params    map[string]string
	disp      string
	dparams   map[string]string
	cte       string
	contentID bool
}

func (p *parser) readEntity(fs fields, defaultType string) entity {
	var e entity
	if raw, ok := fs.get("Content-Type"); ok {
		e.ctype, e.params = parseParams(p.text("Content-Type", raw))
		if i := strings.IndexByte(e.ctype, '/'); i <= 0 || i == len(e.ctype)-1 || strings.ContainsAny(e.ctype, " \t\"") {
			if e.ctype != "" {
				p.problem("Content-Type %q is not a media type; the part was read as %s.", e.ctype, defaultType)
			}
			e.ctype = defaultType
		}
	} else {
		e.ctype, e.params = defaultType, map[string]string{}
	}
	if raw, ok := fs.get("Content-Disposition"); ok {
		e.disp, e.dparams = parseParams(p.text("Content-Disposition", raw))
	} else {
		e.dparams = map[string]string{}
	}
	if raw, ok := fs.get("Content-Transfer-Encoding"); ok {
		e.cte = strings.ToLower(strings.Trim(strings.TrimSpace(string(raw)), `"`))
	}
	_, e.contentID = fs.get("Content-ID")
	return e
}

// filename returns the decoded file name of the entity, "" when it has none.
func (p *parser) filename(e entity) string {
	name := e.dparams["filename"]
	if name == "" {
		name = e.params["name"]
	}
	name = strings.TrimSpace(p.decodeWords("filename", name))
	if utf8Raw := []byte(name); !utf8.Valid(utf8Raw) {
		name, _ = decodeCharset("windows-1252", utf8Raw)
	}
	return name
}

// walk reads one entity's body and returns its text; attachments are added to the Message.
func (p *parser) walk(fs fields, body io.Reader, depth int, defaultType string) bodyText {
	p.parts++
	e := p.readEntity(fs, defaultType)
	if p.parts > maxParts {
		if p.parts == maxParts+1 {
			p.problem("The message has more than %d parts; the rest were skipped.", maxParts)
		}
		return bodyText{}
	}
	major := e.ctype[:strings.IndexByte(e.ctype, '/')]

	if major == "multipart" && e.disp != "attachment" {
		b := e.params["boundary"]
		switch {
		case b == "":
			p.problem("A multipart part has no boundary; it was read as text.")
			e.ctype, major = "text/plain", "text"
		case len(b) > maxBoundaryLen:
			p.problem("A multipart boundary is longer than %d characters; the part was skipped.", maxBoundaryLen)
			return bodyText{}
		case depth >= maxDepth:
			p.problem("Multiparts are nested more than %d deep; the inner ones were skipped.", maxDepth)
			return bodyText{}
		default:
			return p.multipart(e, b, body, depth)
		}
	}

	dec := p.transferDecoder(e, body)
	name := p.filename(e)
	isText := major == "text"
	isMessage := e.ctype == "message/rfc822" || e.ctype == "message/global"
	attach := e.disp == "attachment" || isMessage ||
		(!isText && name != "") ||
		(!isText && e.disp != "inline" && !e.contentID)
	if attach {
		if p.want != nil && p.want.index == len(p.msg.Attachments) && len(p.msg.Attachments) < maxAttachments {
			p.keep(e, dec, name, isMessage)
			return bodyText{}
		}
		var n counter
		if isMessage {
			cr := &countingReader{r: dec}
			br := bufio.NewReaderSize(cr, 4096)
			sub := &parser{msg: &Message{}}
			subFields, _ := sub.readHeader(br, nil)
			if name == "" {
				if raw, ok := subFields.get("Subject"); ok {
					sub.hdrSet = headerCharset(subFields)
					name = sub.decodeField("Subject", raw)
				}
			}
			_, _ = io.Copy(io.Discard, br)
			n = counter(cr.n)
		} else if isCalendarPart(e.ctype, name) {
			n = counter(p.keepCalendar(e, dec)) // an invitation attached (calendar.go)
		} else if b64, ok := dec.(*b64Reader); ok {
			n = counter(b64.size()) // only the size is kept: no need to decode
		} else {
			_, _ = io.Copy(&n, dec)
		}
		if len(p.msg.Attachments) < maxAttachments {
			p.msg.Attachments = append(p.msg.Attachments, Attachment{Name: name, ContentType: e.ctype, Size: int64(n)})
		}
		p.checkDecoder(dec, name, e.ctype)
		return bodyText{}
	}
	if !isText {
		if isCalendarPart(e.ctype, name) {
			p.keepCalendar(e, dec)
		}
		_, _ = io.Copy(io.Discard, dec)
		p.checkDecoder(dec, name, e.ctype)
		return bodyText{}
	}
	limit := MaxText
	kind := kindOther
	switch e.ctype {
	case "text/plain":
		kind = kindPlain
	case "text/html":
		kind, limit = kindHTML, maxHTMLInput
	}
	raw, cut := readCapped(dec, limit)
	p.checkDecoder(dec, name, e.ctype)
	if e.ctype == "text/calendar" {
		p.noteCalendar(e, raw, cut) // an invitation inline (calendar.go)
	}
	cs := e.params["charset"]
	if kind == kindHTML && vagueCharsets[normCharset(cs)] && !utf8.Valid(raw) {
		if m := metaCharset(raw); m != "" {
			cs = m
		}
	}
	if !knownCharset(cs) {
		p.problem("A %s part uses unknown charset %q; its bytes were kept as they are.", e.ctype, cs)
	}
	s, _ := decodeCharset(cs, raw)
	bt := bodyText{kind: kind, truncated: cut}
	if kind == kindHTML {
		s, cut = p.htmlText(s)
		bt.truncated = bt.truncated || cut
	} else {
		s = normalizeNewlines(s)
	}
	if len(s) > MaxText {
		s = truncateUTF8(s, MaxText)
		bt.truncated = true
	}
	bt.text = s
	return bt
}

func (p *parser) multipart(e entity, boundary string, body io.Reader, depth int) bodyText {
	mr := newMultipartReader(body, boundary)
	childDefault := "text/plain"
	if e.ctype == "multipart/digest" {
		childDefault = "message/rfc822"
	}
	var kids []bodyText
	var best bodyText
	for mr.next() {
		pf, rest := p.readHeader(mr.br, mr.dash)
		bt := p.walk(pf, bodyReader2(rest, mr.cur), depth+1, childDefault)
		if bt.kind == kindNone {
			continue
		}
		switch e.ctype {
		case "multipart/alternative":
			if bt.kind > best.kind {
				best = bt
			}
		case "multipart/related":
			if best.kind == kindNone {
				best = bt
			}
		default:
			if bt.kind > best.kind {
				kids = kids[:0]
				best.kind = bt.kind
			}
			if bt.kind == best.kind {
				kids = append(kids, bt)
			}
		}
	}
	switch {
	case !mr.found:
		p.problem("The MIME boundary of a %s part never appears; its content was read as text.", e.ctype)
		if len(bytes.TrimSpace(mr.preamble)) > 0 {
			s, _ := decodeCharset(e.params["charset"], mr.preamble)
			return bodyText{text: normalizeNewlines(s), kind: kindOther}
		}
	case !mr.closed:
		p.problem("A %s part ends without its closing MIME boundary.", e.ctype)
	}
	_, _ = io.Copy(io.Discard, mr.br)
	if len(kids) > 0 {
		return joinTexts(kids)
	}
	return best
}

func joinTexts(kids []bodyText) bodyText {
	out := bodyText{kind: kids[0].kind}
	var b strings.Builder
	for _, k := range kids {
		out.truncated = out.truncated || k.truncated
		t := strings.TrimRight(k.text, "\n")
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if b.Len()+len(t) > MaxText {
			b.WriteString(truncateUTF8(t, MaxText-b.Len()))
			out.truncated = true
			break
		}
		b.WriteString(t)
	}
	out.text = b.String()
	return out
}

func bodyReader2(rest []byte, r io.Reader) io.Reader {
	if len(rest) == 0 {
		return r
	}
	return io.MultiReader(bytes.NewReader(rest), r)
}

func (p *parser) transferDecoder(e entity, body io.Reader) io.Reader {
	switch e.cte {
	case "base64":
		return newB64Reader(body)
	case "quoted-printable":
		return newQPReader(body)
	case "", "7bit", "8bit", "binary", "7-bit", "8-bit":
		return body
	}
	p.problem("Content-Transfer-Encoding %q is unknown; the part was read as it is.", e.cte)
	return body
}

func (p *parser) checkDecoder(dec io.Reader, name, ctype string) {
	if d, ok := dec.(*b64Reader); ok && d.bad > 0 {
		what := ctype
		if name != "" {
			what = `"` + name + `"`
		}
		p.problem("The base64 of %s has invalid characters; they were skipped.", what)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readCapped reads at most limit bytes of r; cut reports that r had more.
func readCapped(r io.Reader, limit int) (b []byte, cut bool) {
	b, _ = io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if len(b) > limit {
		return b[:limit], true
	}
	return b, false
}

func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// metaCharset finds <meta charset=...> or http-equiv content charset in the head of an HTML part.
func metaCharset(b []byte) string {
	head := bytes.ToLower(b[:min(len(b), 4096)])
	i := bytes.Index(head, []byte("charset="))
	if i < 0 {
		return ""
	}
	v := head[i+len("charset="):]
	v = bytes.TrimLeft(v, `"' `)
	end := bytes.IndexAny(v, `"'; />`)
	if end < 0 {
		return ""
	}
	return string(v[:end])
}

package corpus

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"math"
	"math/rand/v2"
	"mime/quotedprintable"
	"strings"
	"time"
)

const dateLayout = "Mon, 02 Jan 2006 15:04:05 -0700"

// subject is the decoded subject of a thread's first message.
func (g *gen) subject(i int) string {
	e := g.plan[i]
	r := g.stream(i, streamSubject)
	switch e.kind {
	case kList:
		l := lists[e.other]
		switch r.IntN(3) {
		case 0:
			return fmt.Sprintf("%s: issue %d", l.name, 1+r.IntN(400))
		case 1:
			return fmt.Sprintf("This week: %s and %s", pick(r, projects), pick(r, topics))
		}
		return fmt.Sprintf("Your %s picks for %s", l.name, pick(r, months))
	case kOrg:
		o := orgs[e.other]
		switch r.IntN(5) {
		case 0:
			return fmt.Sprintf("Invoice %d from %s", 10000+r.IntN(90000), o.name)
		case 1:
			return fmt.Sprintf("Your receipt from %s", o.name)
		case 2:
			return fmt.Sprintf("Your order %d has shipped", 100000+r.IntN(900000))
		case 3:
			return fmt.Sprintf("Reminder: appointment on %s", pick(r, days))
		}
		return fmt.Sprintf("Your %s statement is ready", pick(r, months))
	}
	if r.Float64() < 0.15 {
		return pick(r, nonASCIISubjects)
	}
	switch r.IntN(10) {
	case 0:
		return fmt.Sprintf("Quarterly report for %s", pick(r, projects))
	case 1:
		return fmt.Sprintf("Lunch on %s?", pick(r, days))
	case 2:
		return fmt.Sprintf("Notes from the %s meeting", pick(r, projects))
	case 3:
		return fmt.Sprintf("Question about %s", pick(r, topics))
	case 4:
		return fmt.Sprintf("%s kickoff", pick(r, projects))
	case 5:
		return fmt.Sprintf("Updated draft: %s", pick(r, topics))
	case 6:
		return fmt.Sprintf("Can we move our call to %s?", pick(r, days))
	case 7:
		return "Photos from the weekend"
	case 8:
		return fmt.Sprintf("Travel plans for %s", pick(r, months))
	}
	return fmt.Sprintf("Thoughts on %s for %s", pick(r, topics), pick(r, projects))
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func sentence(r *rand.Rand, extra []string) string {
	n := 6 + r.IntN(9)
	words := make([]string, n, n+len(extra))
	for k := range words {
		words[k] = pick(r, vocabulary)
	}
	for _, w := range extra {
		at := 1 + r.IntN(len(words)) // never first: it would be capitalised
		words = append(words, "")
		copy(words[at+1:], words[at:])
		words[at] = w
	}
	s := strings.Join(words, " ")
	end := "."
	if r.IntN(6) == 0 {
		end = "?"
	}
	return strings.ToUpper(s[:1]) + s[1:] + end
}

func paragraph(r *rand.Rand, extra []string) string {
	n := 2 + r.IntN(3)
	ss := make([]string, n)
	for k := range ss {
		var e []string
		if k == n-1 {
			e = extra
		}
		ss[k] = sentence(r, e)
	}
	return strings.Join(ss, " ")
}

// firstParagraph is what replies quote; it never carries body words, so a
// message's unique word stays in that message alone.
func (g *gen) firstParagraph(i int) string {
	return paragraph(g.stream(i, streamPara), nil)
}

// wrap breaks text into lines of at most width bytes (longer words stand alone).
func wrap(text string, width int) []string {
	var lines []string
	start, end := -1, -1 // current line is text[start:end]
	for i := 0; i <= len(text); {
		for i < len(text) && text[i] == ' ' {
			i++
		}
		if i == len(text) {
			break
		}
		j := i
		for j < len(text) && text[j] != ' ' {
			j++
		}
		switch {
		case start < 0:
			start = i
		case j-start > width:
			lines = append(lines, text[start:end])
			start = i
		}
		end, i = j, j
	}
	if start >= 0 {
		lines = append(lines, text[start:end])
	}
	return lines
}

// body is a message text before rendering to text/plain or text/html.
type body struct {
	greeting    string
	paras       []string
	links       []string // newsletter links, one per paragraph after the first
	signoff     []string
	quoteHeader string
	quote       string
}

func (b *body) plain() string {
	var sb strings.Builder
	line := func(s string) { sb.WriteString(s); sb.WriteString("\r\n") }
	if b.greeting != "" {
		line(b.greeting)
		line("")
	}
	for k, p := range b.paras {
		for _, l := range wrap(p, 72) {
			line(l)
		}
		if k > 0 && k-1 < len(b.links) {
			line(b.links[k-1])
		}
		line("")
	}
	for _, s := range b.signoff {
		line(s)
	}
	if b.quoteHeader != "" {
		line("")
		line(b.quoteHeader)
		for _, l := range wrap(b.quote, 70) {
			line("> " + l)
		}
	}
	return sb.String()
}

func (b *body) html() string {
	var sb strings.Builder
	line := func(s string) { sb.WriteString(s); sb.WriteString("\r\n") }
	line(`<!DOCTYPE html>`)
	line(`<html><head><meta charset="utf-8"></head>`)
	line(`<body style="font-family: sans-serif">`)
	if b.greeting != "" {
		line("<p>" + html.EscapeString(b.greeting) + "</p>")
	}
	for k, p := range b.paras {
		sb.WriteString("<p>")
		for n, l := range wrap(html.EscapeString(p), 72) {
			if n > 0 {
				sb.WriteString("\r\n")
			}
			sb.WriteString(l)
		}
		line("</p>")
		if k > 0 && k-1 < len(b.links) {
			u := html.EscapeString(b.links[k-1])
			line(`<p><a href="` + u + `">Read more</a></p>`)
		}
	}
	sb.WriteString("<p>")
	for n, s := range b.signoff {
		if n > 0 {
			sb.WriteString("<br>\r\n")
		}
		sb.WriteString(html.EscapeString(s))
	}
	line("</p>")
	if b.quoteHeader != "" {
		line("<div>" + html.EscapeString(b.quoteHeader) + "</div>")
		line("<blockquote>")
		for _, l := range wrap(html.EscapeString(b.quote), 72) {
			line(l)
		}
		line("</blockquote>")
	}
	line("</body></html>")
	return sb.String()
}

type shape uint8

const (
	shapePlain shape = iota
	shapeAlt
	shapeHTML
	shapeMixed
)

// chooseShape picks the MIME structure; the probabilities are per kind.
func chooseShape(r *rand.Rand, e entry) shape {
	x := r.Float64()
	at := func(ps ...float64) shape {
		for k, p := range ps {
			if x < p {
				return shape(k)
			}
			x -= p
		}
		return shapeMixed
	}
	switch {
	case e.kind == kList:
		return at(0, 0.65, 0.35)
	case e.kind == kOrg:
		return at(0.25, 0.35, 0.1)
	case e.kind == kDraft:
		return at(0.8, 0.2, 0)
	case e.parent >= 0:
		return at(0.6, 0.32, 0.03)
	}
	return at(0.55, 0.27, 0.05)
}

type header struct{ name, value string }

// message builds message i.
func (g *gen) message(i int) *Message {
	e := g.plan[i]
	r := g.stream(i, streamMain)
	m := &Message{Folder: g.folders[e.folder], Date: g.date(i), MessageID: g.messageID(i)}
	fromName, fromFirst, fromEmail := g.sender(i)
	m.FromName, m.FromEmail = fromName, fromEmail

	// Recipients.
	type rcpt struct{ name, first, email string }
	var to []rcpt
	if e.fromOwner() {
		p := people[e.other]
		to = append(to, rcpt{p.name, p.first, p.email})
	} else {
		to = append(to, rcpt{OwnerName, "Sam", OwnerEmail})
	}
	if e.kind != kList && e.kind != kOrg && r.Float64() < 0.15 {
		p := people[r.IntN(len(people))]
		if p.email != to[0].email {
			to = append(to, rcpt{p.name, p.first, p.email})
		}
	}
	for _, t := range to {
		m.To = append(m.To, t.email)
	}

	// Subject and thread.
	if e.parent >= 0 {
		m.Subject = "Re: " + g.subject(int(e.root))
		m.InReplyTo = g.messageID(int(e.parent))
		var chain []int
		for k := int(e.parent); k >= 0; k = int(g.plan[k].parent) {
			chain = append(chain, k)
		}
		for k := len(chain) - 1; k >= 0; k-- {
			m.References = append(m.References, g.messageID(chain[k]))
		}
	} else {
		m.Subject = g.subject(i)
	}

	// Flags.
	seen, flagged, answered := false, false, e.answered
	switch {
	case e.fromOwner():
		seen = true
	case e.kind == kList:
		seen = r.Float64() < 0.4
	default:
		seen = r.Float64() < 0.6
	}
	seen = seen || answered
	flagged = e.kind != kDraft && r.Float64() < 0.05
	if answered {
		m.Flags = append(m.Flags, `\Answered`)
	}
	if flagged {
		m.Flags = append(m.Flags, `\Flagged`)
	}
	if seen {
		m.Flags = append(m.Flags, `\Seen`)
	}

	// Body.
	m.BodyWords = append(m.BodyWords, pick(r, distinctive))
	if r.IntN(2) == 0 {
		m.BodyWords = append(m.BodyWords, pick(r, distinctive))
	}
	m.BodyWords = append(m.BodyWords, uniqueWord(i))
	var b body
	switch e.kind {
	case kOrg:
		b.greeting = "Dear " + OwnerName + ","
		b.paras = append(b.paras, g.firstParagraph(i),
			fmt.Sprintf("Amount: %d.%02d EUR. Reference: %s-%d.", 5+r.IntN(900), r.IntN(100), strings.ToUpper(domainOf(fromEmail)[:3]), 1000+r.IntN(9000)),
			paragraph(r, m.BodyWords))
		b.signoff = []string{"The " + fromName + " team"}
	case kList:
		l := lists[e.other]
		b.paras = append(b.paras, g.firstParagraph(i))
		n := 3 + r.IntN(3)
		for k := range n {
			var words []string
			if k == n-1 {
				words = m.BodyWords
			}
			b.paras = append(b.paras, paragraph(r, words))
			b.links = append(b.links, fmt.Sprintf("https://%s/issue/%d/item/%d", domainOf(l.email), i, k+1))
		}
		b.signoff = []string{"You receive this because you subscribed to " + l.name + ".",
			"Unsubscribe: https://" + domainOf(l.email) + "/unsubscribe?u=" + hex64(g.hash(i, streamSubject))[:12]}
	default:
		b.greeting = pick(r, []string{"Hi ", "Hello ", "Dear ", ""}) + to[0].first + ","
		if !isASCII(m.Subject) && r.IntN(2) == 0 {
			b.paras = append(b.paras, m.Subject)
		}
		b.paras = append(b.paras, g.firstParagraph(i))
		n := 1 + r.IntN(3)
		for k := range n {
			var words []string
			if k == n-1 {
				words = m.BodyWords
			}
			b.paras = append(b.paras, paragraph(r, words))
		}
		b.signoff = []string{pick(r, []string{"Best,", "Thanks,", "Cheers,", "Regards,"}), fromFirst}
		if e.parent >= 0 {
			pName, _, _ := g.sender(int(e.parent))
			pd := g.date(int(e.parent))
			b.quoteHeader = fmt.Sprintf("On %s at %s, %s wrote:", pd.Format("Mon, 2 Jan 2006"), pd.Format("15:04"), pName)
			b.quote = g.firstParagraph(int(e.parent))
		}
	}

	// Headers.
	var hs []header
	if !e.fromOwner() {
		hs = append(hs, header{"Return-Path", "<" + fromEmail + ">"})
		relay := domainOf(fromEmail)
		ip := fmt.Sprintf("%s.%d", pick(r, []string{"192.0.2", "198.51.100", "203.0.113"}), 1+r.IntN(254))
		hs = append(hs,
			header{"Received", fmt.Sprintf("from mx.example.com (mx.example.com [192.0.2.25])\r\n\tby imap.example.com with LMTP id %s\r\n\tfor <%s>; %s", hex64(r.Uint64())[:12], OwnerEmail, m.Date.Add(3*time.Second).Format(dateLayout))},
			header{"Received", fmt.Sprintf("from out.%s (out.%s [%s])\r\n\tby mx.example.com (Postfix) with ESMTPS id %s\r\n\tfor <%s>; %s", relay, relay, ip, strings.ToUpper(hex64(r.Uint64())[:10]), OwnerEmail, m.Date.Add(2*time.Second).Format(dateLayout))},
		)
	}
	hs = append(hs,
		header{"Date", m.Date.Format(dateLayout)},
		header{"From", encodeAddress(r, fromName, fromEmail)},
	)
	var toVals []string
	for _, t := range to {
		toVals = append(toVals, encodeAddress(r, t.name, t.email))
	}
	hs = append(hs,
		header{"To", strings.Join(toVals, ",\r\n ")},
		header{"Subject", encodeText(r, m.Subject)},
		header{"Message-ID", "<" + m.MessageID + ">"},
	)
	if m.InReplyTo != "" {
		hs = append(hs, header{"In-Reply-To", "<" + m.InReplyTo + ">"})
		hs = append(hs, header{"References", "<" + strings.Join(m.References, ">\r\n <") + ">"})
	}
	if e.kind == kList {
		l := lists[e.other]
		d := domainOf(l.email)
		hs = append(hs,
			header{"List-Id", fmt.Sprintf("%s <%s>", l.name, l.id)},
			header{"List-Unsubscribe", fmt.Sprintf("<mailto:unsubscribe@%s?subject=unsubscribe>,\r\n <https://%s/unsubscribe?u=%s>", d, d, hex64(g.hash(i, streamSubject))[:12])},
			header{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"},
			header{"Precedence", "bulk"},
		)
	}
	if e.kind == kDraft {
		hs = append(hs, header{"X-Mozilla-Draft-Info", "internal/draft; vcard=0; receipt=0"})
	}
	hs = append(hs, header{"MIME-Version", "1.0"})

	// Structure.
	// Attachments first, so the buffer is sized once.
	shp := chooseShape(r, e)
	type att struct {
		a      Attachment
		data   []byte
		params string
	}
	var atts []att
	plain, htm := b.plain(), b.html()
	need := 2048 + 2*(len(plain)+len(htm))
	if shp == shapeMixed {
		for k := range 1 + r.IntN(3) {
			a, data, params := g.attachment(r, i, k, e, m.Date, m.Subject)
			atts = append(atts, att{a, data, params})
			m.Attachments = append(m.Attachments, a)
			need += 400 + int(base64Len(int64(len(data))))
		}
	}
	var w bytes.Buffer
	w.Grow(need)
	for _, h := range hs {
		w.WriteString(h.name)
		w.WriteString(": ")
		w.WriteString(h.value)
		w.WriteString("\r\n")
	}
	bnd := func(k int) string {
		return fmt.Sprintf("=_corpus_%s_%d", hex64(g.hash(i, streamMain+uint64(k)<<8))[:10], k)
	}
	writeText := func(sub, text string) {
		qp := !isASCII(text) || r.IntN(3) == 0 || sub == "html"
		cs := "utf-8"
		if !qp && r.IntN(2) == 0 {
			cs = "us-ascii"
		}
		fmt.Fprintf(&w, "Content-Type: text/%s; charset=%s\r\n", sub, cs)
		if qp {
			w.WriteString("Content-Transfer-Encoding: quoted-printable\r\n\r\n")
			qw := quotedprintable.NewWriter(&w)
			qw.Write([]byte(text))
			qw.Close()
			if !bytes.HasSuffix(w.Bytes(), []byte("\r\n")) {
				w.WriteString("\r\n")
			}
			return
		}
		w.WriteString("Content-Transfer-Encoding: 7bit\r\n\r\n")
		w.WriteString(text)
	}
	writeAlt := func(k int) {
		bd := bnd(k)
		fmt.Fprintf(&w, "Content-Type: multipart/alternative;\r\n boundary=\"%s\"\r\n\r\n", bd)
		w.WriteString("--" + bd + "\r\n")
		writeText("plain", plain)
		w.WriteString("--" + bd + "\r\n")
		writeText("html", htm)
		w.WriteString("--" + bd + "--\r\n")
	}
	switch shp {
	case shapePlain:
		writeText("plain", plain)
	case shapeHTML:
		writeText("html", htm)
	case shapeAlt:
		writeAlt(1)
	case shapeMixed:
		bd := bnd(0)
		fmt.Fprintf(&w, "Content-Type: multipart/mixed;\r\n boundary=\"%s\"\r\n\r\n", bd)
		w.WriteString("This is a multi-part message in MIME format.\r\n")
		w.WriteString("--" + bd + "\r\n")
		if r.IntN(5) < 3 {
			writeText("plain", plain)
		} else {
			writeAlt(1)
		}
		for _, at := range atts {
			a, data, params := at.a, at.data, at.params
			w.WriteString("--" + bd + "\r\n")
			if isASCII(a.Name) {
				fmt.Fprintf(&w, "Content-Type: %s%s; name=\"%s\"\r\n", a.ContentType, params, a.Name)
				fmt.Fprintf(&w, "Content-Disposition: attachment; filename=\"%s\"; size=%d\r\n", a.Name, a.Size)
			} else {
				fmt.Fprintf(&w, "Content-Type: %s%s;\r\n name*=%s\r\n", a.ContentType, params, rfc2231(a.Name))
				fmt.Fprintf(&w, "Content-Disposition: attachment;\r\n filename*=%s;\r\n size=%d\r\n", rfc2231(a.Name), a.Size)
			}
			w.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
			writeBase64(&w, data)
		}
		w.WriteString("--" + bd + "--\r\n")
	}
	m.Raw = w.Bytes()
	return m
}

// encodeAddress renders name <email>, encoding a non-ASCII name in a
// charset picked from those that can carry it.
func encodeAddress(r *rand.Rand, name, email string) string {
	if isASCII(name) {
		return address(name, email, csUTF8, 'B')
	}
	cs, enc := pickEncoding(r, name)
	return address(name, email, cs, enc)
}

func encodeText(r *rand.Rand, s string) string {
	if isASCII(s) {
		return s
	}
	cs, enc := pickEncoding(r, s)
	return headerText(s, cs, enc)
}

func pickEncoding(r *rand.Rand, s string) (string, byte) {
	cs := pick(r, charsetsFor(s))
	enc := byte('B')
	if cs != csISO2022JP && r.IntN(2) == 0 {
		enc = 'Q'
	}
	return cs, enc
}

// writeBase64 writes data base64-encoded in lines of 76 characters.
func writeBase64(w *bytes.Buffer, data []byte) {
	var line [78]byte
	for len(data) > 0 {
		n := min(len(data), 57)
		k := base64.StdEncoding.EncodedLen(n)
		base64.StdEncoding.Encode(line[:], data[:n])
		line[k], line[k+1] = '\r', '\n'
		w.Write(line[:k+2])
		data = data[n:]
	}
}

// attachmentSize is log-uniform between 100 B and 200 KB.
func attachmentSize(r *rand.Rand) int {
	return int(math.Exp(math.Log(100) + r.Float64()*(math.Log(200_000)-math.Log(100))))
}

package compose

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Original is the message being replied to or forwarded, as the store knows it. Nothing in it
// is trusted: it was written by whoever sent it.
type Original struct {
	MessageID  string   // without angle brackets, or "" when it had none
	References []string // its References, oldest first, without brackets
	InReplyTo  string
	From       []Address
	ReplyTo    []Address
	To, Cc     []Address
	Subject    string
	Date       time.Time
	Text       string // its plain text body, possibly empty
}

// humanDate is how a date is written in an attribution line and a forwarded message.
const humanDate = "Mon, 2 Jan 2006 15:04 -0700"

// Reply builds a reply (all false) or a reply-all to orig, from the person whose addresses are
// own (compared case-insensitively; own[0] is the From).
//
// Recipients: the original's Reply-To, or its From when it has none; for a reply-all, also
// every To (into To) and Cc (into Cc) of the original. None of own, each address once. When
// that leaves nobody (a reply to one's own message), the original's To, minus own. extraTo and
// extraCc are added last (own addresses allowed there: the agent asked for them); it is an error
// only when there is still nobody.
//
// Subject: "Re: " and the original subject without its chain of reply prefixes: "Re", "Aw"
// (German), "Sv" (Scandinavian), "Antw" (Dutch), "Rif" (Italian), "Odp" (Polish), "回复", "答复"
// (Chinese), in any case, each optionally numbered ("Re[2]", "Re(2)") and followed by ':' or
// '：', possibly after a space ("RE : "). Forward prefixes stay ("Re: Fwd: x"). An empty subject
// gives "Re:".
//
// Thread: In-Reply-To is the original's Message-ID; References is the original's References
// (or its In-Reply-To when it has none) then its Message-ID, each once, cut to the first and the
// last 19 when longer than 20.
//
// Body: body, a blank line, "On <date>, <name or address> wrote:" and the original text with
// "> " before each line (">" alone on blank lines, ">" before a line already quoted), cut after
// 200 lines with a "> [...]" line. Without original text, just body.
func Reply(orig Original, own []Address, all bool, body string, extraTo, extraCc []Address) (Message, error) {
	if len(own) == 0 {
		return Message{}, refuse("from", "is missing: give at least one of the person's own addresses")
	}
	if err := CheckBody(body); err != nil {
		return Message{}, err
	}
	mine := map[string]bool{}
	for _, a := range own {
		mine[key(a.Addr)] = true
	}
	sender, senderField := orig.ReplyTo, "original.reply_to"
	if len(sender) == 0 {
		sender, senderField = orig.From, "original.from"
	}
	var to, cc []Address
	seen := map[string]bool{}
	// add appends list to dst: addresses of the original (fromOrig) are cleaned and never one
	// of own; the agent's must already be right.
	add := func(dst *[]Address, field string, list []Address, fromOrig bool) error {
		for i, a := range list {
			f := fmt.Sprintf("%s[%d]", field, i)
			if fromOrig {
				var err error
				if a, err = fromOriginal(f, a); err != nil {
					return err
				}
			} else if err := a.check(f); err != nil {
				return err
			}
			if k := key(a.Addr); a.Addr != "" && !seen[k] && !(fromOrig && mine[k]) {
				seen[k] = true
				*dst = append(*dst, a)
			}
		}
		return nil
	}
	err := add(&to, senderField, sender, true)
	if err == nil && all {
		err = add(&to, "original.to", orig.To, true)
		if err == nil {
			err = add(&cc, "original.cc", orig.Cc, true)
		}
	}
	if err == nil && len(to)+len(cc) == 0 {
		err = add(&to, "original.to", orig.To, true)
	}
	if err == nil {
		err = add(&to, "to", extraTo, false)
	}
	if err == nil {
		err = add(&cc, "cc", extraCc, false)
	}
	if err != nil {
		return Message{}, err
	}
	if len(to)+len(cc) == 0 {
		return Message{}, refuse("to", "is empty: the original names nobody but you; give the recipients yourself")
	}

	text := strings.TrimRight(body, "\r\n")
	quoted := quoteText(orig.Text)
	m := Message{
		From:       own[0],
		To:         to,
		Cc:         cc,
		Subject:    prefixed("Re:", stripPrefixes(cleanLine(orig.Subject), replyPrefixes)),
		InReplyTo:  cleanID(orig.MessageID),
		References: thread(orig),
		Body:       body,
	}
	if quoted != "" {
		var b strings.Builder
		if text != "" {
			b.WriteString(text + "\n\n")
		}
		if !orig.Date.IsZero() {
			b.WriteString("On " + orig.Date.Format(humanDate) + ", ")
		}
		b.WriteString(author(orig) + " wrote:\n" + quoted)
		m.Body, m.ownEnd, m.quoted = b.String(), len(text), true
	}
	if err := m.check(false); err != nil {
		return Message{}, err
	}
	return m, nil
}

// Forward builds a forward of orig from from to to and cc: subject "Fwd: " once (after
// stripping "Fwd", "Fw", "WG", "TR", "RV" prefixes the way [Reply] strips reply ones; an empty
// subject gives "Fwd:"), body = body, a blank line, and a "---------- Forwarded message
// ----------" block with the original's From, Date, Subject, To, Cc and its text, unquoted.
// References threads it as a reply would; In-Reply-To stays empty.
func Forward(orig Original, from Address, to, cc []Address, body string) (Message, error) {
	if err := CheckBody(body); err != nil {
		return Message{}, err
	}
	var rto, rcc []Address
	seen := map[string]bool{}
	for _, l := range []struct {
		field string
		dst   *[]Address
		list  []Address
	}{{"to", &rto, to}, {"cc", &rcc, cc}} {
		for i, a := range l.list {
			if err := a.check(fmt.Sprintf("%s[%d]", l.field, i)); err != nil {
				return Message{}, err
			}
			if k := key(a.Addr); !seen[k] {
				seen[k] = true
				*l.dst = append(*l.dst, a)
			}
		}
	}
	if len(rto)+len(rcc) == 0 {
		return Message{}, refuse("to", "is empty, and so is cc; give at least one recipient to forward to")
	}
	subject := cleanLine(orig.Subject)
	var b strings.Builder
	text := strings.TrimRight(body, "\r\n")
	if text != "" {
		b.WriteString(text + "\n\n")
	}
	b.WriteString("---------- Forwarded message ----------\n")
	b.WriteString("From: " + looseList(orig.From) + "\n")
	if !orig.Date.IsZero() {
		b.WriteString("Date: " + orig.Date.Format(humanDate) + "\n")
	}
	b.WriteString("Subject: " + subject + "\n")
	if len(orig.To) > 0 {
		b.WriteString("To: " + looseList(orig.To) + "\n")
	}
	if len(orig.Cc) > 0 {
		b.WriteString("Cc: " + looseList(orig.Cc) + "\n")
	}
	if t := strings.Trim(cleanText(orig.Text), "\n"); t != "" {
		b.WriteString("\n" + t + "\n")
	}
	m := Message{
		From:       from,
		To:         rto,
		Cc:         rcc,
		Subject:    prefixed("Fwd:", stripPrefixes(subject, forwardPrefixes)),
		References: thread(orig),
		Body:       b.String(),
		ownEnd:     len(text),
		quoted:     true,
	}
	if err := m.check(false); err != nil {
		return Message{}, err
	}
	return m, nil
}

// fromOriginal returns an address of the original fit to write to: its addr-spec canonical (a
// local part the store gave unquoted is quoted again when it needs it), its name dropped if it
// could not be written safely. An entry with no address (an empty group) is returned empty.
func fromOriginal(field string, a Address) (Address, error) {
	if a.Addr == "" {
		return Address{}, nil
	}
	addr, why := parseAddrSpec(a.Addr)
	if why != "" {
		if at := strings.LastIndexByte(a.Addr, '@'); at > 0 {
			if q, why2 := parseAddrSpec(`"` + a.Addr[:at] + `"` + a.Addr[at:]); why2 == "" {
				addr, why = q, ""
			}
		}
	}
	if why != "" || checkLine(field, addr) != nil {
		return Address{}, refuse(field, "cannot be written to (%s); reply to the sender only or give the recipients yourself", strings.TrimPrefix(why, "has "))
	}
	name := a.Name
	if checkName(field, name) != nil {
		name = ""
	}
	return Address{Name: name, Addr: addr}, nil
}

// author returns who wrote orig, for the attribution line.
func author(orig Original) string {
	for _, a := range orig.From {
		if n := cleanLine(a.Name); n != "" {
			return n
		}
		if a := cleanLine(a.Addr); a != "" {
			return a
		}
	}
	return "The sender"
}

// looseList writes addresses of the original for a person to read in a body, without judging
// them: control characters become spaces.
func looseList(list []Address) string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = Address{Name: cleanLine(a.Name), Addr: cleanLine(a.Addr)}.display()
	}
	return strings.Join(out, ", ")
}

// thread returns the References of a reply to orig.
func thread(orig Original) []string {
	var ids []string
	for _, id := range orig.References {
		if id = cleanID(id); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		if id := cleanID(orig.InReplyTo); id != "" {
			ids = append(ids, id)
		}
	}
	if id := cleanID(orig.MessageID); id != "" {
		ids = append(ids, id)
	}
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) > maxRefs {
		out = append(out[:1], out[len(out)-maxRefs+1:]...)
	}
	return out
}

// quoteText returns the original text quoted for a reply, "" when there is none.
func quoteText(text string) string {
	text = strings.TrimRight(cleanText(text), " \t\n")
	text = strings.TrimLeft(text, "\n")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		if i == maxQuoted {
			b.WriteString("> [...]\n")
			break
		}
		l = strings.TrimRight(l, " \t")
		switch {
		case l == "":
			b.WriteString(">\n")
		case l[0] == '>':
			b.WriteString(">" + l + "\n")
		default:
			b.WriteString("> " + l + "\n")
		}
	}
	return b.String()
}

var (
	replyPrefixes   = []string{"re", "aw", "sv", "antw", "rif", "odp", "回复", "答复"}
	forwardPrefixes = []string{"fwd", "fw", "wg", "tr", "rv"}
)

// stripPrefixes removes from s every leading prefix of the list, each optionally numbered
// ("[2]" or "(2)") and ended by ':' or '：', possibly after one space, with the spaces after it.
func stripPrefixes(s string, prefixes []string) string {
	for {
		rest, ok := cutPrefix(s, prefixes)
		if !ok {
			return s
		}
		s = strings.TrimLeft(rest, " ")
	}
}

func cutPrefix(s string, prefixes []string) (string, bool) {
	for _, p := range prefixes {
		if len(s) < len(p) || !strings.EqualFold(s[:len(p)], p) {
			continue
		}
		rest := s[len(p):]
		if len(rest) > 0 && (rest[0] == '[' || rest[0] == '(') {
			closer := map[byte]byte{'[': ']', '(': ')'}[rest[0]]
			j := 1
			for j < len(rest) && unicode.IsDigit(rune(rest[j])) {
				j++
			}
			if j == 1 || j >= len(rest) || rest[j] != closer {
				continue
			}
			rest = rest[j+1:]
		}
		rest = strings.TrimPrefix(rest, " ")
		if r, ok := strings.CutPrefix(rest, ":"); ok {
			return r, true
		}
		if r, ok := strings.CutPrefix(rest, "："); ok {
			return r, true
		}
	}
	return "", false
}

// prefixed returns prefix and subject, cut to fit one header line.
func prefixed(prefix, subject string) string {
	if subject == "" {
		return prefix
	}
	return prefix + " " + truncate(subject, maxSubject-len(prefix)-1)
}

package calendar

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
)

// The iCalendar side of answering an invitation (RFC 5546, RFC 6047): the REPLY that goes to
// the organiser and the copy that goes into the person's calendar, both made from the
// request as the organiser sent it, by the writer of write.go. The copy keeps the request's
// lines (and, merged into a copy the calendar holds already, that copy's lines) byte for
// byte but the person's ATTENDEE, which is written anew with the answer; only the request's
// line ends become CR LF and a line of it longer than 75 octets is folded (RFC 5545 3.1).

// Invite is a request read for answering.
type Invite struct {
	UID       string            // the event's UID
	Comps     []*ical.Component // the VEVENTs of UID, master and instances, as sent
	Me        string            // the person's address as the invitation writes it
	Organizer string            // the organiser's address
	prodID    string
	doc       *Doc // the request as content lines, CR LF, folded at 75 octets
}

// ReadInvite reads a request and finds the person among its attendees (own: their
// addresses). prodID names the maker of what the answer writes (PRODID).
func ReadInvite(data string, own []string, prodID string) (*Invite, error) {
	cal, err := Decode([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("the invitation's calendar part cannot be read (%v); answer it in a mail program", err)
	}
	doc, err := ParseDoc(data)
	if err != nil {
		return nil, fmt.Errorf("the invitation's calendar part cannot be read (%v); answer it in a mail program", err)
	}
	for i := range doc.Lines {
		doc.Lines[i].Raw = normalized(doc.Lines[i].Raw, "\r\n")
	}
	doc.EOL = "\r\n"
	iv := &Invite{doc: doc, prodID: prodID}
	for _, c := range cal.Children {
		if c.Name != ical.CompEvent {
			continue
		}
		uid := propValue(c, ical.PropUID)
		if iv.UID == "" {
			iv.UID = uid
		}
		if uid == iv.UID {
			iv.Comps = append(iv.Comps, c)
		}
	}
	if len(iv.Comps) == 0 || iv.UID == "" {
		return nil, errors.New("the invitation holds no event with a UID, so it cannot be answered; answer it in a mail program")
	}
	ownSet := map[string]bool{}
	for _, a := range own {
		ownSet[strings.ToLower(strings.TrimSpace(a))] = true
	}
	for _, c := range iv.Comps {
		if iv.Organizer == "" {
			if o, ok := Organizer(c); ok && o.Email != "" {
				iv.Organizer = o.Email
			}
		}
		if iv.Me == "" {
			for _, p := range Attendees(c) {
				if ownSet[strings.ToLower(p.Email)] {
					iv.Me = p.Email
					break
				}
			}
		}
	}
	if iv.Organizer == "" {
		return nil, errors.New("the invitation names no organiser, so there is no one to answer; answer it in a mail program")
	}
	if iv.Me == "" {
		return nil, fmt.Errorf("none of the account's addresses (%s) is an attendee of this invitation, so postern cannot answer it for the person; answer it in a mail program", strings.Join(own, ", "))
	}
	return iv, nil
}

func propValue(c *ical.Component, name string) string {
	if p := c.Props.Get(name); p != nil {
		return strings.TrimSpace(p.Value)
	}
	return ""
}

// normalized is raw (one content line) with eol line ends, folded anew at 75 octets when one
// of its physical lines is longer; otherwise folded as it was.
func normalized(raw, eol string) string {
	phys := strings.Split(strings.TrimRight(strings.ReplaceAll(raw, "\r\n", "\n"), "\r\n"), "\n")
	for _, p := range phys {
		if len(strings.TrimSuffix(p, "\r")) > 75 {
			return Fold(Unfold(raw), eol)
		}
	}
	for i, p := range phys {
		phys[i] = strings.TrimSuffix(p, "\r")
	}
	return strings.Join(phys, eol) + eol
}

// root is the VCALENDAR of d: its first line and the END that closes it.
func (d *Doc) root() Comp {
	depth := 0
	for i, l := range d.Lines {
		switch l.Name {
		case "BEGIN":
			depth++
		case "END":
			depth--
			if depth == 0 {
				return Comp{Begin: 0, End: i, Name: "VCALENDAR"}
			}
		}
	}
	return Comp{Begin: 0, End: len(d.Lines), Name: "VCALENDAR"}
}

// events are d's VEVENTs of uid, in order.
func (d *Doc) events(uid string) []Comp {
	var out []Comp
	for _, c := range d.Components() {
		if l, ok := d.First(c, "UID"); c.Name == "VEVENT" && ok && strings.TrimSpace(l.Value()) == uid {
			out = append(out, c)
		}
	}
	return out
}

// zone is the VTIMEZONE of d named tzid, if any.
func (d *Doc) zone(tzid string) (Comp, bool) {
	for _, c := range d.Components() {
		if l, ok := d.First(c, "TZID"); c.Name == "VTIMEZONE" && ok && strings.TrimSpace(l.Value()) == tzid {
			return c, true
		}
	}
	return Comp{}, false
}

// lines are c's lines, BEGIN and END included, with line ends eol.
func (d *Doc) lines(c Comp, eol string) []Line {
	var out []Line
	for _, l := range d.Lines[c.Begin : c.End+1] {
		out = append(out, Line{Raw: normalized(l.Raw, eol), Name: l.Name})
	}
	return out
}

// recurrenceKey is the key of an event of a series: its RECURRENCE-ID as written ("" for
// the master).
func (d *Doc) recurrenceKey(c Comp) string {
	l, ok := d.First(c, "RECURRENCE-ID")
	if !ok {
		return ""
	}
	return l.Param("TZID") + ":" + strings.ToUpper(strings.TrimSpace(l.Value()))
}

func (d *Doc) sequence(c Comp) int {
	if l, ok := d.First(c, "SEQUENCE"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(l.Value())); err == nil {
			return n
		}
	}
	return 0
}

// attendee is the index of the person's ATTENDEE line in c (-1 when c does not list them).
func (iv *Invite) attendee(d *Doc, c Comp) int {
	for _, i := range d.Props(c, "ATTENDEE") {
		v := strings.TrimSpace(d.Lines[i].Value())
		if len(v) >= 7 && strings.EqualFold(v[:7], "mailto:") {
			v = v[7:]
		}
		if strings.EqualFold(v, iv.Me) {
			return i
		}
	}
	return -1
}

// answered is the ATTENDEE line l with the answer partstat: PARTSTAT set, RSVP dropped, the
// other parameters kept as written, all in the order of their names, as an iTIP REPLY
// writes them.
func answered(l Line, partstat, eol string) Line {
	s := Unfold(l.Raw)
	at := valueStart(s)
	if at < 0 {
		at = len(s)
	}
	params := [][2]string{{"PARTSTAT", partstat}}
	for _, p := range splitOutsideQuotes(s[:at], ';')[1:] {
		k, v, _ := strings.Cut(p, "=")
		k = strings.ToUpper(strings.TrimSpace(k))
		if k == "" || k == "PARTSTAT" || k == "RSVP" {
			continue
		}
		params = append(params, [2]string{k, v})
	}
	sort.SliceStable(params, func(i, j int) bool { return params[i][0] < params[j][0] })
	var b strings.Builder
	b.WriteString("ATTENDEE")
	for _, p := range params {
		b.WriteString(";" + p[0] + "=" + p[1]) // the value as written: quoted when it was
	}
	if at < len(s) {
		b.WriteString(s[at:])
	} else {
		b.WriteString(":")
	}
	return Line{Raw: Fold(b.String(), eol), Name: "ATTENDEE"}
}

// setAnswer sets the person's PARTSTAT in c, if c lists them.
func (iv *Invite) setAnswer(d *Doc, c Comp, partstat string) {
	if i := iv.attendee(d, c); i >= 0 {
		d.Lines[i] = answered(d.Lines[i], partstat, d.EOL)
	}
}

// Reply is the iTIP REPLY (RFC 5546 3.2.3) answering partstat, made at stamp: one VEVENT per
// event of the request that lists the person, each with the UID, DTSTAMP, ORGANIZER, the
// person's ATTENDEE, and the SEQUENCE and RECURRENCE-ID the request gave, with the zones a
// RECURRENCE-ID names. Properties and parameters are written in the order of their names.
func (iv *Invite) Reply(partstat string, stamp time.Time) (string, error) {
	const eol = "\r\n"
	d := iv.doc
	var events strings.Builder
	tzids := map[string]bool{}
	for _, c := range d.events(iv.UID) {
		me := iv.attendee(d, c)
		if me < 0 {
			continue
		}
		props := map[string]string{
			"ATTENDEE": answered(d.Lines[me], partstat, eol).Raw,
			"DTSTAMP":  UTCLine(eol, "DTSTAMP", stamp),
			"UID":      PropLine(eol, "UID", nil, iv.UID),
		}
		for _, name := range []string{"ORGANIZER", "SEQUENCE", "RECURRENCE-ID"} {
			if l, ok := d.First(c, name); ok {
				props[name] = l.Raw
				if tz := l.Param("TZID"); tz != "" && name == "RECURRENCE-ID" {
					tzids[tz] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		events.WriteString("BEGIN:VEVENT" + eol)
		for _, k := range names {
			events.WriteString(props[k])
		}
		events.WriteString("END:VEVENT" + eol)
	}
	if events.Len() == 0 {
		return "", errors.New("the invitation does not list the person in any of its events; answer it in a mail program")
	}
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR" + eol + "METHOD:REPLY" + eol + PropLine(eol, "PRODID", nil, iv.prodID) + "VERSION:2.0" + eol)
	for _, c := range d.Components() {
		if l, ok := d.First(c, "TZID"); c.Name == "VTIMEZONE" && ok && tzids[strings.TrimSpace(l.Value())] {
			for _, l := range d.Lines[c.Begin : c.End+1] {
				b.WriteString(l.Raw)
			}
		}
	}
	b.WriteString(events.String())
	b.WriteString("END:VCALENDAR" + eol)
	return b.String(), nil
}

// NewCopy is the person's calendar copy of the request: the request without its METHOD (RFC
// 6047 2.4: a calendar object is stored without one), only its zones and the events of its
// UID, the person's answer set.
func (iv *Invite) NewCopy(partstat string) (string, error) {
	d := &Doc{Lines: append([]Line(nil), iv.doc.Lines...), EOL: iv.doc.EOL}
	cs := d.Components()
	for k := len(cs) - 1; k >= 0; k-- {
		c := cs[k]
		if l, ok := d.First(c, "UID"); c.Name == "VTIMEZONE" || c.Name == "VEVENT" && ok && strings.TrimSpace(l.Value()) == iv.UID {
			continue
		}
		d.Lines = append(d.Lines[:c.Begin], d.Lines[c.End+1:]...)
	}
	root := d.Apply(d.root(), []Edit{Set("METHOD", "")})
	if _, ok := d.First(root, "PRODID"); !ok {
		root = d.Insert(root, 1, Line{Raw: PropLine(d.EOL, "PRODID", nil, iv.prodID), Name: "PRODID"})
	}
	if _, ok := d.First(root, "VERSION"); !ok {
		d.Insert(root, 1, Line{Raw: "VERSION:2.0" + d.EOL, Name: "VERSION"})
	}
	for _, c := range d.events(iv.UID) {
		iv.setAnswer(d, c, partstat)
	}
	return d.String(), nil
}

// MergedCopy is existing (the person's calendar object of the same UID) with the request's
// events in it: an event the request sends at least as new (SEQUENCE) replaces the one of the
// same RECURRENCE-ID, an event it lacks is added, and the person's answer is set in every event
// the request names; zones it lacks are added. Every other line of existing is kept byte for
// byte.
func (iv *Invite) MergedCopy(existing []byte, partstat string) (string, error) {
	d, err := ParseDoc(string(existing))
	if err != nil {
		return "", fmt.Errorf("the calendar's copy of the event cannot be read (%v)", err)
	}
	req := iv.doc
	find := func(key string) (Comp, bool) {
		for _, c := range d.events(iv.UID) {
			if d.recurrenceKey(c) == key {
				return c, true
			}
		}
		return Comp{}, false
	}
	var keys []string
	for _, rc := range req.events(iv.UID) {
		key := req.recurrenceKey(rc)
		keys = append(keys, key)
		c, ok := find(key)
		switch {
		case !ok:
			at := d.root().End
			d.Lines = append(d.Lines[:at], append(req.lines(rc, d.EOL), d.Lines[at:]...)...)
		case req.sequence(rc) >= d.sequence(c):
			d.Lines = append(d.Lines[:c.Begin], append(req.lines(rc, d.EOL), d.Lines[c.End+1:]...)...)
		}
	}
	var zones []Line
	for _, c := range req.Components() {
		if l, ok := req.First(c, "TZID"); c.Name == "VTIMEZONE" && ok && !d.HasTimezone(strings.TrimSpace(l.Value())) {
			zones = append(zones, req.lines(c, d.EOL)...)
		}
	}
	if len(zones) > 0 {
		at := d.root().End
		if cs := d.Components(); len(cs) > 0 {
			at = cs[0].Begin
		}
		d.Lines = append(d.Lines[:at], append(zones, d.Lines[at:]...)...)
	}
	for _, key := range keys {
		if c, ok := find(key); ok {
			iv.setAnswer(d, c, partstat)
		}
	}
	return d.String(), nil
}

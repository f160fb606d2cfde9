package tools

// The iCalendar text the write tools edit. An update changes the server's
// copy line by line: the properties asked are replaced, added or removed, and
// every other physical line (unknown and X- properties, their parameters,
// their order, how they are folded, the line ends) is kept byte for byte. The
// text is never decoded and re-encoded through go-ical, whose encoder orders
// properties by name, refolds them and drops what it does not hold; go-ical
// only reads the result back, to check it and to preview it.

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// icsLine is one content line: its physical lines (folding and line ends
// included) and its name, upper case.
type icsLine struct {
	raw  string
	name string
}

// value is the unfolded text after the first colon outside quotes.
func (l icsLine) value() string {
	s := unfold(l.raw)
	if i := valueStart(s); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// param is the value of parameter name ("" when absent).
func (l icsLine) param(name string) string {
	s := unfold(l.raw)
	i := valueStart(s)
	if i < 0 {
		i = len(s)
	}
	head := s[:i]
	for _, p := range splitOutsideQuotes(head, ';')[1:] {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func unfold(raw string) string {
	s := strings.ReplaceAll(raw, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\n ", "")
	s = strings.ReplaceAll(s, "\n\t", "")
	return strings.TrimRight(s, "\r\n")
}

// valueStart is the index of the colon that starts the value (outside quoted parameters).
func valueStart(s string) int {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ':':
			if !quoted {
				return i
			}
		}
	}
	return -1
}

func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	quoted, from := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			out = append(out, s[from:i])
			from = i + 1
		}
	}
	return append(out, s[from:])
}

// icsDoc is an iCalendar object as its content lines.
type icsDoc struct {
	lines []icsLine
	eol   string // the line end new lines get: the text's own
}

func parseICS(text string) (*icsDoc, error) {
	d := &icsDoc{eol: "\r\n"}
	if !strings.Contains(text, "\r\n") && strings.Contains(text, "\n") {
		d.eol = "\n"
	}
	for _, phys := range strings.SplitAfter(text, "\n") {
		if phys == "" {
			continue
		}
		if (phys[0] == ' ' || phys[0] == '\t') && len(d.lines) > 0 {
			d.lines[len(d.lines)-1].raw += phys
			continue
		}
		name := phys
		if i := strings.IndexAny(name, ";:"); i >= 0 {
			name = name[:i]
		}
		d.lines = append(d.lines, icsLine{raw: phys, name: strings.ToUpper(strings.TrimSpace(name))})
	}
	if len(d.lines) == 0 || d.lines[0].name != "BEGIN" || !strings.EqualFold(strings.TrimSpace(d.lines[0].value()), "VCALENDAR") {
		return nil, fmt.Errorf("the object is not an iCalendar text (it does not begin with BEGIN:VCALENDAR)")
	}
	if last := &d.lines[len(d.lines)-1]; !strings.HasSuffix(last.raw, "\n") {
		last.raw += d.eol
	}
	return d, nil
}

func (d *icsDoc) String() string {
	var b strings.Builder
	for _, l := range d.lines {
		b.WriteString(l.raw)
	}
	return b.String()
}

// comp is a component of the object: the indexes of its BEGIN and END lines.
type comp struct {
	begin, end int
	name       string
}

// components are the components directly inside VCALENDAR (VEVENT, VTODO, VTIMEZONE…).
func (d *icsDoc) components() []comp {
	var out []comp
	depth, start := 0, -1
	for i, l := range d.lines {
		switch l.name {
		case "BEGIN":
			depth++
			if depth == 2 {
				start = i
			}
		case "END":
			if depth == 2 && start >= 0 {
				out = append(out, comp{begin: start, end: i, name: strings.ToUpper(strings.TrimSpace(d.lines[start].value()))})
			}
			depth--
		}
	}
	return out
}

// props are the indexes of c's own lines named name (not those of a VALARM inside it).
func (d *icsDoc) props(c comp, name string) []int {
	var out []int
	depth := 0
	for i := c.begin + 1; i < c.end; i++ {
		switch d.lines[i].name {
		case "BEGIN":
			depth++
			continue
		case "END":
			depth--
			continue
		}
		if depth == 0 && d.lines[i].name == name {
			out = append(out, i)
		}
	}
	return out
}

// first is c's first line named name, if any.
func (d *icsDoc) first(c comp, name string) (icsLine, bool) {
	if ps := d.props(c, name); len(ps) > 0 {
		return d.lines[ps[0]], true
	}
	return icsLine{}, false
}

// insertAt is where a new property of c goes: before its first inner
// component (VALARM), else before its END.
func (d *icsDoc) insertAt(c comp) int {
	for i := c.begin + 1; i < c.end; i++ {
		if d.lines[i].name == "BEGIN" {
			return i
		}
	}
	return c.end
}

// edit is one change of a component's properties. Each is applied to the
// text as it is then, so the indexes are found afresh.
type edit func(d *icsDoc, c comp) comp

// set replaces c's first property named name with line (its other copies
// removed), or adds it; line "" removes every copy.
func set(name, line string) edit {
	return func(d *icsDoc, c comp) comp {
		ps := d.props(c, name)
		if len(ps) > 0 && line != "" {
			d.lines[ps[0]] = icsLine{raw: line, name: name}
			ps = ps[1:]
		} else if line != "" {
			c = d.insert(c, d.insertAt(c), icsLine{raw: line, name: name})
			return c
		}
		for k := len(ps) - 1; k >= 0; k-- {
			c = d.remove(c, ps[k])
		}
		return c
	}
}

// add adds line as a new property of c, after the last of its name when there is one.
func add(name, line string) edit {
	return func(d *icsDoc, c comp) comp {
		at := d.insertAt(c)
		if ps := d.props(c, name); len(ps) > 0 {
			at = ps[len(ps)-1] + 1
		}
		return d.insert(c, at, icsLine{raw: line, name: name})
	}
}

func (d *icsDoc) insert(c comp, at int, ls ...icsLine) comp {
	d.lines = append(d.lines[:at], append(ls, d.lines[at:]...)...)
	c.end += len(ls)
	return c
}

func (d *icsDoc) remove(c comp, at int) comp {
	d.lines = append(d.lines[:at], d.lines[at+1:]...)
	c.end--
	return c
}

// apply runs edits on c.
func (d *icsDoc) apply(c comp, edits []edit) comp {
	for _, e := range edits {
		c = e(d, c)
	}
	return c
}

// propLine encodes one content line: name, parameters (in the order given,
// quoted when they must be), value, folded at 75 octets (RFC 5545 3.1) on a
// character boundary, ended with eol.
func propLine(eol, name string, params [][2]string, value string) string {
	var b strings.Builder
	b.WriteString(name)
	for _, p := range params {
		v := p[1]
		if strings.ContainsAny(v, ":;,") {
			v = `"` + strings.ReplaceAll(v, `"`, "") + `"`
		}
		b.WriteString(";" + p[0] + "=" + v)
	}
	b.WriteString(":" + value)
	return fold(b.String(), eol)
}

func fold(s, eol string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		w := utf8.RuneLen(r)
		if n+w > 75 {
			b.WriteString(eol + " ")
			n = 1
		}
		b.WriteRune(r)
		n += w
	}
	b.WriteString(eol)
	return b.String()
}

// escapeText escapes a TEXT value (RFC 5545 3.3.11).
func escapeText(s string) string {
	r := strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`)
	return r.Replace(s)
}

// textLine is a TEXT property ("" when s is empty: the property goes).
func textLine(eol, name, s string) string {
	if s == "" {
		return ""
	}
	return propLine(eol, name, nil, escapeText(s))
}

// A time as a property writes it.
type stamp struct {
	t        time.Time
	date     bool           // a DATE
	floating bool           // no zone: the clock time
	zone     *time.Location // TZID; nil or UTC: a UTC time
	tzid     string         // the TZID to write, when not zone's name (a zone the object describes itself)
}

// line is the property name with the time s.
func (s stamp) line(eol, name string) string {
	switch {
	case s.date:
		return propLine(eol, name, [][2]string{{"VALUE", "DATE"}}, s.t.Format("20060102"))
	case s.floating:
		return propLine(eol, name, nil, s.t.Format("20060102T150405"))
	case s.zone == nil || s.zone == time.UTC:
		return propLine(eol, name, nil, s.t.UTC().Format("20060102T150405Z"))
	}
	tzid := s.tzid
	if tzid == "" {
		tzid = s.zone.String()
	}
	return propLine(eol, name, [][2]string{{"TZID", tzid}}, s.t.In(s.zone).Format("20060102T150405"))
}

// utcLine is a property holding a UTC time (DTSTAMP, LAST-MODIFIED, COMPLETED).
func utcLine(eol, name string, t time.Time) string {
	return propLine(eol, name, nil, t.UTC().Format("20060102T150405Z"))
}

// vtimezone describes an IANA zone for the years from..to (RFC 5545 3.6.5):
// one observance per offset change, each with its onset, so that a reader
// without the zone database reads the times right. A zone that never
// changes is one STANDARD observance.
func vtimezone(eol string, loc *time.Location, from, to int) string {
	var b strings.Builder
	b.WriteString("BEGIN:VTIMEZONE" + eol)
	b.WriteString(propLine(eol, "TZID", nil, loc.String()))
	offset := func(sec int) string {
		sign := "+"
		if sec < 0 {
			sign, sec = "-", -sec
		}
		return fmt.Sprintf("%s%02d%02d", sign, sec/3600, sec%3600/60)
	}
	type change struct {
		at            time.Time
		from, to      int
		name          string
		daylight      bool
		before, after time.Time
	}
	var cs []change
	t := time.Date(from, 1, 1, 0, 0, 0, 0, loc)
	end := time.Date(to+1, 1, 1, 0, 0, 0, 0, loc)
	for len(cs) < 64 {
		_, next := t.ZoneBounds()
		if next.IsZero() || !next.Before(end) {
			break
		}
		_, off0 := next.Add(-time.Second).Zone()
		name, off1 := next.Zone()
		cs = append(cs, change{at: next, from: off0, to: off1, name: name, daylight: next.IsDST()})
		t = next
	}
	if len(cs) == 0 {
		name, off := time.Date(from, 1, 1, 0, 0, 0, 0, loc).Zone()
		b.WriteString("BEGIN:STANDARD" + eol + "DTSTART:19700101T000000" + eol)
		b.WriteString("TZOFFSETFROM:" + offset(off) + eol + "TZOFFSETTO:" + offset(off) + eol)
		b.WriteString(propLine(eol, "TZNAME", nil, escapeText(name)))
		b.WriteString("END:STANDARD" + eol)
	}
	for _, c := range cs {
		kind := "STANDARD"
		if c.daylight {
			kind = "DAYLIGHT"
		}
		// The onset in the local time of the offset before it.
		local := c.at.UTC().Add(time.Duration(c.from) * time.Second)
		b.WriteString("BEGIN:" + kind + eol)
		b.WriteString("DTSTART:" + local.Format("20060102T150405") + eol)
		b.WriteString("TZOFFSETFROM:" + offset(c.from) + eol + "TZOFFSETTO:" + offset(c.to) + eol)
		if c.name != "" {
			b.WriteString(propLine(eol, "TZNAME", nil, escapeText(c.name)))
		}
		b.WriteString("END:" + kind + eol)
	}
	b.WriteString("END:VTIMEZONE" + eol)
	return b.String()
}

// hasTimezone says whether the object describes the zone tzid.
func (d *icsDoc) hasTimezone(tzid string) bool {
	for _, c := range d.components() {
		if c.name == "VTIMEZONE" {
			if l, ok := d.first(c, "TZID"); ok && strings.TrimSpace(l.value()) == tzid {
				return true
			}
		}
	}
	return false
}

// addTimezone adds a VTIMEZONE for loc before the first component, unless
// the object has one of that name (or loc is UTC).
func (d *icsDoc) addTimezone(loc *time.Location, year int) {
	if loc == nil || loc == time.UTC || loc.String() == "UTC" || loc.String() == "Local" || d.hasTimezone(loc.String()) {
		return
	}
	at := len(d.lines) - 1
	if cs := d.components(); len(cs) > 0 {
		at = cs[0].begin
	}
	d.insertText(at, vtimezone(d.eol, loc, year-1, year+10))
}

// insertText inserts whole lines of text before line at.
func (d *icsDoc) insertText(at int, text string) {
	sub, err := parseICS("BEGIN:VCALENDAR" + d.eol + text)
	if err != nil {
		return
	}
	d.lines = append(d.lines[:at], append(append([]icsLine(nil), sub.lines[1:]...), d.lines[at:]...)...)
}

// changes says, in a few words, how text after differs from before: the
// properties of its events and tasks that were added, removed or changed.
func changes(before, after string) string {
	b, err1 := parseICS(before)
	a, err2 := parseICS(after)
	if err1 != nil || err2 != nil {
		return "its text changed"
	}
	props := func(d *icsDoc) (map[string][]string, int) {
		m := map[string][]string{}
		n := 0
		for _, c := range d.components() {
			if c.name != "VEVENT" && c.name != "VTODO" {
				continue
			}
			n++
			depth := 0
			for i := c.begin + 1; i < c.end; i++ {
				l := d.lines[i]
				switch l.name {
				case "BEGIN":
					depth++
				case "END":
					depth--
				default:
					if depth == 0 {
						m[l.name] = append(m[l.name], unfold(l.raw))
					}
				}
			}
		}
		return m, n
	}
	bm, bn := props(b)
	am, an := props(a)
	words := map[string]string{"SUMMARY": "title", "DTSTART": "start", "DTEND": "end", "DURATION": "length", "LOCATION": "location",
		"DESCRIPTION": "description", "RRULE": "recurrence", "EXDATE": "cancelled instances", "RDATE": "added dates", "STATUS": "state",
		"DUE": "due date", "PRIORITY": "priority", "COMPLETED": "completion", "PERCENT-COMPLETE": "progress", "ATTENDEE": "attendees",
		"ORGANIZER": "organiser", "CATEGORIES": "categories", "TRANSP": "busy or free"}
	skip := map[string]bool{"DTSTAMP": true, "LAST-MODIFIED": true, "SEQUENCE": true, "CREATED": true}
	var changed []string
	seen := map[string]bool{}
	for _, m := range []map[string][]string{bm, am} {
		for k := range m {
			if seen[k] || skip[k] {
				continue
			}
			seen[k] = true
			x, y := bm[k], am[k]
			if strings.Join(x, "\n") == strings.Join(y, "\n") {
				continue
			}
			w := words[k]
			if w == "" {
				w = k
			}
			switch {
			case len(x) == 0:
				w += " added"
			case len(y) == 0:
				w += " removed"
			default:
				w += " changed"
			}
			changed = append(changed, w)
		}
	}
	sort.Strings(changed)
	if an != bn {
		changed = append(changed, fmt.Sprintf("%d components instead of %d (an instance moved or added)", an, bn))
	}
	if len(changed) > 12 {
		changed = append(changed[:12], "…")
	}
	if len(changed) == 0 {
		return "its text changed"
	}
	return strings.Join(changed, ", ")
}

// sameText says whether two copies of an object are the same text (line ends aside).
func sameText(a, b []byte) bool {
	return bytes.Equal(bytes.ReplaceAll(a, []byte("\r\n"), []byte("\n")), bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")))
}

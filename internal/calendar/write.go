package calendar

// The writer: every iCalendar text postern writes, event and task writes and
// invitations alike, is written here, as content lines. An update changes
// the server's copy line by line: the properties asked are replaced, added or
// removed, and every other physical line (unknown and X- properties, their
// parameters, their order, how they are folded, the line ends) is kept byte
// for byte. The text is never decoded and re-encoded through go-ical, whose
// encoder orders properties and parameters by name, upper-cases names, does
// not fold and drops what it does not hold; go-ical only reads the result
// back, to check it and to preview it.

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-ical"
)

// Line is one content line: its physical lines (folding and line ends
// included) and its name, upper case.
type Line struct {
	Raw  string
	Name string
}

// Value is the unfolded text after the first colon outside quotes.
func (l Line) Value() string {
	s := Unfold(l.Raw)
	if i := valueStart(s); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// Param is the value of parameter name ("" when absent).
func (l Line) Param(name string) string {
	s := Unfold(l.Raw)
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

// Unfold joins a content line's physical lines, without its line end.
func Unfold(raw string) string {
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

// Doc is an iCalendar object as its content lines.
type Doc struct {
	Lines []Line
	EOL   string // the line end new lines get: the text's own
}

// ParseDoc reads text as content lines; it refuses a text that does not
// begin with BEGIN:VCALENDAR. The last line gets a line end if it has none.
func ParseDoc(text string) (*Doc, error) {
	d := &Doc{EOL: "\r\n"}
	if !strings.Contains(text, "\r\n") && strings.Contains(text, "\n") {
		d.EOL = "\n"
	}
	for _, phys := range strings.SplitAfter(text, "\n") {
		if phys == "" {
			continue
		}
		if (phys[0] == ' ' || phys[0] == '\t') && len(d.Lines) > 0 {
			d.Lines[len(d.Lines)-1].Raw += phys
			continue
		}
		name := phys
		if i := strings.IndexAny(name, ";:"); i >= 0 {
			name = name[:i]
		}
		d.Lines = append(d.Lines, Line{Raw: phys, Name: strings.ToUpper(strings.TrimSpace(name))})
	}
	if len(d.Lines) == 0 || d.Lines[0].Name != "BEGIN" || !strings.EqualFold(strings.TrimSpace(d.Lines[0].Value()), "VCALENDAR") {
		return nil, fmt.Errorf("the object is not an iCalendar text (it does not begin with BEGIN:VCALENDAR)")
	}
	if last := &d.Lines[len(d.Lines)-1]; !strings.HasSuffix(last.Raw, "\n") {
		last.Raw += d.EOL
	}
	return d, nil
}

// String is the text, every kept line as it was read.
func (d *Doc) String() string {
	var b strings.Builder
	for _, l := range d.Lines {
		b.WriteString(l.Raw)
	}
	return b.String()
}

// Comp is a component of the object: the indexes of its BEGIN and END lines.
type Comp struct {
	Begin, End int
	Name       string
}

// Components are the components directly inside VCALENDAR (VEVENT, VTODO, VTIMEZONE…).
func (d *Doc) Components() []Comp {
	var out []Comp
	depth, start := 0, -1
	for i, l := range d.Lines {
		switch l.Name {
		case "BEGIN":
			depth++
			if depth == 2 {
				start = i
			}
		case "END":
			if depth == 2 && start >= 0 {
				out = append(out, Comp{Begin: start, End: i, Name: strings.ToUpper(strings.TrimSpace(d.Lines[start].Value()))})
			}
			depth--
		}
	}
	return out
}

// Props are the indexes of c's own lines named name (not those of a VALARM inside it).
func (d *Doc) Props(c Comp, name string) []int {
	var out []int
	depth := 0
	for i := c.Begin + 1; i < c.End; i++ {
		switch d.Lines[i].Name {
		case "BEGIN":
			depth++
			continue
		case "END":
			depth--
			continue
		}
		if depth == 0 && d.Lines[i].Name == name {
			out = append(out, i)
		}
	}
	return out
}

// First is c's first line named name, if any.
func (d *Doc) First(c Comp, name string) (Line, bool) {
	if ps := d.Props(c, name); len(ps) > 0 {
		return d.Lines[ps[0]], true
	}
	return Line{}, false
}

// InsertAt is where a new property of c goes: before its first inner
// component (VALARM), else before its END.
func (d *Doc) InsertAt(c Comp) int {
	for i := c.Begin + 1; i < c.End; i++ {
		if d.Lines[i].Name == "BEGIN" {
			return i
		}
	}
	return c.End
}

// Edit is one change of a component's properties. Each is applied to the
// text as it is then, so the indexes are found afresh.
type Edit func(d *Doc, c Comp) Comp

// Set replaces c's first property named name with line (its other copies
// removed), or adds it; line "" removes every copy.
func Set(name, line string) Edit {
	return func(d *Doc, c Comp) Comp {
		ps := d.Props(c, name)
		if len(ps) > 0 && line != "" {
			d.Lines[ps[0]] = Line{Raw: line, Name: name}
			ps = ps[1:]
		} else if line != "" {
			c = d.Insert(c, d.InsertAt(c), Line{Raw: line, Name: name})
			return c
		}
		for k := len(ps) - 1; k >= 0; k-- {
			c = d.Remove(c, ps[k])
		}
		return c
	}
}

// Add adds line as a new property of c, after the last of its name when there is one.
func Add(name, line string) Edit {
	return func(d *Doc, c Comp) Comp {
		at := d.InsertAt(c)
		if ps := d.Props(c, name); len(ps) > 0 {
			at = ps[len(ps)-1] + 1
		}
		return d.Insert(c, at, Line{Raw: line, Name: name})
	}
}

// Insert puts ls before line at, inside c.
func (d *Doc) Insert(c Comp, at int, ls ...Line) Comp {
	d.Lines = append(d.Lines[:at], append(ls, d.Lines[at:]...)...)
	c.End += len(ls)
	return c
}

// Remove takes line at out of c.
func (d *Doc) Remove(c Comp, at int) Comp {
	d.Lines = append(d.Lines[:at], d.Lines[at+1:]...)
	c.End--
	return c
}

// Apply runs edits on c.
func (d *Doc) Apply(c Comp, edits []Edit) Comp {
	for _, e := range edits {
		c = e(d, c)
	}
	return c
}

// PropLine encodes one content line: name, parameters (in the order given,
// quoted when they must be), value, folded at 75 octets (RFC 5545 3.1) on a
// character boundary, ended with eol.
func PropLine(eol, name string, params [][2]string, value string) string {
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
	return Fold(b.String(), eol)
}

// Fold cuts s into physical lines of at most 75 octets, on character
// boundaries, each continuation starting with a space, and ends it with eol.
func Fold(s, eol string) string {
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

// EscapeText escapes a TEXT value (RFC 5545 3.3.11).
func EscapeText(s string) string {
	r := strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`)
	return r.Replace(s)
}

// TextLine is a TEXT property ("" when s is empty: the property goes).
func TextLine(eol, name, s string) string {
	if s == "" {
		return ""
	}
	return PropLine(eol, name, nil, EscapeText(s))
}

// A time as a property writes it.
type Stamp struct {
	T        time.Time
	Date     bool           // a DATE
	Floating bool           // no zone: the clock time
	Zone     *time.Location // TZID; nil or UTC: a UTC time
	TZID     string         // the TZID to write, when not zone's name (a zone the object describes itself)
}

// Line is the property name with the time s.
func (s Stamp) Line(eol, name string) string {
	switch {
	case s.Date:
		return PropLine(eol, name, [][2]string{{"VALUE", "DATE"}}, s.T.Format("20060102"))
	case s.Floating:
		return PropLine(eol, name, nil, s.T.Format("20060102T150405"))
	case s.Zone == nil || s.Zone == time.UTC:
		return PropLine(eol, name, nil, s.T.UTC().Format("20060102T150405Z"))
	}
	tzid := s.TZID
	if tzid == "" {
		tzid = s.Zone.String()
	}
	return PropLine(eol, name, [][2]string{{"TZID", tzid}}, s.T.In(s.Zone).Format("20060102T150405"))
}

// UTCLine is a property holding a UTC time (DTSTAMP, LAST-MODIFIED, COMPLETED).
func UTCLine(eol, name string, t time.Time) string {
	return PropLine(eol, name, nil, t.UTC().Format("20060102T150405Z"))
}

// VTimezone describes an IANA zone for the years from..to (RFC 5545 3.6.5):
// one observance per offset change, each with its onset, so that a reader
// without the zone database reads the times right. A zone that never
// changes is one STANDARD observance.
func VTimezone(eol string, loc *time.Location, from, to int) string {
	var b strings.Builder
	b.WriteString("BEGIN:VTIMEZONE" + eol)
	b.WriteString(PropLine(eol, "TZID", nil, loc.String()))
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
		b.WriteString(PropLine(eol, "TZNAME", nil, EscapeText(name)))
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
			b.WriteString(PropLine(eol, "TZNAME", nil, EscapeText(c.name)))
		}
		b.WriteString("END:" + kind + eol)
	}
	b.WriteString("END:VTIMEZONE" + eol)
	return b.String()
}

// HasTimezone says whether the object describes the zone tzid.
func (d *Doc) HasTimezone(tzid string) bool {
	for _, c := range d.Components() {
		if c.Name == "VTIMEZONE" {
			if l, ok := d.First(c, "TZID"); ok && strings.TrimSpace(l.Value()) == tzid {
				return true
			}
		}
	}
	return false
}

// AddTimezone adds a VTIMEZONE for loc before the first component, unless
// the object has one of that name (or loc is UTC).
func (d *Doc) AddTimezone(loc *time.Location, year int) {
	if loc == nil || loc == time.UTC || loc.String() == "UTC" || loc.String() == "Local" || d.HasTimezone(loc.String()) {
		return
	}
	at := len(d.Lines) - 1
	if cs := d.Components(); len(cs) > 0 {
		at = cs[0].Begin
	}
	d.InsertText(at, VTimezone(d.EOL, loc, year-1, year+10))
}

// InsertText inserts whole lines of text before line at.
func (d *Doc) InsertText(at int, text string) {
	sub, err := ParseDoc("BEGIN:VCALENDAR" + d.EOL + text)
	if err != nil {
		return
	}
	d.Lines = append(d.Lines[:at], append(append([]Line(nil), sub.Lines[1:]...), d.Lines[at:]...)...)
}

// Changes says, in a few words, how text after differs from before: the
// properties of its events and tasks that were added, removed or changed.
func Changes(before, after string) string {
	b, err1 := ParseDoc(before)
	a, err2 := ParseDoc(after)
	if err1 != nil || err2 != nil {
		return "its text changed"
	}
	props := func(d *Doc) (map[string][]string, int) {
		m := map[string][]string{}
		n := 0
		for _, c := range d.Components() {
			if c.Name != "VEVENT" && c.Name != "VTODO" {
				continue
			}
			n++
			depth := 0
			for i := c.Begin + 1; i < c.End; i++ {
				l := d.Lines[i]
				switch l.Name {
				case "BEGIN":
					depth++
				case "END":
					depth--
				default:
					if depth == 0 {
						m[l.Name] = append(m[l.Name], Unfold(l.Raw))
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

// SameText says whether two copies of an object are the same text (line ends aside).
func SameText(a, b []byte) bool {
	return bytes.Equal(bytes.ReplaceAll(a, []byte("\r\n"), []byte("\n")), bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")))
}

// EventComps finds, in d, the VEVENTs of the series of uid: the master (hasMaster
// false when none) and each override (a VEVENT with a RECURRENCE-ID).
func (d *Doc) EventComps(uid string) (master Comp, hasMaster bool, overrides []Comp) {
	for _, c := range d.Components() {
		if c.Name != "VEVENT" {
			continue
		}
		if l, ok := d.First(c, "UID"); ok && strings.TrimSpace(l.Value()) != uid {
			continue
		}
		if _, ok := d.First(c, "RECURRENCE-ID"); ok {
			overrides = append(overrides, c)
		} else if !hasMaster {
			master, hasMaster = c, true
		}
	}
	return
}

// SameRecurrence says whether line l (a RECURRENCE-ID) is the property p.
func SameRecurrence(l Line, p *ical.Prop) bool {
	return p != nil && strings.TrimSpace(l.Value()) == strings.TrimSpace(p.Value) && l.Param("TZID") == p.Params.Get(ical.ParamTimezoneID)
}

// FormOf is how line (e's DTSTART) writes its time: a date, floating, UTC or in a zone.
func FormOf(e Event, line Line) Stamp {
	switch {
	case e.AllDay:
		return Stamp{Date: true}
	case e.Floating:
		return Stamp{Floating: true}
	case strings.HasSuffix(strings.ToUpper(strings.TrimSpace(line.Value())), "Z") || line.Param("TZID") == "":
		return Stamp{Zone: time.UTC}
	}
	return Stamp{Zone: e.Zone, TZID: line.Param("TZID")}
}

// At is the time t written in form f (floating: the clock time in person's zone).
func (f Stamp) At(t time.Time, person *time.Location) Stamp {
	switch {
	case f.Date:
		f.T = t
	case f.Floating:
		f.T = t.In(person)
	default:
		f.T = t
	}
	return f
}

// StampEdits are the edits every change of c makes: DTSTAMP and LAST-MODIFIED
// now, and SEQUENCE one up when the times change (RFC 5545 3.8.7.4).
func (d *Doc) StampEdits(c Comp, now time.Time, timesChanged bool) []Edit {
	es := []Edit{Set("DTSTAMP", UTCLine(d.EOL, "DTSTAMP", now)), Set("LAST-MODIFIED", UTCLine(d.EOL, "LAST-MODIFIED", now))}
	if timesChanged {
		n := 0
		if l, ok := d.First(c, "SEQUENCE"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(l.Value()))
		}
		es = append(es, Set("SEQUENCE", PropLine(d.EOL, "SEQUENCE", nil, strconv.Itoa(n+1))))
	}
	return es
}

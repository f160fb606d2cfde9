package calendar

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // IANA zones even where the machine has no zoneinfo

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// PersonZone is the person's zone: name (the configuration's time_zone)
// when given, else the machine's (TZ respected), named by its IANA name
// when one can be found.
func PersonZone(name string) (*time.Location, error) {
	if name != "" {
		loc, err := time.LoadLocation(name)
		if err != nil || name == "Local" {
			return nil, fmt.Errorf("time_zone %q is not a time zone name; use one such as Europe/Paris", name)
		}
		return loc, nil
	}
	if tz, ok := os.LookupEnv("TZ"); ok {
		tz = strings.TrimPrefix(tz, ":")
		if tz == "" {
			return time.UTC, nil
		}
		if loc, err := time.LoadLocation(tz); err == nil {
			return loc, nil
		}
		return time.Local, nil
	}
	if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if _, rest, ok := strings.Cut(target, "zoneinfo/"); ok {
			if loc, err := time.LoadLocation(rest); err == nil {
				return loc, nil
			}
		}
	}
	return time.Local, nil
}

// ZoneName is how a zone is written in an answer: its IANA name, or its UTC
// offset at t for a zone with no usable name.
func ZoneName(loc *time.Location, t time.Time) string {
	if name := loc.String(); name != "Local" && name != "" && !strings.HasPrefix(name, customPrefix) {
		return name
	}
	return Offset(t.In(loc))
}

// Offset is t's offset from UTC, as UTC+02:00.
func Offset(t time.Time) string {
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, off/3600, off%3600/60)
}

// customPrefix names the zones built from a VTIMEZONE's offsets.
const customPrefix = "vtimezone:"

// zoneOf finds the zone a TZID names: the IANA zone of that name (or of
// its last segments, as in /mozilla.org/20050126_1/America/New_York), else
// one built from the object's VTIMEZONE of that TZID.
func zoneOf(tzid string, vtz map[string]*ical.Component) (*time.Location, bool) {
	if loc, ok := ianaZone(tzid); ok {
		return loc, true
	}
	c := vtz[tzid]
	if c == nil {
		return nil, false
	}
	if p := c.Props.Get("X-LIC-LOCATION"); p != nil {
		if loc, ok := ianaZone(p.Value); ok {
			return loc, true
		}
	}
	loc, err := customZone(tzid, c)
	return loc, err == nil
}

func ianaZone(name string) (*time.Location, bool) {
	name = strings.TrimSpace(name)
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for i := range parts {
		cand := strings.Join(parts[i:], "/")
		if cand == "" || cand == "Local" {
			continue
		}
		if loc, err := time.LoadLocation(cand); err == nil {
			return loc, true
		}
	}
	return nil, false
}

var custom struct {
	sync.Mutex
	zones map[string]*time.Location
}

// customZone builds a zone from a VTIMEZONE's STANDARD and DAYLIGHT
// observances (their onsets from 1900 to 2200), as TZif data that
// time.LoadLocationFromTZData reads.
func customZone(tzid string, c *ical.Component) (*time.Location, error) {
	var key strings.Builder
	key.WriteString(tzid)
	for _, o := range c.Children {
		key.WriteString("\x00" + o.Name)
		names := make([]string, 0, len(o.Props))
		for n := range o.Props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, p := range o.Props[n] {
				key.WriteString("\x00" + n + ":" + p.Value)
			}
		}
	}
	custom.Lock()
	defer custom.Unlock()
	if loc, ok := custom.zones[key.String()]; ok {
		return loc, nil
	}
	type onset struct {
		at        int64
		off, from int32
		dst       bool
		abbr      string
	}
	var onsets []onset
	lo := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	hi := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, o := range c.Children {
		if o.Name != "STANDARD" && o.Name != "DAYLIGHT" {
			continue
		}
		from, err1 := utcOffset(o.Props.Get("TZOFFSETFROM"))
		to, err2 := utcOffset(o.Props.Get("TZOFFSETTO"))
		start := o.Props.Get("DTSTART")
		if err1 != nil || err2 != nil || start == nil {
			continue
		}
		wall, err := time.Parse("20060102T150405", start.Value)
		if err != nil {
			continue
		}
		abbr := Offset(time.Unix(0, 0).In(time.FixedZone("", int(to))))
		if p := o.Props.Get("TZNAME"); p != nil && isAbbr(p.Value) {
			abbr = p.Value
		}
		walls := []time.Time{wall}
		if p := o.Props.Get("RRULE"); p != nil {
			if opt, err := rrule.StrToROptionInLocation(p.Value, time.UTC); err == nil && opt.Freq <= rrule.DAILY {
				opt.Dtstart = wall
				if strings.HasSuffix(strings.ToUpper(ruleValue(p.Value, "UNTIL")), "Z") {
					opt.Until = opt.Until.Add(time.Duration(from) * time.Second)
				}
				if opt.Until.IsZero() || opt.Until.After(hi) {
					opt.Until = hi // rrule-go ends a rule without UNTIL 290 years after its start
				}
				if r, err := rrule.NewRRule(*opt); err == nil {
					walls = append(walls, r.Between(lo, hi, true)...)
				}
			}
		}
		for _, p := range o.Props["RDATE"] {
			for _, v := range strings.Split(p.Value, ",") {
				if t, err := time.Parse("20060102T150405", strings.TrimSuffix(v, "Z")); err == nil {
					walls = append(walls, t)
				}
			}
		}
		for _, w := range walls {
			onsets = append(onsets, onset{at: w.Unix() - int64(from), off: to, from: from, dst: o.Name == "DAYLIGHT", abbr: abbr})
		}
	}
	if len(onsets) == 0 {
		return nil, fmt.Errorf("the VTIMEZONE %q has no observance", tzid)
	}
	sort.SliceStable(onsets, func(i, j int) bool { return onsets[i].at < onsets[j].at })
	// Before the first onset, the offset it changes from.
	first := onsets[0].from
	onsets = append([]onset{{at: -1 << 62, off: first, abbr: Offset(time.Unix(0, 0).In(time.FixedZone("", int(first))))}}, onsets...)
	// Types: the zone before the first onset is type 0, used by no transition.
	type ztype struct {
		off  int32
		dst  bool
		abbr string
	}
	types := []ztype{{onsets[0].off, onsets[0].dst, onsets[0].abbr}}
	typeOf := map[ztype]uint8{}
	var times []int64
	var idx []uint8
	for _, o := range onsets[1:] {
		zt := ztype{o.off, o.dst, o.abbr}
		i, ok := typeOf[zt]
		if !ok {
			if len(types) == 255 {
				break
			}
			i = uint8(len(types))
			types = append(types, zt)
			typeOf[zt] = i
		}
		if len(times) > 0 && times[len(times)-1] == o.at {
			idx[len(idx)-1] = i
			continue
		}
		times = append(times, o.at)
		idx = append(idx, i)
	}
	var chars []byte
	abbrAt := make([]uint8, len(types))
	for i, t := range types {
		abbrAt[i] = uint8(len(chars))
		chars = append(chars, t.abbr...)
		chars = append(chars, 0)
	}
	var b bytes.Buffer
	header := func(timecnt, typecnt, charcnt int) {
		b.WriteString("TZif2")
		b.Write(make([]byte, 15))
		for _, n := range []int{0, 0, 0, timecnt, typecnt, charcnt} {
			binary.Write(&b, binary.BigEndian, uint32(n))
		}
	}
	// The 32-bit block, which readers of version 2 skip: one type, no transition.
	header(0, 1, len(types[0].abbr)+1)
	binary.Write(&b, binary.BigEndian, types[0].off)
	b.Write([]byte{boolByte(types[0].dst), 0})
	b.WriteString(types[0].abbr + "\x00")
	header(len(times), len(types), len(chars))
	for _, t := range times {
		binary.Write(&b, binary.BigEndian, t)
	}
	b.Write(idx)
	for i, t := range types {
		binary.Write(&b, binary.BigEndian, t.off)
		b.Write([]byte{boolByte(t.dst), abbrAt[i]})
	}
	b.Write(chars)
	b.WriteString("\n\n")
	loc, err := time.LoadLocationFromTZData(customPrefix+tzid, b.Bytes())
	if err != nil {
		return nil, err
	}
	if custom.zones == nil || len(custom.zones) > 256 {
		custom.zones = map[string]*time.Location{}
	}
	custom.zones[key.String()] = loc
	return loc, nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// isAbbr: a TZNAME fit to be a zone abbreviation (letters, digits, + and -).
func isAbbr(s string) bool {
	if len(s) < 1 || len(s) > 10 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-') {
			return false
		}
	}
	return true
}

// utcOffset reads a UTC offset such as -0500 or +013000, in seconds.
func utcOffset(p *ical.Prop) (int32, error) {
	if p == nil {
		return 0, fmt.Errorf("no offset")
	}
	v := strings.TrimSpace(p.Value)
	if len(v) != 5 && len(v) != 7 || v[0] != '+' && v[0] != '-' {
		return 0, fmt.Errorf("bad offset %q", v)
	}
	n := 0
	for _, part := range []string{v[1:3], v[3:5], v[5:]} {
		if part == "" {
			n *= 60
			continue
		}
		var x int
		if _, err := fmt.Sscanf(part, "%02d", &x); err != nil || x > 59 {
			return 0, fmt.Errorf("bad offset %q", v)
		}
		n = n*60 + x
	}
	if v[0] == '-' {
		n = -n
	}
	return int32(n), nil
}

// ruleValue is the value of key in an RRULE's text ("" when absent).
func ruleValue(rule, key string) string {
	for _, part := range strings.Split(rule, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

package mailparse

import (
	"net/mail"
	"strconv"
	"strings"
	"time"
)

var months = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

var weekdays = map[string]bool{"mon": true, "tue": true, "wed": true, "thu": true, "fri": true, "sat": true, "sun": true}

// zones holds the offsets, in hours, of zone names seen in mail (RFC 5322 obs-zone and common).
var zones = map[string]int{
	"ut": 0, "utc": 0, "gmt": 0, "z": 0, "wet": 0,
	"est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
	"akst": -9, "akdt": -8, "hst": -10,
	"bst": 1, "cet": 1, "cest": 2, "met": 1, "mest": 2, "west": 1, "eet": 2, "eest": 3, "msk": 3,
	"jst": 9, "kst": 9, "hkt": 8, "sgt": 8, "aest": 10, "aedt": 11, "nzst": 12, "nzdt": 13,
}

// parseDate reads an RFC 5322 date and the broken forms seen in mail: comments, missing day name
// or seconds, two-digit years, named zones, ISO 8601. It returns the zero time when it cannot.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	if t := looseDate(s); !t.IsZero() {
		return t
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t
	}
	if t, err := mail.ParseDate(s); err == nil {
		if name, off := t.Zone(); off == 0 && name != "" && name != "UTC" && name != "GMT" && name != "UT" {
			return time.Time{} // a zone name time.Parse did not know, read as UTC: wrong
		}
		return t
	}
	return time.Time{}
}

func looseDate(s string) time.Time {
	// Drop comments, commas and the "at" some clients write.
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth > 0:
		case r == ',':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	var (
		year, day          = -1, -1
		month              time.Month
		hour, minute, sec  = 0, 0, 0
		haveTime, haveZone bool
		offset             int
	)
	for _, tok := range strings.Fields(b.String()) {
		l := strings.ToLower(strings.TrimSuffix(tok, "."))
		if l == "" {
			continue
		}
		switch {
		case len(l) >= 3 && weekdays[l[:3]] && !strings.ContainsAny(l, "0123456789"):
		case len(l) >= 3 && months[l[:3]] != 0 && month == 0 && !strings.ContainsAny(l, "0123456789"):
			month = months[l[:3]]
		case strings.Count(l, "-") == 2 && len(l) >= 8 && l[0] >= '0' && l[0] <= '9':
			// ISO date, maybe with a time after 't'
			d, rest, _ := strings.Cut(l, "t")
			ps := strings.Split(d, "-")
			if len(ps) != 3 {
				return time.Time{}
			}
			y, e1 := strconv.Atoi(ps[0])
			mo, e2 := strconv.Atoi(ps[1])
			dd, e3 := strconv.Atoi(ps[2])
			if e1 != nil || e2 != nil || e3 != nil || mo < 1 || mo > 12 {
				return time.Time{}
			}
			year, month, day = y, time.Month(mo), dd
			if rest != "" {
				if h, mi, se, off, hz, ok := clock(rest); ok {
					hour, minute, sec, haveTime = h, mi, se, true
					if hz {
						offset, haveZone = off, true
					}
				}
			}
		case strings.Contains(l, ":") && !haveTime && l[0] >= '0' && l[0] <= '9':
			h, mi, se, off, hz, ok := clock(l)
			if !ok {
				return time.Time{}
			}
			hour, minute, sec, haveTime = h, mi, se, true
			if hz {
				offset, haveZone = off, true
			}
		case (l[0] == '+' || l[0] == '-') && len(l) > 1:
			if off, ok := numericZone(l); ok && !haveZone {
				offset, haveZone = off, true
			}
		case zones[l] != 0 || l == "ut" || l == "utc" || l == "gmt" || l == "z" || l == "wet":
			if !haveZone {
				offset, haveZone = zones[l]*3600, true
			}
		case (strings.HasPrefix(l, "gmt") || strings.HasPrefix(l, "utc")) && len(l) > 4:
			if off, ok := numericZone(l[3:]); ok && !haveZone {
				offset, haveZone = off, true
			}
		case isDigits(l):
			n, _ := strconv.Atoi(l)
			switch {
			case len(l) <= 2 && day < 0 && n >= 1 && n <= 31:
				day = n
			case year < 0 && len(l) == 4:
				year = n
			case year < 0 && len(l) <= 3:
				year = n
				switch {
				case len(l) == 3:
					year += 1900
				case n < 50:
					year += 2000
				default:
					year += 1900
				}
			}
		}
	}
	if year < 0 || day < 1 || day > 31 || month == 0 {
		return time.Time{}
	}
	if hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}
	}
	if sec == 60 {
		sec = 59
	}
	t := time.Date(year, month, day, hour, minute, sec, 0, time.FixedZone("", offset))
	if t.Day() != day {
		return time.Time{} // 31 Feb and the like
	}
	return t
}

// clock reads hh:mm[:ss[.frac]] optionally followed by a zone (Z, +hh[:mm], -hhmm).
func clock(s string) (h, m, sec, off int, hasZone, ok bool) {
	zi := strings.IndexAny(s, "+-zZ")
	if zi > 0 {
		if o, zok := numericZone(s[zi:]); zok {
			off, hasZone = o, true
		} else if strings.EqualFold(s[zi:], "z") {
			hasZone = true
		}
		s = s[:zi]
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	ps := strings.Split(s, ":")
	if len(ps) < 2 || len(ps) > 3 {
		return
	}
	var err error
	if h, err = strconv.Atoi(ps[0]); err != nil {
		return
	}
	if m, err = strconv.Atoi(ps[1]); err != nil {
		return
	}
	if len(ps) == 3 {
		if sec, err = strconv.Atoi(ps[2]); err != nil {
			return
		}
	}
	if h < 0 || m < 0 || sec < 0 {
		return
	}
	return h, m, sec, off, hasZone, true
}

// numericZone reads +hhmm, -hh:mm or +h.
func numericZone(s string) (int, bool) {
	if s == "" || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	d := strings.ReplaceAll(s[1:], ":", "")
	if !isDigits(d) {
		return 0, false
	}
	var hh, mm int
	switch len(d) {
	case 1, 2:
		hh, _ = strconv.Atoi(d)
	case 3:
		hh, _ = strconv.Atoi(d[:1])
		mm, _ = strconv.Atoi(d[1:])
	case 4:
		hh, _ = strconv.Atoi(d[:2])
		mm, _ = strconv.Atoi(d[2:])
	default:
		return 0, false
	}
	if hh > 23 || mm > 59 {
		return 0, false
	}
	return sign * (hh*3600 + mm*60), true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

package calendar

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// Text is the unescaped text of comp's property name ("" when absent).
func Text(comp *ical.Component, name string) string {
	p := comp.Props.Get(name)
	if p == nil {
		return ""
	}
	if s, err := p.Text(); err == nil {
		return s
	}
	return p.Value
}

// Person is an organiser or an attendee.
type Person struct {
	Name, Email string
	PartStat    string // ACCEPTED, DECLINED, TENTATIVE, NEEDS-ACTION, DELEGATED (upper case; "" when not said)
	Role        string // CHAIR, REQ-PARTICIPANT, OPT-PARTICIPANT, NON-PARTICIPANT
}

func personOf(p *ical.Prop) Person {
	email := strings.TrimSpace(p.Value)
	if len(email) >= 7 && strings.EqualFold(email[:7], "mailto:") {
		email = email[7:]
	}
	return Person{
		Name: p.Params.Get(ical.ParamCommonName), Email: email,
		PartStat: strings.ToUpper(p.Params.Get(ical.ParamParticipationStatus)),
		Role:     strings.ToUpper(p.Params.Get(ical.ParamRole)),
	}
}

// Attendees are comp's ATTENDEEs.
func Attendees(comp *ical.Component) []Person {
	var out []Person
	for i := range comp.Props[ical.PropAttendee] {
		out = append(out, personOf(&comp.Props[ical.PropAttendee][i]))
	}
	return out
}

// Organizer is comp's ORGANIZER, if it has one.
func Organizer(comp *ical.Component) (Person, bool) {
	p := comp.Props.Get(ical.PropOrganizer)
	if p == nil {
		return Person{}, false
	}
	return personOf(p), true
}

// Transparent: the event does not make the person busy (TRANSP:TRANSPARENT).
func Transparent(comp *ical.Component) bool {
	return strings.EqualFold(strings.TrimSpace(Text(comp, ical.PropTransparency)), "TRANSPARENT")
}

// Status is comp's STATUS, upper case ("" when absent).
func Status(comp *ical.Component) string {
	return strings.ToUpper(strings.TrimSpace(Text(comp, ical.PropStatus)))
}

// Rule is the object's recurrence rule in words ("" when the event does not recur).
func (c *Calendar) Rule(e Event) string {
	for _, s := range c.series {
		if s.uid != e.UID || s.master == nil {
			continue
		}
		p := s.master.Props.Get(ical.PropRecurrenceRule)
		if p == nil {
			if s.master.Props.Get(ical.PropRecurrenceDates) != nil {
				return "on the dates listed"
			}
			return ""
		}
		words := Words(p.Value)
		if n := len(c.values(s.master, ical.PropExceptionDates)); n > 0 {
			words += fmt.Sprintf(", except %d date%s", n, plural(n))
		}
		return words
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

var weekdayNames = map[string]string{"MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday", "FR": "Friday", "SA": "Saturday", "SU": "Sunday"}

// Words says an RRULE in English: "every week on Monday and Thursday, until 2026-12-31".
func Words(rule string) string {
	opt, err := rrule.StrToROptionInLocation(rule, time.UTC)
	if err != nil {
		return "a recurrence rule postern cannot read"
	}
	unit := map[rrule.Frequency]string{rrule.YEARLY: "year", rrule.MONTHLY: "month", rrule.WEEKLY: "week", rrule.DAILY: "day", rrule.HOURLY: "hour", rrule.MINUTELY: "minute", rrule.SECONDLY: "second"}[opt.Freq]
	var b strings.Builder
	if opt.Interval > 1 {
		fmt.Fprintf(&b, "every %d %ss", opt.Interval, unit)
	} else {
		b.WriteString("every " + unit)
	}
	if len(opt.Bymonth) > 0 {
		var ms []string
		for _, m := range opt.Bymonth {
			if m >= 1 && m <= 12 {
				ms = append(ms, time.Month(m).String())
			}
		}
		b.WriteString(" in " + and(ms))
	}
	if len(opt.Bymonthday) > 0 {
		var ds []string
		for _, d := range opt.Bymonthday {
			if d < 0 {
				ds = append(ds, ordinal(-d)+" last")
			} else {
				ds = append(ds, ordinal(d))
			}
		}
		b.WriteString(" on the " + and(ds) + " day")
	}
	if days := ruleValue(rule, "BYDAY"); days != "" {
		var ds []string
		for _, d := range strings.Split(days, ",") {
			d = strings.ToUpper(strings.TrimSpace(d))
			if len(d) < 2 {
				continue
			}
			name := weekdayNames[d[len(d)-2:]]
			if name == "" {
				continue
			}
			if n, err := strconv.Atoi(d[:len(d)-2]); err == nil && n != 0 {
				switch {
				case n == -1:
					name = "last " + name
				case n < 0:
					name = ordinal(-n) + " last " + name
				default:
					name = ordinal(n) + " " + name
				}
				name = "the " + name
			}
			ds = append(ds, name)
		}
		b.WriteString(" on " + and(ds))
	}
	if len(opt.Bysetpos) > 0 {
		var ps []string
		for _, p := range opt.Bysetpos {
			ps = append(ps, strconv.Itoa(p))
		}
		b.WriteString(" (positions " + strings.Join(ps, ", ") + ")")
	}
	if opt.Count > 0 {
		fmt.Fprintf(&b, ", %d time%s", opt.Count, plural(opt.Count))
	}
	if !opt.Until.IsZero() {
		b.WriteString(", until " + opt.Until.Format("2006-01-02"))
	}
	return b.String()
}

func and(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// Todo is a task (VTODO).
type Todo struct {
	UID       string
	Comp      *ical.Component
	Summary   string
	Due       time.Time // zero when it has none; a date: midnight in the person's zone
	DueDate   bool      // Due is a date, not a time
	DueZone   *time.Location
	Start     time.Time
	Completed time.Time
	Priority  int    // 1 (highest) to 9; 0 when not said
	Status    string // NEEDS-ACTION, IN-PROCESS, COMPLETED, CANCELLED (upper case; "" when not said)
	Percent   int
}

// Done: the task is completed.
func (t Todo) Done() bool { return t.Status == "COMPLETED" || !t.Completed.IsZero() && t.Status == "" }

// Closed: done or cancelled.
func (t Todo) Closed() bool { return t.Done() || t.Status == "CANCELLED" }

// Todos are the object's tasks.
func (c *Calendar) Todos() []Todo {
	var out []Todo
	for _, comp := range c.todos {
		t := Todo{Comp: comp, Summary: Text(comp, ical.PropSummary), Status: Status(comp)}
		if p := comp.Props.Get(ical.PropUID); p != nil {
			t.UID = p.Value
		}
		if p := comp.Props.Get(ical.PropDue); p != nil {
			if v, err := c.timeOf(p, p.Value); err == nil {
				t.DueDate, t.DueZone = v.date, v.loc
				t.Due = v.t
				if v.date {
					t.Due = time.Date(v.t.Year(), v.t.Month(), v.t.Day(), 0, 0, 0, 0, c.person)
				}
			}
		}
		if p := comp.Props.Get(ical.PropDateTimeStart); p != nil {
			if v, err := c.timeOf(p, p.Value); err == nil {
				t.Start = v.t
			}
		}
		if p := comp.Props.Get(ical.PropCompleted); p != nil {
			if v, err := c.timeOf(p, p.Value); err == nil {
				t.Completed = v.t
			}
		}
		if p := comp.Props.Get(ical.PropPriority); p != nil {
			if n, err := strconv.Atoi(strings.TrimSpace(p.Value)); err == nil && n >= 0 && n <= 9 {
				t.Priority = n
			}
		}
		if p := comp.Props.Get(ical.PropPercentComplete); p != nil {
			if n, err := strconv.Atoi(strings.TrimSpace(p.Value)); err == nil && n >= 0 && n <= 100 {
				t.Percent = n
			}
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Summary < out[j].Summary })
	return out
}

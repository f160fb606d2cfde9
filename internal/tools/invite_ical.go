package tools

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-ical"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/calendar"
)

// The iCalendar side of answering an invitation (RFC 5546, RFC 6047): the REPLY that goes to
// the organiser and the copy that goes into the person's calendar, both made from the
// request as the organiser sent it.

// invProdID names postern as the maker of what it writes.
const invProdID = "-//postern//" + generated.ToolCalendarRespond + "//EN"

// invAnswers maps calendar_respond's answers to PARTSTAT values and to the answer's words.
var invAnswers = map[string]struct{ partstat, word, subject string }{
	"accept":    {"ACCEPTED", "accepted", "Accepted"},
	"tentative": {"TENTATIVE", "tentative", "Tentative"},
	"decline":   {"DECLINED", "declined", "Declined"},
}

// invite is a request read for answering.
type invite struct {
	data      string
	cal       *ical.Calendar
	uid       string
	comps     []*ical.Component // the VEVENTs of uid, master and instances, as sent
	me        string            // the person's address as the invitation writes it
	organizer string            // the organiser's address
	orgName   string
}

// readInvite reads a request and finds the person among its attendees (own: their addresses).
func readInvite(data string, own []string) (*invite, error) {
	cal, err := ical.NewDecoder(strings.NewReader(data)).Decode()
	if err != nil {
		return nil, fmt.Errorf("the invitation's calendar part cannot be read (%v); answer it in a mail program", err)
	}
	iv := &invite{data: data, cal: cal}
	for _, c := range cal.Children {
		if c.Name != ical.CompEvent {
			continue
		}
		uid := invPropValue(c, ical.PropUID)
		if iv.uid == "" {
			iv.uid = uid
		}
		if uid == iv.uid {
			iv.comps = append(iv.comps, c)
		}
	}
	if len(iv.comps) == 0 || iv.uid == "" {
		return nil, errors.New("the invitation holds no event with a UID, so it cannot be answered; answer it in a mail program")
	}
	ownSet := map[string]bool{}
	for _, a := range own {
		ownSet[strings.ToLower(strings.TrimSpace(a))] = true
	}
	for _, c := range iv.comps {
		if iv.organizer == "" {
			if o, ok := calendar.Organizer(c); ok && o.Email != "" {
				iv.organizer, iv.orgName = o.Email, o.Name
			}
		}
		if iv.me == "" {
			for _, p := range calendar.Attendees(c) {
				if ownSet[strings.ToLower(p.Email)] {
					iv.me = p.Email
					break
				}
			}
		}
	}
	if iv.organizer == "" {
		return nil, errors.New("the invitation names no organiser, so there is no one to answer; answer it in a mail program")
	}
	if iv.me == "" {
		return nil, fmt.Errorf("none of the account's addresses (%s) is an attendee of this invitation, so postern cannot answer it for the person; answer it in a mail program", strings.Join(own, ", "))
	}
	return iv, nil
}

func invPropValue(c *ical.Component, name string) string {
	if p := c.Props.Get(name); p != nil {
		return strings.TrimSpace(p.Value)
	}
	return ""
}

// attendee returns the person's ATTENDEE in c (nil when c does not list them).
func (iv *invite) attendee(c *ical.Component) *ical.Prop {
	for i := range c.Props[ical.PropAttendee] {
		p := &c.Props[ical.PropAttendee][i]
		v := strings.TrimSpace(p.Value)
		if len(v) >= 7 && strings.EqualFold(v[:7], "mailto:") {
			v = v[7:]
		}
		if strings.EqualFold(v, iv.me) {
			return p
		}
	}
	return nil
}

// answered is p with the answer partstat: PARTSTAT set, RSVP dropped, the rest kept.
func invAnswered(p *ical.Prop, partstat string) ical.Prop {
	out := ical.Prop{Name: p.Name, Value: p.Value, Params: ical.Params{}}
	for k, v := range p.Params {
		if k != ical.ParamRSVP {
			out.Params[k] = append([]string(nil), v...)
		}
	}
	out.Params.Set(ical.ParamParticipationStatus, partstat)
	return out
}

func invCopyProp(p *ical.Prop) ical.Prop {
	out := ical.Prop{Name: p.Name, Value: p.Value, Params: ical.Params{}}
	for k, v := range p.Params {
		out.Params[k] = append([]string(nil), v...)
	}
	return out
}

// reply is the iTIP REPLY (RFC 5546 3.2.3) answering partstat, made at stamp: one VEVENT per
// event of the request that lists the person, each with the UID, DTSTAMP, ORGANIZER, the
// person's ATTENDEE, and the SEQUENCE and RECURRENCE-ID the request gave, with the zones a
// RECURRENCE-ID names.
func (iv *invite) reply(partstat string, stamp time.Time) (string, error) {
	out := ical.NewCalendar()
	out.Props.SetText(ical.PropProductID, invProdID)
	out.Props.SetText(ical.PropVersion, "2.0")
	out.Props.SetText(ical.PropMethod, "REPLY")
	tzids := map[string]bool{}
	var events []*ical.Component
	for _, c := range iv.comps {
		me := iv.attendee(c)
		if me == nil {
			continue
		}
		ev := ical.NewComponent(ical.CompEvent)
		ev.Props.Set(&ical.Prop{Name: ical.PropUID, Params: ical.Params{}, Value: iv.uid})
		ev.Props.Set(&ical.Prop{Name: ical.PropDateTimeStamp, Params: ical.Params{}, Value: stamp.UTC().Format("20060102T150405Z")})
		for _, name := range []string{ical.PropOrganizer, ical.PropSequence, ical.PropRecurrenceID} {
			if p := c.Props.Get(name); p != nil {
				cp := invCopyProp(p)
				ev.Props.Set(&cp)
				if tz := p.Params.Get(ical.ParamTimezoneID); tz != "" && name == ical.PropRecurrenceID {
					tzids[tz] = true
				}
			}
		}
		a := invAnswered(me, partstat)
		ev.Props.Set(&a)
		events = append(events, ev)
	}
	if len(events) == 0 {
		return "", errors.New("the invitation does not list the person in any of its events; answer it in a mail program")
	}
	for _, c := range iv.cal.Children {
		if c.Name == ical.CompTimezone && tzids[invPropValue(c, ical.PropTimezoneID)] {
			out.Children = append(out.Children, c)
		}
	}
	out.Children = append(out.Children, events...)
	return invEncode(out)
}

// fresh is the request decoded anew, so that a copy can be changed without touching iv.
func (iv *invite) fresh() (*ical.Calendar, []*ical.Component, error) {
	cal, err := ical.NewDecoder(strings.NewReader(iv.data)).Decode()
	if err != nil {
		return nil, nil, err
	}
	var comps []*ical.Component
	for _, c := range cal.Children {
		if c.Name == ical.CompEvent && invPropValue(c, ical.PropUID) == iv.uid {
			comps = append(comps, c)
		}
	}
	return cal, comps, nil
}

// setAnswer sets the person's PARTSTAT in each of comps that lists them.
func (iv *invite) setAnswer(comps []*ical.Component, partstat string) {
	for _, c := range comps {
		if p := iv.attendee(c); p != nil {
			*p = invAnswered(p, partstat)
		}
	}
}

// newCopy is the person's calendar copy of the request: the request without its METHOD (RFC
// 6047 2.4: a calendar object is stored without one), only its zones and the events of its
// UID, the person's answer set.
func (iv *invite) newCopy(partstat string) (string, error) {
	cal, comps, err := iv.fresh()
	if err != nil {
		return "", err
	}
	cal.Props.Del(ical.PropMethod)
	if cal.Props.Get(ical.PropProductID) == nil {
		cal.Props.SetText(ical.PropProductID, invProdID)
	}
	if cal.Props.Get(ical.PropVersion) == nil {
		cal.Props.SetText(ical.PropVersion, "2.0")
	}
	var kids []*ical.Component
	for _, c := range cal.Children {
		if c.Name == ical.CompTimezone {
			kids = append(kids, c)
		}
	}
	cal.Children = append(kids, comps...)
	iv.setAnswer(comps, partstat)
	return invEncode(cal)
}

// rid is the key of an event of a series: its RECURRENCE-ID as written ("" for the master).
func invRID(c *ical.Component) string {
	p := c.Props.Get(ical.PropRecurrenceID)
	if p == nil {
		return ""
	}
	return p.Params.Get(ical.ParamTimezoneID) + ":" + strings.ToUpper(strings.TrimSpace(p.Value))
}

func invSequence(c *ical.Component) int {
	if p := c.Props.Get(ical.PropSequence); p != nil {
		if n, err := p.Int(); err == nil {
			return n
		}
	}
	return 0
}

// mergedCopy is existing (the person's calendar object of the same UID) with the request's
// events in it: an event the request sends at least as new (SEQUENCE) replaces the one of the
// same RECURRENCE-ID, an event it lacks is added, and the person's answer is set in every event
// the request names; zones it lacks are added. Every other part of existing is kept.
func (iv *invite) mergedCopy(existing []byte, partstat string) (string, error) {
	cal, err := ical.NewDecoder(bytes.NewReader(existing)).Decode()
	if err != nil {
		return "", fmt.Errorf("the calendar's copy of the event cannot be read (%v)", err)
	}
	req, comps, err := iv.fresh()
	if err != nil {
		return "", err
	}
	haveTZ := map[string]bool{}
	for _, c := range cal.Children {
		if c.Name == ical.CompTimezone {
			haveTZ[invPropValue(c, ical.PropTimezoneID)] = true
		}
	}
	var zones []*ical.Component
	for _, c := range req.Children {
		if c.Name == ical.CompTimezone && !haveTZ[invPropValue(c, ical.PropTimezoneID)] {
			zones = append(zones, c)
		}
	}
	var touched []*ical.Component
	for _, rc := range comps {
		found := false
		for i, c := range cal.Children {
			if c.Name != ical.CompEvent || invPropValue(c, ical.PropUID) != iv.uid || invRID(c) != invRID(rc) {
				continue
			}
			found = true
			if invSequence(rc) >= invSequence(c) {
				cal.Children[i] = rc
				touched = append(touched, rc)
			} else {
				touched = append(touched, c)
			}
			break
		}
		if !found {
			cal.Children = append(cal.Children, rc)
			touched = append(touched, rc)
		}
	}
	cal.Children = append(zones, cal.Children...)
	iv.setAnswer(touched, partstat)
	return invEncode(cal)
}

// encodeCalendar writes cal with CR LF line ends, its lines folded at 75 octets (RFC 5545 3.1).
func invEncode(cal *ical.Calendar) (string, error) {
	var b bytes.Buffer
	if err := ical.NewEncoder(&b).Encode(cal); err != nil {
		return "", fmt.Errorf("the calendar object cannot be written (%v)", err)
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(b.String(), "\r\n") {
		l := strings.TrimSuffix(line, "\r\n")
		if l == "" {
			continue
		}
		for n := 75; len(l) > n; n = 74 { // a continuation line starts with a space
			cut := n
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			out.WriteString(l[:cut] + "\r\n ")
			l = l[cut:]
		}
		out.WriteString(l + "\r\n")
	}
	return out.String(), nil
}

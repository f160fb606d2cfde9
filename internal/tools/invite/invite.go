// Package invite serves the tools of catalog/calendar_invite.yaml: answering a meeting
// invitation received by mail (calendar_respond), and what mail_show shows of one.
package invite

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/calendar"
	"github.com/postern-mcp/postern/internal/compose"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/source/caldav"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/calendars"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
)

// Invitations in mail. A message the sync marked (store.Row.Invitation) shows its event in
// mail_show, read from the iCalendar text the store keeps (store.Body.Calendar); every string
// of it leaves through the answer boundary as the catalog's formats say. calendar_respond
// answers one: a send (mail:send), whose handler also wants calendar:write since it writes
// the person's calendar copy. The commit sends the REPLY once, keeps a copy in Sent, then puts
// the event in the calendar with If-None-Match (new) or If-Match (the UID already there) and
// stores what the server then holds; what fails after the send is a warning, never a retry.
// The person's projects: a kept message is as missing (mail.Mail.Message); an invitation whose
// event is kept (tied to a closed project, or its copy's calendar kept) is not answered, and
// mail_show says nothing of a kept calendar copy.

// Invite implements generated.CalendarInviteHandlers.
type Invite struct {
	*kit.Kit
	// Mail finds the message, sends the answer and keeps its copy; Calendars finds the
	// calendar the event goes to.
	Mail      *mail.Mail
	Calendars *calendars.Calendars
}

var _ generated.CalendarInviteHandlers = (*Invite)(nil)

// invProdID names postern as the maker of what it writes.
const invProdID = "-//postern//" + generated.ToolCalendarRespond + "//EN"

// invAnswers maps calendar_respond's answers to PARTSTAT values and to the answer's words.
var invAnswers = map[string]struct{ partstat, word, subject string }{
	"accept":    {"ACCEPTED", "accepted", "Accepted"},
	"tentative": {"TENTATIVE", "tentative", "Tentative"},
	"decline":   {"DECLINED", "declined", "Declined"},
}

// CalendarRespond implements calendar_respond and calendar_respond_commit.
func (s *Invite) CalendarRespond(ctx context.Context, a *generated.CalendarRespondArgs) (*generated.Action, error) {
	if !kit.HasScope(ctx, generated.ScopeCalendarWrite) {
		return nil, errors.New(generated.ToolCalendarRespond + " writes the person's calendar as well as sending the reply, so it needs the scope " +
			strconv.Quote(generated.ScopeCalendarWrite) + " besides " + strconv.Quote(generated.ScopeMailSend) + ", which this connection was not granted; ask the person to grant " + generated.ScopeCalendarWrite)
	}
	ans, ok := invAnswers[a.Answer]
	if !ok {
		return nil, errors.New("answer is accept, tentative or decline")
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	st, r, err := s.Mail.Message(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	switch r.Invitation {
	case store.InvitationRequest:
	case store.InvitationCancel:
		return nil, fmt.Errorf("message %s cancels a meeting; there is nothing to answer", a.ID)
	default:
		return nil, fmt.Errorf("message %s carries no meeting invitation (a text/calendar part with METHOD:REQUEST); only a row with invitation: request can be answered", a.ID)
	}
	if r.Forged {
		return nil, fmt.Errorf("message %s failed its sender's checks (DMARC, SPF or DKIM), so its organiser may not be who it says: postern does not answer it; the person can answer it in a mail program if it is genuine", a.ID)
	}
	b, err := st.Body(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	if b.Calendar == "" {
		return nil, fmt.Errorf("message %s was synced before postern kept invitations' calendar parts; answer it in a mail program", a.ID)
	}
	acct, err := s.Mail.SendingAccount(ctx, r.Account, true)
	if err != nil {
		return nil, err
	}
	own := mail.OwnAddresses(acct)
	var ownAddrs []string
	for _, o := range own {
		ownAddrs = append(ownAddrs, o.Addr)
	}
	iv, err := calendar.ReadInvite(b.Calendar, ownAddrs, invProdID)
	if err != nil {
		return nil, err
	}
	org, err := compose.ParseAddress("organizer", iv.Organizer)
	if err != nil {
		return nil, fmt.Errorf("the invitation's organiser %q is not an address postern can write to; answer it in a mail program", iv.Organizer)
	}
	if err := s.Mail.CheckRecipients([]string{org.Addr}); err != nil {
		return nil, err
	}
	from := own[0]
	for _, o := range own {
		if strings.EqualFold(o.Addr, iv.Me) {
			from = o
			break
		}
	}
	summary := compose.CleanLine(calendar.Text(iv.Comps[0], ical.PropSummary), 200)
	title := summary
	if title == "" {
		title = "an invitation"
	}
	who := from.Addr
	if from.Name != "" {
		who = compose.CleanLine(from.Name, 200) + " <" + from.Addr + ">"
	}
	m := compose.Message{
		From: from, To: []compose.Address{{Addr: org.Addr}}, Subject: ans.subject + ": " + title,
		Body: fmt.Sprintf("%s has answered the invitation %q: %s.\n", who, title, ans.word),
	}
	// The REPLY as previewed and hashed carries no DTSTAMP of its own: the commit stamps it
	// when it goes out, as a message gets its Date.
	ics, err := iv.Reply(ans.partstat, time.Time{})
	if err != nil {
		return nil, err
	}
	tgt, note, err := s.calendarTarget(ctx, acc, a.Calendar, ownAddrs, iv, ans.partstat)
	if err != nil {
		return nil, err
	}
	if err := refuseInvitation(acc, iv, tgt); err != nil {
		return nil, err
	}
	cm := compose.CalendarMessage{Message: m, Method: "REPLY", Calendar: ics}
	what := "answer a meeting invitation: send its organiser an iMIP reply (" + ans.word + ") and "
	switch {
	case tgt == nil:
		what += "keep no calendar copy (" + note + ")"
	case tgt.existing != nil:
		what += "update the person's calendar copy of the event"
	default:
		what += "put the event in the person's calendar"
	}
	p := mail.Preview(m, what)
	p.BodyLines = append(p.BodyLines, "--- text/calendar; method=REPLY ---")
	for _, l := range strings.Split(invUnfold(ics), "\r\n") {
		if strings.HasPrefix(l, "DTSTAMP") || l == "" {
			continue
		}
		p.BodyLines = append(p.BodyLines, l)
	}
	if tgt != nil {
		p.BodyLines = append(p.BodyLines, "--- calendar copy ---", "calendar "+tgt.coll.Name+" of account "+tgt.acct.Name)
	}
	payload := struct {
		Kind, Message string
		Mail          any
		Copy          *invTargetKey
	}{generated.ToolCalendarRespond, store.EncodeID(r.ID), cm.Normalized(), tgt.key()}
	return &generated.Action{
		Account: acct.Name, Preview: p, Payload: payload,
		Run: func(ctx context.Context) (any, error) {
			return s.respond(ctx, acct, cm, iv, ans.partstat, ans.word, tgt, note)
		},
	}, nil
}

// refuseInvitation refuses an answer whose event the person's projects keep: its calendar
// copy would go into a kept calendar (or one of no project while those are closed), or the
// event is tied to a project not opened. nil: allowed.
func refuseInvitation(a *kit.Access, iv *calendar.Invite, tgt *invTarget) error {
	if !a.Active() {
		return nil
	}
	if tgt != nil {
		return a.RefuseWrite("the event", projects.Thing{Kind: projects.Event, Account: tgt.coll.Account, Collection: tgt.coll.Name, URL: tgt.coll.URL, UID: iv.UID})
	}
	ev := projects.Thing{Kind: projects.Event, UID: iv.UID}
	if len(a.Set().Of(ev)) > 0 && a.Keeps(ev) {
		return errors.New("this invitation's event belongs to a project the person has not opened to agents, so postern does not answer it; the person can open it (postern project open ID) or answer it in a mail program")
	}
	return nil
}

// unfold joins an iCalendar text's continuation lines.
func invUnfold(s string) string { return strings.ReplaceAll(s, "\r\n ", "") }

// invTarget is the calendar the person's copy goes in, and the copy there already is.
type invTarget struct {
	acct     config.Account
	coll     *store.Collection
	existing *store.Object
}

// invTargetKey is what of a target binds the token.
type invTargetKey struct{ Account, Calendar, Href, ETag string }

func (t *invTarget) key() *invTargetKey {
	if t == nil {
		return nil
	}
	k := &invTargetKey{Account: t.acct.Name, Calendar: t.coll.URL}
	if t.existing != nil {
		k.Href, k.ETag = t.existing.Href, t.existing.ETag
	}
	return k
}

// calendarTarget finds the calendar of the person's copy: the one named; else one that holds
// the event already; else the first writable calendar of a visible CalDAV account whose user
// or address is one of the person's. nil and why when there is none (or the answer is a
// decline and the event is in no calendar).
// Calendars the person's projects keep are never listed, and are chosen only when named or
// when they hold the event already (the answer is then refused: refuseInvitation).
func (s *Invite) calendarTarget(ctx context.Context, acc *kit.Access, name *string, own []string, iv *calendar.Invite, partstat string) (*invTarget, string, error) {
	st, cs, err := s.Calendars.Collections(ctx, store.KindCalendar)
	if err != nil {
		return nil, "", err
	}
	accts, err := s.Visible(ctx)
	if err != nil {
		return nil, "", err
	}
	byName := map[string]config.Account{}
	for _, a := range accts {
		if kinds.Has(a.Kind, kinds.Calendar|kinds.Writes) {
			byName[a.Name] = a
		}
	}
	// Writable calendars, those the agent may put this event in first.
	kept := func(c *store.Collection) bool {
		return acc.Keeps(projects.Thing{Kind: projects.Event, Account: c.Account, Collection: c.Name, URL: c.URL, UID: iv.UID})
	}
	var writable, keptWritable []*store.Collection
	for _, c := range cs {
		if _, ok := byName[c.Account]; ok && c.Writable {
			if kept(c) {
				keptWritable = append(keptWritable, c)
			} else {
				writable = append(writable, c)
			}
		}
	}
	writable = append(writable, keptWritable...)
	var existing map[int64]*store.Object
	if len(writable) > 0 && st != nil {
		objs, err := st.ObjectsByUID(ctx, calendars.IDs(writable), iv.UID)
		if err != nil {
			return nil, "", err
		}
		existing = map[int64]*store.Object{}
		for _, o := range objs {
			if existing[o.CollectionID] == nil {
				existing[o.CollectionID] = o
			}
		}
	}
	pick := func(c *store.Collection) (*invTarget, string, error) {
		t := &invTarget{acct: byName[c.Account], coll: c, existing: existing[c.ID]}
		if t.existing == nil && partstat == "DECLINED" {
			return nil, "the invitation is declined and the event is in no calendar", nil
		}
		return t, "", nil
	}
	if name != nil && *name != "" {
		named, err := calendars.PickCollection(cs, name, "calendar", generated.ToolCalendarList)
		if err != nil {
			_, err = calendars.PickCollections(acc, projects.Event, cs, name, "calendar", generated.ToolCalendarList) // lists only the shown
			return nil, "", err
		}
		for _, c := range named {
			if _, ok := byName[c.Account]; ok && c.Writable {
				return pick(c)
			}
		}
		if err := refuseInvitation(acc, iv, &invTarget{coll: named[0]}); err != nil {
			return nil, "", err // a kept calendar is not said to be read-only
		}
		return nil, "", fmt.Errorf("calendar %s is read-only here; name a writable calendar of a CalDAV account (%s says which are)", named[0].Name, generated.ToolCalendarList)
	}
	for _, c := range writable {
		if existing[c.ID] != nil {
			return pick(c)
		}
	}
	mine := map[string]bool{strings.ToLower(iv.Me): true}
	for _, a := range own {
		mine[strings.ToLower(a)] = true
	}
	for _, c := range writable {
		if kept(c) {
			continue // never chosen for an event not in it already
		}
		a := byName[c.Account]
		for _, x := range append([]string{a.User, a.From()}, a.Aliases...) {
			if x != "" && mine[strings.ToLower(strings.TrimSpace(x))] {
				return pick(c)
			}
		}
	}
	if partstat == "DECLINED" {
		return nil, "the invitation is declined and the event is in no calendar", nil
	}
	return nil, "no writable calendar of a CalDAV account whose user or address is the person's is configured (postern account add … --caldav URL --address ADDR)", nil
}

// respond is the commit: the REPLY sent once, its copy kept in Sent, then the calendar copy.
func (s *Invite) respond(ctx context.Context, acct config.Account, cm compose.CalendarMessage, iv *calendar.Invite, partstat, word string, tgt *invTarget, note string) (*generated.InvitationAnswer, error) {
	cm.Date = time.Now()
	cm.MessageID = compose.NewMessageID(cm.From)
	ics, err := iv.Reply(partstat, cm.Date)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	cm.Calendar = ics
	raw, err := cm.Bytes(false)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	rcpts := cm.Recipients()
	if err := s.Mail.CheckRecipients(rcpts); err != nil { // [send] allow may have narrowed since the prepare
		return nil, err
	}
	if err := mail.Submit(ctx, acct, cm.From.Addr, rcpts, raw); err != nil {
		return nil, err
	}
	res := &generated.InvitationAnswer{Outcome: "sent", Answer: word, Account: acct.Name, Organizer: cm.To[0].Addr, MessageID: cm.MessageID, Note: note}
	sent := &generated.SendResult{}
	s.Mail.KeepSentCopy(ctx, acct, cm.Date, raw, sent, nil)
	res.SentCopy = sent.SentCopy
	var warns []string
	if sent.Warning != "" {
		warns = append(warns, sent.Warning)
	}
	if tgt != nil {
		if id, err := s.putCopy(ctx, tgt, iv, partstat); err != nil {
			warns = append(warns, "the reply was sent, but the event was not put in calendar "+tgt.coll.Name+": "+err.Error())
		} else {
			res.Calendar, res.Event = tgt.coll.Name, id
		}
	}
	res.Warning = strings.Join(warns, "; ")
	return res, nil
}

// invSafeName is a UID that can stand as an object's file name as it is.
var invSafeName = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,120}$`)

// putCopy writes the person's copy of the event (If-None-Match for a new object, If-Match
// with the ETag just read for one already there) and stores what the server then holds. It
// returns the event's id.
func (s *Invite) putCopy(ctx context.Context, t *invTarget, iv *calendar.Invite, partstat string) (string, error) {
	cl, err := caldav.ClientFor(ctx, t.acct, t.coll)
	if err != nil {
		return "", err
	}
	var href, etag, data string
	if t.existing != nil {
		href = t.existing.Href
		cur, err := cl.Get(ctx, href)
		var he *caldav.HTTPError
		switch {
		case errors.As(err, &he) && he.Status == 404:
			// Gone since the last sync: written anew.
		case err != nil:
			return "", err
		default:
			etag = cur.ETag
			if data, err = iv.MergedCopy(cur.Data, partstat); err != nil {
				return "", err
			}
		}
	}
	if data == "" {
		if href == "" {
			u, err := url.Parse(t.coll.URL)
			if err != nil {
				return "", err
			}
			name := iv.UID
			if !invSafeName.MatchString(name) || strings.HasPrefix(name, ".") {
				name = fmt.Sprintf("%x", sha256.Sum256([]byte(iv.UID)))[:32]
			}
			href = strings.TrimSuffix(u.EscapedPath(), "/") + "/" + name + ".ics"
		}
		if data, err = iv.NewCopy(partstat); err != nil {
			return "", err
		}
	}
	newTag, err := cl.PutIfMatch(ctx, href, etag, []byte(data))
	if err != nil {
		return "", err
	}
	o := &store.Object{CollectionID: t.coll.ID, Href: href, ETag: newTag, Data: data}
	if got, err := cl.Get(ctx, href); err == nil {
		o.ETag, o.Data = got.ETag, string(got.Data)
	}
	if err := caldav.Fill(o); err != nil {
		return "", err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return "", err
	}
	if err := st.PutObject(ctx, o); err != nil {
		return "", err
	}
	return "e" + strconv.FormatInt(o.ID, 36), nil
}

// InvitationView is what mail_show shows of the invitation r carries, from its stored
// iCalendar text and the person's calendar copy, if any.
func (s *Invite) InvitationView(ctx context.Context, r *store.Row, b *store.Body) *generated.Invitation {
	inv := &generated.Invitation{Method: r.Invitation}
	if b.Calendar == "" {
		inv.Problem = "The invitation's calendar part was not kept (synced before postern kept them)."
		return inv
	}
	v := s.Calendars.CalendarView(ctx)
	cal, err := calendar.Parse(b.Calendar, v.Person)
	if err != nil {
		inv.Problem = err.Error()
		return inv
	}
	e, ok := cal.Instance("")
	if !ok {
		inv.Problem = "The invitation holds no event postern can read."
		if len(cal.Problems) > 0 {
			inv.Problem = cal.Problems[0]
		}
		return inv
	}
	inv.Summary = calendar.Text(e.Comp, ical.PropSummary)
	inv.Location = calendar.Text(e.Comp, ical.PropLocation)
	if org, ok := calendar.Organizer(e.Comp); ok {
		inv.Organizer = calendars.PersonString(org)
	}
	if e.AllDay {
		inv.Start, inv.End = e.FirstDay.Format(calendars.RowDay), e.LastDay.Format(calendars.RowDay)
		inv.AllDay = kit.Ptr(true)
	} else {
		inv.Start, inv.End = calendars.ShowTime(e.Start, v.Person), calendars.ShowTime(e.End, v.Person)
	}
	if e.RecurrenceID != "" && e.Comp.Props.Get(ical.PropRecurrenceID) != nil {
		inv.Instance = kit.Ptr(true)
	} else if e.Recurring {
		inv.Recurrence = cal.Rule(e)
	}
	answer := func(comp *ical.Component) string {
		for _, a := range calendar.Attendees(comp) {
			if v.Own[strings.ToLower(a.Email)] {
				return calendars.Answers[a.PartStat]
			}
		}
		return ""
	}
	inv.MyAnswer = answer(e.Comp)
	if r.InvitationUID == "" {
		return inv
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return inv
	}
	st, cs, err := s.Calendars.Collections(ctx, store.KindCalendar, store.KindTasks)
	if err != nil || len(cs) == 0 {
		return inv
	}
	found, err := st.ObjectsByUID(ctx, calendars.IDs(cs), r.InvitationUID)
	if err != nil {
		return inv
	}
	coll := calendars.ByID(cs)
	var objs []*store.Object // the copies this agent may see
	for _, o := range found {
		if !calendars.KeepsObject(acc, projects.Event, o, coll[o.CollectionID]) {
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 {
		return inv
	}
	mine, err := calendar.Parse(objs[0].Data, v.Person)
	if err != nil {
		return inv
	}
	inv.InCalendar = coll[objs[0].CollectionID].Name
	key := ""
	if inv.Instance != nil {
		key = e.RecurrenceID
	}
	if ce, ok := mine.Instance(key); ok {
		if a := answer(ce.Comp); a != "" {
			inv.MyAnswer = a
		}
	}
	return inv
}

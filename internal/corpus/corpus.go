// Package corpus makes deterministic sample mailboxes for tests, the demo and
// the benchmark: reserved domains only (RFC 2606), never real people.
// It never reads the clock, the network or map order: the same Options give the same bytes.
package corpus

import (
	"math/rand/v2"
	"strings"
	"time"
)

// DefaultFolders are the IMAP folders used when Options.Folders is empty.
var DefaultFolders = []string{"INBOX", "Archive", "Sent", "Drafts", "Work/Projects", "Newsletters"}

// DefaultStart is the earliest message date when Options.Start is zero.
var DefaultStart = time.Date(2024, 11, 30, 0, 0, 0, 0, time.UTC)

// Options selects a corpus. The zero value of every field but Messages has
// a default.
type Options struct {
	Seed     int64     // same seed, same corpus, byte for byte
	Messages int       // total messages
	Folders  []string  // IMAP folder names, "/" as hierarchy separator; default DefaultFolders
	Start    time.Time // default DefaultStart; dates spread over two years after Start
}

// Attachment describes one attachment part of a Message.
type Attachment struct {
	Name        string // decoded file name
	ContentType string // media type without parameters, e.g. "application/pdf"
	Size        int64  // decoded bytes
}

// Message is one generated message and what the tests may check it against.
type Message struct {
	Folder      string
	Flags       []string  // IMAP system flags in ASCII order, among \Answered, \Flagged, \Seen
	Date        time.Time // also in the Date header, with the same zone offset
	MessageID   string    // without angle brackets
	InReplyTo   string    // without angle brackets; empty for a thread's first message
	References  []string  // oldest first, without angle brackets
	Subject     string    // decoded
	FromName    string    // decoded display name
	FromEmail   string
	To          []string // addresses only
	Attachments []Attachment
	BodyWords   []string // words present in the decoded body text; the last occurs in no other message
	Raw         []byte   // the full RFC 5322 message with CRLF line endings
}

// Generate returns the whole corpus. For large corpora use Each.
func Generate(opt Options) []Message {
	var out []Message
	if opt.Messages > 0 {
		out = make([]Message, 0, opt.Messages)
	}
	_ = Each(opt, func(_ int, m *Message) error {
		out = append(out, *m)
		return nil
	})
	return out
}

// Each calls fn for every message in order, holding only a small plan of the
// corpus (a few bytes per message) rather than the messages. m is a new
// value on every call, so fn may keep it. Each stops at and returns the
// first error fn returns.
func Each(opt Options, fn func(i int, m *Message) error) error {
	g := newGen(opt)
	for i := range g.n {
		if err := fn(i, g.message(i)); err != nil {
			return err
		}
	}
	return nil
}

type role uint8

const (
	roleOther role = iota
	roleInbox
	roleSent
	roleDrafts
	roleLists
)

func roleOf(folder string) role {
	switch strings.ToLower(folder) {
	case "inbox":
		return roleInbox
	case "sent", "sent items", "sent messages", "sent mail":
		return roleSent
	case "drafts":
		return roleDrafts
	case "newsletters", "lists", "news":
		return roleLists
	}
	return roleOther
}

type kind uint8

const (
	kPerson kind = iota // from a correspondent to the owner
	kOrg                // a notification from an organisation
	kList               // a newsletter
	kSent               // from the owner
	kDraft              // from the owner, unsent
)

// entry is the plan of one message: what the messages after it need to know.
type entry struct {
	parent, root int32 // -1 and self for a thread's first message
	other        int32 // index into people, orgs or lists
	folder       uint16
	kind         kind
	depth        uint8
	answered     bool // the owner replied to it
}

func (e entry) fromOwner() bool { return e.kind == kSent || e.kind == kDraft }

type gen struct {
	seed    uint64
	n       int
	folders []string
	start   time.Time
	step    int64 // seconds between consecutive messages
	plan    []entry
}

func newGen(opt Options) *gen {
	g := &gen{seed: uint64(opt.Seed), n: max(opt.Messages, 0), folders: opt.Folders, start: opt.Start}
	if len(g.folders) == 0 {
		g.folders = DefaultFolders
	}
	if g.start.IsZero() {
		g.start = DefaultStart
	}
	if g.n > 0 {
		span := int64(g.start.AddDate(2, 0, 0).Sub(g.start) / time.Second)
		g.step = max(span/int64(g.n), 1)
	}
	g.makePlan()
	return g
}

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Independent random streams per message, so that a message can be rebuilt
// (or a thread parent's subject re-derived) without generating the others.
const (
	streamPlan uint64 = iota + 1
	streamMain
	streamSubject
	streamPara
	streamDate
)

func (g *gen) hash(i int, stream uint64) uint64 {
	return mix(g.seed ^ mix(uint64(i)+0x51a7) ^ mix(stream*0x9E3779B97F4A7C15))
}

func (g *gen) stream(i int, stream uint64) *rand.Rand {
	a := g.hash(i, stream)
	return rand.New(rand.NewPCG(a, mix(a+stream)))
}

// makePlan decides, for every message, its folder, kind, correspondent and
// thread parent. About 30% of messages are replies: threads of 2–8 messages
// whose replies alternate between the owner (in Sent) and the correspondent.
func (g *gen) makePlan() {
	g.plan = make([]entry, g.n)
	pr := g.stream(-1, streamPlan)
	roles := make([]role, len(g.folders))
	weights := make([]float64, len(g.folders))
	sent, inbox, others, total := -1, -1, 0, 0.0
	for f, name := range g.folders {
		roles[f] = roleOf(name)
		if roles[f] == roleOther {
			others++
		}
	}
	for f, r := range roles {
		switch r {
		case roleInbox:
			weights[f] = 45
			if inbox < 0 {
				inbox = f
			}
		case roleSent:
			weights[f] = 12
			if sent < 0 {
				sent = f
			}
		case roleDrafts:
			weights[f] = 2
		case roleLists:
			weights[f] = 11
		default:
			weights[f] = 30 / float64(others)
		}
		total += weights[f]
	}
	pickFolder := func() int {
		x := pr.Float64() * total
		for f, w := range weights {
			if x < w {
				return f
			}
			x -= w
		}
		return len(weights) - 1
	}
	pickPerson := func() int32 {
		if pr.Float64() < 0.2 {
			return int32(len(people) - len(nonASCIIPeople) + pr.IntN(len(nonASCIIPeople)))
		}
		// a few people write often, most rarely
		return int32(pr.IntN(pr.IntN(len(people)-len(nonASCIIPeople)) + 1))
	}
	type thread struct {
		root, last int32
		left       int
	}
	var open []thread
	for i := range g.n {
		if len(open) > 0 && (pr.Float64() < 0.32 || len(open) >= 64) {
			k := pr.IntN(len(open))
			t := &open[k]
			parent, root := g.plan[t.last], g.plan[t.root]
			e := entry{parent: t.last, root: t.root, other: root.other, folder: root.folder, depth: parent.depth + 1}
			ownerReplies := !parent.fromOwner()
			// Sometimes a follow-up to one's own message instead.
			if x := pr.Float64(); (ownerReplies && x < 0.35) || (!ownerReplies && x < 0.15) {
				ownerReplies = !ownerReplies
			}
			if ownerReplies {
				e.kind = kSent
				if sent >= 0 {
					e.folder = uint16(sent)
				}
				if !parent.fromOwner() {
					g.plan[t.last].answered = true
				}
			} else {
				e.kind = kPerson
				if roles[root.folder] == roleSent && inbox >= 0 {
					e.folder = uint16(inbox)
				}
			}
			g.plan[i] = e
			t.last = int32(i)
			if t.left--; t.left == 0 {
				open[k] = open[len(open)-1]
				open = open[:len(open)-1]
			}
			continue
		}
		f := pickFolder()
		e := entry{parent: -1, root: int32(i), folder: uint16(f)}
		switch roles[f] {
		case roleSent:
			e.kind, e.other = kSent, pickPerson()
		case roleDrafts:
			e.kind, e.other = kDraft, pickPerson()
		case roleLists:
			e.kind, e.other = kList, int32(pr.IntN(len(lists)))
		default:
			if pr.Float64() < 0.22 {
				e.kind, e.other = kOrg, int32(pr.IntN(len(orgs)))
			} else {
				e.kind, e.other = kPerson, pickPerson()
			}
		}
		g.plan[i] = e
		if (e.kind == kPerson || e.kind == kSent) && pr.Float64() < 0.17 {
			open = append(open, thread{int32(i), int32(i), 1 + pr.IntN(7)})
		}
	}
}

// zones are the offsets messages are dated in.
var zones = []*time.Location{
	time.UTC,
	time.FixedZone("", 1*3600),
	time.FixedZone("", 2*3600),
	time.FixedZone("", -5*3600),
	time.FixedZone("", -8*3600),
	time.FixedZone("", 9*3600),
	time.FixedZone("", 5*3600+1800),
}

// date is strictly increasing with i, so a reply is always later than its parent.
func (g *gen) date(i int) time.Time {
	h := g.hash(i, streamDate)
	sec := int64(i)*g.step + int64(h%uint64(g.step))
	return g.start.Add(time.Duration(sec) * time.Second).In(zones[(h>>32)%uint64(len(zones))])
}

// sender returns the name, first name and address a message is from.
func (g *gen) sender(i int) (name, first, email string) {
	e := g.plan[i]
	switch e.kind {
	case kOrg:
		o := orgs[e.other]
		return o.name, o.name, o.email
	case kList:
		l := lists[e.other]
		return l.name, l.name, l.email
	case kSent, kDraft:
		return OwnerName, "Sam", OwnerEmail
	}
	p := people[e.other]
	return p.name, p.first, p.email
}

func domainOf(email string) string { return email[strings.LastIndexByte(email, '@')+1:] }

func (g *gen) messageID(i int) string {
	_, _, email := g.sender(i)
	h := g.hash(i, streamMain)
	return hex64(h>>8) + "." + itoa(i) + "@" + domainOf(email)
}

const hexDigits = "0123456789abcdef"

func hex64(x uint64) string {
	var b [16]byte
	for k := 15; k >= 0; k-- {
		b[k] = hexDigits[x&15]
		x >>= 4
	}
	return string(b[:])
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	k := len(b)
	for ; i > 0; i /= 10 {
		k--
		b[k] = byte('0' + i%10)
	}
	return string(b[k:])
}

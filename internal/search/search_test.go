package search_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/postern-mcp/postern/internal/search"
)

// now anchors relative dates in these tests; not at midnight, so a relative
// date is visibly different from a day.
var now = time.Date(2025, 6, 15, 10, 30, 0, 0, time.UTC)

func bp(v bool) *bool { return &v }

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func plain(text string) search.Term  { return search.Term{Text: text} }
func prefix(text string) search.Term { return search.Term{Text: text, Prefix: true} }
func neg(text string) search.Term    { return search.Term{Text: text, Negated: true} }
func field(f, text string) search.Term {
	return search.Term{Field: f, Text: text}
}
func negField(f, text string) search.Term {
	return search.Term{Field: f, Text: text, Negated: true}
}

func TestParse(t *testing.T) {
	cases := []struct {
		q    string
		want search.Query
	}{
		// Words, phrases, negation and the prefix rule.
		{``, search.Query{}},
		{`   `, search.Query{}},
		{`budget`, search.Query{Terms: []search.Term{prefix("budget")}}},
		{`budget report`, search.Query{Terms: []search.Term{plain("budget"), prefix("report")}}},
		{`  budget   report  `, search.Query{Terms: []search.Term{plain("budget"), prefix("report")}}},
		{"budget\treport\n", search.Query{Terms: []search.Term{plain("budget"), prefix("report")}}},
		{`"budget report"`, search.Query{Terms: []search.Term{plain("budget report")}}},
		{`"budget"`, search.Query{Terms: []search.Term{plain("budget")}}},
		{`report "budget"`, search.Query{Terms: []search.Term{plain("report"), plain("budget")}}},
		{`"quarterly report" budget`, search.Query{Terms: []search.Term{plain("quarterly report"), prefix("budget")}}},
		{`"  spaced  phrase "`, search.Query{Terms: []search.Term{plain("  spaced  phrase ")}}},
		{`-budget`, search.Query{Terms: []search.Term{neg("budget")}}},
		{`report -budget`, search.Query{Terms: []search.Term{plain("report"), neg("budget")}}},
		{`-budget report`, search.Query{Terms: []search.Term{neg("budget"), prefix("report")}}},
		{`-"quarterly report" budget`, search.Query{Terms: []search.Term{neg("quarterly report"), prefix("budget")}}},
		{`--budget`, search.Query{Terms: []search.Term{neg("-budget")}}},
		{`"foo"bar`, search.Query{Terms: []search.Term{plain("foo"), prefix("bar")}}},
		{`foo-bar`, search.Query{Terms: []search.Term{prefix("foo-bar")}}},
		{`alice.adams@example.com`, search.Query{Terms: []search.Term{prefix("alice.adams@example.com")}}},
		{`Café Größe`, search.Query{Terms: []search.Term{plain("Café"), prefix("Größe")}}},
		{`Привет 日本語`, search.Query{Terms: []search.Term{plain("Привет"), prefix("日本語")}}},
		{`Re: budget`, search.Query{Terms: []search.Term{plain("Re:"), prefix("budget")}}},
		{`budget Re:`, search.Query{Terms: []search.Term{plain("budget"), prefix("Re:")}}},
		{`"foo:bar"`, search.Query{Terms: []search.Term{plain("foo:bar")}}},
		{`10:30`, search.Query{Terms: []search.Term{prefix("10:30")}}},
		{`Größe:x`, search.Query{Terms: []search.Term{prefix("Größe:x")}}},
		{`http://example.com/x`, search.Query{Terms: []search.Term{prefix("http://example.com/x")}}},
		// Punctuation alone is no term, and does not take the prefix away.
		{`-`, search.Query{}},
		{`- budget`, search.Query{Terms: []search.Term{prefix("budget")}}},
		{`budget ...`, search.Query{Terms: []search.Term{prefix("budget")}}},
		{`budget -- "?!"`, search.Query{Terms: []search.Term{prefix("budget")}}},
		{`""`, search.Query{}},
		// Operators that are not text do not take the prefix away; text operators do.
		{`budget in:INBOX`, search.Query{Terms: []search.Term{prefix("budget")}, Folders: []string{"INBOX"}}},
		{`budget is:unread has:attachment`, search.Query{Terms: []search.Term{prefix("budget")}, Unread: bp(true), HasAttachment: true}},
		{`budget from:alice`, search.Query{Terms: []search.Term{plain("budget"), field("from", "alice")}}},
		{`from:alice budget`, search.Query{Terms: []search.Term{field("from", "alice"), prefix("budget")}}},

		// Text operators: never a prefix.
		{`from:alice`, search.Query{Terms: []search.Term{field("from", "alice")}}},
		{`FROM:Alice`, search.Query{Terms: []search.Term{field("from", "Alice")}}},
		{`From:"Alice Adams"`, search.Query{Terms: []search.Term{field("from", "Alice Adams")}}},
		{`from:alice.adams@example.com`, search.Query{Terms: []search.Term{field("from", "alice.adams@example.com")}}},
		{`-from:alice`, search.Query{Terms: []search.Term{negField("from", "alice")}}},
		{`to:bob@example.org`, search.Query{Terms: []search.Term{field("to", "bob@example.org")}}},
		{`-to:bob`, search.Query{Terms: []search.Term{negField("to", "bob")}}},
		{`cc:carla`, search.Query{Terms: []search.Term{field("cc", "carla")}}},
		{`Cc:"Carla Diaz"`, search.Query{Terms: []search.Term{field("cc", "Carla Diaz")}}},
		{`-cc:carla`, search.Query{Terms: []search.Term{negField("cc", "carla")}}},
		{`subject:budget`, search.Query{Terms: []search.Term{field("subject", "budget")}}},
		{`subject:"quarterly report"`, search.Query{Terms: []search.Term{field("subject", "quarterly report")}}},
		{`-subject:re`, search.Query{Terms: []search.Term{negField("subject", "re")}}},
		{`subject:Résumé`, search.Query{Terms: []search.Term{field("subject", "Résumé")}}},
		{`from:to:x`, search.Query{Terms: []search.Term{field("from", "to:x")}}},

		// in: and account: accumulate.
		{`in:INBOX`, search.Query{Folders: []string{"INBOX"}}},
		{`in:inbox`, search.Query{Folders: []string{"inbox"}}},
		{`IN:Archive in:Work/Projects`, search.Query{Folders: []string{"Archive", "Work/Projects"}}},
		{`in:"My Folder"`, search.Query{Folders: []string{"My Folder"}}},
		{`account:work`, search.Query{Accounts: []string{"work"}}},
		{`account:work Account:"home mail"`, search.Query{Accounts: []string{"work", "home mail"}}},

		// is: and its negations and synonyms.
		{`is:unread`, search.Query{Unread: bp(true)}},
		{`IS:UNREAD`, search.Query{Unread: bp(true)}},
		{`is:read`, search.Query{Unread: bp(false)}},
		{`-is:unread`, search.Query{Unread: bp(false)}},
		{`-is:read`, search.Query{Unread: bp(true)}},
		{`is:flagged`, search.Query{Flagged: bp(true)}},
		{`is:starred`, search.Query{Flagged: bp(true)}},
		{`-is:flagged`, search.Query{Flagged: bp(false)}},
		{`is:answered`, search.Query{Answered: bp(true)}},
		{`is:replied`, search.Query{Answered: bp(true)}},
		{`-is:answered`, search.Query{Answered: bp(false)}},
		{`is:unread is:flagged -is:answered`, search.Query{Unread: bp(true), Flagged: bp(true), Answered: bp(false)}},

		// has:
		{`has:attachment`, search.Query{HasAttachment: true}},
		{`has:attachments`, search.Query{HasAttachment: true}},
		{`HAS:Attachment`, search.Query{HasAttachment: true}},

		// Dates: a day is its start, UTC; spans count back from now.
		{`after:2025-01-31`, search.Query{After: day(2025, 1, 31)}},
		{`before:2025-01-31`, search.Query{Before: day(2025, 1, 31)}},
		{`after:2025/01/31`, search.Query{After: day(2025, 1, 31)}},
		{`after:2025-03`, search.Query{After: day(2025, 3, 1)}},
		{`after:2024-02-29`, search.Query{After: day(2024, 2, 29)}},
		{`after:7d`, search.Query{After: now.AddDate(0, 0, -7)}},
		{`after:7D`, search.Query{After: now.AddDate(0, 0, -7)}},
		{`after:0d`, search.Query{After: now}},
		{`before:3w`, search.Query{Before: now.AddDate(0, 0, -21)}},
		{`after:6m`, search.Query{After: now.AddDate(0, -6, 0)}},
		{`after:1y`, search.Query{After: now.AddDate(-1, 0, 0)}},
		{`before:1y`, search.Query{Before: now.AddDate(-1, 0, 0)}},
		{`after:30d before:7d`, search.Query{After: now.AddDate(0, 0, -30), Before: now.AddDate(0, 0, -7)}},
		// Several bounds: all of them hold, so the narrowest wins.
		{`after:2025-01-01 after:2025-03-01 after:2025-02-01`, search.Query{After: day(2025, 3, 1)}},
		{`before:2025-01-01 before:2025-03-01`, search.Query{Before: day(2025, 1, 1)}},
		{`before:2025-03-01 before:2025-01-01`, search.Query{Before: day(2025, 1, 1)}},

		// Sizes: bytes, or k M G as powers of 1024.
		{`larger:2048`, search.Query{Larger: 2048}},
		{`larger:10k`, search.Query{Larger: 10 << 10}},
		{`larger:10K`, search.Query{Larger: 10 << 10}},
		{`larger:10kb`, search.Query{Larger: 10 << 10}},
		{`larger:10KB`, search.Query{Larger: 10 << 10}},
		{`smaller:500k`, search.Query{Smaller: ptr(500 << 10)}},
		{`smaller:1.5M`, search.Query{Smaller: ptr(3 << 19)}},
		{`smaller:2mb`, search.Query{Smaller: ptr(2 << 20)}},
		{`larger:1G`, search.Query{Larger: 1 << 30}},
		{`larger:1gb`, search.Query{Larger: 1 << 30}},
		{`larger:0.5k`, search.Query{Larger: 512}},
		{`larger:1k larger:3k larger:2k`, search.Query{Larger: 3 << 10}},
		{`smaller:3k smaller:1k smaller:2k`, search.Query{Smaller: ptr(1 << 10)}},
		{`larger:1k smaller:1M`, search.Query{Larger: 1 << 10, Smaller: ptr(1 << 20)}},

		// OR and groups: AND binds tighter than OR; a plain group merges into
		// its conjunction; - before a group negates it; lower-case or is a word.
		{`budget OR invoice`, search.Query{Groups: []search.Group{or(terms(plain("budget")), terms(prefix("invoice")))}}},
		{`budget or invoice`, search.Query{Terms: []search.Term{plain("budget"), plain("or"), prefix("invoice")}}},
		{`budget "OR" invoice`, search.Query{Terms: []search.Term{plain("budget"), plain("OR"), prefix("invoice")}}},
		{`a b OR c`, search.Query{Groups: []search.Group{or(terms(plain("a"), plain("b")), terms(prefix("c")))}}},
		{`a OR b c`, search.Query{Groups: []search.Group{or(terms(plain("a")), terms(plain("b"), prefix("c")))}}},
		{`a OR b OR c`, search.Query{Groups: []search.Group{or(terms(plain("a")), terms(plain("b")), terms(prefix("c")))}}},
		{`from:alice (invoice OR receipt) -draft`, search.Query{
			Terms:  []search.Term{field("from", "alice"), neg("draft")},
			Groups: []search.Group{or(terms(plain("invoice")), terms(plain("receipt")))}}},
		{`(budget report) q3`, search.Query{Terms: []search.Term{plain("budget"), plain("report"), prefix("q3")}}},
		{`((budget))`, search.Query{Terms: []search.Term{prefix("budget")}}},
		{`foo(bar baz)`, search.Query{Terms: []search.Term{plain("foo"), plain("bar"), prefix("baz")}}},
		{`-(budget report)`, search.Query{Groups: []search.Group{{Negated: true, Alts: []*search.Query{terms(plain("budget"), plain("report"))}}}}},
		{`x -(a OR b)`, search.Query{Terms: []search.Term{plain("x")}, Groups: []search.Group{{Negated: true, Alts: []*search.Query{terms(plain("a")), terms(plain("b"))}}}}},
		{`(is:unread OR is:flagged) budget`, search.Query{Terms: []search.Term{prefix("budget")},
			Groups: []search.Group{or(&search.Query{Unread: bp(true)}, &search.Query{Flagged: bp(true)})}}},
		{`in:INBOX OR in:Archive`, search.Query{Groups: []search.Group{or(&search.Query{Folders: []string{"INBOX"}}, &search.Query{Folders: []string{"Archive"}})}}},
		{`-(in:Spam)`, search.Query{Groups: []search.Group{{Negated: true, Alts: []*search.Query{{Folders: []string{"Spam"}}}}}}},
		{`(from:alice OR from:bob) subject:"q3 plan"`, search.Query{Terms: []search.Term{field("subject", "q3 plan")},
			Groups: []search.Group{or(terms(field("from", "alice")), terms(field("from", "bob")))}}},
		{`a (b OR (c d)) e`, search.Query{Terms: []search.Term{plain("a"), prefix("e")},
			Groups: []search.Group{or(terms(plain("b")), terms(plain("c"), plain("d")))}}},
		{`(a OR b) (c OR d)`, search.Query{Groups: []search.Group{or(terms(plain("a")), terms(plain("b"))), or(terms(plain("c")), terms(prefix("d")))}}},
		{`(budget after:2025-01-01)`, search.Query{Groups: []search.Group{{Alts: []*search.Query{{Terms: []search.Term{prefix("budget")}, After: day(2025, 1, 1)}}}}}},
		{`-(budget OR invo)`, search.Query{Groups: []search.Group{{Negated: true, Alts: []*search.Query{terms(plain("budget")), terms(plain("invo"))}}}}},
		{`"(not a group)" x`, search.Query{Terms: []search.Term{plain("(not a group)"), prefix("x")}}},

		// Everything at once.
		{`from:alice subject:"quarterly report" -cc:bob is:unread is:flagged has:attachment in:INBOX account:work after:2025-01-01 before:30d larger:10k smaller:1M -draft budg`,
			search.Query{
				Terms:    []search.Term{field("from", "alice"), field("subject", "quarterly report"), negField("cc", "bob"), neg("draft"), prefix("budg")},
				Folders:  []string{"INBOX"},
				Accounts: []string{"work"},
				Unread:   bp(true), Flagged: bp(true), HasAttachment: true,
				After: day(2025, 1, 1), Before: now.AddDate(0, 0, -30),
				Larger: 10 << 10, Smaller: ptr(1 << 20),
			}},
	}
	for _, c := range cases {
		got, err := search.Parse(c.q, now)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.q, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("Parse(%q)\n got %s\nwant %s", c.q, show(got), show(&c.want))
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		q    string
		want []string // every one of these is in the message
	}{
		// Unknown is: and has: values name the value and the choices.
		{`is:bogus`, []string{"is:bogus", "is:unread", "is:read", "is:flagged", "is:answered"}},
		{`-is:bogus`, []string{"is:bogus", "is:unread"}},
		{`budget is:important`, []string{"is:important", "is:unread"}},
		{`has:pdf`, []string{"has:pdf", "has:attachment"}},
		{`has:Files`, []string{"has:Files", "has:attachment"}},
		{`-has:attachment`, []string{"-has:attachment", "not supported"}},
		{`-in:INBOX`, []string{"-in:", "in:"}},
		{`-account:work`, []string{"-account:", "account:"}},

		// Bad dates name the operator and the value and say what to write.
		{`after:yesterday`, []string{"after:yesterday", "YYYY-MM-DD", "7d"}},
		{`before:2025-13-01`, []string{"before:2025-13-01", "YYYY-MM-DD"}},
		{`after:2025-02-30`, []string{"after:2025-02-30", "YYYY-MM-DD"}},
		{`after:2025-1-5`, []string{"after:2025-1-5", "YYYY-MM-DD"}},
		{`after:31/01/2025`, []string{"after:31/01/2025", "YYYY-MM-DD"}},
		{`after:7x`, []string{"after:7x", "7d"}},
		{`after:d`, []string{"after:d", "7d"}},
		{`after:7`, []string{"after:7", "7d"}},
		{`after:-5d`, []string{"after:-5d", "7d"}},
		{`before:1.5w`, []string{"before:1.5w", "7d"}},
		{`before:"next week"`, []string{"before:next week", "YYYY-MM-DD"}},

		// Bad sizes likewise.
		{`larger:big`, []string{"larger:big", "not a size", "500k"}},
		{`larger:k`, []string{"larger:k", "not a size"}},
		{`smaller:-5`, []string{"smaller:-5", "not a size"}},
		{`larger:1T`, []string{"larger:1T", "not a size"}},
		{`larger:10kk`, []string{"larger:10kk", "not a size"}},
		{`larger:1,5M`, []string{"larger:1,5M", "not a size"}},
		{`larger:inf`, []string{"larger:inf", "not a size"}},

		// Quotes.
		{`"budget report`, []string{"quote is not closed", `"`}},
		{`budget "report`, []string{"quote is not closed"}},
		{`subject:"budget`, []string{"quote is not closed"}},
		{`-"budget`, []string{"quote is not closed"}},
		{`"`, []string{"quote is not closed"}},

		// An operator needs a value right after its colon.
		{`from:`, []string{"from:", "needs a value", "from:bob@example.com"}},
		{`from: alice`, []string{"from:", "needs a value"}},
		{`-from:`, []string{"from:", "needs a value"}},
		{`to:`, []string{"to:", "needs a value"}},
		{`cc:`, []string{"cc:", "needs a value"}},
		{`subject:`, []string{"subject:", "needs a value"}},
		{`budget in:`, []string{"in:", "needs a value", "in:INBOX"}},
		{`account:`, []string{"account:", "needs a value"}},
		{`is:`, []string{"is:", "needs a value", "is:unread"}},
		{`has:`, []string{"has:", "needs a value", "has:attachment"}},
		{`after:`, []string{"after:", "needs a value", "after:2025-01-31", "after:7d"}},
		{`before: 2025-01-01`, []string{"before:", "needs a value"}},
		{`larger:`, []string{"larger:", "needs a value", "larger:1M"}},
		{`smaller:`, []string{"smaller:", "needs a value"}},
		// Unknown operators name the nearest and say how to search the text.
		{`foo:bar`, []string{"foo:", "not a search operator", "from:", `"foo:bar"`}},
		{`subjet:budget`, []string{"subjet:", "the nearest: subject:", `"subjet:budget"`}},
		{`form:alice`, []string{"form:", "the nearest: from:"}},
		{`budget -Attachment:pdf`, []string{"Attachment:", "quote it"}},
		{`zzzzzz:"a b"`, []string{"zzzzzz:", "the operators are", "smaller:", `"zzzzzz:a b"`}},
		{`(x OR foo:bar)`, []string{"foo:", `"foo:bar"`}},

		// Unbalanced or empty groups say where.
		{`(budget`, []string{"(", "character 1", "not closed"}},
		{`a (b OR (c d)`, []string{"character 3", "not closed"}},
		{`budget)`, []string{")", "character 7", "closes no ("}},
		{`a (b OR c)) d`, []string{"character 11", "closes no ("}},
		{`)`, []string{"character 1", "closes no ("}},
		{`()`, []string{"( )", "character 1", "no condition"}},
		{`x -( ... )`, []string{"character 3", "no condition"}},
		{`OR budget`, []string{"OR", "character 1", "before it"}},
		{`budget OR`, []string{"OR", "character 8", "after it"}},
		{`a OR OR b`, []string{"OR", "character 6", "before it"}},
		{`(a OR) b`, []string{"OR", "character 4", "after it"}},
		{`a OR ...`, []string{"OR", "after it"}},
		{strings.Repeat("(", 30) + "a" + strings.Repeat(")", 30), []string{"deep"}},
		{`from:(alice OR bob)`, []string{"from:", "needs a value"}},

		// A text operator needs words, not just punctuation or an empty phrase.
		{`from:""`, []string{"from:", "needs a name"}},
		{`subject:--`, []string{"subject:", "needs"}},
		{`to:"..."`, []string{"to:", "needs"}},
	}
	for _, c := range cases {
		got, err := search.Parse(c.q, now)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want an error", c.q, show(got))
			continue
		}
		checkErrorSentence(t, c.q, err)
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%q) error %q does not mention %q", c.q, err, w)
			}
		}
	}
}

// checkErrorSentence requires a *search.Error whose message reads as a
// sentence for a person: no Go internals leaking through.
func checkErrorSentence(t *testing.T, q string, err error) {
	t.Helper()
	var se *search.Error
	if !errors.As(err, &se) {
		t.Errorf("Parse(%q) error %T %q is not a *search.Error", q, err, err)
	}
	msg := err.Error()
	if len(msg) < 15 {
		t.Errorf("Parse(%q) error %q is too short to say what to fix", q, msg)
	}
	for _, leak := range []string{"strconv", "parsing time", "invalid syntax", "out of range", "ParseFloat", "Atoi", "<nil>", "%!"} {
		if strings.Contains(msg, leak) {
			t.Errorf("Parse(%q) error %q leaks %q", q, msg, leak)
		}
	}
}

// TestParseSizeNotANumber: "nan" is not a size, yet strconv.ParseFloat reads
// it, and NaN passes both range checks of parseSize (every comparison with
// NaN is false), so the operator is accepted and silently means nothing
// (larger:) or a negative bound (smaller:).
func TestParseSizeNotANumber(t *testing.T) {
	for _, q := range []string{"larger:nan", "smaller:nan", "larger:NaN", "smaller:NaNk", "larger:nanM"} {
		got, err := search.Parse(q, now)
		if err == nil {
			t.Errorf("BUG search.parseSize: Parse(%q) = %s, want an error (NaN is not a size; ParseFloat accepts \"nan\" and NaN passes the f < 0 / f > 1<<40 checks)", q, show(got))
			continue
		}
		checkErrorSentence(t, q, err)
	}
}

// TestParseSizeOverflow: a size within parseSize's 1<<40 limit before its
// unit can overflow int64 after it; the bound must not wrap to a negative
// number (which drops larger: altogether, so it matches every message).
func TestParseSizeOverflow(t *testing.T) {
	for _, q := range []string{"larger:1000000000000G", "larger:9000000000G", "smaller:1000000000000G"} {
		got, err := search.Parse(q, now)
		if err != nil {
			checkErrorSentence(t, q, err)
			continue
		}
		op := q[:strings.IndexByte(q, ':')]
		if op == "larger" && got.Larger <= 0 {
			t.Errorf("BUG search.parseSize: Parse(%q).Larger = %d: int64(f*mult) overflowed, so the condition is dropped and every message is \"larger\"; want an error or a huge positive bound", q, got.Larger)
		}
		if (got.Smaller != nil && *got.Smaller < 0) || got.Larger < 0 {
			t.Errorf("BUG search.parseSize: Parse(%q) = %s: a negative size bound from int64(f*mult) overflow", q, show(got))
		}
	}
}

// TestParseRelativeDates checks each unit against the calendar, including
// month ends, where AddDate normalises (Mar 31 - 1 month = Mar 3).
func TestParseRelativeDates(t *testing.T) {
	at := time.Date(2025, 3, 31, 23, 59, 59, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Time
	}{
		{"1d", time.Date(2025, 3, 30, 23, 59, 59, 0, time.UTC)},
		{"2w", time.Date(2025, 3, 17, 23, 59, 59, 0, time.UTC)},
		{"1m", at.AddDate(0, -1, 0)},
		{"13m", at.AddDate(0, -13, 0)},
		{"2y", time.Date(2023, 3, 31, 23, 59, 59, 0, time.UTC)},
		{"365d", time.Date(2024, 3, 31, 23, 59, 59, 0, time.UTC)},
	} {
		q, err := search.Parse("after:"+c.v+" before:"+c.v, at)
		if err != nil {
			t.Errorf("after:%s: %v", c.v, err)
			continue
		}
		if !q.After.Equal(c.want) || !q.Before.Equal(c.want) {
			t.Errorf("after:%s before:%s at %s = %s, %s; want %s", c.v, c.v, at, q.After, q.Before, c.want)
		}
	}
}

// render writes q back as a query: every term, operator and group, a term
// quoted unless it is the prefix (which must stay a bare word) or holds a
// quote (then it came from a bare word, which has no space). The prefix must
// be the last text written, so a conjunction whose own terms hold it writes
// its groups first. ok is false when a value cannot be written (a date
// outside years 1..9999).
// rawBare says whether q (or a group in it) has a word render writes as it is, unquoted, that is
// no prefix and not negated: one holding a quote.
func rawBare(q *search.Query) bool {
	for _, t := range q.Terms {
		if !t.Prefix && !t.Negated && strings.Contains(t.Text, `"`) {
			return true
		}
	}
	for _, g := range q.Groups {
		for _, a := range g.Alts {
			if rawBare(a) {
				return true
			}
		}
	}
	return false
}

func render(q *search.Query) (string, bool) {
	var parts []string
	val := search.Quote
	if len(q.Groups) > 0 && rawBare(q) {
		// Terms and groups are kept apart, so their order is lost; a bare word written as it is
		// (it holds a quote) could then come last and read back as the prefix.
		return "", false
	}
	var termParts, groupParts []string
	prefixHere := false
	for _, t := range q.Terms {
		s := ""
		if t.Negated {
			s = "-"
		}
		if t.Field != "" {
			s += t.Field + ":"
		}
		if t.Prefix {
			s += t.Text
			prefixHere = true
		} else {
			s += val(t.Text)
		}
		termParts = append(termParts, s)
	}
	for _, g := range q.Groups {
		var alts []string
		for _, a := range g.Alts {
			s, ok := render(a)
			if !ok {
				return "", false
			}
			alts = append(alts, s)
		}
		s := "(" + strings.Join(alts, " OR ") + ")"
		if g.Negated {
			s = "-" + s
		}
		groupParts = append(groupParts, s)
	}
	if prefixHere {
		parts = append(parts, groupParts...)
	}
	for _, m := range q.Matches {
		s := ""
		if m.Negated {
			s = "-"
		}
		switch {
		case m.Kind == search.Domain:
			s += m.Field + ":" + val("@"+m.Text)
		case m.Kind == search.Exists:
			s += "header:" + m.Name
		case m.Field == "header":
			s += "header:" + m.Name + ":" + val(m.Text)
		case m.Field == "body":
			s += "body:" + val(m.Text)
		default:
			s += m.Field + ":" + val("*"+m.Text+"*")
		}
		parts = append(parts, s)
	}
	parts = append(parts, termParts...)
	for _, f := range q.Folders {
		parts = append(parts, "in:"+val(f))
	}
	for _, a := range q.Accounts {
		parts = append(parts, "account:"+val(a))
	}
	flag := func(p *bool, on, off string) {
		if p == nil {
			return
		}
		if *p {
			parts = append(parts, on)
		} else {
			parts = append(parts, off)
		}
	}
	flag(q.Unread, "is:unread", "is:read")
	flag(q.Flagged, "is:flagged", "-is:flagged")
	flag(q.Answered, "is:answered", "-is:answered")
	flag(q.List, "is:list", "-is:list")
	flag(q.Authenticated, "is:authenticated", "-is:authenticated")
	if q.HasAttachment {
		parts = append(parts, "has:attachment")
	}
	for _, d := range []struct {
		op string
		t  time.Time
	}{{"after", q.After}, {"before", q.Before}} {
		if d.t.IsZero() {
			continue
		}
		if y := d.t.Year(); y < 1 || y > 9999 || !d.t.Equal(d.t.Truncate(24*time.Hour)) {
			return "", false
		}
		parts = append(parts, d.op+":"+d.t.Format("2006-01-02"))
	}
	size := func(op string, n int64) {
		if n <= 0 {
			return
		}
		if n <= 1<<40 {
			parts = append(parts, op+":"+strconv.FormatInt(n, 10))
			return
		}
		// n came from a float64, so n/2^30 is exact.
		parts = append(parts, op+":"+strconv.FormatFloat(float64(n)/(1<<30), 'f', -1, 64)+"G")
	}
	size("larger", q.Larger)
	if q.Smaller != nil {
		if *q.Smaller == 0 {
			parts = append(parts, "smaller:0")
		} else {
			size("smaller", *q.Smaller)
		}
	}
	if !prefixHere {
		parts = append(parts, groupParts...)
	}
	return strings.Join(parts, " "), true
}

func show(q *search.Query) string {
	var b strings.Builder
	b.WriteString("{")
	for _, t := range q.Terms {
		b.WriteString(" term{")
		if t.Negated {
			b.WriteString("-")
		}
		if t.Field != "" {
			b.WriteString(t.Field + ":")
		}
		b.WriteString(strconv.Quote(t.Text))
		if t.Prefix {
			b.WriteString("*")
		}
		b.WriteString("}")
	}
	if q.Folders != nil {
		b.WriteString(" in" + strconv.Quote(strings.Join(q.Folders, "|")))
	}
	if q.Accounts != nil {
		b.WriteString(" account" + strconv.Quote(strings.Join(q.Accounts, "|")))
	}
	for _, f := range []struct {
		n string
		p *bool
	}{{"unread", q.Unread}, {"flagged", q.Flagged}, {"answered", q.Answered}} {
		if f.p != nil {
			b.WriteString(" " + f.n + "=" + strconv.FormatBool(*f.p))
		}
	}
	if q.HasAttachment {
		b.WriteString(" has:attachment")
	}
	if !q.After.IsZero() {
		b.WriteString(" after=" + q.After.Format(time.RFC3339Nano))
	}
	if !q.Before.IsZero() {
		b.WriteString(" before=" + q.Before.Format(time.RFC3339Nano))
	}
	if q.Larger != 0 {
		b.WriteString(" larger=" + strconv.FormatInt(q.Larger, 10))
	}
	if q.Smaller != nil {
		b.WriteString(" smaller=" + strconv.FormatInt(*q.Smaller, 10))
	}
	for _, f := range []struct {
		n string
		p *bool
	}{{"list", q.List}, {"authenticated", q.Authenticated}} {
		if f.p != nil {
			b.WriteString(" " + f.n + "=" + strconv.FormatBool(*f.p))
		}
	}
	for _, m := range q.Matches {
		b.WriteString(fmt.Sprintf(" %s{%v %s %s %q}", m.Kind, m.Negated, m.Field, m.Name, m.Text))
	}
	for _, g := range q.Groups {
		b.WriteString(" ")
		if g.Negated {
			b.WriteString("-")
		}
		b.WriteString("(")
		for i, a := range g.Alts {
			if i > 0 {
				b.WriteString(" OR")
			}
			b.WriteString(show(a))
		}
		b.WriteString(")")
	}
	b.WriteString(" }")
	return b.String()
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}

// TestRender checks the fuzz target's re-join on the table's own queries.
func TestRender(t *testing.T) {
	fuzzMidnight := time.Date(2025, 6, 15, 0, 0, 0, 0, time.UTC)
	for _, q := range fuzzSeeds {
		checkRoundTrip(t, q, fuzzMidnight)
	}
}

var fuzzSeeds = []string{
	``, `budget`, `budget report`, `"budget report"`, `-budget`, `report -budget`, `"foo"bar`, `foo-bar`,
	`a"b c`, `from:a"b`, `in:""`, `-"x y" z`, `Café Größe`, `Привет 日本語`, `foo:bar`, `budget ...`,
	`from:alice`, `FROM:"Alice Adams"`, `-to:bob cc:carla subject:"quarterly report"`, `from:to:x`,
	`in:INBOX in:"My Folder" account:work`, `is:unread is:flagged -is:answered`, `-is:read is:starred is:replied`,
	`has:attachment`, `after:2025-01-31 before:2025/03/01`, `after:2025-03 before:7d`, `after:6m before:1y`,
	`after:3w`, `larger:2048 smaller:1.5M`, `larger:10kb smaller:1G`, `larger:0.1k`, `larger:1000G`,
	`is:bogus`, `has:pdf`, `after:yesterday`, `larger:big`, `"unclosed`, `from:`, `from: x`, `-in:x`,
	`from:alice subject:"quarterly report" -cc:bob is:unread has:attachment in:INBOX account:work after:2025-01-01 before:30d larger:10k smaller:1M -draft budg`,
	"a\u00a0b", "-\"\"", "--", "- -", `"a" "b" c`, `x -"y`, "\xff\xfe", `after:100000y`,
	`budget OR invoice`, `from:alice (invoice OR receipt) -draft`, `(a b) c`, `-(a OR b) c`, `c -(a OR b)`,
	`(is:unread OR in:INBOX) x`, `x (a OR (b c))`, `(a OR b) (c OR d)`, `a OR`, `(a`, `a)`, `()`, `foo:bar`,
	`Re: x`, `(budget after:2025-01-01)`, `-(in:Spam) -(has:attachment)`, `a OR b OR -c d`,
	`from:@example.com -to:@x.org cc:"@a b"`, `subject:*voice* -from:**`, `header:List-Id:announce.example.org`,
	`header:X-Spam -header:X-Mailer:"Apple \"Mail\""`, `list:a.example body:"un subscribe" -body:x`,
	`is:list -is:authenticated`, `(from:@a.example OR header:X:y) -(body:z OR is:list) w`, `header:`, `header:a:`,
	`"a\\b \"c\""`, `body:`, `from:@`,
}

// checkRoundTrip: a query Parse accepts keeps a sane shape, and writing its
// terms and operators back into a query gives the same Query.
func checkRoundTrip(t *testing.T, q string, at time.Time) {
	t.Helper()
	got, err := search.Parse(q, at)
	if err != nil {
		var se *search.Error
		if !errors.As(err, &se) || se.Msg == "" {
			t.Fatalf("Parse(%q) error %T %q is not a *search.Error with a message", q, err, err)
		}
		return
	}
	prefixes := 0
	got.Walk(func(c *search.Query) {
		if c != got && c.Empty() {
			t.Fatalf("Parse(%q) = %s: an alternative with no condition", q, show(got))
		}
		for _, g := range c.Groups {
			if len(g.Alts) == 0 {
				t.Fatalf("Parse(%q) = %s: a group with no alternative", q, show(got))
			}
		}
		for i, term := range c.Terms {
			switch term.Field {
			case "", "from", "to", "cc", "subject":
			default:
				t.Fatalf("Parse(%q): term %d has field %q", q, i, term.Field)
			}
			if !hasWordChar(term.Text) {
				t.Fatalf("Parse(%q): term %d %q has no word in it", q, i, term.Text)
			}
			if term.Prefix {
				prefixes++
				if term.Negated || term.Field != "" || strings.ContainsFunc(term.Text, unicode.IsSpace) {
					t.Fatalf("Parse(%q): term %d %+v is a prefix but not a bare word", q, i, term)
				}
			}
		}
		if c.Larger < 0 || (c.Smaller != nil && *c.Smaller < 0) {
			t.Fatalf("Parse(%q) = %s: a negative size bound", q, show(got))
		}
	})
	if prefixes > 1 {
		t.Fatalf("Parse(%q) = %s: %d prefixes", q, show(got), prefixes)
	}
	if len(got.Terms) > 0 && slices.ContainsFunc(got.Terms[:len(got.Terms)-1], func(t search.Term) bool { return t.Prefix }) {
		t.Fatalf("Parse(%q) = %s: a prefix before the last term", q, show(got))
	}
	if got.Larger < 0 || (got.Smaller != nil && *got.Smaller < 0) {
		t.Fatalf("Parse(%q) = %s: a negative size bound", q, show(got))
	}
	s, ok := render(got)
	if !ok {
		return
	}
	again, err := search.Parse(s, at)
	if err != nil {
		t.Fatalf("Parse(%q) = %s, written back as %q, which does not parse: %v", q, show(got), s, err)
	}
	if !reflect.DeepEqual(got, again) {
		t.Fatalf("Parse(%q) = %s\nwritten back as %q\nparses as %s", q, show(got), s, show(again))
	}
}

// FuzzParse: Parse never panics; an error is a *search.Error; a parsed query
// has only known fields, words in every term, a prefix only on the last bare
// word, no negative size; and written back (render) it parses the same.
// now is a midnight, so relative dates land on days and can be written back
// as YYYY-MM-DD.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	at := time.Date(2025, 6, 15, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		checkRoundTrip(t, q, at)
	})
}

func ptr(n int64) *int64 { return &n }

func terms(ts ...search.Term) *search.Query { return &search.Query{Terms: ts} }

func or(alts ...*search.Query) search.Group { return search.Group{Alts: alts} }

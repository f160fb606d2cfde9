package search_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/search"
)

// TestParseMatches: the operators rules brought to the language (header:, list:, body:,
// is:list, is:authenticated, from:@domain and *text*) parse into Matches and flags.
func TestParseMatches(t *testing.T) {
	m := func(kind, field, name, text string, negated bool) search.Match {
		return search.Match{Kind: kind, Field: field, Name: name, Text: text, Negated: negated}
	}
	cases := []struct {
		q    string
		want search.Query
	}{
		{`from:@example.com`, search.Query{Matches: []search.Match{m(search.Domain, "from", "", "example.com", false)}}},
		{`-to:@Example.ORG`, search.Query{Matches: []search.Match{m(search.Domain, "to", "", "Example.ORG", true)}}},
		{`cc:"@a.example"`, search.Query{Matches: []search.Match{m(search.Domain, "cc", "", "a.example", false)}}},
		{`subject:@home`, search.Query{Terms: []search.Term{field("subject", "@home")}}},
		{`subject:*voice*`, search.Query{Matches: []search.Match{m(search.Contains, "subject", "", "voice", false)}}},
		{`from:"*Billing Dept*"`, search.Query{Matches: []search.Match{m(search.Contains, "from", "", "Billing Dept", false)}}},
		{`to:**`, search.Query{Matches: []search.Match{m(search.Contains, "to", "", "", false)}}},
		{`header:List-Id:announce.example.org`, search.Query{Matches: []search.Match{m(search.Contains, "header", "List-Id", "announce.example.org", false)}}},
		{`header:X-Mailer:"Apple \"Mail\" \\ 2"`, search.Query{Matches: []search.Match{m(search.Contains, "header", "X-Mailer", `Apple "Mail" \ 2`, false)}}},
		{`-header:X-Spam`, search.Query{Matches: []search.Match{m(search.Exists, "header", "X-Spam", "", true)}}},
		{`header:X-Spam:""`, search.Query{Matches: []search.Match{m(search.Contains, "header", "X-Spam", "", false)}}},
		{`list:announce`, search.Query{Matches: []search.Match{m(search.Contains, "header", "List-Id", "announce", false)}}},
		{`body:"pay now" -body:$$$`, search.Query{Matches: []search.Match{m(search.Contains, "body", "", "pay now", false), m(search.Contains, "body", "", "$$$", true)}}},
		{`is:list -is:authenticated`, search.Query{List: bp(true), Authenticated: bp(false)}},
		{`-is:list`, search.Query{List: bp(false)}},
	}
	for _, c := range cases {
		got, err := search.Parse(c.q, now)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.q, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("Parse(%q) = %s, want %s", c.q, show(got), show(&c.want))
		}
		if got.Empty() {
			t.Errorf("Parse(%q) is empty", c.q)
		}
	}
	errs := []struct{ q, want string }{
		{`from:@`, "needs a domain"},
		{`body:" "`, "body: needs"},
		{`list:""`, "list: needs"},
		{`header:`, "needs a value"},
		{`header:X:`, "needs text after the second colon"},
		{`header:"X":y`, "not a header field name"},
		{`is:bogus`, "is:authenticated"},
	}
	for _, c := range errs {
		_, err := search.Parse(c.q, now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", c.q, err, c.want)
		}
	}
}

// TestNeeds: header:/list: need read:headers, body: read:bodies, also inside groups.
func TestNeeds(t *testing.T) {
	for _, c := range []struct {
		q    string
		h, b bool
	}{
		{`from:a subject:*b* is:list from:@x.org`, false, false},
		{`list:x`, true, false},
		{`a OR (b -(header:X))`, true, false},
		{`-(body:x OR c)`, false, true},
		{`header:X:y body:z`, true, true},
	} {
		q, err := search.Parse(c.q, now)
		if err != nil {
			t.Fatal(err)
		}
		if h, b := q.Needs(); h != c.h || b != c.b {
			t.Errorf("Needs(%q) = %v %v, want %v %v", c.q, h, b, c.h, c.b)
		}
	}
}

package contact

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/emersion/go-vcard"
)

func card(t *testing.T, lines ...string) vcard.Card {
	t.Helper()
	c, ok := Parse("BEGIN:VCARD\r\nVERSION:3.0\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VCARD\r\n")
	if !ok {
		t.Fatalf("the test's card does not parse: %q", lines)
	}
	return c
}

// TestReadShowsWhatTheCardSays: the name, addresses without mailto:, phones without tel:,
// the organisation's parts joined and the title, as the contact tools show them.
func TestReadShowsWhatTheCardSays(t *testing.T) {
	c := card(t,
		"FN:Ann Example",
		"N:Example;Ann;;;",
		"EMAIL;TYPE=work:mailto:ann@work.example",
		"EMAIL: ",
		"EMAIL:ann@home.example",
		"TEL;TYPE=cell:tel:+33 6 12 34 56 78",
		"TEL:+1 555 0100",
		"ORG:Example Corp;; Research ;",
		"TITLE:Engineer",
	)
	got := Read(c, "fallback")
	want := Shown{
		Name:         "Ann Example",
		Emails:       []string{"ann@work.example", "ann@home.example"},
		Phones:       []string{"+33 6 12 34 56 78", "+1 555 0100"},
		Organization: "Example Corp, Research",
		Title:        "Engineer",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read = %+v\nwant   %+v", got, want)
	}
}

// TestName: FN first, else N's parts in reading order, else the fallback (the summary).
func TestName(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"FN:  Ann Example  ", "N:Other;Name;;;"}, "Ann Example"},
		{[]string{"FN: ", "N:Example;Ann;Marie;;"}, "Ann Marie Example"},
		{[]string{"N:Example;;;;"}, "Example"},
		{[]string{"N:;;;;"}, "the summary"},
		{[]string{"EMAIL:x@example.test"}, "the summary"},
	} {
		if got := Read(card(t, c.lines...), "the summary").Name; got != c.want {
			t.Errorf("%q: name %q, want %q", c.lines, got, c.want)
		}
	}
}

// TestValuesAtMostMax: a card with very many addresses shows the first MaxValues.
func TestValuesAtMostMax(t *testing.T) {
	var lines []string
	for i := 0; i < MaxValues+5; i++ {
		lines = append(lines, fmt.Sprintf("EMAIL:a%d@example.test", i))
	}
	got := Values(card(t, lines...), vcard.FieldEmail)
	if len(got) != MaxValues || got[0] != "a0@example.test" || got[MaxValues-1] != fmt.Sprintf("a%d@example.test", MaxValues-1) {
		t.Errorf("%d values, first %q last %q; want the first %d", len(got), got[0], got[len(got)-1], MaxValues)
	}
	if got := Values(card(t, "FN:x"), vcard.FieldURL); got != nil {
		t.Errorf("a card without URLs: %q", got)
	}
}

// TestParseRefusesWhatIsNotAVCard: text that is not a vCard is not read as one.
func TestParseRefusesWhatIsNotAVCard(t *testing.T) {
	for _, s := range []string{"", "hello", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "BEGIN:VCARD\r\nFN:x\r\n"} {
		if _, ok := Parse(s); ok {
			t.Errorf("Parse(%q) read a card", s)
		}
	}
	if c, ok := Parse("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Bo\r\nEND:VCARD\r\n"); !ok || Read(c, "").Name != "Bo" {
		t.Error("a plain vCard 4.0 was not read")
	}
}

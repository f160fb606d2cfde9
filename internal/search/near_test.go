package search_test

import (
	"slices"
	"testing"

	"github.com/postern-mcp/postern/internal/search"
)

func TestNearest(t *testing.T) {
	folders := []string{"INBOX", "Newsletters", "News", "Work.Projects", "Archive", "Sent", "Drafts", "Trash"}
	for _, c := range []struct {
		name       string
		candidates []string
		want       []string
	}{
		{"Newsleters", folders, []string{"Newsletters"}},
		{"newsletters", folders, []string{"Newsletters"}},  // case is ignored
		{"nesw", folders, []string{"News"}},                // a swap is one edit
		{"News", folders, []string{"News", "Newsletters"}}, // exact first, then a longer name it starts
		{"Archiv", folders, []string{"Archive"}},
		{"Work/Projects", folders, []string{"Work.Projects"}},
		{"inbx", folders, []string{"INBOX"}},
		{"Snt", folders, []string{"Sent"}},
		{"zzz", folders, []string{}},
		{"Receipts", folders, []string{}},
		{"subjet", []string{"from", "to", "cc", "subject", "smaller"}, []string{"subject"}},
		{"wrok", []string{"work", "home"}, []string{"work"}},
		{"nosuch", []string{"work", "home"}, []string{}},
		{"x", nil, []string{}},
	} {
		if got := search.Nearest(c.name, c.candidates); !slices.Equal(got, c.want) {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := search.Closest("foo", []string{"from", "to", "subject"}); got != "from" {
		t.Errorf(`Closest("foo") = %q, want "from"`, got)
	}
	many := []string{"ab1", "ab2", "ab3", "ab4", "ab5"}
	if got := search.Nearest("ab", many); len(got) != search.MaxNearest {
		t.Errorf("Nearest of five equally near names gives %d, want %d", len(got), search.MaxNearest)
	}
}

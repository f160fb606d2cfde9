package projects

import (
	"slices"
	"testing"
)

// Tying twice changes nothing the second time; a note is untied whatever the case it is
// named in, as it was written.
func TestSetTie(t *testing.T) {
	path := editFile(t, "[[project]]\nid = \"acme\"\nties = [\"note:Notes/Plan.md\"]\n")
	load := func() *Project {
		t.Helper()
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return s.Find("acme")
	}
	tie, changed, err := SetTie(path, load(), "mid:a@x", true)
	if err != nil || !changed || tie != "mid:a@x" || !slices.Contains(load().Ties, "mid:a@x") {
		t.Fatalf("tie: %q %v %v %v", tie, changed, err, load().Ties)
	}
	if _, changed, err := SetTie(path, load(), "mid:a@x", true); err != nil || changed {
		t.Fatalf("tying again: changed %v, %v", changed, err)
	}
	tie, changed, err = SetTie(path, load(), "note:notes/plan.md", false)
	if err != nil || !changed || tie != "note:Notes/Plan.md" || slices.Contains(load().Ties, "note:Notes/Plan.md") {
		t.Fatalf("untie a note in another case: %q %v %v %v", tie, changed, err, load().Ties)
	}
	if _, _, err := SetTie(path, load(), "event:nope", false); err == nil {
		t.Fatal("untying what is not tied is not an error")
	}
}

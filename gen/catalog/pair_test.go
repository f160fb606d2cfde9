package catalog

import (
	"regexp"
	"testing"
)

// TestExpandPair: a prepare_commit tool becomes a read-only prepare half that
// answers Prepared, and a commit half with the catalog's effect, hints and
// output that takes every argument of the first plus a required, free-text token.
func TestExpandPair(t *testing.T) {
	c, err := fixture(t, "")
	if err != nil {
		t.Fatal(err)
	}
	pairs := 0
	names := map[string]bool{}
	for _, tool := range c.Registry() {
		names[tool.Name] = true
	}
	for _, tool := range c.Tools {
		if !tool.PrepareCommit {
			continue
		}
		pairs++
		p, cm := ExpandPair(tool)
		if !names[p.Name] || !names[cm.Name] || cm.Name != tool.Name+CommitSuffix {
			t.Errorf("%s: the registry lacks a half: %q %q", tool.Name, p.Name, cm.Name)
		}
		if !p.Annotations.ReadOnly || p.Annotations.Destructive || p.Annotations.OpenWorld || p.Output != PreparedType {
			t.Errorf("%s: prepare half is not a read-only preview: %+v → %s", tool.Name, p.Annotations, p.Output)
		}
		if cm.Annotations != tool.Annotations || cm.Output != tool.Output || cm.Effect != tool.Effect || cm.Scope != tool.Scope {
			t.Errorf("%s: commit half does not carry the catalog's effect, hints, scope and output", tool.Name)
		}
		if len(cm.Input) != len(tool.Input)+1 {
			t.Fatalf("%s: commit takes %d arguments, want %d", tool.Name, len(cm.Input), len(tool.Input)+1)
		}
		for i, prm := range tool.Input {
			if cm.Input[i] != prm {
				t.Errorf("%s: commit argument %d is %s, want %s", tool.Name, i, cm.Input[i].Name, prm.Name)
			}
		}
		tok := cm.Input[len(cm.Input)-1]
		if tok.Name != "token" || !tok.Required || !tok.FreeText || !regexp.MustCompile(tok.Pattern).MatchString("abcdefghijABCDEFGHIJ0123456789-_abcdefghijk") {
			t.Errorf("%s: token argument is %+v", tool.Name, tok)
		}
	}
	if pairs == 0 {
		t.Fatal("the fixture has no prepare_commit tool")
	}
	if len(c.Registry()) != len(c.Tools)+pairs {
		t.Errorf("registry has %d tools, want %d", len(c.Registry()), len(c.Tools)+pairs)
	}
}

package dispatch

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// A mistyped tool name is answered with the nearest tool and the list of every one.
func TestUnknownTool(t *testing.T) {
	r, err := New(failing{})
	if err != nil {
		t.Fatal(err)
	}
	name := generated.ToolMailSearch
	msg := r.UnknownTool(name + "x").Error()
	if !strings.HasPrefix(msg, "unknown tool \""+name+"x\"; did you mean "+name) || !strings.Contains(msg, " The tools are ") {
		t.Fatalf("a typo: %s", msg)
	}
	for _, tool := range r.All() {
		if !strings.Contains(msg, tool.Spec.Name) {
			t.Errorf("the list lacks %s", tool.Spec.Name)
		}
	}
	if msg := r.UnknownTool("zzzzzzzzzzzzzzzz").Error(); strings.Contains(msg, "did you mean") {
		t.Fatalf("a name near none: %s", msg)
	}
}

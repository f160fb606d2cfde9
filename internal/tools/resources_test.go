package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
)

// TestParseURI: a URI is read against the templates only when one expands it exactly.
func TestParseURI(t *testing.T) {
	for uri, want := range map[string]string{
		"postern://docs/guide":          generated.ResourceDocs + " guide",
		"postern://message/m1a":         generated.ResourceMessage + " m1a",
		"postern://thread/m1a":          generated.ResourceThread + " m1a",
		"postern://agenda/today":        generated.ResourceAgenda + " today",
		"postern://note/a%2Fb.md":       generated.ResourceNote + " a/b.md",
		"postern://note/a/b.md":         generated.ResourceNote + " a/b.md",
		"postern://message/":            "",
		"postern://message/m1/../x":     "",
		"postern://message/m1?x=1":      "",
		"postern://message/m1%2F..":     "",
		"postern://note/%zz":            "",
		"postern://nowhere/m1":          "",
		"POSTERN://message/m1":          "",
		"mailto:someone@example.org":    "",
		"postern://agenda/today/x":      "",
		"postern://docs/guide#fragment": "",
	} {
		ref, ok := parseURI(uri)
		got := ""
		if ok {
			got = ref.spec.Name + " " + ref.value
		}
		if got != want {
			t.Errorf("parseURI(%q) = %q, want %q", uri, got, want)
		}
		if ok && uriFor(ref.spec, ref.value) != strings.Replace(uri, "a/b.md", "a%2Fb.md", 1) {
			t.Errorf("uriFor does not give %q back: %q", uri, uriFor(ref.spec, ref.value))
		}
	}
}

// TestLinks: an answer's message ids and threads come back as links, each once, at most
// maxLinks, and only for the templates the grant allows.
func TestLinks(t *testing.T) {
	s := &Service{}
	var rows []string
	for i := 1; i <= 30; i++ {
		rows = append(rows, fmt.Sprintf(`{"id":"m%d","thread":"m1","subject":"m%d x"}`, i, i))
	}
	answer := []byte(`{"messages":[` + strings.Join(rows, ",") + `],"id":"e12"}`)
	all := dispatch.Grant{generated.ScopeRead: true, generated.ScopeReadBodies: true}
	links := s.Links(generated.ToolMailList, answer, all)
	if len(links) != maxLinks || links[0].URI != "postern://message/m1" || links[1].URI != "postern://thread/m1" || links[2].URI != "postern://message/m2" {
		t.Fatalf("links: %d %+v", len(links), links[:3])
	}
	for _, l := range s.Links(generated.ToolMailList, answer, dispatch.Grant{generated.ScopeRead: true}) {
		if strings.HasPrefix(l.URI, "postern://message/") {
			t.Fatalf("a message link without read:bodies: %s", l.URI)
		}
	}
	if l := s.Links(generated.ToolMailList, []byte(`not json`), all); l != nil {
		t.Fatalf("links of a broken answer: %v", l)
	}
}

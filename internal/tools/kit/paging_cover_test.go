package kit

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/mask"
)

// pages reads text page by page of n bytes and fails unless the pages give it back whole.
func pages(t *testing.T, text string, n int) []string {
	t.Helper()
	var out []string
	for offset := 0; ; {
		page, next := PageText(text, offset, n)
		if next <= offset && offset < len(text) {
			t.Fatalf("page at %d does not move on", offset)
		}
		out = append(out, page)
		if next >= len(text) {
			break
		}
		offset = next
	}
	if got := strings.Join(out, ""); got != text {
		t.Fatalf("the pages give back %d of %d bytes", len(got), len(text))
	}
	return out
}

// Text without spaces is cut between two letters, never inside a character nor before a
// combining mark or next to a joiner; a masked span longer than a page comes whole.
func TestPagesWithoutSpaces(t *testing.T) {
	for _, p := range pages(t, strings.Repeat("é", 300), 101) {
		if len(p) > 101 || !strings.HasPrefix(p, "é") {
			t.Fatalf("a page splits a character: %q", p[:4])
		}
	}
	// e + combining acute: a page never begins with the mark.
	for _, p := range pages(t, strings.Repeat("e\u0301", 200), 50) {
		if strings.HasPrefix(p, "\u0301") {
			t.Fatal("a page begins with a combining mark")
		}
	}
	// Family emoji held by joiners: a page never begins or ends beside a joiner.
	for _, p := range pages(t, strings.Repeat("👩\u200d👧", 100), 40) {
		if strings.HasPrefix(p, "\u200d") || strings.HasSuffix(p, "\u200d") {
			t.Fatalf("a page is cut at a joiner: %q", p)
		}
	}
	// Only spaces near the limit: the page still ends at a character's edge.
	text := "x" + strings.Repeat(" ", 300) + "y"
	if p := pages(t, text, 100); len(p[0]) != 100 {
		t.Errorf("the first page of spaces is %d bytes, want 100", len(p[0]))
	}
	// A withheld span longer than the page is taken whole.
	span := mask.WithheldPrefix + strings.Repeat("r", 120) + "]"
	p := pages(t, span+" after", 20)
	if p[0] != span {
		t.Errorf("a masked span longer than a page is cut: %q", p[0])
	}
}

func TestJoinRel(t *testing.T) {
	if JoinRel("", "a.md") != "a.md" || JoinRel("clients/acme", "a.md") != "clients/acme/a.md" {
		t.Error("JoinRel joins wrong")
	}
	if !DeviceNames["COM1"] || !DeviceNames["NUL"] || DeviceNames["NOTES"] {
		t.Error("the device names are wrong")
	}
}

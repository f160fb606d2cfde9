package kit

import (
	"context"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mask"
)

// A budget takes what fits and, once something does not, nothing more.
func TestBudgetTake(t *testing.T) {
	b := Budget(10)
	if !b.Take(6) || !b.Take(4) {
		t.Fatal("10 bytes did not fit a budget of 10")
	}
	if b.Take(1) {
		t.Error("a spent budget took one more byte")
	}
	b = Budget(10)
	if b.Take(11) || b.Take(1) {
		t.Error("after a refusal, the budget still took something")
	}
	if Shown(strings.Repeat("x", 10*MaxShown)) != MaxShown {
		t.Error("a long string counts for more than MaxShown")
	}
}

// A cursor reads back as the row it was made from; anything else is refused in a sentence.
func TestCursors(t *testing.T) {
	for _, id := range []int64{1, 35, 36, 1 << 40} {
		c := EncodeCursor(id)
		got, err := DecodeCursor(&c)
		if err != nil || got != id {
			t.Errorf("cursor of %d read back as %d, %v", id, got, err)
		}
	}
	if n, err := DecodeCursor(nil); n != 0 || err != nil {
		t.Errorf("no cursor: %d, %v", n, err)
	}
	for _, bad := range []string{"c", "c-5", "zz!", "c0"} {
		if _, err := DecodeCursor(&bad); err == nil || !strings.Contains(err.Error(), "start again without a cursor") {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

// The pages of a text, each from the one before's next offset, give the text back whole,
// every character once, without splitting a character or a masked span.
func TestTextPagesCoverTheText(t *testing.T) {
	text := strings.Repeat("naïve café "+mask.HiddenCode+" résumé — ", 4000)
	var got strings.Builder
	offset, pages := 0, 0
	for {
		p, err := TextPage(text, "message", offset, 1000, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Text) > 1000 || !strings.HasPrefix(text[offset:], p.Text) {
			t.Fatalf("page at %d: %d bytes, not the text from there", offset, len(p.Text))
		}
		if strings.Count(p.Text, "[") != strings.Count(p.Text, "]") && strings.Contains(mask.HiddenCode, "[") {
			t.Fatalf("page at %d splits a masked span: %q", offset, p.Text[len(p.Text)-20:])
		}
		got.WriteString(p.Text)
		pages++
		if p.Next == nil {
			if p.Truncated != nil {
				t.Error("the last page says the text is cut")
			}
			break
		}
		if *p.Next <= offset || p.Length == nil || *p.Length != len(text) || p.Truncated == nil {
			t.Fatalf("page at %d: next %v, length %v, truncated %v", offset, *p.Next, p.Length, p.Truncated)
		}
		offset = *p.Next
	}
	if got.String() != text || pages < len(text)/1000 {
		t.Errorf("%d pages gave %d of %d bytes back", pages, got.Len(), len(text))
	}
	if _, err := TextPage("short", "note", 6, 0, false); err == nil || !strings.Contains(err.Error(), "past the end of this note's text") {
		t.Errorf("an offset past the end: %v", err)
	}
	if p, _ := TextPage("short", "note", 0, 0, true); p.Truncated == nil || p.Next != nil {
		t.Error("a stored text cut short is not said to be")
	}
}

// HasScope and SearchesBodies read the call's grant.
func TestScopes(t *testing.T) {
	ctx := dispatch.WithInfo(context.Background(), dispatch.CallInfo{Scopes: []string{generated.ScopeRead}})
	if !HasScope(ctx, generated.ScopeRead) || HasScope(ctx, generated.ScopeReadBodies) || SearchesBodies(ctx) {
		t.Error("a read grant is read wrong")
	}
	ctx = dispatch.WithInfo(context.Background(), dispatch.CallInfo{Scopes: []string{generated.ScopeRead, generated.ScopeReadBodies}})
	if !SearchesBodies(ctx) {
		t.Error("read:bodies does not widen searches to bodies")
	}
	if Deref(nil) != "" || *Ptr(3) != 3 || NonZero(0) != nil || *NonZero(2) != 2 {
		t.Error("the small helpers are wrong")
	}
}

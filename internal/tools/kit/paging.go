package kit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mask"
)

// How much of a stranger's text one answer carries. dispatch refuses to send
// an answer over 1 MB (answer.MaxAnswer); these cuts, each with a flag the
// agent sees, keep every answer under it. A byte of a string takes up to seven
// in the envelope (< is \u003c in the JSON string of the text and itself in
// structuredContent), and the labels of 500 rows some 200 KB, so 96 KB of
// strings stays under 1 MB whatever they hold.
const (
	// MaxShowText is the most body text one page of mail_show or of
	// mail_thread's text holds: max_length's default and maximum, in bytes.
	MaxShowText = 100000
	// MaxHeaderText is the most header text mail_headers returns: each
	// field's name, ": ", value and line end.
	MaxHeaderText = 64 << 10
	// MaxListText is the most of strangers' strings one list answer holds
	// (the rows of mail_list, mail_search, mail_thread, mail_folders,
	// mail_senders, mail_attachments); a page stops early, with a cursor.
	MaxListText = 96 << 10
	// MaxRecipientText is the most recipients' text one message row holds.
	MaxRecipientText = 4 << 10
	// MaxShown is the most bytes a one-line string shows once cleaned
	// (clean.MaxLine runes of at most 4 bytes): a longer stored value counts
	// as that much.
	MaxShown = 4 * clean.MaxLine
	// ThreadLimit is the most messages store.Thread reads (its LIMIT); a
	// thread that reaches it may hold more.
	ThreadLimit = 1000
)

// Shown is what a string counts for against a budget.
func Shown(s string) int { return min(len(s), MaxShown) }

// Budget counts down the strangers' text an answer may still hold.
type Budget int

// Take reports whether n more bytes fit, and counts them when they do; once
// one does not, nothing more does. A list keeps its first row whatever Take
// says, so that no answer is empty because one row is long.
func (b *Budget) Take(n int) bool {
	if n > int(*b) {
		*b = 0
		return false
	}
	*b -= Budget(n)
	return true
}

// EncodeCursor is the cursor of the page after the row id.
func EncodeCursor(id int64) string { return "c" + strconv.FormatInt(id, 36) }

// DecodeCursor reads a cursor EncodeCursor made; nil or "" is the first page.
func DecodeCursor(c *string) (int64, error) {
	if c == nil || *c == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(*c, "c"), 36, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("the cursor is not one postern gave; start again without a cursor")
	}
	return n, nil
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// HasScope reports whether the call was granted scope.
func HasScope(ctx context.Context, scope string) bool {
	for _, s := range dispatch.InfoFrom(ctx).Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// ClientName is who made the call, as the action log records it: the client's name, else
// the call's era.
func ClientName(ctx context.Context) string {
	info := dispatch.InfoFrom(ctx)
	if info.ClientName != "" {
		return info.ClientName
	}
	return info.Era
}

// SearchesBodies says whether the grant widens searches to body words and attachment names: a
// granted scope the catalog marks searches_bodies.
func SearchesBodies(ctx context.Context) bool {
	for _, sc := range generated.Scopes {
		if sc.SearchesBodies && HasScope(ctx, sc.Name) {
			return true
		}
	}
	return false
}

// Clock is the clock relative dates are read against (tests replace it).
var Clock = time.Now

// Deref is *p, or "" when p is nil.
func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// NonZero is n, or nil when n is 0 (an optional count present only when it says something).
func NonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// TextPart is one page of a text as the reading tools give it: the text, where the next page
// starts (nil on the last), the whole length (when there are several pages), and whether the
// whole text is not here.
type TextPart struct {
	Text      string
	Next      *int
	Length    *int
	Truncated *bool
}

// TextPage is the page of text (of a message, a note, an attachment: what) from offset of at
// most maxLength bytes (0: the default); cut says the stored text itself was cut short.
func TextPage(text, what string, offset, maxLength int, cut bool) (TextPart, error) {
	if offset > len(text) {
		return TextPart{}, fmt.Errorf("offset %d is past the end of this %s's text (%d bytes); start again at 0", offset, what, len(text))
	}
	t, next := PageText(text, offset, PageLength(maxLength))
	p := TextPart{Text: t}
	if next < len(text) {
		p.Next = Ptr(next)
	}
	if next < len(text) || offset > 0 {
		p.Length = Ptr(len(text))
	}
	if next < len(text) || cut {
		p.Truncated = Ptr(true)
	}
	return p, nil
}

// PageLength is max_length as given, or its default, within MaxShowText.
func PageLength(n int) int {
	if n <= 0 || n > MaxShowText {
		return MaxShowText
	}
	return n
}

// PageText returns the page of s that starts at offset and takes at most n
// bytes, and where the next page starts (len(s) after the last). Pages never
// split a character or a masked span (mask's markers, which the store holds
// where secrets were): an offset inside one starts at its beginning. A page
// ends where the boundary's cleaning (which trims blank lines and spaces at
// a text's ends, and drops joiners left alone) changes neither side: before
// a space that ends a word in its last eighth when there is one, else
// between two characters that are neither spaces nor a joiner, a selector or
// a combining mark. So the pages of a text, each from the one before's next
// offset, show the text, every character once.
func PageText(s string, offset, n int) (string, int) {
	offset = spanStart(s, min(max(offset, 0), len(s)))
	if offset+n >= len(s) {
		return s[offset:], len(s)
	}
	end := pageEnd(s, offset, offset+n)
	return s[offset:end], end
}

// pageEnd is where a page that starts at from and may run to limit
// (< len(s)) ends: see PageText. It is always past from.
func pageEnd(s string, from, limit int) int {
	floor := max(from+1, limit-(limit-from)/8)
	for e := limit; e >= floor; e-- {
		if s[e] == ' ' && !isSpaceBefore(s, e) && spanStart(s, e) == e {
			return e
		}
	}
	for e := limit; e > from && e > limit-4096; e-- {
		if utf8.RuneStart(s[e]) && seamAt(s, e) && spanStart(s, e) == e {
			return e
		}
	}
	for e := limit; e > from; e-- { // only spaces and joiners near the end: any character's edge
		if utf8.RuneStart(s[e]) && spanStart(s, e) == e {
			return e
		}
	}
	// A span (or a character) longer than the page: take it whole.
	if e := spanEnd(s, from); e > from {
		return e
	}
	_, size := utf8.DecodeRuneInString(s[from:])
	return from + size
}

func isSpaceBefore(s string, e int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:e])
	return unicode.IsSpace(r)
}

// seamAt reports whether a page may end at s[e] with the cleaning of
// either page changing nothing there.
func seamAt(s string, e int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:e])
	after, _ := utf8.DecodeRuneInString(s[e:])
	return !unicode.IsSpace(before) && !unicode.IsSpace(after) && !contextual(before) && !contextual(after) &&
		!unicode.In(after, unicode.Mn, unicode.Me, unicode.Mc)
}

// contextual: the characters clean keeps or drops by their neighbours
// (joiners, variation selectors, tag characters).
func contextual(r rune) bool {
	return r == '\u200c' || r == '\u200d' || (r >= '\ufe00' && r <= '\ufe0f') || (r >= 0x180b && r <= 0x180f) ||
		(r >= 0xe0000 && r <= 0xe007f) || (r >= 0xe0100 && r <= 0xe01ef)
}

// maskMarkers are how the masked spans the store holds begin; each ends at
// the first "]" after its beginning.
var maskMarkers = []string{mask.HiddenCode, mask.HiddenLink, mask.HiddenPassword, mask.HiddenKey, mask.CardPrefix, mask.IBANPrefix, mask.NIRPrefix, mask.WithheldPrefix}

// maxMarker is the longest a marker is: mask.WithheldPrefix, a reason, "]".
const maxMarker = 200

// spanStart moves i back to the start of the character, and of the masked
// span, it falls in.
func spanStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	from := max(0, i-maxMarker)
	for j := strings.LastIndexByte(s[from:i], '['); j >= 0; j = strings.LastIndexByte(s[from:from+j], '[') {
		at := from + j
		if e := markerEnd(s, at); e > i {
			return at
		}
		if j == 0 {
			break
		}
	}
	return i
}

// spanEnd is the end of the masked span starting at i (i itself if none).
func spanEnd(s string, i int) int {
	if e := markerEnd(s, i); e > i {
		return e
	}
	return i
}

// markerEnd is the end of the mask marker at s[i:], or -1.
func markerEnd(s string, i int) int {
	for _, m := range maskMarkers {
		if strings.HasPrefix(s[i:], m) {
			if m[len(m)-1] == ']' {
				return i + len(m)
			}
			if e := strings.IndexByte(s[i+len(m):min(len(s), i+maxMarker)], ']'); e >= 0 {
				return i + len(m) + e + 1
			}
		}
	}
	return -1
}

// MaxListed is the most names (of accounts, folders) an error lists.
const MaxListed = 10

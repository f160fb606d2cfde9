package mask

import "github.com/postern-mcp/postern/internal/clean"

// Line is what an agent is given of a one-line value a stranger wrote: cleaned as
// clean.Line cleans it (invisible and control characters out, one line), then masked on the
// folded view of that cleaned text, so that a zero-width space between two digits cannot hide
// a code from the masks while the agent reads the digits joined. Line(Line(s)) == Line(s).
func Line(s string) string {
	c := clean.Line(s)
	m, n := Text(c)
	if n == 0 {
		return c
	}
	return clean.Line(m)
}

// Body is Line for a body: cleaned as clean.Text cleans it (line breaks kept), then masked.
// Body(Body(s)) == Body(s).
func Body(s string) string {
	c := clean.Text(s)
	m, n := Text(c)
	if n == 0 {
		return c
	}
	return clean.Text(m)
}

// LineOf and BodyOf are Line and Body for a field of the message v was made for (with
// Inspect, from the message's cleaned subject and text): the message's verdict masks first,
// then the field's own, as the answer boundary will. So Line(LineOf(s, v)) == LineOf(s, v)
// and Body(BodyOf(s, v)) == BodyOf(s, v).
func LineOf(s string, v Verdict) string {
	m, _ := Apply(clean.Line(s), v)
	return Line(m)
}

// BodyOf: see LineOf. The text Inspect read needs no second pass with its own verdict: the
// message's verdict was made from it, so it already says all that the text's own would (a
// code, a password), and masking is idempotent (TestStoredAsShown, FuzzBoundary). The subject
// does need it: on its own, a subject that speaks of a temporary password is withheld whole.
//
// text must be the cleaned text given to Inspect (clean.Text), as it is not cleaned again.
func BodyOf(text string, v Verdict) string {
	m, n := Apply(text, v)
	if n == 0 {
		return text
	}
	return clean.Text(m)
}

// WithoutCode is v for the fields of its message that are never read for code shapes (a Date,
// a Message-ID): what it says of passwords stays, and the codes the message gives elsewhere
// are still masked wherever they stand in them; no other number is taken for a code.
func (v Verdict) WithoutCode() Verdict {
	v.HasCode = false
	return v
}

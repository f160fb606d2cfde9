package catalog

import "strings"

// AsksPerson reports whether a commit of this effect waits for the person's
// approval: sending, deleting and other irreversible requests cannot be undone.
func AsksPerson(effect string) bool {
	return effect == EffectSend || effect == EffectDelete || effect == EffectIrreversible
}

// TokenPattern is the shape of an approval token (internal/approval: 32
// random bytes, base64url without padding).
const TokenPattern = "^[A-Za-z0-9_-]{43}$"

// ExpandPair turns a prepare_commit tool into its two halves. The first,
// under the catalog name, checks the arguments and computes the exact effect
// without doing anything: it is read-only and answers with a preview and a
// token. The second, NAME_commit, takes the same arguments and the token and
// does what was previewed; it carries the catalog's effect, hints and output.
func ExpandPair(t *Tool) (prep, commit *Tool) {
	p := *t
	p.Description = strings.TrimSpace(t.Description) + " This call only prepares: it returns a preview and a token, and nothing happens until " + t.Name + CommitSuffix + "."
	p.Annotations = Annotations{ReadOnly: true}
	p.Output = PreparedType
	c := *t
	c.Name = t.Name + CommitSuffix
	c.Title = t.Title + " (commit)"
	c.Description = "Carry out what " + t.Name + " prepared: pass the same arguments and the token it returned."
	if AsksPerson(t.Effect) {
		c.Description += " The person approves first; a declined or changed action does nothing."
	}
	c.Input = append(append([]*Param(nil), t.Input...), &Param{
		Name: "token", Type: "string", Required: true, Pattern: TokenPattern, FreeText: true,
		Description: "The token " + t.Name + " returned; it works once, on this connection, for exactly the arguments it was prepared with.",
		Pos:         t.Pos,
	})
	return &p, &c
}

// Registry is the catalog's tools as the server serves them: every
// prepare_commit tool in its two halves, in catalog order.
func (c *Catalog) Registry() []*Tool {
	var out []*Tool
	for _, t := range c.Tools {
		if !t.PrepareCommit {
			out = append(out, t)
			continue
		}
		p, cm := ExpandPair(t)
		out = append(out, p, cm)
	}
	return out
}

// Package mask hides secrets in mail before an agent or the search index sees them.
// It never logs, stores or returns what it masks, and its markers hold no digit of a secret.
// [Inspect] judges a message once from its own words; [Apply] masks each of its fields with
// that [Verdict]; [Text] does both for a string of no message; [Line] and [Body] clean, then mask.
// [Own], [OwnBody] and [OwnLine] mask the person's own texts (notes, descriptions): each
// secret where it stands, never the whole text.
//
// Identifiers (Message-ID, In-Reply-To, References, and every field that is not the subject,
// an address or a MIME parameter: [Verdict.WithoutCode]) are never read for code shapes, but a
// code the message masks elsewhere is masked wherever it appears, identifiers included.
// What goes, the markers, the rules and their limits: docs/packages.md, "internal/mask".
package mask

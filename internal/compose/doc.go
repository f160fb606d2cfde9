// Package compose builds outgoing messages from checked parts; it never sends or stores them, and
// never lets a caller's string become a header of its own.
//
// An agent's strings come in through [ParseAddress], [ParseList], [CheckSubject] and
// [CheckBody]; [Reply] and [Forward] derive the rest from the message being answered;
// [Message.Bytes] checks every field again and writes the exact RFC 5322 + MIME bytes, so a
// [Message] built by hand cannot inject a header either. Refusals are [*FieldError]s that name
// the field ("to[2]", "subject") and say why in one sentence.
//
// # Decisions
//
//   - One-line fields (names, addresses, subjects) refuse C0 and C1 controls (tab, CR, LF, NUL,
//     U+0085 included), U+2028/U+2029 and the bidirectional embeddings, overrides and isolates
//     (U+202A–U+202E, U+2066–U+2069), which make a line read differently from what it holds.
//     They also refuse anything that looks like an RFC 2047 encoded word ("=?" followed, later,
//     by "?=" with two more '?' between): an agent has no reason to send one, and decoding it
//     could yield a line break or an address. Invalid UTF-8 is refused everywhere.
//   - A display name may not hold '@' (nor its full-width look-alikes) or '<' '>': that is a
//     second address hidden in a name. Names with ',' ';' ':' or quotes are fine once quoted.
//   - An address is a plain local@domain: a dot-atom local part (UTF-8 allowed) or a quoted one
//     without '\', '@', '<', '>', ',' or ';'; a host name (UTF-8 labels allowed, last label not
//     all digits) or an IPv4 literal such as [192.0.2.1] (net/mail, like many readers, cannot
//     read [IPv6:…] ones). No comments, no source routes, no groups. A quoted local part that
//     needs no quotes is unquoted, so Addr is canonical.
//   - Reply subjects get exactly one "Re: " after stripping any chain of reply prefixes (see
//     [Reply]); an empty subject gives "Re:". Forward subjects get one "Fwd: " the same way.
//   - Strings taken from the original message (names, subject, text) are never trusted: a name
//     that would be refused is dropped (the bare address is kept), control characters in the
//     subject and text become spaces or are removed, and message-ids that are not a plain
//     left@right are left out of In-Reply-To and References.
//   - On the wire every line break is CRLF and a non-empty body always ends with one; the body is
//     7bit when it is printable ASCII with lines of at most 78 bytes and no trailing blanks,
//     quoted-printable otherwise. Header values are folded at 78 columns where they can be;
//     encoded words (Q or B, whichever is shorter) carry non-ASCII names and subjects.
//   - Non-ASCII addresses are written as UTF-8 (RFC 6532); sending them needs SMTPUTF8.
package compose

// Package compose builds outgoing messages from checked parts; it never sends or stores them, and
// never lets a caller's string become a header of its own.
// An agent's strings come in through [ParseAddress], [ParseList], [CheckSubject] and
// [CheckBody]; [Message.Bytes] checks every field again before writing the bytes.
// Hand-written, not go-message's mail.Header writer: that one leaves encoded words unfolded (12 of
// 21 test messages get header lines over 78 bytes), passes a caller's "=?…?=" and "id> <id" through
// as a decoded line break and an extra References id, and drops a subject's leading space.
// What each field accepts and how the bytes are written: docs/packages.md, "internal/compose".
package compose

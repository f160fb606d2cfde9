// Package compose builds outgoing messages from checked parts; it never sends or stores them, and
// never lets a caller's string become a header of its own.
// An agent's strings come in through [ParseAddress], [ParseList], [CheckSubject] and
// [CheckBody]; [Message.Bytes] checks every field again before writing the bytes.
// What each field accepts and how the bytes are written: docs/packages.md, "internal/compose".
package compose

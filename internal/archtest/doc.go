// Package archtest holds tests of the repository's shape that no one package owns: which
// folders of internal/ import which, and where an account's kind is compared with a kind's
// name. It has no code of its own.
package archtest

package store

import (
	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/store/davstore"
)

// Every column a search or a filter reads — with FTS5 MATCH, LIKE, instr or GLOB, or compared
// with a name an agent wrote — is filled from exactly the text the answers show of it, masked
// by the same function that masks it on its way out, never from what the server or the file
// holds. So searching for any part of a masked secret (a prefix, three of its digits, its
// fullwidth or Arabic-Indic form) finds nothing, and searching for a marker ("code hidden")
// finds only what its answer shows. Searched names each such column and what fills it,
// NamesCompared the names compared in Go; TestSearchedColumns checks that the lists name
// every FTS5 table's columns and every column a query of this package reads with LIKE, instr
// or GLOB, and that no column of Searched holds more of a secret of internal/testing/masktest
// than the answers show, once those cases are stored as mail, notes and contacts.

// SearchedColumn is one column a search reads, and what fills it.
type SearchedColumn struct {
	Table, Column string
	FilledBy      string // the function that masks what it holds
}

// Searched lists the columns searches read with words an agent wrote.
var Searched = []SearchedColumn{
	{"meta_fts", "subject", "MaskMessage (at sync, and RemaskMail): mask.LineOf with the message's verdict, as messages.subject"},
	{"meta_fts", "from_addr", "MaskMessage: mask.LineOf (names), mask.Line (addresses)"},
	{"meta_fts", "to_addr", "MaskMessage: mask.LineOf (names), mask.Line (addresses)"},
	{"meta_fts", "cc_addr", "MaskMessage: mask.LineOf (names), mask.Line (addresses)"},
	{"meta_fts", "attachments", "MaskMessage: mask.LineOf, the attachment names the tools show"},
	{"body_fts", "text", "MaskMessage: mask.BodyOf, the message text the tools show"},
	{"notes_fts", "title", "notes.Build: mask.OwnLine, the note title the tools show"},
	{"notes_fts", "text", "notes.Build: mask.OwnBody, the note text the tools show"},
	{"dav_objects", "search", "davstore.ContactSearch: answer.Line of what the contact tools show"},
}

// NamesCompared are the stored names an agent's name is compared with, in Go, to choose a
// folder or a collection: they hold the server's name (a sync needs it), and an agent's name
// is compared with its NameForms only.
var NamesCompared = []SearchedColumn{
	{"folders", "name", "resolveFolders: NameForms"},
	{"collections", "name", "the calendar tools' pickCollection: NameForms"},
}

// NotSearched lists the columns this package reads with LIKE, instr or MATCH against a
// pattern of its own, never against words an agent wrote.
var NotSearched = []SearchedColumn{
	{"bodies", "headers", "fillLists: LIKE a fixed header name"},
	{"messages", "from_email", "the sender's domain, cut at its @ (projects, the senders tool)"},
}

// NameForms are the forms of a stored name (a folder's, a calendar's) an agent's name is
// compared with: the name as shown (answer.Line), and the name itself and cleaned when showing
// it masks nothing. A name holding a secret so answers only to the masked form the agent was
// shown, never to the secret, so no guess of it can be confirmed.
func NameForms(name string) []string {
	shown, cleaned := answer.Line(name), clean.Line(name)
	if shown != cleaned {
		return []string{shown}
	}
	if name == cleaned {
		return []string{name}
	}
	return []string{name, cleaned}
}

// SearchFold is how a contact search folds its text and its query alike: mask.Fold (digit
// forms, compatibility forms, look-alike letters), then lower case.
func SearchFold(s string) string { return davstore.SearchFold(s) }

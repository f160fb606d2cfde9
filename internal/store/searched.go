package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/contact"
	"github.com/postern-mcp/postern/internal/mask"
)

// Every column a search or a filter reads — with FTS5 MATCH, LIKE, instr or GLOB, or compared
// with a name an agent wrote — is filled from exactly the text the answers show of it, masked
// by the same function that masks it on its way out, never from what the server or the file
// holds. So searching for any part of a masked secret (a prefix, three of its digits, its
// fullwidth or Arabic-Indic form) finds nothing, and searching for a marker ("code hidden")
// finds only what its answer shows. Searched names each such column and what fills it,
// NamesCompared the names compared in Go; TestSearchedColumns checks that the lists name
// every FTS5 table's columns and every column a query of this package reads with LIKE, instr
// or GLOB, and that no column of Searched holds more of a secret of internal/mask/masktest
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
	{"dav_objects", "search", "contactSearch: answer.Line of what the contact tools show"},
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
func SearchFold(s string) string { return strings.ToLower(mask.Fold(s)) }

// contactSearch is what a contact search looks in: the contact's name, email addresses,
// phones (and each phone's digits alone), organisation and title, each as the contact tools
// show it (contact.Read, masked by answer.Line), folded by SearchFold. Nothing the tools do
// not show is in it, so neither a secret nor a marker of a field never shown can be found.
func contactSearch(data, summary string) string {
	card, ok := contact.Parse(data)
	if !ok {
		return ""
	}
	sh := contact.Read(card, summary)
	var words []string
	add := func(s string) {
		if s = strings.TrimSpace(answer.Line(s)); s != "" {
			words = append(words, s)
		}
	}
	add(sh.Name)
	for _, e := range sh.Emails {
		add(e)
	}
	for _, p := range sh.Phones {
		shown := answer.Line(p)
		add(shown)
		// A phone is also found by its digits alone ("+44 20 7946 0000" by "2079460000"),
		// the digits it is shown with.
		words = append(words, digits(mask.Fold(shown)))
	}
	add(sh.Organization)
	add(sh.Title)
	return SearchFold(strings.Join(nonEmpty(words), " "))
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func nonEmpty(ws []string) []string {
	out := ws[:0]
	for _, w := range ws {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// refillContactSearch fills dav_objects.search again for every contact from its vCard
// (contactSearch) and empties it for every other object: a store written before held the
// server's words there, unmasked.
func refillContactSearch(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, kind, data, summary FROM dav_objects`)
	if err != nil {
		return err
	}
	type fill struct {
		id     int64
		search string
	}
	var fills []fill
	for rows.Next() {
		var id int64
		var kind, data, summary string
		if err := rows.Scan(&id, &kind, &data, &summary); err != nil {
			rows.Close()
			return err
		}
		f := fill{id: id}
		if kind == ObjectContact {
			f.search = contactSearch(data, summary)
		}
		fills = append(fills, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	up, err := tx.PrepareContext(ctx, `UPDATE dav_objects SET search = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer up.Close()
	for _, f := range fills {
		if _, err := up.ExecContext(ctx, f.search, f.id); err != nil {
			return err
		}
	}
	return nil
}

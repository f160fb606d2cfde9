package davstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/contact"
	"github.com/postern-mcp/postern/internal/mask"
)

// SearchFold is how a contact search folds its text and its query alike: mask.Fold (digit
// forms, compatibility forms, look-alike letters), then lower case.
func SearchFold(s string) string { return strings.ToLower(mask.Fold(s)) }

// ContactSearch is what a contact search looks in: the contact's name, email addresses,
// phones (and each phone's digits alone), organisation and title, each as the contact tools
// show it (contact.Read, masked by answer.Line), folded by SearchFold. Nothing the tools do
// not show is in it, so neither a secret nor a marker of a field never shown can be found.
func ContactSearch(data, summary string) string {
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

// RefillContactSearch fills dav_objects.search again for every contact from its vCard
// (ContactSearch) and empties it for every other object: a store written before held the
// server's words there, unmasked.
func RefillContactSearch(ctx context.Context, tx *sql.Tx) error {
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
			f.search = ContactSearch(data, summary)
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

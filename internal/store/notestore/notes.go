// Package notestore keeps the notes of the configured notes folders in the store's database:
// one row per Markdown file and a full-text index over titles and text. The store opens it on
// its own database and lends it its methods, so callers reach it as store.Store.
package notestore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store/fts"
)

// Schema: the notes of the configured notes folders (internal/source/notes writes them): one row per
// Markdown file, its title and text cleaned and masked as an answer shows them, and a
// contentless FTS5 index over both, tokenized as the mail indexes are. root is the configured
// folder (absolute), path the file's place inside it with "/" between the names.
var Schema = []string{
	`CREATE TABLE IF NOT EXISTS notes(
		id INTEGER PRIMARY KEY,
		root TEXT NOT NULL,
		path TEXT NOT NULL,
		title TEXT NOT NULL DEFAULT '',
		mtime INTEGER NOT NULL DEFAULT 0,
		size INTEGER NOT NULL DEFAULT 0,
		text TEXT NOT NULL DEFAULT '',
		truncated INTEGER NOT NULL DEFAULT 0,
		withheld TEXT NOT NULL DEFAULT '',
		UNIQUE(root, path)
	)`,
	`CREATE INDEX IF NOT EXISTS notes_mtime ON notes(root, mtime, id)`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(
		title, text, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2')`,
}

// Notes reads and writes the notes tables of one open database.
type Notes struct {
	db      *sql.DB
	explain func(error) error // SQLite's errors as a sentence for a person
}

// New reads and writes the notes of db, its errors explained by explain.
func New(db *sql.DB, explain func(error) error) *Notes { return &Notes{db: db, explain: explain} }

// Note is one note as stored.
type Note struct {
	ID    int64
	Root  string // the notes folder, absolute
	Path  string // inside Root, "/" between names
	Title string
	MTime int64 // the file's modification time, Unix nanoseconds
	Size  int64 // the file's size in bytes
	// Text is the note's text as an answer shows it (masked); not read by NoteHeads and FindNotes.
	Text      string
	Truncated bool   // the file was larger than what was read of it
	Withheld  string // why the text is withheld (it gives a password), or ""
}

// ErrNoNote is returned for a note that is not in the store.
var ErrNoNote = errors.New("no such note")

// NoteStamp is what tells whether a file changed since it was stored.
type NoteStamp struct{ MTime, Size int64 }

// NoteStamps returns the stored notes of root by path.
func (s *Notes) NoteStamps(ctx context.Context, root string) (map[string]NoteStamp, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, mtime, size FROM notes WHERE root = ?`, root)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := map[string]NoteStamp{}
	for rows.Next() {
		var p string
		var st NoteStamp
		if err := rows.Scan(&p, &st.MTime, &st.Size); err != nil {
			return nil, s.explain(err)
		}
		out[p] = st
	}
	return out, s.explain(rows.Err())
}

// SaveNotes stores put (each replacing the note of its root and path) and removes the notes of
// root whose paths are in gone, in one transaction, indexes included.
func (s *Notes) SaveNotes(ctx context.Context, root string, put []*Note, gone []string) error {
	if len(put) == 0 && len(gone) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	for _, p := range gone {
		if err := deleteNote(ctx, tx, root, p); err != nil {
			return s.explain(err)
		}
	}
	for _, n := range put {
		if err := deleteNote(ctx, tx, root, n.Path); err != nil {
			return s.explain(err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO notes(root, path, title, mtime, size, text, truncated, withheld) VALUES(?,?,?,?,?,?,?,?)`,
			root, n.Path, n.Title, n.MTime, n.Size, n.Text, n.Truncated, n.Withheld)
		if err != nil {
			return s.explain(err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return s.explain(err)
		}
		n.ID, n.Root = id, root
		if _, err := tx.ExecContext(ctx, `INSERT INTO notes_fts(rowid, title, text) VALUES(?,?,?)`, id, n.Title, n.Text); err != nil {
			return s.explain(err)
		}
	}
	return s.explain(tx.Commit())
}

func deleteNote(ctx context.Context, tx *sql.Tx, root, path string) error {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM notes WHERE root = ? AND path = ?`, root, path).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM notes_fts WHERE rowid = ?`, id); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM notes WHERE id = ?`, id)
	return err
}

// KeepNoteRoots removes the notes of every folder not in roots (a folder no longer configured).
func (s *Notes) KeepNoteRoots(ctx context.Context, roots []string) error {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT root FROM notes`)
	if err != nil {
		return s.explain(err)
	}
	var stale []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return s.explain(err)
		}
		if !slices.Contains(roots, r) {
			stale = append(stale, r)
		}
	}
	rows.Close()
	for _, r := range stale {
		stamps, err := s.NoteStamps(ctx, r)
		if err != nil {
			return err
		}
		gone := make([]string, 0, len(stamps))
		for p := range stamps {
			gone = append(gone, p)
		}
		if err := s.SaveNotes(ctx, r, nil, gone); err != nil {
			return err
		}
	}
	return nil
}

// Note returns the note at path in root, text included, or ErrNoNote.
func (s *Notes) Note(ctx context.Context, root, path string) (*Note, error) {
	n := &Note{}
	err := s.db.QueryRowContext(ctx, `SELECT id, root, path, title, mtime, size, text, truncated, withheld FROM notes WHERE root = ? AND path = ?`, root, path).
		Scan(&n.ID, &n.Root, &n.Path, &n.Title, &n.MTime, &n.Size, &n.Text, &n.Truncated, &n.Withheld)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoNote
	}
	if err != nil {
		return nil, s.explain(err)
	}
	return n, nil
}

// NoteScope is a notes folder, or a folder inside one: Dir is "" for the whole folder, else a
// path inside Root ("/" between names, no "/" at either end).
type NoteScope struct {
	Root string
	Dir  string
}

// cond is the scope as an SQL condition on n.
func (sc NoteScope) cond(args *[]any) string {
	*args = append(*args, sc.Root)
	if sc.Dir == "" {
		return "n.root = ?"
	}
	prefix := sc.Dir + "/"
	*args = append(*args, len(prefix), prefix)
	return "(n.root = ? AND substr(n.path, 1, ?) = ?)"
}

func scopesCond(scopes []NoteScope, args *[]any) string {
	if len(scopes) == 0 {
		return "0"
	}
	var cs []string
	for _, sc := range scopes {
		cs = append(cs, sc.cond(args))
	}
	return "(" + strings.Join(cs, " OR ") + ")"
}

const noteHeadColumns = `n.id, n.root, n.path, n.title, n.mtime, n.size, n.truncated, n.withheld`

func scanHead(rows *sql.Rows) (*Note, error) {
	n := &Note{}
	err := rows.Scan(&n.ID, &n.Root, &n.Path, &n.Title, &n.MTime, &n.Size, &n.Truncated, &n.Withheld)
	return n, err
}

// NoteHeads returns every note of the scopes, without text, newest first.
func (s *Notes) NoteHeads(ctx context.Context, scopes []NoteScope) ([]*Note, error) {
	var args []any
	where := scopesCond(scopes, &args)
	rows, err := s.db.QueryContext(ctx, `SELECT `+noteHeadColumns+` FROM notes n WHERE `+where+` ORDER BY n.mtime DESC, n.id DESC`, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []*Note
	for rows.Next() {
		n, err := scanHead(rows)
		if err != nil {
			return nil, s.explain(err)
		}
		out = append(out, n)
	}
	return out, s.explain(rows.Err())
}

// NoteFilter is what FindNotes looks for.
type NoteFilter struct {
	Scopes []NoteScope
	// Terms are the words: each not Negated one must be in the note, no Negated one may be.
	// Their Field is ignored.
	Terms []search.Term
	// Text: the words are looked for in the notes' text too, not only in their titles.
	Text bool
	// AfterMTime and AfterID continue a page: only notes older than that note (0: from the newest).
	AfterMTime, AfterID int64
	Limit               int
}

// FindNotes returns up to f.Limit notes of f's scopes that hold f's words, newest first,
// without their text, leaving out those skip says to; and whether more follow.
func (s *Notes) FindNotes(ctx context.Context, f *NoteFilter, skip func(*Note) bool) ([]*Note, bool, error) {
	var args []any
	conds := []string{scopesCond(f.Scopes, &args)}
	for _, t := range f.Terms {
		t.Field = ""
		e := fts.Expr(t)
		if e == "" {
			continue // no word in it: punctuation only
		}
		if !f.Text {
			e = "{title} : " + e
		}
		in := "IN"
		if t.Negated {
			in = "NOT IN"
		}
		conds = append(conds, "n.id "+in+" (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?)")
		args = append(args, e)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 20
	}
	afterM, afterID := f.AfterMTime, f.AfterID
	const batch = 500
	var out []*Note
	for {
		q := `SELECT ` + noteHeadColumns + ` FROM notes n WHERE ` + strings.Join(conds, " AND ")
		a := append([]any(nil), args...)
		if afterID != 0 {
			q += ` AND (n.mtime < ? OR (n.mtime = ? AND n.id < ?))`
			a = append(a, afterM, afterM, afterID)
		}
		q += ` ORDER BY n.mtime DESC, n.id DESC LIMIT ?`
		a = append(a, batch)
		rows, err := s.db.QueryContext(ctx, q, a...)
		if err != nil {
			return nil, false, s.explain(err)
		}
		read := 0
		for rows.Next() {
			n, err := scanHead(rows)
			if err != nil {
				rows.Close()
				return nil, false, s.explain(err)
			}
			read++
			afterM, afterID = n.MTime, n.ID
			if skip != nil && skip(n) {
				continue
			}
			if len(out) == limit {
				rows.Close()
				return out, true, nil
			}
			out = append(out, n)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, false, s.explain(err)
		}
		if read < batch {
			return out, false, nil
		}
	}
}

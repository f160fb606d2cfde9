// Package notes serves the tools of catalog/notes.yaml: notes_find, note_read and note_add
// over the notes folders the configuration names, indexed afresh at each call.
package notes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/pathsafe"
	"github.com/postern-mcp/postern/internal/search"
	srcnotes "github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// Notes implements generated.NotesHandlers.
type Notes struct{ *kit.Kit }

var _ generated.NotesHandlers = (*Notes)(nil)

// Bounds of what an agent writes with note_add.
const (
	// maxNoteTitle is the most runes of a title.
	maxNoteTitle = 200
	// maxNoteStem is the most bytes of the file name made from a title, before " (2)" and ".md".
	maxNoteStem = 120
)

// noSuchNote is the one sentence for a note that does not exist and one the projects keep.
const noSuchNote = "there is no such note here; use a path from " + generated.ToolNotesFind

// notesRefresh lets one refresh of the notes index run at a time in this process.
var notesRefresh sync.Mutex

// noteSet is what a notes call works on: the configured folders, freshly indexed.
type noteSet struct {
	st       *store.Store
	folders  []srcnotes.Folder
	problems []string
}

// notes reads the [notes] configuration and refreshes the index of its folders, so that the
// answer shows them as they are now. A refresh that fails (the store busy with a sync) leaves
// the index as it was, and the answer says so.
func (s *Notes) notes(ctx context.Context) (*noteSet, error) {
	cfg, err := s.Config.Get()
	if err != nil {
		return nil, err
	}
	roots, problems := cfg.NotesFolders()
	if len(roots) == 0 {
		if len(problems) > 0 {
			return nil, errors.New(problems[0])
		}
		return nil, fmt.Errorf("no notes folder is configured; the person adds [notes] folder = \"~/Notes\" to %s", s.Config.Path())
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, err
	}
	set := &noteSet{st: st, folders: srcnotes.Folders(roots), problems: problems}
	notesRefresh.Lock()
	res, err := srcnotes.Refresh(ctx, st, set.folders)
	notesRefresh.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		set.problems = append(set.problems, fmt.Sprintf("the notes could not be looked at again (%v); this answer shows them as they were at the last look", err))
	}
	if res != nil {
		set.problems = append(set.problems, res.Problems...)
	}
	return set, nil
}

// RefreshNotes indexes the configured notes folders, as every notes tool does first; postern
// sync calls it (through tools.Service, which opens its view). It returns nil and no error when no notes folder is configured.
func (s *Notes) RefreshNotes(ctx context.Context) (*srcnotes.Result, []string, error) {
	cfg, err := s.Config.Get()
	if err != nil {
		return nil, nil, err
	}
	roots, problems := cfg.NotesFolders()
	if len(roots) == 0 {
		return nil, problems, nil
	}
	st, err := s.Store(ctx)
	if err != nil {
		return nil, problems, err
	}
	notesRefresh.Lock()
	defer notesRefresh.Unlock()
	res, err := srcnotes.Refresh(ctx, st, srcnotes.Folders(roots))
	return res, problems, err
}

// folderByName finds the notes folder an agent named: exactly, else ignoring case; an error
// naming the nearest otherwise. what names the argument.
func (ns *noteSet) folderByName(name, what string) (srcnotes.Folder, error) {
	var names []string
	for _, f := range ns.folders {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	for _, f := range ns.folders {
		if strings.EqualFold(f.Name, name) {
			return f, nil
		}
	}
	msg := fmt.Sprintf("there is no notes folder %q; ", name)
	if near := search.Nearest(name, names); len(near) > 0 {
		return srcnotes.Folder{}, errors.New(msg + "the nearest: " + strings.Join(near, ", "))
	}
	return srcnotes.Folder{}, errors.New(msg + "the notes folders are " + strings.Join(names[:min(len(names), kit.MaxListed)], ", ") + " (" + what + " takes one of them)")
}

// visibleDirs lists, in id form, the notes folders and every folder that holds a note this
// call may see: the folders an agent may name. A folder whose notes are all kept is not among
// them, so that naming it gets the same answer as a folder that does not exist.
func visibleDirs(ns *noteSet, heads []*store.Note, a *kit.Access) map[string]bool {
	dirs := map[string]bool{}
	byRoot := map[string]srcnotes.Folder{}
	for _, f := range ns.folders {
		dirs[f.Name] = true
		byRoot[f.Root] = f
	}
	for _, n := range heads {
		if a.KeepsNote(n.Root, n.Path, n.Title) {
			continue
		}
		f := byRoot[n.Root]
		for d := path.Dir(n.Path); d != "."; d = path.Dir(d) {
			dirs[f.ID(d)] = true
		}
	}
	return dirs
}

// scopeOf is the scope notes_find's folder names: a notes folder's name, or that and a folder
// inside it. A folder no visible note is in is an error naming the nearest.
func (ns *noteSet) scopeOf(folder string, dirs map[string]bool) ([]store.NoteScope, error) {
	if folder == "" {
		out := make([]store.NoteScope, 0, len(ns.folders))
		for _, f := range ns.folders {
			out = append(out, store.NoteScope{Root: f.Root})
		}
		return out, nil
	}
	name, dir, _ := strings.Cut(strings.Trim(folder, "/"), "/")
	f, err := ns.folderByName(name, "folder")
	if err != nil {
		return nil, err
	}
	dir = strings.Trim(dir, "/")
	if dir == "" {
		return []store.NoteScope{{Root: f.Root}}, nil
	}
	if !dirs[f.ID(dir)] {
		// Case ignored, as the folder names are.
		for d := range dirs {
			if strings.EqualFold(d, f.ID(dir)) {
				_, rel, _ := strings.Cut(d, "/")
				return []store.NoteScope{{Root: f.Root, Dir: rel}}, nil
			}
		}
		return nil, noFolder(folder, dirs)
	}
	return []store.NoteScope{{Root: f.Root, Dir: dir}}, nil
}

// noFolder says that folder holds no note here, naming the nearest folders that do.
func noFolder(folder string, dirs map[string]bool) error {
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	msg := fmt.Sprintf("there is no notes folder %q here", folder)
	if near := search.Nearest(folder, names); len(near) > 0 {
		return errors.New(msg + "; the nearest: " + strings.Join(near, ", "))
	}
	more := ""
	if len(names) > kit.MaxListed {
		more = ", …"
	}
	return errors.New(msg + "; the folders are " + strings.Join(names[:min(len(names), kit.MaxListed)], ", ") + more)
}

// noteWords reads notes_find's query: words, "phrases", -excluded words, the last word a
// prefix. The mail operators, OR and groups are refused: notes have no sender or folder field.
func noteWords(q string) ([]search.Term, error) {
	if strings.TrimSpace(q) == "" {
		return nil, nil
	}
	parsed, err := search.Parse(q, kit.Clock().UTC())
	if err != nil {
		return nil, fmt.Errorf("the search %q cannot be read: %v", q, err)
	}
	rest := *parsed // what the query holds besides its terms
	rest.Terms = nil
	fielded := false
	for _, t := range parsed.Terms {
		fielded = fielded || t.Field != ""
	}
	if fielded || !rest.Empty() {
		// The query is not quoted back: an operator may name what this connection may not see.
		return nil, fmt.Errorf("the search uses an operator (such as from: or account:), OR or ( ), which %s does not take; give words, \"phrases\" and -excluded words, and folder for a folder", generated.ToolNotesFind)
	}
	return parsed.Terms, nil
}

func encodeNoteCursor(n *store.Note) string {
	return "c" + strconv.FormatUint(uint64(n.MTime), 36) + "-" + strconv.FormatInt(n.ID, 36)
}

func decodeNoteCursor(c *string) (mtime, id int64, err error) {
	if c == nil || *c == "" {
		return 0, 0, nil
	}
	bad := errors.New("the cursor is not one postern gave; start again without a cursor")
	m, i, ok := strings.Cut(strings.TrimPrefix(*c, "c"), "-")
	if !ok {
		return 0, 0, bad
	}
	um, err1 := strconv.ParseUint(m, 36, 64)
	id, err2 := strconv.ParseInt(i, 36, 64)
	if err1 != nil || err2 != nil || id <= 0 {
		return 0, 0, bad
	}
	return int64(um), id, nil
}

// noteRow is a note as the answers show it.
func noteRow(f srcnotes.Folder, n *store.Note) generated.NoteRow {
	dir := f.Name
	if d := path.Dir(n.Path); d != "." {
		dir = f.ID(d)
	}
	row := generated.NoteRow{
		Path:     f.ID(n.Path),
		Title:    n.Title,
		Folder:   dir,
		Modified: time.Unix(0, n.MTime).UTC().Format(time.RFC3339),
		Size:     int(n.Size),
	}
	if n.Truncated {
		row.Truncated = kit.Ptr(true)
	}
	return row
}

func (ns *noteSet) folderOf(root string) srcnotes.Folder {
	for _, f := range ns.folders {
		if f.Root == root {
			return f
		}
	}
	return srcnotes.Folder{Name: filepath.Base(root), Root: root}
}

// NotesFind implements notes_find.
func (s *Notes) NotesFind(ctx context.Context, a *generated.NotesFindArgs) (*generated.NoteList, error) {
	terms, err := noteWords(kit.Deref(a.Query))
	if err != nil {
		return nil, err
	}
	afterM, afterID, err := decodeNoteCursor(a.Cursor)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := s.notes(ctx)
	if err != nil {
		return nil, err
	}
	all := make([]store.NoteScope, 0, len(ns.folders))
	for _, f := range ns.folders {
		all = append(all, store.NoteScope{Root: f.Root})
	}
	heads, err := ns.st.NoteHeads(ctx, all)
	if err != nil {
		return nil, err
	}
	scopes, err := ns.scopeOf(kit.Deref(a.Folder), visibleDirs(ns, heads, acc))
	if err != nil {
		return nil, err
	}
	// What the projects keep is counted over the whole scope, whatever the words, so that the
	// count never tells whether a kept note holds one.
	leftOut := 0
	for _, n := range heads {
		if inScopes(n, scopes) && acc.KeepsNote(n.Root, n.Path, n.Title) {
			leftOut++
		}
	}
	f := &store.NoteFilter{Scopes: scopes, Terms: terms, Text: kit.SearchesBodies(ctx), AfterMTime: afterM, AfterID: afterID, Limit: a.Limit}
	found, more, err := ns.st.FindNotes(ctx, f, func(n *store.Note) bool { return acc.KeepsNote(n.Root, n.Path, n.Title) })
	if err != nil {
		return nil, err
	}
	res := &generated.NoteList{Notes: make([]generated.NoteRow, 0, len(found)), Problems: ns.problems}
	if leftOut > 0 {
		res.LeftOut = kit.Ptr(leftOut)
	}
	left := kit.Budget(kit.MaxListText)
	for i, n := range found {
		row := noteRow(ns.folderOf(n.Root), n)
		if !left.Take(kit.Shown(row.Path)+kit.Shown(row.Title)+kit.Shown(row.Folder)) && i > 0 {
			found, more = found[:i], true
			break
		}
		res.Notes = append(res.Notes, row)
	}
	if more && len(found) > 0 {
		res.NextCursor = encodeNoteCursor(found[len(found)-1])
	}
	return res, nil
}

func inScopes(n *store.Note, scopes []store.NoteScope) bool {
	for _, sc := range scopes {
		if n.Root == sc.Root && (sc.Dir == "" || strings.HasPrefix(n.Path, sc.Dir+"/")) {
			return true
		}
	}
	return false
}

// NoteRead implements note_read: a page of a note's text, as mail_show pages a message's.
func (s *Notes) NoteRead(ctx context.Context, a *generated.NoteReadArgs) (*generated.NoteText, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := s.notes(ctx)
	if err != nil {
		return nil, err
	}
	f, rel, ok := srcnotes.Split(ns.folders, a.ID)
	if !ok {
		return nil, acc.NotFound(noSuchNote)
	}
	n, err := ns.st.Note(ctx, f.Root, rel)
	if errors.Is(err, store.ErrNoNote) || err == nil && acc.KeepsNote(n.Root, n.Path, n.Title) {
		return nil, acc.NotFound(noSuchNote)
	}
	if err != nil {
		return nil, err
	}
	res := &generated.NoteText{Note: noteRow(f, n)}
	if n.Withheld != "" {
		res.Text = "[postern withholds this note's text: " + n.Withheld + ". The person can read it in the file.]"
		res.Withheld = n.Withheld
		return res, nil
	}
	p, err := kit.TextPage(n.Text, "note", a.Offset, a.MaxLength, n.Truncated)
	if err != nil {
		return nil, err
	}
	res.Text, res.NextOffset, res.Length, res.Truncated = p.Text, p.Next, p.Length, p.Truncated
	return res, nil
}

// NoteAdd implements note_add: a new file, never one replaced, confined to the notes folder.
func (s *Notes) NoteAdd(ctx context.Context, a *generated.NoteAddArgs) (*generated.NoteAdded, error) {
	title, err := noteTitle(a.Title)
	if err != nil {
		return nil, err
	}
	text := kit.Deref(a.Text)
	if strings.ContainsRune(text, 0) {
		return nil, errors.New("the text holds a NUL character, which a Markdown file cannot; remove it")
	}
	stem, err := noteStem(title)
	if err != nil {
		return nil, err
	}
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := s.notes(ctx)
	if err != nil {
		return nil, err
	}
	f := ns.folders[0]
	if nf := kit.Deref(a.NotesFolder); nf != "" {
		if f, err = ns.folderByName(nf, "notes_folder"); err != nil {
			return nil, err
		}
	}
	dir, err := noteSubdir(ctx, ns, f, kit.Deref(a.Folder), acc)
	if err != nil {
		return nil, err
	}
	rel := kit.JoinRel(dir, stem+".md")
	if bad := srcnotes.CheckName(f, rel); bad != "" {
		return nil, fmt.Errorf("the title %q cannot name a note's file: %s; give another title", title, strings.TrimSuffix(bad, "; rename it to read it here"))
	}
	if err := acc.RefuseNoteWrite(f.Root, dir); err != nil {
		return nil, err
	}
	body := "# " + title + "\n"
	if t := strings.TrimRight(text, "\r\n"); t != "" {
		body += "\n" + t + "\n"
	}
	file, final, err := pathsafe.Create(f.Root, rel)
	if err != nil {
		return nil, fmt.Errorf("cannot write the note: %s", strings.TrimPrefix(err.Error(), "pathsafe: "))
	}
	_, werr := file.WriteString(body)
	if cerr := file.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(final)
		return nil, fmt.Errorf("writing %s failed (%v), so it was removed; check the free space and try again", final, werr)
	}
	finalRel := kit.JoinRel(dir, filepath.Base(final))
	// Indexed now, so that notes_find finds it at once; the next call would index it anyway.
	notesRefresh.Lock()
	srcnotes.Refresh(ctx, ns.st, ns.folders)
	notesRefresh.Unlock()
	return &generated.NoteAdded{Path: f.ID(finalRel), Title: title, File: final, Bytes: len(body)}, nil
}

// noteTitle checks a title an agent gave: one line of at most maxNoteTitle runes, no control or
// invisible character; spaces at its ends trimmed.
func noteTitle(t string) (string, error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return "", errors.New("the title is empty; give the note a title of one line")
	}
	if !utf8.ValidString(t) {
		return "", errors.New("the title is not valid UTF-8; give it in plain text")
	}
	for _, r := range t {
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return "", errors.New("the title holds a line break; give it on one line and put the rest in text")
		case unicode.IsControl(r):
			return "", fmt.Errorf("the title holds the control character U+%04X; remove it", r)
		case clean.Forbidden(r):
			return "", fmt.Errorf("the title holds the invisible character U+%04X, which can disguise it; remove it", r)
		}
	}
	if n := utf8.RuneCountInString(t); n > maxNoteTitle {
		return "", fmt.Errorf("the title is %d characters long; give one of at most %d and put the rest in text", n, maxNoteTitle)
	}
	return t, nil
}

// noteStem makes a title a file name without extension: its letters, digits and marks (read
// as NFKC reads them, so a full-width slash is no letter), with "-" and "_" kept and every
// other run of characters as one space; no dot or space at either end; a Windows device name
// (CON, NUL, COM1…) behind "_"; at most maxNoteStem bytes, cut between characters.
func noteStem(title string) (string, error) {
	var b strings.Builder
	for _, r := range norm.NFKC.String(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || r == '-' || r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	stem := strings.Join(strings.Fields(b.String()), " ")
	stem = strings.Trim(stem, " -_")
	if stem == "" {
		return "", fmt.Errorf("the title %q has no letter or digit to name the note's file; give a title with a word in it", title)
	}
	if len(stem) > maxNoteStem {
		cut := maxNoteStem
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		stem = strings.TrimRight(stem[:cut], " -_")
	}
	if kit.DeviceNames[strings.ToUpper(stem)] {
		stem = "_" + stem
	}
	return stem, nil
}

// noteSubdir checks note_add's folder, a folder inside notes folder f, and returns it with "/"
// between its names ("" for f itself): no climb, absolute path, drive or device name, control
// character, hidden folder or link on the way (pathsafe.Join), and it must exist. A missing
// one is an error naming the nearest folders that hold notes this call may see.
func noteSubdir(ctx context.Context, ns *noteSet, f srcnotes.Folder, dir string, acc *kit.Access) (string, error) {
	if dir == "" {
		return "", nil
	}
	p, err := pathsafe.Join(f.Root, dir)
	if err != nil {
		return "", fmt.Errorf("folder %q is refused: %s", dir, strings.TrimPrefix(err.Error(), "pathsafe: "))
	}
	parts := strings.FieldsFunc(dir, func(r rune) bool { return r == '/' || r == '\\' })
	for _, c := range parts {
		if strings.HasPrefix(c, ".") {
			return "", fmt.Errorf("folder %q names the hidden folder %q, which postern never writes notes into; give a visible folder inside the notes folder", dir, c)
		}
	}
	rel := strings.Join(parts, "/")
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		heads, herr := ns.st.NoteHeads(ctx, []store.NoteScope{{Root: f.Root}})
		if herr != nil {
			return "", herr
		}
		var names []string
		for d := range visibleDirs(&noteSet{folders: []srcnotes.Folder{f}}, heads, acc) {
			if _, sub, ok := strings.Cut(d, "/"); ok {
				names = append(names, sub)
			}
		}
		sort.Strings(names)
		msg := fmt.Sprintf("folder %q does not exist in the notes folder %s; give an existing folder, or leave folder out", dir, f.Name)
		if near := search.Nearest(rel, names); len(near) > 0 {
			msg += "; the nearest: " + strings.Join(near, ", ")
		}
		return "", errors.New(msg)
	case err != nil:
		return "", fmt.Errorf("folder %q cannot be used (%v); give another folder or leave folder out", dir, err)
	case !fi.IsDir():
		return "", fmt.Errorf("folder %q is not a folder; give an existing folder inside the notes folder, or leave folder out", dir)
	}
	return rel, nil
}

// Package notes is the source of the person's notes: folders of Markdown files ([notes] in the
// configuration), indexed into the store by Refresh, and the ids the notes tools give them. It
// only reads those folders, never follows a link, a FIFO or a device, and stores a note's
// title and text only as an answer shows them (cleaned and masked as mail is). Writing a new
// note is the tools' (note_add, through internal/pathsafe).
package notes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/store"
)

// Bounds of one folder's index.
const (
	// MaxRead is the most of a note's file that is read and indexed; a longer note is stored
	// cut there and marked truncated.
	MaxRead = 1 << 20
	// MaxNotes is the most notes of one folder indexed; the rest are left out, said once.
	MaxNotes = 20000
	// maxEntries is the most folder entries one walk looks at, notes or not.
	maxEntries = 200000
	// maxDepth is the deepest folder below a notes folder that is walked.
	maxDepth = 32
	// MaxPath is the longest id, in bytes, of a note that is indexed.
	MaxPath = 1000
	// maxTitle is the most runes of a title read from a note's heading.
	maxTitle = 500
	// maxProblems is the most problems one refresh says; the rest are counted.
	maxProblems = 50
)

// Folder is a configured notes folder and the name its notes' ids start with.
type Folder struct {
	Name string // the folder's own name, made unique among the configured ones
	Root string // absolute, as configured
}

// Folders names the configured folders (absolute, in order): each by its own name, a second
// folder of the same name with "-2" after it, and so on, so that the ids of a folder's notes
// stay the same while the configuration lists the same folders in the same order.
func Folders(roots []string) []Folder {
	taken := map[string]bool{}
	out := make([]Folder, 0, len(roots))
	for _, r := range roots {
		base := filepath.Base(r)
		if base == "" || base == "." || base == string(filepath.Separator) || !usableName(base) {
			base = "notes"
		}
		name := base
		for i := 2; taken[strings.ToLower(name)]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		taken[strings.ToLower(name)] = true
		out = append(out, Folder{Name: name, Root: r})
	}
	return out
}

// ID is the id of the note at rel ("/" between names) in folder f: f's name, "/", rel. It is
// also the note's resource path: postern://note/{id} (see URI).
func (f Folder) ID(rel string) string { return f.Name + "/" + rel }

// shown is how a problem names the file or folder at p: by its id, or, when the id is one the
// answers would change (it reads as holding a secret), as "a file in" the nearest folder whose
// id they would not, so that no sentence carries the secret, not even to postern sync's output.
func (f Folder) shown(p string) string {
	if id := f.ID(p); clean.Line(id) == id && mask.Line(id) == id {
		return id
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if id := f.ID(d); clean.Line(id) == id && mask.Line(id) == id {
			return "a file in " + id
		}
	}
	return "a file in " + f.Name
}

// Split finds the folder an id names and the path inside it; ok is false when the id names no
// configured folder or no path.
func Split(folders []Folder, id string) (f Folder, rel string, ok bool) {
	name, rel, found := strings.Cut(strings.Trim(id, "/"), "/")
	if !found || rel == "" {
		return Folder{}, "", false
	}
	for _, f := range folders {
		if f.Name == name {
			return f, rel, true
		}
	}
	return Folder{}, "", false
}

// URIPrefix starts every note's resource URI.
const URIPrefix = "postern://note/"

// URI is the resource URI of the note id: URIPrefix and the id's names, each percent-encoded
// as a URI path segment, with "/" between them.
func URI(id string) string {
	parts := strings.Split(id, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return URIPrefix + strings.Join(parts, "/")
}

// IDFromURI is the note id of a resource URI made by URI; ok is false for any other URI.
func IDFromURI(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, URIPrefix)
	if !ok || rest == "" {
		return "", false
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		d, err := url.PathUnescape(p)
		if err != nil || d == "" || strings.Contains(d, "/") {
			return "", false
		}
		parts[i] = d
	}
	return strings.Join(parts, "/"), true
}

// Result is what one refresh did.
type Result struct {
	Notes                   int // notes indexed after it, all folders
	Added, Updated, Removed int
	Problems                []string // what was skipped and why, one sentence each
	problemsLeft            int
}

func (r *Result) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
		return
	}
	r.problemsLeft++
}

// Refresh brings the store's notes up to date with the folders: each is walked (links, FIFOs,
// devices and hidden names skipped), a *.md or *.markdown file whose size or modification time
// differs from the stored one is read again, and the notes of files gone are removed, as are
// those of folders no longer configured. Only changed files are read, so a refresh of an
// unchanged folder costs a walk of its entries.
func Refresh(ctx context.Context, st *store.Store, folders []Folder) (*Result, error) {
	res := &Result{}
	roots := make([]string, 0, len(folders))
	for _, f := range folders {
		roots = append(roots, f.Root)
	}
	if err := st.KeepNoteRoots(ctx, roots); err != nil {
		return res, err
	}
	for _, f := range folders {
		if err := refreshFolder(ctx, st, f, res); err != nil {
			return res, err
		}
	}
	if res.problemsLeft > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d more files were skipped for such reasons", res.problemsLeft))
		res.problemsLeft = 0
	}
	return res, nil
}

// file is a note's file found by the walk.
type file struct {
	rel   string
	stamp store.NoteStamp
}

func refreshFolder(ctx context.Context, st *store.Store, f Folder, res *Result) error {
	have, err := st.NoteStamps(ctx, f.Root)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		// The notes stay as they were: a folder unreadable for a moment loses nothing.
		res.problem("the notes folder %s cannot be read (%v); check that it exists and is yours", f.Root, unwrap(err))
		res.Notes += len(have)
		return nil
	}
	defer root.Close()
	files, complete := walk(ctx, root, f, res)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var put []*store.Note
	added := 0
	seen := make(map[string]bool, len(files))
	for _, fl := range files {
		seen[fl.rel] = true
		old, ok := have[fl.rel]
		if ok && old == fl.stamp {
			continue
		}
		n, err := read(root, fl)
		if err != nil {
			res.problem("%s was skipped: %v", f.shown(fl.rel), err)
			delete(seen, fl.rel)
			continue
		}
		put = append(put, n)
		if ok {
			res.Updated++
		} else {
			added++
		}
	}
	var gone []string
	if complete {
		for p := range have {
			if !seen[p] {
				gone = append(gone, p)
			}
		}
	}
	if err := st.SaveNotes(ctx, f.Root, put, gone); err != nil {
		return err
	}
	res.Added += added
	res.Removed += len(gone)
	res.Notes += len(have) + added - len(gone)
	return nil
}

// walk lists the notes of root. complete is false when the walk stopped at a bound, so that
// the notes it did not reach are kept rather than removed.
func walk(ctx context.Context, root *os.Root, f Folder, res *Result) (files []file, complete bool) {
	complete = true
	entries := 0
	skipped := 0
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == "." {
			if err != nil {
				return err
			}
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err != nil {
			res.problem("%s was skipped: %v", f.shown(p), unwrap(err))
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		entries++
		if entries > maxEntries {
			complete = false
			return fs.SkipAll
		}
		t := d.Type()
		switch {
		case t&fs.ModeSymlink != 0:
			if isNote(name) || path.Ext(name) == "" { // a note, or perhaps a folder
				res.problem("%s was skipped: it is a symbolic link, which postern never follows", f.shown(p))
			}
			return nil
		case d.IsDir():
			if strings.Count(p, "/")+1 >= maxDepth {
				res.problem("%s was skipped: it is more than %d folders deep", f.shown(p), maxDepth)
				complete = false
				return fs.SkipDir
			}
			if bad := badName(f, p); bad != "" {
				res.problem("the folder %s was skipped: %s", f.shown(p), bad)
				return fs.SkipDir
			}
			return nil
		case !isNote(name):
			return nil
		case !t.IsRegular():
			res.problem("%s was skipped: it is not a regular file (a FIFO, a device or a socket), which postern never reads", f.shown(p))
			return nil
		}
		if bad := badName(f, p); bad != "" {
			res.problem("%s was skipped: %s", f.shown(p), bad)
			return nil
		}
		if len(files) >= MaxNotes {
			skipped++
			complete = false
			return nil
		}
		info, err := d.Info()
		if err != nil {
			res.problem("%s was skipped: %v", f.shown(p), unwrap(err))
			return nil
		}
		files = append(files, file{rel: p, stamp: store.NoteStamp{MTime: info.ModTime().UnixNano(), Size: info.Size()}})
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) && ctx.Err() == nil {
		res.problem("the notes folder %s could not be read whole (%v)", f.Root, unwrap(err))
		complete = false
	}
	if skipped > 0 {
		res.problem("%d notes of %s were left out: a folder holds at most %d", skipped, f.Name, MaxNotes)
	}
	if entries > maxEntries {
		res.problem("%s holds more than %d files and folders; only the first were looked at", f.Name, maxEntries)
	}
	return files, complete
}

// isNote reports whether a file name is a Markdown note's.
func isNote(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return (ext == ".md" || ext == ".markdown") && len(name) > len(ext)
}

// CheckName says why a note at rel in f could not be found and read back by its id, or "":
// see badName. note_add checks the file it is about to write.
func CheckName(f Folder, rel string) string { return badName(f, rel) }

// badName says why the note or folder at p cannot have an id an agent can give back, or "": a
// name that is not UTF-8, holds a control or invisible character, is too long, or that the
// answers would change (clean and mask it differently, as a name that reads as a card number).
func badName(f Folder, p string) string {
	id := f.ID(p)
	switch {
	case !utf8.ValidString(p):
		return "its name is not valid UTF-8; rename it to read it here"
	case len(id) > MaxPath:
		return fmt.Sprintf("its path is longer than %d bytes", MaxPath)
	}
	for _, r := range p {
		if unicode.IsControl(r) || clean.Forbidden(r) {
			return fmt.Sprintf("its name holds the control or invisible character U+%04X; rename it to read it here", r)
		}
	}
	if clean.Line(id) != id {
		return "its name has spaces the answers would change; rename it to read it here"
	}
	if mask.Line(id) != id {
		return "its name reads as holding a secret (a code, a card or an account number), which the answers hide; rename it to read it here"
	}
	return ""
}

func usableName(s string) bool {
	if !utf8.ValidString(s) || strings.Contains(s, "/") {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || clean.Forbidden(r) {
			return false
		}
	}
	return clean.Line(s) == s && mask.Line(s) == s
}

// read reads one note's file, never through a link: its title, its text (at most MaxRead
// bytes), cleaned and masked.
func read(root *os.Root, fl file) (*store.Note, error) {
	name := filepath.FromSlash(fl.rel)
	before, err := root.Lstat(name)
	if err != nil {
		return nil, unwrap(err)
	}
	if !before.Mode().IsRegular() {
		return nil, errors.New("it is no longer a regular file")
	}
	fh, err := root.OpenFile(name, os.O_RDONLY|syscallNoFollow|syscallNonBlock, 0)
	if err != nil {
		return nil, unwrap(err)
	}
	defer fh.Close()
	opened, err := fh.Stat()
	if err != nil {
		return nil, unwrap(err)
	}
	if !os.SameFile(before, opened) || !opened.Mode().IsRegular() {
		return nil, errors.New("it was replaced while it was read; it is read again at the next refresh")
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxRead+1))
	if err != nil {
		return nil, unwrap(err)
	}
	truncated := len(data) > MaxRead
	if truncated {
		cut := MaxRead
		for cut > 0 && !utf8.RuneStart(data[cut]) {
			cut--
		}
		data = data[:cut]
	}
	n := Build(fl.rel, string(data))
	n.MTime, n.Size = opened.ModTime().UnixNano(), opened.Size()
	n.Truncated = n.Truncated || truncated
	return n, nil
}

// Build makes the stored note of a file at rel holding text: its title (Title) and its text,
// cleaned and masked as the person's own text (mask.OwnBody: a password, a PIN, a recovery
// code, a key is hidden where it stands and the rest of the note is shown), so the store and
// its index hold what the answers show. Unlike a message, a note that gives a password is not
// withheld whole: it is the person's, and mixes the secret with everything else.
func Build(rel, text string) *store.Note {
	text = strings.ToValidUTF8(text, "\uFFFD")
	n := &store.Note{Path: rel, Title: mask.OwnLine(Title(rel, text))}
	if n.Title == "" {
		n.Title = mask.Line(stem(rel))
	}
	n.Text = mask.OwnBody(text)
	return n
}

// Title is a note's title: its first "# " heading (outside fenced code), else its file name
// without the extension; on one line, at most maxTitle runes.
func Title(rel, text string) string {
	fence := ""
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue // indented code
		}
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		if h, ok := strings.CutPrefix(t, "# "); ok {
			h = strings.TrimSpace(h)
			h = strings.TrimSpace(strings.TrimRight(h, "#")) // "# Title #"
			if h != "" {
				return cutRunes(oneLine(h), maxTitle)
			}
		}
	}
	return cutRunes(oneLine(stem(rel)), maxTitle)
}

// stem is the file name of rel without its extension.
func stem(rel string) string {
	base := path.Base(rel)
	return strings.TrimSuffix(base, path.Ext(base))
}

// oneLine replaces every control character (line breaks included) with a space.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s)
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Package pathsafe confines a file name taken from an argument or a message to
// a folder: no .., no absolute path, no symlink on the way, no device names, no
// UNC shares; files are created, never overwritten. It never follows a
// symbolic link below the root and never opens an existing file for writing.
// The names refused, how Create opens a file, and the residual risk:
// docs/packages.md, "internal/pathsafe".
package pathsafe

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/postern-mcp/postern/internal/clean"
)

// MaxName is the longest name accepted, in bytes, as most file systems allow.
const MaxName = 255

// maxTries bounds the "name (n).ext" search.
const maxTries = 10000

// Join checks name and returns it joined to root. It refuses a name that
// could leave root (see the package comment) and a symbolic link or a file
// standing where a folder of the name should be.
func Join(root, name string) (string, error) {
	parts, err := split(name)
	if err != nil {
		return "", err
	}
	base, err := resolveRoot(root, false)
	if err != nil {
		return "", err
	}
	if err := checkChain(base, parts); err != nil {
		return "", err
	}
	return filepath.Join(append([]string{base}, parts...)...), nil
}

// Create creates a new file for name under root and returns it, open for
// writing, with its final path. If the name is taken it tries "name (2).ext",
// "name (3).ext"… It never overwrites a file and never follows a link.
func Create(root, name string) (*os.File, string, error) {
	parts, err := split(name)
	if err != nil {
		return nil, "", err
	}
	base, err := resolveRoot(root, true)
	if err != nil {
		return nil, "", err
	}
	dirs, last := parts[:len(parts)-1], parts[len(parts)-1]
	f, final, err := create(base, dirs, last)
	if err != nil {
		return nil, "", err
	}
	return f, final, nil
}

// verify checks, after creating, that final still names the file f and that
// its folder resolves to dir, so that a folder swapped or moved meanwhile is
// caught.
func verify(f *os.File, final, dir string) error {
	opened, err := f.Stat()
	if err == nil {
		var now os.FileInfo
		if now, err = os.Lstat(final); err == nil && !os.SameFile(opened, now) {
			err = errors.New("another file stands at that path")
		}
	}
	if err == nil {
		var real string
		if real, err = filepath.EvalSymlinks(dir); err == nil && real != dir {
			err = fmt.Errorf("it resolves to %s", real)
		}
	}
	if err != nil {
		return fmt.Errorf("pathsafe: the folder %s changed while %s was being created, so it was removed; try again: %w", dir, filepath.Base(final), err)
	}
	return nil
}

// candidate returns the i-th name to try for base: base itself, then
// "stem (i).ext", cut to MaxName bytes.
func candidate(base string, i int) string {
	if i == 1 {
		return base
	}
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if stem == "" || len(ext) > 32 { // ".bashrc", or no real extension
		stem, ext = base, ""
	}
	suffix := fmt.Sprintf(" (%d)", i) + ext
	for len(stem)+len(suffix) > MaxName {
		_, size := utf8.DecodeLastRuneInString(stem)
		stem = stem[:len(stem)-size]
	}
	stem = strings.TrimRight(stem, " .")
	return stem + suffix
}

// resolveRoot returns root as an absolute path without links. Create needs
// the root to exist; Join accepts a root not made yet.
func resolveRoot(root string, mustExist bool) (string, error) {
	if root == "" {
		return "", errors.New("pathsafe: the destination folder is empty; configure a folder to save files in")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("pathsafe: cannot make %q absolute; give an absolute folder: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case err == nil:
		abs = real
	case errors.Is(err, fs.ErrNotExist) && !mustExist:
		return abs, nil
	default:
		return "", fmt.Errorf("pathsafe: the folder %s cannot be used; create it or choose another: %w", abs, err)
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("pathsafe: %s is not a folder; choose a folder to save files in", abs)
	}
	return abs, nil
}

// checkChain refuses a link or a non-folder on the way from base to parts.
func checkChain(base string, parts []string) error {
	p := base
	for i, c := range parts {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing further exists: nothing to follow
		}
		if err != nil {
			return fmt.Errorf("pathsafe: cannot check %s; try another name: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("pathsafe: %s is a symbolic link, which postern never follows; choose another name", p)
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return fmt.Errorf("pathsafe: %s is a file, not a folder; choose another name", p)
		}
	}
	return nil
}

// split checks name and returns its components.
func split(name string) ([]string, error) {
	switch {
	case name == "":
		return nil, errors.New("pathsafe: the file name is empty; give a name such as report.pdf")
	case len(name) > MaxName:
		return nil, fmt.Errorf("pathsafe: the file name is %d bytes long; use at most %d", len(name), MaxName)
	case !utf8.ValidString(name):
		return nil, errors.New("pathsafe: the file name is not valid UTF-8; give a name in plain text")
	}
	for _, r := range name {
		switch {
		case r == 0:
			return nil, errors.New("pathsafe: the file name contains a NUL byte; remove it")
		case unicode.IsControl(r):
			return nil, fmt.Errorf("pathsafe: the file name contains the control character U+%04X; remove it", r)
		case clean.Forbidden(r):
			return nil, fmt.Errorf("pathsafe: the file name contains the invisible character U+%04X, which can disguise a name; remove it", r)
		}
	}
	if isSep(name[0]) && len(name) > 1 && isSep(name[1]) {
		return nil, fmt.Errorf("pathsafe: %q names a network share; give a plain file name", name)
	}
	if isSep(name[0]) {
		return nil, fmt.Errorf("pathsafe: %q is an absolute path; give a name inside the folder", name)
	}
	if len(name) > 1 && name[1] == ':' && name[0] < utf8.RuneSelf && unicode.IsLetter(rune(name[0])) {
		return nil, fmt.Errorf("pathsafe: %q names a drive; give a name inside the folder", name)
	}
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' })
	if n := strings.Count(name, "/") + strings.Count(name, `\`) + 1; n != len(parts) {
		return nil, fmt.Errorf("pathsafe: %q has an empty folder name (two separators in a row, or one at the end); remove it", name)
	}
	for _, c := range parts {
		if err := checkComponent(name, c); err != nil {
			return nil, err
		}
		if n := norm.NFKC.String(c); n != c {
			if strings.ContainsAny(n, `/\`) {
				return nil, fmt.Errorf("pathsafe: %q contains a character that reads as a folder separator; replace it", name)
			}
			if err := checkComponent(name, n); err != nil {
				return nil, err
			}
		}
		if err := checkDecoded(name, c); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

func isSep(b byte) bool { return b == '/' || b == '\\' }

// checkComponent refuses one folder or file name that climbs, names a device,
// or that Windows would read differently.
func checkComponent(name, c string) error {
	if c == "." || c == ".." {
		return fmt.Errorf("pathsafe: %q climbs out of its folder with %q; give a plain file name", name, c)
	}
	if strings.Trim(c, ". ") == "" {
		return fmt.Errorf("pathsafe: %q has a component made only of dots and spaces; give a plain file name", name)
	}
	if strings.HasSuffix(c, ".") || strings.HasSuffix(c, " ") {
		return fmt.Errorf("pathsafe: %q has a component ending with a dot or a space, which Windows drops; remove it", name)
	}
	if strings.Contains(c, ":") {
		return fmt.Errorf("pathsafe: %q contains \":\", which Windows reads as a drive or a stream; replace it", name)
	}
	stem := c
	if i := strings.IndexByte(stem, '.'); i >= 0 {
		stem = stem[:i]
	}
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	if deviceNames[stem] {
		return fmt.Errorf("pathsafe: %q uses the Windows device name %s; choose another name", name, stem)
	}
	return nil
}

var deviceNames = func() map[string]bool {
	m := map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true,
		"CONIN$": true, "CONOUT$": true, "CLOCK$": true}
	for _, d := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³"} {
		m["COM"+d], m["LPT"+d] = true, true
	}
	return m
}()

// checkDecoded refuses a component that a later percent-decoding would turn
// into a climb, a separator or a control character.
func checkDecoded(name, c string) error {
	d := c
	for range 3 {
		next, err := url.PathUnescape(d)
		if err != nil || next == d {
			break
		}
		d = next
		bad := d == "." || d == ".." || strings.ContainsAny(d, `/\:`) ||
			strings.IndexFunc(d, unicode.IsControl) >= 0
		if bad {
			return fmt.Errorf("pathsafe: %q hides %q behind percent-encoding; give a plain file name", name, d)
		}
	}
	return nil
}

package projects

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"

	"github.com/postern-mcp/postern/internal/atomicfile"
)

// The person's commands (postern project open|close|tie|untie) change one line or one
// array of the file in place, keeping its comments and its order: the file is the
// person's, written by hand. The result is read back before it is written, so a change
// that would not read back as meant writes nothing.

// SetOpen opens or closes project id.
func SetOpen(path, id string, open bool) error {
	return edit(path, id, func(lines []string, b block) ([]string, error) {
		v := "open = false"
		if open {
			v = "open = true"
		}
		if i := b.key(lines, "open"); i >= 0 {
			lines[i] = keepComment(lines[i], v)
			return lines, nil
		}
		return insert(lines, b.idLine+1, v), nil
	}, func(s *Set) bool { return s.Find(id).Open == open })
}

// AddTie ties ref (a tie: CheckTie) to project id; a tie made before is made once.
func AddTie(path, id, tie string) error {
	if err := CheckTie(tie); err != nil {
		return err
	}
	return editTies(path, id, func(ties []string) []string {
		for _, t := range ties {
			if t == tie {
				return ties
			}
		}
		return append(ties, tie)
	}, func(p *Project) bool { return contains(p.Ties, tie) })
}

// RemoveTie unties ref from project id; it is an error when it was not tied.
func RemoveTie(path, id, tie string) error {
	s, err := Load(path)
	if err != nil {
		return err
	}
	if p := s.Find(id); p != nil && !contains(p.Ties, tie) {
		return fmt.Errorf("%s is not tied to the project %q; postern project show %s lists its ties", tie, p.ID, p.ID)
	}
	return editTies(path, id, func(ties []string) []string {
		var out []string
		for _, t := range ties {
			if t != tie {
				out = append(out, t)
			}
		}
		return out
	}, func(p *Project) bool { return !contains(p.Ties, tie) })
}

func editTies(path, id string, change func([]string) []string, check func(*Project) bool) error {
	return edit(path, id, func(lines []string, b block) ([]string, error) {
		p := b.project
		next := change(append([]string(nil), p.Ties...))
		text := "ties = " + tomlArray(next)
		i := b.key(lines, "ties")
		if i < 0 {
			return insert(lines, b.idLine+1, text), nil
		}
		if kept, ok := keepTies(lines, i, b.end, next); ok {
			return kept, nil
		}
		// The array may run over several lines: it ends where the lines read as one value.
		end := i
		for ; end < b.end; end++ {
			var v map[string]any
			if _, err := toml.Decode(strings.Join(lines[i:end+1], "\n"), &v); err == nil {
				break
			}
		}
		if end == b.end {
			return nil, fmt.Errorf("cannot find where the ties of project %q end in %s; edit them by hand", p.ID, path)
		}
		return append(append(append([]string{}, lines[:i]...), keepComment(lines[end], text)), lines[end+1:]...), nil
	}, func(s *Set) bool { return check(s.Find(id)) })
}

// keepComment is line with its value replaced by text (key = value), keeping its
// indentation and a comment after the value. The comment is taken only when what comes
// before it reads as TOML on its own: a # inside a string is not a comment.
func keepComment(line, text string) string {
	indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	for j := strings.Index(line, "#"); j >= 0; {
		var v map[string]any
		if _, err := toml.Decode(line[:j], &v); err == nil {
			head := strings.TrimRight(line[:j], " \t")
			return indent + text + line[len(head):]
		}
		k := strings.Index(line[j+1:], "#")
		if k < 0 {
			break
		}
		j += 1 + k
	}
	return indent + text
}

// keepTies changes a ties array written over several lines (one element a line) line by
// line, keeping its comments: a new tie goes on a line of its own before the closing
// bracket, a removed one takes its line away. ok is false when the array is not written so
// (the caller then writes it on one line); the result is checked to read back as next.
func keepTies(lines []string, first, end int, next []string) ([]string, bool) {
	last := -1
	for k := first + 1; k < end; k++ {
		if strings.HasPrefix(strings.TrimSpace(lines[k]), "]") {
			last = k
			break
		}
	}
	if last < 0 || !strings.HasSuffix(strings.TrimSpace(strings.SplitN(lines[first], "#", 2)[0]), "[") {
		return nil, false
	}
	reads := func(seg []string) bool {
		var v struct{ Ties []string }
		if _, err := toml.Decode("Ties"+strings.TrimPrefix(strings.TrimSpace(strings.Join(seg, "\n")), "ties"), &v); err != nil {
			return false
		}
		if len(v.Ties) != len(next) {
			return false
		}
		for i := range next {
			if v.Ties[i] != next[i] {
				return false
			}
		}
		return true
	}
	seg := lines[first : last+1]
	try := func(cand []string) ([]string, bool) {
		if !reads(cand) {
			return nil, false
		}
		return append(append(append([]string{}, lines[:first]...), cand...), lines[last+1:]...), true
	}
	// One added: a line before the closing bracket, indented as the one above it.
	indent := "  "
	if last-1 > first {
		l := lines[last-1]
		indent = l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	}
	if len(next) > 0 {
		add := indent + strings.TrimSuffix(strings.TrimPrefix(tomlArray(next[len(next)-1:]), "["), "]") + ","
		cand := append(append(append([]string{}, seg[:len(seg)-1]...), add), seg[len(seg)-1])
		if out, ok := try(cand); ok {
			return out, true
		}
	}
	// One removed: the line that held it.
	for k := 1; k < len(seg)-1; k++ {
		cand := append(append([]string{}, seg[:k]...), seg[k+1:]...)
		if out, ok := try(cand); ok {
			return out, true
		}
	}
	return nil, false
}

// block is one [[project]] table of the file: its lines [start, end) and its id line.
type block struct {
	start, end, idLine int
	project            *Project
}

// key returns the line of the block that sets key, or -1.
func (b block) key(lines []string, key string) int {
	for i := b.start; i < b.end; i++ {
		k, _, ok := strings.Cut(strings.TrimSpace(lines[i]), "=")
		if ok && strings.TrimSpace(k) == key {
			return i
		}
	}
	return -1
}

func insert(lines []string, at int, line string) []string {
	out := append([]string{}, lines[:at]...)
	out = append(out, line)
	return append(out, lines[at:]...)
}

func edit(path, id string, change func([]string, block) ([]string, error), check func(*Set) bool) error {
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("cannot lock the projects file %s: %w", path, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("cannot lock the projects file %s: %w", path, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return fmt.Errorf("there is no projects file %s yet; write one with a [[project]] entry (docs/projects.md)", path)
	}
	if err != nil {
		return fmt.Errorf("cannot read the projects file %s: %w", path, err)
	}
	s, err := Parse(path, raw)
	if err != nil {
		return err
	}
	p := s.Find(id)
	if p != nil && check(s) {
		return nil // as meant already: nothing is written
	}
	if p == nil {
		msg := fmt.Sprintf("there is no project %q in %s", id, path)
		if near := s.Nearest(id); len(near) > 0 {
			msg += "; did you mean " + near[0] + "?"
		} else {
			msg += "; postern project list shows them"
		}
		return fmt.Errorf("%s", msg)
	}
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	b, ok := findBlock(lines, p)
	if !ok {
		return fmt.Errorf("cannot find the [[project]] table of %q in %s (it is written in a form this command does not edit); edit it by hand", p.ID, path)
	}
	next, err := change(lines, b)
	if err != nil {
		return err
	}
	out := []byte(strings.Join(next, "\n"))
	after, err := Parse(path, out)
	if err != nil || !check(after) || len(after.Projects) != len(s.Projects) {
		return fmt.Errorf("the change to %s would not read back as meant; nothing was written — edit the file by hand", path)
	}
	return write(path, out)
}

// findBlock finds the lines of p's [[project]] table.
func findBlock(lines []string, p *Project) (block, bool) {
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "[[project]]" {
			continue
		}
		b := block{start: i + 1, end: len(lines), idLine: -1, project: p}
		for j := i + 1; j < len(lines); j++ {
			if t := strings.TrimSpace(lines[j]); strings.HasPrefix(t, "[") {
				b.end = j
				break
			}
		}
		if k := b.key(lines, "id"); k >= 0 {
			var v struct{ ID string }
			if _, err := toml.Decode("ID"+strings.TrimPrefix(strings.TrimSpace(lines[k]), "id"), &v); err == nil && v.ID == p.ID {
				b.idLine = k
				return b, true
			}
		}
	}
	return block{}, false
}

// tomlArray writes strings as a TOML array of basic strings.
func tomlArray(xs []string) string {
	var parts []string
	for _, x := range xs {
		var buf bytes.Buffer
		buf.WriteByte('"')
		for _, r := range x {
			switch {
			case r == '"' || r == '\\':
				buf.WriteByte('\\')
				buf.WriteRune(r)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&buf, "\\u%04X", r)
			default:
				buf.WriteRune(r)
			}
		}
		buf.WriteByte('"')
		parts = append(parts, buf.String())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// write replaces path atomically, 0600.
func write(path string, b []byte) error { return atomicfile.Write(path, ".projects-*.toml", b) }

// SetTie ties tie to p in the projects file at path (add), or unties it: a note's path is
// matched case-insensitively, so the tie as written is the one untied. It returns the tie
// changed, and changed false when adding one tied already.
func SetTie(path string, p *Project, tie string, add bool) (string, bool, error) {
	if !add {
		for _, t := range p.Ties {
			if t != tie && strings.HasPrefix(tie, "note:") && strings.EqualFold(t, tie) {
				tie = t
			}
		}
		return tie, true, RemoveTie(path, p.ID, tie)
	}
	if contains(p.Ties, tie) {
		return tie, false, nil
	}
	return tie, true, AddTie(path, p.ID, tie)
}

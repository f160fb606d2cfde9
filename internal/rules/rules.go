// Package rules owns the person's mail rules: the file that holds them
// (rules.toml beside the configuration), the states a rule moves through
// (pending until the person approves it, then enabled or disabled; rejected),
// and deciding which rules match a stored message and what they do. It never
// acts on mail itself: the caller runs the actions through the same code as
// the mail tools, so every act is in the action log and can be undone.
package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/postern-mcp/postern/generated"

	"github.com/postern-mcp/postern/internal/atomicfile"
)

// States of a rule.
const (
	Pending  = "pending"
	Enabled  = "enabled"
	Disabled = "disabled"
	Rejected = "rejected"
)

// Person is proposed_by for a rule the person wrote or approved in a terminal.
const Person = "person"

// File is the rules file's name, beside config.toml.
const File = "rules.toml"

// Path is the rules file of the configuration at configPath.
func Path(configPath string) string { return filepath.Join(filepath.Dir(configPath), File) }

// fileShape is rules.toml: an array of tables, one per rule, in the order they run.
type fileShape struct {
	Rules []map[string]any `toml:"rules"`
}

// Load reads the rules at path, in order; a missing file is no rules. A file with rules of
// the old shape (a match of conditions and any/all/none groups) is read, and rewritten once in
// the new shape (Update), the old file kept as rules.toml.bak (Backup); when it cannot be
// rewritten, the rules are still read.
func Load(path string) ([]generated.Rule, error) {
	rules, old, _, err := read(path)
	if err != nil || len(old) == 0 {
		return rules, err
	}
	if err := Update(path, func(r []generated.Rule) ([]generated.Rule, error) { return r, nil }); err != nil {
		return rules, nil
	}
	return rules, nil
}

// read reads the rules at path, with the old matches of those that had the old shape (by
// index), and the file's bytes.
func read(path string) (rules []generated.Rule, old map[int]LegacyMatch, raw []byte, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cannot read the rules file %s: %w", path, err)
	}
	rules, old, err = parse(path, b)
	return rules, old, b, err
}

// parse reads rules.toml's bytes b (path names it in errors).
func parse(path string, b []byte) (rules []generated.Rule, old map[int]LegacyMatch, err error) {
	var f fileShape
	if _, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("the rules file %s is not valid TOML (%v); fix it by hand or move it aside", path, err)
	}
	out := make([]generated.Rule, 0, len(f.Rules))
	for i, m := range f.Rules {
		if lm, ok := m["match"].(map[string]any); ok {
			j, _ := json.Marshal(lm)
			var legacy LegacyMatch
			dec := json.NewDecoder(bytes.NewReader(j))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&legacy); err != nil {
				return nil, nil, fmt.Errorf("rule %d of %s has a match of the old shape that cannot be read (%v); fix it by hand", i+1, path, err)
			}
			m["match"] = Convert(legacy)
			if old == nil {
				old = map[int]LegacyMatch{}
			}
			old[i] = legacy
		}
		j, err := json.Marshal(m)
		if err != nil {
			return nil, nil, fmt.Errorf("rule %d of %s cannot be read: %w", i+1, path, err)
		}
		var r generated.Rule
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, nil, fmt.Errorf("rule %d of %s cannot be read (%v); fix it by hand", i+1, path, err)
		}
		if r.State == "" {
			r.State = Pending
		}
		out = append(out, r)
	}
	return out, old, nil
}

// Backup is where the rules file of the old shape at path is kept when it is rewritten:
// rules.toml.bak, or, when that is taken, rules.toml.bak.2, .3 and so on.
func Backup(path string) string {
	b := path + ".bak"
	for n := 2; ; n++ {
		if _, err := os.Lstat(b); errors.Is(err, os.ErrNotExist) {
			return b
		}
		b = fmt.Sprintf("%s.bak.%d", path, n)
	}
}

// Save writes rules to path atomically (a temporary file renamed over it), 0600.
func Save(path string, rules []generated.Rule) error {
	f := fileShape{Rules: []map[string]any{}}
	for _, r := range rules {
		j, err := json.Marshal(r)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return err
		}
		f.Rules = append(f.Rules, m)
	}
	var buf bytes.Buffer
	buf.WriteString("# postern's mail rules, in the order they run. Agents propose; the person approves\n# (postern rules approve NAME). Edit by hand only while no postern is writing it.\n")
	if err := toml.NewEncoder(&buf).Encode(f); err != nil {
		return err
	}
	return atomicfile.Write(path, ".rules-*.toml", buf.Bytes())
}

// Update reads the rules, lets change alter them, and writes them back, holding
// a lock beside the file so that two writers (a server and a terminal) never
// lose each other's change. Nothing is written when change fails.
func Update(path string, change func([]generated.Rule) ([]generated.Rule, error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("cannot lock the rules file %s: %w", path, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("cannot lock the rules file %s: %w", path, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	rules, old, raw, err := read(path)
	if err != nil {
		return err
	}
	next, err := change(slices.Clone(rules))
	if err != nil {
		return err
	}
	if len(old) > 0 {
		if err := atomicfile.Write(Backup(path), ".rules-*.bak", raw); err != nil {
			return fmt.Errorf("cannot keep the old rules file before rewriting it in the new shape: %w", err)
		}
	}
	return Save(path, next)
}

// Find returns the index of the rule called name, or -1.
func Find(rules []generated.Rule, name string) int {
	for i, r := range rules {
		if strings.EqualFold(r.Name, name) {
			return i
		}
	}
	return -1
}

// goodName reports whether name is 1 to 100 letters, digits, spaces, - and _,
// starting with a letter or digit. (A regular expression with {0,99} of
// Unicode classes costs 4 ms to compile at every start.)
func goodName(name string) bool {
	n := 0
	for i, r := range name {
		n++
		ok := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.N, r)
		if i > 0 {
			ok = ok || r == ' ' || r == '_' || r == '-'
		}
		if !ok || n > 100 {
			return false
		}
	}
	return n > 0
}

// ValidName says what is wrong with a rule's name, if anything.
func ValidName(name string) error {
	if !goodName(name) || strings.TrimSpace(name) != name {
		return fmt.Errorf("the rule name %q is not allowed: use up to 100 letters, digits, spaces, - and _, starting with a letter or digit", name)
	}
	return nil
}

// Forwards reports whether the rule forwards mail: such a rule is enabled only
// by the person in a terminal.
func Forwards(r generated.Rule) bool {
	for _, a := range r.Actions {
		if a.Do == "forward" {
			return true
		}
	}
	return false
}

// Ordered is the rules with the pending proposals first, then the others in
// the order they run.
func Ordered(rules []generated.Rule) []generated.Rule {
	var out []generated.Rule
	for _, r := range rules {
		if r.State == Pending {
			out = append(out, r)
		}
	}
	for _, r := range rules {
		if r.State != Pending {
			out = append(out, r)
		}
	}
	return out
}

// FromNew is the rule an agent wrote (rules_test, rules_propose), with no state yet.
func FromNew(n generated.NewRule) generated.Rule {
	return generated.Rule{Name: n.Name, Account: n.Account, Match: n.Match, Actions: n.Actions, Stop: n.Stop}
}

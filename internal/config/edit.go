package config

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/postern-mcp/postern/internal/atomicfile"
)

var accountNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidAccountName says what is wrong with an account name, or nil.
func ValidAccountName(name string) error {
	if !accountNameRE.MatchString(name) {
		return fmt.Errorf("the account name %q must be 1–64 letters, digits, dots, dashes or underscores, starting with a letter or digit", name)
	}
	return nil
}

// AddAccount appends an account to the file at path, keeping everything else
// in it (comments included). The file is written atomically with mode 0600.
func AddAccount(path string, a Account) error {
	cfg, err := Load(path)
	if err != nil {
		return err
	}
	for _, x := range cfg.Accounts {
		if x.Name == a.Name {
			return fmt.Errorf("an account named %q exists already; remove it first or choose another name", a.Name)
		}
	}
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var block bytes.Buffer
	block.WriteString("\n[[accounts]]\n")
	if err := toml.NewEncoder(&block).Encode(a); err != nil {
		return err
	}
	next := append(bytes.TrimRight(old, "\n"), '\n')
	if len(old) == 0 {
		next = nil
	}
	next = append(next, block.Bytes()...)
	return writeChecked(path, next, func(c *Config) bool {
		return len(c.Accounts) == len(cfg.Accounts)+1
	})
}

// RemoveAccount removes an account's [[accounts]] block from the file, keeping the rest.
// It reports whether the account was there.
func RemoveAccount(path, name string) (bool, error) {
	cfg, err := Load(path)
	if err != nil {
		return false, err
	}
	found := false
	for _, x := range cfg.Accounts {
		found = found || x.Name == name
	}
	if !found {
		return false, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	var out []string
	next := 0
	for _, b := range accountBlocks(lines) {
		if b.name == name {
			out = append(out, lines[next:b.start]...)
			next = b.end
		}
	}
	out = append(out, lines[next:]...)
	err = writeChecked(path, []byte(strings.Join(out, "")), func(c *Config) bool {
		if len(c.Accounts) != len(cfg.Accounts)-1 {
			return false
		}
		for _, x := range c.Accounts {
			if x.Name == name {
				return false
			}
		}
		return true
	})
	return true, err
}

// writeChecked writes data to path through a temporary file, after checking
// that it parses and passes ok; otherwise the file is left as it was.
func writeChecked(path string, data []byte, ok func(*Config) bool) error {
	var c Config
	if _, err := toml.Decode(string(data), &c); err != nil || !ok(&c) {
		return fmt.Errorf("could not edit %s safely (its layout is unusual); edit it by hand", path)
	}
	if err := c.check(); err != nil {
		return fmt.Errorf("the configuration %s would be invalid: %w", path, err)
	}
	return atomicfile.Write(path, ".config-*.toml", data)
}

// SetAccount replaces the account named a.Name with a, changing only the lines
// of the keys whose values differ, so that everything else in the file stays:
// comments, the order of keys, other accounts and sections. The file is
// written atomically with mode 0600, and only when it reads back as intended.
func SetAccount(path string, a Account) error {
	cfg, err := Load(path)
	if err != nil {
		return err
	}
	idx := -1
	for i, x := range cfg.Accounts {
		if x.Name == a.Name {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("there is no account named %q in %s; postern account list shows them", a.Name, path)
	}
	oldKeys, err := accountKeys(cfg.Accounts[idx])
	if err != nil {
		return err
	}
	newKeys, err := accountKeys(a)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") && lines[n-1] != "" {
		lines[n-1] += "\n"
	}
	var start, end = -1, -1
	for _, b := range accountBlocks(lines) {
		if b.name == a.Name {
			start, end = b.start, b.end
		}
	}
	if start < 0 {
		return fmt.Errorf("could not find the [[accounts]] block of %q in %s (its layout is unusual); edit it by hand", a.Name, path)
	}
	block := lines[start+1 : end]
	spans := keySpans(block)
	var out []string
	lastKey := 0 // where a new key goes in block: after the last key line
	for _, sp := range spans {
		if sp.end > lastKey {
			lastKey = sp.end
		}
	}
	replaced := map[string]bool{}
	for i := 0; i < len(block); {
		sp, ok := spanAt(spans, i)
		if !ok {
			out = append(out, block[i])
			i++
			if i == lastKey {
				out = append(out, addedKeys(oldKeys, newKeys)...)
			}
			continue
		}
		nv, keep := newKeys[sp.key]
		switch {
		case !keep: // the key is gone
		case reflect.DeepEqual(nv, oldKeys[sp.key]):
			out = append(out, block[sp.start:sp.end]...)
		default:
			out = append(out, encodeKey(sp.key, nv))
		}
		replaced[sp.key] = true
		i = sp.end
		if i == lastKey {
			out = append(out, addedKeys(oldKeys, newKeys)...)
		}
	}
	if lastKey == 0 {
		out = append(addedKeys(oldKeys, newKeys), out...)
	}
	for k := range oldKeys {
		if !replaced[k] {
			return fmt.Errorf("could not find the line of %s in the account %q of %s (its layout is unusual); edit it by hand", k, a.Name, path)
		}
	}
	next := append(append(append([]string{}, lines[:start+1]...), out...), lines[end:]...)
	return writeChecked(path, []byte(strings.Join(next, "")), func(c *Config) bool {
		if len(c.Accounts) != len(cfg.Accounts) {
			return false
		}
		for i, x := range c.Accounts {
			want := cfg.Accounts[i]
			if i == idx {
				want = a
			}
			if !reflect.DeepEqual(normal(x), normal(want)) {
				return false
			}
		}
		return true
	})
}

// normal makes empty and nil lists the same, as TOML does.
func normal(a Account) Account {
	if len(a.Aliases) == 0 {
		a.Aliases = nil
	}
	if len(a.TrustedAuthServ) == 0 {
		a.TrustedAuthServ = nil
	}
	if len(a.OAuth2Scopes) == 0 {
		a.OAuth2Scopes = nil
	}
	return a
}

// block is one [[accounts]] table of the file: lines[start] is its header,
// lines[start+1:end] its keys.
type block struct {
	name       string
	start, end int
}

// accountBlocks finds the [[accounts]] tables of a file split in lines.
func accountBlocks(lines []string) []block {
	var bs []block
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "[[accounts]]" {
			continue
		}
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "[") {
			end++
		}
		var one struct {
			Name string `toml:"name"`
		}
		if _, err := toml.Decode(strings.Join(lines[i+1:end], ""), &one); err == nil {
			bs = append(bs, block{name: one.Name, start: i, end: end})
		}
		i = end - 1
	}
	return bs
}

// span is the lines of one key = value in a block (a value may take several lines).
type span struct {
	key        string
	start, end int
}

var keyLineRE = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=`)

// keySpans finds the keys of a block and the lines each one's value takes.
func keySpans(block []string) []span {
	var out []span
	for i := 0; i < len(block); i++ {
		m := keyLineRE.FindStringSubmatch(block[i])
		if m == nil {
			continue
		}
		end := i + 1
		for ; end <= len(block); end++ {
			var v map[string]any
			if _, err := toml.Decode(strings.Join(block[i:end], ""), &v); err == nil {
				break
			}
		}
		if end > len(block) {
			end = i + 1
		}
		out = append(out, span{key: m[1], start: i, end: end})
		i = end - 1
	}
	return out
}

func spanAt(spans []span, i int) (span, bool) {
	for _, s := range spans {
		if s.start == i {
			return s, true
		}
	}
	return span{}, false
}

// accountKeys is an account as the keys and values TOML writes for it.
func accountKeys(a Account) (map[string]any, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(a); err != nil {
		return nil, err
	}
	m := map[string]any{}
	if _, err := toml.Decode(b.String(), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// addedKeys are the lines of the keys newKeys has and oldKeys lacks, in the
// order of Account's fields.
func addedKeys(oldKeys, newKeys map[string]any) []string {
	var out []string
	for _, k := range accountKeyOrder() {
		if _, had := oldKeys[k]; had {
			continue
		}
		if v, ok := newKeys[k]; ok {
			out = append(out, encodeKey(k, v))
		}
	}
	return out
}

// accountKeyOrder is the TOML keys of Account in the order of its fields.
func accountKeyOrder() []string {
	t := reflect.TypeOf(Account{})
	keys := make([]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		keys = append(keys, name)
	}
	return keys
}

// encodeKey is one key = value line.
func encodeKey(k string, v any) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{k: v}); err != nil {
		return ""
	}
	return b.String()
}

package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
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
	for i := 0; i < len(lines); {
		if strings.TrimSpace(lines[i]) == "[[accounts]]" {
			end := i + 1
			for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "[") {
				end++
			}
			var one struct {
				Name string `toml:"name"`
			}
			if _, err := toml.Decode(strings.Join(lines[i+1:end], ""), &one); err == nil && one.Name == name {
				i = end
				continue
			}
			out = append(out, lines[i:end]...)
			i = end
			continue
		}
		out = append(out, lines[i])
		i++
	}
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
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

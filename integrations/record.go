package integrations

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Record is what setup was asked for one host: doctor checks the entry against it and repair
// restores it.
type Record struct {
	Host     string    `json:"host"`
	Scope    string    `json:"scope"` // user or project
	Name     string    `json:"name"`
	Preset   string    `json:"preset,omitempty"`
	Scopes   []string  `json:"scopes,omitempty"`
	Accounts []string  `json:"accounts,omitempty"`
	Config   string    `json:"config,omitempty"`
	Binary   string    `json:"binary,omitempty"`
	At       time.Time `json:"at"`
}

// RecordPath is where the records of setup are kept: next to the configuration file.
func RecordPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "integrations.json")
}

// LoadRecords reads the records at path; a missing file is no records.
func LoadRecords(path string) ([]Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rs []Record
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v); run postern integrations setup HOST again to write it anew", path, err)
	}
	return rs, nil
}

package config

import (
	"os"
	"time"
)

// Sync is the [sync] table: how the store follows the servers while postern mcp or postern
// watch runs (internal/watch).
type Sync struct {
	// Interval is how often every folder and calendar is polled besides INBOX's IMAP IDLE
	// (default 5m, at least 30s).
	Interval Duration `toml:"interval,omitempty"`
	// Watch, when false, keeps postern mcp from syncing in the background (postern watch still
	// does); default true.
	Watch *bool `toml:"watch,omitempty"`
}

const (
	// DefaultSyncInterval is [sync] interval when not given.
	DefaultSyncInterval = 5 * time.Minute
	// MinSyncInterval is the least [sync] interval a person may set.
	MinSyncInterval = 30 * time.Second
)

// SyncInterval is the poll interval: [sync] interval, else the default. Tests lower its
// minimum with POSTERN_SYNC_MIN_INTERVAL (a Go duration; not for people: servers would be
// polled too often).
func (c *Config) SyncInterval() time.Duration {
	d := c.Sync.Interval.Duration
	if d == 0 {
		return DefaultSyncInterval
	}
	return max(d, minSyncInterval())
}

// Watching says whether postern mcp keeps the store synced in the background.
func (c *Config) Watching() bool { return c.Sync.Watch == nil || *c.Sync.Watch }

func minSyncInterval() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("POSTERN_SYNC_MIN_INTERVAL")); err == nil && d > 0 {
		return d
	}
	return MinSyncInterval
}

// syncProblems are the [sync] values Load refuses.
func (s Sync) problems() []string {
	if d := s.Interval.Duration; d != 0 && d < minSyncInterval() {
		return []string{"[sync] interval is " + d.String() + "; poll at most every " + MinSyncInterval.String() + " (interval = \"30s\" or more; the default is 5m)"}
	}
	return nil
}

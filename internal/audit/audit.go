// Package audit keeps one JSON line per tool call in $XDG_STATE_HOME/postern/audit/YYYY-MM.jsonl
// (folder 0700, file 0600), written in batches (Batch). It never writes a body, a code or a
// secret: free texts are kept by length only, other strings are cut and masked before they
// reach the file.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"
)

// Limits of what one line may hold.
const (
	MaxIDs        = 200 // ids kept per entry; the rest are counted in IDsMore
	MaxErrorRunes = 200 // runes kept of an error sentence
	MaxClientRune = 64  // runes kept of the client's self-given name
	MaxIDRunes    = 64  // runes kept of one id
)

// TimeLayout is how Entry.Time is written: UTC, RFC 3339 with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Entry is one tool call.
type Entry struct {
	Time       time.Time      `json:"time"`   // UTC, RFC 3339 with milliseconds
	Client     string         `json:"client"` // the client's name as it introduced itself; "cli" for the CLI
	Era        string         `json:"era,omitempty"`
	Tool       string         `json:"tool"`
	Args       map[string]any `json:"args"` // as summarised by Summarize
	OK         bool           `json:"ok"`
	Error      string         `json:"error,omitempty"` // see ErrorText
	IDs        []string       `json:"ids,omitempty"`   // message ids returned, at most MaxIDs
	IDsMore    int            `json:"ids_more,omitempty"`
	Length     int            `json:"length"` // bytes of the answer's text + structured content
	DurationMS int64          `json:"duration_ms"`
	// Approval ties the prepare and commit lines of one prepare/commit pair:
	// a short reference derived from the token, never the token itself.
	Approval string `json:"approval,omitempty"`
	// Outcome says how a prepare or commit ended: prepared, done, refused,
	// declined, not_done or unknown.
	Outcome string `json:"outcome,omitempty"`
	// Action is the action id a change postern can undo answered with (mail_undo takes it).
	Action string `json:"action,omitempty"`
}

// MarshalJSON writes Time with exactly three fractional digits.
func (e Entry) MarshalJSON() ([]byte, error) {
	type plain Entry
	return json.Marshal(struct {
		Time string `json:"time"`
		plain
	}{e.Time.UTC().Format(TimeLayout), plain(e)})
}

// Log appends entries to the month files under stateDir/audit.
type Log struct {
	dir string
	now func() time.Time

	mu    sync.Mutex
	month string
	f     *os.File
}

// Open returns a log under stateDir/audit. Nothing is created until the first Write.
// now is the clock for entries written without a time (nil: time.Now).
func Open(stateDir string, now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{dir: filepath.Join(stateDir, "audit"), now: now}
}

// Write appends e as one line with a single write(2) on a file opened O_APPEND, so lines from
// several goroutines or processes never interleave. It fills what the caller left out (time,
// client "cli", args {}) and enforces the entry's limits (client, error and ids cut) first.
func (l *Log) Write(e Entry) error { return l.WriteAll([]Entry{e}) }

// WriteAll appends the entries in order, as Write does, with one write(2) for
// all the lines of a month. An entry that cannot be encoded is skipped and
// reported; the others are written.
func (l *Log) WriteAll(es []Entry) error {
	var errs []error
	var buf []byte
	month := ""
	l.mu.Lock()
	defer l.mu.Unlock()
	flush := func() {
		if len(buf) == 0 {
			return
		}
		f, err := l.file(month)
		if err == nil {
			if _, werr := f.Write(buf); werr != nil {
				err = fmt.Errorf("audit log %s could not be written; check the disk and its permissions: %w", f.Name(), werr)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
		buf = buf[:0]
	}
	for i := range es {
		e := &es[i]
		if e.Tool == "" {
			errs = append(errs, errors.New("audit entry has no tool name; set Entry.Tool before writing"))
			continue
		}
		l.complete(e)
		if m := e.Time.Format("2006-01"); m != month {
			flush()
			month = m
		}
		line, err := json.Marshal(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("audit entry for %s cannot be encoded as JSON (pass args through Summarize): %w", e.Tool, err))
			continue
		}
		buf = append(append(buf, line...), '\n')
	}
	flush()
	return errors.Join(errs...)
}

// complete fills what the caller left out and enforces the entry's limits.
func (l *Log) complete(e *Entry) {
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	if e.Client == "" {
		e.Client = "cli"
	}
	e.Client = cut(e.Client, MaxClientRune)
	e.Error = cut(e.Error, MaxErrorRunes)
	if e.Args == nil {
		e.Args = map[string]any{}
	}
	if len(e.IDs) > MaxIDs {
		e.IDsMore += len(e.IDs) - MaxIDs
		e.IDs = e.IDs[:MaxIDs]
	}
	ids := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		ids[i] = cut(id, MaxIDRunes)
	}
	e.IDs = ids
}

// Close closes the current month file; a later Write opens it again.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.month = nil, ""
	return err
}

// file returns the open file of month, creating folder and file and tightening their modes.
func (l *Log) file(month string) (*os.File, error) {
	if l.f != nil && l.month == month {
		return l.f, nil
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit folder %s could not be created; check that its parent is writable: %w", l.dir, err)
	}
	if err := tighten(l.dir, 0o700); err != nil {
		return nil, err
	}
	name := filepath.Join(l.dir, month+".jsonl")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log %s could not be opened; check its permissions: %w", name, err)
	}
	if err := tighten(name, 0o600); err != nil {
		f.Close()
		return nil, err
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.month = f, month
	return f, nil
}

// tighten removes every permission bit of path that mode does not have.
func tighten(path string, mode fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("audit path %s could not be checked: %w", path, err)
	}
	if fi.Mode().Perm()&^mode == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&mode); err != nil {
		return fmt.Errorf("audit path %s is readable by others and could not be made private; run chmod %o on it: %w", path, mode, err)
	}
	return nil
}

var monthRE = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)

// Read returns the entries of month ("2026-11") in file order, and how many damaged lines it
// skipped. A month without a file has no entries and is not an error.
func Read(stateDir, month string) (entries []Entry, skipped int, err error) {
	if !monthRE.MatchString(month) {
		return nil, 0, fmt.Errorf("audit month %q is not of the form YYYY-MM, for example 2026-11", month)
	}
	name := filepath.Join(stateDir, "audit", month+".jsonl")
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("audit log %s could not be opened; check its permissions: %w", name, err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, rerr := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var e Entry
			if json.Unmarshal(line, &e) != nil || e.Tool == "" || e.Time.IsZero() {
				skipped++
			} else {
				entries = append(entries, e)
			}
		}
		if rerr == io.EOF {
			return entries, skipped, nil
		}
		if rerr != nil {
			return entries, skipped, fmt.Errorf("audit log %s could not be read: %w", name, rerr)
		}
	}
}

var fileRE = regexp.MustCompile(`^([0-9]{4}-(?:0[1-9]|1[0-2]))\.jsonl$`)

// Months returns the months ("2026-11") that have a file under stateDir/audit, oldest first.
func Months(stateDir string) ([]string, error) {
	dir := filepath.Join(stateDir, "audit")
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit folder %s could not be listed; check its permissions: %w", dir, err)
	}
	var months []string
	for _, de := range des {
		if m := fileRE.FindStringSubmatch(de.Name()); m != nil && de.Type().IsRegular() {
			months = append(months, m[1])
		}
	}
	sort.Strings(months)
	return months, nil
}

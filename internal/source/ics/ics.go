// Package ics is the account kind of a local folder of .ics files, read-only: one calendar of
// the events and tasks in them, for the demo and for people without a server. It reads the
// folder through an os.Root, never follows a symbolic link, and never writes there.
package ics

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/emersion/go-ical"

	"github.com/postern-mcp/postern/internal/calendar"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// KindName is the kind of a folder of .ics files in the configuration.
const KindName = "ics"

// maxFileBytes is the largest .ics file read; a larger one is skipped with a warning.
var maxFileBytes int64 = 16 << 20

// noun names an account of the kind in a sentence.
const noun = "a folder of .ics files"

// Kind is the row of the table of kinds for folders of .ics files.
var Kind = source.Kind{
	Name:     KindName,
	Noun:     noun,
	Caps:     source.Calendar | source.Tasks,
	Settings: Settings{},
	Parse:    parse,
	Open:     Open,
	Problems: problems,
	Where:    folder,
	Line:     folder,
	Synced: func(r source.Result) string {
		return fmt.Sprintf("%d new, %d changed, %d gone, %d calendars", r.New, r.FlagsChanged, r.Deleted, r.Folders)
	},
	Flags: source.Flags{
		List:     []source.Flag{{Name: "ics", Usage: "a local folder of .ics calendar files to read, read-only", Dir: true}},
		Synopsis: "--ics DIR",
		Needs:    "--ics DIR",
		Foreign: func(flag, account, noun string) error {
			return fmt.Errorf("account %s is %s; --%s cannot change its kind (remove it and add it again)", account, noun, flag)
		},
		Apply:    apply,
		Validate: validate,
	},
}

// Settings are the fields of the configuration's account that a folder of .ics files reads.
type Settings struct {
	Name string `toml:"name"`
	// Path is the folder of .ics files (--ics DIR).
	Path string `toml:"path"`
}

// SettingsOf is the settings of a configured account; a field of another kind is ignored
// (config.Notices says so).
func SettingsOf(a config.Account) (Settings, error) {
	var s Settings
	err := source.Settle(a, noun, &s)
	return s, err
}

// parse is SettingsOf without its result: the Parse of Kind.
func parse(a config.Account) error {
	_, err := SettingsOf(a)
	return err
}

func folder(a config.Account) string { return a.Path }

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func problems(a config.Account) []string {
	set := "postern account set " + a.Name
	if a.Path == "" {
		return []string{fmt.Sprintf("no folder; set one with %s --ics DIR", set)}
	}
	if !isDir(a.Path) {
		return []string{fmt.Sprintf("%s is not a folder; set the folder of .ics files with %s --ics DIR", a.Path, set)}
	}
	return nil
}

func apply(fl source.FlagValues, a *config.Account) error {
	if !fl.Changed("ics") {
		return nil
	}
	dir, _ := fl.GetString("ics")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	a.Path = abs
	return nil
}

func validate(a config.Account) error {
	if !isDir(a.Path) {
		return fmt.Errorf("%s is not a folder; give the folder that holds the .ics files", a.Path)
	}
	return nil
}

// Source is a folder of .ics files as the table of kinds opens it.
type Source struct{ a Settings }

// Open is the Source of a configured account: the Open of Kind.
func Open(a config.Account) (source.Source, error) {
	s, err := SettingsOf(a)
	if err != nil {
		return nil, err
	}
	return &Source{a: s}, nil
}

// Sync reads the folder's .ics files into one read-only calendar. A file that
// holds one event or task (one UID) is stored as it is; a file that holds
// several (an exported calendar) is split, one object per UID, each with the
// file's time zones, its href "FILE#UID". An object's ETag is its text's
// SHA-256, so only what changed is stored again.
func (s *Source) Sync(ctx context.Context, st *store.Store, opt source.Options) (*source.Result, error) {
	return s.sync(ctx, st, opt)
}

func (s *Source) sync(ctx context.Context, st *store.Store, opt source.Options) (*source.Result, error) {
	a := s.a
	root, err := os.OpenRoot(a.Path)
	if err != nil {
		return nil, fmt.Errorf("account %s: cannot open the folder %s (%v); check the path given to --ics", a.Name, a.Path, err)
	}
	defer root.Close()
	dir, err := root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("account %s: cannot read the folder %s (%v)", a.Name, a.Path, err)
	}
	entries, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return nil, fmt.Errorf("account %s: cannot read the folder %s (%v)", a.Name, a.Path, err)
	}
	accountID, err := st.EnsureAccount(ctx, a.Name, KindName)
	if err != nil {
		return nil, err
	}
	col := &store.Collection{AccountID: accountID, URL: a.Path, Kind: store.KindCalendar, Name: filepath.Base(a.Path)}
	if err := st.SaveCollection(ctx, col); err != nil {
		return nil, err
	}
	have, err := st.ObjectETags(ctx, col.ID)
	if err != nil {
		return nil, err
	}
	warns := source.NewWarnings(ctx, st, accountID, opt)
	if err := warns.Places(ctx, []string{col.URL}); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	// A file skipped keeps what an earlier sync stored of it (a file being written, or made
	// unreadable for a while, loses nothing); the warning says it was not read again.
	warn := func(file, format string, args ...any) {
		warns.Add(ctx, col.URL, file, fmt.Sprintf("Account %s: %s", a.Name, fmt.Sprintf(format, args...)))
		for h := range have {
			if h == file || strings.HasPrefix(h, file+"#") {
				seen[h] = true
			}
		}
	}
	res := &source.Result{Folders: 1}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	stored := 0
	for _, e := range entries {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		name := e.Name()
		if !strings.EqualFold(filepath.Ext(name), ".ics") || strings.HasPrefix(name, ".") {
			continue
		}
		if e.Type()&fs.ModeType != 0 {
			warn(name, "%s was skipped: it is not a regular file (a link, a folder or a device)", name)
			continue
		}
		data, err := readFile(root, name)
		if err != nil {
			warn(name, "%s was skipped: %v", name, err)
			continue
		}
		objs, err := split(name, data)
		if err != nil {
			warn(name, "%s was skipped: %v", name, err)
			continue
		}
		for _, o := range objs {
			seen[o.Href] = true
			if have[o.Href] == o.ETag {
				continue
			}
			o.CollectionID = col.ID
			if err := source.FillObject(o); err != nil {
				warn(o.Href, "%s was skipped: %v", o.Href, err)
				continue
			}
			if err := st.PutObject(ctx, o); err != nil {
				return res, err
			}
			if _, ok := have[o.Href]; ok {
				res.FlagsChanged++
			} else {
				res.New++
			}
			stored++
			if opt.AfterBatch != nil && (opt.BatchSize <= 0 || stored%opt.BatchSize == 0) {
				opt.AfterBatch(col.Name, stored)
			}
		}
	}
	var gone []string
	for h := range have {
		if !seen[h] {
			gone = append(gone, h)
		}
	}
	if err := st.DeleteObjects(ctx, col.ID, gone); err != nil {
		return res, err
	}
	res.Deleted = len(gone)
	return res, warns.Done(ctx, col.URL)
}

// readFile reads one regular file of the folder, never through a link.
func readFile(root *os.Root, name string) ([]byte, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file")
	}
	if fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("it is larger than %d MB", maxFileBytes>>20)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxFileBytes+1))
}

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// split makes the objects of one file: the file itself when it holds one UID,
// else one calendar per UID with the file's time zones.
func split(name string, data []byte) ([]*store.Object, error) {
	cal, err := calendar.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("it is not an iCalendar file (%v)", err)
	}
	var zones []*ical.Component
	byUID := map[string][]*ical.Component{}
	var uids []string
	for _, c := range cal.Children {
		switch c.Name {
		case ical.CompTimezone:
			zones = append(zones, c)
		case ical.CompEvent, ical.CompToDo:
			uid, _ := c.Props.Text(ical.PropUID)
			if _, ok := byUID[uid]; !ok {
				uids = append(uids, uid)
			}
			byUID[uid] = append(byUID[uid], c)
		}
	}
	if len(uids) <= 1 {
		return []*store.Object{{Href: name, ETag: etag(data), Data: string(data)}}, nil
	}
	var out []*store.Object
	for _, uid := range uids {
		one := ical.NewCalendar()
		one.Props = cal.Props
		one.Children = append(append([]*ical.Component(nil), zones...), byUID[uid]...)
		var b bytes.Buffer
		if err := ical.NewEncoder(&b).Encode(one); err != nil {
			return nil, fmt.Errorf("its event %s cannot be written back (%v)", uid, err)
		}
		out = append(out, &store.Object{Href: name + "#" + uid, ETag: etag(b.Bytes()), Data: b.String()})
	}
	return out, nil
}

package ics

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

const one = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:a@t\r\nDTSTAMP:20260301T120000Z\r\nDTSTART;VALUE=DATE:20260312\r\nSUMMARY:Offsite\r\nX-KEEP:yes\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

const two = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:b@t\r\nDTSTAMP:20260301T120000Z\r\nDTSTART:20260310T090000Z\r\nSUMMARY:B\r\nEND:VEVENT\r\nBEGIN:VTODO\r\nUID:c@t\r\nDTSTAMP:20260301T120000Z\r\nDUE:20260311T090000Z\r\nSUMMARY:C\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"

// TestSync: files are read into one read-only calendar, a file of several objects split by
// UID, one file kept byte for byte; a change, a removal and a link are seen as such.
func TestSync(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one.ics", one)
	write("two.ics", two)
	write("notes.txt", "not a calendar")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link.ics")); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src, err := Open(config.Account{Name: "local", Kind: KindName, Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	var warns []string
	opt := source.Options{Warn: func(m string) { warns = append(warns, m) }}
	res, err := src.Sync(context.Background(), st, opt)
	if err != nil || res.New != 3 || res.Folders != 1 {
		t.Fatalf("sync: %+v, %v; want 3 new in 1 calendar", res, err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "link.ics") {
		t.Errorf("warnings %q; want one about the link", warns)
	}
	cs, _ := st.Collections(context.Background(), []string{"local"}, "")
	if len(cs) != 1 || cs[0].Writable {
		t.Fatalf("collections %+v; want one, read-only", cs)
	}
	events, _ := st.Objects(context.Background(), []int64{cs[0].ID}, store.ObjectEvent, time.Time{}, time.Time{})
	for _, e := range events {
		if e.UID == "a@t" && (e.Data != one || !e.AllDay) {
			t.Errorf("a single-event file is not kept as it is: %q", e.Data)
		}
	}
	todos, _ := st.Objects(context.Background(), []int64{cs[0].ID}, store.ObjectTodo, time.Time{}, time.Time{})
	if len(events) != 2 || len(todos) != 1 || todos[0].Href != "two.ics#c@t" {
		t.Errorf("%d events and %d tasks (%v); want 2 and 1, the task as two.ics#c@t", len(events), len(todos), todos)
	}
	write("one.ics", strings.Replace(one, "Offsite", "Offsite (moved)", 1))
	os.Remove(filepath.Join(dir, "two.ics"))
	res, err = src.Sync(context.Background(), st, opt)
	if err != nil || res.New != 0 || res.FlagsChanged != 1 || res.Deleted != 2 {
		t.Errorf("second sync: %+v, %v; want 1 changed and 2 deleted", res, err)
	}
}

// TestSyncIsolation: a file go-ical cannot read (it panicked on this one) or that is not
// iCalendar at all is skipped with a warning that names it and is kept until the file reads
// cleanly; the other files sync, and what an earlier sync stored of a file that broke since
// is kept.
func TestSyncIsolation(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	broken := strings.Replace(one, "SUMMARY:Offsite", "SUMMARY;X-A=\"a\"b:Offsite", 1)
	write("one.ics", one)
	write("two.ics", two)
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	src, err := Open(config.Account{Name: "local", Kind: KindName, Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	opt := source.Options{Warn: func(m string) { said = append(said, m) }}
	if _, err := src.Sync(ctx, st, opt); err != nil || len(said) != 0 {
		t.Fatalf("first sync: %v, warnings %q", err, said)
	}
	write("one.ics", broken)
	write("three.ics", "BEGIN:VCALENDAR\r\nthis is not a calendar\x07\r\n")
	write("four.ics", strings.ReplaceAll(one, "a@t", "d@t"))
	res, err := src.Sync(ctx, st, opt)
	if err != nil {
		t.Fatalf("sync with broken files: %v", err)
	}
	if res.New != 1 || res.Deleted != 0 {
		t.Errorf("sync with broken files: %+v; want four.ics new and nothing deleted", res)
	}
	cs, _ := st.Collections(ctx, []string{"local"}, "")
	events, _ := st.Objects(ctx, []int64{cs[0].ID}, store.ObjectEvent, time.Time{}, time.Time{})
	uids := map[string]string{}
	for _, e := range events {
		uids[e.UID] = e.Data
	}
	if uids["a@t"] != one || uids["d@t"] == "" || uids["b@t"] == "" {
		t.Errorf("events after the files broke: %d; want one.ics's last good copy kept, four.ics and two.ics there", len(events))
	}
	ws, _ := st.AccountWarnings(ctx)
	if len(said) != 2 || len(ws["local"]) != 2 || !strings.Contains(ws["local"][0], "one.ics was skipped") || !strings.Contains(ws["local"][1], "three.ics was skipped") {
		t.Errorf("warnings said %q, kept %q; want one.ics and three.ics named", said, ws["local"])
	}
	for _, w := range ws["local"] {
		if strings.ContainsRune(w, '\x07') {
			t.Errorf("a warning holds a BEL: %q", w)
		}
	}
	write("one.ics", one)
	os.Remove(filepath.Join(dir, "three.ics"))
	if _, err := src.Sync(ctx, st, opt); err != nil {
		t.Fatal(err)
	}
	if ws, _ := st.AccountWarnings(ctx); len(ws["local"]) != 0 {
		t.Errorf("after the files were fixed, warnings %q remain", ws["local"])
	}
}

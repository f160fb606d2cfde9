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
	src := Open(config.Account{Name: "local", Kind: KindName, Path: dir})
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

package caldav

import (
	"context"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/davtest"
)

// eventStranger is an invitation whose SUMMARY holds a raw BEL, VT and ESC: characters XML
// cannot carry, so a server that writes them into its multistatus answer as they are makes
// the whole answer unreadable.
const eventStranger = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//stranger//EN\r\nBEGIN:VEVENT\r\nUID:stranger-7731@evil.example\r\n" +
	"DTSTAMP:20260301T120000Z\r\nDTSTART:20260311T150000Z\r\nDTEND:20260311T160000Z\r\n" +
	"SUMMARY:Free\x07 gift\x0b card\x1b[31m now\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

// eventPanics is one go-ical cannot read (it panicked on it): a quoted parameter value with
// something after it. Radicale refuses it and Xandikos drops the line, so it is tried here
// on Fill alone (and through a folder of .ics files, internal/source/ics).
const eventPanics = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//stranger//EN\r\nBEGIN:VEVENT\r\nUID:broken-params@evil.example\r\n" +
	"DTSTAMP:20260301T120000Z\r\nDTSTART:20260312T150000Z\r\nSUMMARY;X-A=\"a\"b:Broken\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

// journal is an object both servers keep in a calendar and the sync cannot take: it holds
// no event or task.
const journal = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//stranger//EN\r\nBEGIN:VJOURNAL\r\nUID:journal-1@evil.example\r\n" +
	"DTSTAMP:20260301T120000Z\r\nDTSTART;VALUE=DATE:20260312\r\nSUMMARY:Notes\r\nEND:VJOURNAL\r\nEND:VCALENDAR\r\n"

// TestFillNeverPanics: text go-ical panics on is an error.
func TestFillNeverPanics(t *testing.T) {
	o := &store.Object{Data: eventPanics}
	if err := Fill(o); err == nil || !strings.Contains(err.Error(), "not an iCalendar object") {
		t.Errorf("Fill: %v; want it to say the text cannot be read", err)
	}
}

type isoFixture struct {
	*fixture
	home, bad, broken string
}

// setUpIsolation makes the fixture of setUp (the Work calendar's events, a task list, an
// address book), a second calendar, and the stranger's event in Work.
func setUpIsolation(t *testing.T, srv *davtest.Server) *isoFixture {
	f := &isoFixture{fixture: setUp(t, srv)}
	f.home = f.user.MkCalendar(t, davtest.Unique("home"), "Home", "")
	f.user.Put(t, f.home+"dentist.ics", davtest.CRLF(strings.ReplaceAll(strings.ReplaceAll(addedEvent, "added@test", "dentist@test"), "Added later", "Dentist")))
	f.bad = f.work + "stranger.ics"
	f.user.Put(t, f.bad, eventStranger)
	f.broken = f.home + "journal.ics"
	f.user.Put(t, f.broken, journal)
	return f
}

func (f *isoFixture) collection(t *testing.T, st *store.Store, url string) *store.Collection {
	t.Helper()
	cs, err := st.Collections(context.Background(), []string{"cal"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.URL == url {
			return c
		}
	}
	t.Fatalf("collection %s was not synced", url)
	return nil
}

func storedWarnings(t *testing.T, st *store.Store) []string {
	t.Helper()
	ws, err := st.AccountWarnings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ws["cal"]
}

// testIsolation: an event with BEL, VT and ESC in its SUMMARY does not stop its calendar
// nor any other collection; it is kept without those characters, and a warning naming it
// is said and kept until the server's copy is clean.
func testIsolation(t *testing.T, srv *davtest.Server, src func(config *isoFixture) *Source) {
	f := setUpIsolation(t, srv)
	ctx := context.Background()
	// What the sync is up against: the server's own answer to a multiget of Work.
	body := `<?xml version="1.0" encoding="utf-8"?><C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop>` +
		`<D:href>` + strings.TrimPrefix(f.bad, strings.TrimSuffix(srv.URL, "/")) + `</D:href><D:href>` + strings.TrimPrefix(f.urls["ny"], strings.TrimSuffix(srv.URL, "/")) + `</D:href></C:calendar-multiget>`
	status, _, answer := f.user.Do(t, "REPORT", f.work, map[string]string{"Depth": "1", "Content-Type": "application/xml"}, body)
	switch {
	case status == 207:
		if err := xml.Unmarshal([]byte(answer), new(multistatus)); err == nil {
			t.Fatalf("%s answered the multiget with XML encoding/xml reads; this test no longer tests anything", srv.Name)
		} else {
			t.Logf("%s: the raw multiget answer does not decode: %v", srv.Name, err)
		}
	case status >= 500:
		t.Logf("%s answers the multiget with %d", srv.Name, status)
	default:
		t.Fatalf("%s answered the multiget with %d: %s", srv.Name, status, answer)
	}

	st := openStore(t)
	s := src(f)
	var said []string
	opt := source.Options{Warn: func(m string) { said = append(said, m) }}
	if _, err := s.Sync(ctx, st, opt); err != nil {
		t.Fatalf("sync: %v", err)
	}
	work := objectsByUID(t, st, f.collection(t, st, f.work), store.ObjectEvent)
	for _, uid := range []string{"ny@test", "allday@test", "weekly@test", "floating@test"} {
		if work[uid] == nil {
			t.Errorf("the good event %s of Work was not synced (have %v)", uid, keys(work))
		}
	}
	if bad := work["stranger-7731@evil.example"]; bad == nil || bad.Summary != "Free gift card[31m now" || strings.ContainsAny(bad.Data, "\x07\x0b\x1b") {
		t.Errorf("the stranger's event: %+v; want it kept without BEL, VT and ESC", bad)
	}
	if home := objectsByUID(t, st, f.collection(t, st, f.home), store.ObjectEvent); home["dentist@test"] == nil {
		t.Errorf("the second calendar was not synced: %v", keys(home))
	}
	tasks := f.collection(t, st, f.tasks)
	if todos := objectsByUID(t, st, tasks, store.ObjectTodo); todos["todo1@test"] == nil {
		t.Errorf("the task list was not synced: %v", keys(todos))
	}
	if people := objectsByUID(t, st, f.collection(t, st, f.books), store.ObjectContact); people["priya@test"] == nil || people["sam@test"] == nil {
		t.Errorf("the address book was not synced: %v", keys(people))
	}
	wantWarnings := 2
	check := func(when string, all []string) {
		t.Helper()
		// A shared Xandikos principal holds the same objects of tests running beside this
		// one, in collections of their own: only the warnings of this fixture's count.
		var ws []string
		for _, w := range all {
			if strings.Contains(w, pathOf(f.bad)) || strings.Contains(w, pathOf(f.broken)) {
				ws = append(ws, w)
			}
		}
		if len(ws) != wantWarnings {
			t.Errorf("%s: %d warnings %q; want %d", when, len(ws), ws, wantWarnings)
		}
		var named, brokenNamed bool
		for _, w := range ws {
			if strings.Contains(w, "/stranger.ics") && strings.Contains(w, "stranger-7731@evil.example") && strings.Contains(w, "U+0007, U+000B and U+001B") && strings.Contains(w, `"Work"`) {
				named = true
			}
			if strings.Contains(w, "/journal.ics") && strings.Contains(w, "journal-1@evil.example") && strings.Contains(w, "skipped (it holds no event or task)") && strings.Contains(w, `"Home"`) {
				brokenNamed = true
			}
			if strings.ContainsAny(w, "\x07\x0b\x1b") {
				t.Errorf("%s: a warning holds control characters: %q", when, w)
			}
		}
		if !named {
			t.Errorf("%s: no warning names the stranger's event, its calendar and what was removed: %q", when, ws)
		}
		if !brokenNamed {
			t.Errorf("%s: no warning names the unreadable event: %q", when, ws)
		}
	}
	check("said by the first sync", said)
	check("kept after the first sync", storedWarnings(t, st))

	// The warning stays while the server's copy is bad, even when nothing changed.
	said = nil
	if _, err := s.Sync(ctx, st, opt); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	check("kept after a second sync", storedWarnings(t, st))

	// Cleaned (and the broken one removed) on the server: the warnings go.
	f.user.Put(t, f.bad, strings.NewReplacer("\x07", "", "\x0b", "", "\x1b", "").Replace(eventStranger))
	f.user.Delete(t, f.broken)
	if _, err := s.Sync(ctx, st, opt); err != nil {
		t.Fatalf("third sync: %v", err)
	}
	if ws := storedWarnings(t, st); len(ws) != 0 && (strings.Contains(strings.Join(ws, "\n"), pathOf(f.work)) || strings.Contains(strings.Join(ws, "\n"), pathOf(f.home))) {
		t.Errorf("after the server's copy was cleaned, warnings %q remain", ws)
	}
}

// pathOf is the path of a URL, as the warnings name an object.
func pathOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
			return u[i+3+j:]
		}
	}
	return u
}

func plain(f *isoFixture) *Source {
	return &Source{a: settingsOf(f.account(f.user.Server.URL, f.user.Server.URL))}
}

func TestRadicaleIsolation(t *testing.T) { testIsolation(t, davtest.Radicale(t), plain) }

// TestRadicaleIsolationByETags: the same through PROPFIND listings instead of sync-collection.
func TestRadicaleIsolationByETags(t *testing.T) {
	testIsolation(t, davtest.Radicale(t), func(f *isoFixture) *Source {
		s := plain(f)
		s.noSyncCollection = true
		return s
	})
}

// TestRadicaleIsolationOneByOne: with answers read as they are (no filter), the sync falls
// back to groups and then GET, and still skips nothing but what it must.
func TestRadicaleIsolationOneByOne(t *testing.T) {
	testIsolation(t, davtest.Radicale(t), func(f *isoFixture) *Source {
		s := plain(f)
		s.rawXML = true
		return s
	})
}

// TestXandikosIsolation: the same against a second server.
func TestXandikosIsolation(t *testing.T) { testIsolation(t, davtest.Xandikos(t), plain) }

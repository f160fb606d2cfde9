package caldav

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/davtest"
)

func TestMain(m *testing.M) { os.Exit(davtest.Run(m)) }

const (
	eventNY = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//postern test//EN
BEGIN:VEVENT
UID:ny@test
DTSTAMP:20260301T120000Z
DTSTART;TZID=America/New_York:20260310T090000
DTEND;TZID=America/New_York:20260310T100000
SUMMARY:Standup in New York
X-POSTERN-KEEP:kept as it is
END:VEVENT
END:VCALENDAR
`
	eventAllDay = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//postern test//EN
BEGIN:VEVENT
UID:allday@test
DTSTAMP:20260301T120000Z
DTSTART;VALUE=DATE:20260312
DTEND;VALUE=DATE:20260313
SUMMARY:Offsite
END:VEVENT
END:VCALENDAR
`
	eventWeekly = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//postern test//EN
BEGIN:VEVENT
UID:weekly@test
DTSTAMP:20260301T120000Z
DTSTART:20260302T140000Z
DURATION:PT30M
RRULE:FREQ=WEEKLY;COUNT=10
SUMMARY:Weekly review
END:VEVENT
END:VCALENDAR
`
	eventFloating = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//postern test//EN
BEGIN:VEVENT
UID:floating@test
DTSTAMP:20260301T120000Z
DTSTART:20260311T080000
DTEND:20260311T083000
SUMMARY:Morning run
END:VEVENT
END:VCALENDAR
`
	todoOpen = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//postern test//EN
BEGIN:VTODO
UID:todo1@test
DTSTAMP:20260301T120000Z
DUE:20260315T170000Z
STATUS:NEEDS-ACTION
SUMMARY:File the report
END:VTODO
END:VCALENDAR
`
	contactPriya = `BEGIN:VCARD
VERSION:3.0
UID:priya@test
FN:Priya Raman
N:Raman;Priya;;;
EMAIL;TYPE=work:priya.raman@example.org
TEL;TYPE=cell:+44 20 7946 0000
ORG:Example Org
END:VCARD
`
	contactSam = `BEGIN:VCARD
VERSION:3.0
UID:sam@test
FN:Sam Rivera
N:Rivera;Sam;;;
EMAIL:sam@example.com
END:VCARD
`
)

type fixture struct {
	user               *davtest.User
	work, tasks, books string
	urls               map[string]string // name → object URL
}

// setUp makes a calendar, a task list and an address book holding the fixtures.
func setUp(t *testing.T, srv *davtest.Server) *fixture {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	u := srv.NewUser(t)
	f := &fixture{user: u, urls: map[string]string{}}
	f.work = u.MkCalendar(t, davtest.Unique("work"), "Work", "#FF0000", "VEVENT")
	f.tasks = u.MkCalendar(t, davtest.Unique("todo"), "Errands", "", "VTODO")
	f.books = u.MkAddressBook(t, davtest.Unique("people"), "People")
	for name, x := range map[string]struct{ col, data string }{
		"ny": {f.work, eventNY}, "allday": {f.work, eventAllDay}, "weekly": {f.work, eventWeekly}, "floating": {f.work, eventFloating},
		"todo1": {f.tasks, todoOpen}, "priya": {f.books, contactPriya}, "sam": {f.books, contactSam},
	} {
		f.urls[name] = x.col + name + ".ics"
		if x.col == f.books {
			f.urls[name] = x.col + name + ".vcf"
		}
		u.Put(t, f.urls[name], davtest.CRLF(x.data))
	}
	return f
}

func (f *fixture) account(rootCal, rootCard string) config.Account {
	return config.Account{Name: "cal", Kind: KindName, CalDAV: rootCal, CardDAV: rootCard, User: f.user.Name, PasswordCmd: f.user.PasswordCmd()}
}

// settingsOf is the settings of a, which has no field of another kind.
func settingsOf(a config.Account) Settings {
	s, err := SettingsOf(a)
	if err != nil {
		panic(err)
	}
	return s
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// ours keeps the collections of the fixture (a shared Xandikos principal holds other tests' too).
func ours(cs []*store.Collection, f *fixture) map[string]*store.Collection {
	out := map[string]*store.Collection{}
	for _, c := range cs {
		for _, u := range []string{f.work, f.tasks, f.books} {
			if c.URL == u {
				out[u] = c
			}
		}
	}
	return out
}

func objectsByUID(t *testing.T, st *store.Store, c *store.Collection, kind string) map[string]*store.Object {
	t.Helper()
	os, err := st.Objects(context.Background(), []int64{c.ID}, kind, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*store.Object{}
	for _, o := range os {
		out[o.UID] = o
	}
	return out
}

// checkFirstSync checks what a first sync of the fixture stored.
func checkFirstSync(t *testing.T, st *store.Store, f *fixture) {
	t.Helper()
	ctx := context.Background()
	cs, err := st.Collections(ctx, []string{"cal"}, "")
	if err != nil {
		t.Fatal(err)
	}
	mine := ours(cs, f)
	if len(mine) != 3 {
		t.Fatalf("collections stored: %d of ours (%d in all); want the calendar, the task list and the address book", len(mine), len(cs))
	}
	work, tasks, books := mine[f.work], mine[f.tasks], mine[f.books]
	if work.Kind != store.KindCalendar || work.Name != "Work" || !strings.EqualFold(work.Color, "#FF0000") || !work.Writable {
		t.Errorf("work calendar stored as %+v; want kind calendar, name Work, colour #FF0000, writable", *work)
	}
	if wantKind := map[bool]string{true: store.KindTasks, false: store.KindCalendar}[f.user.Server.ComponentSets]; tasks.Kind != wantKind || tasks.Name != "Errands" {
		t.Errorf("task list stored as %+v; want kind %s, name Errands", *tasks, wantKind)
	}
	if books.Kind != store.KindAddressBook || books.Name != "People" {
		t.Errorf("address book stored as %+v; want kind addressbook, name People", *books)
	}
	events := objectsByUID(t, st, work, store.ObjectEvent)
	if len(events) != 4 {
		t.Fatalf("events stored: %d; want 4", len(events))
	}
	ny := events["ny@test"]
	if want := time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC); !ny.Start.Equal(want) || !ny.End.Equal(want.Add(time.Hour)) || ny.AllDay {
		t.Errorf("New York event: %v – %v all-day %v; want %v – +1h (09:00 EDT is 13:00 UTC)", ny.Start, ny.End, ny.AllDay, want)
	}
	if data, _ := f.user.Get(t, f.urls["ny"]); ny.Data != data {
		t.Errorf("the stored text is not the server's byte for byte:\n%q\nserver:\n%q", ny.Data, data)
	}
	if !strings.Contains(ny.Data, "X-POSTERN-KEEP:kept as it is\r\n") {
		t.Errorf("the X- property is not kept: %q", ny.Data)
	}
	ad := events["allday@test"]
	if want := time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC); !ad.AllDay || !ad.Start.Equal(want) || !ad.End.Equal(want.AddDate(0, 0, 1)) {
		t.Errorf("all-day event: %v – %v all-day %v; want %v, the next day, all-day", ad.Start, ad.End, ad.AllDay, want)
	}
	if w := events["weekly@test"]; !w.Recurring || !w.End.Equal(w.Start.Add(30*time.Minute)) {
		t.Errorf("weekly event: recurring %v, %v – %v; want recurring, 30 minutes", w.Recurring, w.Start, w.End)
	}
	if fl := events["floating@test"]; !fl.Start.Equal(time.Date(2026, 3, 11, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("floating event starts %v; want its clock time read as UTC", fl.Start)
	}
	todos := objectsByUID(t, st, tasks, store.ObjectTodo)
	if td := todos["todo1@test"]; td == nil || td.Status != "NEEDS-ACTION" || !td.Due.Equal(time.Date(2026, 3, 15, 17, 0, 0, 0, time.UTC)) || td.Summary != "File the report" {
		t.Errorf("task: %+v; want status NEEDS-ACTION, due 2026-03-15 17:00 UTC", td)
	}
	for q, want := range map[string]string{"priya": "Priya Raman", "example org": "Priya Raman", "raman@example": "Priya Raman", "2079460000": "Priya Raman", "rivera": "Sam Rivera"} {
		got, err := st.SearchContacts(ctx, []int64{books.ID}, q, 10)
		if err != nil || len(got) != 1 || got[0].Summary != want {
			t.Errorf("contacts search %q: %d found (%v); want %s", q, len(got), err, want)
		}
	}
}

const changedNY = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//postern test//EN
BEGIN:VEVENT
UID:ny@test
DTSTAMP:20260301T130000Z
DTSTART;TZID=America/New_York:20260310T100000
DTEND;TZID=America/New_York:20260310T110000
SUMMARY:Standup in New York (moved)
END:VEVENT
END:VCALENDAR
`

const addedEvent = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//postern test//EN
BEGIN:VEVENT
UID:added@test
DTSTAMP:20260301T130000Z
DTSTART:20260320T100000Z
DTEND:20260320T110000Z
SUMMARY:Added later
END:VEVENT
END:VCALENDAR
`

// changeServer changes one event, adds one and deletes one.
func changeServer(t *testing.T, f *fixture) {
	t.Helper()
	f.user.Put(t, f.urls["ny"], davtest.CRLF(changedNY))
	f.user.Put(t, f.work+"added.ics", davtest.CRLF(addedEvent))
	f.user.Delete(t, f.urls["floating"])
}

func syncOnce(t *testing.T, src source.Source, st *store.Store) *source.Result {
	t.Helper()
	res, err := src.Sync(context.Background(), st, source.Options{})
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

// testSyncRoundTrip: a first sync from the server's root URL (discovery), then one after the
// server changed one object, added one and deleted one, counted; then one with nothing new.
func testSyncRoundTrip(t *testing.T, srv *davtest.Server, noSyncCollection bool) {
	f := setUp(t, srv)
	st := openStore(t)
	src := &Source{a: settingsOf(f.account(srv.URL, srv.URL)), noSyncCollection: noSyncCollection}
	res := syncOnce(t, src, st)
	if res.New < 7 || res.Folders < 3 {
		t.Errorf("first sync: %+v; want at least 7 new objects in 3 collections", res)
	}
	checkFirstSync(t, st, f)
	changeServer(t, f)
	res = syncOursOnce(t, src, st, f)
	if res.New != 1 || res.FlagsChanged != 1 || res.Deleted != 1 {
		t.Errorf("second sync: %d new, %d changed, %d deleted; want 1, 1 and 1", res.New, res.FlagsChanged, res.Deleted)
	}
	cs, _ := st.Collections(context.Background(), []string{"cal"}, "")
	work := ours(cs, f)[f.work]
	events := objectsByUID(t, st, work, store.ObjectEvent)
	if events["floating@test"] != nil || events["added@test"] == nil || events["ny@test"].Summary != "Standup in New York (moved)" {
		t.Errorf("after the second sync the events are %v; want floating gone, added there, ny moved", keys(events))
	}
	if data, _ := f.user.Get(t, f.urls["ny"]); events["ny@test"].Data != data {
		t.Errorf("the changed event is not stored byte for byte")
	}
	res = syncOursOnce(t, src, st, f)
	if res.New != 0 || res.FlagsChanged != 0 || res.Deleted != 0 {
		t.Errorf("third sync, nothing changed: %+v; want no change", res)
	}
}

// syncOursOnce syncs and counts only what changed in the fixture's collections: a shared
// Xandikos principal holds the collections of tests running beside this one (in this package
// and others), which may gain, change or lose objects between two syncs.
func syncOursOnce(t *testing.T, src source.Source, st *store.Store, f *fixture) *source.Result {
	t.Helper()
	before, _ := foreignObjects(t, st, f)
	res := syncOnce(t, src, st)
	after, still := foreignObjects(t, st, f)
	for k, etag := range after {
		old, ok := before[k]
		switch {
		case !ok:
			res.New--
		case old != etag:
			res.FlagsChanged--
		}
	}
	for k := range before {
		// Objects of a collection that is gone are not counted as deleted by the sync.
		if _, ok := after[k]; !ok && still[strings.SplitN(k, "\x00", 2)[0]] {
			res.Deleted--
		}
	}
	return res
}

// foreignObjects is the ETag of each stored object outside the fixture's collections, by
// collection URL and href, and the URLs of those collections.
func foreignObjects(t *testing.T, st *store.Store, f *fixture) (map[string]string, map[string]bool) {
	t.Helper()
	ctx := context.Background()
	cs, err := st.Collections(ctx, []string{"cal"}, "")
	if err != nil {
		t.Fatal(err)
	}
	mine := ours(cs, f)
	out, urls := map[string]string{}, map[string]bool{}
	for _, c := range cs {
		if mine[c.URL] != nil {
			continue
		}
		urls[c.URL] = true
		etags, err := st.ObjectETags(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for h, e := range etags {
			out[c.URL+"\x00"+h] = e
		}
	}
	return out, urls
}

func keys(m map[string]*store.Object) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRadicaleSync(t *testing.T) { testSyncRoundTrip(t, davtest.Radicale(t), false) }

// TestRadicaleSyncByETags: the same against a server treated as offering no sync-collection.
func TestRadicaleSyncByETags(t *testing.T) { testSyncRoundTrip(t, davtest.Radicale(t), true) }

// TestXandikosSync: the read side against a second server.
func TestXandikosSync(t *testing.T) { testSyncRoundTrip(t, davtest.Xandikos(t), false) }

// TestRadicaleDiscoveryFromHomeAndCalendar: a URL that is a user's home, or one calendar,
// finds what is there; a wrong password is said so.
func TestRadicaleDiscovery(t *testing.T) {
	srv := davtest.Radicale(t)
	f := setUp(t, srv)
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		want int
	}{{f.user.CalendarHome, 2}, {f.work, 1}, {srv.URL, 2}} {
		cl, err := NewClient(c.url, f.user.Name, f.user.Password, "")
		if err != nil {
			t.Fatal(err)
		}
		rs, err := cl.collections(ctx, calDAV)
		if err != nil || len(rs) != c.want {
			t.Errorf("calendars found from %s: %d (%v); want %d", c.url, len(rs), err, c.want)
		}
	}
	cl, _ := NewClient(srv.URL, f.user.Name, "wrong", "")
	if _, err := cl.collections(ctx, calDAV); err == nil || !strings.Contains(err.Error(), "--password-cmd") {
		t.Errorf("a wrong password: %v; want it to say so", err)
	}
	var out strings.Builder
	if err := check(ctx, nil, f.account(srv.URL, srv.URL), &out); err != nil || !strings.Contains(out.String(), "found 2 calendars or task lists and 1 address books") {
		t.Errorf("check: %v, %q", err, out.String())
	}
}

// TestRadicaleResume: a sync cut after its first batch keeps what it stored, and the next
// one stores the rest without fetching again what it has.
func TestRadicaleResume(t *testing.T) {
	srv := davtest.Radicale(t)
	f := setUp(t, srv)
	st := openStore(t)
	src := &Source{a: settingsOf(f.account(srv.URL, srv.URL))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := src.Sync(ctx, st, source.Options{BatchSize: 1, AfterBatch: func(string, int) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cut sync: %v; want it cancelled", err)
	}
	if first.New != 1 {
		t.Errorf("cut sync stored %d; want 1 (one batch of one)", first.New)
	}
	rest := syncOnce(t, src, st)
	if rest.New != 6 || rest.FlagsChanged != 0 {
		t.Errorf("resumed sync: %d new, %d changed; want the 6 others, none fetched again", rest.New, rest.FlagsChanged)
	}
	checkFirstSync(t, st, f)
}

// TestRadicaleConditionalWrites: PUT and DELETE with If-Match and If-None-Match.
func TestRadicaleConditionalWrites(t *testing.T) {
	srv := davtest.Radicale(t)
	f := setUp(t, srv)
	ctx := context.Background()
	cl, err := NewClient(srv.URL, f.user.Name, f.user.Password, "")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := cl.Get(ctx, f.urls["ny"])
	if err != nil || obj.ETag == "" {
		t.Fatalf("get: %+v, %v", obj, err)
	}
	f.user.Put(t, f.urls["ny"], davtest.CRLF(changedNY)) // someone else changes it
	if _, err := cl.PutIfMatch(ctx, f.urls["ny"], obj.ETag, obj.Data); !errors.Is(err, ErrConflict) {
		t.Errorf("PUT with a stale ETag: %v; want ErrConflict (412)", err)
	}
	if data, _ := f.user.Get(t, f.urls["ny"]); !strings.Contains(data, "(moved)") {
		t.Errorf("the refused PUT changed the event")
	}
	now, _ := cl.Get(ctx, f.urls["ny"])
	etag, err := cl.PutIfMatch(ctx, f.urls["ny"], now.ETag, obj.Data)
	if err != nil || etag == "" || etag == now.ETag {
		t.Errorf("PUT with the current ETag: %q, %v; want a new ETag", etag, err)
	}
	if _, err := cl.PutIfMatch(ctx, f.urls["ny"], "", obj.Data); !errors.Is(err, ErrConflict) {
		t.Errorf("create over an existing object: %v; want ErrConflict", err)
	}
	if _, err := cl.PutIfMatch(ctx, f.work+"new.ics", "", []byte(davtest.CRLF(addedEvent))); err != nil {
		t.Errorf("create: %v", err)
	}
	if err := cl.DeleteIfMatch(ctx, f.urls["ny"], now.ETag); !errors.Is(err, ErrConflict) {
		t.Errorf("DELETE with a stale ETag: %v; want ErrConflict", err)
	}
	if err := cl.DeleteIfMatch(ctx, f.urls["ny"], etag); err != nil {
		t.Errorf("DELETE with the current ETag: %v", err)
	}
	if st, _, _ := f.user.Do(t, "GET", f.urls["ny"], nil, ""); st != 404 {
		t.Errorf("after DELETE, GET answers %d; want 404", st)
	}
}

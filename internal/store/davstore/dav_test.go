package davstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/postern-mcp/postern/internal/store/schema"
)

// openObjects makes a database with the store's tables, as a new store has them (schema's
// statements, and this package's own step, RefillContactSearch), and two accounts: 1 "dav"
// and 2 "other".
func openObjects(t *testing.T) (*Objects, *sql.DB) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "store.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range schema.Tables {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v < schema.Version; v++ {
		for _, q := range schema.Upgrades[v] {
			if _, err := tx.Exec(q); err != nil {
				t.Fatalf("schema %d: %v", v, err)
			}
		}
		if v == 14 {
			if err := RefillContactSearch(ctx, tx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := tx.Exec(`INSERT INTO accounts(id, name, kind) VALUES(1, 'dav', 'caldav'), (2, 'other', 'caldav')`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return New(db, explained), db
}

func explained(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("explained: %w", err)
}

func saveCollection(t *testing.T, s *Objects, c *Collection) *Collection {
	t.Helper()
	if err := s.SaveCollection(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func put(t *testing.T, s *Objects, o *Object) *Object {
	t.Helper()
	if err := s.PutObject(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o
}

func urls(cs []*Collection, err error) string {
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.Account+":"+c.URL)
	}
	return strings.Join(out, " ")
}

// TestCollections: a collection saved again (by account and URL) is the same one, renamed; the
// listing filters by account and kind; the sync state is kept; deleting one takes its objects.
func TestCollections(t *testing.T) {
	ctx := context.Background()
	s, _ := openObjects(t)
	home := saveCollection(t, s, &Collection{AccountID: 1, URL: "/cal/home/", Kind: KindCalendar, Name: "Home", Color: "#ff0000", TimeZone: "Europe/Paris"})
	saveCollection(t, s, &Collection{AccountID: 1, URL: "/tasks/", Kind: KindTasks, Name: "Chores", Writable: true})
	saveCollection(t, s, &Collection{AccountID: 2, URL: "/cal/home/", Kind: KindCalendar, Name: "Away"})
	saveCollection(t, s, &Collection{AccountID: 1, URL: "/book/", Kind: KindAddressBook, Name: "Contacts"})

	again := saveCollection(t, s, &Collection{AccountID: 1, URL: "/cal/home/", Kind: KindCalendar, Name: "Family", Writable: true})
	if again.ID != home.ID {
		t.Fatalf("the same URL saved again is collection %d, was %d", again.ID, home.ID)
	}
	if err := s.SetCollectionSync(ctx, home.ID, "token-2", "ctag-9"); err != nil {
		t.Fatal(err)
	}
	if got := urls(s.Collections(ctx, nil, "")); got != "dav:/tasks/ dav:/book/ dav:/cal/home/ other:/cal/home/" {
		t.Errorf("every collection, by account then name: %s", got)
	}
	if got := urls(s.Collections(ctx, []string{"dav"}, KindCalendar)); got != "dav:/cal/home/" {
		t.Errorf("dav's calendars: %s", got)
	}
	if got := urls(s.Collections(ctx, []string{}, "")); got != "" {
		t.Errorf("no account: %s", got)
	}
	cs, _ := s.Collections(ctx, []string{"dav"}, KindCalendar)
	want := &Collection{ID: home.ID, AccountID: 1, Account: "dav", URL: "/cal/home/", Kind: KindCalendar, Name: "Family",
		Writable: true, SyncToken: "token-2", CTag: "ctag-9"}
	if !reflect.DeepEqual(cs[0], want) {
		t.Errorf("the calendar saved again:\n%+v\nwant\n%+v", cs[0], want)
	}

	ev := put(t, s, &Object{CollectionID: home.ID, Href: "/cal/home/a.ics", Kind: ObjectEvent, Data: "BEGIN:VCALENDAR", UID: "a"})
	if err := s.DeleteCollection(ctx, home.ID); err != nil {
		t.Fatal(err)
	}
	if got := urls(s.Collections(ctx, []string{"dav"}, KindCalendar)); got != "" {
		t.Errorf("after the delete: %s", got)
	}
	if _, _, err := s.ObjectByID(ctx, ev.ID, nil); !errors.Is(err, ErrNoObject) {
		t.Errorf("an object of a deleted calendar: %v, want ErrNoObject", err)
	}
}

// TestObjectsPutAndRead: an object put again at its href replaces the stored one (the newest
// ETag and text, the same id); objects are read by id within their accounts only, deleted by
// href, and found by UID.
func TestObjectsPutAndRead(t *testing.T) {
	ctx := context.Background()
	s, _ := openObjects(t)
	cal := saveCollection(t, s, &Collection{AccountID: 1, URL: "/cal/", Kind: KindCalendar, Name: "Home"})
	away := saveCollection(t, s, &Collection{AccountID: 2, URL: "/away/", Kind: KindCalendar, Name: "Away"})
	start := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	a := put(t, s, &Object{CollectionID: cal.ID, Href: "/cal/a.ics", ETag: `"1"`, UID: "a", Kind: ObjectEvent, Data: "v1",
		Summary: "Dentist", Start: start, End: start.Add(time.Hour)})
	put(t, s, &Object{CollectionID: cal.ID, Href: "/cal/b.ics", ETag: `"7"`, UID: "b", Kind: ObjectEvent, Data: "b"})
	c := put(t, s, &Object{CollectionID: away.ID, Href: "/away/a.ics", ETag: `"3"`, UID: "a", Kind: ObjectEvent, Data: "away"})
	a2 := put(t, s, &Object{CollectionID: cal.ID, Href: "/cal/a.ics", ETag: `"2"`, UID: "a", Kind: ObjectEvent, Data: "v2",
		Summary: "Dentist (moved)", Start: start.Add(24 * time.Hour), End: start.Add(25 * time.Hour), Recurring: true})
	if a2.ID != a.ID {
		t.Errorf("the object put again is %d, was %d", a2.ID, a.ID)
	}
	etags, err := s.ObjectETags(ctx, cal.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"/cal/a.ics": `"2"`, "/cal/b.ics": `"7"`}; !reflect.DeepEqual(etags, want) {
		t.Errorf("ETags %v, want %v", etags, want)
	}
	got, coll, err := s.ObjectByID(ctx, a.ID, []string{"dav"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data != "v2" || got.Summary != "Dentist (moved)" || !got.Start.Equal(start.Add(24*time.Hour)) ||
		!got.End.Equal(start.Add(25*time.Hour)) || !got.Recurring || got.AllDay || !got.Due.IsZero() || coll.ID != cal.ID || coll.Account != "dav" {
		t.Errorf("read back %+v in %+v", got, coll)
	}
	if _, _, err := s.ObjectByID(ctx, a.ID, []string{"other"}); !errors.Is(err, ErrNoObject) {
		t.Errorf("another account's object: %v, want ErrNoObject", err)
	}
	if _, _, err := s.ObjectByID(ctx, c.ID+100, nil); !errors.Is(err, ErrNoObject) {
		t.Errorf("an object never stored: %v, want ErrNoObject", err)
	}

	if _, coll, err := s.ObjectByID(ctx, c.ID, nil); err != nil || coll.ID != away.ID || coll.Account != "other" {
		t.Errorf("Away's object is said to be in %+v (%v)", coll, err)
	}
	put(t, s, &Object{CollectionID: cal.ID, Href: "/cal/task-a.ics", UID: "a", Kind: ObjectTodo, Data: "task"})
	byUID, err := s.ObjectsByUID(ctx, []int64{cal.ID, away.ID}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(byUID) != 2 || byUID[0].ID != a.ID || byUID[1].ID != c.ID {
		t.Errorf("UID a in both calendars: %+v", byUID)
	}
	if byUID, _ := s.ObjectsByUID(ctx, []int64{away.ID}, "b"); len(byUID) != 0 {
		t.Errorf("UID b is not in Away: %+v", byUID)
	}

	if err := s.DeleteObjects(ctx, cal.ID, []string{"/cal/a.ics", "/cal/none.ics"}); err != nil {
		t.Fatal(err)
	}
	if etags, _ := s.ObjectETags(ctx, cal.ID); len(etags) != 2 || etags["/cal/b.ics"] != `"7"` || etags["/cal/a.ics"] != "" {
		t.Errorf("after deleting a.ics: %v", etags)
	}
	if _, _, err := s.ObjectByID(ctx, c.ID, nil); err != nil {
		t.Errorf("the other calendar's a.ics went too: %v", err)
	}

}

// TestObjectsInRange: of events, those that may fall in the range (a recurring one always),
// in order of start; tasks by kind, with their due time and status.
func TestObjectsInRange(t *testing.T) {
	ctx := context.Background()
	s, _ := openObjects(t)
	cal := saveCollection(t, s, &Collection{AccountID: 1, URL: "/cal/", Kind: KindCalendar})
	day := time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	for _, o := range []*Object{
		{Href: "before", Summary: "before", Start: at(-5), End: at(-4)},
		{Href: "ends-at-start", Summary: "ends as the range starts", Start: at(-1), End: at(0)},
		{Href: "overlaps", Summary: "overlaps the start", Start: at(-1), End: at(1)},
		{Href: "inside", Summary: "inside", Start: at(3), End: at(4)},
		{Href: "no-end", Summary: "no end, inside", Start: at(5)},
		{Href: "no-end-before", Summary: "no end, before", Start: at(-2)},
		{Href: "at-end", Summary: "starts as the range ends", Start: at(24), End: at(25)},
		{Href: "weekly", Summary: "weekly, from long ago", Start: at(-500), End: at(-499), Recurring: true},
		{Href: "allday", Summary: "all day", Start: at(0), End: at(24), AllDay: true},
	} {
		o.CollectionID, o.Kind, o.Data = cal.ID, ObjectEvent, "BEGIN:VCALENDAR"
		put(t, s, o)
	}
	due := at(30)
	put(t, s, &Object{CollectionID: cal.ID, Href: "task", Kind: ObjectTodo, Summary: "Pay rent", Due: due, Status: "NEEDS-ACTION", Data: "x"})

	events, err := s.Objects(ctx, []int64{cal.ID}, ObjectEvent, at(0), at(24))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range events {
		got = append(got, o.Href)
	}
	if want := "weekly overlaps allday inside no-end"; strings.Join(got, " ") != want {
		t.Errorf("events of the day: %s\nwant %s", strings.Join(got, " "), want)
	}
	if all, _ := s.Objects(ctx, []int64{cal.ID}, ObjectEvent, time.Time{}, time.Time{}); len(all) != 9 {
		t.Errorf("without a range, %d events, want 9", len(all))
	}
	tasks, err := s.Objects(ctx, []int64{cal.ID}, ObjectTodo, at(0), at(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || !tasks[0].Due.Equal(due) || tasks[0].Status != "NEEDS-ACTION" || !tasks[0].Start.IsZero() || tasks[0].Search != "" {
		t.Errorf("tasks (not limited by the range): %+v", tasks)
	}
}

func vcard(lines ...string) string {
	return "BEGIN:VCARD\r\nVERSION:3.0\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VCARD\r\n"
}

// TestSearchContacts: a contact is found by any part of its name, address, phone (with or
// without its spacing), organisation or title, every word of the query, whatever their case
// or digit forms; never by a field the tools do not show nor by a secret they mask.
func TestSearchContacts(t *testing.T) {
	ctx := context.Background()
	s, _ := openObjects(t)
	book := saveCollection(t, s, &Collection{AccountID: 1, URL: "/book/", Kind: KindAddressBook})
	other := saveCollection(t, s, &Collection{AccountID: 1, URL: "/book2/", Kind: KindAddressBook})
	ada := put(t, s, &Object{CollectionID: book.ID, Href: "ada.vcf", Kind: ObjectContact, Summary: "Ada Lovelace", Data: vcard(
		"FN:Ada Lovelace", "N:Lovelace;Augusta;Ada;;", "NICKNAME:Enchantress", "EMAIL:ada@analytical.example",
		"TEL:+44 20 7946 0000", "ORG:Analytical Engines;Research", "TITLE:Countess", "NOTE:the secret word is zanzibar")})
	put(t, s, &Object{CollectionID: book.ID, Href: "otp.vcf", Kind: ObjectContact, Summary: "otp", Data: vcard(
		"FN:Your verification code is 434712", "ORG:Acme Rockets")})
	put(t, s, &Object{CollectionID: other.ID, Href: "bob.vcf", Kind: ObjectContact, Data: vcard("FN:Bob Lovelace")})
	put(t, s, &Object{CollectionID: other.ID, Href: "carol.vcf", Kind: ObjectContact, Data: vcard("FN:Carol Lovelace")})
	put(t, s, &Object{CollectionID: book.ID, Href: "ev.ics", Kind: ObjectEvent, Summary: "Lovelace lecture", Data: "BEGIN:VCALENDAR"})
	if !strings.Contains(ada.Search, "lovelace") {
		t.Errorf("PutObject did not set the search words: %q", ada.Search)
	}

	both := []int64{book.ID, other.ID}
	for q, want := range map[string]string{
		"ada":                   "ada.vcf",
		"LOVELACE":              "ada.vcf bob.vcf carol.vcf",
		"ada lovelace":          "ada.vcf",
		"lovelace ada":          "ada.vcf",
		"love":                  "ada.vcf bob.vcf carol.vcf",
		"analytical.example":    "ada.vcf",
		"research":              "ada.vcf",
		"countess":              "ada.vcf",
		"+44 20 7946":           "ada.vcf",
		"2079460000":            "ada.vcf",
		"２０７９４６":                "ada.vcf", // fullwidth digits fold to ASCII
		"acme":                  "otp.vcf",
		"code hidden":           "otp.vcf", // the masked name as the tools show it
		"434712":                "",
		"434":                   "",
		"712":                   "",
		"verification code 434": "",
		"enchantress":           "", // NICKNAME: not shown by the tools
		"zanzibar":              "", // NOTE: not shown in a search result
		"augusta":               "", // N's parts beside an FN are not shown
		"lecture":               "", // an event is not a contact
		"ada bob":               "",
	} {
		found, err := s.SearchContacts(ctx, both, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range found {
			got = append(got, o.Href)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q finds %q, want %q", q, strings.Join(got, " "), want)
		}
	}
	for limit := 1; limit <= 3; limit++ {
		if found, _ := s.SearchContacts(ctx, both, "lovelace", limit); len(found) != limit || found[0].Href != "ada.vcf" {
			t.Errorf("a limit of %d across two address books: %d found", limit, len(found))
		}
	}
	if found, _ := s.SearchContacts(ctx, []int64{other.ID}, "ada", 10); len(found) != 0 {
		t.Errorf("a contact of another address book is found: %+v", found)
	}
	if got := ContactSearch("not a vcard", "x"); got != "" {
		t.Errorf("the search words of a card that cannot be read: %q, want none", got)
	}
}

// TestRefillContactSearch: on an older store whose search column held the server's words, the
// upgrade step fills it again from what the tools show, and empties it for events.
func TestRefillContactSearch(t *testing.T) {
	ctx := context.Background()
	s, db := openObjects(t)
	book := saveCollection(t, s, &Collection{AccountID: 1, URL: "/book/", Kind: KindAddressBook})
	otp := put(t, s, &Object{CollectionID: book.ID, Href: "otp.vcf", Kind: ObjectContact, Data: vcard("FN:Your verification code is 434712", "ORG:Acme Rockets")})
	ev := put(t, s, &Object{CollectionID: book.ID, Href: "ev.ics", Kind: ObjectEvent, Data: "BEGIN:VCALENDAR"})
	if _, err := db.Exec(`UPDATE dav_objects SET search = 'your verification code is 434712 acme rockets'`); err != nil {
		t.Fatal(err)
	}
	if found, _ := s.SearchContacts(ctx, []int64{book.ID}, "434712", 10); len(found) != 1 {
		t.Fatal("the old column is not as an older store left it")
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := RefillContactSearch(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"434712": 0, "434": 0, "acme": 1, "code hidden": 1} {
		if found, _ := s.SearchContacts(ctx, []int64{book.ID}, q, 10); len(found) != want {
			t.Errorf("after the refill, %q finds %d, want %d", q, len(found), want)
		}
	}
	o, _, _ := s.ObjectByID(ctx, ev.ID, nil)
	c, _, _ := s.ObjectByID(ctx, otp.ID, nil)
	if o.Search != "" || c.Search != ContactSearch(c.Data, c.Summary) {
		t.Errorf("after the refill, the event's words %q, the contact's %q", o.Search, c.Search)
	}
}

// TestObjectsErrorsExplained: an error of the database reaches the caller through the store's
// wording.
func TestObjectsErrorsExplained(t *testing.T) {
	ctx := context.Background()
	s, db := openObjects(t)
	db.Close()
	for name, err := range map[string]error{
		"save":     s.SaveCollection(ctx, &Collection{AccountID: 1, URL: "/x/"}),
		"sync":     s.SetCollectionSync(ctx, 1, "", ""),
		"delete":   s.DeleteCollection(ctx, 1),
		"put":      s.PutObject(ctx, &Object{CollectionID: 1}),
		"deleteob": s.DeleteObjects(ctx, 1, []string{"x"}),
		"list":     func() error { _, err := s.Collections(ctx, nil, ""); return err }(),
		"etags":    func() error { _, err := s.ObjectETags(ctx, 1); return err }(),
		"byid":     func() error { _, _, err := s.ObjectByID(ctx, 1, nil); return err }(),
		"objects":  func() error { _, err := s.Objects(ctx, []int64{1}, ObjectEvent, time.Time{}, time.Time{}); return err }(),
		"search":   func() error { _, err := s.SearchContacts(ctx, []int64{1}, "a", 1); return err }(),
		"uid":      func() error { _, err := s.ObjectsByUID(ctx, []int64{1}, "a"); return err }(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "explained: ") {
			t.Errorf("%s on a closed database: %v, want an explained error", name, err)
		}
	}
}

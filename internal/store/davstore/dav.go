// Package davstore keeps calendars, task lists and address books and the objects in them in the
// store's database. The store opens it on its own database and lends it its methods, so callers
// reach it as store.Store.
package davstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
)

// Calendars, task lists and address books (CalDAV, CardDAV, a folder of .ics
// files) and the objects in them. Each object is kept as the server sent it
// (Data: the iCalendar or vCard text, byte for byte) with a few columns read
// from it for queries; a tool reads the rest from Data, and a write starts
// from the server's current copy, never from these columns.

// Objects reads and writes the collections and objects of one open database.
type Objects struct {
	db      *sql.DB
	explain func(error) error // SQLite's errors as a sentence for a person
}

// New reads and writes the collections and objects of db, its errors explained by explain.
func New(db *sql.DB, explain func(error) error) *Objects { return &Objects{db: db, explain: explain} }

// Collection kinds.
const (
	KindCalendar    = "calendar"
	KindTasks       = "tasks"
	KindAddressBook = "addressbook"
)

// Object kinds.
const (
	ObjectEvent   = "event"
	ObjectTodo    = "todo"
	ObjectContact = "contact"
)

// Collection is a calendar, a task list or an address book of an account.
type Collection struct {
	ID        int64
	AccountID int64
	Account   string
	URL       string // its address on the server (or its folder)
	Kind      string // KindCalendar, KindTasks or KindAddressBook (a calendar holding both events and tasks is KindCalendar)
	Name      string
	Color     string
	TimeZone  string // its default zone (IANA name), when it says
	Writable  bool
	SyncToken string // RFC 6578 token of the last sync, when the server offers sync-collection
	CTag      string // the collection's change tag, when the server offers one
}

// Object is one event, task or contact.
type Object struct {
	ID           int64
	CollectionID int64
	Href         string // its address on the server (or its file)
	ETag         string
	UID          string
	Kind         string // ObjectEvent, ObjectTodo or ObjectContact
	Data         string // the iCalendar or vCard text as the server sent it
	Summary      string // an event's or task's SUMMARY, a contact's FN
	Start, End   time.Time
	AllDay       bool
	Recurring    bool // it has RRULE or RDATE: its instances are computed from Data
	Due          time.Time
	Status       string // a task's STATUS (NEEDS-ACTION, COMPLETED, …)
	Search       string // what a contact search looks in, set by PutObject (ContactSearch); "" for events and tasks
}

// SaveCollection stores c (by account and URL), setting c.ID.
func (s *Objects) SaveCollection(ctx context.Context, c *Collection) error {
	err := s.db.QueryRowContext(ctx, `INSERT INTO collections(account_id, url, kind, name, color, timezone, writable)
		VALUES(?,?,?,?,?,?,?) ON CONFLICT(account_id, url) DO UPDATE SET kind=excluded.kind, name=excluded.name,
		color=excluded.color, timezone=excluded.timezone, writable=excluded.writable RETURNING id`,
		c.AccountID, c.URL, c.Kind, c.Name, c.Color, c.TimeZone, c.Writable).Scan(&c.ID)
	return s.explain(err)
}

// SetCollectionSync records the sync token and change tag a sync ended with.
func (s *Objects) SetCollectionSync(ctx context.Context, id int64, token, ctag string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE collections SET sync_token = ?, ctag = ? WHERE id = ?`, token, ctag, id)
	return s.explain(err)
}

// DeleteCollection removes a collection and its objects.
func (s *Objects) DeleteCollection(ctx context.Context, id int64) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM collections WHERE id = ?`, id)
	return s.explain(err)
}

// Collections returns the collections of accounts (nil: all) of kind ("": every kind).
func (s *Objects) Collections(ctx context.Context, accounts []string, kind string) ([]*Collection, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, c.account_id, a.name, c.url, c.kind, c.name, c.color, c.timezone, c.writable, c.sync_token, c.ctag
		FROM collections c JOIN accounts a ON a.id = c.account_id ORDER BY a.name, c.name, c.url`)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []*Collection
	for rows.Next() {
		c := &Collection{}
		if err := rows.Scan(&c.ID, &c.AccountID, &c.Account, &c.URL, &c.Kind, &c.Name, &c.Color, &c.TimeZone, &c.Writable, &c.SyncToken, &c.CTag); err != nil {
			return nil, s.explain(err)
		}
		if accounts != nil && !slices.Contains(accounts, c.Account) || kind != "" && c.Kind != kind {
			continue
		}
		out = append(out, c)
	}
	return out, s.explain(rows.Err())
}

const objectColumns = `o.id, o.collection_id, o.href, o.etag, o.uid, o.kind, o.data, o.summary, o.start, o.end, o.all_day, o.recurring, o.due, o.status, o.search`

func scanObject(sc interface{ Scan(...any) error }) (*Object, error) {
	o := &Object{}
	var start, end, due int64
	if err := sc.Scan(&o.ID, &o.CollectionID, &o.Href, &o.ETag, &o.UID, &o.Kind, &o.Data, &o.Summary, &start, &end, &o.AllDay, &o.Recurring, &due, &o.Status, &o.Search); err != nil {
		return nil, err
	}
	o.Start, o.End, o.Due = unixOrZero(start), unixOrZero(end), unixOrZero(due)
	return o, nil
}

func unixOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

func zeroOrUnix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// PutObject stores o in its collection (by href), replacing what was there; o.ID and, for a
// contact, o.Search (from o.Data, as the tools show it: contactSearch) are set.
func (s *Objects) PutObject(ctx context.Context, o *Object) error {
	o.Search = ""
	if o.Kind == ObjectContact {
		o.Search = ContactSearch(o.Data, o.Summary)
	}
	err := s.db.QueryRowContext(ctx, `INSERT INTO dav_objects(collection_id, href, etag, uid, kind, data, summary, start, end, all_day, recurring, due, status, search)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(collection_id, href) DO UPDATE SET etag=excluded.etag, uid=excluded.uid,
		kind=excluded.kind, data=excluded.data, summary=excluded.summary, start=excluded.start, end=excluded.end,
		all_day=excluded.all_day, recurring=excluded.recurring, due=excluded.due, status=excluded.status, search=excluded.search RETURNING id`,
		o.CollectionID, o.Href, o.ETag, o.UID, o.Kind, o.Data, o.Summary, zeroOrUnix(o.Start), zeroOrUnix(o.End), o.AllDay, o.Recurring,
		zeroOrUnix(o.Due), o.Status, o.Search).Scan(&o.ID)
	return s.explain(err)
}

// DeleteObjects removes the objects of a collection at hrefs.
func (s *Objects) DeleteObjects(ctx context.Context, collectionID int64, hrefs []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback()
	for _, h := range hrefs {
		if _, err := tx.ExecContext(ctx, `DELETE FROM dav_objects WHERE collection_id = ? AND href = ?`, collectionID, h); err != nil {
			return s.explain(err)
		}
	}
	return s.explain(tx.Commit())
}

// ObjectETags maps each stored href of a collection to its ETag.
func (s *Objects) ObjectETags(ctx context.Context, collectionID int64) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT href, etag FROM dav_objects WHERE collection_id = ?`, collectionID)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var h, e string
		if err := rows.Scan(&h, &e); err != nil {
			return nil, s.explain(err)
		}
		out[h] = e
	}
	return out, s.explain(rows.Err())
}

// ErrNoObject is an object id the store does not hold (or hides).
var ErrNoObject = errors.New("no such object")

// ObjectByID returns one object, if its account is among accounts (nil: any).
func (s *Objects) ObjectByID(ctx context.Context, id int64, accounts []string) (*Object, *Collection, error) {
	o, err := scanObject(s.db.QueryRowContext(ctx, `SELECT `+objectColumns+` FROM dav_objects o WHERE o.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNoObject
	}
	if err != nil {
		return nil, nil, s.explain(err)
	}
	cs, err := s.Collections(ctx, accounts, "")
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs {
		if c.ID == o.CollectionID {
			return o, c, nil
		}
	}
	return nil, nil, ErrNoObject
}

// Objects returns the objects of kind in the collections given, those of
// events that may fall between from and to (zero: no bound) only: a
// recurring event is always returned, as its instances are computed from
// its Data.
func (s *Objects) Objects(ctx context.Context, collections []int64, kind string, from, to time.Time) ([]*Object, error) {
	var out []*Object
	for _, c := range collections {
		q := `SELECT ` + objectColumns + ` FROM dav_objects o WHERE o.collection_id = ? AND o.kind = ?`
		args := []any{c, kind}
		if kind == ObjectEvent && !from.IsZero() && !to.IsZero() {
			q += ` AND (o.recurring = 1 OR (o.start < ? AND (o.end > ? OR (o.end = 0 AND o.start >= ?))))`
			args = append(args, to.Unix(), from.Unix(), from.Unix())
		}
		q += ` ORDER BY o.start, o.summary, o.id`
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			o, err := scanObject(rows)
			if err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			out = append(out, o)
		}
		rows.Close()
	}
	return out, nil
}

// SearchContacts returns the contacts of the collections whose names, addresses, phones,
// organisation or title, as the tools show them, hold every word of q, folded alike
// (SearchFold: case, digit and compatibility forms ignored).
func (s *Objects) SearchContacts(ctx context.Context, collections []int64, q string, limit int) ([]*Object, error) {
	words := strings.Fields(SearchFold(q))
	var out []*Object
	for _, c := range collections {
		sqlq := `SELECT ` + objectColumns + ` FROM dav_objects o WHERE o.collection_id = ? AND o.kind = ?`
		args := []any{c, ObjectContact}
		for _, w := range words {
			sqlq += ` AND instr(o.search, ?) > 0`
			args = append(args, w)
		}
		sqlq += ` ORDER BY o.summary, o.id LIMIT ?`
		args = append(args, limit-len(out))
		rows, err := s.db.QueryContext(ctx, sqlq, args...)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			o, err := scanObject(rows)
			if err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			out = append(out, o)
		}
		rows.Close()
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

// ObjectsByUID returns the events of the collections given whose UID is uid.
func (s *Objects) ObjectsByUID(ctx context.Context, collections []int64, uid string) ([]*Object, error) {
	var out []*Object
	for _, c := range collections {
		rows, err := s.db.QueryContext(ctx, `SELECT `+objectColumns+` FROM dav_objects o WHERE o.collection_id = ? AND o.uid = ? AND o.kind = ? ORDER BY o.id`, c, uid, ObjectEvent)
		if err != nil {
			return nil, s.explain(err)
		}
		for rows.Next() {
			o, err := scanObject(rows)
			if err != nil {
				rows.Close()
				return nil, s.explain(err)
			}
			out = append(out, o)
		}
		rows.Close()
	}
	return out, nil
}

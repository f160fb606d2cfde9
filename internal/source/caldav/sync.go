package caldav

// Sync of one account: each of its collections, then the objects of each.
// With a sync token (RFC 6578) the server says what changed since the last
// sync; without one, a PROPFIND lists every object's ETag and only those
// whose ETag changed are fetched. Objects are fetched with a multiget REPORT
// in batches, each stored as it comes, and the collection's token is saved
// last: a sync cut at any point keeps what it stored, and the next one, from
// the old token, skips what it finds already stored with the same ETag.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// defaultBatch is how many objects one multiget asks for.
const defaultBatch = 200

// Source is a CalDAV/CardDAV account as the table of kinds opens it.
type Source struct {
	a Settings
	// noSyncCollection makes the sync list ETags even where the server offers
	// sync-collection (tests of that path against a server that offers it).
	noSyncCollection bool
	// rawXML reads multistatus answers as they are (see Client.rawXML).
	rawXML bool
}

// Open is the Source of a configured account: the Open of Kind.
func Open(a config.Account) (source.Source, error) {
	s, err := SettingsOf(a)
	if err != nil {
		return nil, err
	}
	return &Source{a: s}, nil
}

// Connect runs the password command and makes the clients of the account's
// CalDAV and CardDAV URLs (nil for the one it has not).
func Connect(ctx context.Context, a config.Account) (cal, card *Client, err error) {
	s, err := SettingsOf(a)
	if err != nil {
		return nil, nil, err
	}
	return connect(ctx, s)
}

func connect(ctx context.Context, a Settings) (cal, card *Client, err error) {
	if a.CalDAV == "" && a.CardDAV == "" {
		return nil, nil, fmt.Errorf("account %s has neither a caldav nor a carddav URL; set one with postern account set %s --caldav URL (or --carddav URL)", a.Name, a.Name)
	}
	pw := ""
	if a.PasswordCmd != "" || a.User != "" {
		if pw, err = source.PasswordOf(ctx, a.Name, a.PasswordCmd); err != nil {
			return nil, nil, err
		}
	}
	if a.CalDAV != "" {
		if cal, err = NewClient(a.CalDAV, a.User, pw, a.TLSCA); err != nil {
			return nil, nil, fmt.Errorf("account %s: --caldav %v", a.Name, err)
		}
	}
	if a.CardDAV != "" {
		if card, err = NewClient(a.CardDAV, a.User, pw, a.TLSCA); err != nil {
			return nil, nil, fmt.Errorf("account %s: --carddav %v", a.Name, err)
		}
	}
	return cal, card, nil
}

// ClientFor is the client that reaches collection c of account a (its
// CardDAV URL's for an address book, else its CalDAV URL's), for the write
// tools.
func ClientFor(ctx context.Context, a config.Account, c *store.Collection) (*Client, error) {
	cal, card, err := Connect(ctx, a)
	if err != nil {
		return nil, err
	}
	cl := cal
	if c.Kind == store.KindAddressBook {
		cl = card
	}
	if cl == nil {
		return nil, fmt.Errorf("account %s has no URL for %s any more; run postern sync", a.Name, c.URL)
	}
	return cl, nil
}

// Sync brings the store's copy of the account's calendars, task lists and
// address books up to date. Result counts collections in Folders, objects
// new, changed (FlagsChanged) and deleted, and collections gone.
func (s *Source) Sync(ctx context.Context, st *store.Store, opt source.Options) (*source.Result, error) {
	return s.sync(ctx, st, opt)
}

func (s *Source) sync(ctx context.Context, st *store.Store, opt source.Options) (*source.Result, error) {
	a := s.a
	cal, card, err := connect(ctx, a)
	if err != nil {
		return nil, err
	}
	accountID, err := st.EnsureAccount(ctx, a.Name, KindName)
	if err != nil {
		return nil, err
	}
	var remotes []remote
	var clients []*Client
	for _, x := range []struct {
		c *Client
		s service
	}{{cal, calDAV}, {card, cardDAV}} {
		if x.c == nil {
			continue
		}
		rs, err := x.c.collections(ctx, x.s)
		if err != nil {
			return nil, fmt.Errorf("account %s: %w", a.Name, err)
		}
		for range rs {
			clients = append(clients, x.c)
		}
		remotes = append(remotes, rs...)
	}
	res := &source.Result{}
	stored, err := st.Collections(ctx, []string{a.Name}, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var places []string
	for _, r := range remotes {
		seen[r.URL] = true
		places = append(places, r.URL)
	}
	for _, c := range stored {
		if !seen[c.URL] {
			if err := st.DeleteCollection(ctx, c.ID); err != nil {
				return res, err
			}
			res.FoldersGone++
		}
	}
	warns := source.NewWarnings(ctx, st, accountID, opt)
	if err := warns.Places(ctx, places); err != nil {
		return res, err
	}
	old := map[string]*store.Collection{}
	for _, c := range stored {
		old[c.URL] = c
	}
	// A collection that cannot be synced does not stop the others: each is tried, and the
	// account's error names those that failed.
	var failed []string
	for i, r := range remotes {
		col := r.Collection
		col.AccountID = accountID
		if err := st.SaveCollection(ctx, &col); err != nil {
			return res, err
		}
		if o := old[col.URL]; o != nil {
			col.SyncToken, col.CTag = o.SyncToken, o.CTag
		}
		res.Folders++
		if err := s.syncObjects(ctx, st, clients[i], &col, r, opt, res, warns); err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			failed = append(failed, fmt.Sprintf("%s %q: %v", kindNoun(col.Kind), col.Name, err))
		}
	}
	switch len(failed) {
	case 0:
		return res, nil
	case 1:
		return res, fmt.Errorf("account %s: the %s; the rest synced", a.Name, failed[0])
	}
	return res, fmt.Errorf("account %s: %d collections did not sync: the %s; the rest synced", a.Name, len(failed), strings.Join(failed, "; the "))
}

// kindNoun names a collection's kind in a sentence.
func kindNoun(kind string) string {
	switch kind {
	case store.KindTasks:
		return "task list"
	case store.KindAddressBook:
		return "address book"
	}
	return "calendar"
}

// objectNoun names an object of a collection in a sentence.
func objectNoun(kind string) string {
	switch kind {
	case store.KindTasks:
		return "task"
	case store.KindAddressBook:
		return "contact"
	}
	return "event"
}

// syncObjects brings one collection's objects up to date. An object that cannot be read
// is skipped with a warning that names it (warns, kept until it syncs cleanly), and the rest
// of the collection syncs: a multistatus answer is read without the characters XML does not
// allow, and one that still cannot be read is asked again in groups of fallbackGroup, then
// object by object with GET.
func (s *Source) syncObjects(ctx context.Context, st *store.Store, c *Client, col *store.Collection, r remote, opt source.Options, res *source.Result, warns *source.Warnings) error {
	c.rawXML = s.rawXML
	retry := warns.Before(col.URL) // objects skipped before: asked for again even when nothing changed
	useToken := r.syncToken != "" && !s.noSyncCollection
	if len(retry) == 0 && (useToken && r.syncToken == col.SyncToken || !useToken && r.ctag != "" && r.ctag == col.CTag && col.SyncToken == "") {
		return nil // nothing changed since the last sync
	}
	have, err := st.ObjectETags(ctx, col.ID)
	if err != nil {
		return err
	}
	var changed map[string]string // href → its ETag ("" when the server did not say)
	var removed []string
	token := ""
	full := true // the listing names every object (else only those changed since the token)
	if useToken {
		changed, removed, token, err = c.syncCollection(ctx, col.URL, col.SyncToken)
		if isInvalidToken(err) && col.SyncToken != "" {
			// The server forgot the token (RFC 6578 3.2): start over from none.
			changed, removed, token, err = c.syncCollection(ctx, col.URL, "")
			col.SyncToken = ""
		}
		if err != nil {
			return err
		}
		if col.SyncToken == "" { // a full listing: what it does not hold is gone
			removed = append(removed, missingFrom(have, changed)...)
		} else {
			full = false
		}
	} else {
		if changed, err = c.etags(ctx, col.URL); err != nil {
			return err
		}
		removed = missingFrom(have, changed)
	}
	var fetch []string
	for h, e := range changed {
		if old, ok := have[h]; !ok || e == "" || old != e {
			fetch = append(fetch, h)
		}
	}
	gone := map[string]bool{}
	for _, h := range removed {
		gone[h] = true
	}
	for _, h := range retry {
		_, listed := changed[h]
		if h != "" && !gone[h] && (listed || !full) && !contains(fetch, h) {
			fetch = append(fetch, h)
		}
	}
	sortStrings(fetch)
	batch := opt.BatchSize
	if batch <= 0 {
		batch = defaultBatch
	}
	f := &fetcher{c: c, col: col, report: multigetCalendar}
	if col.Kind == store.KindAddressBook {
		f.report = multigetCard
	}
	done := 0
	for len(fetch) > 0 {
		n := min(batch, len(fetch))
		part := fetch[:n]
		fetch = fetch[n:]
		objs, goneNow, err := f.fetch(ctx, part, false)
		if err != nil {
			return err
		}
		for _, sk := range f.skipped {
			warns.Add(ctx, col.URL, sk.href, s.skipped(col, sk.href, "", sk.why))
		}
		f.skipped = nil
		for _, ob := range objs {
			o := &store.Object{CollectionID: col.ID, Href: ob.Href, ETag: ob.ETag, Data: string(ob.Data)}
			if err := Fill(o); err != nil {
				warns.Add(ctx, col.URL, ob.Href, s.skipped(col, ob.Href, uidIn(ob.Data), err.Error()))
				continue
			}
			if err := st.PutObject(ctx, o); err != nil {
				return err
			}
			if ob.removed.n > 0 {
				warns.Add(ctx, col.URL, ob.Href, fmt.Sprintf("Account %s, %s %q: the %s %s%s held %s, which XML does not allow and which postern removed; the rest of it synced",
					s.a.Name, kindNoun(col.Kind), col.Name, objectNoun(col.Kind), ob.Href, uidPart(o.UID), ob.removed.describe()))
			}
			if _, ok := have[ob.Href]; ok {
				res.FlagsChanged++
			} else {
				res.New++
			}
			have[ob.Href] = ob.ETag
		}
		removed = append(removed, goneNow...)
		done += n
		if opt.Progress != nil {
			opt.Progress(source.Progress{Account: s.a.Name, Folder: col.Name, Done: done, Total: done + len(fetch)})
		}
		if opt.AfterBatch != nil {
			opt.AfterBatch(col.Name, done)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	var del []string
	for _, h := range removed {
		if _, ok := have[h]; ok {
			del = append(del, h)
			delete(have, h)
		}
	}
	if len(del) > 0 {
		if err := st.DeleteObjects(ctx, col.ID, del); err != nil {
			return err
		}
		res.Deleted += len(del)
	}
	if err := st.SetCollectionSync(ctx, col.ID, token, r.ctag); err != nil {
		return err
	}
	return warns.Done(ctx, col.URL)
}

// skipped is the warning of an object that was not stored.
func (s *Source) skipped(col *store.Collection, href, uid, why string) string {
	return fmt.Sprintf("Account %s, %s %q: the %s %s%s was skipped (%s); the rest synced, and the next sync tries it again",
		s.a.Name, kindNoun(col.Kind), col.Name, objectNoun(col.Kind), href, uidPart(uid), strings.TrimSuffix(why, "."))
}

func uidPart(uid string) string {
	if uid == "" {
		return ""
	}
	return " (UID " + uid + ")"
}

// uidIn finds the UID of an object's text that could not be read as a whole: its first UID
// line, unfolded no further, cut at 200 bytes.
func uidIn(data []byte) string {
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(line) > 4 && bytes.EqualFold(line[:3], []byte("UID")) && (line[3] == ':' || line[3] == ';') {
			if i := bytes.IndexByte(line, ':'); i >= 0 {
				v := strings.TrimSpace(string(line[i+1:]))
				if len(v) > 200 {
					v = v[:200]
				}
				return strings.ToValidUTF8(v, "\uFFFD")
			}
		}
	}
	return ""
}

// oneBad says whether err, a multiget's failure, may come from one of the objects asked for.
func oneBad(err error) bool {
	var de *DecodeError
	var he *HTTPError
	return errors.As(err, &de) || errors.As(err, &he) && he.Status >= 500
}

// fallbackGroup is how many objects one multiget asks for once an answer for more could not
// be read.
const fallbackGroup = 10

// fetcher fetches the objects of one collection.
type fetcher struct {
	c       *Client
	col     *store.Collection
	report  string
	skipped []skip // objects that could not be fetched, and why
}

type skip struct{ href, why string }

// fetch fetches hrefs with one multiget; when its answer cannot be read, in groups of
// fallbackGroup, and a group whose answer cannot be read object by object (GET). Only a
// failure to reach the server, or ctx ending, is an error.
//
// An answer "cannot be read" when it is not XML even without the characters XML forbids,
// or when the server failed to write it (5xx): Xandikos answers 500 to a multiget of an
// event with a BEL in it, as its XML writer refuses the character, and serves it with GET.
func (f *fetcher) fetch(ctx context.Context, hrefs []string, small bool) ([]*Object, []string, error) {
	objs, gone, skips, err := f.c.multiget(ctx, f.col.URL, f.report, hrefs)
	if err == nil || !oneBad(err) {
		f.skipped = append(f.skipped, skips...)
		return objs, gone, err
	}
	if len(hrefs) > fallbackGroup && !small {
		objs, gone = nil, nil
		for len(hrefs) > 0 {
			n := min(fallbackGroup, len(hrefs))
			o, g, err := f.fetch(ctx, hrefs[:n], true)
			if err != nil {
				return nil, nil, err
			}
			objs, gone = append(objs, o...), append(gone, g...)
			hrefs = hrefs[n:]
		}
		return objs, gone, nil
	}
	objs, gone, err0 := nil, nil, err
	for _, h := range hrefs {
		ob, err := f.c.Get(ctx, h)
		var he *HTTPError
		switch {
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case errors.As(err, &he) && he.Status == http.StatusNotFound:
			gone = append(gone, h)
		case err != nil:
			f.skipped = append(f.skipped, skip{h, fmt.Sprintf("the server's answer for it could not be read (%v), nor could GET fetch it (%v)", cause(err0), cause(err))})
		default:
			ob.Data, ob.removed = cleanText(ob.Data)
			objs = append(objs, ob)
		}
	}
	return objs, gone, nil
}

// missingFrom lists the hrefs of have that listing does not hold.
func missingFrom(have, listing map[string]string) []string {
	var out []string
	for h := range have {
		if _, ok := listing[h]; !ok {
			out = append(out, h)
		}
	}
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// isInvalidToken is the server refusing a sync token it no longer knows
// (RFC 6578 3.2: 403 or 409 with DAV:valid-sync-token).
func isInvalidToken(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == http.StatusForbidden || he.Status == http.StatusConflict || he.Status == http.StatusBadRequest) &&
		(strings.Contains(he.Text, "valid-sync-token") || he.Status != http.StatusForbidden)
}

// syncCollection asks what changed in the collection since token ("" for
// everything): the members changed or added with their ETags, those removed,
// and the new token. A truncated answer (507 on the collection, RFC 6578
// 3.6) is continued from the token it gave.
func (c *Client) syncCollection(ctx context.Context, collection, token string) (map[string]string, []string, string, error) {
	changed := map[string]string{}
	var removed []string
	for range 1000 {
		body := `<D:sync-collection xmlns:D="DAV:"><D:sync-token>` + html.EscapeString(token) + `</D:sync-token>` +
			`<D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`
		ms, err := c.multi(ctx, "REPORT", collection, "", body)
		if err != nil {
			return nil, nil, "", err
		}
		more := false
		for _, r := range ms.Responses {
			if samePath(r.Href, collection) {
				more = statusCode(r.Status) == http.StatusInsufficientStorage
				continue
			}
			if strings.HasSuffix(r.Href, "/") {
				continue // a collection inside it
			}
			if statusCode(r.Status) == http.StatusNotFound {
				removed = append(removed, r.Href)
				delete(changed, r.Href)
				continue
			}
			changed[r.Href] = r.found().ETag
		}
		if ms.SyncToken == "" {
			return nil, nil, "", fmt.Errorf("the server answered sync-collection without a new sync token")
		}
		token = ms.SyncToken
		if !more {
			return changed, removed, token, nil
		}
	}
	return nil, nil, "", fmt.Errorf("the server's sync-collection answer never ended")
}

// etags lists the objects of a collection with their ETags.
func (c *Client) etags(ctx context.Context, collection string) (map[string]string, error) {
	ms, err := c.multi(ctx, "PROPFIND", collection, "1", `<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:resourcetype/></D:prop></D:propfind>`)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range ms.Responses {
		p := r.found()
		if samePath(r.Href, collection) || p.ResourceType != nil && p.ResourceType.Collection != nil || strings.HasSuffix(r.Href, "/") {
			continue
		}
		out[r.Href] = p.ETag
	}
	return out, nil
}

const (
	multigetCalendar = `<C:calendar-multiget xmlns:D="DAV:" xmlns:C="` + nsCalDAV + `"><D:prop><D:getetag/><C:calendar-data/></D:prop>%s</C:calendar-multiget>`
	multigetCard     = `<CR:addressbook-multiget xmlns:D="DAV:" xmlns:CR="` + nsCardDAV + `"><D:prop><D:getetag/><CR:address-data/></D:prop>%s</CR:addressbook-multiget>`
)

// multiget fetches the objects at hrefs of a collection (a calendar-multiget
// or addressbook-multiget REPORT, per report), says which are gone, and which the server
// answered without their text.
func (c *Client) multiget(ctx context.Context, collection, report string, hrefs []string) ([]*Object, []string, []skip, error) {
	var b strings.Builder
	for _, h := range hrefs {
		b.WriteString("<D:href>" + html.EscapeString(h) + "</D:href>")
	}
	ms, err := c.multi(ctx, "REPORT", collection, "1", fmt.Sprintf(report, b.String()))
	if err != nil {
		return nil, nil, nil, err
	}
	var objs []*Object
	var gone []string
	var skips []skip
	for _, r := range ms.Responses {
		if statusCode(r.Status) == http.StatusNotFound {
			gone = append(gone, r.Href)
			continue
		}
		p := r.found()
		data := p.CalendarData
		if data == "" {
			data = p.AddressData
		}
		if data == "" {
			why := "the server sent no text for it"
			if st := strings.TrimSpace(r.Status); st != "" {
				why += " (" + st + ")"
			}
			skips = append(skips, skip{r.Href, why})
			continue
		}
		objs = append(objs, &Object{Href: r.Href, ETag: p.ETag, Data: crlf(data), removed: r.removed})
	}
	return objs, gone, skips, nil
}

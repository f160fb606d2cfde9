package calendars

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-vcard"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/contact"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

func ContactCard(o *store.Object) (vcard.Card, bool) { return contact.Parse(o.Data) }

// contactRow is what the contact tools show of o: contact.Read, the same values the store's
// contact search column is filled from (masked as these are shown).
func (v View) contactRow(o *store.Object, c *store.Collection, card vcard.Card) generated.ContactRow {
	sh := contact.Read(card, o.Summary)
	r := generated.ContactRow{
		ID: "c" + strconv.FormatInt(o.ID, 36), Name: sh.Name, AddressBook: c.Name,
		Emails: sh.Emails, Phones: sh.Phones, Organization: sh.Organization,
	}
	if v.Multi {
		r.Account = c.Account
	}
	return r
}

// keepsContact reports whether the contact o of c is kept: by its address book, a tie,
// or one of its addresses being a project's sender's (all its addresses are asked).
func keepsContact(a *kit.Access, o *store.Object, c *store.Collection) bool {
	if !a.Active() {
		return false
	}
	t := projects.Thing{Kind: projects.Contact, Account: c.Account, Collection: c.Name, URL: c.URL, UID: o.UID}
	if card, ok := ContactCard(o); ok {
		for _, f := range card[vcard.FieldEmail] {
			if e := strings.TrimSpace(strings.TrimPrefix(f.Value, "mailto:")); e != "" {
				t.Emails = append(t.Emails, e)
			}
		}
	}
	return a.Keeps(t)
}

// keptContacts returns the ids of the kept contacts of cs: all of them, whatever a
// search's words, so that their number says nothing of what they hold.
func keptContacts(a *kit.Access, ctx context.Context, st *store.Store, cs []*store.Collection) (map[int64]bool, error) {
	if !a.Active() || len(cs) == 0 {
		return nil, nil
	}
	objs, err := st.Objects(ctx, IDs(cs), store.ObjectContact, time.Time{}, time.Time{})
	if err != nil {
		return nil, err
	}
	coll := ByID(cs)
	kept := map[int64]bool{}
	for _, o := range objs {
		if keepsContact(a, o, coll[o.CollectionID]) {
			kept[o.ID] = true
		}
	}
	return kept, nil
}

// ContactsSearch implements contacts_search.
func (s *Calendars) ContactsSearch(ctx context.Context, a *generated.ContactsSearchArgs) (*generated.ContactList, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	v := s.CalendarView(ctx)
	res := &generated.ContactList{Contacts: []generated.ContactRow{}}
	st, cs, err := s.Collections(ctx, store.KindAddressBook)
	if err != nil || len(cs) == 0 {
		return res, err
	}
	limit := a.Limit
	if limit <= 0 {
		limit = 20
	}
	kept, err := keptContacts(acc, ctx, st, cs)
	if err != nil {
		return nil, err
	}
	res.LeftOut = kit.NonZero(len(kept))
	res.SyncedAt = s.CollectionsSyncedAt(ctx, cs)
	// Kept contacts may be among the matches: ask for as many more as there are.
	objs, err := st.SearchContacts(ctx, IDs(cs), a.Query, limit+1+len(kept))
	if err != nil {
		return nil, err
	}
	coll := ByID(cs)
	for _, o := range objs {
		if kept[o.ID] {
			continue
		}
		if len(res.Contacts) == limit {
			res.Truncated = kit.Ptr(true)
			break
		}
		card, ok := ContactCard(o)
		if !ok {
			continue
		}
		res.Contacts = append(res.Contacts, v.contactRow(o, coll[o.CollectionID], card))
	}
	return res, nil
}

var errNoContact = errors.New("there is no such contact here; " + generated.ToolContactsSearch + " finds contacts and their ids")

// ContactGet implements contact_get.
func (s *Calendars) ContactGet(ctx context.Context, a *generated.ContactGetArgs) (*generated.ContactDetail, error) {
	acc, err := s.Access(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.contactGet(ctx, acc, a)
	return res, MissingFor(acc, err)
}

func (s *Calendars) contactGet(ctx context.Context, acc *kit.Access, a *generated.ContactGetArgs) (*generated.ContactDetail, error) {
	n, ok := ParseObjectID(a.ID, 'c')
	if !ok {
		return nil, errNoContact
	}
	o, c, err := s.Object(ctx, n, store.ObjectContact)
	if err != nil {
		if errors.Is(err, store.ErrNoObject) {
			return nil, errNoContact
		}
		return nil, err
	}
	if keepsContact(acc, o, c) {
		return nil, errNoContact
	}
	card, ok := ContactCard(o)
	if !ok {
		return nil, errors.New("this contact's vCard cannot be read; the address book holds a broken copy")
	}
	v := s.CalendarView(ctx)
	res := &generated.ContactDetail{Contact: v.contactRow(o, c, card), Title: contact.Read(card, o.Summary).Title,
		Birthday: card.Value(vcard.FieldBirthday), Urls: contact.Values(card, vcard.FieldURL)}
	for _, ad := range card.Addresses() {
		var parts []string
		for _, p := range []string{ad.PostOfficeBox, ad.ExtendedAddress, ad.StreetAddress, ad.Locality, ad.Region, ad.PostalCode, ad.Country} {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) > 0 && len(res.Addresses) < contact.MaxValues {
			res.Addresses = append(res.Addresses, strings.Join(parts, ", "))
		}
	}
	res.Note, _ = capText(mask.OwnBody(card.Value(vcard.FieldNote)))
	return res, nil
}

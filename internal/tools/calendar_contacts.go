package tools

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/emersion/go-vcard"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/store"
)

// maxContactValues is the most emails, phones, addresses or links a contact shows of each.
const maxContactValues = 20

func contactCard(o *store.Object) (vcard.Card, bool) {
	card, err := vcard.NewDecoder(strings.NewReader(o.Data)).Decode()
	return card, err == nil
}

func firstValues(card vcard.Card, key string) []string {
	var out []string
	for _, f := range card[key] {
		if v := strings.TrimSpace(f.Value); v != "" && len(out) < maxContactValues {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(v, "mailto:"), "tel:"))
		}
	}
	return out
}

func contactName(card vcard.Card, o *store.Object) string {
	if fn := strings.TrimSpace(card.PreferredValue(vcard.FieldFormattedName)); fn != "" {
		return fn
	}
	if n := card.Name(); n != nil {
		if s := strings.TrimSpace(strings.Join(strings.Fields(n.GivenName+" "+n.AdditionalName+" "+n.FamilyName), " ")); s != "" {
			return s
		}
	}
	return o.Summary
}

func (v calView) contactRow(o *store.Object, c *store.Collection, card vcard.Card) generated.ContactRow {
	r := generated.ContactRow{
		ID: "c" + strconv.FormatInt(o.ID, 36), Name: contactName(card, o), AddressBook: c.Name,
		Emails: firstValues(card, vcard.FieldEmail), Phones: firstValues(card, vcard.FieldTelephone),
	}
	if org := card.PreferredValue(vcard.FieldOrganization); org != "" {
		var parts []string
		for _, p := range strings.Split(org, ";") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		r.Organization = strings.Join(parts, ", ")
	}
	if v.multi {
		r.Account = c.Account
	}
	return r
}

// ContactsSearch implements contacts_search.
func (s *Service) ContactsSearch(ctx context.Context, a *generated.ContactsSearchArgs) (*generated.ContactList, error) {
	v := s.calendarView()
	res := &generated.ContactList{Contacts: []generated.ContactRow{}}
	st, cs, err := s.collections(ctx, store.KindAddressBook)
	if err != nil || len(cs) == 0 {
		return res, err
	}
	limit := a.Limit
	if limit <= 0 {
		limit = 20
	}
	objs, err := st.SearchContacts(ctx, ids(cs), a.Query, limit+1)
	if err != nil {
		return nil, err
	}
	coll := byID(cs)
	for _, o := range objs {
		if len(res.Contacts) == limit {
			res.Truncated = ptr(true)
			break
		}
		card, ok := contactCard(o)
		if !ok {
			continue
		}
		res.Contacts = append(res.Contacts, v.contactRow(o, coll[o.CollectionID], card))
	}
	return res, nil
}

var errNoContact = errors.New("there is no such contact here; " + generated.ToolContactsSearch + " finds contacts and their ids")

// ContactGet implements contact_get.
func (s *Service) ContactGet(ctx context.Context, a *generated.ContactGetArgs) (*generated.ContactDetail, error) {
	n, ok := parseObjectID(a.Contact, 'c')
	if !ok {
		return nil, errNoContact
	}
	o, c, err := s.object(ctx, n, store.ObjectContact)
	if err != nil {
		if errors.Is(err, store.ErrNoObject) {
			return nil, errNoContact
		}
		return nil, err
	}
	card, ok := contactCard(o)
	if !ok {
		return nil, errors.New("this contact's vCard cannot be read; the address book holds a broken copy")
	}
	v := s.calendarView()
	res := &generated.ContactDetail{Contact: v.contactRow(o, c, card), Title: card.PreferredValue(vcard.FieldTitle),
		Birthday: card.Value(vcard.FieldBirthday), Urls: firstValues(card, vcard.FieldURL)}
	for _, ad := range card.Addresses() {
		var parts []string
		for _, p := range []string{ad.PostOfficeBox, ad.ExtendedAddress, ad.StreetAddress, ad.Locality, ad.Region, ad.PostalCode, ad.Country} {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) > 0 && len(res.Addresses) < maxContactValues {
			res.Addresses = append(res.Addresses, strings.Join(parts, ", "))
		}
	}
	res.Note, _ = capText(card.Value(vcard.FieldNote))
	return res, nil
}

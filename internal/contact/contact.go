// Package contact reads what postern shows of a contact from its vCard: its name, email
// addresses, phones, organisation and title, the same for the contact tools and for the
// contact search column the store fills from them. It never masks and never decides what an
// agent may see.
package contact

import (
	"strings"

	"github.com/emersion/go-vcard"
)

// MaxValues is the most email addresses, phones, postal addresses or links shown of each.
const MaxValues = 20

// Shown is what the contact tools show of a contact besides its note, postal addresses,
// birthday and links.
type Shown struct {
	Name         string
	Emails       []string
	Phones       []string
	Organization string // its ORG parts joined with ", "
	Title        string
}

// Parse reads a vCard; ok is false when it cannot be read.
func Parse(data string) (card vcard.Card, ok bool) {
	card, err := vcard.NewDecoder(strings.NewReader(data)).Decode()
	return card, err == nil
}

// Read is what the tools show of card; fallback is the name when the card gives none.
func Read(card vcard.Card, fallback string) Shown {
	s := Shown{
		Name:   name(card, fallback),
		Emails: Values(card, vcard.FieldEmail),
		Phones: Values(card, vcard.FieldTelephone),
		Title:  card.PreferredValue(vcard.FieldTitle),
	}
	if org := card.PreferredValue(vcard.FieldOrganization); org != "" {
		var parts []string
		for _, p := range strings.Split(org, ";") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		s.Organization = strings.Join(parts, ", ")
	}
	return s
}

// Values are the first MaxValues non-empty values of key, without a mailto: or tel: prefix.
func Values(card vcard.Card, key string) []string {
	var out []string
	for _, f := range card[key] {
		if v := strings.TrimSpace(f.Value); v != "" && len(out) < MaxValues {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(v, "mailto:"), "tel:"))
		}
	}
	return out
}

// name is the card's FN, else its N's given, additional and family names, else fallback.
func name(card vcard.Card, fallback string) string {
	if fn := strings.TrimSpace(card.PreferredValue(vcard.FieldFormattedName)); fn != "" {
		return fn
	}
	if n := card.Name(); n != nil {
		if s := strings.TrimSpace(strings.Join(strings.Fields(n.GivenName+" "+n.AdditionalName+" "+n.FamilyName), " ")); s != "" {
			return s
		}
	}
	return fallback
}

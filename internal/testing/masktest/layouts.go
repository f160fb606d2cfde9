package masktest

import "github.com/postern-mcp/postern/internal/mask"

// Layouts are IBANs, cards and NIRs written the ways people and mail templates write them:
// any separator of any width and kind, line breaks, groups of four or five, fullwidth and
// other digit forms, the NIR key apart, invisible characters between the digits.
func Layouts() []Masked {
	const fr, fr4 = "FR7630006000011234567890189", "0189"
	const visa, v4 = "4111111111111111", "1111"
	const nir, n4 = "185057800608491", "8491"
	iban := func(name, body string) Masked {
		return Masked{Name: "IBAN " + name, Body: body, Secrets: []string{fr}, Keep: fr4, Marker: mask.IBANPrefix}
	}
	card := func(name, body string) Masked {
		return Masked{Name: "card " + name, Body: body, Secrets: []string{visa}, Keep: v4, Marker: mask.CardPrefix}
	}
	nirc := func(name, body string) Masked {
		return Masked{Name: "NIR " + name, Body: body, Secrets: []string{nir}, Keep: n4, Marker: mask.NIRPrefix}
	}
	return []Masked{
		iban("double spaces", "IBAN: FR76  3000  6000  0112  3456  7890  189"),
		iban("tabs", "IBAN\tFR76\t3000\t6000\t0112\t3456\t7890\t189"),
		iban("line breaks", "Your IBAN:\nFR76 3000\n6000 0112\n3456 7890 189\nThanks"),
		iban("dots", "IBAN FR76.3000.6000.0112.3456.7890.189"),
		iban("en dashes", "IBAN FR76–3000–6000–0112–3456–7890–189"),
		iban("hyphens", "IBAN FR76-3000-6000-0112-3456-7890-189"),
		iban("groups of five", "IBAN FR763 00060 00011 23456 78901 89"),
		iban("fullwidth", "IBAN ＦＲ７６ ３０００ ６０００ ０１１２ ３４５６ ７８９０ １８９"),
		iban("zero-width spaces", "IBAN FR76\u200b3000\u200b6000\u200b0112\u200b3456\u200b7890\u200b189"),
		iban("soft hyphens compact", "IBAN FR76\u00ad30006000\u00ad011234567890\u00ad189"),
		iban("no-break spaces", "IBAN FR76\u00a03000\u00a06000\u00a00112\u00a03456\u00a07890\u00a0189"),
		iban("lower case with newline", "iban fr76 3000 6000 0112\r\n3456 7890 189"),
		card("double spaces", "Card 4111  1111  1111  1111 on file"),
		card("tabs", "Card\t4111\t1111\t1111\t1111"),
		card("line breaks", "Card number:\n4111\n1111\n1111\n1111\n"),
		card("en dashes", "Card 4111–1111–1111–1111"),
		card("dots", "Card 4111.1111.1111.1111"),
		card("fullwidth", "Card ４１１１ １１１１ １１１１ １１１１"),
		card("Arabic-Indic", "Card ٤١١١ ١١١١ ١١١١ ١١١١"),
		card("zero-width joiners", "Card 4111\u200d1111\u200d1111\u200d1111"),
		card("word joiners compact", "card=4111\u20601111\u206011111111"),
		card("thin spaces", "Card 4111\u20091111\u20091111\u20091111"),
		nirc("key apart", "NIR 1 85 05 78 006 084  91"),
		nirc("key labelled", "N° de sécurité sociale : 1 85 05 78 006 084 clé 91"),
		nirc("key in brackets", "NIR 1 85 05 78 006 084 (clé 91)"),
		nirc("key on the next line", "NIR 1850578006084\n91"),
		nirc("key after a comma", "NIR 1 85 05 78 006 084, clé 91"),
		nirc("key after a comma, no accent", "Sécu : 1 85 05 78 006 084, cle 91."),
		nirc("key after a comma, English", "Social security 1 85 05 78 006 084, key 91, thanks"),
		nirc("key after a semicolon, capital", "NIR 1 85 05 78 006 084; CLÉ : 91"),
		nirc("key after a bare comma", "NIR 1 85 05 78 006 084, 91"),
		nirc("key labelled clef", "NIR 1850578006084 clef 91"),
		nirc("dots", "NIR 1.85.05.78.006.084.91"),
		nirc("tabs", "NIR\t1\t85\t05\t78\t006\t084\t91"),
		nirc("fullwidth", "NIR １ ８５ ０５ ７８ ００６ ０８４ ９１"),
		nirc("zero-width spaces", "NIR 1\u200b85\u200b05\u200b78\u200b006\u200b084\u200b91"),
	}
}

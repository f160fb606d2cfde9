// Package masktest holds the cases the masks are tested against, so that the
// unit tests and the end-to-end tests (through sync, the store and the stdio
// server) use one table.
package masktest

import (
	"strings"

	"github.com/postern-mcp/postern/internal/mask"
)

var filler = strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 1100) // > 60 KB

// A masked case: the message (subject and body) and the field under test, the secrets that
// must not survive in it, and the marker expected in its place.
type Masked struct {
	Name          string
	Subject, Body string
	InSubject     bool     // check the subject; else the body
	Other         string   // check this field instead (a sender name, an attachment name)
	Secrets       []string // none may remain, separators ignored
	Keep          string   // for IBAN, card and NIR: the last four, which remain
	Marker        string   // expected in the output
}

// MaskedCases must be masked.
func MaskedCases() []Masked {
	const code = "Your verification code is "
	return []Masked{
		// One-time codes, every form.
		{Name: "plain code", Body: code + "482913.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "3+3 space", Body: code + "482 913.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "3+3 dash", Body: code + "482-913.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "2+2+2", Body: code + "48 29 13.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "digit by digit", Body: code + "4 8 2 9 1 3", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "table cells, tabs", Body: "Your code:\n\n4\t8\t2\t9\t1\t3\n\nIt expires in 10 minutes.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "table cells, lines", Body: "Enter this code to sign in:\n4\n8\n2\n9\n1\n3\n", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "table cells, pipes", Body: "Security code\n| 4 | 8 | 2 | 9 | 1 | 3 |", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "no-break space", Body: code + "482\u00a0913", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "narrow no-break spaces", Body: code + "48\u202f29\u202f13", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "alphanumeric", Body: "Your security code: X7K-9QP", Secrets: []string{"X7K9QP"}, Marker: mask.HiddenCode},
		{Name: "google style", Subject: "G-482913 is your Google verification code", InSubject: true, Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "subject only", Subject: "482913 is your Example sign-in code", Body: "Thanks for using Example.", InSubject: true, Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "code far from its words", Subject: "Your sign-in code", Body: "Hello,\n\nuse this one: 71 03 95\n\nThe Example team", Secrets: []string{"710395"}, Marker: mask.HiddenCode},
		{Name: "quoted reply", Body: "Did this work?\n\n> Your one-time code is 482913\n> Do not share it with anyone.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "quoted table cells", Body: "See below.\n> Your login code:\n> 4\n> 8\n> 2\n> 9\n> 1\n> 3", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "far down a long body", Body: "Your verification code is at the end.\n" + filler + "\n482913\n", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "French", Body: "Votre code de vérification : 482913. Ne le partagez pas.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "French single use", Body: "Code à usage unique\u00a0: 729 104", Secrets: []string{"729104"}, Marker: mask.HiddenCode},
		{Name: "German", Body: "Ihr Bestätigungscode lautet 4829 13.", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		{Name: "four digits", Body: "Your login code: 4829", Secrets: []string{"4829"}, Marker: mask.HiddenCode},
		{Name: "eight digits", Body: "Your OTP is 48291376", Secrets: []string{"48291376"}, Marker: mask.HiddenCode},
		{Name: "lowercase alphanumeric", Body: "2FA code: a1b2c3 (valid 5 minutes)", Secrets: []string{"a1b2c3"}, Marker: mask.HiddenCode},
		{Name: "code in a name", Subject: "Your login code", Body: "Hi", Other: "Example Security 482913", Secrets: []string{"482913"}, Marker: mask.HiddenCode},
		// Links in a message that carries a code.
		{Name: "https link", Body: "Your sign-in link: https://example.com/magic?token=Zx81kQ", Secrets: []string{"Zx81kQ", "example.com/magic"}, Marker: mask.HiddenLink},
		{Name: "capital link", Body: "VERIFY YOUR EMAIL: HTTPS://EXAMPLE.COM/VERIFY?T=QX7P2", Secrets: []string{"QX7P2", "EXAMPLE.COM"}, Marker: mask.HiddenLink},
		{Name: "www link", Body: "Confirm your email at www.example.com/verify?t=AbC987.", Secrets: []string{"AbC987", "www.example"}, Marker: mask.HiddenLink},
		{Name: "bare host link", Body: "Magic link: example.com/magic/Qx7pLm2, valid 15 minutes", Secrets: []string{"Qx7pLm2"}, Marker: mask.HiddenLink},
		{Name: "bracketed link", Body: "Your code is 482913 or click <https://example.org/login?otp=482913>", Secrets: []string{"482913", "example.org/login"}, Marker: mask.HiddenLink},
		{Name: "reset link", Body: "Reset your password: https://example.net/reset/8f3a9c", Secrets: []string{"8f3a9c"}, Marker: mask.HiddenLink},
		// Messages that give a password: withheld whole.
		{Name: "EN password", Body: "Hello,\nYour password is: Xk82!pq9\nBye", Secrets: []string{"Xk82!pq9"}, Marker: mask.WithheldPrefix},
		{Name: "EN temporary", Body: "Temporary password: Hq7-Lm2z\nChange it soon.", Secrets: []string{"Hq7-Lm2z"}, Marker: mask.WithheldPrefix},
		{Name: "EN one line", Body: "Your new password is Zq92mx7", Secrets: []string{"Zq92mx7"}, Marker: mask.WithheldPrefix},
		{Name: "FR password", Body: "Bonjour,\nVotre mot de passe : Tr0ub4dor\nCordialement", Secrets: []string{"Tr0ub4dor"}, Marker: mask.WithheldPrefix},
		{Name: "FR provisional", Body: "Identifiant : jdupont\nMot de passe provisoire : Ab12cd34", Secrets: []string{"Ab12cd34"}, Marker: mask.WithheldPrefix},
		{Name: "DE password", Body: "Hallo,\nIhr Passwort: Geh31m!x\nGrüße", Secrets: []string{"Geh31m!x"}, Marker: mask.WithheldPrefix},
		{Name: "password table", Body: "Username:\tjdoe\nPassword:\n\thunter22\n", Secrets: []string{"hunter22"}, Marker: mask.WithheldPrefix},
		{Name: "subject gives password", Subject: "Your password is Zq92mx7", Body: "See subject.", InSubject: true, Secrets: []string{"Zq92mx7"}, Marker: mask.HiddenPassword},
		// IBANs.
		{Name: "IBAN FR spaced", Body: "IBAN : FR76 3000 6000 0112 3456 7890 189", Secrets: []string{"FR7630006000011234567890189"}, Keep: "0189", Marker: mask.IBANPrefix},
		{Name: "IBAN FR compact", Body: "Pay to FR7630006000011234567890189.", Secrets: []string{"FR7630006000011234567890189"}, Keep: "0189", Marker: mask.IBANPrefix},
		{Name: "IBAN DE spaced", Body: "Konto DE89 3704 0044 0532 0130 00 bei der Bank", Secrets: []string{"DE89370400440532013000"}, Keep: "3000", Marker: mask.IBANPrefix},
		{Name: "IBAN DE lower compact", Body: "iban de89370400440532013000", Secrets: []string{"DE89370400440532013000"}, Keep: "3000", Marker: mask.IBANPrefix},
		{Name: "IBAN GB", Body: "Sort it to GB82 WEST 1234 5698 7654 32 please", Secrets: []string{"GB82WEST12345698765432"}, Keep: "5432", Marker: mask.IBANPrefix},
		{Name: "IBAN ES full last group", Body: "Cuenta: ES91 2100 0418 4502 0005 1332 and thanks", Secrets: []string{"ES9121000418450200051332"}, Keep: "1332", Marker: mask.IBANPrefix},
		// Payment cards.
		{Name: "Visa spaces", Body: "Card 4111 1111 1111 1111 exp 12/27", Secrets: []string{"4111111111111111"}, Keep: "1111", Marker: mask.CardPrefix},
		{Name: "Visa dashes", Body: "Card: 4111-1111-1111-1111.", Secrets: []string{"4111111111111111"}, Keep: "1111", Marker: mask.CardPrefix},
		{Name: "Mastercard", Body: "Charged to 5555 5555 5555 4444", Secrets: []string{"5555555555554444"}, Keep: "4444", Marker: mask.CardPrefix},
		{Name: "Mastercard 2-series dashes", Body: "Carte 2223-0031-2200-3222", Secrets: []string{"2223003122003222"}, Keep: "3222", Marker: mask.CardPrefix},
		{Name: "Amex", Body: "Amex 3782 822463 10005 on file", Secrets: []string{"378282246310005"}, Keep: "0005", Marker: mask.CardPrefix},
		{Name: "Visa compact", Body: "card=4012888888881881", Secrets: []string{"4012888888881881"}, Keep: "1881", Marker: mask.CardPrefix},
		{Name: "Discover no-break", Body: "Discover 6011\u00a01111\u00a01111\u00a01117", Secrets: []string{"6011111111111117"}, Keep: "1117", Marker: mask.CardPrefix},
		// French social security numbers.
		{Name: "NIR spaced", Body: "N° de sécurité sociale : 1 85 05 78 006 084 91", Secrets: []string{"185057800608491"}, Keep: "8491", Marker: mask.NIRPrefix},
		{Name: "NIR compact", Body: "NIR 185057800608491.", Secrets: []string{"185057800608491"}, Keep: "8491", Marker: mask.NIRPrefix},
		{Name: "NIR Corsica 2A", Body: "Assurée : 2 90 03 2A 123 456 94", Secrets: []string{"290032A12345694"}, Keep: "5694", Marker: mask.NIRPrefix},
		{Name: "NIR Corsica 2B", Body: "Assuré : 1 72 11 2B 045 678 01", Secrets: []string{"172112B04567801"}, Keep: "7801", Marker: mask.NIRPrefix},
	}
}

// Plain is a case that must be left alone.
type Plain struct{ Name, Subject, Body string }

// LeftAlone must not be masked.
func LeftAlone() []Plain {
	return []Plain{
		{"phone FR intl", "Call us", "Call +33 6 12 34 56 78 today."},
		{"phone US", "", "Support: (555) 010-1234, ext. 12"},
		{"phone FR", "", "Mon numéro : 06 12 34 56 78"},
		{"order number", "Order #123456789 has shipped", "Your order #123456789 is on its way: https://example.com/track?o=123456789"},
		{"UPS tracking", "", "Tracking: 1Z999AA10123456784"},
		{"USPS tracking", "", "USPS 9400 1000 0000 0000 0000 00"},
		{"SIRET spaced", "", "SIRET : 732 829 320 00074"},
		{"SIRET compact, Luhn-valid", "", "SIRET 73282932000074"},
		{"ISO date", "", "Delivered on 2025-06-14."},
		{"French date", "", "Livré le 14/06/2025 à 14:30."},
		{"amount FR", "", "Total : 1 234,56 €"},
		{"amount US", "", "Total: $12,345.67"},
		{"time", "", "See you at 09:45 or 18h30."},
		{"ordinary link", "News", "Read more at https://example.com/newsletter?id=482913 and www.example.org/a/123456"},
		{"invoice number", "Invoice INV-2025-004821", "Please find invoice INV-2025-004821 attached, amount 120.00 EUR."},
		{"newsletter number", "Weekly digest", "Join 482913 readers who get our weekly digest. Issue 7291."},
		{"ZIP codes", "", "Paris 75001 — Beverly Hills, CA 90210"},
		{"postcode word", "", "Code postal : 75001"},
		{"ZIP code word", "", "Enter your ZIP code 90210 to find a store."},
		{"promo code", "Sale", "Use promo code SUMMER25 for 25% off orders over 1000 dollars."},
		{"error code", "", "Error code 80070005 while saving."},
		{"IBAN bad check", "", "IBAN FR75 3000 6000 0112 3456 7890 189"},
		{"IBAN bad check compact", "", "IBAN DE88370400440532013000"},
		{"card bad Luhn", "", "Card 4111 1111 1111 1112"},
		{"16 digits, Luhn, no card prefix", "", "Ref 8888 8888 8888 8888 and 1234567812345670"},
		{"13-digit barcode", "", "EAN 4222222222222"},
		{"NIR bad key", "", "NIR 1 85 05 78 006 084 92"},
		{"NIR 2A bad key", "", "NIR 2 90 03 2A 123 456 95"},
		{"password talk", "Security notice", "We will never ask for your password. Your password was changed on 14/06/2025."},
		{"password expiry", "", "Your password is about to expire in 7 days."},
		{"password stars", "", "Username: jdoe\nPassword: ********"},
		{"version and year", "", "Version 2.4.1, © 2025 Example Inc., since 1998."},
		{"room number", "Meeting", "Meeting at 14:30 on 2025-06-14, room 4829."},
	}
}

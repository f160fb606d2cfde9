package mask_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/postern-mcp/postern/internal/mask"
)

// filler is text without a digit, to push a code far down a body.
var filler = strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 1100) // > 60 KB

// A masked case: the message (subject and body) and the field under test, the secrets that
// must not survive in it, and the marker expected in its place.
type masked struct {
	name          string
	subject, body string
	inSubject     bool     // check the subject; else the body
	other         string   // check this field instead (a sender name, an attachment name)
	secrets       []string // none may remain, separators ignored
	keep          string   // for IBAN, card and NIR: the last four, which remain
	marker        string   // expected in the output
}

func maskedCases() []masked {
	const code = "Your verification code is "
	return []masked{
		// One-time codes, every form.
		{name: "plain code", body: code + "482913.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "3+3 space", body: code + "482 913.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "3+3 dash", body: code + "482-913.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "2+2+2", body: code + "48 29 13.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "digit by digit", body: code + "4 8 2 9 1 3", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "table cells, tabs", body: "Your code:\n\n4\t8\t2\t9\t1\t3\n\nIt expires in 10 minutes.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "table cells, lines", body: "Enter this code to sign in:\n4\n8\n2\n9\n1\n3\n", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "table cells, pipes", body: "Security code\n| 4 | 8 | 2 | 9 | 1 | 3 |", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "no-break space", body: code + "482\u00a0913", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "narrow no-break spaces", body: code + "48\u202f29\u202f13", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "alphanumeric", body: "Your security code: X7K-9QP", secrets: []string{"X7K9QP"}, marker: mask.HiddenCode},
		{name: "google style", subject: "G-482913 is your Google verification code", inSubject: true, secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "subject only", subject: "482913 is your Example sign-in code", body: "Thanks for using Example.", inSubject: true, secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "code far from its words", subject: "Your sign-in code", body: "Hello,\n\nuse this one: 71 03 95\n\nThe Example team", secrets: []string{"710395"}, marker: mask.HiddenCode},
		{name: "quoted reply", body: "Did this work?\n\n> Your one-time code is 482913\n> Do not share it with anyone.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "quoted table cells", body: "See below.\n> Your login code:\n> 4\n> 8\n> 2\n> 9\n> 1\n> 3", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "far down a long body", body: "Your verification code is at the end.\n" + filler + "\n482913\n", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "French", body: "Votre code de vérification : 482913. Ne le partagez pas.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "French single use", body: "Code à usage unique\u00a0: 729 104", secrets: []string{"729104"}, marker: mask.HiddenCode},
		{name: "German", body: "Ihr Bestätigungscode lautet 4829 13.", secrets: []string{"482913"}, marker: mask.HiddenCode},
		{name: "four digits", body: "Your login code: 4829", secrets: []string{"4829"}, marker: mask.HiddenCode},
		{name: "eight digits", body: "Your OTP is 48291376", secrets: []string{"48291376"}, marker: mask.HiddenCode},
		{name: "lowercase alphanumeric", body: "2FA code: a1b2c3 (valid 5 minutes)", secrets: []string{"a1b2c3"}, marker: mask.HiddenCode},
		{name: "code in a name", subject: "Your login code", body: "Hi", other: "Example Security 482913", secrets: []string{"482913"}, marker: mask.HiddenCode},
		// Links in a message that carries a code.
		{name: "https link", body: "Your sign-in link: https://example.com/magic?token=Zx81kQ", secrets: []string{"Zx81kQ", "example.com/magic"}, marker: mask.HiddenLink},
		{name: "capital link", body: "VERIFY YOUR EMAIL: HTTPS://EXAMPLE.COM/VERIFY?T=QX7P2", secrets: []string{"QX7P2", "EXAMPLE.COM"}, marker: mask.HiddenLink},
		{name: "www link", body: "Confirm your email at www.example.com/verify?t=AbC987.", secrets: []string{"AbC987", "www.example"}, marker: mask.HiddenLink},
		{name: "bare host link", body: "Magic link: example.com/magic/Qx7pLm2, valid 15 minutes", secrets: []string{"Qx7pLm2"}, marker: mask.HiddenLink},
		{name: "bracketed link", body: "Your code is 482913 or click <https://example.org/login?otp=482913>", secrets: []string{"482913", "example.org/login"}, marker: mask.HiddenLink},
		{name: "reset link", body: "Reset your password: https://example.net/reset/8f3a9c", secrets: []string{"8f3a9c"}, marker: mask.HiddenLink},
		// Messages that give a password: withheld whole.
		{name: "EN password", body: "Hello,\nYour password is: Xk82!pq9\nBye", secrets: []string{"Xk82!pq9"}, marker: mask.WithheldPrefix},
		{name: "EN temporary", body: "Temporary password: Hq7-Lm2z\nChange it soon.", secrets: []string{"Hq7-Lm2z"}, marker: mask.WithheldPrefix},
		{name: "EN one line", body: "Your new password is Zq92mx7", secrets: []string{"Zq92mx7"}, marker: mask.WithheldPrefix},
		{name: "FR password", body: "Bonjour,\nVotre mot de passe : Tr0ub4dor\nCordialement", secrets: []string{"Tr0ub4dor"}, marker: mask.WithheldPrefix},
		{name: "FR provisional", body: "Identifiant : jdupont\nMot de passe provisoire : Ab12cd34", secrets: []string{"Ab12cd34"}, marker: mask.WithheldPrefix},
		{name: "DE password", body: "Hallo,\nIhr Passwort: Geh31m!x\nGrüße", secrets: []string{"Geh31m!x"}, marker: mask.WithheldPrefix},
		{name: "password table", body: "Username:\tjdoe\nPassword:\n\thunter22\n", secrets: []string{"hunter22"}, marker: mask.WithheldPrefix},
		{name: "subject gives password", subject: "Your password is Zq92mx7", body: "See subject.", inSubject: true, secrets: []string{"Zq92mx7"}, marker: mask.HiddenPassword},
		// IBANs.
		{name: "IBAN FR spaced", body: "IBAN : FR76 3000 6000 0112 3456 7890 189", secrets: []string{"FR7630006000011234567890189"}, keep: "0189", marker: mask.IBANPrefix},
		{name: "IBAN FR compact", body: "Pay to FR7630006000011234567890189.", secrets: []string{"FR7630006000011234567890189"}, keep: "0189", marker: mask.IBANPrefix},
		{name: "IBAN DE spaced", body: "Konto DE89 3704 0044 0532 0130 00 bei der Bank", secrets: []string{"DE89370400440532013000"}, keep: "3000", marker: mask.IBANPrefix},
		{name: "IBAN DE lower compact", body: "iban de89370400440532013000", secrets: []string{"DE89370400440532013000"}, keep: "3000", marker: mask.IBANPrefix},
		{name: "IBAN GB", body: "Sort it to GB82 WEST 1234 5698 7654 32 please", secrets: []string{"GB82WEST12345698765432"}, keep: "5432", marker: mask.IBANPrefix},
		{name: "IBAN ES full last group", body: "Cuenta: ES91 2100 0418 4502 0005 1332 and thanks", secrets: []string{"ES9121000418450200051332"}, keep: "1332", marker: mask.IBANPrefix},
		// Payment cards.
		{name: "Visa spaces", body: "Card 4111 1111 1111 1111 exp 12/27", secrets: []string{"4111111111111111"}, keep: "1111", marker: mask.CardPrefix},
		{name: "Visa dashes", body: "Card: 4111-1111-1111-1111.", secrets: []string{"4111111111111111"}, keep: "1111", marker: mask.CardPrefix},
		{name: "Mastercard", body: "Charged to 5555 5555 5555 4444", secrets: []string{"5555555555554444"}, keep: "4444", marker: mask.CardPrefix},
		{name: "Mastercard 2-series dashes", body: "Carte 2223-0031-2200-3222", secrets: []string{"2223003122003222"}, keep: "3222", marker: mask.CardPrefix},
		{name: "Amex", body: "Amex 3782 822463 10005 on file", secrets: []string{"378282246310005"}, keep: "0005", marker: mask.CardPrefix},
		{name: "Visa compact", body: "card=4012888888881881", secrets: []string{"4012888888881881"}, keep: "1881", marker: mask.CardPrefix},
		{name: "Discover no-break", body: "Discover 6011\u00a01111\u00a01111\u00a01117", secrets: []string{"6011111111111117"}, keep: "1117", marker: mask.CardPrefix},
		// French social security numbers.
		{name: "NIR spaced", body: "N° de sécurité sociale : 1 85 05 78 006 084 91", secrets: []string{"185057800608491"}, keep: "8491", marker: mask.NIRPrefix},
		{name: "NIR compact", body: "NIR 185057800608491.", secrets: []string{"185057800608491"}, keep: "8491", marker: mask.NIRPrefix},
		{name: "NIR Corsica 2A", body: "Assurée : 2 90 03 2A 123 456 94", secrets: []string{"290032A12345694"}, keep: "5694", marker: mask.NIRPrefix},
		{name: "NIR Corsica 2B", body: "Assuré : 1 72 11 2B 045 678 01", secrets: []string{"172112B04567801"}, keep: "7801", marker: mask.NIRPrefix},
	}
}

// strip keeps letters and digits only, upper-cased: what a search for the number would match
// however it is spaced.
func strip(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

func TestMasked(t *testing.T) {
	cases := maskedCases()
	if len(cases) < 35 {
		t.Fatalf("only %d masked cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := mask.Inspect(c.subject, c.body)
			in := c.body
			switch {
			case c.inSubject:
				in = c.subject
			case c.other != "":
				in = c.other
			}
			out, n := mask.Apply(in, v)
			if n == 0 || !strings.Contains(out, c.marker) {
				t.Fatalf("Apply(%.80q) = %.200q, %d; want %q in it", in, out, n, c.marker)
			}
			for _, sec := range c.secrets {
				if strings.Contains(out, sec) {
					t.Errorf("%q remains in %.200q", sec, out)
				}
				whole := strip(sec)
				if c.keep != "" {
					whole = whole[:len(whole)-4]
				}
				if strings.Contains(strip(out), whole) {
					t.Errorf("%q remains, separators ignored, in %.200q", whole, out)
				}
			}
			if c.keep != "" && !strings.Contains(out, c.keep+"]") {
				t.Errorf("last four %q not kept in %q", c.keep, out)
			}
			if c.marker == mask.HiddenCode && strings.ContainsAny(mask.HiddenCode, "0123456789") {
				t.Errorf("code marker holds a digit")
			}
			again, n2 := mask.Apply(out, v)
			if again != out || n2 != 0 {
				t.Errorf("not idempotent: %.200q → %.200q (%d)", out, again, n2)
			}
		})
	}
}

func TestLeftAlone(t *testing.T) {
	cases := []struct{ name, subject, body string }{
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
	if len(cases) < 25 {
		t.Fatalf("only %d left-alone cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := mask.Inspect(c.subject, c.body)
			if v.HasCode || v.Withheld {
				t.Errorf("Inspect(%q, %q) = %+v", c.subject, c.body, v)
			}
			for _, s := range []string{c.subject, c.body} {
				if out, n := mask.Apply(s, v); out != s || n != 0 {
					t.Errorf("Apply(%q) = %q, %d; want it unchanged", s, out, n)
				}
				if out, n := mask.Text(s); out != s || n != 0 {
					t.Errorf("Text(%q) = %q, %d; want it unchanged", s, out, n)
				}
			}
		})
	}
}

func TestWithheld(t *testing.T) {
	subject := "Your temporary password"
	body := "Hello,\n\nYour temporary password is Hq7-Lm2z for 24 hours.\n"
	v := mask.Inspect(subject, body)
	if !v.Withheld || v.Reason != mask.ReasonPassword {
		t.Fatalf("Inspect = %+v", v)
	}
	if got := fmt.Sprintf("%+v", v); got != "withheld: "+mask.ReasonPassword {
		t.Errorf("a verdict prints as %q; want only what it says", got)
	}
	out, n := mask.Apply(body, v)
	if want := mask.WithheldPrefix + mask.ReasonPassword + "]"; out != want || n != 1 {
		t.Errorf("body → %q, %d; want %q", out, n, want)
	}
	if out, n := mask.Apply(subject, v); out != subject || n != 0 {
		t.Errorf("subject → %q, %d; want it kept", out, n)
	}
	// A sender name stays; a body that changed after Inspect (line breaks) is still withheld.
	if out, _ := mask.Apply("Example Support", v); out != "Example Support" {
		t.Errorf("name → %q", out)
	}
	if out, _ := mask.Apply(strings.ReplaceAll(body, "Hello", "Hi"), v); !strings.HasPrefix(out, mask.WithheldPrefix) {
		t.Errorf("changed body → %q", out)
	}
	// A Verdict not made by Inspect still withholds a body.
	if out, _ := mask.Apply(body, mask.Verdict{Withheld: true}); !strings.HasPrefix(out, mask.WithheldPrefix) {
		t.Errorf("bare verdict → %q", out)
	}
	// An error string that gives a password goes whole.
	if out, n := mask.Text("login failed: password=S3cr3t!x"); strings.Contains(out, "S3cr3t") || n == 0 {
		t.Errorf("Text → %q, %d", out, n)
	}
	// A one-time password is a code, not a withheld password.
	v = mask.Inspect("", "Your one-time password is 482913.")
	if v.Withheld || !v.HasCode {
		t.Errorf("one-time password: %+v", v)
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"invalid code 482913: your verification code has expired": "invalid code [code hidden]: your verification code has expired",
		"unknown message id 123456":                               "unknown message id 123456",
		"iban FR7630006000011234567890189 refused":                "iban [IBAN ending 0189] refused",
		"card 4111 1111 1111 1111":                                "card [card ending 1111]",
	} {
		out, _ := mask.Text(in)
		if out != want {
			t.Errorf("Text(%q) = %q; want %q", in, out, want)
		}
		if again, n := mask.Text(out); again != out || n != 0 {
			t.Errorf("Text not idempotent on %q: %q", out, again)
		}
	}
}

// TestLargeInputs runs inputs of a megabyte built to defeat a careless scanner (long runs of
// what each rule reads ahead over). It asserts no timing (SPEC §11); a quadratic rule would
// make it run for minutes. BenchmarkApply gives the throughput.
func TestLargeInputs(t *testing.T) {
	for _, in := range largeInputs() {
		v := mask.Inspect(in[:100], in)
		out, _ := mask.Apply(in, mask.Verdict{HasCode: true})
		if again, _ := mask.Apply(out, mask.Verdict{HasCode: true}); again != out {
			t.Errorf("not idempotent on a large %.20q…", in)
		}
		mask.Apply(in, v)
		mask.Text(in)
	}
}

func largeInputs() []string {
	const mb = 1 << 20
	rep := func(s string) string { return strings.Repeat(s, mb/len(s)+1)[:mb] }
	return []string{
		rep("a."), rep("a-"), rep("1 "), rep("1\n"), rep("1-a-"), rep("password:"),
		rep("password:http://x/"), rep("code "), rep("code 12 "), rep("www."), rep("x.com/"),
		rep("FR76 "), rep("4111 "), rep("1 85 05 "), rep("["), rep("[code hidden"),
		rep("é1"), rep("\u00a0"), "1" + rep(" ") + "a", rep("Passwort ist "), rep("https://"),
		rep("(") + "https://example.com/" + rep(")"),
	}
}

func BenchmarkApply(b *testing.B) {
	body := "Your verification code is 482913.\n" + filler + "\nhttps://example.com/x 4111 1111 1111 1111\n"
	v := mask.Inspect("", body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		mask.Inspect("", body)
		mask.Apply(body, v)
	}
}

func BenchmarkAdversarial(b *testing.B) {
	ins := largeInputs()
	b.SetBytes(int64(len(ins[0])))
	for b.Loop() {
		for _, in := range ins {
			mask.Text(in)
		}
	}
}

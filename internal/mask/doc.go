// Package mask hides secrets in mail before an agent or the search index sees them (SPEC §7).
// It never logs, stores or returns what it masks, and its markers hold no digit of a secret.
//
// What goes: one-time codes and every link of a message that carries one, the whole body of a
// message that gives a password, IBANs, payment cards and French social security numbers. A
// message is judged once, from its own words, by [Inspect]; every field of it (subject, body,
// names, attachment names) then goes through [Apply] with that [Verdict]. [Text] does both for a
// string that belongs to no message (an error, an argument in the audit log).
//
// # Markers
//
//	[code hidden]                           a one-time code, or any number of 4+ digits in a message that carries one
//	[link hidden]                           a link in a message that carries a code
//	[password hidden]                       the value after "password:", "mot de passe :", "Passwort:", …
//	[card ending 1111]                      a payment card (Luhn), last four digits kept
//	[IBAN ending 0189]                      an IBAN (ISO 13616, mod 97), last four characters kept
//	[social security number ending 8491]    a French NIR (key checked, 2A/2B), last four kept
//	[message withheld: it gives a password] the whole body of a message that gives a password
//
// # Decisions
//
//   - A message carries a code when it says so: a phrase such as "verification", "one-time",
//     "OTP", "2FA", "security code", "sign-in code", "magic link", "do not share this code",
//     "reset your password", "code de vérification", "code à usage unique", "ne le partagez pas",
//     "Bestätigungscode", "código de verificación" … (English, French, German, Spanish, Italian,
//     Dutch, Portuguese; case, accents and spacing ignored), or the bare word "code"/"PIN" with a
//     number of four digits or more (not a year) within 64 bytes, unless it is a promo, postal,
//     ZIP, error, client … code. A password-reset or e-mail confirmation link counts: it is as
//     good as a code.
//   - In such a message we do not guess which number is the code: every run of digits joined by
//     spaces of any kind, tabs, line breaks, dashes, dots, commas, '|' or '>' that holds four
//     digits or more is masked whole (so "48 29 13", a digit per table cell and a quoted
//     "> 4\n> 8" go, and so do its dates, amounts and phone numbers); so is every word or
//     hyphenated word with a letter and either 4+ digits or 2+ digits in 6+ characters
//     ("X7K-9QP", "G-482913"); and every link: scheme://… in any case, www.…, or a host name
//     followed by a path ("example.com/magic/…"). Bare host names and e-mail addresses stay.
//   - A message gives a password when a label (password, mot de passe, Passwort, Kennwort,
//     contraseña, senha, wachtwoord, passphrase, API key, secret key, PIN …) is followed by ':'
//     or '=' and a value that is not a placeholder ("********", "(hidden)", a link, a word such as
//     "reset" or "changed"), or by "is"/"est"/"ist"/"lautet" and a value with a digit, a symbol or
//     an inner capital ("is hunter2", not "is about to expire"), or when it speaks of a
//     "temporary password" / "mot de passe provisoire" / "temporäres Passwort". A "one-time
//     password" is a code, not a password. The value itself is masked wherever it appears, in
//     any message.
//   - IBANs: two letters, two check digits (02–98), 15–34 characters in all, in one word or in
//     groups of four separated by single spaces, any case, any country; mod 97 must hold. One
//     that has the shape but fails the check is left alone whole, in a message without a code.
//   - Cards: 13–19 digits passing Luhn, either grouped like a card (4-4-4-4, 4-4-4-1…4,
//     4-4-4-4-1…3, 4-6-5, 4-6-4 with spaces, no-break spaces, dashes or dots) and starting with 2–6,
//     or in one piece with a known brand's prefix and length (Visa 4: 16/19, Mastercard 51–55
//     and 2221–2720: 16, Amex 34/37: 15, Discover 6011/644–649/65 and JCB 3528–3589: 16–19).
//     Thirteen and fourteen digits in one piece are never cards: they are EAN barcodes and SIRET
//     numbers. A 16-digit order number in one piece that happens to pass Luhn with a brand
//     prefix is masked: that is the price of catching "4012888888881881".
//   - NIR: sex 1/2/3/4/7/8, a possible month (01–12, 20–42, 50–99), department not 00, 2A/2B
//     read as 19/18, key = 97 − (13 digits mod 97); spaces optional at each group boundary.
//   - Everything else stays: phone numbers, order and tracking numbers, SIRET, dates, amounts,
//     times, numbers failing their check, and links in messages without a code.
//   - Apply with a withheld verdict replaces the body (the text given to Inspect) with one
//     sentence and masks the subject; any other field is replaced too when it spans several
//     lines or gives a password itself, so a body changed after Inspect still goes whole.
//
// Every function runs in time linear in its input and never panics. Applying twice gives the
// same text as applying once: markers are recognised and left alone.
//
// Limitations: a code of letters only ("XKQPTZ") is not recognised; a card or NIR is looked for
// only at the start of a run of numbers ("12 4111 1111 1111 1111" keeps it); a short one-line
// body changed after Inspect whose password is only announced in the subject is masked, not
// withheld; a link broken across lines is masked only up to the break.
package mask

// Package mask hides secrets in mail before an agent or the search index sees them.
// It never logs, stores or returns what it masks, and its markers hold no digit of a secret.
//
// What goes: one-time codes and every link of a message that carries one, sign-in, magic, reset
// and confirm links in any message, the whole body of a message that gives a password, IBANs,
// payment cards and French social security numbers. A message is judged once, from its own
// words, by [Inspect]; every field of it (subject, body, names, attachment names) then goes
// through [Apply] with that [Verdict]. [Text] does both for a string that belongs to no message
// (an error, an argument in the audit log).
//
// # Markers
//
//	[code hidden]                           a one-time code, or any number of 4+ digits in a message that carries one
//	[link hidden]                           a link in a message that carries a code; a sign-in, magic, reset or confirm link in any
//	[password hidden]                       the value after "password:", "mot de passe :", "Passwort:", …
//	[card ending 1111]                      a payment card (Luhn), last four digits kept
//	[IBAN ending 0189]                      an IBAN (ISO 13616, mod 97), last four characters kept
//	[social security number ending 8491]    a French NIR (key checked, 2A/2B), last four kept
//	[message withheld: it gives a password] the whole body of a message that gives a password
//
// # The view
//
// Every rule reads a folded view of the text (fold.go), not the text: compatibility forms
// (NFKC: fullwidth "４８２９", mathematical "𝐜𝐨𝐝𝐞", ligatures, no-break spaces) as their plain
// letters, digits and spaces, every Unicode decimal digit as its ASCII digit, Cyrillic and Greek
// look-alikes as the Latin letters they are drawn as, and no invisible character at all. What a
// rule hides in the view is replaced in the text itself, whole runes at a time, so the agent
// reads its own characters with markers where the secrets were. [Line] and [Body] clean first
// (as the answer boundary does) and then mask: what they return is what the agent is given,
// and what sync stores and indexes ([LineOf], [BodyOf]).
//
// # Decisions
//
//   - The words are data: phrases.go holds one table of rows (language, kind, text) in 20-odd
//     languages (en fr de es it pt nl pl cs sv da nb fi tr ru uk ja zh ko ar he, and id vi th),
//     each kind a role below; every text is folded and normalized as the text it is matched
//     against is (case, accents, spacing and look-alike letters ignored), and phrase_test.go
//     tests each row. Phrases of scripts written without spaces (Chinese, Japanese, Korean, Thai)
//     match without word boundaries ("인증번호는", "验证码482913"); Arabic and Hebrew ones may
//     follow an attached prefix (و, ال, ب…; ה, ב, ל…), Arabic ones take a pronoun suffix.
//   - A message carries a code when its words name one: a code phrase ("verification code",
//     "OTP", "magic link", "验证码", "код подтверждения", "Bestätigungscode"…); a code remark
//     ("confirmation code", "access code", "code expires") unless a not-a-code word stands
//     right before it or after it ("booking confirmation code", "promo code is valid"); a bare
//     code word ("code", "PIN", "kod", "コード", "رمز") that is no promo, postal, order, flight …
//     code, with a code-shaped token within 64 bytes, or a presented one within 200 bytes after
//     it; or a sign-in verb ("verify", "sign in", "log in", "confirm", "reset your password",
//     "2FA", "войти", "ログイン") with a presented token within 64 bytes before or 120 after it,
//     or just before it ("Use 482913 to sign in"). The subject and the text are read apart, and
//     together when one has the word and the other the token (messageCode).
//   - A code-shaped token: 4–10 digits, not a year, in one group or in groups of one size (8
//     digits at most: "48 29 13", a digit per cell) or two groups the first slightly longer
//     ("4829 13"), joined by spaces, line breaks, '-', '_', '|', '>', '[', ']', '*', '·', '•';
//     or 4–10 letters and digits with a digit, joined by '-' or '_', holding no word of four
//     letters and no number with a unit ("X7K-9QP", "K7Q2"; not "summer25", "100mg"). Not one:
//     part of a decimal, time or date, after '+', '#', a currency sign or '№'; negated after an
//     order, tracking, phone, account … word (or "order number is"), before a unit or currency,
//     or with a '%' just after (a discount). Presented: alone on its line, after ':' or '=', after
//     "enter", "use", "is", "是", "は"…, or at the start of the text. So "verify the shipping
//     address for order 48291376", "MFA" after a name, promo, booking and flight codes stay
//     readable. A marker (what a first pass masked) stands for nothing: no token touches one and
//     no code word reaches a token across one, so a second pass never finds more.
//   - In a message with a code we do not guess which number is the code: every run of digits
//     joined by spaces of any kind, tabs, line breaks, dashes, dots, commas, '|', '>', '_', '/',
//     '\\', '*', '~', brackets or parentheses that holds four digits or more is masked whole (so
//     "48 29 13", "[4][8][2]…", a quoted "> 4\n> 8" go, and so do its dates, amounts and phone
//     numbers); so is every word joined by '-' or '_' (or short capital codes apart by a space,
//     "X7K 9QP") with a letter and four digits or more, two or three in four characters or more
//     (starting with a letter or changing twice: "K7Q2", "7KQ2P"), or one in five or more that
//     changes twice and holds no word; a character set's name ("iso-8859-15", "windows-1252",
//     "utf-16le") stays. Every link goes: scheme://… in any case, www.…, or a host name followed
//     by a path ("example.com/magic/…"). Bare host names and e-mail addresses stay.
//   - A sign-in, magic, reset or confirm link goes in any message: when a sign-in verb or a
//     password label stands before it on its line or the line before (blank lines aside: "Click
//     the link below to log in:", "Forgot your password? Use this link"), or when the link says
//     so itself: a path segment or query key such as login, signin, magic, reset, verify,
//     confirm, token, otp, auth, sso; or a long token: 20+ letters and digits with both, 24+
//     letters, digits, '-' and '_' with capitals, small letters and digits, or a UUID (32+ hex
//     digits). A file name's stem is no token; newsletters, "?id=482913", "?utm_source=…" and
//     slugs stay.
//   - A message gives a password when a password, key or PIN label (password, mot de passe,
//     Passwort, hasło, пароль, パスワード, 密码, 비밀번호, şifre, lösenord, heslo, adgangskode,
//     passord, salasana, wachtwoord, senha, contraseña, Kennwort, كلمة المرور, סיסמה, API key, PIN …)
//     is followed by ':' or '=' (any width) and a value that is not a placeholder ("********",
//     "(hidden)", a link, a stop word such as "reset" or "changed"; a value of letters only must
//     end its line), on the same line or the next; or by a connector ("is", "has been set to",
//     "est", "lautet", "to", "je", "是", "は", "는", "هي", "היא") or a dash between blanks, and a
//     value with a digit, a symbol or a capital after a small letter ("is hunter2", not "is
//     about to expire"); or when the label starts a line or table cell and such a value of six
//     characters or more ends the next cell or line ("Password\tXk82!pq9", "Password\nXk82!pq9",
//     "| Password | Xk82!pq9 |", the "Password Xk82!pq9" of an HTML table); or when it speaks
//     of a "temporary password", "mot de passe provisoire", "hasło tymczasowe", "临时密码" ….
//     A filler may stand between label and connector ("provisoire", "الخاصة بك"); a one-time
//     word before or after the label ("one-time", "ワンタイム", "à usage unique") makes it a
//     code. The value itself is masked wherever it appears, in any message; in a withheld
//     message, the values it gives are kept as fingerprints (secretValues), so the same value in
//     its subject, a name or an attachment name ("Xk82!pq9.txt") goes too.
//   - The groups of an IBAN, a card or a NIR may be joined by any separator of any width and
//     kind (groupSep): up to six spaces, tabs, dashes of every kind, dots, middle dots, bullets
//     and one line break (then '>' or '|' too, for quoted replies and tables); a blank line ends
//     a number. Digits in any script count (the view), and so do invisible characters between
//     them (the view leaves them out).
//   - IBANs: two letters, two check digits (02–98), 15–34 characters in all, in one word or in
//     groups of any size (fours, fives), any case, any country; mod 97 must hold, the longest
//     run of groups first. One that has the shape but fails the check has its first group left
//     alone; the rest is read by the other rules.
//   - Cards: 13–19 digits passing Luhn, either grouped like a card (4-4-4-4, 4-4-4-1…4,
//     4-4-4-4-1…3, 4-6-5, 4-6-4) and starting with 2–6,
//     or in one piece with a known brand's prefix and length (Visa 4: 16/19, Mastercard 51–55
//     and 2221–2720: 16, Amex 34/37: 15, Discover 6011/644–649/65 and JCB 3528–3589: 16–19).
//     Thirteen and fourteen digits in one piece are never cards: they are EAN barcodes and SIRET
//     numbers. A 16-digit order number in one piece that happens to pass Luhn with a brand
//     prefix is masked: that is the price of catching "4012888888881881".
//   - NIR: sex 1/2/3/4/7/8, a possible month (01–12, 20–42, 50–99), department not 00, 2A/2B
//     read as 19/18, key = 97 − (13 digits mod 97); separators optional at each group
//     boundary, and the key may stand apart, after "clé", "key" … ("… 084 (clé 91)").
//   - Everything else stays: phone numbers, order and tracking numbers, SIRET, dates, amounts,
//     times, numbers failing their check, and other links in messages without a code.
//   - Apply with a withheld verdict replaces the body (the text given to Inspect) with one
//     sentence and masks the subject; any other field is replaced too when it spans several
//     lines or gives a password itself, so a body changed after Inspect still goes whole.
//
// Every function runs in time linear in its input and never panics. Applying twice gives the
// same text as applying once: markers are recognised and left alone.
//
// Limitations: a code of letters only ("XKQPTZ") is not recognised, nor one joined by '/'
// ("X7K/9QP"); a sign-in word after its link ("https://… to sign in") does not count; a card or NIR is looked for
// only at the start of a run of numbers ("12 4111 1111 1111 1111" keeps it); a short one-line
// body changed after Inspect whose password is only announced in the subject is masked, not
// withheld; a link broken across lines is masked only up to the break.
package mask

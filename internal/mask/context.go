package mask

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// normalize lowercases s, strips the accents of Latin letters, turns every run of spaces (tabs,
// line breaks, no-break spaces) into one space, typographic apostrophes into ' and dashes into -,
// and drops invisible format characters, so that context phrases are matched with one
// strings.Index each.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		case r == '\u2019' || r == '\u2018' || r == '\u02BC' || r == '`':
			r = '\''
		case r >= '\u2010' && r <= '\u2015' || r == '\u2212':
			r = '-'
		case r == '\u00AD' || r >= '\u200B' && r <= '\u200D' || r == '\u2060' || r == '\uFEFF':
			continue
		}
		space = false
		r = unicode.ToLower(r)
		if r < 0x80 {
			b.WriteByte(byte(r))
			continue
		}
		if f, ok := fold[r]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var fold = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae",
	'ç': "c", 'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i",
	'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'œ': "oe",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'ÿ': "y", 'ß': "ss",
}

// codePhrases say on their own that a message carries a one-time code or a sign-in link (or a
// password-reset link, which is as good as one). Normalized spelling; a phrase ending in '*'
// matches as a word prefix, any other as whole words.
var codePhrases = []string{
	// English
	"verification", "verify", "verifying", "one-time", "one time code", "one time password",
	"one time passcode", "onetime", "otp", "2fa", "mfa", "two-factor", "two factor", "2-factor",
	"2-step", "two-step", "two step verification", "multi-factor", "security code",
	"sign-in code", "sign in code", "signin code", "login code", "log-in code", "log in code",
	"sign-in link", "sign in link", "signin link", "login link", "log-in link", "log in link",
	"magic link", "magic-link", "link to sign in", "link to log in", "confirmation code",
	"authentication code", "auth code", "access code", "passcode", "pass code", "single-use code",
	"enter this code", "enter the code below", "enter the following code", "use this code to",
	"your code is", "is your code", "do not share this code", "don't share this code",
	"dont share this code", "never share this code", "do not share it with anyone",
	"don't share it with anyone", "code expires", "code will expire", "code is valid",
	"link expires", "link will expire", "link is valid", "confirm your email", "confirm your e-mail",
	"reset your password", "password reset", "reset password", "set your password",
	"choose a new password", "create a new password",
	// French
	"code de verification", "code de confirmation", "code a usage unique", "usage unique",
	"code de securite", "code d'acces", "code de connexion", "code temporaire", "code unique",
	"code d'authentification", "code de validation", "votre code est", "est votre code",
	"ne le partagez pas", "ne le partagez avec personne", "ne partagez pas ce code",
	"ne partagez jamais", "ne le communiquez", "ne communiquez pas ce code",
	"saisissez le code", "saisissez ce code", "saisir le code", "entrez le code", "entrez ce code",
	"lien de connexion", "lien magique", "double authentification", "authentification a deux",
	"authentification forte", "code est valable", "lien est valable", "expire dans",
	"reinitialis*", "confirmer votre adresse", "confirmez votre adresse", "validez votre adresse",
	// German
	"bestatigungscode", "sicherheitscode", "verifizierungscode", "verifizierung*",
	"einmalcode", "einmalpasswort", "einmal-code", "anmeldecode", "zugangscode", "ihr code lautet",
	"dein code lautet", "ihr code ist", "dein code ist", "zwei-faktor", "anmeldelink",
	"geben sie diesen code", "gib diesen code", "passwort zurucksetzen", "kennwort zurucksetzen",
	"bestatigen sie ihre e-mail",
	// Spanish, Italian, Dutch, Portuguese
	"codigo de verificacion", "codigo de seguridad", "codigo de acceso", "codigo de confirmacion",
	"tu codigo es", "su codigo es", "no compartas", "codice di verifica", "codice di sicurezza",
	"codice di accesso", "il tuo codice", "verificatiecode", "beveiligingscode", "inlogcode",
	"je code is", "uw code is", "codigo de verificacao", "seu codigo",
}

// withheldPhrases say that a message gives a password even without a "password: value" line.
var withheldPhrases = []string{
	"temporary password", "temp password", "initial password", "your new password is",
	"mot de passe temporaire", "mot de passe provisoire", "mot de passe initial",
	"temporares passwort", "temporare passwort", "vorlaufiges passwort", "initialpasswort",
	"initiales passwort", "contrasena temporal", "contrasena provisional", "password temporanea",
	"password provvisoria", "tijdelijk wachtwoord", "senha temporaria", "senha provisoria",
}

// codeWords are the bare words for a code; they count only near a number of four digits or
// more and not after or before a word that makes them a promotion, a postcode, …
var codeWords = []string{"code", "codes", "codigo", "codice", "kode", "pin"}

var notSecretBefore = map[string]bool{
	"promo": true, "promotional": true, "discount": true, "coupon": true, "voucher": true,
	"postal": true, "zip": true, "post": true, "area": true, "country": true, "source": true,
	"qr": true, "bar": true, "dress": true, "error": true, "status": true, "http": true,
	"tracking": true, "product": true, "item": true, "tax": true, "sort": true, "referral": true,
	"invite": true, "invitation": true, "airport": true, "iata": true, "color": true,
	"colour": true, "html": true, "sample": true, "reference": true, "booking": true,
	"offer": true, "sale": true, "gift": true, "rabatt": true, "gutschein": true,
	"swift": true, "bic": true, "bank": true, "branch": true, "client": true, "customer": true,
	"zone": true, "exit": true, "response": true, "return": true,
}

var notSecretAfter = []string{
	"postal", "promo", "de reduction", "reduc", "source", "barre", "-barre", "d'erreur",
	"client", "article", "produit", "avantage", "de parrainage", "cadeau", "remise",
	"de reference", "de reservation", "promocional", "de descuento", "sconto", "fiscale",
	"postale", "promozionale", "swift", "bic", "banque", "guichet", "couleur",
}

// phraseSet finds whether a normalized text holds any of a list of phrases, on
// word boundaries as hasPhrase does, in one pass over the text: at each word
// start it looks up the phrases that begin with the word's first two bytes.
// Every phrase must begin with an ASCII letter or digit (TestPhraseSets).
type phraseSet struct {
	starts [256]bool               // first bytes of the phrases
	byPair map[uint16][]phraseItem // the phrases by their first two bytes
}

type phraseItem struct {
	text   string
	prefix bool // matches as a word prefix (the phrase ended in '*')
}

func newPhraseSet(phrases []string) *phraseSet {
	s := &phraseSet{byPair: map[uint16][]phraseItem{}}
	for _, p := range phrases {
		it := phraseItem{text: p}
		if strings.HasSuffix(p, "*") {
			it = phraseItem{text: p[:len(p)-1], prefix: true}
		}
		s.starts[it.text[0]] = true
		k := uint16(it.text[0])<<8 | uint16(it.text[1])
		s.byPair[k] = append(s.byPair[k], it)
	}
	return s
}

// in reports whether n holds one of the phrases, as hasPhrase would for some phrase.
func (s *phraseSet) in(n string) bool {
	for i := 0; i+1 < len(n); i++ {
		c := n[i]
		if !s.starts[c] {
			continue
		}
		if i > 0 {
			if p := n[i-1]; p < utf8.RuneSelf {
				if isDigit(p) || isLetter(p) {
					continue // not a word start
				}
			} else if r, _ := utf8.DecodeLastRuneInString(n[:i]); isWordRune(r) {
				continue
			}
		}
		for _, p := range s.byPair[uint16(c)<<8|uint16(n[i+1])] {
			if strings.HasPrefix(n[i:], p.text) && (p.prefix || endsWord(n, i+len(p.text))) {
				return true
			}
		}
	}
	return false
}

var (
	codeSet     = newPhraseSet(codePhrases)
	withheldSet = newPhraseSet(withheldPhrases)
)

// codeContext reports whether the normalized text says it carries a code or a sign-in link.
func codeContext(n string) bool {
	if codeSet.in(n) {
		return true
	}
	for _, w := range codeWords {
		for off := 0; ; {
			k := strings.Index(n[off:], w)
			if k < 0 {
				break
			}
			k += off
			off = k + len(w)
			if !wordBoundary(n, k, off) || w == "pin" && !pinWord(n, k) {
				continue
			}
			if negated(n, k, off) {
				continue
			}
			if numberNear(n, k, off) {
				return true
			}
		}
	}
	return false
}

// pinWord: "pin" only as "pin code", "code pin", "your pin", "pin:"; never "pin this".
func pinWord(n string, k int) bool {
	rest := n[k+3:]
	return strings.HasPrefix(rest, " code") || strings.HasPrefix(rest, ":") ||
		strings.HasPrefix(rest, " :") || strings.HasPrefix(rest, " is ") ||
		strings.HasSuffix(n[:k], "code ") || strings.HasSuffix(n[:k], "your ") ||
		strings.HasSuffix(n[:k], "votre ")
}

func withheldPhrase(n string) bool { return withheldSet.in(n) }

// hasPhrase reports whether n holds p on word boundaries (p ending in '*': as a prefix).
func hasPhrase(n, p string) bool {
	prefix := strings.HasSuffix(p, "*")
	if prefix {
		p = p[:len(p)-1]
	}
	for off := 0; ; {
		k := strings.Index(n[off:], p)
		if k < 0 {
			return false
		}
		k += off
		off = k + 1
		end := k + len(p)
		if prefix {
			end = -1
		}
		if wordBoundary(n, k, end) {
			return true
		}
	}
}

// wordBoundary reports whether n[start:end] starts and ends at word boundaries (end < 0: only
// the start is checked).
func wordBoundary(n string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(n[:start])
		if isWordRune(r) {
			return false
		}
	}
	if end >= 0 && end < len(n) {
		r, _ := utf8.DecodeRuneInString(n[end:])
		if isWordRune(r) {
			return false
		}
	}
	return true
}

// negated reports whether the code word at n[k:end] is a promotion code, a postcode, ….
func negated(n string, k, end int) bool {
	before := strings.TrimRight(n[max(0, k-24):k], " -")
	if i := strings.LastIndexAny(before, " ([/\"'"); i >= 0 {
		before = before[i+1:]
	}
	if notSecretBefore[before] {
		return true
	}
	after := strings.TrimLeft(n[end:min(len(n), end+24)], " ")
	for _, a := range notSecretAfter {
		if strings.HasPrefix(after, a) {
			return true
		}
	}
	return false
}

// numberNear reports whether a number of four digits or more (possibly grouped: "482 913",
// "4 8 2 9 1 3") that is not a year stands within 64 bytes of n[k:end].
func numberNear(n string, k, end int) bool {
	from, to := max(0, k-64), min(len(n), end+64)
	w := n[from:to]
	digits, first, last := 0, -1, -1
	flush := func() bool {
		ok := digits >= 4 && !(digits == 4 && last-first == 3 && isYear(w[first:last+1]))
		digits, first = 0, -1
		return ok
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= '0' && c <= '9':
			if first < 0 {
				first = i
			}
			digits++
			last = i
		case first >= 0 && (c == ' ' || c == '-' || c == '.' || c == '|' || c == '>') &&
			i+1 < len(w) && (w[i+1] >= '0' && w[i+1] <= '9' || w[i+1] == ' ' || w[i+1] == '|'):
		default:
			if first >= 0 && flush() {
				return true
			}
		}
	}
	return first >= 0 && flush()
}

func isYear(s string) bool {
	return len(s) == 4 && (s[:2] == "19" || s[:2] == "20")
}

// Password labels, matched case-insensitively at a word start in the original text.
type label struct {
	text   string
	reason string
}

var labels = []label{
	{"password", ReasonPassword}, {"passwort", ReasonPassword}, {"kennwort", ReasonPassword},
	{"mot de passe", ReasonPassword}, {"mot-de-passe", ReasonPassword}, {"mdp", ReasonPassword},
	{"contraseña", ReasonPassword}, {"contrasena", ReasonPassword}, {"senha", ReasonPassword},
	{"wachtwoord", ReasonPassword}, {"passphrase", ReasonPassword}, {"pwd", ReasonPassword},
	{"api key", ReasonKey}, {"api-key", ReasonKey}, {"apikey", ReasonKey},
	{"secret key", ReasonKey}, {"access key", ReasonKey}, {"clé api", ReasonKey},
	{"cle api", ReasonKey}, {"clé secrète", ReasonKey}, {"PIN", ReasonPIN},
}

// labelsByFirst holds the labels by their first letter, lower-cased.
var labelsByFirst = func() map[byte][]label {
	m := map[byte][]label{}
	for _, l := range labels {
		m[l.text[0]|0x20] = append(m[l.text[0]|0x20], l)
	}
	return m
}()

// adjectives may stand between a label and its connector: "mot de passe provisoire : …".
var adjectives = []string{
	"provisoire", "temporaire", "initial", "temporal", "provisional", "temporanea",
	"provvisoria", "temporária", "temporaria",
}

// wordConnectors introduce a value in a sentence: "your password is …".
var wordConnectors = []string{"is", "est", "ist", "lautet", "es", "è", "é", "was", "will be"}

// stopValues follow a "password:" label without being a password.
var stopValues = map[string]bool{
	"your": true, "the": true, "same": true, "none": true, "n/a": true, "unchanged": true,
	"reset": true, "click": true, "here": true, "below": true, "above": true, "changed": true,
	"updated": true, "expired": true, "expires": true, "required": true, "forgot": true,
	"forgotten": true, "enter": true, "choose": true, "chosen": true, "create": true,
	"created": true, "use": true, "using": true, "must": true, "should": true, "not": true,
	"never": true, "was": true, "will": true, "has": true, "have": true, "votre": true,
	"celui": true, "celle": true, "choisi": true, "identique": true, "inchangé": true,
	"modifié": true, "oublié": true, "défini": true, "saisissez": true, "entrez": true,
	"ihr": true, "ihres": true, "dein": true, "unverändert": true, "geändert": true,
	"vergessen": true, "hidden": true, "masqué": true, "see": true, "check": true,
	"contact": true, "please": true, "follow": true, "sent": true, "set": true, "ask": true,
	"request": true, "requested": true, "minimum": true, "length": true, "that": true,
	"this": true, "what": true, "when": true, "with": true, "from": true, "only": true,
	"secret": true, "sécurisé": true, "secure": true, "strong": true, "weak": true,
	"incorrect": true, "invalid": true, "wrong": true, "successfully": true, "nouveau": true,
	"change": true, "changer": true, "modifier": true, "réinitialiser": true, "manager": true,
}

// givesSecret returns the reason when s gives a password (or key, or PIN) as a value, "" if not.
func givesSecret(s string) string {
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += w
			continue
		}
		if _, _, reason := passwordAt(s, i); reason != "" {
			return reason
		}
		i = wordEnd(s, i)
	}
	return ""
}

// passwordAt looks for a password label at the word start i, followed by a connector and a value
// that looks like a secret. It returns the value's span (the whole run of non-space characters)
// and the reason, or reason "" when there is none. It looks at most a few hundred bytes ahead,
// except to find the end of the value.
func passwordAt(s string, i int) (vs, ve int, reason string) {
	var lb label
	j := -1
	for _, l := range labelsByFirst[s[i]|0x20] {
		if len(s)-i < len(l.text) {
			continue
		}
		if l.text == "PIN" {
			if s[i:i+3] != "PIN" {
				continue
			}
		} else if !strings.EqualFold(s[i:i+len(l.text)], l.text) {
			continue
		}
		if !wordBoundary(s, i, i+len(l.text)) {
			continue
		}
		lb, j = l, i+len(l.text)
		break
	}
	if j < 0 || oneTime(s[max(0, i-16):i]) {
		return 0, 0, ""
	}
	j = skipBlanks(s, j)
	for _, a := range adjectives {
		if hasFoldPrefix(s[j:], a) && wordBoundary(s, j, j+len(a)) {
			j = skipBlanks(s, j+len(a))
			break
		}
	}
	lenient := false
	switch {
	case j < len(s) && (s[j] == ':' || s[j] == '='):
		lenient = true
		j++
	case strings.HasPrefix(s[j:], "："):
		lenient = true
		j += len("：")
	default:
		found := false
		for _, w := range wordConnectors {
			if hasFoldPrefix(s[j:], w) && wordBoundary(s, j, j+len(w)) {
				j, found = skipBlanks(s, j+len(w)), true
				break
			}
		}
		if !found {
			return 0, 0, ""
		}
		if j < len(s) && s[j] == ':' {
			lenient = true
			j++
		}
	}
	j = skipBlanks(s, j)
	if lenient && j < len(s) && (s[j] == '\n' || s[j] == '\r') {
		// A value on the next line, as a two-column table turns into text.
		if s[j] == '\r' {
			j++
		}
		if j < len(s) && s[j] == '\n' {
			j++
		}
		j = skipBlanks(s, j)
	}
	if j >= len(s) {
		return 0, 0, ""
	}
	// A value holding what a mask put there gives nothing away; taking it for a
	// password would make a second pass withhold what the first one kept.
	for k := j; k < len(s) && k-j < 256; k++ {
		if s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r' {
			break
		}
		if s[k] == '[' && markerLen(s[k:]) > 0 {
			return 0, 0, ""
		}
	}
	end := j
	for end < len(s) && end-j < 256 {
		r, w := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r) {
			break
		}
		end += w
	}
	val := strings.TrimRight(s[j:end], ".,;!?)\"'»")
	if !looksSecret(val, lenient, lb.reason == ReasonPIN) {
		return 0, 0, ""
	}
	for end < len(s) {
		r, w := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r) {
			break
		}
		end += w
	}
	return j, end, lb.reason
}

// looksSecret tells a given password from the word after a label in a sentence.
func looksSecret(v string, lenient, pin bool) bool {
	if utf8.RuneCountInString(v) < 4 {
		return false
	}
	if pin {
		return strings.IndexFunc(v, unicode.IsDigit) >= 0
	}
	lower := strings.ToLower(v)
	if strings.HasPrefix(lower, "http") || strings.HasPrefix(lower, "www.") ||
		strings.ContainsAny(v[:1], "([<{") {
		return false
	}
	if strings.Trim(v, "*•●·xX._-") == "" {
		return false
	}
	if lenient {
		return !stopValues[strings.TrimRight(lower, ":")]
	}
	for k, r := range v {
		switch {
		case unicode.IsDigit(r):
			return true
		case unicode.IsUpper(r) && k > 0:
			return true
		case !unicode.IsLetter(r) && r != '-' && r != '\'' && r != '’':
			return true
		}
	}
	return false
}

// oneTime reports whether the text before a label makes it a one-time password (a code).
func oneTime(before string) bool {
	// "00onetime password": the first pass hid "00onetime" as a code; a second
	// pass must still read the label as a one-time password's.
	if strings.HasSuffix(before, HiddenCode+" ") {
		return true
	}
	b := strings.ToLower(before)
	for _, p := range []string{"one-time ", "one time ", "onetime ", "single-use ", "single use ", "one-time-"} {
		if strings.HasSuffix(b, p) {
			return true
		}
	}
	return false
}

func hasFoldPrefix(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// skipBlanks skips spaces and tabs (not line breaks).
func skipBlanks(s string, j int) int {
	for j < len(s) {
		r, w := utf8.DecodeRuneInString(s[j:])
		if r == '\n' || r == '\r' || !unicode.IsSpace(r) {
			break
		}
		j += w
	}
	return j
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// wordEnd returns the end of the word that starts at i.
func wordEnd(s string, i int) int {
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			break
		}
		i += w
	}
	return i
}

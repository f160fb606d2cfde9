package mask

// The words the masks read a message by, as data: one table of rows (language, kind, text),
// written as people write them. At init every text goes through the same folding and
// normalisation as the text it is matched against (foldString, then normalize), so a Russian
// phrase written in Cyrillic matches folded Russian text, and accents, case and spacing are
// ignored. phrase_test.go has a test per row.

// kind says what a row's text does.
type kind uint8

const (
	// codePhrase names a code or a sign-in link: a message that says it carries a code.
	codePhrase kind = iota + 1
	// codeRemark speaks of a code (code expires, confirmation code, access code): like a code
	// phrase, unless a not-a-code word stands right before it or a not-a-code-after phrase
	// right after it ("promo code is valid", "booking confirmation code").
	codeRemark
	// codeWord is a bare word for a code: it counts with a code-shaped token near it.
	codeWord
	// signInVerb (sign in, verify, reset your password): it counts with a code-shaped token
	// presented near it, and makes a link on its line or the next a sign-in link.
	signInVerb
	// notCode before a code word, a code phrase or a number makes it something else:
	// promo code, order 48291376.
	notCode
	// notCodeAfter after a code word or a number makes it something else: code postal, 4829 €.
	notCodeAfter
	// presenter before a number presents it as the code: enter 482913, use 482913.
	presenter
	// passwordLabel, keyLabel, pinLabel: a value after the label is a password, a secret key,
	// a PIN (pinLabel "PIN" only in capitals).
	passwordLabel
	keyLabel
	pinLabel
	// withheldWords says the message gives a password even without a "label: value".
	withheldWords
	// oneTimeBefore / oneTimeAfter before / after a password label make it a one-time
	// password, which is a code and not a password.
	oneTimeBefore
	oneTimeAfter
	// connector stands between a label and its value: is, est, lautet, 是.
	connector
	// labelFiller may stand between a label and its connector: provisoire, الخاصة بك.
	labelFiller
	// stopValue follows a label without being a password: changed, reset, hidden.
	stopValue
	// linkKey is a path segment or query key that makes a link a sign-in link: login, token.
	linkKey
	// codePointer points to a code written elsewhere: "the number above", "the code in the
	// subject". A code-shaped token before it, or in the subject, is the code.
	codePointer
	// recoveryLabel introduces a list of recovery or backup codes, one a line or several on
	// its line: in a person's own text each of them is masked (see Own).
	recoveryLabel
)

var kindNames = map[kind]string{
	codePhrase: "code phrase", codeRemark: "code remark", codeWord: "code word", signInVerb: "sign-in verb",
	notCode: "not a code", notCodeAfter: "not a code after", presenter: "presenter",
	passwordLabel: "password label", keyLabel: "key label", pinLabel: "PIN label",
	withheldWords: "withheld phrase", oneTimeBefore: "one-time before", oneTimeAfter: "one-time after",
	connector: "connector", labelFiller: "label filler", stopValue: "stop value", linkKey: "link key",
	codePointer: "code pointer", recoveryLabel: "recovery label",
}

func (k kind) String() string { return kindNames[k] }

// A phrase is one row of the table. A text ending in '*' matches as a word prefix.
type phrase struct {
	lang string
	kind kind
	text string
}

// group is a run of rows of one language and kind, to keep the table readable.
type group struct {
	lang  string
	kind  kind
	texts []string
}

// phrases is the table, one row per text.
func phrases() []phrase {
	var out []phrase
	for _, g := range table {
		for _, t := range g.texts {
			out = append(out, phrase{g.lang, g.kind, t})
		}
	}
	return out
}

var table = []group{
	// English.
	{"en", codePhrase, []string{
		"verification code", "verification codes", "verification number", "verification pin",
		"verify code", "one-time code", "one time code", "onetime code", "one-time passcode",
		"one time passcode", "one-time password", "one time password", "one-time pin",
		"one-time login", "one-time sign-in", "single-use code", "single use code", "otp",
		"2fa code", "mfa code", "two-factor code", "two factor code", "2-step verification code",
		"two-step verification code", "security code", "sign-in code", "sign in code",
		"signin code", "login code", "log-in code", "log in code", "logon code",
		"passcode", "pass code", "auth code", "authentication code", "authorization code",
		"authorisation code", "activation code", "validation code",
		"recovery code", "backup code", "magic code", "magic link",
		"magic-link", "sign-in link", "sign in link", "signin link", "login link", "log-in link",
		"log in link", "one-click sign-in", "link to sign in", "link to log in", "enter this code",
		"enter the code below", "enter the following code", "use this code to",
		"use the code below", "use the following code", "your code is", "is your code",
		"here is your code", "here's your code", "do not share this code",
		"don't share this code", "dont share this code", "never share this code",
		"do not share it with anyone", "don't share it with anyone", "do not share this link",
		"don't share this link",
		"sms code", "text message code",
	}},
	{"en", codeRemark, []string{"confirmation code", "access code", "temporary code", "code expires", "code will expire", "code is valid", "code is only valid"}},
	{"en", codeWord, []string{"code", "codes", "pin"}},
	{"en", signInVerb, []string{
		"verify", "verifying", "verification", "sign in", "sign-in", "signin", "signing in",
		"log in", "log-in", "login", "logging in", "log on", "logon", "sign on", "authenticate", "confirm",
		"authentication", "confirm your email", "confirm your e-mail", "confirm your account",
		"confirm your identity", "verify your identity", "confirm it's you", "reset your password",
		"password reset", "reset password", "forgot your password", "forgotten your password",
		"set your password", "choose a new password", "create a new password",
		"activate your account", "2fa", "mfa", "two-factor", "two factor", "2-factor", "2-step",
		"two-step", "two step", "multi-factor", "one-time", "onetime", "link expires",
		"link will expire", "link is valid",
	}},
	{"en", notCode, []string{
		"promo", "promotional", "promotion", "discount", "coupon", "voucher", "postal", "zip",
		"area", "country", "source", "qr", "bar", "dress", "error", "status", "http",
		"tracking", "product", "item", "tax", "sort", "referral", "invite", "invitation",
		"airport", "iata", "color", "colour", "html", "reference", "ref",
		"booking", "reservation", "order", "flight", "offer", "sale", "gift", "swift", "bic",
		"bank", "branch", "client", "customer", "zone", "exit", "response", "return", "invoice",
		"account", "acct", "phone", "tel", "telephone", "mobile", "fax", "ext", "extension",
		"room", "seat", "gate", "member", "membership", "ticket", "case", "serial", "model",
		"sku", "part", "version", "build", "page", "issue", "chapter", "route", "unit", "suite",
		"apt", "lot", "batch", "id", "no", "nr", "number", "style", "shipment", "parcel",
		"package", "delivery", "claim", "policy", "contract", "student", "employee", "vat",
		"routing", "event", "affiliate", "partner", "redemption", "bonus", "loyalty", "reward",
		"rewards", "cheat", "course", "class", "programming", "python", "morse", "dialing",
		"calling", "ups", "usps", "fedex", "dhl", "job", "requisition", "patient",
	}},
	{"en", notCodeAfter, []string{
		"of conduct", "of practice", "of ethics", "of honor", "review", "reviews", "snippet",
		"snippets", "block", "editor", "repository", "base", "%", "percent", "off", "eur", "euro",
		"euros", "usd", "dollars", "$", "€", "£", "gbp", "chf", "points", "pts", "miles", "km",
		"kg", "mg", "ml", "mb", "gb", "kb", "px", "items", "readers", "followers", "subscribers",
		"members", "people", "users", "views", "votes", "steps", "calories",
	}},
	{"en", presenter, []string{
		"is", "are", "was", "enter", "use", "using", "with", "type", "input", "code", "codes",
		"pin", "passcode", "otp",
	}},
	{"en", passwordLabel, []string{"password", "passphrase", "pwd", "passwd"}},
	{"en", keyLabel, []string{
		"api key", "api-key", "apikey", "secret key", "access key", "api token", "access token",
		"auth token", "client secret", "private key",
	}},
	{"en", pinLabel, []string{"PIN"}},
	{"en", withheldWords, []string{
		"temporary password", "temp password", "initial password", "provisional password",
		"your new password is",
	}},
	{"en", oneTimeBefore, []string{"one-time", "one time", "onetime", "single-use", "single use", "dynamic"}},
	{"en", connector, []string{
		"is", "was", "will be", "is now", "has been set to", "was set to", "is set to",
		"has been reset to", "was reset to", "has been changed to", "was changed to",
		"has been updated to", "set to",
	}},
	{"en", labelFiller, []string{"for your account", "for this account"}},
	{"en", stopValue, []string{
		"your", "the", "same", "none", "n/a", "unchanged", "reset", "click", "here", "below",
		"above", "changed", "updated", "expired", "expires", "required", "forgot", "forgotten",
		"enter", "choose", "chosen", "create", "created", "use", "using", "must", "should", "not",
		"never", "was", "will", "has", "have", "hidden", "see", "check", "contact", "please",
		"follow", "sent", "set", "ask", "request", "requested", "minimum", "length", "that",
		"this", "what", "when", "with", "from", "only", "secret", "secure", "strong", "weak",
		"incorrect", "invalid", "wrong", "successfully", "change", "manager", "protected",
		"optional", "new", "old", "current", "confirm", "repeat", "strength", "policy",
	}},

	// French.
	{"fr", codePhrase, []string{
		"code de vérification", "code à usage unique", "code de sécurité",
		"code de connexion",
		"code d'authentification", "code de validation", "code d'activation", "votre code est",
		"est votre code", "ne le partagez pas", "ne le partagez avec personne",
		"ne partagez pas ce code", "ne partagez jamais", "ne le communiquez",
		"ne communiquez pas ce code", "saisissez le code", "saisissez ce code", "saisir le code",
		"entrez le code", "entrez ce code", "lien de connexion", "lien magique",
		"mot de passe à usage unique", "code sms",
	}},
	{"fr", codeRemark, []string{"code de confirmation", "code d'accès", "code temporaire", "code unique", "code est valable"}},
	{"fr", codeWord, []string{"code", "codes"}},
	{"fr", signInVerb, []string{
		"vérifier", "vérifiez", "vérification", "se connecter", "connectez-vous", "connexion",
		"identifiez-vous", "réinitialis*", "confirmer votre adresse", "confirmez votre adresse",
		"validez votre adresse", "double authentification", "authentification à deux",
		"authentification forte", "usage unique", "expire dans", "lien est valable",
		"mot de passe oublié", "activer votre compte", "activez votre compte",
	}},
	{"fr", notCode, []string{
		"parrainage", "réduction", "remise", "commande", "réservation", "vol", "suivi", "colis",
		"facture", "numéro", "tél", "téléphone", "portable", "chambre", "dossier",
		"contrat", "référence", "réf", "avantage", "fidélité",
	}},
	{"fr", notCodeAfter, []string{
		"postal", "promo", "de réduction", "réduc", "source", "barre", "-barre", "d'erreur",
		"client", "article", "produit", "avantage", "de parrainage", "cadeau", "remise",
		"de référence", "de réservation", "banque", "guichet", "couleur", "de la route", "civil",
		"pénal", "du travail", "de conduite", "de commande", "de suivi", "promotionnel",
		"euros", "points",
	}},
	{"fr", presenter, []string{"est", "saisissez", "entrez", "utilisez", "avec", "code", "voici"}},
	{"fr", passwordLabel, []string{"mot de passe", "mot-de-passe", "mdp"}},
	{"fr", keyLabel, []string{"clé api", "clé d'api", "clé secrète"}},
	{"fr", withheldWords, []string{
		"mot de passe temporaire", "mot de passe provisoire", "mot de passe initial",
		"votre nouveau mot de passe est",
	}},
	{"fr", oneTimeAfter, []string{"à usage unique", "unique"}},
	{"fr", connector, []string{"est", "sera", "a été défini sur", "a été réinitialisé à"}},
	{"fr", labelFiller, []string{"provisoire", "temporaire", "initial", "de connexion", "d'accès", "actuel"}},
	{"fr", stopValue, []string{
		"votre", "celui", "celle", "choisi", "identique", "inchangé", "modifié", "oublié",
		"défini", "saisissez", "entrez", "masqué", "sécurisé", "nouveau", "changer", "modifier",
		"réinitialiser", "réinitialisé", "requis", "obligatoire", "expiré", "incorrect",
		"invalide", "envoyé", "cliquez",
	}},

	// German.
	{"de", codePhrase, []string{
		"bestätigungscode*", "sicherheitscode*", "verifizierungscode*", "verifikationscode*",
		"einmalcode*", "einmalpasswort", "einmal-code", "einmalkennwort", "anmeldecode*",
		"authentifizierungscode", "aktivierungscode", "freischaltcode",
		"login-code", "ihr code lautet", "dein code lautet", "ihr code ist", "dein code ist",
		"anmeldelink", "geben sie diesen code", "gib diesen code", "geben sie den code",
		"teilen sie diesen code", "mtan", "sms-tan", "smstan", "tan-nummer", "ihre tan",
		"deine tan", "einmaliges passwort", "einmal-passwort",
	}},
	{"de", codeRemark, []string{"zugangscode"}},
	{"de", codeWord, []string{"code", "codes"}},
	{"de", signInVerb, []string{
		"verifizierung*", "verifizieren", "bestätigen", "bestätigen sie ihre e-mail", "anmelden",
		"einloggen", "anmeldung", "passwort zurücksetzen", "kennwort zurücksetzen",
		"passwort vergessen", "zurücksetzen", "zwei-faktor", "zwei faktor", "zweistufig*",
		"aktivieren",
	}},
	{"de", notCode, []string{
		"rabatt", "gutschein", "aktions", "bestell", "bestellung", "buchung", "flug",
		"sendungs", "sendung", "rechnung", "kunden", "artikel", "referenz", "nummer", "telefon",
		"handy", "zimmer", "fehler", "steuer", "rabattcode", "postleitzahl", "plz",
	}},
	{"de", notCodeAfter, []string{"für rabatt", "des verhaltens"}},
	{"de", presenter, []string{"ist", "lautet", "eingeben", "verwenden", "mit", "code"}},
	{"de", passwordLabel, []string{"passwort", "kennwort"}},
	{"de", keyLabel, []string{"api-schlüssel", "geheimer schlüssel"}},
	{"de", withheldWords, []string{
		"temporäres passwort", "temporäre passwort", "vorläufiges passwort", "initialpasswort",
		"initiales passwort", "temporäres kennwort", "vorläufiges kennwort",
		"ihr neues passwort lautet", "ihr neues passwort ist", "dein neues passwort lautet",
	}},
	{"de", oneTimeBefore, []string{"einmal-", "einmaliges", "einmalige"}},
	{"de", connector, []string{"ist", "lautet", "wurde gesetzt auf", "wurde geändert in"}},
	{"de", labelFiller, []string{"für ihr konto", "für dein konto"}},
	{"de", stopValue, []string{
		"ihr", "ihres", "dein", "unverändert", "geändert", "vergessen", "zurückgesetzt",
		"erforderlich", "abgelaufen", "ungültig", "falsch", "festgelegt", "bitte", "neu",
		"gesetzt", "ändern",
	}},

	// Spanish.
	{"es", codePhrase, []string{
		"código de verificación", "código de seguridad",
		"código de un solo uso",
		"código de inicio de sesión", "código de autenticación", "código de activación",
		"tu código es", "su código es", "no compartas este código", "no comparta este código",
		"contraseña de un solo uso", "enlace de inicio de sesión", "enlace mágico",
		"ingresa el código", "introduce el código", "introduzca el código",
	}},
	{"es", codeRemark, []string{"código de acceso", "código de confirmación", "código único", "código temporal"}},
	{"es", codeWord, []string{"código", "códigos"}},
	{"es", signInVerb, []string{
		"verificar", "verifica", "verificación", "iniciar sesión", "inicia sesión",
		"restablecer", "restablece tu contraseña", "confirmar", "confirma tu correo",
		"confirme su correo", "acceder", "autenticación", "dos factores", "no compartas",
	}},
	{"es", notCode, []string{
		"descuento", "cupón", "pedido", "reserva", "vuelo", "seguimiento", "factura", "cliente",
		"número", "nº", "teléfono", "móvil", "envío", "habitación",
	}},
	{"es", notCodeAfter, []string{
		"promocional", "de descuento", "postal", "de pedido", "de reserva", "de seguimiento",
		"de barras", "qr", "de error", "de cliente", "de producto", "de referencia",
		"de regalo", "de vestimenta", "de conducta", "de cupón",
	}},
	{"es", presenter, []string{"es", "introduce", "ingresa", "usa", "utiliza", "con", "código"}},
	{"es", passwordLabel, []string{"contraseña", "clave de acceso", "tu clave", "su clave"}},
	{"es", keyLabel, []string{"clave api", "clave secreta"}},
	{"es", withheldWords, []string{
		"contraseña temporal", "contraseña provisional", "tu nueva contraseña es",
		"su nueva contraseña es", "clave temporal",
	}},
	{"es", oneTimeAfter, []string{"de un solo uso"}},
	{"es", connector, []string{"es", "será"}},
	{"es", labelFiller, []string{"temporal", "provisional", "nueva", "de acceso"}},
	{"es", stopValue, []string{
		"tu", "su", "cambiada", "restablecida", "olvidada", "requerida", "oculta", "nueva",
		"caducada", "incorrecta", "actualizada",
	}},

	// Italian.
	{"it", codePhrase, []string{
		"codice di verifica", "codice di sicurezza",
		"codice monouso", "codice otp", "codice di autenticazione",
		"codice di attivazione", "il tuo codice è",
		"non condividere questo codice", "non condividere il codice", "password monouso",
		"link di accesso", "link magico", "inserisci il codice",
	}},
	{"it", codeRemark, []string{"codice di accesso", "codice di conferma", "codice temporaneo", "il tuo codice"}},
	{"it", codeWord, []string{"codice", "codici"}},
	{"it", signInVerb, []string{
		"verifica", "verificare", "accedi", "accedere", "conferma", "confermare",
		"conferma il tuo indirizzo", "reimposta", "reimpostare la password", "autenticazione",
		"due fattori",
	}},
	{"it", notCode, []string{
		"sconto", "ordine", "prenotazione", "volo", "spedizione", "fattura", "cliente",
		"numero", "telefono", "cellulare", "camera",
	}},
	{"it", notCodeAfter, []string{
		"sconto", "promozionale", "fiscale", "postale", "di avviamento postale", "a barre",
		"di errore", "cliente", "prodotto", "di prenotazione", "dell'ordine",
		"di tracciamento", "regalo", "coupon", "di condotta",
	}},
	{"it", presenter, []string{"è", "inserisci", "usa", "utilizza", "con", "codice"}},
	{"it", withheldWords, []string{
		"password temporanea", "password provvisoria", "la tua nuova password è",
		"password iniziale",
	}},
	{"it", oneTimeAfter, []string{"monouso", "usa e getta"}},
	{"it", connector, []string{"è", "e'", "sarà"}},
	{"it", labelFiller, []string{"temporanea", "provvisoria", "iniziale", "di accesso"}},
	{"it", stopValue, []string{
		"tua", "modificata", "reimpostata", "dimenticata", "richiesta", "nascosta", "scaduta",
		"errata",
	}},

	// Portuguese.
	{"pt", codePhrase, []string{
		"código de verificação", "código de segurança",
		"código de autenticação",
		"código de ativação", "seu código é", "o seu código é",
		"não compartilhe este código", "não partilhe este código", "senha de uso único",
		"senha única", "link de acesso", "link mágico", "digite o código", "insira o código",
	}},
	{"pt", codeRemark, []string{"código de acesso", "código de confirmação", "código único", "código temporário", "seu código"}},
	{"pt", codeWord, []string{"código", "códigos"}},
	{"pt", signInVerb, []string{
		"verificar", "verifique", "verificação", "entrar", "fazer login", "iniciar sessão",
		"confirmar", "confirme seu e-mail", "confirme o seu email", "redefinir",
		"redefinir senha", "recuperar senha", "autenticação", "dois fatores",
		"não compartilhe",
	}},
	{"pt", notCode, []string{
		"desconto", "cupom", "cupão", "pedido", "reserva", "voo", "rastreamento", "rastreio",
		"fatura", "cliente", "número", "telefone", "celular", "encomenda", "quarto",
	}},
	{"pt", notCodeAfter, []string{
		"promocional", "de desconto", "postal", "de rastreamento", "de rastreio", "do pedido",
		"de reserva", "de barras", "de erro", "de cliente", "do produto", "de referência",
		"de conduta", "do cupom",
	}},
	{"pt", presenter, []string{"é", "digite", "insira", "use", "utilize", "com", "código"}},
	{"pt", passwordLabel, []string{"senha", "palavra-passe", "palavra passe"}},
	{"pt", withheldWords, []string{
		"senha temporária", "senha provisória", "palavra-passe temporária", "sua nova senha é",
		"senha inicial",
	}},
	{"pt", oneTimeAfter, []string{"de uso único", "única"}},
	{"pt", connector, []string{"é", "será"}},
	{"pt", labelFiller, []string{"temporária", "provisória", "nova", "inicial", "de acesso"}},
	{"pt", stopValue, []string{
		"sua", "alterada", "redefinida", "esquecida", "obrigatória", "oculta", "expirada",
		"incorreta",
	}},

	// Dutch.
	{"nl", codePhrase, []string{
		"verificatiecode*", "beveiligingscode*", "inlogcode*",
		"eenmalige code", "authenticatiecode", "activatiecode", "je code is",
		"uw code is", "jouw code is", "deel deze code niet", "deel deze code met niemand",
		"eenmalig wachtwoord", "inloglink", "magische link", "voer de code in",
		"voer deze code in",
	}},
	{"nl", codeRemark, []string{"toegangscode", "bevestigingscode"}},
	{"nl", codeWord, []string{"code", "codes"}},
	{"nl", signInVerb, []string{
		"verifiëren", "verifieer", "verificatie", "inloggen", "aanmelden", "meld je aan",
		"bevestig", "bevestigen", "bevestig je e-mailadres", "wachtwoord opnieuw instellen",
		"wachtwoord vergeten", "tweestapsverificatie", "twee-factor",
	}},
	{"nl", notCode, []string{
		"korting", "kortings", "bestel", "bestelling", "boeking", "vlucht", "reservering",
		"factuur", "klant", "nummer", "telefoon", "postcode", "kortingscode",
	}},
	{"nl", presenter, []string{"is", "luidt", "voer", "gebruik", "met", "code"}},
	{"nl", passwordLabel, []string{"wachtwoord"}},
	{"nl", withheldWords, []string{
		"tijdelijk wachtwoord", "tijdelijke wachtwoord", "je nieuwe wachtwoord is",
		"uw nieuwe wachtwoord is",
	}},
	{"nl", oneTimeBefore, []string{"eenmalig", "eenmalige"}},
	{"nl", connector, []string{"is", "luidt"}},
	{"nl", stopValue, []string{
		"je", "uw", "gewijzigd", "vergeten", "vereist", "verborgen", "verlopen", "onjuist",
		"ingesteld",
	}},

	// Polish.
	{"pl", codePhrase, []string{
		"kod weryfikacyjn*", "kodu weryfikacyjn*", "kod potwierdzając*", "kod jednorazowy", "jednorazowy kod",
		"kod autoryzacyjny", "kod bezpieczeństwa", "kod logowania", "kod sms",
		"kod aktywacyjny", "kod uwierzytelniający", "twój kod to", "twój kod weryfikacyjny",
		"nie udostępniaj tego kodu", "nikomu nie podawaj", "nie przekazuj nikomu",
		"hasło jednorazowe", "jednorazowe hasło", "link do logowania", "wpisz kod",
		"wprowadź kod",
	}},
	{"pl", codeRemark, []string{"kod dostępu"}},
	{"pl", codeWord, []string{"kod", "kodu", "kodem"}},
	{"pl", signInVerb, []string{
		"zaloguj", "zalogować", "logowanie", "zweryfikuj", "weryfikacja", "potwierdź",
		"potwierdzić", "zresetuj hasło", "resetowanie hasła", "nie pamiętasz hasła",
	}},
	{"pl", notCode, []string{
		"numer", "telefon", "zamówienie", "rezerwacja", "faktura", "przesyłka", "lot",
		"rabat", "kupon",
	}},
	{"pl", notCodeAfter, []string{
		"rabatowy", "promocyjny", "pocztowy", "zamówienia", "rezerwacji", "kreskowy", "qr",
		"błędu", "produktu", "klienta", "śledzenia", "przesyłki", "zł",
	}},
	{"pl", presenter, []string{"to", "jest", "wpisz", "wprowadź", "użyj", "kod"}},
	{"pl", passwordLabel, []string{"hasło", "hasła"}},
	{"pl", withheldWords, []string{"hasło tymczasowe", "tymczasowe hasło", "twoje nowe hasło to", "hasło startowe"}},
	{"pl", oneTimeBefore, []string{"jednorazowe", "jednorazowego"}},
	{"pl", oneTimeAfter, []string{"jednorazowe"}},
	{"pl", connector, []string{"to", "jest"}},
	{"pl", labelFiller, []string{"tymczasowe", "nowe", "startowe", "do logowania", "dostępu"}},
	{"pl", stopValue, []string{
		"twoje", "zmienione", "zresetowane", "wymagane", "ukryte", "wygasło", "nieprawidłowe",
		"ustawione", "zostało",
	}},

	// Czech.
	{"cs", codePhrase, []string{
		"ověřovací kód", "potvrzovací kód", "jednorázový kód", "bezpečnostní kód",
		"přihlašovací kód", "autorizační kód", "aktivační kód", "kód pro přihlášení",
		"váš kód je", "nikomu nesdělujte", "tento kód nikomu", "jednorázové heslo",
		"přihlašovací odkaz", "zadejte kód",
	}},
	{"cs", codeWord, []string{"kód", "kódu", "kódem"}},
	{"cs", signInVerb, []string{
		"přihlásit", "přihlaste se", "přihlášení", "ověřit", "ověřte", "ověření", "potvrdit",
		"potvrďte", "obnovit heslo", "obnovení hesla", "zapomenuté heslo",
	}},
	{"cs", notCode, []string{
		"slevový", "poštovní", "číslo", "telefon", "objednávka", "objednávky", "rezervace",
		"faktura", "zásilka",
	}},
	{"cs", notCodeAfter, []string{"objednávky", "zásilky", "produktu", "chyby", "pro slevu", "kč"}},
	{"cs", presenter, []string{"je", "zadejte", "použijte", "kód"}},
	{"cs", passwordLabel, []string{"heslo"}},
	{"cs", withheldWords, []string{"dočasné heslo", "vaše nové heslo je", "počáteční heslo"}},
	{"cs", oneTimeBefore, []string{"jednorázové", "jednorázového"}},
	{"cs", connector, []string{"je"}},
	{"cs", labelFiller, []string{"pro přihlášení"}},
	{"cs", stopValue, []string{
		"vaše", "změněno", "obnoveno", "zapomenuto", "vyžadováno", "skryto", "vypršelo",
		"nesprávné", "bylo",
	}},

	// Swedish.
	{"sv", codePhrase, []string{
		"verifieringskod*", "bekräftelsekod*", "engångskod*", "säkerhetskod*", "inloggningskod*",
		"aktiveringskod*", "din kod är", "dela inte koden", "dela inte den här koden",
		"engångslösenord", "inloggningslänk", "ange koden",
	}},
	{"sv", codeWord, []string{"kod", "koden"}},
	{"sv", signInVerb, []string{
		"logga in", "verifiera", "verifiering", "bekräfta", "bekräfta din e-post",
		"återställ lösenord", "återställa ditt lösenord", "glömt lösenord",
		"tvåstegsverifiering",
	}},
	{"sv", notCode, []string{
		"rabattkod", "rabatt", "ordernummer", "bokning", "flyg", "faktura", "kund", "nummer",
		"telefon", "kampanjkod", "postnummer",
	}},
	{"sv", presenter, []string{"är", "ange", "använd", "med", "kod"}},
	{"sv", passwordLabel, []string{"lösenord", "lösenordet"}},
	{"sv", withheldWords, []string{
		"tillfälligt lösenord", "tillfälliga lösenord", "tillfälliga lösenordet",
		"ditt nya lösenord är",
	}},
	{"sv", connector, []string{"är", "blir"}},
	{"sv", labelFiller, []string{"ditt"}},
	{"sv", stopValue, []string{"ditt", "ändrat", "återställt", "glömt", "krävs", "dolt", "utgånget", "felaktigt"}},

	// Danish.
	{"da", codePhrase, []string{
		"bekræftelseskode*", "verifikationskode*", "engangskode*", "sikkerhedskode*", "loginkode*",
		"login-kode", "aktiveringskode*", "din kode er", "del ikke koden", "del ikke denne kode",
		"engangsadgangskode", "indtast koden", "loginlink",
	}},
	{"da", codeWord, []string{"kode", "koden"}},
	{"da", signInVerb, []string{
		"log ind", "bekræft", "bekræft din e-mail", "verificer", "nulstil adgangskode",
		"nulstil din adgangskode", "glemt adgangskode", "totrinsbekræftelse",
	}},
	{"da", notCode, []string{"rabat", "rabatkode", "postnummer", "ordre", "ordrenummer", "fly", "faktura", "kunde", "nummer", "tlf"}},
	{"da", presenter, []string{"er", "indtast", "brug", "med", "kode"}},
	{"da", passwordLabel, []string{"adgangskode", "adgangskoden", "kodeord", "kodeordet"}},
	{"da", withheldWords, []string{
		"midlertidig adgangskode", "midlertidige adgangskode", "midlertidigt kodeord",
		"din nye adgangskode er",
	}},
	{"da", connector, []string{"er", "bliver"}},
	{"da", labelFiller, []string{"din"}},
	{"da", stopValue, []string{"din", "ændret", "nulstillet", "glemt", "påkrævet", "skjult", "udløbet", "forkert"}},

	// Norwegian (Bokmål).
	{"nb", codePhrase, []string{
		"bekreftelseskode*", "verifiseringskode*", "engangskode*", "sikkerhetskode*",
		"påloggingskode*", "aktiveringskode*", "koden din er", "ikke del koden",
		"engangspassord", "påloggingslenke", "skriv inn koden",
	}},
	{"nb", codeWord, []string{"kode", "koden"}},
	{"nb", signInVerb, []string{
		"logg inn", "logge inn", "bekreft", "bekreft e-posten din", "verifiser",
		"tilbakestill passord", "tilbakestille passordet", "glemt passord", "tofaktor",
	}},
	{"nb", notCode, []string{"rabatt", "rabattkode", "postnummer", "ordre", "bestilling", "bestillingsnummer", "faktura", "kunde", "nummer", "tlf"}},
	{"nb", presenter, []string{"er", "skriv", "bruk", "med", "kode"}},
	{"nb", passwordLabel, []string{"passord", "passordet"}},
	{"nb", withheldWords, []string{"midlertidig passord", "midlertidige passord", "ditt nye passord er"}},
	{"nb", connector, []string{"er", "blir"}},
	{"nb", labelFiller, []string{"ditt"}},
	{"nb", stopValue, []string{"ditt", "endret", "tilbakestilt", "glemt", "påkrevd", "skjult", "utløpt", "feil"}},

	// Finnish.
	{"fi", codePhrase, []string{
		"vahvistuskoodi*", "varmennuskoodi*", "kertakäyttökoodi*", "turvakoodi*",
		"kirjautumiskoodi*", "tunnistuskoodi*", "aktivointikoodi*", "koodisi on",
		"älä jaa tätä koodia", "älä kerro koodia", "kertakäyttöinen salasana",
		"kertakäyttösalasana", "kirjautumislinkki", "syötä koodi",
	}},
	{"fi", codeWord, []string{"koodi", "koodisi", "koodia", "koodin"}},
	{"fi", signInVerb, []string{
		"kirjaudu", "kirjautua", "kirjautuminen", "vahvista", "vahvistaa", "varmenna",
		"palauta salasana", "nollaa salasana", "unohditko salasanasi", "kaksivaiheinen",
	}},
	{"fi", notCode, []string{
		"alennus", "alennuskoodi", "kampanjakoodi", "posti", "postinumero", "tilaus",
		"tilausnumero", "varaus", "varausnumero", "lento", "lasku", "asiakas", "numero", "puh",
		"puhelin",
	}},
	{"fi", presenter, []string{"on", "syötä", "käytä", "koodi"}},
	{"fi", passwordLabel, []string{"salasana", "salasanasi", "salasanan"}},
	{"fi", withheldWords, []string{"väliaikainen salasana", "väliaikainen salasanasi", "tilapäinen salasana", "uusi salasanasi on"}},
	{"fi", oneTimeBefore, []string{"kertakäyttöinen"}},
	{"fi", connector, []string{"on"}},
	{"fi", stopValue, []string{"sinun", "vaihdettu", "nollattu", "unohtunut", "vaaditaan", "piilotettu", "vanhentunut", "virheellinen"}},

	// Turkish.
	{"tr", codePhrase, []string{
		"doğrulama kod*", "onay kod*",
		"tek kullanımlık kod", "tek kullanımlık şifre", "tek kullanımlık şifreniz",
		"tek seferlik şifre", "güvenlik kod*", "giriş kod*",
		"aktivasyon kodu", "kimseyle paylaşmayın", "bu kodu kimseyle paylaşmayın", "kodunuz",
		"giriş bağlantısı", "kodu girin",
	}},
	{"tr", codeWord, []string{"kod", "kodu"}},
	{"tr", signInVerb, []string{
		"giriş yap", "giriş yapmak", "oturum aç", "doğrula", "doğrulayın", "doğrulama",
		"onayla", "onaylayın", "şifrenizi sıfırlayın", "şifre sıfırlama", "şifremi unuttum",
		"iki adımlı", "iki faktörlü",
	}},
	{"tr", notCode, []string{
		"indirim", "promosyon", "kupon", "posta", "sipariş", "rezervasyon", "uçuş", "fatura",
		"müşteri", "numara", "telefon", "kargo", "takip",
	}},
	{"tr", presenter, []string{"girin", "kullanın", "kod"}},
	{"tr", passwordLabel, []string{"şifre", "şifreniz", "şifren", "parola", "parolanız", "parolan"}},
	{"tr", withheldWords, []string{"geçici şifre", "geçici şifreniz", "geçici parola", "geçici parolanız"}},
	{"tr", oneTimeBefore, []string{"tek kullanımlık", "tek seferlik"}},
	{"tr", stopValue, []string{"değiştirildi", "sıfırlandı", "gerekli", "gizli", "hatalı", "yanlış"}},

	// Russian.
	{"ru", codePhrase, []string{
		"код подтверждения", "кода подтверждения", "проверочный код", "код проверки", "одноразовый код",
		"одноразовый пароль", "код для входа", "код безопасности",
		"код авторизации", "код активации", "никому не сообщайте",
		"не сообщайте этот код", "не сообщайте код", "ссылка для входа", "введите код",
		"смс-код", "sms-код", "код из смс",
	}},
	{"ru", codeRemark, []string{"код доступа", "ваш код"}},
	{"ru", codeWord, []string{"код", "кода", "коду", "кодом"}},
	{"ru", signInVerb, []string{
		"войти", "вход", "для входа", "подтвердить", "подтвердите", "подтверждение",
		"верификация", "сбросить пароль", "сброс пароля", "восстановить пароль",
		"восстановление пароля", "забыли пароль", "двухфакторн*", "авторизация",
	}},
	{"ru", notCode, []string{
		"промокод", "почтовый", "индекс", "заказ", "заказа", "тел", "телефон",
		"бронирования", "рейс", "счет", "счёт", "купон",
	}},
	{"ru", notCodeAfter, []string{"скидки", "заказа", "бронирования", "купона", "ошибки", "региона", "города", "страны", "отслеживания", "руб", "₽"}},
	{"ru", presenter, []string{"введите", "используйте", "код", "это"}},
	{"ru", passwordLabel, []string{"пароль", "пароля"}},
	{"ru", withheldWords, []string{"временный пароль", "ваш временный пароль", "первоначальный пароль"}},
	{"ru", oneTimeBefore, []string{"одноразовый", "одноразового"}},
	{"ru", connector, []string{"это"}},
	{"ru", labelFiller, []string{"для входа", "от учётной записи"}},
	{"ru", stopValue, []string{
		"ваш", "изменён", "изменен", "сброшен", "забыт", "обязателен", "скрыт", "истёк",
		"истек", "неверный", "установлен",
	}},

	// Ukrainian.
	{"uk", codePhrase, []string{
		"код підтвердження", "код перевірки", "одноразовий код", "одноразовий пароль",
		"код для входу", "код безпеки", "код авторизації", "код активації",
		"нікому не повідомляйте", "не повідомляйте цей код",
		"посилання для входу", "введіть код",
	}},
	{"uk", codeRemark, []string{"код доступу", "ваш код"}},
	{"uk", codeWord, []string{"код", "коду", "кодом"}},
	{"uk", signInVerb, []string{
		"увійти", "вхід", "для входу", "підтвердити", "підтвердіть", "підтвердження",
		"скинути пароль", "скидання пароля", "відновити пароль", "забули пароль",
		"двофакторн*",
	}},
	{"uk", notCode, []string{"промокод", "поштовий", "індекс", "замовлення", "тел", "телефон", "бронювання", "рейс"}},
	{"uk", notCodeAfter, []string{"знижки", "замовлення", "бронювання", "купона", "помилки", "грн"}},
	{"uk", presenter, []string{"введіть", "використовуйте", "код"}},
	{"uk", passwordLabel, []string{"пароль"}},
	{"uk", withheldWords, []string{"тимчасовий пароль", "ваш тимчасовий пароль", "початковий пароль"}},
	{"uk", oneTimeBefore, []string{"одноразовий"}},
	{"uk", stopValue, []string{"ваш", "змінено", "скинуто", "забуто", "приховано", "невірний", "встановлено"}},

	// Japanese.
	{"ja", codePhrase, []string{
		"認証コード", "検証コード", "ワンタイムパスワード", "ワンタイムコード",
		"ログインコード", "セキュリティコード", "パスコード", "認証番号", "ログインリンク",
		"マジックリンク", "コードを入力", "他人に教えない", "第三者に教えない", "誰にも教えない",
	}},
	{"ja", codeRemark, []string{"確認コード"}},
	{"ja", codeWord, []string{"コード"}},
	{"ja", signInVerb, []string{
		"ログイン", "サインイン", "認証", "本人確認", "メールアドレスの確認",
		"パスワードの再設定", "パスワードをリセット", "パスワード再設定", "二段階認証",
		"2段階認証",
	}},
	{"ja", notCode, []string{
		"クーポン", "プロモーション", "割引", "郵便番号", "注文番号", "予約番号", "追跡番号",
		"お問い合わせ番号", "予約", "注文", "商品", "電話", "エラー", "バー",
	}},
	{"ja", presenter, []string{"は", "コード"}},
	{"ja", passwordLabel, []string{"パスワード"}},
	{"ja", pinLabel, []string{"暗証番号"}},
	{"ja", withheldWords, []string{"仮パスワード", "初期パスワード", "一時パスワード", "臨時パスワード"}},
	{"ja", oneTimeBefore, []string{"ワンタイム"}},
	{"ja", connector, []string{"は"}},

	// Chinese (simplified and traditional).
	{"zh", codePhrase, []string{
		"验证码", "驗證碼", "校验码", "校驗碼", "动态码", "動態碼", "动态密码", "動態密碼",
		"一次性密码", "一次性密碼", "安全码", "安全碼", "登录码", "登入碼", "认证码", "認證碼",
		"请勿泄露", "請勿洩露", "切勿告知他人", "请勿告诉他人", "登录链接",
		"登入連結",
	}},
	{"zh", codeRemark, []string{"确认码", "確認碼"}},
	{"zh", signInVerb, []string{"登录", "登入", "登錄", "验证", "驗證", "确认", "重置密码", "重設密碼", "找回密码", "两步验证", "双重验证"}},
	{"zh", notCode, []string{"优惠码", "優惠碼", "折扣码", "兑换码", "邮政编码", "郵遞區號", "订单号", "訂單號", "二维码", "条形码", "订单", "快递单号", "电话", "電話"}},
	{"zh", presenter, []string{"是", "为", "為", "输入", "輸入"}},
	{"zh", passwordLabel, []string{"密码", "密碼", "口令"}},
	{"zh", withheldWords, []string{"临时密码", "臨時密碼", "初始密码", "初始密碼", "新密码为", "新密码是"}},
	{"zh", oneTimeBefore, []string{"一次性", "动态", "動態"}},
	{"zh", connector, []string{"是", "为", "為"}},

	// Korean.
	{"ko", codePhrase, []string{
		"인증번호", "인증 번호", "인증코드", "인증 코드", "보안 코드",
		"보안코드", "일회용 비밀번호", "일회용 코드", "로그인 코드", "타인에게 알려주지 마세요",
		"절대 타인에게", "로그인 링크",
	}},
	{"ko", codeRemark, []string{"확인 코드", "확인코드"}},
	{"ko", codeWord, []string{"코드"}},
	{"ko", signInVerb, []string{"로그인", "인증", "본인 확인", "본인확인", "비밀번호 재설정", "비밀번호 찾기", "2단계 인증"}},
	{"ko", notCode, []string{"할인", "쿠폰", "프로모션", "우편번호", "주문번호", "예약번호", "운송장", "주문", "예약", "전화"}},
	{"ko", presenter, []string{"는", "은", "입력"}},
	{"ko", passwordLabel, []string{"비밀번호", "암호", "패스워드"}},
	{"ko", withheldWords, []string{"임시 비밀번호", "임시비밀번호", "초기 비밀번호"}},
	{"ko", oneTimeBefore, []string{"일회용"}},
	{"ko", connector, []string{"는", "은", "가"}},

	// Arabic.
	{"ar", codePhrase, []string{
		"رمز التحقق", "رمز تحقق", "رمز التأكيد", "رمز الدخول", "رمز الأمان", "رمز التفعيل",
		"كود التحقق", "كود التفعيل", "رمز لمرة واحدة", "كلمة المرور لمرة واحدة",
		"لا تشارك هذا الرمز", "لا تشارك الرمز", "رابط تسجيل الدخول", "أدخل الرمز",
	}},
	{"ar", codeWord, []string{"رمز", "كود"}},
	{"ar", signInVerb, []string{"تسجيل الدخول", "التحقق", "تأكيد", "إعادة تعيين كلمة المرور", "نسيت كلمة المرور", "المصادقة الثنائية"}},
	{"ar", notCode, []string{"كوبون", "هاتف", "رقم الطلب", "الطلب", "الحجز"}},
	{"ar", notCodeAfter, []string{"الخصم", "البريدي", "الترويجي", "الطلب", "الحجز", "الاستجابة السريعة"}},
	{"ar", presenter, []string{"هو", "أدخل", "استخدم"}},
	{"ar", passwordLabel, []string{"كلمة المرور", "كلمة السر", "الرقم السري"}},
	{"ar", withheldWords, []string{"كلمة المرور المؤقتة", "كلمة مرور مؤقتة", "كلمة السر المؤقتة"}},
	{"ar", oneTimeAfter, []string{"لمرة واحدة"}},
	{"ar", connector, []string{"هي", "هو"}},
	{"ar", labelFiller, []string{"الخاصة بك", "الخاصة بكم", "الجديدة", "المؤقتة"}},

	// Hebrew.
	{"he", codePhrase, []string{
		"קוד אימות", "קוד האימות", "קוד חד פעמי", "קוד חד-פעמי", "סיסמה חד פעמית",
		"סיסמה חד-פעמית", "קוד אבטחה", "אין למסור את הקוד",
		"אל תשתף את הקוד", "קישור כניסה", "הזן את הקוד",
	}},
	{"he", codeRemark, []string{"קוד כניסה", "קוד הכניסה"}},
	{"he", codeWord, []string{"קוד"}},
	{"he", signInVerb, []string{"התחבר", "התחברות", "כניסה", "אימות", "אישור", "איפוס סיסמה", "אפס את הסיסמה", "שכחת סיסמה", "אימות דו-שלבי"}},
	{"he", notCode, []string{"קופון", "מיקוד", "הזמנה", "מספר", "טלפון", "טיסה"}},
	{"he", notCodeAfter, []string{"הנחה", "קופון", "הזמנה", "מוצר", "שגיאה", "₪"}},
	{"he", presenter, []string{"הוא", "הזן", "השתמש"}},
	{"he", passwordLabel, []string{"סיסמה", "סיסמא", "סיסמתך", "סיסמתכם"}},
	{"he", withheldWords, []string{"סיסמה זמנית", "הסיסמה הזמנית", "סיסמא זמנית"}},
	{"he", oneTimeAfter, []string{"חד פעמית", "חד-פעמית"}},
	{"he", connector, []string{"היא", "הוא"}},
	{"he", labelFiller, []string{"שלך", "שלכם", "החדשה", "הזמנית"}},

	// Indonesian.
	{"id", codePhrase, []string{"kode verifikasi", "kode otp", "kode keamanan", "kode akses", "kode masuk", "jangan berikan kode", "jangan bagikan kode", "kode sekali pakai"}},
	{"id", codeWord, []string{"kode"}},
	{"id", signInVerb, []string{"verifikasi", "konfirmasi", "atur ulang kata sandi"}},
	{"id", notCodeAfter, []string{"pos", "promo", "diskon", "voucher", "pesanan", "booking"}},
	{"id", passwordLabel, []string{"kata sandi"}},
	{"id", withheldWords, []string{"kata sandi sementara"}},
	{"id", connector, []string{"adalah"}},

	// Vietnamese.
	{"vi", codePhrase, []string{"mã xác minh", "mã xác thực", "mã otp", "mã bảo mật", "mã đăng nhập", "mã kích hoạt", "không chia sẻ mã", "mã của bạn là"}},
	{"vi", signInVerb, []string{"đăng nhập", "xác minh", "xác nhận", "đặt lại mật khẩu"}},
	{"vi", passwordLabel, []string{"mật khẩu"}},
	{"vi", withheldWords, []string{"mật khẩu tạm thời"}},
	{"vi", connector, []string{"là"}},

	// Thai.
	{"th", codePhrase, []string{"รหัสยืนยัน", "รหัส otp", "รหัสผ่านแบบใช้ครั้งเดียว", "อย่าเปิดเผยรหัส"}},
	{"th", signInVerb, []string{"เข้าสู่ระบบ", "ยืนยันตัวตน"}},
	{"th", passwordLabel, []string{"รหัสผ่าน"}},
	{"th", withheldWords, []string{"รหัสผ่านชั่วคราว"}},
	{"th", oneTimeAfter, []string{"แบบใช้ครั้งเดียว"}},
	{"th", connector, []string{"คือ"}},

	// Codes pointed to from elsewhere in the message: the subject ("[Example] 707117") or
	// above ("Enter the number above to finish signing in").
	{"en", codePointer, []string{
		"number above", "code above", "digits above", "above code", "above number",
		"code shown above", "number shown above", "code in the subject", "number in the subject",
		"code from the subject", "number from the subject", "code in the subject line",
		"number in the subject line", "code in the title", "code in this email's subject",
	}},
	{"fr", codePointer, []string{
		"code ci-dessus", "numéro ci-dessus", "chiffres ci-dessus", "code indiqué ci-dessus",
		"code dans l'objet", "numéro dans l'objet", "code en objet", "code indiqué dans l'objet",
		"code figurant dans l'objet", "code dans le titre",
	}},
	{"de", codePointer, []string{
		"obigen code", "obige code", "obige nummer", "obigen nummer", "obige zahl", "obigen zahlen",
		"code oben", "nummer oben", "code im betreff", "nummer im betreff", "code aus dem betreff",
		"code in der betreffzeile",
	}},
	{"es", codePointer, []string{
		"código anterior", "número anterior", "código de arriba", "número de arriba",
		"código indicado arriba", "código en el asunto", "número en el asunto", "código del asunto",
	}},
	{"it", codePointer, []string{
		"codice sopra", "numero sopra", "codice qui sopra", "codice riportato sopra",
		"codice nell'oggetto", "numero nell'oggetto", "codice indicato nell'oggetto",
	}},
	{"pt", codePointer, []string{
		"código acima", "número acima", "código no assunto", "número no assunto",
		"código indicado acima",
	}},
	{"nl", codePointer, []string{
		"bovenstaande code", "bovenstaand nummer", "bovenstaande nummer", "code hierboven",
		"nummer hierboven", "code in de onderwerpregel", "code in het onderwerp",
	}},
	{"pl", codePointer, []string{
		"powyższy kod", "powyższego kodu", "powyższy numer", "kod powyżej", "kod w temacie",
		"kod z tematu", "numer w temacie",
	}},
	{"cs", codePointer, []string{"výše uvedený kód", "kód výše", "číslo výše", "kód v předmětu", "kód z předmětu"}},
	{"sv", codePointer, []string{"koden ovan", "numret ovan", "koden i ämnesraden", "koden i ämnet"}},
	{"da", codePointer, []string{"koden ovenfor", "nummeret ovenfor", "koden i emnefeltet", "koden i emnelinjen"}},
	{"nb", codePointer, []string{"koden ovenfor", "nummeret ovenfor", "koden i emnefeltet", "koden i emnelinjen"}},
	{"fi", codePointer, []string{"yllä oleva koodi", "yllä olevan koodin", "yllä oleva numero", "koodi aiherivillä", "aiherivin koodi"}},
	{"tr", codePointer, []string{"yukarıdaki kod", "yukarıdaki kodu", "yukarıdaki numara", "konu satırındaki kod", "konudaki kod"}},
	{"ru", codePointer, []string{
		"код выше", "указанный выше код", "номер выше", "цифры выше", "код в теме письма",
		"код из темы", "код в теме",
	}},
	{"uk", codePointer, []string{"код вище", "номер вище", "цифри вище", "код у темі листа", "код з теми", "код у темі"}},
	{"ja", codePointer, []string{"上記のコード", "上記の番号", "上の番号", "上のコード", "件名のコード", "件名の番号", "件名に記載"}},
	{"zh", codePointer, []string{
		"上面的数字", "上方的数字", "上面的代码", "上述代码", "上述数字", "标题中的数字",
		"主题中的数字", "主题中的代码", "上面的號碼", "上方的數字", "主旨中的號碼", "主旨中的數字",
	}},
	{"ko", codePointer, []string{"위의 코드", "위 코드", "위의 번호", "위 번호", "제목의 코드", "제목에 있는 코드", "제목의 번호"}},
	{"ar", codePointer, []string{"الرمز أعلاه", "الرقم أعلاه", "الرمز في الموضوع", "الرمز الموجود في الموضوع"}},
	{"he", codePointer, []string{"הקוד למעלה", "המספר למעלה", "הקוד שלמעלה", "הקוד בנושא", "הקוד בשורת הנושא"}},
	{"id", codePointer, []string{"kode di atas", "nomor di atas", "kode di subjek", "kode pada subjek"}},
	{"vi", codePointer, []string{"mã ở trên", "mã bên trên", "số ở trên", "mã trong tiêu đề"}},
	{"th", codePointer, []string{"รหัสด้านบน", "หมายเลขด้านบน", "รหัสในหัวเรื่อง"}},

	// Recovery-code labels, for the person's own texts: each code listed after one is masked.
	{"en", recoveryLabel, []string{
		"recovery codes", "recovery code", "backup codes", "backup code", "recovery keys",
		"backup keys", "emergency codes", "2fa codes", "2fa backup codes", "mfa codes",
	}},
	{"fr", recoveryLabel, []string{"codes de récupération", "code de récupération", "codes de secours", "codes de sauvegarde"}},
	{"de", recoveryLabel, []string{"wiederherstellungscodes", "backup-codes", "backupcodes", "sicherungscodes", "notfallcodes"}},
	{"es", recoveryLabel, []string{"códigos de recuperación", "códigos de respaldo", "códigos de emergencia"}},
	{"it", recoveryLabel, []string{"codici di recupero", "codici di backup", "codici di emergenza"}},
	{"pt", recoveryLabel, []string{"códigos de recuperação", "códigos de backup", "códigos de emergência"}},
	{"nl", recoveryLabel, []string{"herstelcodes", "back-upcodes", "backupcodes", "reservecodes"}},
	{"pl", recoveryLabel, []string{"kody zapasowe", "kody odzyskiwania", "kody awaryjne"}},
	{"cs", recoveryLabel, []string{"záložní kódy", "kódy pro obnovení"}},
	{"sv", recoveryLabel, []string{"reservkoder", "återställningskoder"}},
	{"da", recoveryLabel, []string{"backupkoder", "gendannelseskoder", "reservekoder"}},
	{"nb", recoveryLabel, []string{"reservekoder", "gjenopprettingskoder"}},
	{"fi", recoveryLabel, []string{"varakoodit", "palautuskoodit"}},
	{"tr", recoveryLabel, []string{"kurtarma kodları", "yedek kodlar"}},
	{"ru", recoveryLabel, []string{"резервные коды", "коды восстановления"}},
	{"uk", recoveryLabel, []string{"резервні коди", "коди відновлення"}},
	{"ja", recoveryLabel, []string{"バックアップコード", "リカバリーコード", "復旧コード"}},
	{"zh", recoveryLabel, []string{"备用码", "恢复码", "备用验证码", "備用碼", "復原碼"}},
	{"ko", recoveryLabel, []string{"백업 코드", "복구 코드"}},
	{"ar", recoveryLabel, []string{"رموز الاسترداد", "رموز النسخ الاحتياطي"}},
	{"he", recoveryLabel, []string{"קודי גיבוי", "קודי שחזור"}},
	{"id", recoveryLabel, []string{"kode cadangan", "kode pemulihan"}},
	{"vi", recoveryLabel, []string{"mã dự phòng", "mã khôi phục"}},
	{"th", recoveryLabel, []string{"รหัสสำรอง", "รหัสกู้คืน"}},

	// Labels the person's own texts use beside those of mail: passphrases, wifi keys, PINs.
	{"en", passwordLabel, []string{"pass phrase", "recovery phrase", "seed phrase", "secret phrase"}},
	{"en", keyLabel, []string{"wifi key", "wi-fi key", "wlan key", "wpa key", "network key"}},
	{"fr", passwordLabel, []string{"phrase secrète", "phrase de passe", "phrase de récupération"}},
	{"fr", keyLabel, []string{"clé wifi", "clé wi-fi", "clé wpa", "clé de sécurité réseau"}},
	{"de", keyLabel, []string{"wlan-schlüssel", "wlan-passwort", "netzwerkschlüssel"}},
	{"de", pinLabel, []string{"geheimzahl"}},
	{"es", passwordLabel, []string{"frase de contraseña", "frase semilla"}},
	{"ru", pinLabel, []string{"пин-код", "пин"}},
	{"uk", pinLabel, []string{"пін-код", "пін"}},

	// Links, in any language: a path segment or query key (lower case, without '-', '_'
	// and '.') that makes a link a sign-in link.
	{"*", linkKey, []string{
		"login", "logon", "signin", "signon", "magic", "magiclink", "reset", "resetpassword",
		"passwordreset", "forgotpassword", "verify", "verifyemail", "emailverify",
		"verification", "verifyaccount", "confirm", "confirmemail", "emailconfirm",
		"confirmaccount", "activate", "activation", "activateaccount", "auth", "authenticate",
		"authorize", "oauth", "sso", "token", "accesstoken", "authtoken", "logintoken", "otp",
		"passwordless", "password", "mfa", "2fa", "onetime", "unlock", "recover", "recovery",
		"loginlink", "signinlink", "connexion", "anmelden", "anmeldung", "einloggen",
		"inloggen", "aanmelden",
	}},
}

// charsetNames are character sets a parse problem may name ("unknown charset iso-2022-jp"),
// which are no codes; charsetName adds iso-8859-1…16, windows-1250…1258, cp1250…1258 and the
// UTF forms.
var charsetNames = []string{
	"windows-874", "windows-31j", "cp437", "cp850", "cp852", "cp855", "cp857", "cp858", "cp860",
	"cp861", "cp862", "cp863", "cp865", "cp866", "cp869", "cp874", "cp932", "cp936", "cp949",
	"cp950", "ibm437", "ibm850", "ibm852", "ibm866", "ucs-2", "ucs-4", "iso-10646-ucs-2",
	"iso-2022-jp", "iso-2022-jp-1", "iso-2022-jp-2", "iso-2022-jp-3", "iso-2022-kr",
	"iso-2022-cn", "iso-2022-cn-ext", "gb2312", "gb18030", "big5-hkscs", "euc-jp", "euc-kr",
	"euc-cn", "euc-tw", "koi8-r", "koi8-u", "koi8-ru", "tis-620", "ks_c_5601-1987",
	"hz-gb-2312", "iso-ir-100", "iso-ir-101", "iso-ir-109", "iso-ir-110", "iso-ir-126",
	"iso-ir-127", "iso-ir-138", "iso-ir-144", "iso-ir-148", "iso-ir-157", "x-mac-cyrillic",
	"csiso2022jp", "iso-8859-1-windows-3.1-latin-1",
}

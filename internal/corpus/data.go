package corpus

import (
	"math/rand/v2"
	"strings"
)

// The mailbox owner: every message is to or from this person.
const (
	OwnerName  = "Sam Rivera"
	OwnerEmail = "sam.rivera@example.com"
)

type person struct{ name, first, email string }

type org struct{ name, email string }

type list struct{ name, email, id string }

var firstNames = []string{
	"Alice", "Ben", "Carla", "David", "Elena", "Frank", "Grace", "Hugo", "Ines", "Jonah",
	"Kira", "Liam", "Maya", "Noah", "Olivia", "Paul", "Quinn", "Rosa", "Simon", "Tara",
	"Umar", "Vera", "Walter", "Xenia", "Yusuf", "Zara", "Dana", "Omar", "Priya", "Theo",
}

var lastNames = []string{
	"Adams", "Baker", "Clarke", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen",
	"Khan", "Lopez", "Moreau", "Nakamura", "O'Neil", "Petrov", "Quist", "Rossi", "Schmidt", "Tanaka",
	"Ueda", "Vargas", "Walsh", "Xu", "Young", "Zimmer", "Bauer", "Cohen", "Dubois", "Novak",
}

var personDomains = []string{
	"example.com", "example.org", "example.net", "mail.example.net", "eng.example.com",
	"corp.example.org", "lab.example.net", "studio.example.com",
}

// nonASCIIPeople carry display names that need RFC 2047 encoding; their
// characters are all covered by the tables in charset.go.
var nonASCIIPeople = []person{
	{"Zoë Müller", "Zoë", "zoe.muller@example.org"},
	{"José García", "José", "jose.garcia@example.net"},
	{"François Lefèvre", "François", "francois.lefevre@corp.example.org"},
	{"Søren Jørgensen", "Søren", "soren.jorgensen@example.com"},
	{"Chloé Dubois", "Chloé", "chloe.dubois@studio.example.com"},
	{"Jürgen Groß", "Jürgen", "juergen.gross@example.net"},
	{"Łukasz Wiśniewski", "Łukasz", "lukasz.wisniewski@lab.example.net"},
	{"Ольга Иванова", "Ольга", "olga.ivanova@example.org"},
	{"Дмитрий Соколов", "Дмитрий", "dmitry.sokolov@example.net"},
	{"Анна Смирнова", "Анна", "anna.smirnova@mail.example.net"},
	{"Сергей Козлов", "Сергей", "sergey.kozlov@example.com"},
	{"山田太郎", "太郎", "taro.yamada@example.com"},
	{"佐藤花子", "花子", "hanako.sato@example.org"},
	{"Noël Œuvrard", "Noël", "noel.oeuvrard@example.org"},
	{"Ana “Nina” Šimić", "Ana", "ana.simic@example.net"},
	{"Begoña Ibáñez", "Begoña", "begona.ibanez@eng.example.com"},
	{"Ólafur Þórsson", "Ólafur", "olafur.thorsson@example.net"},
	{"Renée Château", "Renée", "renee.chateau@example.com"},
	{"Dr. Eva Keller", "Eva", "eva.keller@lab.example.net"},
	{"Kim (Design) Park", "Kim", "kim.park@studio.example.com"},
}

// people is the pool of about 300 correspondents.
var people = func() []person {
	var ps []person
	for k := 0; k < 280; k++ {
		a, b := k%len(firstNames), k/len(firstNames)
		f, l := firstNames[a], lastNames[(b+7*a)%len(lastNames)]
		local := strings.ToLower(f + "." + strings.ReplaceAll(l, "'", ""))
		ps = append(ps, person{f + " " + l, f, local + "@" + personDomains[k%len(personDomains)]})
	}
	return append(ps, nonASCIIPeople...)
}()

// orgs send receipts, invoices and notifications.
var orgs = func() []org {
	names := []struct{ name, local, domain string }{
		{"Northwind Billing", "billing", "billing.example.com"},
		{"Contoso Support", "support", "support.example.net"},
		{"Fabrikam Travel", "bookings", "travel.example.org"},
		{"Tailspin Airlines", "noreply", "tailspin.example.com"},
		{"Adventure Works", "orders", "shop.example.com"},
		{"Litware Cloud", "alerts", "cloud.example.net"},
		{"Proseware Bank", "statements", "bank.example.org"},
		{"Wingtip Toys", "hello", "wingtip.example.com"},
		{"Blue Yonder Energy", "accounts", "energy.example.net"},
		{"Coho Winery", "club", "coho.example.org"},
		{"Lucerne Publishing", "subscriptions", "lucerne.example.com"},
		{"Margie's Travel", "trips", "margie.example.net"},
		{"Trey Research", "notify", "trey.example.org"},
		{"Woodgrove Insurance", "claims", "insurance.example.com"},
		{"Alpine Ski House", "rentals", "alpine.example.net"},
		{"City Power & Light", "billing", "power.example.org"},
		{"Graphic Design Institute", "registrar", "gdi.example.com"},
		{"Humongous Telecom", "mybill", "telecom.example.net"},
		{"Consolidated Messenger", "tracking", "parcel.example.com"},
		{"Fourth Coffee", "rewards", "coffee.example.org"},
		{"Relecloud Storage", "no-reply", "storage.example.net"},
		{"School of Fine Art", "office", "art.example.org"},
		{"Southridge Video", "account", "video.example.com"},
		{"VanArsdel Health", "appointments", "health.example.net"},
		{"Wide World Importers", "invoices", "wwi.example.org"},
		{"Datum Corporation", "security", "datum.example.com"},
		{"Bellows College", "alumni", "bellows.example.org"},
		{"Munson's Pickles", "orders", "pickles.example.net"},
		{"Nod Publishers", "books", "nod.example.com"},
		{"Olympia Gym", "members", "gym.example.org"},
		{"Parnell Aerospace", "hr", "parnell.example.net"},
		{"Reunion Rentals", "stay", "rentals.example.com"},
		{"Sharp Tools Co.", "service", "tools.example.org"},
		{"Tasmanian Traders", "shop", "traders.example.net"},
		{"Vertigo Games", "store", "games.example.com"},
		{"The Phone Company", "care", "phone.example.org"},
		{"First Up Consultants", "team", "firstup.example.net"},
		{"Lamna Healthcare", "portal", "lamna.example.com"},
		{"Baldwin Museum", "tickets", "museum.example.org"},
		{"Greenline Transit", "passes", "transit.example.net"},
	}
	out := make([]org, len(names))
	for i, n := range names {
		out[i] = org{n.name, n.local + "@" + n.domain}
	}
	return out
}()

// lists send to the newsletters folder, with List-* headers.
var lists = []list{
	{"Weekly Digest", "digest@news.example.org", "digest.news.example.org"},
	{"Product Updates", "updates@news.example.com", "updates.news.example.com"},
	{"Gardening Club News", "club@lists.example.net", "club.lists.example.net"},
	{"Go & Friends Weekly", "weekly@lists.example.org", "weekly.lists.example.org"},
	{"City Events", "events@news.example.net", "events.news.example.net"},
	{"Bookshop Picks", "picks@mail.example.com", "picks.mail.example.com"},
}

var vocabulary = strings.Fields(`the a to of and in for on with about this that we you it is are be will
can our your from at by as have has not should could would please let me know if there any some more
team project plan meeting draft report budget schedule review update notes idea question answer week month
morning afternoon today tomorrow next last first time call agenda slides numbers figures estimate timeline
client partner vendor contract invoice payment order delivery shipment office room travel trip hotel flight
train lunch dinner coffee weekend holiday family friends photos garden kitchen house car bike book library
design prototype release version feature bug fix test build server data backup migration document spreadsheet
summary proposal feedback comments changes approval decision priority risk goal result progress status
quickly carefully together already still again soon later early late maybe probably definitely really
good great fine small large new old final short long simple clear useful important ready happy busy
send share check confirm finish start move keep bring make take give look think need want hope try`)

var projects = []string{"Falcon", "Orchard", "Lighthouse", "Harbor", "Maple", "Cobalt", "Juniper", "Atlas", "Meridian", "Tidewater"}

var topics = []string{"the budget", "the offsite", "the hiring plan", "the roadmap", "the migration", "the launch", "the contract", "the audit", "the workshop", "the renovation"}

var days = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}

var months = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// nonASCIISubjects mix scripts so that every legacy charset in charset.go
// has subjects it can encode.
var nonASCIISubjects = []string{
	"Café on Thursday?",
	"Größe der Lieferung",
	"Résumé for review",
	"Año nuevo, señor",
	"Devis à 120 € HT",
	"Le cœur du projet",
	"“Final” budget – Q3…",
	"Привет",
	"Отчёт за квартал",
	"Встреча в пятницу",
	"日本語の資料",
	"会議の予定",
	"こんにちは",
	"東京の会議",
}

// attachmentNames are non-ASCII file names, written in RFC 2231 form.
var nonASCIIFileNames = []string{"Größe-Übersicht", "résumé", "日本語の資料", "Привет", "Café menu"}

// distinctive is a fixed pool of made-up words that appear in no other
// vocabulary, so a search for one finds only the messages that carry it.
var distinctive = func() []string {
	cons, vows := "bdfgklmnprstvz", "aeiou"
	r := rand.New(rand.NewPCG(0x636f72707573, 0x776f726473))
	seen := map[string]bool{}
	for _, ws := range [][]string{vocabulary, firstNames, lastNames, projects, days, months} {
		for _, w := range ws {
			seen[strings.ToLower(w)] = true
		}
	}
	var out []string
	for len(out) < 500 {
		var sb strings.Builder
		for s := 0; s < 3; s++ {
			sb.WriteByte(cons[r.IntN(len(cons))])
			sb.WriteByte(vows[r.IntN(len(vows))])
		}
		sb.WriteByte(cons[r.IntN(len(cons))])
		w := sb.String()
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

// uniqueWord is a word found in message i's body and in no other message.
func uniqueWord(i int) string {
	b := []byte("zq00000")
	for k := 6; k >= 2; k-- {
		b[k] = byte('a' + i%26)
		i /= 26
	}
	return string(b)
}

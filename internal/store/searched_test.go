package store_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/emersion/go-vcard"

	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/contact"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/caldav"
	"github.com/postern-mcp/postern/internal/source/notes"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/masktest"
)

func declared(cols ...[]store.SearchedColumn) map[string]bool {
	out := map[string]bool{}
	for _, list := range cols {
		for _, c := range list {
			out[c.Table+"."+c.Column] = true
			out["*."+c.Column] = true
		}
	}
	return out
}

// TestSearchedColumnsComplete: every column of every FTS5 table of a new store, and every
// column a query of the store reads with LIKE, instr or GLOB, is declared in store.Searched
// (filled from masked text), store.NamesCompared or store.NotSearched; so a column added later
// without saying how it is masked fails here.
func TestSearchedColumnsComplete(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.DB()
	searched := declared(store.Searched)
	all := declared(store.Searched, store.NamesCompared, store.NotSearched)

	rows, err := db.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'`)
	if err != nil {
		t.Fatal(err)
	}
	var fts []string
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`(?i)USING\s+fts5\s*\(`).MatchString(sql) {
			fts = append(fts, name)
		}
	}
	rows.Close()
	if len(fts) < 3 {
		t.Fatalf("only %d FTS5 tables found (%v): the query is wrong", len(fts), fts)
	}
	for _, table := range fts {
		cols, err := db.Query(`SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for cols.Next() {
			var c string
			cols.Scan(&c)
			n++
			if !searched[table+"."+c] {
				t.Errorf("the FTS5 column %s.%s is not in store.Searched: say what fills it with masked text", table, c)
			}
		}
		cols.Close()
		if n == 0 {
			t.Errorf("no column read of %s", table)
		}
	}
	for _, c := range store.Searched {
		if !strings.HasSuffix(c.Table, "_fts") {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.Table, c.Column).Scan(&n); err != nil || n != 1 {
				t.Errorf("store.Searched names %s.%s, which the schema does not have", c.Table, c.Column)
			}
		}
	}

	// The store's own queries (its string literals): a column read with LIKE, GLOB or instr.
	files, _ := filepath.Glob("*.go")
	reads := []*regexp.Regexp{
		regexp.MustCompile(`(?i)\binstr\(\s*(?:\w+\.)?(\w+)\s*,`),
		regexp.MustCompile(`(?:\w+\.)?(\w+)\s+(?:NOT\s+)?(?:LIKE|GLOB)\s`),
		regexp.MustCompile(`(\w+)\s+MATCH\s`),
	}
	found := 0
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			for _, re := range reads {
				for _, m := range re.FindAllStringSubmatch(lit.Value, -1) {
					col := m[1]
					found++
					if strings.HasSuffix(col, "_fts") && slices.Contains(fts, col) {
						continue // its columns are checked above
					}
					if !all["*."+col] {
						t.Errorf("%s: %q reads the column %s, which store.Searched, NamesCompared and NotSearched do not name", fset.Position(lit.Pos()), m[0], col)
					}
				}
			}
			return true
		})
	}
	t.Logf("%d reads in the store's queries, all declared", found)
	if found < 3 {
		t.Fatalf("only %d reads found in the store's queries: the patterns are wrong", found)
	}
}

// alnum is s folded as the search folds it, letters and digits only.
func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '|' {
			return r
		}
		return -1
	}, store.SearchFold(s))
}

// grams are the 3-character runs of a secret, folded, separators out.
func grams(secret string) []string {
	s := []rune(alnum(secret))
	var out []string
	for i := 0; i+3 <= len(s); i++ {
		out = append(out, string(s[i:i+3]))
	}
	return out
}

// row is one stored thing: what its answers show and what its search columns hold.
type row struct {
	kind, name     string
	secrets        []string
	shown, columns string
}

// check fails for every 3-character run of a secret that a row's search columns hold while
// its answers do not show it; it returns how many runs were hidden (and so checked).
func check(t *testing.T, rows []row) map[string]int {
	t.Helper()
	hidden := map[string]int{}
	for _, r := range rows {
		shown, cols := alnum(r.shown), alnum(r.columns)
		for _, sec := range r.secrets {
			for _, g := range grams(sec) {
				if strings.Contains(shown, g) {
					continue
				}
				hidden[r.kind]++
				if strings.Contains(cols, g) {
					t.Errorf("%s %q: the search columns hold %q of a secret the answers hide\nshown:   %q\ncolumns: %q", r.kind, r.name, g, r.shown, r.columns)
					break
				}
			}
		}
	}
	return hidden
}

// TestSearchedColumnsMasked stores every masked case of internal/testing/masktest as a message
// (subject, body, sender name, attachment name), a note and a contact (name, organisation,
// title), through the functions a sync uses, then reads every column of store.Searched back
// (the FTS5 indexes through fts5vocab, word by word in order) and fails on any three
// characters of a secret a column holds while the answers hide them.
func TestSearchedColumnsMasked(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.DB()
	cases := append(masktest.MaskedCases(), masktest.Layouts()...)

	// Mail, as a sync stores it (source.Judge masks).
	acct, err := st.EnsureAccount(ctx, "mail", "imap")
	if err != nil {
		t.Fatal(err)
	}
	folder := &store.Folder{AccountID: acct, Name: "INBOX"}
	if err := st.SaveFolder(ctx, folder); err != nil {
		t.Fatal(err)
	}
	var msgs []store.NewMessage
	for i, c := range cases {
		nm := store.NewMessage{UID: uint32(i + 1), Date: time.Date(2025, 6, 1, 0, 0, i, 0, time.UTC),
			MessageID: fmt.Sprintf("<case%d@example.org>", i), Subject: c.Subject, Text: c.Body,
			From: store.Address{Name: "Example", Email: "no-reply@example.org"},
			To:   []store.Address{{Name: "Person", Email: "me@example.net"}}}
		if c.Other != "" {
			nm.From.Name = c.Other
			nm.Attachments = []store.Attachment{{Name: c.Other + ".pdf", ContentType: "application/pdf"}}
		}
		source.Judge(&nm, nil)
		msgs = append(msgs, nm)
	}
	if err := st.AddMessages(ctx, folder, msgs, uint32(len(msgs))); err != nil {
		t.Fatal(err)
	}

	// Notes, as notes.Refresh stores them.
	var put []*store.Note
	for i, c := range cases {
		text := c.Body
		if c.Subject != "" {
			text = "# " + c.Subject + "\n\n" + text
		}
		if c.Other != "" {
			text += "\n\n" + c.Other
		}
		n := notes.Build(fmt.Sprintf("case %d.md", i), text)
		n.MTime = int64(i + 1)
		put = append(put, n)
	}
	if err := st.SaveNotes(ctx, "/notes", put, nil); err != nil {
		t.Fatal(err)
	}

	// Contacts, as a CardDAV sync stores them (caldav.Fill, PutObject): the case's words in
	// the name, the organisation and the title, each its own field.
	dav, err := st.EnsureAccount(ctx, "dav", "caldav")
	if err != nil {
		t.Fatal(err)
	}
	book := &store.Collection{AccountID: dav, URL: "/book/", Kind: store.KindAddressBook, Name: "Contacts"}
	if err := st.SaveCollection(ctx, book); err != nil {
		t.Fatal(err)
	}
	contactText := func(c masktest.Masked) string {
		switch {
		case c.Other != "":
			return c.Other
		case c.InSubject:
			return c.Subject
		}
		return c.Body
	}
	for i, c := range cases {
		card := vcard.Card{}
		card.SetValue(vcard.FieldVersion, "4.0")
		card.SetValue(vcard.FieldUID, fmt.Sprintf("case-%d", i))
		card.SetValue(vcard.FieldFormattedName, contactText(c))
		card.SetValue(vcard.FieldOrganization, c.Subject)
		card.SetValue(vcard.FieldTitle, c.Body)
		card.AddValue(vcard.FieldTelephone, "+33 6 12 34 56 78")
		card.AddValue(vcard.FieldEmail, fmt.Sprintf("case%d@example.org", i))
		var b strings.Builder
		if err := vcard.NewEncoder(&b).Encode(card); err != nil {
			t.Fatal(err)
		}
		o := &store.Object{CollectionID: book.ID, Href: fmt.Sprintf("/book/%d.vcf", i), ETag: "1", Data: b.String()}
		if err := caldav.Fill(o); err != nil {
			t.Fatal(err)
		}
		if err := st.PutObject(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	// The FTS5 indexes word by word, in order, per row and column.
	indexed := func(table string) map[int64]string {
		vocab := "v_" + table
		if _, err := db.Exec(`CREATE VIRTUAL TABLE temp.` + vocab + ` USING fts5vocab(main, ` + table + `, instance)`); err != nil {
			t.Fatal(err)
		}
		rs, err := db.Query(`SELECT doc, col, term FROM temp.` + vocab + ` ORDER BY doc, col, offset`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		out := map[int64]string{}
		last := map[int64]string{}
		for rs.Next() {
			var doc int64
			var col, term string
			if err := rs.Scan(&doc, &col, &term); err != nil {
				t.Fatal(err)
			}
			if last[doc] != col {
				out[doc] += "|"
				last[doc] = col
			}
			out[doc] += term
		}
		return out
	}
	var rows []row
	meta, body := indexed("meta_fts"), indexed("body_fts")
	mrows, err := db.Query(`SELECT m.id, m.subject, m.from_name, m.from_email, m.attachments, coalesce(b.text, ''), m.withheld FROM messages m LEFT JOIN bodies b ON b.id = m.id ORDER BY m.uid`)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; mrows.Next(); i++ {
		var id int64
		var subject, fromName, fromEmail, atts, text, withheld string
		if err := mrows.Scan(&id, &subject, &fromName, &fromEmail, &atts, &text, &withheld); err != nil {
			t.Fatal(err)
		}
		shown := strings.Join([]string{answer.Line(subject), answer.Line(fromName), answer.Line(fromEmail), answer.Line(atts), mask.Body(text), withheld}, " ")
		rows = append(rows, row{"message", cases[i].Name, cases[i].Secrets, shown, meta[id] + "|" + body[id]})
	}
	mrows.Close()
	nfts := indexed("notes_fts")
	for i, n := range put {
		full, err := st.Note(ctx, "/notes", n.Path)
		if err != nil {
			t.Fatal(err)
		}
		shown := answer.Line(full.Title) + " " + mask.Body(full.Text) + " " + full.Withheld
		rows = append(rows, row{"note", cases[i].Name, cases[i].Secrets, shown, nfts[full.ID]})
	}
	objs, err := st.Objects(ctx, []int64{book.ID}, store.ObjectContact, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	byUID := map[string]*store.Object{}
	for _, o := range objs {
		byUID[o.UID] = o
	}
	for i, c := range cases {
		o := byUID[fmt.Sprintf("case-%d", i)]
		card, ok := contact.Parse(o.Data)
		if !ok {
			t.Fatalf("case %q: the stored vCard cannot be read", c.Name)
		}
		sh := contact.Read(card, o.Summary)
		shown := []string{answer.Line(sh.Name), answer.Line(sh.Organization), answer.Line(sh.Title)}
		for _, v := range append(sh.Emails, sh.Phones...) {
			shown = append(shown, answer.Line(v))
		}
		var search string
		if err := db.QueryRow(`SELECT search FROM dav_objects WHERE id = ?`, o.ID).Scan(&search); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{"contact", c.Name, c.Secrets, strings.Join(shown, " "), search})
	}

	hidden := check(t, rows)
	// The check must have had work: most cases hide their secret in every kind of row.
	for _, kind := range []string{"message", "note", "contact"} {
		if hidden[kind] < len(cases) {
			t.Errorf("only %d runs of secrets hidden in %ss of %d cases: the masks did not run", hidden[kind], kind, len(cases))
		}
	}
	t.Logf("%d cases; runs of secrets hidden and not found in the search columns: %v", len(cases), hidden)
}

// TestContactSearchUpgrade: a store whose dav_objects.search holds the server's words, as
// stores of schema 14 did, holds the masked words once opened.
func TestContactSearchUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	dav, _ := st.EnsureAccount(ctx, "dav", "caldav")
	book := &store.Collection{AccountID: dav, URL: "/book/", Kind: store.KindAddressBook, Name: "Contacts"}
	if err := st.SaveCollection(ctx, book); err != nil {
		t.Fatal(err)
	}
	data := "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:otp\r\nFN:Your verification code is 434712\r\nORG:Acme Rockets\r\nEND:VCARD\r\n"
	o := &store.Object{CollectionID: book.ID, Href: "/book/otp.vcf", Data: data}
	if err := caldav.Fill(o); err != nil {
		t.Fatal(err)
	}
	if err := st.PutObject(ctx, o); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE dav_objects SET search = 'your verification code is 434712 acme rockets'`, `UPDATE meta SET value = '14' WHERE key = 'schema'`} {
		if _, err := st.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if found, _ := st.SearchContacts(ctx, []int64{book.ID}, "434", 10); len(found) != 1 {
		t.Fatalf("the old column is not as schema 14 left it: %d found", len(found))
	}
	st.Close()
	if st, err = store.Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for q, want := range map[string]int{"434": 0, "434712": 0, "712": 0, "acme": 1, "code hidden": 1, "rock": 1} {
		found, err := st.SearchContacts(ctx, []int64{book.ID}, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != want {
			t.Errorf("after the upgrade, %q finds %d contacts, want %d", q, len(found), want)
		}
	}
}

// TestRemaskOnNewRules: a store masked under other rules (here: not at all) is masked again:
// its contacts' search words when it is opened (and its notes will be read again from their
// files), its messages and their indexes by RemaskMail, one batch at a time.
func TestRemaskOnNewRules(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := st.EnsureAccount(ctx, "mail", "imap")
	folder := &store.Folder{AccountID: acct, Name: "INBOX"}
	if err := st.SaveFolder(ctx, folder); err != nil {
		t.Fatal(err)
	}
	// Stored as rules that missed the code would have stored it: unmasked.
	raw := []store.NewMessage{
		{UID: 1, Date: time.Unix(1750000000, 0), Subject: "Your verification code is 434712", Text: "Enter it to sign in.",
			From: store.Address{Name: "Example", Email: "no-reply@example.org"}, Attachments: []store.Attachment{{Name: "code-434712.txt"}}},
		{UID: 2, Date: time.Unix(1750000100, 0), Subject: "Lunch", Text: "Room 4821 at noon.", From: store.Address{Email: "ana@example.org"}},
	}
	if err := st.AddMessages(ctx, folder, raw, 2); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveNotes(ctx, "/n", []*store.Note{{Path: "a.md", Title: "Codes", Text: "Your verification code is 434712", MTime: 5, Size: 9}}, nil); err != nil {
		t.Fatal(err)
	}
	dav, _ := st.EnsureAccount(ctx, "dav", "caldav")
	book := &store.Collection{AccountID: dav, URL: "/b/", Kind: store.KindAddressBook, Name: "B"}
	st.SaveCollection(ctx, book)
	o := &store.Object{CollectionID: book.ID, Href: "/b/1.vcf", Data: "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:1\r\nFN:Your verification code is 434712\r\nEND:VCARD\r\n"}
	caldav.Fill(o)
	st.PutObject(ctx, o)
	for _, q := range []string{`UPDATE dav_objects SET search = 'your verification code is 434712'`, `UPDATE meta SET value = '0' WHERE key IN ('mask_rules', 'mask_rules_mail')`} {
		if _, err := st.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	hits := func(st *store.Store, table, q string) int {
		var n int
		if err := st.DB().QueryRow(`SELECT count(*) FROM `+table+` WHERE `+table+` MATCH ?`, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if hits(st, "meta_fts", "434712") != 1 {
		t.Fatal("the unmasked message is not in the index: the test is wrong")
	}
	st.Close()

	if st, err = store.Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Contacts and notes at once; the mail by the next sync (RemaskMail), in batches.
	if found, _ := st.SearchContacts(ctx, []int64{book.ID}, "434", 5); len(found) != 0 {
		t.Errorf("the contact is still found by its code")
	}
	if stamps, _ := st.NoteStamps(ctx, "/n"); stamps["a.md"].MTime == 5 {
		t.Errorf("the note's stamp is kept: it will not be read again: %v", stamps)
	}
	defer store.SetRemaskBatch(1)()
	if n, err := st.RemaskMail(ctx); err != nil || n != 1 {
		t.Fatalf("RemaskMail: %d changed, %v; want 1", n, err)
	}
	if n, err := st.RemaskMail(ctx); err != nil || n != 0 {
		t.Fatalf("RemaskMail again: %d changed, %v; want 0", n, err)
	}
	for _, c := range []struct {
		table, q string
		want     int
	}{{"meta_fts", "434712", 0}, {"body_fts", "434712", 0}, {"meta_fts", "verification", 1}, {"body_fts", "4821", 1}, {"meta_fts", "lunch", 1}} {
		if n := hits(st, c.table, c.q); n != c.want {
			t.Errorf("%s MATCH %q: %d, want %d", c.table, c.q, n, c.want)
		}
	}
	var subject, atts string
	st.DB().QueryRow(`SELECT subject, attachments FROM messages WHERE uid = 1`).Scan(&subject, &atts)
	if strings.Contains(subject+atts, "434712") || !strings.Contains(subject, mask.HiddenCode) {
		t.Errorf("stored message: %q %q", subject, atts)
	}
	for _, k := range []string{"mask_rules", "mask_rules_mail"} {
		var rules string
		st.DB().QueryRow(`SELECT value FROM meta WHERE key = ?`, k).Scan(&rules)
		if rules != fmt.Sprint(mask.Rules) {
			t.Errorf("%s = %q after the remask", k, rules)
		}
	}
}

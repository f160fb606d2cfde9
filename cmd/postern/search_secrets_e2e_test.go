package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/testing/davtest"
)

// secretParts are secrets the fixtures below hold, each with the parts of it a hijacked
// agent would search for: the whole, prefixes, three or more of its digits, its letters, and
// its digits in fullwidth and Arabic-Indic forms. None is shown by any answer (a card's and
// an IBAN's last four are, and are not among the parts).
var secretParts = map[string][]string{
	"code 434712": {"434712", "434", "347", "712", "4347", "34712", "４３４", "٣٤٧", "٤٣٤٧١٢"},
	"card":        {"4111111111111111", "4111", "411111", "４１１１", "٤١١١"},
	"IBAN":        {"FR7630006000011234567890189", "FR76", "fr7630006000", "30006000", "0112", "3456", "7890", "FR76 3000"},
	"password":    {"hunter2-qx", "hunter2", "hunter", "hunt"},
}

// TestSearchesFindNoSecret: contacts (CardDAV on Radicale), mail (a Maildir), notes and the
// names of calendars and folders each hold a one-time code, a card number, an IBAN or a
// password; through the real binary every search and filter of them (contacts_search,
// mail_search, mail_list's folder, notes_find, agenda's and task_list's calendar names)
// finds nothing by any part of a secret, while a plain word of the same things still finds
// them, and a marker finds only what its answer shows.
func TestSearchesFindNoSecret(t *testing.T) {
	h := newDavHome(t, davtest.Radicale(t))
	vcf := func(uid string, lines ...string) string {
		return davtest.CRLF("BEGIN:VCARD\nVERSION:3.0\nUID:" + uid + "\n" + strings.Join(lines, "\n") + "\nEND:VCARD\n")
	}
	h.u.Put(t, h.book+"otp.vcf", vcf("otp", "FN:Your verification code is 434712", "ORG:Acme Rockets"))
	h.u.Put(t, h.book+"card.vcf", vcf("card", "FN:Dana Lee", "ORG:Card 4111 1111 1111 1111", "TITLE:Treasurer"))
	h.u.Put(t, h.book+"iban.vcf", vcf("iban", "FN:Sam Ortiz", "ORG:IBAN FR76 3000 6000 0112 3456 7890 189", "EMAIL:sam@ortiz.example"))
	h.u.Put(t, h.book+"pw.vcf", vcf("pw", "FN:Password: hunter2-qx", "ORG:Shed Club"))
	h.u.Put(t, h.book+"wide.vcf", vcf("wide", "FN:Login code ４３４７１２", "TEL:+33 6 98 76 54 10"))
	codeCal := "Your verification code is 434712"
	h.u.MkCalendar(t, davtest.Unique("codecal"), codeCal, "", "VEVENT", "VTODO")

	// A Maildir account: a code message with a card in an attachment's name and an IBAN in
	// its body, a message giving a password, a plain one, and a folder named with a code.
	md := filepath.Join(t.TempDir(), "Maildir")
	msg := func(dir, name, text string) {
		p := filepath.Join(md, dir, "new", name)
		for _, sub := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(md, dir, sub), 0o700)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "\n", "\r\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	msg("", "1.code", `From: Example Bank <no-reply@bank.example>
To: sam@example.com
Subject: Your verification code is 434712
Date: Mon, 01 Jun 2026 10:00:00 +0000
Message-ID: <code-1@bank.example>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

--b1
Content-Type: text/plain; charset=utf-8

Your verification code is 434712. Your invoice is attached.
Pay to IBAN FR76 3000 6000 0112 3456 7890 189.
--b1
Content-Type: application/pdf; name="card-4111111111111111.pdf"
Content-Disposition: attachment; filename="card-4111111111111111.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQK
--b1--
`)
	msg("", "2.pw", `From: IT <it@corp.example>
To: sam@example.com
Subject: Your new account
Date: Mon, 01 Jun 2026 11:00:00 +0000
Message-ID: <pw-2@corp.example>

Your password: hunter2-qx
`)
	msg("", "3.plain", `From: Ana <ana@corp.example>
To: sam@example.com
Subject: Quarterly report
Date: Mon, 01 Jun 2026 12:00:00 +0000
Message-ID: <plain-3@corp.example>

The quarterly report is ready.
`)
	msg(".Verification code 434712", "4.folder", `From: Ana <ana@corp.example>
To: sam@example.com
Subject: Filed away
Date: Mon, 01 Jun 2026 13:00:00 +0000
Message-ID: <filed-4@corp.example>

Filed.
`)
	f, err := os.OpenFile(h.cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n[[accounts]]\nname = \"home\"\nkind = \"maildir\"\npath = %q\naddress = \"sam@example.com\"\n", md)
	f.Close()
	withNotes(t, h.cfg, map[string]string{
		"codes.md":    "# Bank codes\n\nYour verification code is 434712\nCard 4111 1111 1111 1111\nIBAN FR76 3000 6000 0112 3456 7890 189\n",
		"wifi.md":     "# Router\n\nPassword: hunter2-qx\n",
		"shopping.md": "# Shopping list\n\napples, flour, candles\n",
	})
	h.sync(t)
	cs := h.connect(t, "read,read:bodies")

	count := func(tool, key string, args map[string]any) (int, string) {
		t.Helper()
		sc, text, isErr := call(t, cs, tool, args)
		if isErr {
			t.Fatalf("%s %v: %s", tool, args, text)
		}
		list, _ := sc[key].([]any)
		return len(list), text
	}
	searches := []struct {
		tool, key string
		args      func(q string) map[string]any
	}{
		{"contacts_search", "contacts", func(q string) map[string]any { return map[string]any{"query": q} }},
		{"mail_search", "messages", func(q string) map[string]any { return map[string]any{"query": q} }},
		{"notes_find", "notes", func(q string) map[string]any { return map[string]any{"query": q} }},
	}
	tried := 0
	for secret, parts := range secretParts {
		for _, p := range parts {
			for _, s := range searches {
				if n, text := count(s.tool, s.key, s.args(p)); n != 0 {
					t.Errorf("%s %q (part of the %s) finds %d: %s", s.tool, p, secret, n, text)
				}
				tried++
			}
		}
	}
	// Plain words still find, in the same things.
	for _, c := range []struct {
		tool, key, q string
	}{
		{"contacts_search", "contacts", "priya"}, {"contacts_search", "contacts", "acme"},
		{"contacts_search", "contacts", "treasurer"}, {"contacts_search", "contacts", "ortiz.example"},
		{"contacts_search", "contacts", "shed club"}, {"contacts_search", "contacts", "698765410"},
		{"mail_search", "messages", "quarterly"}, {"mail_search", "messages", "invoice"},
		{"mail_search", "messages", "verification"},
		{"notes_find", "notes", "apples"}, {"notes_find", "notes", "bank"},
	} {
		if n, text := count(c.tool, c.key, map[string]any{"query": c.q}); n == 0 {
			t.Errorf("%s %q finds nothing: %s", c.tool, c.q, text)
		}
	}
	// A marker finds only contacts that show it.
	for _, q := range []string{"code hidden", "card ending", "IBAN ending", "withheld", "hidden"} {
		sc, _, _ := call(t, cs, "contacts_search", map[string]any{"query": q})
		list, _ := sc["contacts"].([]any)
		for _, r := range list {
			row := r.(map[string]any)
			det, _, _ := call(t, cs, "contact_get", map[string]any{"id": row["id"]})
			b, _ := json.Marshal(det)
			words := strings.Fields(strings.ToLower(q))
			for _, w := range words {
				if !strings.Contains(strings.ToLower(string(b)), w) {
					t.Errorf("contacts_search %q finds %v, whose answer does not show %q: %s", q, row["name"], w, b)
				}
			}
		}
	}
	// A name holding a code answers only as it is shown.
	shownCal := "Your verification code is [code hidden]"
	for _, tool := range []string{"agenda", "task_list"} {
		arg := map[string]string{"agenda": "calendar", "task_list": "list"}[tool]
		if _, text, isErr := call(t, cs, tool, map[string]any{arg: codeCal}); !isErr {
			t.Errorf("%s %s %q answers to the secret: %s", tool, arg, codeCal, text)
		}
		if _, text, isErr := call(t, cs, tool, map[string]any{arg: shownCal}); isErr {
			t.Errorf("%s %s %q (as calendar_list shows it): %s", tool, arg, shownCal, text)
		}
	}
	if _, text, isErr := call(t, cs, "mail_list", map[string]any{"folder": "Verification code 434712"}); !isErr {
		t.Errorf("mail_list folder answers to the secret: %s", text)
	}
	if n, text := count("mail_list", "messages", map[string]any{"folder": "Verification code [code hidden]"}); n != 1 {
		t.Errorf("mail_list of the folder as shown: %d: %s", n, text)
	}
	t.Logf("%d searches by a part of a secret made", tried)
}

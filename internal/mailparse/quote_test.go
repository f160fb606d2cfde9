package mailparse

import (
	"strings"
	"testing"
)

// TestStripReply: each client's way of quoting and signing is dropped, the
// writer's own words are kept whole, and the counts say how many lines went.
func TestStripReply(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		quoted, sig    int
	}{
		{"gmail top-posted", "Sounds good, Thursday it is.\n\nOn Mon, 2 Jun 2025 at 10:00, Ann Example <ann@example.org> wrote:\n> Can we meet on Thursday?\n> \n> Ann\n",
			"Sounds good, Thursday it is.", 4, 0},
		{"wrapped attribution", "Yes.\n\nOn Mon, Jun 2, 2025 at 10:00 AM Ann Example <ann@example.org>\nwrote:\n\n> Thursday?\n",
			"Yes.", 3, 0},
		{"html blockquote, no >", "Agreed.\n\nOn Mon, 2 Jun 2025 at 10:00, Ann wrote:\nCan we meet on Thursday?\nThe room is booked.\n",
			"Agreed.", 3, 0},
		{"inline answers kept", "On Mon, 2 Jun 2025, Ann wrote:\n> Thursday?\nYes, Thursday.\n> Which room?\nThe big one.\n",
			"Yes, Thursday.\nThe big one.", 3, 0},
		{"french", "D'accord.\n\nLe lun. 2 juin 2025 à 10:00, Ann <ann@example.org> a écrit :\n> Jeudi ?\n",
			"D'accord.", 2, 0},
		{"german", "Passt.\n\nAm 02.06.2025 um 10:00 schrieb Ann <ann@example.org>:\n> Donnerstag?\n",
			"Passt.", 2, 0},
		{"spanish", "Vale.\n\nEl lun, 2 jun 2025 a las 10:00, Ann (<ann@example.org>) escribió:\n> ¿Jueves?\n",
			"Vale.", 2, 0},
		{"russian", "Хорошо.\n\n2 июня 2025 г., в 10:00, Анна <ann@example.org> пишет:\n> Четверг?\n",
			"Хорошо.", 2, 0},
		{"chinese", "好的。\n\n在 2025年6月2日 10:00，Ann <ann@example.org> 写道：\n> 周四？\n",
			"好的。", 2, 0},
		{"japanese gmail", "了解です。\n\n2025年6月2日(月) 10:00 Ann <ann@example.org>:\n> 木曜日？\n",
			"了解です。", 2, 0},
		{"outlook original message", "Approved.\n\n-----Original Message-----\nFrom: Ann\nSent: Monday, June 2, 2025 10:00 AM\nTo: Sam\nSubject: Budget\n\nPlease approve the budget.\n",
			"Approved.", 6, 0},
		{"outlook header block", "Approved.\n\n________________________________\nFrom: Ann Example <ann@example.org>\nSent: Monday, June 2, 2025 10:00\nTo: Sam Rivera <sam@example.com>\nSubject: Budget\n\nPlease approve.\n",
			"Approved.", 6, 0},
		{"outlook german", "Genehmigt.\n\nVon: Ann <ann@example.org>\nGesendet: Montag, 2. Juni 2025 10:00\nAn: Sam\nBetreff: Budget\n\nBitte genehmigen.\n",
			"Genehmigt.", 5, 0},
		{"signature", "See you then.\n\n-- \nSam Rivera\nExample Corp\n+1 555 0100\n", "See you then.", 0, 4},
		{"signature before the quote", "See you then.\n-- \nSam\n\nOn Mon, 2 Jun 2025, Ann wrote:\n> Thursday?\n", "See you then.", 2, 2},
		{"mobile", "On my way.\n\nSent from my iPhone\n", "On my way.", 0, 1},
		{"mobile german", "Bin unterwegs.\n\nVon meinem iPhone gesendet", "Bin unterwegs.", 0, 1},
		{"get outlook", "Thanks!\n\nGet Outlook for iOS\n", "Thanks!", 0, 1},
		{"bare quote at the top", "> Thursday?\nYes.\n", "Yes.", 1, 0},
		{"forward kept", "FYI.\n\n---------- Forwarded message ---------\nFrom: Ann <ann@example.org>\nDate: Mon, 2 Jun 2025\nSubject: Budget\nTo: Sam\n\nThe budget.\n",
			"FYI.\n\n---------- Forwarded message ---------\nFrom: Ann <ann@example.org>\nDate: Mon, 2 Jun 2025\nSubject: Budget\nTo: Sam\n\nThe budget.", 0, 0},
		{"nothing to drop", "Line one\n\n\n\nLine two\n", "Line one\n\nLine two", 0, 0},
		{"a dash line in the text stays", "Agenda:\n--\nitem one\nitem two\nitem three\nitem four\nitem five\nitem six\nitem seven\nitem eight\nitem nine\nitem ten\nitem eleven\n",
			"Agenda:\n--\nitem one\nitem two\nitem three\nitem four\nitem five\nitem six\nitem seven\nitem eight\nitem nine\nitem ten\nitem eleven", 0, 0},
		{"on a sentence that ends with a colon", "On Monday we decided:\n- ship it\n", "On Monday we decided:\n- ship it", 0, 0},
		{"only a quote", "On Mon, 2 Jun 2025, Ann wrote:\n> Thursday?\n", "", 2, 0},
	} {
		got := StripReply(c.in)
		if got.Text != c.want || got.QuotedLines != c.quoted || got.SignatureLines != c.sig {
			t.Errorf("%s: got %q (quoted %d, signature %d), want %q (%d, %d)", c.name, got.Text, got.QuotedLines, got.SignatureLines, c.want, c.quoted, c.sig)
		}
	}
}

// TestStripReplyDeepHistory: a reply at the end of a long chain keeps its two
// lines and drops the hundreds of lines of history it carries.
func TestStripReplyDeepHistory(t *testing.T) {
	text := "First message."
	for i := 0; i < 30; i++ {
		var b strings.Builder
		b.WriteString("Reply number " + string(rune('A'+i%26)) + ".\n\n-- \nSam\n\nOn Mon, 2 Jun 2025 at 10:00, Ann <ann@example.org> wrote:\n")
		for _, l := range strings.Split(text, "\n") {
			b.WriteString("> " + l + "\n")
		}
		text = b.String()
	}
	got := StripReply(text)
	if got.Text != "Reply number D." || got.QuotedLines < 100 || got.SignatureLines != 2 {
		t.Fatalf("got %q, quoted %d, signature %d", got.Text, got.QuotedLines, got.SignatureLines)
	}
}

package mailparse

import (
	"regexp"
	"strings"
)

// Reply is a message's text split into what its writer wrote in it and what
// it only carries along: the quoted history of the thread and the signature.
// mail_thread's text mode shows Text and says how many lines went, so that
// reading a thread costs each message's new words once, not every message's
// whole history again.
type Reply struct {
	Text           string // the writer's own text, quoted history and signature dropped
	QuotedLines    int    // lines of quoted history dropped (blank lines not counted)
	SignatureLines int    // lines of signature dropped, its delimiter included (blank lines not counted)
}

// StripReply drops from a message's text (as the store holds it: UTF-8, LF
// line ends) the quoted history and the signature:
//
//   - lines quoted with ">", wherever they are;
//   - an attribution line ("On … wrote:", "Le … a écrit :", "Am … schrieb …:",
//     "El … escribió:", "… пишет:", "… 写道：" and the like in some twenty
//     languages, also when a client wrapped it over two lines) and what follows
//     it: the quoted lines, and the whole rest of the text when no quoted line
//     follows (an HTML blockquote turned into text carries no "> "); text
//     written between quoted lines after it (an answer inline) is kept;
//   - Outlook's history: "-----Original Message-----" (and its translations),
//     or a header block "From: … Sent: … To: … Subject: …" (and its
//     translations), with a "____" rule just before it, and everything after;
//   - the signature: from the last "-- " line (RFC 3676; "--" alone when at
//     most 10 lines follow), and a closing "Sent from my iPhone", "Get Outlook
//     for iOS", "Von meinem iPhone gesendet" and the like.
//
// A forwarded message ("---------- Forwarded message ---------") is content,
// and is kept. When nothing of the writer's own is left the Text is empty: the
// counts say what went.
func StripReply(text string) Reply {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var r Reply
	keep := make([]bool, len(lines))
	for i := range keep {
		keep[i] = true
	}
	drop := func(from, to int, count *int) {
		for i := from; i < to; i++ {
			if keep[i] && strings.TrimSpace(lines[i]) != "" {
				*count++
			}
			keep[i] = false
		}
	}

	// The history: the first Outlook block or attribution line starts it.
	end := len(lines)
	for i := 0; i < len(lines); i++ {
		if n := outlookHistory(lines, i); n >= 0 {
			drop(n, len(lines), &r.QuotedLines)
			end = n
			break
		}
		if n := attribution(lines, i); n > 0 {
			quotedAfter := false
			for j := i + n; j < len(lines); j++ {
				if isQuoted(lines[j]) {
					quotedAfter = true
					break
				}
			}
			if !quotedAfter {
				drop(i, len(lines), &r.QuotedLines)
				end = i
				break
			}
			drop(i, i+n, &r.QuotedLines)
			i += n - 1
		}
	}
	for i := 0; i < end; i++ {
		if keep[i] && isQuoted(lines[i]) {
			drop(i, i+1, &r.QuotedLines)
		}
	}

	// The signature, in what is left.
	var kept []int
	for i := range lines {
		if keep[i] {
			kept = append(kept, i)
		}
	}
	for k := len(kept) - 1; k >= 0; k-- {
		l := lines[kept[k]]
		if l == "-- " || (strings.TrimSpace(l) == "--" && len(kept)-k-1 <= 10) {
			for _, i := range kept[k:] {
				drop(i, i+1, &r.SignatureLines)
			}
			kept = kept[:k]
			break
		}
	}
	// A mobile client's line, among the last three lines written.
	seen := 0
	for k := len(kept) - 1; k >= 0 && seen < 3; k-- {
		l := strings.TrimSpace(lines[kept[k]])
		if l == "" {
			continue
		}
		seen++
		if mobileRE.MatchString(l) {
			for _, i := range kept[k:] {
				drop(i, i+1, &r.SignatureLines)
			}
			kept = kept[:k]
			break
		}
	}

	var b strings.Builder
	blank := 0
	for _, i := range kept {
		l := strings.TrimRight(lines[i], " \t")
		if l == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			b.WriteString(strings.Repeat("\n", min(blank, 1)+1))
		}
		blank = 0
		b.WriteString(lines[i])
	}
	r.Text = b.String()
	return r
}

// isQuoted: a line quoted with ">" (after spaces a client may put first).
func isQuoted(l string) bool {
	return strings.HasPrefix(strings.TrimLeft(l, " \t"), ">")
}

// attributionRE matches a reply's attribution line, as mail clients write it
// in the languages they ship; each ends with the colon that announces the quote.
var attributionRE = regexp.MustCompile(`(?i)^(` + strings.Join([]string{
	`on\s.{4,}\swrote\s?:`,               // en
	`le\s.{4,}\sa\s+écrit\s?:`,           // fr
	`am\s.{4,}\sschrieb.{0,120}:`,        // de
	`el\s.{4,}\s(escribió|escribio)\s?:`, // es
	`il\s.{4,}\sha\s+scritto\s?:`,        // it
	`(em|no\sdia)\s.{4,}\sescreveu\s?:`,  // pt
	`op\s.{4,}\sschreef.{0,120}:`,        // nl
	`.{4,}\sskrev.{0,120}:`,              // sv da nb
	`(w\sdniu\s.{4,}\s)?.{0,120}\s(napisał|napisała|napisał\(a\)|pisze)\s?:`, // pl
	`dne\s.{4,}\snapsal(a|\(a\))?\s?:`,                                       // cs
	`.{4,}\s(kirjoitti)\s?:`,                                                 // fi
	`.{4,}\s(yazdı)\s?:`,                                                     // tr
	`.{4,}\s(пишет|написал|написала|написал\(а\)|пише|написав)\s?:`, // ru uk
	`.{4,}\s(έγραψε)\s?:`,             // el
	`.{2,}(写道|寫道)\s?[:：]`,             // zh
	`.{2,}(작성|님이\s작성)\s?[:：]`,         // ko
	`\d{4}年\d{1,2}月\d{1,2}日.{2,}[:：]`, // ja (Gmail: date, name, address)
	`.{2,}(のメッセージ|さんは書きました)\s?[:：]`,   // ja
}, "|") + `)\s*$`)

// attribution reports how many lines an attribution starting at lines[i]
// takes (1, or 2 when a client wrapped it), 0 when there is none.
func attribution(lines []string, i int) int {
	l := strings.TrimSpace(lines[i])
	if l == "" || len(l) > 400 || isQuoted(l) {
		return 0
	}
	if attributionRE.MatchString(l) {
		return 1
	}
	if i+1 < len(lines) {
		next := strings.TrimSpace(lines[i+1])
		if next != "" && len(next) < 120 && !isQuoted(next) && attributionRE.MatchString(l+" "+next) &&
			!attributionRE.MatchString(next) {
			return 2
		}
	}
	return 0
}

var (
	// originalRE: Outlook's and others' "-----Original Message-----" line.
	originalRE = regexp.MustCompile(`(?i)^-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|mensaje original|messaggio originale|mensagem original|oorspronkelijk bericht|ursprungligt meddelande|oprindelig meddelelse|opprinnelig melding|wiadomość oryginalna|původní zpráva|исходное сообщение|alkuperäinen viesti|orijinal mesaj|αρχικό μήνυμα)\s*-{2,}\s*$`)
	// headerFromRE, headerDateRE and headerSubjectRE: the fields of the header
	// block Outlook writes above the message it quotes, in its languages.
	headerFromRE    = regexp.MustCompile(`(?i)^\*?(from|von|de|da|van|från|fra|od|от|lähettäjä|kimden|差出人|发件人|寄件者|보낸\s?사람)\s?\*?\s?[:：]`)
	headerDateRE    = regexp.MustCompile(`(?i)^\*?(sent|date|gesendet|datum|envoyé|enviado|inviato|data|verzonden|skickat|sendt|wysłano|odesláno|отправлено|дата|lähetetty|gönderildi|tarih|送信日時|日付|发送时间|發送時間|日期|보낸\s?날짜)\s?\*?\s?[:：]`)
	headerSubjectRE = regexp.MustCompile(`(?i)^\*?(subject|to|betreff|an|objet|à|asunto|para|oggetto|a|onderwerp|aan|ämne|till|emne|til|temat|do|předmět|komu|тема|кому|aihe|vastaanottaja|konu|kime|件名|宛先|主题|收件人|主旨|제목|받는\s?사람)\s?\*?\s?[:：]`)
	// forwardRE: the line above a forwarded message, which is kept.
	forwardRE = regexp.MustCompile(`(?i)^(-{2,}\s*(forwarded message|original message follows|weitergeleitete nachricht|message transféré|mensaje reenviado|messaggio inoltrato|mensagem encaminhada|doorgestuurd bericht|vidarebefordrat meddelande|videresendt (meddelelse|melding)|przekazana wiadomość|přeposlaná zpráva|пересылаемое сообщение|välitetty viesti|iletilen ileti|转发的邮件|転送されたメッセージ)\s*-*|begin forwarded message\s?:|début du message réexpédié\s?:|anfang der weitergeleiteten nachricht\s?:)$`)
	// mobileRE: the line a mail program on a phone adds below the text.
	mobileRE = regexp.MustCompile(`(?i)^(sent from my \S.{0,40}|sent from (mail|outlook) for \S.{0,30}|sent from (yahoo|aol|proton|protonmail|samsung|gmail|outlook|my mobile)\b.{0,40}|get outlook for (ios|android)|sent via \S.{0,40}|envoyé de mon \S.{0,30}|envoyé depuis mon \S.{0,30}|von meinem \S.{0,30} gesendet|gesendet von meinem \S.{0,30}|enviado desde mi \S.{0,30}|enviado do meu \S.{0,30}|inviato da(l mio)? \S.{0,30}|verzonden (vanaf|met) (mijn )?\S.{0,30}|skickat från min \S.{0,30}|sendt fra min \S.{0,30}|wysłane z (mojego )?\S.{0,30}|odesláno z (mého )?\S.{0,30}|отправлено с (моего )?\S.{0,30}|lähetetty \S.{0,30}|\S{0,20}から送信|发自我的\S{0,20}|從我的\S{0,20}傳送)\.?$`)
)

// outlookHistory returns the first line of the history that starts at
// lines[i] in Outlook's manner (an "Original Message" line, or a header
// block, with a rule of underscores just before it), or -1.
func outlookHistory(lines []string, i int) int {
	l := strings.TrimSpace(lines[i])
	start := i
	if i > 0 && strings.Trim(strings.TrimSpace(lines[i-1]), "_") == "" && strings.Count(lines[i-1], "_") >= 8 {
		start = i - 1
	}
	if originalRE.MatchString(l) {
		return start
	}
	if !headerFromRE.MatchString(l) {
		return -1
	}
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if forwardRE.MatchString(strings.TrimSpace(lines[j])) {
			return -1 // a forwarded message's header: content, kept
		}
	}
	date, subject := false, false
	for j := i + 1; j < len(lines) && j <= i+6; j++ {
		h := strings.TrimSpace(lines[j])
		date = date || headerDateRE.MatchString(h)
		subject = subject || headerSubjectRE.MatchString(h)
	}
	if date && subject {
		return start
	}
	return -1
}

// Package testmsg builds the small RFC 5322 messages that tests hand to IMAP and SMTP
// servers. It is for tests only: no non-test code may import it.
package testmsg

// Plain is a plain text message from Alice at from to Bob at to, with a Cc line when cc is
// not empty, the subject and the Message-ID <msgid>. Its body holds a line that is only a
// dot, a line that starts with two, and non-ASCII text, so a transport that mangles any of
// them shows.
func Plain(from, to, cc, subject, msgid string) []byte {
	h := "From: Alice <" + from + ">\r\n" +
		"To: Bob <" + to + ">\r\n"
	if cc != "" {
		h += "Cc: " + cc + "\r\n"
	}
	return []byte(h +
		"Subject: " + subject + "\r\n" +
		"Date: Mon, 02 Jan 2006 15:04:05 +0000\r\n" +
		"Message-ID: <" + msgid + ">\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Content-Transfer-Encoding: 8bit\r\n" +
		"\r\n" +
		"Hello, Bob.\r\n" +
		".\r\n" + // a line that is only a dot: dot-stuffing must keep it
		"..two dots\r\n" +
		"Grüße, Alice\r\n")
}

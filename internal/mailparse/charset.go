package mailparse

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-message/charset"
)

// charsetAliases maps labels that mail gets wrong in practice to what senders meant: Latin-1
// labels routinely carry Windows-1252 punctuation, and GB2312 labels carry GBK characters.
var charsetAliases = map[string]string{
	"iso-8859-1":     "windows-1252",
	"iso8859-1":      "windows-1252",
	"iso_8859-1":     "windows-1252",
	"latin1":         "windows-1252",
	"latin-1":        "windows-1252",
	"l1":             "windows-1252",
	"cp1252":         "windows-1252",
	"gb2312":         "gbk",
	"euc-cn":         "gbk",
	"x-gbk":          "gbk",
	"cp936":          "gbk",
	"ks_c_5601-1987": "euc-kr",
	"x-sjis":         "shift_jis",
	"sjis":           "shift_jis",
	"cp932":          "shift_jis",
	"windows-31j":    "shift_jis",
	"utf8":           "utf-8",
}

// 8-bit-clean labels that say nothing about the bytes: read as UTF-8 when valid, else Windows-1252.
var vagueCharsets = map[string]bool{
	"": true, "us-ascii": true, "ascii": true, "default": true, "unknown-8bit": true,
	"x-unknown": true, "unknown": true, "8bit": true, "7bit": true, "none": true,
	"x-user-defined": true, "ansi_x3.4-1968": true,
}

func normCharset(cs string) string {
	cs = strings.ToLower(strings.Trim(strings.TrimSpace(cs), `"'`))
	if a, ok := charsetAliases[cs]; ok {
		return a
	}
	return cs
}

// decodeCharset converts b from charset cs to valid UTF-8. ok is false when cs is unknown; the
// bytes are then kept as they are, with invalid UTF-8 replaced by U+FFFD.
func decodeCharset(cs string, b []byte) (s string, ok bool) {
	cs = normCharset(cs)
	switch {
	case cs == "utf-8":
		return validUTF8(b), true
	case vagueCharsets[cs]:
		if utf8.Valid(b) {
			return string(b), true
		}
		cs = "windows-1252"
	}
	r, err := charset.Reader(cs, bytes.NewReader(b))
	if err != nil || r == nil {
		return validUTF8(b), false
	}
	out, err := io.ReadAll(r)
	return validUTF8(out), true // a decoder error keeps what was converted before it
}

// knownCharset reports whether decodeCharset can convert from cs.
func knownCharset(cs string) bool {
	cs = normCharset(cs)
	if cs == "utf-8" || vagueCharsets[cs] {
		return true
	}
	_, err := charset.Reader(cs, bytes.NewReader(nil))
	return err == nil
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// Package termsafe owns how text postern did not write is shown on a person's terminal: controls,
// DEL, bidi and other invisible characters become visible escapes; visible text is never dropped.
package termsafe

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Line returns s as one line that shows every character of s: each character that could move
// the cursor, recolour, retitle or reorder the terminal, or hide itself, is written as an escape:
//
//	\                                      \\
//	newline, carriage return, tab          \n \r \t
//	other C0 controls, DEL, invalid UTF-8  \x1b \x7f \xff
//	C1 controls (U+0080–U+009F)            \u009b
//	format characters (Unicode Cf: bidi controls U+202A–202E, U+2066–2069, U+200E/F, U+061C,
//	zero-width characters, soft hyphen, BOM, tags), U+2028/2029, the other default-ignorable
//	characters (Hangul fillers, U+034F) and noncharacters:   \u202e, \U000e0041
//
// Every other character (letters of any script, emoji, variation selectors) is left as it is;
// an emoji sequence joined by U+200D shows its joiner as \u200d. Because the backslash is
// escaped too, the output reads back unambiguously: \x1b in it is always an escape, never the
// four characters someone typed (those read \\x1b).
func Line(s string) string { return escape(s, false) }

// Text is Line for text of several lines that postern lays out itself (a preview, an error
// that joins several): newlines and tabs are kept, everything else Line escapes is escaped.
func Text(s string) string { return escape(s, true) }

// Unsafe reports whether Line escapes r.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == '\\':
		return true
	case r < 0xa0:
		return false
	case r == 0x2028, r == 0x2029:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point)
}

func escape(s string, multiline bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Unsafe(r) && !(multiline && (r == '\n' || r == '\t')) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = appendHex(b, `\x`, rune(s[i]), 2)
		case multiline && (r == '\n' || r == '\t'), !Unsafe(r):
			b = append(b, s[i:i+n]...)
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r < 0x80:
			b = appendHex(b, `\x`, r, 2)
		case r <= 0xffff:
			b = appendHex(b, `\u`, r, 4)
		default:
			b = appendHex(b, `\U`, r, 8)
		}
		i += n
	}
	return string(b)
}

func appendHex(b []byte, prefix string, r rune, width int) []byte {
	b = append(b, prefix...)
	h := strconv.FormatInt(int64(r), 16)
	for range width - len(h) {
		b = append(b, '0')
	}
	return append(b, h...)
}

// JSON rewrites, in encoded JSON, every character Line would escape that encoding/json left
// raw (DEL, C1, format characters, noncharacters) as a \u escape (a surrogate pair above
// U+FFFF), so the document decodes to the same value and prints safely. Such characters can
// only stand inside JSON strings, where \u escapes mean them exactly; invalid UTF-8, which
// encoding/json never writes, is left as it is.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x7f && !(r == utf8.RuneError && n == 1) && Unsafe(r) {
			if r > 0xffff {
				hi, lo := surrogates(r)
				out = appendHex(appendHex(out, `\u`, hi, 4), `\u`, lo, 4)
			} else {
				out = appendHex(out, `\u`, r, 4)
			}
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

package corpus

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// The legacy charsets below are encoded from small tables that cover the
// characters this package writes (see data.go); they are not general
// converters. encode reports false for a rune outside its table.

// Charset names as they appear in RFC 2047 encoded words.
const (
	csUTF8        = "UTF-8"
	csLatin1      = "ISO-8859-1"
	csLatin9      = "ISO-8859-15"
	csWindows1252 = "windows-1252"
	csKOI8R       = "KOI8-R"
	csISO2022JP   = "ISO-2022-JP"
	csShiftJIS    = "Shift_JIS"
)

// latin9 holds the ISO-8859-15 code points that differ from ISO-8859-1.
var latin9 = map[rune]byte{
	'€': 0xA4, 'Š': 0xA6, 'š': 0xA8, 'Ž': 0xB4, 'ž': 0xB8, 'Œ': 0xBC, 'œ': 0xBD, 'Ÿ': 0xBE,
}

// cp1252 holds the Windows-1252 characters in 0x80–0x9F.
var cp1252 = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87,
	'ˆ': 0x88, '‰': 0x89, 'Š': 0x8A, '‹': 0x8B, 'Œ': 0x8C, 'Ž': 0x8E,
	'‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97,
	'˜': 0x98, '™': 0x99, 'š': 0x9A, '›': 0x9B, 'œ': 0x9C, 'ž': 0x9E, 'Ÿ': 0x9F,
}

// koi8rLower lists the KOI8-R bytes 0xC0–0xDF; 0xE0–0xFF are the same
// letters in upper case.
const koi8rLower = "юабцдефгхийклмнопярстужвьызшэщчъ"

var koi8r = func() map[rune]byte {
	m := map[rune]byte{'ё': 0xA3, 'Ё': 0xB3}
	i := 0
	for _, r := range koi8rLower {
		m[r] = byte(0xC0 + i)
		m[[]rune(strings.ToUpper(string(r)))[0]] = byte(0xE0 + i)
		i++
	}
	return m
}()

// jisKanji maps the kanji this package uses to JIS X 0208 (row, cell) codes
// as two bytes in 0x21–0x7E. Hiragana are computed in jisCode.
var jisKanji = map[rune]uint16{
	'日': 0x467C, '本': 0x4B5C, '語': 0x386C, '会': 0x3271, '議': 0x3544,
	'予': 0x4D3D, '定': 0x446A, '資': 0x3B71, '料': 0x4E41, '山': 0x3B33,
	'田': 0x4544, '太': 0x4240, '郎': 0x4F3A, '佐': 0x3A34, '藤': 0x4623,
	'花': 0x3256, '子': 0x3B52, '東': 0x456C, '京': 0x357E,
}

func jisCode(r rune) (uint16, bool) {
	switch {
	case r >= 0x3041 && r <= 0x3093: // hiragana, JIS row 4
		return 0x2421 + uint16(r-0x3041), true
	case r >= 0x30A1 && r <= 0x30F6: // katakana, JIS row 5
		return 0x2521 + uint16(r-0x30A1), true
	case r == 'ー':
		return 0x213C, true
	}
	c, ok := jisKanji[r]
	return c, ok
}

// encode converts s to charset cs, reporting false if a character has no
// encoding in this package's tables.
func encode(cs, s string) ([]byte, bool) {
	out := make([]byte, 0, len(s)+8)
	switch cs {
	case csUTF8:
		return []byte(s), true
	case csISO2022JP:
		jis := false
		for _, r := range s {
			if r < 0x80 {
				if jis {
					out = append(out, 0x1B, '(', 'B')
					jis = false
				}
				out = append(out, byte(r))
				continue
			}
			c, ok := jisCode(r)
			if !ok {
				return nil, false
			}
			if !jis {
				out = append(out, 0x1B, '$', 'B')
				jis = true
			}
			out = append(out, byte(c>>8), byte(c))
		}
		if jis {
			out = append(out, 0x1B, '(', 'B')
		}
		return out, true
	}
	for _, r := range s {
		if r < 0x80 {
			if cs == csShiftJIS && (r == '\\' || r == '~') {
				return nil, false // yen sign and overline in JIS X 0201
			}
			out = append(out, byte(r))
			continue
		}
		var b byte
		ok := false
		switch cs {
		case csLatin1:
			b, ok = byte(r), r <= 0xFF && r >= 0xA0
		case csLatin9:
			if b, ok = latin9[r]; !ok && r >= 0xA0 && r <= 0xFF {
				switch r {
				case 0xA4, 0xA6, 0xA8, 0xB4, 0xB8, 0xBC, 0xBD, 0xBE:
				default:
					b, ok = byte(r), true
				}
			}
		case csWindows1252:
			if b, ok = cp1252[r]; !ok {
				b, ok = byte(r), r >= 0xA0 && r <= 0xFF
			}
		case csKOI8R:
			b, ok = koi8r[r]
		case csShiftJIS:
			c, jok := jisCode(r)
			if !jok {
				return nil, false
			}
			j1, j2 := int(c>>8), int(c&0xFF)
			s1 := (j1+1)>>1 + 0x70
			if j1 > 0x5E {
				s1 = (j1+1)>>1 + 0xB0
			}
			s2 := j2 + 0x7E
			if j1%2 == 1 {
				s2 = j2 + 0x1F
				if j2 >= 0x60 {
					s2 = j2 + 0x20
				}
			}
			out = append(out, byte(s1), byte(s2))
			continue
		}
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

// charsetsFor lists the charsets able to encode s, UTF-8 first.
func charsetsFor(s string) []string {
	out := []string{csUTF8}
	for _, cs := range []string{csLatin1, csLatin9, csWindows1252, csKOI8R, csISO2022JP, csShiftJIS} {
		if _, ok := encode(cs, s); ok {
			out = append(out, cs)
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

const upperHex = "0123456789ABCDEF"

// qWord encodes b in RFC 2047 "Q" form, restricted to the characters
// allowed in a phrase (RFC 2047 section 5 (3)).
func qWord(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c == ' ':
			sb.WriteByte('_')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '!', c == '*', c == '+', c == '-', c == '/':
			sb.WriteByte(c)
		default:
			sb.WriteByte('=')
			sb.WriteByte(upperHex[c>>4])
			sb.WriteByte(upperHex[c&15])
		}
	}
	return sb.String()
}

// encodedWords encodes s as RFC 2047 encoded words in charset cs with
// encoding 'B' or 'Q', splitting at character boundaries so that no word is
// longer than 75 characters. Every word is self-contained (ISO-2022-JP words
// end in ASCII mode). It reports false if cs cannot encode s.
func encodedWords(cs string, enc byte, s string) ([]string, bool) {
	if _, ok := encode(cs, s); !ok {
		return nil, false
	}
	wrap := func(chunk string) string {
		b, _ := encode(cs, chunk)
		var text string
		if enc == 'B' {
			text = base64.StdEncoding.EncodeToString(b)
		} else {
			text = qWord(b)
		}
		return "=?" + cs + "?" + string(enc) + "?" + text + "?="
	}
	var words []string
	start, last := 0, ""
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		w := wrap(s[start : i+n])
		if len(w) > 75 && i > start {
			words = append(words, last)
			start = i
			continue
		}
		last = w
		i += n
	}
	if start < len(s) {
		words = append(words, last)
	}
	return words, true
}

// headerText renders unstructured header text (a Subject). ASCII text is
// written as is; otherwise the leading ASCII words stay readable and the
// rest becomes encoded words, folded one per line.
func headerText(s, cs string, enc byte) string {
	if isASCII(s) {
		return s
	}
	cut := 0
	for i := 0; i < len(s) && s[i] < 0x80; i++ {
		if s[i] == ' ' {
			cut = i + 1
		}
	}
	words, ok := encodedWords(cs, enc, s[cut:])
	if !ok {
		words, _ = encodedWords(csUTF8, enc, s[cut:])
	}
	return s[:cut] + strings.Join(words, "\r\n ")
}

// isAtext reports whether c may appear unquoted in an RFC 5322 phrase.
func isAtext(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-/=?^_`{|}~ ", c) >= 0
}

// address renders a mailbox "name <email>" with the display name encoded
// in charset cs when it is not ASCII.
func address(name, email, cs string, enc byte) string {
	if name == "" {
		return email
	}
	if !isASCII(name) {
		words, ok := encodedWords(cs, enc, name)
		if !ok {
			words, _ = encodedWords(csUTF8, enc, name)
		}
		return strings.Join(words, "\r\n ") + " <" + email + ">"
	}
	plain := true
	for i := 0; i < len(name); i++ {
		if !isAtext(name[i]) {
			plain = false
			break
		}
	}
	if plain {
		return name + " <" + email + ">"
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(name); i++ {
		if name[i] == '"' || name[i] == '\\' {
			sb.WriteByte('\\')
		}
		sb.WriteByte(name[i])
	}
	sb.WriteString(`" <`)
	sb.WriteString(email)
	sb.WriteByte('>')
	return sb.String()
}

// rfc2231 renders a parameter value in RFC 2231 extended form: the
// charset "UTF-8", an empty language, then percent-encoded bytes.
func rfc2231(v string) string {
	var sb strings.Builder
	sb.WriteString("UTF-8''")
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			sb.WriteByte(c)
			continue
		}
		sb.WriteByte('%')
		sb.WriteByte(upperHex[c>>4])
		sb.WriteByte(upperHex[c&15])
	}
	return sb.String()
}

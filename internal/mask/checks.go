package mask

import (
	"strings"
	"unicode/utf8"
)

// groupSep returns the width of the separator that may stand between the groups of an IBAN, a
// card or a NIR at s[j:], 0 if none: a run of at most maxSepRunes spaces of any kind, tabs, line
// breaks, dashes of any kind, dots, middle dots and bullets, and '>' or '|' after a line break
// (a quoted reply, a table), so "4111  1111\t1111\n1111" and "FR76–3000–6000" read as one
// number; a blank line ends one. The view has already turned no-break and thin spaces into spaces (NFKC).
func groupSep(s string, j int) int {
	k, runes, brk, lines := j, 0, false, 0
	for k < len(s) && runes < maxSepRunes {
		r, w := rune(s[k]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[k:])
		}
		switch r {
		case ' ', '\t', '-', '.', '\u00A0', '\u202F', '\u2009', '\u2007', '\u2010', '\u2011',
			'\u2012', '\u2013', '\u2014', '\u2212', '\u00B7', '\u2022', '\u3000':
		case '\n':
			if lines++; lines > 1 {
				return 0 // a blank line ends a number
			}
			brk = true
		case '\r':
			brk = true
		case '>', '|':
			if !brk {
				return k - j
			}
		default:
			return k - j
		}
		k += w
		runes++
	}
	if k < len(s) && runes == maxSepRunes {
		if r, _ := utf8.DecodeRuneInString(s[k:]); !isWordRune(r) {
			return 0 // a longer run of blanks is no separator between groups
		}
	}
	return k - j
}

// maxSepRunes is the most characters a separator between two groups may have.
const maxSepRunes = 6

// ibanAt reads an IBAN at the word start i: two letters, two check digits and a national part,
// 15 to 34 characters in all, in one word or in groups of any size (fours and fives, mostly)
// joined by separators (groupSep), any case. last4 is set when its mod-97 check holds (check
// digits 02–98), trying the longest run of groups first; shaped is set, with end, when it has
// the shape but fails the check, so that it is left alone whole.
func ibanAt(s string, i int) (end int, last4 string, shaped bool) {
	if len(s)-i < 4 || !isLetter(s[i]) || !isLetter(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
		return 0, "", false
	}
	var buf [40]byte
	var ends, sizes [34]int
	n, groups, lastDigit := 0, 0, -1
	for j := i; groups < len(ends); {
		e := j
		digit := false
		for e < len(s) && isAlnum(s[e]) {
			digit = digit || isDigit(s[e])
			e++
		}
		if e == j || !endsWord(s, e) || n+e-j > 34 {
			break
		}
		n += copy(buf[n:], s[j:e])
		ends[groups], sizes[groups] = e, n
		if digit {
			lastDigit = groups
		}
		groups++
		k := groupSep(s, e)
		if k == 0 || e+k >= len(s) || !isAlnum(s[e+k]) {
			break
		}
		j = e + k
	}
	if groups == 0 || n < 15 && sizes[0] < 15 {
		return 0, "", false
	}
	for g := groups - 1; g >= 0; g-- {
		if sizes[g] < 15 {
			break
		}
		if ibanValid(string(buf[:sizes[g]])) {
			return ends[g], strings.ToUpper(string(buf[sizes[g]-4 : sizes[g]])), false
		}
	}
	if lastDigit >= 0 && sizes[lastDigit] >= 15 {
		// Only its first group is passed over: the groups after it are read by the other
		// rules, so that a card written after an IBAN-like word is still found.
		return ends[0], "", true
	}
	return 0, "", false
}

func ibanValid(iban string) bool {
	if len(iban) < 15 || len(iban) > 34 {
		return false
	}
	check := iban[2:4]
	if check == "00" || check == "01" || check == "99" {
		return false
	}
	rem := 0
	for k := 0; k < len(iban); k++ {
		c := iban[(k+4)%len(iban)]
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case isLetter(c):
			rem = (rem*100 + int(c|0x20-'a') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// endsWord reports whether no letter or digit follows s[:j].
func endsWord(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	return !isWordRune(r)
}

// nirAt reads a French social security number (NIR) at the word start i: 13 characters and a
// two-digit key, laid out 1 85 05 78 006 084 91 with or without the spaces (each one optional),
// the department 2A or 2B for Corsica. last4 is set when the key is 97 − (number mod 97), with
// 2A read as 19 and 2B as 18; the sex digit must be 1, 2, 3, 4, 7 or 8 and the month possible.
func nirAt(s string, i int) (end int, last4 string) {
	layout := [...]int{1, 2, 2, 2, 3, 3, 2}
	var d [15]byte
	n, j := 0, i
	for g, size := range layout {
		if g > 0 {
			if k := groupSep(s, j); k > 0 && j+k < len(s) && isAlnum(s[j+k]) {
				j += k
			}
		}
		if g == len(layout)-1 {
			j = nirKeyLabel(s, j)
		}
		for range size {
			if j >= len(s) {
				return 0, ""
			}
			c := s[j]
			corsica := g == 3 && n == 6 && d[5] == '2' && (c|0x20 == 'a' || c|0x20 == 'b')
			if !isDigit(c) && !corsica {
				return 0, ""
			}
			d[n] = c &^ 0x20
			if isDigit(c) {
				d[n] = c
			}
			n++
			j++
		}
	}
	if !endsWord(s, j) || !strings.ContainsRune("123478", rune(d[0])) {
		return 0, ""
	}
	month := int(d[3]-'0')*10 + int(d[4]-'0')
	if month == 0 || month > 12 && month < 20 || month > 42 && month < 50 {
		return 0, ""
	}
	if d[5] == '0' && d[6] == '0' {
		return 0, ""
	}
	var num uint64
	for k := 0; k < 13; k++ {
		c := d[k]
		switch {
		case k == 5 && (d[6] == 'A' || d[6] == 'B'):
			c = '1'
		case k == 6 && c == 'A':
			c = '9'
		case k == 6 && c == 'B':
			c = '8'
		}
		num = num*10 + uint64(c-'0')
	}
	key := uint64(d[13]-'0')*10 + uint64(d[14]-'0')
	if key != 97-num%97 {
		return 0, ""
	}
	return j, string(d[11:15])
}

// cardAt reads a payment card number at the word start i. Numbers joined by single separators
// (space, no-break space, dash, dot) form a cluster; a card is a prefix of it that passes Luhn
// and either is grouped like a card (4-4-4-4, 4-4-4-1…4, 4-4-4-4-1…3, 4-6-5, 4-6-4) and starts
// with 2–6, or is written in one piece with the length and prefix of a known brand. clusterEnd
// is the end of the whole cluster (or of the word at i when it is not a number), so that a
// failed cluster is skipped as a whole and no card is looked for in its middle.
func cardAt(s string, i int) (end int, last4 string, clusterEnd int) {
	var lens [6]int
	var ends [6]int
	var buf [19]byte
	groups, n := 0, 0
	clusterEnd = i
	for j := i; ; {
		e := j
		for e < len(s) && isDigit(s[e]) {
			e++
		}
		if e == j || !endsWord(s, e) {
			break
		}
		if groups < len(lens) {
			lens[groups], ends[groups] = e-j, e
			if n+e-j <= len(buf) {
				copy(buf[n:], s[j:e])
			}
			n += e - j
			groups++
		}
		clusterEnd = e
		k := groupSep(s, e)
		if k == 0 || e+k >= len(s) || !isDigit(s[e+k]) {
			break
		}
		j = e + k
	}
	if clusterEnd == i {
		return 0, "", wordEnd(s, i)
	}
	digits := 0
	for g := 0; g < groups; g++ {
		digits += lens[g]
		if digits > 19 {
			break
		}
		if digits < 13 || !cardShape(lens[:g+1], buf[:digits]) || !luhn(buf[:digits]) {
			continue
		}
		end, last4 = ends[g], string(buf[digits-4:digits])
	}
	return end, last4, clusterEnd
}

func cardShape(lens []int, d []byte) bool {
	if len(lens) == 1 {
		return brand(d)
	}
	if d[0] < '2' || d[0] > '6' {
		return false
	}
	switch {
	case len(lens) == 3 && lens[0] == 4 && lens[1] == 6 && (lens[2] == 5 || lens[2] == 4):
		return true
	case len(lens) == 4 || len(lens) == 5:
		for _, l := range lens[:len(lens)-1] {
			if l != 4 {
				return false
			}
		}
		last := lens[len(lens)-1]
		return last >= 1 && last <= 4 && !(len(lens) == 5 && last == 4)
	}
	return false
}

// brand: a number written in one piece is a card only with a known brand's prefix and length.
// Thirteen digits are left to EAN barcodes and fourteen to SIRET numbers.
func brand(d []byte) bool {
	p := func(k int) int {
		v := 0
		for _, c := range d[:k] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	visa := d[0] == '4'
	mc := p(2) >= 51 && p(2) <= 55 || p(4) >= 2221 && p(4) <= 2720
	amex := p(2) == 34 || p(2) == 37
	disc := p(4) == 6011 || p(2) == 65 || p(3) >= 644 && p(3) <= 649
	jcb := p(4) >= 3528 && p(4) <= 3589
	switch len(d) {
	case 15:
		return amex
	case 16:
		return visa || mc || disc || jcb
	case 17, 18:
		return disc || jcb
	case 19:
		return visa || disc || jcb
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k] - '0')
		if (len(d)-1-k)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// nirKeyLabel skips a word that names the key of a NIR written apart from its 13 digits
// ("1 85 05 78 006 084 clé 91", "…, cle 91", "… (key: 91)", "…, 91"), with the comma or bracket before
// it and the blanks and colon after it.
func nirKeyLabel(s string, j int) int {
	k := j
	if k < len(s) && (s[k] == ',' || s[k] == ';') {
		k++
	}
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k < len(s) && (s[k] == '(' || s[k] == '[') {
		k++
	}
	for _, w := range []string{"clé", "clef", "cle", "key", "schlüssel", "chiave", "clave"} {
		if len(s)-k >= len(w) && strings.EqualFold(s[k:k+len(w)], w) && !isWordAfter(s, k+len(w)) {
			k += len(w)
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k < len(s) && (s[k] == ':' || s[k] == '=') {
				k++
			}
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			return k
		}
	}
	if j < len(s) && s[j] == ',' {
		if k := skipBlanks(s, j+1); k > j+1 && k < len(s) && isDigit(s[k]) {
			return k // "1 85 05 78 006 084, 91": the key checks whether it is one
		}
	}
	return j
}

func isWordAfter(s string, k int) bool { return !endsWord(s, k) }

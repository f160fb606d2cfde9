package mask

// The codes a message masks, masked wherever else they appear. A field that is never read for
// code shapes (a Message-ID, a Date: Verdict.WithoutCode) still loses a code the message's
// subject or text gave: "<482913.x@example.com>" in a message whose text says "Your code is
// 482913". A code is matched by its letters and digits alone, case aside, across the
// separators a code is written with ("482 913", "482-913"), inside a longer word too.

// codeSet holds the codes of a message as fingerprints (keyed with the process's seed), with
// their lengths and first two bytes; at most eight.
type codeSet struct {
	n    uint8
	h    [8]uint64
	size [8]uint8
	head [8][2]byte
}

// canon is the letters and digits of a view's span, upper-cased (ASCII: the view has folded
// every digit and look-alike letter).
func canon(s string) string {
	b := make([]byte, 0, len(s))
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case isDigit(c), 'A' <= c && c <= 'Z':
			b = append(b, c)
		case 'a' <= c && c <= 'z':
			b = append(b, c-'a'+'A')
		}
	}
	return string(b)
}

// add keeps the code whose view is s, when it is one a search could find: four to 32 letters
// and digits with a digit, not a year.
func (cs *codeSet) add(s string) {
	c := canon(s)
	if len(c) < 4 || len(c) > 32 || cs.n >= uint8(len(cs.h)) || isYear(c) {
		return
	}
	digit := false
	for k := 0; k < len(c); k++ {
		digit = digit || isDigit(c[k])
	}
	if !digit {
		return
	}
	h := fingerprint(c)
	for k := range int(cs.n) {
		if cs.h[k] == h && int(cs.size[k]) == len(c) {
			return
		}
	}
	k := cs.n
	cs.h[k], cs.size[k], cs.head[k] = h, uint8(len(c)), [2]byte{c[0], c[1]}
	cs.n++
}

// spans returns, in order and apart, the spans of the view f whose letters and digits are one
// of the codes: runs of ASCII letters and digits joined by code separators (' ', '-', '.',
// '_', '/'), anything else parting them.
func (cs *codeSet) spans(f string) [][2]int {
	if cs.n == 0 {
		return nil
	}
	var out [][2]int
	var c []byte // the letters and digits of the current run, upper-cased
	var at []int // where each of them is in f
	flush := func() {
		for a := 0; a+1 < len(c); a++ {
			for k := range int(cs.n) {
				size := int(cs.size[k])
				if a+size > len(c) || c[a] != cs.head[k][0] || c[a+1] != cs.head[k][1] {
					continue
				}
				if fingerprint(string(c[a:a+size])) != cs.h[k] {
					continue
				}
				from, to := at[a], at[a+size-1]+1
				if len(out) == 0 || out[len(out)-1][1] <= from {
					out = append(out, [2]int{from, to})
				}
				a += size - 1
				break
			}
		}
		c, at = c[:0], at[:0]
	}
	for k := 0; k < len(f); k++ {
		x := f[k]
		switch {
		case isDigit(x), 'A' <= x && x <= 'Z':
			c, at = append(c, x), append(at, k)
		case 'a' <= x && x <= 'z':
			c, at = append(c, x-'a'+'A'), append(at, k)
		case x == ' ' || x == '-' || x == '.' || x == '_' || x == '/':
		case x == '[' && markerLen(f[k:]) > 0:
			flush()
			k += markerLen(f[k:]) - 1
		default:
			flush()
		}
	}
	flush()
	return out
}

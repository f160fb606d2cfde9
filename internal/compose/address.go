package compose

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Address is one mailbox. Addr is a bare addr-spec, local@domain, in the canonical form
// [ParseAddress] gives; Name is the display name as a person reads it (never encoded).
type Address struct {
	Name string `json:"name,omitempty"`
	Addr string `json:"addr"`
}

// String returns a in RFC 5322 form for a header: "Name <addr>", the name Q- or B-encoded when
// it is not plain ASCII and quoted when it holds specials; just addr when there is no name. It
// never holds a line break, whatever Name holds.
func (a Address) String() string { return strings.Join(a.tokens(), " ") }

// tokens returns the pieces of a's header form, between which a header may be folded.
func (a Address) tokens() []string {
	if a.Name == "" {
		return []string{a.Addr}
	}
	return append(nameTokens(a.Name), "<"+a.Addr+">")
}

// display returns a as a person reads it, and as [ParseAddress] reads it back: the name as is
// (UTF-8), quoted when it is not a plain run of words.
func (a Address) display() string {
	switch {
	case a.Name == "":
		return a.Addr
	case isPhrase(a.Name, true):
		return a.Name + " <" + a.Addr + ">"
	default:
		return quote(a.Name) + " <" + a.Addr + ">"
	}
}

// key is what two addresses are compared by: the addr-spec, case folded.
func key(addr string) string { return strings.ToLower(addr) }

// ParseAddress reads one address as an agent gave it: "bob@example.com", "Bob Smith
// <bob@example.com>", "\"Smith, Bob\" <bob@example.com>". It refuses, with a [*FieldError] naming
// field, anything that is not exactly one plain address: a list or a group, control characters,
// encoded words, a second address hidden in the display name, comments, source routes, more
// than 320 bytes.
func ParseAddress(field, s string) (Address, error) {
	if len(s) > maxAddress {
		return Address{}, refuse(field, "is %d bytes long, more than the 320 an address may take; give one address", len(s))
	}
	if err := checkLine(field, s); err != nil {
		return Address{}, err
	}
	s = strings.Trim(s, " ")
	if s == "" {
		return Address{}, refuse(field, "is empty; give an address such as name@example.com")
	}
	lt, gt := -1, -1
	quoted, literal := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quoted {
			switch c {
			case '\\':
				i++
			case '"':
				quoted = false
			}
			continue
		}
		switch c {
		case '"':
			quoted = true
		case '[':
			literal = true
		case ']':
			literal = false
		case ',', ';':
			return Address{}, refuse(field, "holds more than one address (%q separates a list); give one address per entry", c)
		case ':':
			if !literal {
				return Address{}, refuse(field, "uses group syntax (name: addresses;); give one address per entry")
			}
		case '(', ')':
			return Address{}, refuse(field, "holds a comment in parentheses; give the address without it")
		case '<':
			if lt >= 0 {
				return Address{}, refuse(field, "holds more than one address (two '<'); give one address per entry")
			}
			lt = i
		case '>':
			if gt >= 0 {
				return Address{}, refuse(field, "holds more than one address (two '>'); give one address per entry")
			}
			gt = i
		}
	}
	if quoted {
		return Address{}, refuse(field, "opens a double quote and never closes it; close it or leave it out")
	}
	if lt < 0 && gt < 0 {
		addr, why := parseAddrSpec(s)
		if why != "" {
			return Address{}, refuse(field, "%s", why)
		}
		return Address{Addr: addr}, nil
	}
	if lt < 0 || gt < lt {
		return Address{}, refuse(field, "has an unmatched '<' or '>'; write Name <name@example.com>")
	}
	if gt != len(s)-1 {
		return Address{}, refuse(field, "has text after the closing '>'; give one address per entry")
	}
	name, why := parsePhrase(strings.TrimRight(s[:lt], " "))
	if why != "" {
		return Address{}, refuse(field, "%s", why)
	}
	if err := checkName(field, name); err != nil {
		return Address{}, err
	}
	addr, why := parseAddrSpec(strings.Trim(s[lt+1:gt], " "))
	if why != "" {
		return Address{}, refuse(field, "%s", why)
	}
	return Address{Name: name, Addr: addr}, nil
}

// ParseList reads one address per element of in, naming field[i] in errors. Duplicates (same
// address, case ignored) are dropped, keeping the first.
func ParseList(field string, in []string) ([]Address, error) {
	var out []Address
	seen := map[string]bool{}
	for i, s := range in {
		a, err := ParseAddress(fmt.Sprintf("%s[%d]", field, i), s)
		if err != nil {
			return nil, err
		}
		if k := key(a.Addr); !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// check refuses an Address that ParseAddress would not have given: a name that could not be
// written safely, an Addr that is not a canonical plain addr-spec.
func (a Address) check(field string) error {
	if err := checkName(field, a.Name); err != nil {
		return err
	}
	if err := checkLine(field, a.Addr); err != nil {
		return err
	}
	if len(a.Addr) > maxAddress {
		return refuse(field, "is %d bytes long, more than the 320 an address may take", len(a.Addr))
	}
	addr, why := parseAddrSpec(a.Addr)
	if why != "" {
		return refuse(field, "%s", why)
	}
	if addr != a.Addr {
		return refuse(field, "address %q is not in canonical form (%q); build it with ParseAddress", a.Addr, addr)
	}
	return nil
}

// checkName refuses a display name that is not one safe line or that hides a second address.
func checkName(field, name string) error {
	if len(name) > maxAddress {
		return refuse(field, "has a display name of %d bytes, more than 320; shorten it", len(name))
	}
	if err := checkLine(field, name); err != nil {
		return err
	}
	if strings.ContainsAny(name, "@\uff20\ufe6b<>") {
		return refuse(field, "has a display name that looks like an address ('@', '<' or '>'): a second address hidden in a name; leave the name out or write it without an address")
	}
	return nil
}

// parsePhrase reads the display name before '<': words, each an atom (dots and UTF-8 allowed)
// or a quoted string, joined by single spaces. It returns the name, or why it is refused.
func parsePhrase(s string) (string, string) {
	var words []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ':
			i++
		case c == '"':
			var w strings.Builder
			i++
			for ; s[i] != '"'; i++ { // ParseAddress made sure every quote closes
				if s[i] == '\\' {
					i++
				}
				w.WriteByte(s[i])
			}
			i++
			words = append(words, w.String())
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '"' {
				if c := s[j]; c < utf8.RuneSelf && !isAtext(c) && c != '.' {
					if c == '@' {
						return "", "has a display name that looks like an address ('@'): a second address hidden in a name; leave the name out or write it without an address"
					}
					return "", fmt.Sprintf("has %q in its display name outside double quotes; put the name in double quotes", c)
				}
				j++
			}
			words = append(words, s[i:j])
			i = j
		}
	}
	return strings.Join(words, " "), ""
}

// parseAddrSpec reads a bare local@domain and returns its canonical form, or why it is refused.
func parseAddrSpec(s string) (string, string) {
	if s == "" {
		return "", "has no address; give one such as name@example.com"
	}
	var local, domain string
	if s[0] == '"' {
		end := strings.IndexByte(s[1:], '"') + 1
		if end == 0 || end+1 >= len(s) || s[end+1] != '@' {
			return "", "has a quoted local part not followed by @domain; give an address such as name@example.com"
		}
		content := s[1:end]
		if content == "" {
			return "", "has an empty local part before '@'; give an address such as name@example.com"
		}
		for _, r := range content {
			if r < 0x20 || r == 0x7f || strings.ContainsRune("\\\"@<>,;", r) || r >= utf8.RuneSelf && !localRune(r) {
				return "", fmt.Sprintf("has %q in its quoted local part; give a plain address such as name@example.com", r)
			}
		}
		local, domain = content, s[end+2:]
		if !isDotAtom(local) {
			local = `"` + local + `"`
		}
	} else {
		at := strings.IndexByte(s, '@')
		if at < 0 {
			return "", "has no '@'; give an address such as name@example.com"
		}
		local, domain = s[:at], s[at+1:]
		if local == "" {
			return "", "has nothing before '@'; give an address such as name@example.com"
		}
		if strings.HasPrefix(local, "@") || strings.Contains(domain, "@") {
			return "", "has more than one '@' (a source route or two addresses); give one address such as name@example.com"
		}
		if !isDotAtom(local) {
			return "", "has a local part (before '@') with a space, a special character or misplaced dots; give a plain address such as name@example.com"
		}
	}
	if len(local) > maxLocal {
		return "", fmt.Sprintf("has a local part of %d bytes, more than 64; check the address", len(local))
	}
	d, why := parseDomain(domain)
	if why != "" {
		return "", why
	}
	return local + "@" + d, ""
}

// parseDomain reads the part after '@': a host name or an address literal.
func parseDomain(s string) (string, string) {
	if s == "" {
		return "", "has nothing after '@'; give an address such as name@example.com"
	}
	if s[0] == '[' {
		if s[len(s)-1] != ']' {
			return "", "has an address literal without its closing ']'; write it as [192.0.2.1]"
		}
		ip, err := netip.ParseAddr(s[1 : len(s)-1])
		if err != nil || !ip.Is4() {
			return "", "has an address literal that is not an IPv4 address (IPv6 literals are not accepted, few readers parse them); write it as [192.0.2.1] or use the host name"
		}
		return "[" + ip.String() + "]", ""
	}
	if len(s) > maxDomain {
		return "", fmt.Sprintf("has a domain of %d bytes, more than 253; check the address", len(s))
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", "has a domain that is not a host name (empty or too long label, or a label that starts or ends with '-'); check the address"
		}
		for _, r := range l {
			if !(r < utf8.RuneSelf && (isAlnum(byte(r)) || r == '-') || r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))) {
				return "", fmt.Sprintf("has %q in its domain, which a host name may not hold; check the address", r)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "", "has a domain whose last label is a number; write an IP address in brackets, as [192.0.2.1]"
	}
	return s, ""
}

// isDotAtom reports whether s is atoms (atext or UTF-8) separated by single dots.
func isDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		if r == '.' {
			continue
		}
		if r < utf8.RuneSelf && !isAtext(byte(r)) || r >= utf8.RuneSelf && !localRune(r) {
			return false
		}
	}
	return true
}

// localRune reports whether a non-ASCII r may stand in a local part: a visible character that
// is neither a space nor a look-alike of '@'.
func localRune(r rune) bool {
	return r != utf8.RuneError && unicode.IsGraphic(r) && !unicode.IsSpace(r) && r != '\uff20' && r != '\ufe6b' && !badRune(r)
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isAtext reports whether c is RFC 5322 atext.
func isAtext(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// isPhrase reports whether name can stand unquoted before '<': words separated by single
// spaces, each of atext (and, when display is set, dots and UTF-8, as ParseAddress accepts).
// In a header only plain atext is written unquoted, so that strict readers agree.
func isPhrase(name string, display bool) bool {
	if name == "" || strings.Contains(name, "=?") {
		return false
	}
	for _, w := range strings.Split(name, " ") {
		if w == "" {
			return false
		}
		for _, r := range w {
			ok := r < utf8.RuneSelf && isAtext(byte(r)) ||
				display && (r == '.' || r >= utf8.RuneSelf && !badRune(r))
			if !ok {
				return false
			}
		}
	}
	return true
}

// quote returns s as an RFC 5322 quoted string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// nameTokens returns the header form of a display name, in pieces a header may be folded
// between: its words when they are plain atext, one quoted string when it is short printable
// ASCII, encoded words otherwise (which is also what a name with a line break would get, so
// String never writes one).
func nameTokens(name string) []string {
	if isPhrase(name, false) && len(name) <= 60 {
		return strings.Split(name, " ")
	}
	printable := !strings.Contains(name, "=?")
	for i := 0; i < len(name) && printable; i++ {
		printable = name[i] >= 0x20 && name[i] < 0x7f
	}
	if q := quote(name); printable && len(q) <= 66 {
		return []string{q}
	}
	return encodeWords(name)
}

package mailparse

import (
	"net/mail"
	"strings"
)

// ParseAddressList reads an address header value as written (encoded words are decoded in display
// names). It is lenient: what RFC 5322 rejects is read on a best-effort basis, groups are
// flattened, and pieces without an address are dropped.
func ParseAddressList(s string) []Address {
	var p parser
	p.msg = &Message{}
	return parseAddressList(validUTF8([]byte(s)), func(w string) string { return p.decodeWords("address", w) })
}

func parseAddressList(s string, decode func(string) string) []Address {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var out []Address
	// net/mail decodes each encoded word on its own and knows few charsets; names with encoded
	// words go to the lenient reader, which joins split characters and knows every charset.
	if strings.Contains(s, "=?") {
		return looseList(s, decode)
	}
	if list, err := mail.ParseAddressList(s); err == nil {
		for _, a := range list {
			out = append(out, Address{Name: decode(a.Name), Email: normEmail(a.Address)})
		}
		return out
	}
	return looseList(s, decode)
}

func looseList(s string, decode func(string) string) []Address {
	var out []Address
	for _, piece := range splitAddresses(s) {
		if a, ok := looseAddress(piece, decode); ok {
			out = append(out, a)
		}
	}
	return out
}

// splitAddresses splits on ',' and ';' outside quotes, comments and angle brackets, and drops
// group names ("Team: a@example.com;").
func splitAddresses(s string) []string {
	var out []string
	var cur strings.Builder
	inQ, esc, angle, comment := false, false, false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case c == '\\' && (inQ || comment > 0):
			esc = true
		case inQ:
			if c == '"' {
				inQ = false
			}
		case comment > 0:
			if c == '(' {
				comment++
			} else if c == ')' {
				comment--
			}
		case c == '"':
			inQ = true
		case c == '(':
			comment++
		case c == '<':
			angle = true
		case c == '>':
			angle = false
		case !angle && (c == ',' || c == ';'):
			out = append(out, cur.String())
			cur.Reset()
			continue
		case !angle && c == ':':
			// a group name ends here, unless this looks like a route inside an address
			if !strings.Contains(cur.String(), "@") {
				cur.Reset()
				continue
			}
		}
		cur.WriteByte(c)
	}
	return append(out, cur.String())
}

func looseAddress(piece string, decode func(string) string) (Address, bool) {
	piece = strings.TrimSpace(piece)
	if piece == "" {
		return Address{}, false
	}
	if i := strings.IndexByte(piece, '<'); i >= 0 {
		email := piece[i+1:]
		after := ""
		if j := strings.IndexByte(email, '>'); j >= 0 {
			email, after = email[:j], email[j+1:]
		}
		if k := strings.LastIndexByte(email, ':'); k >= 0 {
			email = email[k+1:] // obsolete route
		}
		name := cleanName(piece[:i])
		if name == "" {
			name = cleanName(commentText(after))
		}
		email = strings.Join(strings.Fields(strings.Trim(email, `"' `)), "")
		if email == "" && name == "" {
			return Address{}, false
		}
		return Address{Name: decode(name), Email: normEmail(email)}, email != ""
	}
	name := cleanName(commentText(piece))
	rest := stripComments(piece)
	var email string
	for _, f := range strings.Fields(rest) {
		if strings.Contains(f, "@") {
			email = strings.Trim(f, `"'<>`)
			break
		}
	}
	if email == "" {
		f := strings.Fields(rest)
		if len(f) != 1 {
			return Address{}, false
		}
		email = strings.Trim(f[0], `"'`)
	}
	if email == "" {
		return Address{}, false
	}
	return Address{Name: decode(name), Email: normEmail(email)}, true
}

// cleanName unquotes a display name and collapses its whitespace.
func cleanName(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' {
		s = unquote(s)
	} else {
		s = strings.Trim(s, `"'`)
	}
	return strings.Join(strings.Fields(s), " ")
}

// commentText returns the text of the first comment in s.
func commentText(s string) string {
	i := strings.IndexByte(s, '(')
	if i < 0 {
		return ""
	}
	j := strings.LastIndexByte(s, ')')
	if j < i {
		return s[i+1:]
	}
	return s[i+1 : j]
}

func stripComments(s string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// normEmail lower-cases the domain and keeps the local part as written.
func normEmail(e string) string {
	e = strings.TrimSpace(e)
	i := strings.LastIndexByte(e, '@')
	if i < 0 {
		return e
	}
	return e[:i] + "@" + strings.ToLower(e[i+1:])
}

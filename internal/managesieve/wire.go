package managesieve

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// token kinds of a response line.
const (
	tokAtom   = iota // OK, NO, BYE, ACTIVE
	tokString        // a quoted string or a literal, decoded
	tokCode          // a response code in parentheses, without them: "QUOTA/MAXSIZE", `TAG "x"`
)

type token struct {
	kind int
	text string
}

// readLine reads one response line: atoms, quoted strings, literals ({n} or {n+} then CRLF
// then n octets) and response codes, up to the CRLF that ends it.
func (c *Client) readLine() ([]token, error) {
	var out []token
	n := 0 // octets read of the line, literals aside
	next := func() (byte, error) {
		n++
		if n > maxLine {
			return 0, fmt.Errorf("%w: a response line longer than %d bytes", ErrProtocol, maxLine)
		}
		return c.r.ReadByte()
	}
	for {
		b, err := next()
		if err != nil {
			return nil, eof(err)
		}
		switch {
		case b == ' ':
		case b == '\r':
			if b, err = next(); err != nil {
				return nil, eof(err)
			}
			if b != '\n' {
				return nil, fmt.Errorf("%w: a CR without LF", ErrProtocol)
			}
			return out, nil
		case b == '\n': // lenient: a bare LF ends the line too
			return out, nil
		case b == '"':
			var sb strings.Builder
			for {
				b, err := next()
				if err != nil {
					return nil, eof(err)
				}
				if b == '"' {
					break
				}
				if b == '\\' {
					if b, err = next(); err != nil {
						return nil, eof(err)
					}
				}
				if b == '\r' || b == '\n' {
					return nil, fmt.Errorf("%w: a line break inside a quoted string", ErrProtocol)
				}
				sb.WriteByte(b)
			}
			out = append(out, token{tokString, sb.String()})
		case b == '{':
			var digits strings.Builder
			for {
				b, err := next()
				if err != nil {
					return nil, eof(err)
				}
				if b == '}' {
					break
				}
				if b == '+' || b >= '0' && b <= '9' {
					digits.WriteByte(b)
					continue
				}
				return nil, fmt.Errorf("%w: a literal length with %q in it", ErrProtocol, b)
			}
			size, err := strconv.Atoi(strings.TrimSuffix(digits.String(), "+"))
			if err != nil || size < 0 {
				return nil, fmt.Errorf("%w: a literal length %q", ErrProtocol, digits.String())
			}
			if size > maxLiteral {
				return nil, fmt.Errorf("%w: a literal of %d bytes, more than %d", ErrProtocol, size, maxLiteral)
			}
			b1, err1 := next()
			if err1 == nil && b1 == '\r' {
				b1, err1 = next()
			}
			if err1 != nil {
				return nil, eof(err1)
			}
			if b1 != '\n' {
				return nil, fmt.Errorf("%w: no line break after a literal's length", ErrProtocol)
			}
			buf := make([]byte, size)
			if _, err := io.ReadFull(c.r, buf); err != nil {
				return nil, eof(err)
			}
			out = append(out, token{tokString, string(buf)})
		case b == '(':
			var sb strings.Builder
			inQuote := false
			for {
				b, err := next()
				if err != nil {
					return nil, eof(err)
				}
				if b == '\r' || b == '\n' {
					return nil, fmt.Errorf("%w: a response code without its ')'", ErrProtocol)
				}
				if !inQuote && b == ')' {
					break
				}
				if b == '"' {
					inQuote = !inQuote
				} else if inQuote && b == '\\' {
					sb.WriteByte(b)
					if b, err = next(); err != nil {
						return nil, eof(err)
					}
				}
				sb.WriteByte(b)
			}
			out = append(out, token{tokCode, sb.String()})
		default:
			var sb strings.Builder
			sb.WriteByte(b)
			for {
				p, err := c.r.Peek(1)
				if err != nil || p[0] == ' ' || p[0] == '\r' || p[0] == '\n' || p[0] == '(' || p[0] == '"' || p[0] == '{' {
					break
				}
				if b, err = next(); err != nil {
					return nil, err
				}
				sb.WriteByte(b)
			}
			out = append(out, token{tokAtom, sb.String()})
		}
	}
}

func eof(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: the connection closed in the middle of an answer", ErrProtocol)
	}
	return err
}

// quote is s as a quoted string (RFC 5804 section 4: \ and " escaped). It is used for names
// and SASL data, which hold no line break; text that may is sent as a literal.
func quote(s string) string {
	if strings.ContainsAny(s, "\r\n\x00") || len(s) > 1024 {
		return literal(s)
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// literal is s as a non-synchronizing literal, which every ManageSieve server accepts from a
// client (RFC 5804 section 4).
func literal(s string) string {
	return "{" + strconv.Itoa(len(s)) + "+}\r\n" + s
}

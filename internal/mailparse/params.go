package mailparse

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// parseParams leniently reads a Content-Type or Content-Disposition value: a lower-cased value
// before the first ';' and its parameters, keys lower-cased, RFC 2231 continuations joined and
// extended values (charset'lang'%XX) decoded. Quoted values keep their content; unquoted ones run
// to the next ';'. The first occurrence of a key wins.
func parseParams(s string) (value string, params map[string]string) {
	parts := splitParams(s)
	value = strings.ToLower(strings.TrimSpace(parts[0]))
	params = map[string]string{}
	type piece struct {
		n   int
		ext bool
		v   string
	}
	multi := map[string][]piece{}
	for _, p := range parts[1:] {
		i := strings.IndexByte(p, '=')
		if i < 0 {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(p[:i]))
		val := unquote(strings.TrimSpace(p[i+1:]))
		if key == "" {
			continue
		}
		ext := strings.HasSuffix(key, "*")
		base := strings.TrimSuffix(key, "*")
		if j := strings.LastIndexByte(base, '*'); j >= 0 {
			if n, err := strconv.Atoi(base[j+1:]); err == nil && n >= 0 && n < 1000 {
				multi[base[:j]] = append(multi[base[:j]], piece{n, ext, val})
				continue
			}
		}
		if ext {
			if _, dup := params[base+"*"]; !dup {
				params[base+"*"] = decodeExtValue(val, true)
			}
			continue
		}
		if _, dup := params[key]; !dup {
			params[key] = val
		}
	}
	for base, ps := range multi {
		sort.SliceStable(ps, func(a, b int) bool { return ps[a].n < ps[b].n })
		var raw strings.Builder
		anyExt := false
		cs := ""
		for k, pc := range ps {
			v := pc.v
			if pc.ext {
				anyExt = true
				if k == 0 {
					if c, rest, ok := cutCharset(v); ok {
						cs, v = c, rest
					}
				}
				if u, err := url.PathUnescape(strings.ReplaceAll(v, "+", "%2B")); err == nil {
					v = u
				}
			}
			raw.WriteString(v)
		}
		v := raw.String()
		if anyExt && cs != "" {
			v, _ = decodeCharset(cs, []byte(v))
		}
		if _, dup := params[base+"*"]; !dup && anyExt {
			params[base+"*"] = v
		} else if _, dup := params[base]; !dup {
			params[base] = v
		}
	}
	// Fold the extended forms into the plain keys, preferring them.
	for k, v := range params {
		if strings.HasSuffix(k, "*") {
			params[strings.TrimSuffix(k, "*")] = v
			delete(params, k)
		}
	}
	return value, params
}

// splitParams splits on ';' outside double quotes.
func splitParams(s string) []string {
	var out []string
	inQ, esc, start := false, false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case inQ && c == '\\':
			esc = true
		case c == '"':
			inQ = !inQ
		case c == ';' && !inQ:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' {
		return strings.Trim(v, `"`)
	}
	v = v[1:]
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			i++
			b.WriteByte(v[i])
			continue
		}
		if c == '"' {
			break
		}
		b.WriteByte(c)
	}
	return b.String()
}

func cutCharset(v string) (cs, rest string, ok bool) {
	i := strings.IndexByte(v, '\'')
	if i < 0 {
		return "", v, false
	}
	j := strings.IndexByte(v[i+1:], '\'')
	if j < 0 {
		return "", v, false
	}
	return v[:i], v[i+1+j+1:], true
}

// decodeExtValue decodes an RFC 2231 extended value charset'lang'%XX.
func decodeExtValue(v string, first bool) string {
	cs := ""
	if first {
		if c, rest, ok := cutCharset(v); ok {
			cs, v = c, rest
		}
	}
	if u, err := url.PathUnescape(strings.ReplaceAll(v, "+", "%2B")); err == nil {
		v = u
	}
	if cs == "" {
		return v
	}
	s, _ := decodeCharset(cs, []byte(v))
	return s
}

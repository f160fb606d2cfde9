package mailparse

import (
	"net/url"
	"strings"
)

// List is what a message's header says about the mailing list it comes from.
type List struct {
	// IsList: the message has a List-Id, List-Unsubscribe or List-Post field (RFC 2919,
	// RFC 2369) or Precedence: list or bulk.
	IsList bool
	// Unsubscribe are the URIs of List-Unsubscribe (RFC 2369), in the order given, as
	// written: the https, http and mailto ones, at most MaxUnsubscribeURIs.
	Unsubscribe []string
	// OneClick: List-Unsubscribe-Post: List-Unsubscribe=One-Click (RFC 8058) with an
	// https URI to post it to.
	OneClick bool
}

// MaxUnsubscribeURIs is the most List-Unsubscribe URIs kept; a list offers one or two.
const MaxUnsubscribeURIs = 4

// maxURI is the longest URI kept: a longer one is no honest unsubscribe link.
const maxURI = 2048

// OneClickBody is the body of an RFC 8058 POST: the value of List-Unsubscribe-Post.
const OneClickBody = "List-Unsubscribe=One-Click"

// ListOf reads the list fields of a header. Field names are compared without regard to case.
func ListOf(headers []Header) List {
	var l List
	post := false
	for _, h := range headers {
		switch strings.ToLower(h.Name) {
		case "list-id", "list-post":
			l.IsList = true
		case "precedence":
			switch strings.ToLower(strings.TrimSpace(h.Value)) {
			case "list", "bulk":
				l.IsList = true
			}
		case "list-unsubscribe":
			l.IsList = true
			for _, u := range UnsubscribeURIs(h.Value) {
				if len(l.Unsubscribe) < MaxUnsubscribeURIs {
					l.Unsubscribe = append(l.Unsubscribe, u)
				}
			}
		case "list-unsubscribe-post":
			post = post || strings.EqualFold(strings.TrimSpace(h.Value), OneClickBody)
		}
	}
	if post {
		for _, u := range l.Unsubscribe {
			if Scheme(u) == "https" {
				l.OneClick = true
			}
		}
	}
	return l
}

// UnsubscribeURIs are the URIs of a List-Unsubscribe value: each between angle brackets,
// comma-separated, whitespace inside the brackets ignored (RFC 2369, section 2). Only
// https, http and mailto URIs are kept; anything else, and anything that is not a URI, is
// dropped.
func UnsubscribeURIs(v string) []string {
	var out []string
	for {
		i := strings.IndexByte(v, '<')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(v[i:], '>')
		if j < 0 {
			return out
		}
		u := strings.Join(strings.Fields(v[i+1:i+j]), "")
		v = v[i+j+1:]
		if len(u) == 0 || len(u) > maxURI {
			continue
		}
		switch Scheme(u) {
		case "https", "http":
			p, err := url.Parse(u)
			if err != nil || p.Host == "" || p.User != nil {
				continue
			}
		case "mailto":
			if _, err := url.Parse(u); err != nil {
				continue
			}
		default:
			continue
		}
		out = append(out, u)
	}
}

// Scheme is a URI's scheme, lower case ("" when it has none).
func Scheme(u string) string {
	i := strings.IndexByte(u, ':')
	if i <= 0 {
		return ""
	}
	return strings.ToLower(u[:i])
}

// ShowURI is what may be shown of an unsubscribe URI, which often carries a token that
// proves the address is read: an http(s) URI's scheme, host and path, with the query and
// fragment replaced by "?…" and any path segment that looks like a token by "…"; a mailto
// URI's address (ShowAddress), with its fields (subject, body) replaced by "?…".
func ShowURI(u string) string {
	if Scheme(u) == "mailto" {
		addr, rest, _ := strings.Cut(u[len("mailto:"):], "?")
		if a, err := url.PathUnescape(addr); err == nil {
			addr = a
		}
		addr = ShowAddress(addr)
		if rest != "" {
			return "mailto:" + addr + "?…"
		}
		return "mailto:" + addr
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "…"
	}
	segs := strings.Split(p.EscapedPath(), "/")
	for i, s := range segs {
		if tokenLike(s) {
			segs[i] = "…"
		}
	}
	out := strings.ToLower(p.Scheme) + "://" + p.Host + strings.Join(segs, "/")
	if p.RawQuery != "" || p.Fragment != "" || p.ForceQuery {
		out += "?…"
	}
	return out
}

// ShowAddress is an unsubscribe address as it may be shown: its part before @ replaced by
// "…" when it looks like a token (leave-8129362-4520527@lists.example.org).
func ShowAddress(addr string) string {
	local, domain, ok := strings.Cut(addr, "@")
	if ok && tokenLike(local) {
		return "…@" + domain
	}
	return addr
}

// tokenLike: a path segment that may identify the subscriber rather than name a page: long,
// or holding more than three digits or an escape.
func tokenLike(s string) bool {
	if len(s) > 24 || strings.Contains(s, "%") {
		return true
	}
	digits := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return digits > 3
}

// ShowUnsubscribe is a List-Unsubscribe value as it may be shown: each URI as ShowURI
// shows it, between angle brackets, comma-separated.
func ShowUnsubscribe(v string) string {
	uris := UnsubscribeURIs(v)
	shown := make([]string, len(uris))
	for i, u := range uris {
		shown[i] = "<" + ShowURI(u) + ">"
	}
	return strings.Join(shown, ", ")
}

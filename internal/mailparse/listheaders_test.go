package mailparse

import (
	"slices"
	"testing"
)

func TestUnsubscribeURIs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"<mailto:a@b.test>, <https://b.test/u?x=1>", []string{"mailto:a@b.test", "https://b.test/u?x=1"}},
		// Whitespace inside the brackets is ignored (RFC 2369); other schemes and junk are dropped.
		{"<https://b.test/u\r\n ?x=1> , <ftp://b.test/x>, <javascript:alert(1)>, junk", []string{"https://b.test/u?x=1"}},
		{"<http://b.test/page>", []string{"http://b.test/page"}},
		{"<https://user:pw@b.test/u>, <https:///nohost>, <>", nil},
		{"<https://b.test/u", nil},
	} {
		if got := UnsubscribeURIs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("UnsubscribeURIs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestListOf(t *testing.T) {
	oneClick := []Header{{"List-Unsubscribe", "<mailto:a@b.test>, <https://b.test/u>"}, {"list-unsubscribe-post", " list-unsubscribe=one-click "}}
	if l := ListOf(oneClick); !l.IsList || !l.OneClick || len(l.Unsubscribe) != 2 {
		t.Errorf("one-click: %+v", l)
	}
	// One-click needs an https URI to post to.
	noHTTPS := []Header{{"List-Unsubscribe", "<mailto:a@b.test>, <http://b.test/u>"}, {"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"}}
	if l := ListOf(noHTTPS); !l.IsList || l.OneClick {
		t.Errorf("no https: %+v", l)
	}
	for _, h := range []Header{{"List-Id", "<x.b.test>"}, {"Precedence", "bulk"}, {"Precedence", "List"}, {"List-Post", "<mailto:x@b.test>"}} {
		if l := ListOf([]Header{h}); !l.IsList || l.OneClick || l.Unsubscribe != nil {
			t.Errorf("%v: %+v", h, l)
		}
	}
	if l := ListOf([]Header{{"Precedence", "junk"}, {"Subject", "List-Id"}}); l.IsList {
		t.Errorf("not a list: %+v", l)
	}
}

// TestShowURI: what is shown of an unsubscribe URI keeps no token: no query, no fragment,
// no path segment that identifies the subscriber, no mailto fields, no token-like address.
func TestShowURI(t *testing.T) {
	for in, want := range map[string]string{
		"https://list.test/unsubscribe/one-click?t=SECRET":                   "https://list.test/unsubscribe/one-click?…",
		"HTTPS://list.test:8443/u/8129362/4520527/abcdefabcdefabcdefabcdef0": "https://list.test:8443/u/…/…/…",
		"https://list.test/u%2Fsecret#frag":                                  "https://list.test/…?…",
		"https://list.test/a-very-long-segment-that-is-a-token":              "https://list.test/…",
		"https://list.test":                            "https://list.test",
		"mailto:leave@list.test?subject=SECRET&body=x": "mailto:leave@list.test?…",
		"mailto:leave-8129362-4520527@list.test":       "mailto:…@list.test",
		"mailto:%6Ceave@list.test":                     "mailto:leave@list.test",
	} {
		if got := ShowURI(in); got != want {
			t.Errorf("ShowURI(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ShowUnsubscribe("<mailto:a@b.test?subject=T>, <https://b.test/x?t=T>"); got != "<mailto:a@b.test?…>, <https://b.test/x?…>" {
		t.Errorf("ShowUnsubscribe = %q", got)
	}
}

package core

import "testing"

// TestShownURL: the accounts tool shows where a DAV account syncs from, never a user name, a
// password, a query or a fragment that may carry a token, and nothing for what is not a URL.
func TestShownURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "",
		"https://dav.example.com/":               "https://dav.example.com/",
		"http://127.0.0.1:5232/user/":            "http://127.0.0.1:5232/user/",
		"https://me:hunter2@dav.example.com/cal": "https://dav.example.com/cal",
		"https://dav.example.com/c?token=s3cr3t": "https://dav.example.com/c",
		"https://dav.example.com/c?#key=s3cr3t":  "https://dav.example.com/c",
		"https://dav.example.com/c#key=s3cr3t":   "https://dav.example.com/c",
		"dav.example.com/cal":                    "",
		"mailto:me:pw@example.com":               "",
		"https://%zz/":                           "",
	} {
		if got := shownURL(in); got != want {
			t.Errorf("shownURL(%q) = %q; want %q", in, got, want)
		}
	}
}

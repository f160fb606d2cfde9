package mask

import (
	"strings"
	"testing"
)

// TestSecretSet: the passwords a message gives are found again, whole, in its other fields,
// and nothing else is.
func TestSecretSet(t *testing.T) {
	ss := secretValues(foldString("Your password: Xk82!pq9."), foldString("Login: jdoe\nPassword\tHq7-Lm2zR\n"))
	if ss.n != 2 {
		t.Fatalf("%d secrets", ss.n)
	}
	for in, want := range map[string]int{"Xk82!pq9.txt": 8, "Xk82!pq9": 8, "Hq7-Lm2zR notes": 9, "Xk82!pq9abc": -1, "Xk82": -1, "hq7-lm2zr": -1} {
		if got := ss.at(foldString(in), 0); got != want {
			t.Errorf("at(%q) = %d; want %d", in, got, want)
		}
	}
	if (secretValues(foldString("Password: ********")) != secretSet{}) {
		t.Errorf("a placeholder is a secret")
	}
}

// TestSignInLines: a sign-in word makes a link on its line or the next non-blank one a sign-in
// link, not one further down.
func TestSignInLines(t *testing.T) {
	for in, hidden := range map[string]bool{
		"Sign in: https://example.com/a/b":                      true,
		"Sign in below.\n\n\nhttps://example.com/a/b":           true,
		"Sign in below.\nThanks.\nhttps://example.com/a/b":      false,
		"Log in\n4111\n1111\n1111\n1111\nhttps://example.com/a": false,
		"https://example.com/a/b to sign in":                    false,
		"Read more: https://example.com/a/b":                    false,
	} {
		out, _ := scan(in, false)
		if got := strings.Contains(out, HiddenLink); got != hidden {
			t.Errorf("scan(%q) = %q", in, out)
		}
		if again, _ := scan(out, false); again != out {
			t.Errorf("scan not idempotent on %q: %q", out, again)
		}
	}
}

// TestSignInURL: the links that say by themselves that they sign in, and some that do not.
func TestSignInURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://example.com/account/login":                            true,
		"https://example.com/auth/sign-in?next=/":                      true,
		"https://example.com/x?token=abc":                              true,
		"https://example.com/reset_password/8f3a9c":                    true,
		"https://example.com/login.php":                                true,
		"https://example.com/d/Zq8xT2mK9pLw3vR7nB5c":                   true,
		"https://example.com/i/3f2b1c4e-9a7d-4e2b-8c1f-0a9b8c7d6e5f":   true,
		"https://example.com/news?id=482913":                           false,
		"https://example.com/?utm_source=newsletter&utm_medium=mail":   false,
		"https://example.com/blog/how-to-reset-your-router-2025":       false,
		"https://cdn.example.com/3f2b1c4e9a7d4e2b8c1f0a9b8c7d6e5f.png": false,
		"https://example.com/orders/12345678901234567890":              false,
		"www.example.com": false,
	} {
		if got := signInURL(u); got != want {
			t.Errorf("signInURL(%q) = %v", u, got)
		}
	}
}

package source

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/config"
)

// TestPassword: the first line the command prints is the password; every failure is one
// sentence naming the account that never holds what the command printed.
func TestPassword(t *testing.T) {
	cases := []struct {
		cmd, want, err string
	}{
		{`printf 'hunter2\r\nsecond line\n'`, "hunter2", ""},
		{`printf 'no newline'`, "no newline", ""},
		{"", "", "account work has no password command; add one with postern account add work … --password-cmd CMD"},
		{"echo leaked; exit 7", "", "the password command of account work failed (exit status 7); run it in a terminal to see why"},
		{"printf '\\n'", "", "the password command of account work printed nothing; it must print the password on its first line"},
	}
	for _, tc := range cases {
		got, err := Password(context.Background(), config.Account{Name: "work", PasswordCmd: tc.cmd})
		if err != nil && strings.Contains(err.Error(), "leaked") {
			t.Errorf("%q: the error shows what the command printed: %v", tc.cmd, err)
		}
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.cmd, got, err, tc.want)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%q: %q, %v; want the error %q", tc.cmd, got, err, tc.err)
		}
	}
}

// TestPasswordCancelled: a command that hangs ends with ctx, and so does a program it left
// holding the output, within the half second it is given.
func TestPasswordCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Password(ctx, config.Account{Name: "work", PasswordCmd: "sleep 5 & sleep 5"})
	if err == nil {
		t.Fatal("a password command that hangs succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Password returned %v after ctx ended", d)
	}
}

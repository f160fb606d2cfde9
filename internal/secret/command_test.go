package secret

import (
	"context"
	"strings"
	"testing"
)

// TestCommand: the first line printed is the secret; a command that fails is said by its exit
// status and never by what it printed; one that prints nothing says what it must print.
func TestCommand(t *testing.T) {
	ctx := context.Background()
	got, err := Command(ctx, "work", "password command", "password", "printf 'hunter2\\r\\nsecond\\n'")
	if err != nil || got != "hunter2" {
		t.Errorf("Command = %q, %v; want hunter2", got, err)
	}
	_, err = Command(ctx, "work", "password command", "password", "echo leaked-secret; echo oops >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "the password command of account work failed (exit status 3)") || strings.Contains(err.Error(), "leaked-secret") || strings.Contains(err.Error(), "oops") {
		t.Errorf("failing command: %v; want its exit status and nothing it printed", err)
	}
	_, err = Command(ctx, "mail", "OAuth2 token command", "access token", "true")
	if want := "the OAuth2 token command of account mail printed nothing; it must print the access token on its first line"; err == nil || err.Error() != want {
		t.Errorf("silent command: %v; want %q", err, want)
	}
}

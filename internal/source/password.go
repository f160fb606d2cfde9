package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/secret"
)

// Password runs the account's password command and returns the first line it prints.
func Password(ctx context.Context, a config.Account) (string, error) {
	return PasswordOf(ctx, a.Name, a.PasswordCmd)
}

// PasswordOf runs cmd, the password command of the account named account, and returns the
// first line it prints: Password of a kind's settings.
func PasswordOf(ctx context.Context, account, cmd string) (string, error) {
	if strings.TrimSpace(cmd) == "" {
		return "", fmt.Errorf("account %s has no password command; add one with postern account add %s … --password-cmd CMD", account, account)
	}
	return secret.Command(ctx, account, "password command", "password", cmd)
}

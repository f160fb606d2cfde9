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
	if strings.TrimSpace(a.PasswordCmd) == "" {
		return "", fmt.Errorf("account %s has no password command; add one with postern account add %s … --password-cmd CMD", a.Name, a.Name)
	}
	return secret.Command(ctx, a.Name, "password command", "password", a.PasswordCmd)
}

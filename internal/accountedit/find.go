package accountedit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/search"
)

// NoSuchAccount is the error for an account name the configuration lacks: it names the
// nearest ones, or says how to add one when there is none.
func NoSuchAccount(name string, cfg *config.Config) error {
	if cfg == nil || len(cfg.Accounts) == 0 {
		return errors.New("no account is configured; add one with postern account add NAME --imap HOST:PORT --user USER --password-cmd CMD (or --maildir PATH)")
	}
	names := make([]string, len(cfg.Accounts))
	for i, a := range cfg.Accounts {
		names[i] = a.Name
	}
	msg := fmt.Sprintf("there is no account named %q", name)
	if near := search.Nearest(name, names); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	} else {
		msg += "."
	}
	return fmt.Errorf("%s The accounts are: %s (postern account list shows them)", msg, strings.Join(names, ", "))
}

// Find is the account of cfg named name, or NoSuchAccount.
func Find(cfg *config.Config, name string) (config.Account, error) {
	for _, a := range cfg.Accounts {
		if a.Name == name {
			return a, nil
		}
	}
	return config.Account{}, NoSuchAccount(name, cfg)
}

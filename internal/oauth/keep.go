package oauth

import (
	"context"

	"github.com/postern-mcp/postern/internal/config"
)

// KeepPassword keeps password as account's in the OS keyring, and returns what puts back what
// was there before (or forgets it, when there was none): for when the account is not saved.
func KeepPassword(account, password string) (undo func(), err error) {
	old, oldErr := Password(account)
	if err := SavePassword(account, password); err != nil {
		return func() {}, err
	}
	return func() {
		if oldErr == nil {
			_ = SavePassword(account, old)
		} else {
			_ = DeletePassword(account)
		}
	}, nil
}

// AuthorizeAndKeep runs the browser flow for a, keeps its tokens (SaveToken) and says where;
// undo puts back the tokens that were there before (or forgets them, when there were none).
func AuthorizeAndKeep(ctx context.Context, a config.Account, o FlowOptions) (where Where, undo func(), err error) {
	old, oldErr := LoadToken(a.Name)
	saved, err := Authorize(ctx, a, o)
	if err != nil {
		return Where{}, func() {}, err
	}
	if where, err = SaveToken(a.Name, saved); err != nil {
		return Where{}, func() {}, err
	}
	return where, func() {
		if oldErr == nil {
			_, _ = SaveToken(a.Name, old)
		} else {
			_ = DeleteToken(a.Name)
		}
	}, nil
}

// Forget is what forgets, once the account name is removed from the configuration at cfgPath,
// what postern keeps in the keyring (or the token file) for it; nothing for an account that
// kept nothing there, so that removing one never touches the keyring.
func Forget(cfgPath, name string) (forget func()) {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return func() {}
	}
	for _, a := range cfg.Accounts {
		switch {
		case a.Name != name:
		case a.OAuth2() && a.OAuth2TokenCmd == "":
			return func() { _ = DeleteToken(name) }
		case a.KeyringPassword():
			return func() { _ = DeletePassword(name) }
		}
	}
	return func() {}
}

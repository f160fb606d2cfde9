package oauth

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/postern-mcp/postern/internal/config"
)

// lockTokens holds an account's token lock ($XDG_DATA_HOME/postern/tokens/NAME.lock) until
// the returned function is called. The kernel frees it when a process dies.
func lockTokens(account string) (func(), error) {
	path := filepath.Join(config.DataDir(), "tokens", account+".lock")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cannot lock the OAuth2 tokens of account %s: %w", account, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot lock the OAuth2 tokens of account %s: %w", account, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot lock the OAuth2 tokens of account %s: %w", account, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

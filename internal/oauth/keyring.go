package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/postern-mcp/postern/internal/atomicfile"
	"github.com/postern-mcp/postern/internal/config"
)

// Service is the keyring service of every secret postern keeps; the user is the account's
// name for its OAuth2 tokens, and NAME:password for a password.
const Service = "postern"

// Saved is what is kept of an account's OAuth2 authorisation.
type Saved struct {
	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// ClientSecret is the OAuth2 client's secret, for providers whose clients have one; kept
	// here rather than in the configuration file.
	ClientSecret string `json:"client_secret,omitempty"`
}

// TokenFile is where an account's tokens are kept when no OS keyring can be used:
// $XDG_DATA_HOME/postern/tokens/NAME.json, mode 0600.
func TokenFile(account string) string {
	return filepath.Join(config.DataDir(), "tokens", account+".json")
}

// Where says where SaveToken put the tokens.
type Where struct {
	// File is the 0600 file, when no keyring could be used; "" when the keyring holds them.
	File string
	// Why is why the keyring could not be used (its error), when File is set.
	Why string
}

// Sentence says where the tokens are, for the person.
func (w Where) Sentence() string {
	if w.File == "" {
		return "The OAuth2 tokens are in the OS keyring (service " + Service + ")."
	}
	return fmt.Sprintf("No OS keyring could be used (%s), so the OAuth2 tokens are in %s, readable only by you (mode 0600).", w.Why, w.File)
}

// SaveToken keeps s for account in the OS keyring, or, when none can be used, in TokenFile
// (0600), and says where.
func SaveToken(account string, s Saved) (Where, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return Where{}, err
	}
	file := TokenFile(account)
	kerr := keyring.Set(Service, account, string(b))
	if kerr == nil {
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Where{}, fmt.Errorf("the OAuth2 tokens of account %s are in the keyring, but the old file %s could not be removed (%v); remove it", account, file, err)
		}
		return Where{}, nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return Where{}, fmt.Errorf("cannot keep the OAuth2 tokens of account %s: no OS keyring could be used (%v), and %v", account, kerr, err)
	}
	if err := atomicfile.Write(file, ".token-*.json", b); err != nil {
		return Where{}, fmt.Errorf("cannot keep the OAuth2 tokens of account %s: no OS keyring could be used (%v), and %v", account, kerr, err)
	}
	return Where{File: file, Why: oneLine(kerr)}, nil
}

// LoadToken is what SaveToken kept for account: the file when there is one (it is written only
// when no keyring could be used), else the keyring's entry.
func LoadToken(account string) (Saved, error) {
	var s Saved
	file := TokenFile(account)
	b, err := os.ReadFile(file)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist):
		v, kerr := keyring.Get(Service, account)
		if kerr != nil {
			why := "it was never authorised"
			if !errors.Is(kerr, keyring.ErrNotFound) {
				why = "the OS keyring could not be read: " + oneLine(kerr)
			}
			return s, fmt.Errorf("account %s has no OAuth2 token (%s); authorise it with %s", account, why, Reauthorize(account))
		}
		b = []byte(v)
	default:
		return s, fmt.Errorf("cannot read the OAuth2 tokens of account %s (%v); authorise it again with %s", account, err, Reauthorize(account))
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("the OAuth2 tokens kept for account %s are damaged; authorise it again with %s", account, Reauthorize(account))
	}
	return s, nil
}

// DeleteToken forgets account's tokens, wherever they are (postern account remove). An entry
// missing from the keyring, or no keyring at all, is nothing to forget.
func DeleteToken(account string) error {
	_ = keyring.Delete(Service, account)
	if err := os.Remove(TokenFile(account)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func passwordUser(account string) string { return account + ":password" }

// SavePassword keeps account's password in the OS keyring. There is no file fallback: a
// password in a file is what password_cmd exists to avoid.
func SavePassword(account, password string) error {
	if err := keyring.Set(Service, passwordUser(account), password); err != nil {
		return fmt.Errorf("no OS keyring could be used to keep the password of account %s (%s); use --password-cmd instead", account, oneLine(err))
	}
	return nil
}

// Password is account's password from the OS keyring.
func Password(account string) (string, error) {
	pw, err := keyring.Get(Service, passwordUser(account))
	if err != nil {
		if errors.Is(err, keyring.ErrNotFound) {
			return "", fmt.Errorf("the OS keyring has no password for account %s; put it there with postern account set %s --keyring", account, account)
		}
		return "", fmt.Errorf("the OS keyring could not be read for the password of account %s (%s); unlock it, or use --password-cmd", account, oneLine(err))
	}
	return pw, nil
}

// DeletePassword forgets account's password.
func DeletePassword(account string) error {
	if err := keyring.Delete(Service, passwordUser(account)); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return err
	}
	return nil
}

func oneLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' || r == '\r' {
			return s[:i]
		}
	}
	return s
}

package rules

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/store"
)

// What runs on the server: after a push (postern rules push, rules_push) the
// server's Sieve script runs some rules on new mail itself. The sync must not
// run them again (a forward would be sent twice), but only while a rule is
// exactly as pushed: a rule changed since runs locally until it is pushed anew.

func onServerKey(account string) string { return "sieve_rules:" + account }

// digest identifies a rule's conditions and actions, not its state or stamps.
func digest(r generated.Rule) string {
	b, _ := json.Marshal(struct {
		Name    string
		Account string
		Match   string
		Actions []generated.RuleAction
		Stop    *bool
	}{r.Name, r.Account, r.Match, r.Actions, r.Stop})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SetOnServer records the rules that account's server now runs (none: it runs none).
func SetOnServer(ctx context.Context, st *store.Store, account string, running []generated.Rule) error {
	m := map[string]string{}
	for _, r := range running {
		m[r.Name] = digest(r)
	}
	b, _ := json.Marshal(m)
	return st.SetMeta(ctx, onServerKey(account), string(b))
}

// OnServer reports whether account's server runs r as it is now. pushed are the rules of
// the old shape kept in the backups (Pushed): a script pushed before the rules file was
// rewritten runs such a rule as long as the rule is as the rewrite left it.
func OnServer(ctx context.Context, st *store.Store, account string, r generated.Rule, pushed Aliases) bool {
	v, err := st.Meta(ctx, onServerKey(account))
	if err != nil || v == "" {
		return false
	}
	var m map[string]string
	if json.Unmarshal([]byte(v), &m) != nil {
		return false
	}
	d := m[r.Name]
	if d == "" {
		return false
	}
	if d == digest(r) {
		return true
	}
	for _, a := range pushed[r.Name] {
		if d == a.Legacy && a.Rewritten == digest(r) {
			return true
		}
	}
	return false
}

// Alias is a rule of the old shape: its digest then, and the digest of the rule it was
// rewritten as.
type Alias struct{ Legacy, Rewritten string }

// Aliases are, per rule name, the rules of the old shape the backups hold.
type Aliases map[string][]Alias

// Pushed reads the backups of the rules file at path (Backup) for the rules of the old shape.
func Pushed(path string) Aliases {
	out := Aliases{}
	backups, _ := filepath.Glob(path + ".bak*")
	for _, b := range backups {
		raw, err := os.ReadFile(b)
		if err != nil {
			continue
		}
		rules, old, err := parse(b, raw)
		if err != nil {
			continue
		}
		for i, lm := range old {
			r := rules[i]
			out[r.Name] = append(out[r.Name], Alias{Legacy: legacyDigest(r, lm), Rewritten: digest(r)})
		}
	}
	return out
}

// StillOnServer are the accounts of the configuration at cfgPath whose server still runs r,
// by the store at storePath: a rule disabled or rejected here keeps running there until the
// script is pushed again. Without a store or a configuration that can be read, none.
func StillOnServer(ctx context.Context, cfgPath, storePath string, r generated.Rule) []string {
	if _, err := os.Stat(storePath); err != nil {
		return nil // opening it would make it
	}
	st, err := store.Open(storePath)
	if err != nil {
		return nil
	}
	defer st.Close()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range cfg.Accounts {
		if OnServer(ctx, st, a.Name, r, Pushed(Path(cfgPath))) {
			out = append(out, a.Name)
		}
	}
	return out
}

package rules

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/postern-mcp/postern/generated"
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
		Match   generated.RuleMatch
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

// OnServer reports whether account's server runs r as it is now.
func OnServer(ctx context.Context, st *store.Store, account string, r generated.Rule) bool {
	v, err := st.Meta(ctx, onServerKey(account))
	if err != nil || v == "" {
		return false
	}
	var m map[string]string
	if json.Unmarshal([]byte(v), &m) != nil {
		return false
	}
	return m[r.Name] != "" && m[r.Name] == digest(r)
}

package kit

import (
	"context"
	"sort"
	"time"

	"github.com/postern-mcp/postern/internal/store"
)

// SyncedAt is the synced_at of an answer about the accounts named: when the store last caught
// up with all of them (RFC 3339, UTC), "" when one never did or the store cannot say.
func (s *Kit) SyncedAt(ctx context.Context, accounts []string) string {
	if len(accounts) == 0 || !s.StoreExists(ctx) {
		return ""
	}
	st, err := s.Store(ctx)
	if err != nil {
		return ""
	}
	at, ok, err := st.SyncedAt(ctx, accounts)
	if err != nil || !ok {
		return ""
	}
	return at.Format(time.RFC3339)
}

// CollectionsSyncedAt is SyncedAt for the accounts of the collections an answer covers.
func (s *Kit) CollectionsSyncedAt(ctx context.Context, cs []*store.Collection) string {
	seen := map[string]bool{}
	var accounts []string
	for _, c := range cs {
		if !seen[c.Account] {
			seen[c.Account] = true
			accounts = append(accounts, c.Account)
		}
	}
	sort.Strings(accounts)
	return s.SyncedAt(ctx, accounts)
}

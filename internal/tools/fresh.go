package tools

import (
	"context"
	"time"
)

// syncedAt is the synced_at of an answer about the accounts named: when the store last caught
// up with all of them (RFC 3339, UTC), "" when one never did or the store cannot say.
func (s *Service) syncedAt(ctx context.Context, accounts []string) string {
	if len(accounts) == 0 || !s.storeExists() {
		return ""
	}
	st, err := s.store()
	if err != nil {
		return ""
	}
	at, ok, err := st.SyncedAt(ctx, accounts)
	if err != nil || !ok {
		return ""
	}
	return at.Format(time.RFC3339)
}

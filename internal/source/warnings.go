package source

import (
	"context"

	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/store"
)

// Warnings are what one sync of an account could not take of an item (an event, a contact, a
// message, a file) or took only in part, each one sentence naming the item. Each is told to
// the person as it happens (Options.Warn: postern sync prints it) and kept in the store until
// the item syncs cleanly or is gone, so that status keeps saying it. A warning quotes what a
// stranger wrote (a UID, a file name, a parser's complaint about a line), so it is cleaned and
// masked as an answer is before it is told or kept.
type Warnings struct {
	st        *store.Store
	accountID int64
	tell      func(string)
	said      map[string][]string // place → items warned about in this sync
	before    map[string][]string // place → items that had a warning when the sync began
}

// NewWarnings starts the warnings of one sync of an account.
func NewWarnings(ctx context.Context, st *store.Store, accountID int64, opt Options) *Warnings {
	w := &Warnings{st: st, accountID: accountID, tell: opt.Warn, said: map[string][]string{}, before: map[string][]string{}}
	if old, err := st.SyncWarnings(ctx, accountID); err == nil {
		for _, x := range old {
			w.before[x.Place] = append(w.before[x.Place], x.Item)
		}
	}
	return w
}

// Add says text (one sentence) about item of place, and keeps it until the item syncs
// cleanly. An item "" is the place itself.
func (w *Warnings) Add(ctx context.Context, place, item, text string) {
	text = mask.Line(text)
	if w.tell != nil {
		w.tell(text)
	}
	w.said[place] = append(w.said[place], item)
	_ = w.st.AddSyncWarning(ctx, w.accountID, place, item, text) // a store that cannot keep it fails the next write anyway
}

// Before lists the items of place that had a warning when the sync began: a sync retries
// them even when the server says nothing changed.
func (w *Warnings) Before(place string) []string { return w.before[place] }

// Done is the end of a sync that went through the whole of place: the warnings of its items
// not warned about again are dropped (they synced cleanly, or are gone).
func (w *Warnings) Done(ctx context.Context, place string) error {
	return w.st.KeepSyncWarnings(ctx, w.accountID, place, w.said[place])
}

// Places drops the warnings of every place of the account but places (those gone).
func (w *Warnings) Places(ctx context.Context, places []string) error {
	return w.st.KeepSyncPlaces(ctx, w.accountID, places)
}

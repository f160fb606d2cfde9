package source

import (
	"context"

	"github.com/postern-mcp/postern/internal/store"
)

// Reader is a Source that can read back the exact bytes of a message it synced from where they
// came from (its server, its files): what the store never keeps, such as an attachment's
// content. Every kind that can implements it; a caller checks with a type assertion.
type Reader interface {
	// Raw returns the bytes of the message uid of folder, as the store names them. A message
	// no longer there is ErrGone; a read that fails is a *ReadError; other errors are
	// sentences a person can act on. It changes nothing where the message is (no \Seen).
	Raw(ctx context.Context, st *store.Store, folder string, uid uint32) ([]byte, error)
}

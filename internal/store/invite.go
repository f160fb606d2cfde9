package store

import (
	"context"
	"database/sql"

	"github.com/postern-mcp/postern/internal/store/davstore"
)

// Invitations in mail (schema 11): a message carrying an iTIP REQUEST or CANCEL (RFC 6047)
// is marked at sync in messages.invitation ("request" or "cancel") with the event's UID in
// messages.invitation_uid, and the iCalendar text is kept in bodies.calendar, as the sender
// wrote it (like a calendar object's Data): mail_show reads the event from it and
// calendar_respond answers it. The answers show only what passes the answer boundary.

// Invitation kinds (Row.Invitation).
const (
	InvitationRequest = "request"
	InvitationCancel  = "cancel"
)

// inviteColumns are the columns schema 11 adds, by table.
var inviteColumns = []struct{ table, name, decl string }{
	{"messages", "invitation", "TEXT NOT NULL DEFAULT ''"},
	{"messages", "invitation_uid", "TEXT NOT NULL DEFAULT ''"},
	{"bodies", "calendar", "TEXT NOT NULL DEFAULT ''"},
}

// addInviteColumns adds the invitation columns where they are missing (a store set back to
// an older schema may have them). The messages stored before hold no calendar part (the
// store never kept one), so they are not marked: they show as invitations once synced anew
// (a new store, or the message fetched again).
func addInviteColumns(ctx context.Context, tx *sql.Tx) error {
	for _, c := range inviteColumns {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.name+` `+c.decl); err != nil {
				return err
			}
		}
	}
	return nil
}

// Calendars, task lists and address books and their objects are internal/store/davstore's,
// lent to Store by embedding; their names are the store's as before.
type (
	davObjects = davstore.Objects
	Collection = davstore.Collection
	Object     = davstore.Object
)

// Collection kinds.
const (
	KindCalendar    = davstore.KindCalendar
	KindTasks       = davstore.KindTasks
	KindAddressBook = davstore.KindAddressBook
)

// Object kinds.
const (
	ObjectEvent   = davstore.ObjectEvent
	ObjectTodo    = davstore.ObjectTodo
	ObjectContact = davstore.ObjectContact
)

// ErrNoObject is an object id the store does not hold (or hides).
var ErrNoObject = davstore.ErrNoObject

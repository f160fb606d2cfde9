package imap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Append, FindRole, RoleFolder, RemoveByMessageID, State, SetFlags, Move and Expunge take a
// logged-in client (Dial makes one) and close it when ctx ends while they run: imapclient has
// no per-command cancellation.

// closeOnCancel closes c if ctx ends before the returned function is called.
func closeOnCancel(ctx context.Context, c *imapclient.Client) (stop func() bool) {
	return context.AfterFunc(ctx, func() { c.Close() })
}

func imapFailed(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s was stopped, and the connection closed: %w", what, context.Cause(ctx))
	}
	var ie *imap.Error
	if errors.As(err, &ie) {
		return fmt.Errorf("the server refused %s (%s): %w", what, strings.TrimSpace(ie.Text), err)
	}
	return fmt.Errorf("%s failed; check the connection and try again: %w", what, err)
}

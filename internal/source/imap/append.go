package imap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Append stores raw into mailbox with flags (for example imap.FlagDraft, imap.FlagSeen) and
// the internal date date (the server's clock when zero), and returns the UID the server gave
// it (from APPENDUID; 0 when the server does not say).
func Append(ctx context.Context, c *imapclient.Client, mailbox string, flags []imap.Flag, date time.Time, raw []byte) (imap.UID, error) {
	if len(raw) == 0 {
		return 0, errors.New("the message to store is empty")
	}
	defer closeOnCancel(ctx, c)()
	cmd := c.Append(mailbox, int64(len(raw)), &imap.AppendOptions{Flags: flags, Time: date})
	_, werr := cmd.Write(raw)
	cerr := cmd.Close()
	data, err := cmd.Wait()
	if err == nil {
		err = errors.Join(werr, cerr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("storing the message in %q was stopped: %w", mailbox, context.Cause(ctx))
		}
		var ie *imap.Error
		if errors.As(err, &ie) && ie.Code == imap.ResponseCodeTryCreate {
			return 0, fmt.Errorf("the folder %q does not exist on the server; create it or choose another: %w", mailbox, err)
		}
		if errors.As(err, &ie) {
			return 0, fmt.Errorf("the server refused to store the message in %q (%s); check the folder and the account's quota: %w", mailbox, strings.TrimSpace(ie.Text), err)
		}
		return 0, fmt.Errorf("storing the message in %q failed; check the connection and try again: %w", mailbox, err)
	}
	return data.UID, nil
}

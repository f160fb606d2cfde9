package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/internal/approval"
)

// AskTimeout bounds how long a commit waits for the person's answer in the
// host's window; past it nothing is done.
const AskTimeout = 10 * time.Minute

func newConnID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("postern: no randomness for a connection id: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// askIDPrefix starts the id of every elicitation/create this server sends.
const askIDPrefix = "postern-approve-"

// errNoAnswer ends an ask the person left unanswered for AskTimeout.
var errNoAnswer = errors.New("the person did not answer within " + AskTimeout.String())

// ask sends elicitation/create with the request's text and waits for the
// person's accept, decline or cancel. Only accept approves.
func (s *Server) ask(ctx context.Context, q approval.Request) (bool, error) {
	params := map[string]any{
		"message":         approval.ElicitMessage(q),
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
	}
	actx, cancel := context.WithTimeoutCause(ctx, AskTimeout, errNoAnswer)
	defer cancel()
	resp, err := s.conn.Call(actx, "elicitation/create", params)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return false, errors.New("the call was cancelled while waiting for the person")
	case errors.Is(err, errNoAnswer):
		return false, errNoAnswer
	default:
		return false, fmt.Errorf("the host could not ask the person: %w", err)
	}
	if resp.Error != nil {
		return false, fmt.Errorf("the host could not ask the person: %s", clip(resp.Error.Message))
	}
	switch a := gjson.GetBytes(resp.Result, "action").Str; a {
	case "accept":
		return true, nil
	case "decline", "cancel":
		return false, nil
	default:
		return false, fmt.Errorf("the host answered %q, which is neither accept nor decline", clip(a))
	}
}

// clip keeps at most 200 bytes of a client's string for a message.
func clip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

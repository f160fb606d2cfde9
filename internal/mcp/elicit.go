package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/internal/dispatch"
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

// isResponse reports whether line is a JSON-RPC response (an answer to a
// request this server sent), not a request or notification.
func isResponse(line []byte) bool {
	// Every request and notification names its method: the common case costs one scan.
	if len(line) == 0 || line[0] != '{' || bytes.Contains(line, []byte(`"method"`)) || !gjson.ValidBytes(line) {
		return false
	}
	r := gjson.GetManyBytes(line, "method", "id", "result", "error")
	return !r[0].Exists() && r[1].Exists() && (r[2].Exists() || r[3].Exists())
}

// deliver hands a response to the request waiting for it; one nobody waits
// for (late, or never asked) is dropped.
func (s *Server) deliver(line []byte) {
	msg := gjson.ParseBytes(line)
	id := msg.Get("id").Raw
	s.mu.Lock()
	ch := s.asked[id]
	delete(s.asked, id)
	s.mu.Unlock()
	if ch != nil {
		ch <- msg
	}
}

// ask sends elicitation/create with the request's text and waits for the
// person's accept, decline or cancel. Only accept approves.
func (s *Server) ask(ctx context.Context, q dispatch.Request) (bool, error) {
	s.mu.Lock()
	s.askSeq++
	id := strconv.Quote("postern-approve-" + strconv.Itoa(s.askSeq))
	ch := make(chan gjson.Result, 1)
	s.asked[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.asked, id)
		s.mu.Unlock()
	}()
	params := map[string]any{
		"message":         dispatch.ElicitMessage(q),
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
	}
	pb, err := json.Marshal(params)
	if err != nil {
		return false, err
	}
	req := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"elicitation/create","params":`)
	req = append(append(req, pb...), '}')
	s.write(req)
	timer := time.NewTimer(AskTimeout)
	defer timer.Stop()
	select {
	case msg := <-ch:
		if e := msg.Get("error"); e.Exists() {
			return false, fmt.Errorf("the host could not ask the person: %s", clip(e.Get("message").Str))
		}
		switch a := msg.Get("result.action").Str; a {
		case "accept":
			return true, nil
		case "decline", "cancel":
			return false, nil
		default:
			return false, fmt.Errorf("the host answered %q, which is neither accept nor decline", clip(a))
		}
	case <-timer.C:
		return false, errors.New("the person did not answer within " + AskTimeout.String())
	case <-ctx.Done():
		return false, errors.New("the call was cancelled while waiting for the person")
	}
}

// clip keeps at most 200 bytes of a client's string for a message.
func clip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

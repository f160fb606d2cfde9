package mcp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/jsonrpc"
)

// TestAsk: elicitation/create goes out with the approval's text, and the
// person's answer, the host's error, a cancelled call or a closed connection
// each end the wait as they should.
func TestAsk(t *testing.T) {
	q := approval.Request{Ref: "ab12", Preview: &generated.Prepared{Action: "send", Account: "work", Subject: "Hello"}}
	cases := []struct {
		name    string
		answer  string // the response's members after the id; "" to close the connection, "ctx" to cancel
		yes     bool
		errText string
	}{
		{"accept", `"result":{"action":"accept","content":{}}`, true, ""},
		{"decline", `"result":{"action":"decline"}`, false, ""},
		{"cancel", `"result":{"action":"cancel"}`, false, ""},
		{"odd action", `"result":{"action":"maybe"}`, false, `answered "maybe"`},
		{"host error", `"error":{"code":-32601,"message":"no elicitation here"}`, false, "could not ask the person: no elicitation here"},
		{"closed", "", false, "could not ask the person: the connection closed"},
		{"cancelled", "ctx", false, "cancelled while waiting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pr.Close()
			s := New(Options{Version: "test", Stderr: io.Discard})
			s.conn = jsonrpc.NewConn(pw, askIDPrefix)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type outcome struct {
				yes bool
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				yes, err := s.ask(ctx, q)
				done <- outcome{yes, err}
			}()
			line, err := jsonrpc.NewReader(pr).Next()
			if err != nil {
				t.Fatal(err)
			}
			var req struct {
				ID     string `json:"id"`
				Method string `json:"method"`
				Params struct {
					Message         string          `json:"message"`
					RequestedSchema json.RawMessage `json:"requestedSchema"`
				} `json:"params"`
			}
			if err := json.Unmarshal(line, &req); err != nil {
				t.Fatal(err)
			}
			if req.Method != "elicitation/create" || req.ID != askIDPrefix+"1" || !strings.Contains(req.Params.Message, "(ab12)") ||
				!strings.Contains(req.Params.Message, "Hello") || string(req.Params.RequestedSchema) != `{"properties":{},"type":"object"}` {
				t.Fatalf("request %s", line)
			}
			switch c.answer {
			case "":
				s.conn.Close()
			case "ctx":
				cancel()
			default:
				m, perr := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"` + req.ID + `",` + c.answer + `}`))
				if perr != nil || !s.conn.Deliver(m) {
					t.Fatalf("the answer was not delivered: %v", perr)
				}
			}
			var o outcome
			select {
			case o = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("ask did not return")
			}
			if o.yes != c.yes || (c.errText == "") != (o.err == nil) || (o.err != nil && !strings.Contains(o.err.Error(), c.errText)) {
				t.Fatalf("ask = %v, %v; want %v and an error with %q", o.yes, o.err, c.yes, c.errText)
			}
		})
	}
}

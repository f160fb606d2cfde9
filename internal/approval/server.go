package approval

import (
	"context"
	"fmt"
	"time"

	"github.com/postern-mcp/postern/internal/config"
)

// ForServer is what a server approves commits with: a token store whose lifetime is the
// configuration's as the server starts, the mode the configuration says at each commit
// (terminal, the safer one, when it says none or cannot be read), and holding a commit in q
// for postern approve as long as [approval] wait says. say is told, in one sentence, what
// the person must run.
func ForServer(cfg func() (*config.Config, error), q *Queue, say func(string)) (*Config, error) {
	var ttl time.Duration
	if c, err := cfg(); err == nil {
		ttl = c.Approval.TTL.Duration
	}
	tokens, err := New(ttl, nil)
	if err != nil {
		return nil, err
	}
	return &Config{
		Tokens: tokens,
		Mode: func() string {
			c, err := cfg()
			if err != nil || c.Approval.Mode == "" {
				return ModeTerminal // the safer one, also when the file cannot be read
			}
			return c.Approval.Mode
		},
		Hold: func(ctx context.Context, r Request) (bool, error) {
			wait := config.DefaultHoldWait
			if c, err := cfg(); err == nil && c.Approval.Wait.Duration > 0 {
				wait = c.Approval.Wait.Duration
			}
			h, err := q.Put(Held{Ref: r.Ref, Tool: r.Tool, Account: r.Account, Text: r.Text(), Client: r.Client, Expires: time.Now().Add(wait)})
			if err != nil {
				return false, err
			}
			say(fmt.Sprintf("%s waits for your approval: run postern approve %s in a terminal (within %v)", r.Tool, h.Code, wait))
			yes, decided := q.Wait(h, ctx.Done())
			if !decided {
				return false, fmt.Errorf("the person did not approve it with postern approve within %v (code %s)", wait, h.Code)
			}
			return yes, nil
		},
	}, nil
}

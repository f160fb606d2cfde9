package approval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
)

// A server's approvals follow its configuration: the mode at each commit (terminal when it
// says none or cannot be read), and a held commit is approved by the person's decision in
// the queue, after the server said which command to run.
func TestForServer(t *testing.T) {
	cfg := &config.Config{}
	cfg.Approval.Wait = config.Duration{Duration: 5 * time.Second}
	var readErr error
	q := &Queue{Dir: t.TempDir()}
	var mu sync.Mutex
	var said []string
	c, err := ForServer(func() (*config.Config, error) { return cfg, readErr }, q, func(s string) {
		mu.Lock()
		said = append(said, s)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode() != ModeTerminal {
		t.Fatalf("no mode set: %q", c.Mode())
	}
	cfg.Approval.Mode = ModeHost
	if c.Mode() != ModeHost {
		t.Fatalf("mode host: %q", c.Mode())
	}
	readErr = errors.New("broken")
	if c.Mode() != ModeTerminal {
		t.Fatalf("an unreadable configuration: %q, want the safer mode", c.Mode())
	}
	readErr = nil
	go func() {
		for range 100 {
			held, _ := q.List()
			if len(held) == 1 {
				q.Decide(held[0].Code, true)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	yes, err := c.Hold(context.Background(), Request{Tool: "mail_send_commit", Account: "work", Ref: "r1", Preview: &generated.Prepared{}})
	if err != nil || !yes {
		t.Fatalf("Hold = %v, %v; want approved", yes, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(said) != 1 || !strings.HasPrefix(said[0], "mail_send_commit waits for your approval: run postern approve ") || !strings.HasSuffix(said[0], "(within 5s)") {
		t.Fatalf("said %q", said)
	}
}

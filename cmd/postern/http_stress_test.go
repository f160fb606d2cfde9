package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	pmcp "github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/testing/mcptest"
)

// TestHTTPConcurrentStateless: 2026-07-28 requests sent at once, over kept-alive connections
// and through the loopback proxy the conformance test uses, are each answered whole.
func TestHTTPConcurrentStateless(t *testing.T) {
	s := startHTTP(t, home(t))
	for _, via := range []string{"direct", "proxy"} {
		t.Run(via, func(t *testing.T) {
			u, c := s.url, s.client()
			if via == "proxy" {
				u, c = authProxy(t, s), http.DefaultClient
			}
			meta := mcptest.Meta(pmcp.Modern, "stress")
			for round := 0; round < 20; round++ {
				var wg sync.WaitGroup
				errs := make(chan string, 16)
				for i := 0; i < 16; i++ {
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						body := mcptest.Request(i+1, "tools/list", map[string]any{"_meta": meta})
						req, _ := http.NewRequest(http.MethodPost, u, bytes.NewBufferString(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Accept", "application/json, text/event-stream")
						req.Header.Set("Mcp-Method", "tools/list")
						req.Header.Set("Mcp-Protocol-Version", pmcp.Modern)
						r, err := c.Do(req)
						if err != nil {
							errs <- err.Error()
							return
						}
						b, err := io.ReadAll(r.Body)
						r.Body.Close()
						if err != nil || r.StatusCode != http.StatusOK || !strings.Contains(string(b), `"tools"`) {
							errs <- fmt.Sprintf("%d %v %.200s", r.StatusCode, err, b)
						}
					}(i)
				}
				wg.Wait()
				close(errs)
				for e := range errs {
					t.Fatalf("round %d: %s\nthe server said:\n%s", round, e, s.stderr.String())
				}
			}
		})
	}
}

package oauth

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/postern-mcp/postern/internal/testing/oauthtest"
)

// authorizeHeadless runs Authorize against as, visiting the printed address as a browser would.
func authorizeHeadless(t *testing.T, as *oauthtest.Server) (Saved, error) {
	t.Helper()
	out := &lockedBuffer{}
	done := make(chan struct{})
	var saved Saved
	var err error
	go func() {
		defer close(done)
		saved, err = Authorize(context.Background(), account(as), FlowOptions{Out: out, Wait: 20 * time.Second})
	}()
	re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if u := re.FindString(out.String()); u != "" {
			resp, gerr := http.Get(u)
			if gerr != nil {
				t.Fatal(gerr)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	<-done
	return saved, err
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// The flow trades the code (PKCE-checked by the server) for a refresh token and an access token.
func TestAuthorize(t *testing.T) {
	as := oauthtest.Start(t)
	as.ApproveAs("sam")
	saved, err := authorizeHeadless(t, as)
	if err != nil || saved.RefreshToken == "" || saved.AccessToken == "" || saved.Expiry.IsZero() {
		t.Fatalf("%+v %v", saved, err)
	}
}

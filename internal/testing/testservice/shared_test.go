package testservice

import (
	"errors"
	"testing"
)

type fakeServer struct{ stops int }

func (f *fakeServer) Stop() { f.stops++ }

// The shared server is started once, by the first test that asks, and stopped once, when the
// last holder (a test's cleanup or Hold's release) lets go.
func TestSharedStopsAfterLastHolder(t *testing.T) {
	var sh Shared[*fakeServer]
	starts := 0
	start := func() (*fakeServer, error) { starts++; return &fakeServer{}, nil }
	logTail := func(*fakeServer, testing.TB) {}
	release := sh.Hold()
	var srv *fakeServer
	t.Run("holders", func(t *testing.T) {
		for range 3 {
			t.Run("test", func(t *testing.T) {
				s, err := sh.Start(t, start, logTail)
				if err != nil {
					t.Fatal(err)
				}
				if srv != nil && s != srv {
					t.Errorf("Start returned another server while the first was held")
				}
				srv = s
			})
		}
	})
	if starts != 1 || srv.stops != 0 {
		t.Fatalf("after the tests, while held: %d starts, %d stops; want 1 and 0", starts, srv.stops)
	}
	release()
	release() // a second call does nothing
	if srv.stops != 1 {
		t.Fatalf("after release: %d stops, want 1", srv.stops)
	}
	t.Run("again", func(t *testing.T) {
		if s, _ := sh.Start(t, start, logTail); s == srv {
			t.Errorf("Start returned the stopped server")
		}
	})
	if starts != 2 {
		t.Errorf("%d starts, want 2", starts)
	}
}

// A failed start is returned to every later test without starting again.
func TestSharedRemembersFailedStart(t *testing.T) {
	var sh Shared[*fakeServer]
	starts := 0
	failed := errors.New("no server")
	start := func() (*fakeServer, error) { starts++; return nil, failed }
	for range 2 {
		if _, err := sh.Start(t, start, func(*fakeServer, testing.TB) {}); !errors.Is(err, failed) {
			t.Errorf("Start: %v, want %v", err, failed)
		}
	}
	if starts != 1 {
		t.Errorf("%d starts, want 1", starts)
	}
}

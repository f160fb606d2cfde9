package approval

import (
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time         { return c.t }
func (c *clock) add(d time.Duration)    { c.t = c.t.Add(d) }
func newClock() *clock                  { return &clock{t: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)} }
func hash(t *testing.T, v any) [32]byte { t.Helper(); h, err := PayloadHash(v); must(t, err); return h }
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
func store(t *testing.T, c *clock) *Store {
	t.Helper()
	s, err := New(0, c.now)
	must(t, err)
	return s
}

type draft struct {
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	Body    string   `json:"body"`
}

func binding(t *testing.T) Binding {
	return Binding{Connection: "conn-1", Account: "work", Tool: "mail_send", Effect: "send",
		Payload: hash(t, draft{To: []string{"bob@example.com"}, Subject: "Hello", Body: "The address is 1 Main St."})}
}

// TestTokens: tokens carry 256 random bits, never repeat, and expire after the TTL.
func TestTokens(t *testing.T) {
	c := newClock()
	s := store(t, c)
	seen := map[string]bool{}
	for range 10000 {
		tok, exp, err := s.Issue(binding(t))
		must(t, err)
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(raw)*8 < 128 {
			t.Fatalf("token %q carries %d bits", tok, len(raw)*8)
		}
		if seen[tok] {
			t.Fatal("a token repeated")
		}
		seen[tok] = true
		if !exp.Equal(c.t.Add(DefaultTTL)) {
			t.Fatalf("expiry %v", exp)
		}
	}
	if s.Pending() != MaxPending {
		t.Fatalf("%d tokens pending, want at most %d", s.Pending(), MaxPending)
	}
}

// TestRedeemOnce: the binding it was issued for redeems a token once; every
// other case is refused with the one sentence, and spends the token.
func TestRedeemOnce(t *testing.T) {
	b := binding(t)
	changed := func(f func(*Binding)) Binding { x := b; f(&x); return x }
	oneByte := hash(t, draft{To: []string{"bob@example.com"}, Subject: "Hello", Body: "The address is 1 Main St!"})
	cases := []struct {
		name   string
		redeem func(s *Store, c *clock, tok string) error
	}{
		{"another connection", func(s *Store, c *clock, tok string) error {
			return s.Redeem(tok, changed(func(x *Binding) { x.Connection = "conn-2" }))
		}},
		{"another account", func(s *Store, c *clock, tok string) error {
			return s.Redeem(tok, changed(func(x *Binding) { x.Account = "home" }))
		}},
		{"another tool", func(s *Store, c *clock, tok string) error {
			return s.Redeem(tok, changed(func(x *Binding) { x.Tool = "mail_draft" }))
		}},
		{"another effect", func(s *Store, c *clock, tok string) error {
			return s.Redeem(tok, changed(func(x *Binding) { x.Effect = "delete" }))
		}},
		{"payload one byte different", func(s *Store, c *clock, tok string) error {
			return s.Redeem(tok, changed(func(x *Binding) { x.Payload = oneByte }))
		}},
		{"expired", func(s *Store, c *clock, tok string) error { c.add(DefaultTTL); return s.Redeem(tok, b) }},
		{"unknown", func(s *Store, c *clock, tok string) error { return s.Redeem(strings.Repeat("A", len(tok)), b) }},
		{"empty", func(s *Store, c *clock, tok string) error { return s.Redeem("", b) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			s := store(t, c)
			tok, _, err := s.Issue(b)
			must(t, err)
			if err := tc.redeem(s, c, tok); !errors.Is(err, ErrRefused) || err.Error() != ErrRefused.Error() {
				t.Fatalf("refusal: %v", err)
			}
			if tc.name != "unknown" && tc.name != "empty" {
				if err := s.Redeem(tok, b); !errors.Is(err, ErrRefused) {
					t.Fatalf("the token still worked after a refused try: %v", err)
				}
			}
		})
	}
	c := newClock()
	s := store(t, c)
	tok, _, err := s.Issue(b)
	must(t, err)
	c.add(DefaultTTL - time.Second)
	if err := s.Redeem(tok, b); err != nil {
		t.Fatalf("the right binding before expiry: %v", err)
	}
	if err := s.Redeem(tok, b); !errors.Is(err, ErrRefused) {
		t.Fatalf("a second redeem: %v", err)
	}
	if s.Pending() != 0 {
		t.Fatalf("%d tokens left", s.Pending())
	}
}

// TestConcurrentRedeem: 20 goroutines commit one token at once; exactly one wins.
func TestConcurrentRedeem(t *testing.T) {
	for range 200 {
		s := store(t, newClock())
		b := binding(t)
		tok, _, err := s.Issue(b)
		must(t, err)
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if s.Redeem(tok, b) == nil {
					wins.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d of 20 concurrent commits went through, want exactly 1", wins.Load())
		}
	}
}

// TestTTLBounds: the lifetime is configurable within bounds, and refused outside.
func TestTTLBounds(t *testing.T) {
	for _, ttl := range []time.Duration{MinTTL, time.Minute, MaxTTL} {
		if s, err := New(ttl, nil); err != nil || s.TTL() != ttl {
			t.Errorf("ttl %v: %v", ttl, err)
		}
	}
	for _, ttl := range []time.Duration{time.Second, MinTTL - 1, MaxTTL + 1, 24 * time.Hour, -time.Minute} {
		if _, err := New(ttl, nil); err == nil || !strings.Contains(err.Error(), "approval_ttl") {
			t.Errorf("ttl %v accepted: %v", ttl, err)
		}
	}
}

// TestPayloadHash: the same action hashes the same whatever the map order;
// a change of one byte anywhere changes the hash.
func TestPayloadHash(t *testing.T) {
	a := hash(t, map[string]any{"to": []string{"a@example.com"}, "subject": "x", "body": "y"})
	b := hash(t, map[string]any{"body": "y", "subject": "x", "to": []string{"a@example.com"}})
	if a != b {
		t.Fatal("the same payload hashed differently")
	}
	if a == hash(t, map[string]any{"to": []string{"a@example.com"}, "subject": "x", "body": "y "}) {
		t.Fatal("a changed body hashed the same")
	}
	if _, err := PayloadHash(func() {}); err == nil {
		t.Fatal("a payload that cannot be encoded was hashed")
	}
}

// TestCheckDoesNotSpend: Check leaves a matching token for Redeem, spends one
// presented with another binding, and refuses what Redeem would refuse.
func TestCheckDoesNotSpend(t *testing.T) {
	s, err := New(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{Connection: "c", Account: "a", Tool: "mail_send", Effect: "send"}
	tok, _, _ := s.Issue(b)
	for i := 0; i < 3; i++ {
		if err := s.Check(tok, b); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if err := s.Redeem(tok, b); err != nil {
		t.Fatalf("redeem after checks: %v", err)
	}
	if err := s.Check(tok, b); err != ErrRefused {
		t.Fatalf("check of a spent token: %v", err)
	}
	tok2, _, _ := s.Issue(b)
	other := b
	other.Connection = "d"
	if err := s.Check(tok2, other); err != ErrRefused {
		t.Fatalf("check from another connection: %v", err)
	}
	if err := s.Redeem(tok2, b); err != ErrRefused {
		t.Fatalf("a token checked with another binding was still redeemable: %v", err)
	}
}
